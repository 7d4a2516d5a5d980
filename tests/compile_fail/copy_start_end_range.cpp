#include <nvtxpp/range.hpp>
#include <utility>
void f() {
  nvtxpp::start_end_range r{"a"};
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::start_end_range copy{r};
#else
  nvtxpp::start_end_range moved{std::move(r)};
#endif
}
