// An access scope on the heap could outlive its region, or never end.
#include <nvtxpp/memory.hpp>
void f(void* pool) {
  nvtxpp::heap h{pool, 64};
  auto r = h.region(pool, 8);
#ifdef NVTXPP_COMPILE_FAIL
  auto* leaked = new nvtxpp::access_scope{r, nvtxpp::access::read};
  (void)leaked;
#else
  nvtxpp::access_scope s{r, nvtxpp::access::read};
#endif
}
