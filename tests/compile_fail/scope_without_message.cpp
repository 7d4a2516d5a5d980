#include <nvtxpp/macros.hpp>
void f() {
#ifdef NVTXPP_COMPILE_FAIL
  ANNOTATE_SCOPE();
#else
  ANNOTATE_SCOPE("named");
#endif
}
