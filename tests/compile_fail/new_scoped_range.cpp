#include <nvtxpp/range.hpp>
void f() {
#ifdef NVTXPP_COMPILE_FAIL
  auto* leaked = new nvtxpp::scoped_range{"on the heap"};
  (void)leaked;
#else
  nvtxpp::scoped_range r{"on the stack"};
#endif
}
