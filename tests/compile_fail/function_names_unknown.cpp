// NVTXPP_FUNCTION_NAMES takes bare, qualified or signature; any other word is an error that says
// so, not a silent default.
#ifdef NVTXPP_COMPILE_FAIL
#define NVTXPP_FUNCTION_NAMES pretty
#else
#define NVTXPP_FUNCTION_NAMES signature
#endif
#include <nvtxpp/macros.hpp>
void f() { ANNOTATE_FUNCTION(); }
