// The build route's cost per call (docs/annotate.md). One source, three programs:
//   instrument_bench_plain  the subject uninstrumented
//   instrument_bench_empty  instrumented, hooks that do nothing (the floor)
//   instrument_bench        instrumented with nvtxpp_instrument() (EXCLUDE "excluded")
// each run without a tool and with bench's null tool (NVTX_INJECTION64_PATH), by
// bench/instrument_cost.sh. BM_nvtxpp_range is one nvtxpp range around the same call, for
// comparison under a tool.
#include <nvtxpp/nvtxpp.hpp>

#include <benchmark/benchmark.h>

#include "instrument_subject.hpp"

namespace {

void BM_call(benchmark::State& state) {
  int x = 1;
  for (auto _ : state) {
    x = bench::leaf(x);
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_call);

void BM_excluded_call(benchmark::State& state) {
  int x = 1;
  for (auto _ : state) {
    x = bench::excluded_leaf(x);
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_excluded_call);

void BM_nvtxpp_range(benchmark::State& state) {
  int x = 1;
  for (auto _ : state) {
    nvtxpp::scoped_range r{"bench::leaf"};
    x = bench::excluded_leaf(x);
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_nvtxpp_range);

}  // namespace

BENCHMARK_MAIN();
