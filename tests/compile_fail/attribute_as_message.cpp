#include <nvtxpp/range.hpp>
void f() {
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::scoped_range r{nvtxpp::colors::red};
#else
  nvtxpp::scoped_range r{"text", nvtxpp::colors::red};
#endif
}
