// A region is unregistered exactly once, when its one owner ends: it cannot be copied.
#include <nvtxpp/memory.hpp>
void f(void* pool) {
  nvtxpp::heap h{pool, 64};
  auto r = h.region(pool, 8);
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::region copy{r};
#endif
}
