// Access rights are nvtxpp::access values, not NVTX's raw flag numbers.
#include <nvtxpp/memory.hpp>
void f(void* pool) {
  nvtxpp::heap h{pool, 64};
  auto r = h.region(pool, 8);
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::access_scope s{r, 1};
#else
  nvtxpp::access_scope s{r, nvtxpp::access::read};
#endif
}
