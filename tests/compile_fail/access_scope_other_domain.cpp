// A region's permissions are set in its heap's domain: a scope of another domain does not compile.
#include <nvtxpp/memory.hpp>
NVTXPP_DEFINE_DOMAIN(io_domain, "I/O");
void f(void* pool) {
  nvtxpp::heap h{pool, 64};
  auto r = h.region(pool, 8);
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::access_scope_in<io_domain> s{r, nvtxpp::access::read};
#else
  nvtxpp::access_scope_in s{r, nvtxpp::access::read};
#endif
}
