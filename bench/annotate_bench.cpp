// The no-rebuild route's cost per call (docs/annotate.md): libm's cos called through the PLT,
// run plain and under LD_AUDIT=libnvtxpp_audit.so by bench/instrument_cost.sh.
#include <benchmark/benchmark.h>

#include <cmath>

namespace {

void BM_cos(benchmark::State& state) {
  double x = 0.5;
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    double const y = std::cos(x);
    benchmark::DoNotOptimize(y);
  }
}
BENCHMARK(BM_cos);

}  // namespace

BENCHMARK_MAIN();
