// What a tool adds to a cheap CUDA runtime call: times N calls of cudaGetDevice and of
// cudaStreamQuery on an idle stream (no GPU work: the call's own cost and the tool's), the best
// of 5 passes each, and prints ns per call. Run it with no tool and under the configurations
// to compare (scripts/verify_flight_gpu.sh, step 7).
//
//   api_call_cost [N]     (default 1000000)
//
// Prints: get_device_ns=T stream_query_ns=Q
// Exit status: 0; 2 when no GPU is usable.
#include <cuda_runtime.h>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace {

double now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

template <class F>
double best_ns_per_call(int n, F&& call) {
  double best = 1e300;
  for (int pass = 0; pass < 5; ++pass) {
    double const t0 = now_ns();
    for (int i = 0; i < n; ++i) {
      call();
    }
    best = std::min(best, (now_ns() - t0) / n);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int const n = argc > 1 ? std::atoi(argv[1]) : 1'000'000;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    std::fprintf(stderr, "api_call_cost: no usable GPU\n");
    return 2;
  }
  cudaStream_t s{};
  cudaStreamCreate(&s);
  double const get = best_ns_per_call(n, [&] { cudaGetDevice(&device); });
  double const query = best_ns_per_call(n, [&] { (void)cudaStreamQuery(s); });
  cudaStreamDestroy(s);
  std::printf("get_device_ns=%.1f stream_query_ns=%.1f\n", get, query);
  return 0;
}
