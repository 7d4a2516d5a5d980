// A heap is unregistered exactly once: it can be moved, not copied.
#include <nvtxpp/memory.hpp>
void f(void* pool) {
  nvtxpp::heap h{pool, 64};
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::heap copy = h;
#endif
}
