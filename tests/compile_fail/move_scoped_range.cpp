#include <nvtxpp/range.hpp>
#include <utility>
void f() {
  nvtxpp::scoped_range r{"a"};
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::scoped_range moved{std::move(r)};
#endif
}
