#include <nvtxpp/range.hpp>
void f(int i) {
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::scoped_range r{"{} and {}", i, nvtxpp::colors::red};
#else
  nvtxpp::scoped_range r{"{} and {}", i, nvtxpp::colors::red, i};
#endif
}
