// A per-call name style comes first among a function macro's attributes; elsewhere it would be
// taken for an attribute, which it is not.
#include <nvtxpp/macros.hpp>
void f() {
#ifdef NVTXPP_COMPILE_FAIL
  ANNOTATE_FUNCTION(nvtxpp::colors::red, nvtxpp::function_names::signature);
#else
  ANNOTATE_FUNCTION(nvtxpp::function_names::signature, nvtxpp::colors::red);
#endif
}
