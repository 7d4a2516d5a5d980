// An access scope over a region that ends at once would restrict memory nobody owns.
#include <nvtxpp/memory.hpp>
void f(void* pool) {
  nvtxpp::heap h{pool, 64};
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::access_scope s{h.region(pool, 8), nvtxpp::access::read};
#else
  auto r = h.region(pool, 8);
  nvtxpp::access_scope s{r, nvtxpp::access::read};
#endif
}
