// Corpus: NVTX for the Python program (numba_reduce.py) through ctypes: push, pop and mark of
// the NVTX C API, as the Python `nvtx` package calls them, with nothing of nvtxpp in between.
#include <nvtx3/nvToolsExt.h>

extern "C" {
__attribute__((visibility("default"))) int corpus_push(char const* name) {
  return nvtxRangePushA(name);
}
__attribute__((visibility("default"))) int corpus_pop() { return nvtxRangePop(); }
}
