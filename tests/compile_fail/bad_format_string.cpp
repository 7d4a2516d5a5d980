#include <nvtxpp/range.hpp>
#include <string>
void f(std::string const& s) {
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::scoped_range r{"value {:d}", s};
#else
  nvtxpp::scoped_range r{"value {}", s};
#endif
}
