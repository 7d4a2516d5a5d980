#include <nvtxpp/range.hpp>
struct not_a_domain {};
NVTXPP_DEFINE_DOMAIN(a_domain, "A");
void f() {
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::scoped_range_in<not_a_domain> r{"x"};
#else
  nvtxpp::scoped_range_in<a_domain> r{"x"};
#endif
}
