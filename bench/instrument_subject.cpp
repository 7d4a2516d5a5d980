// Built instrumented (with nvtxpp's hooks, or with empty ones) for instrument_bench.cpp.
#include "instrument_subject.hpp"

namespace bench {
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int excluded_leaf(int x) { return x * 3 + 1; }
}  // namespace bench
