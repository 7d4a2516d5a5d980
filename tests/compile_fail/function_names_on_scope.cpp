// Name styles belong to the function macros; a range or scope given one must not compile (it
// would be a format argument of a text without placeholders).
#include <nvtxpp/macros.hpp>
void f() {
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::scoped_range r{"text", nvtxpp::function_names::signature};
#else
  nvtxpp::scoped_range r{"text", nvtxpp::colors::red};
#endif
}
