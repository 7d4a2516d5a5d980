#include <nvtxpp/range.hpp>
void f() {
  nvtxpp::scoped_range r{"a"};
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::scoped_range copy{r};
#endif
}
