// What a tool adds to each kernel launch: times N launches of an empty kernel (plus one
// synchronisation at the end) inside one NVTX range, and prints ns per launch. Run it with no
// tool, under nvtxpp-capture and under `nsys profile -t cuda,nvtx` to compare (see
// scripts/verify_capture_gpu.sh, docs/performance.md).
//
//   launch_overhead [N]     (default 100000)
//
// Each of the three passes prints one line:
//   launches=N ns_per_launch=T cpu_ns_per_launch=C
// T is the whole loop with its final synchronisation, divided by N (the issue's figure); C is
// the time until the last launch returned, divided by N. When C is well below T the GPU, not the
// launching thread, set the pace (the launch queue was full).
// Then a short-queue pass: N launches in batches of 32, each batch followed by a
// synchronisation, so the queue never fills and each launch costs the CPU only what the driver
// and the tool add; only the launches are timed:
//   short_queue batches=B median_ns_per_launch=M mean_ns_per_launch=A
// Exit status: 0; 2 when no GPU is usable.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void empty_kernel() {}

namespace {
using clock_type = std::chrono::steady_clock;

double ns_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}
}  // namespace

int main(int argc, char** argv) {
  long const n = argc > 1 ? std::atol(argv[1]) : 100000L;
  int devices = 0;
  if (n <= 0 || cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, n <= 0 ? "launch_overhead: N must be positive\n"
                                : "launch_overhead: no usable CUDA device\n");
    return 2;
  }
  // Warm-up: context creation and module loading stay out of the timed loop.
  empty_kernel<<<1, 1>>>();
  cudaDeviceSynchronize();
  for (int rep = 0; rep < 3; ++rep) {
    nvtxRangePushA("launch loop");
    auto const t0 = clock_type::now();
    for (long i = 0; i < n; ++i) {
      empty_kernel<<<1, 1>>>();
    }
    auto const launched = clock_type::now();
    cudaError_t const err = cudaDeviceSynchronize();
    auto const t1 = clock_type::now();
    nvtxRangePop();
    if (err != cudaSuccess) {
      std::fprintf(stderr, "launch_overhead: %s\n", cudaGetErrorString(err));
      return 1;
    }
    std::printf("launches=%ld ns_per_launch=%.1f cpu_ns_per_launch=%.1f\n", n,
                ns_between(t0, t1) / static_cast<double>(n),
                ns_between(t0, launched) / static_cast<double>(n));
  }
  constexpr long batch = 32;
  long const batches = std::max(1L, n / batch);
  std::vector<double> per_launch;
  per_launch.reserve(static_cast<std::size_t>(batches));
  double total = 0;
  nvtxRangePushA("short queue");
  for (long b = 0; b < batches; ++b) {
    auto const t0 = clock_type::now();
    for (long i = 0; i < batch; ++i) {
      empty_kernel<<<1, 1>>>();
    }
    auto const t1 = clock_type::now();
    if (cudaError_t const err = cudaDeviceSynchronize(); err != cudaSuccess) {
      std::fprintf(stderr, "launch_overhead: %s\n", cudaGetErrorString(err));
      return 1;
    }
    per_launch.push_back(ns_between(t0, t1) / batch);
    total += ns_between(t0, t1);
  }
  nvtxRangePop();
  auto middle = per_launch.begin() + static_cast<long>(per_launch.size() / 2);
  std::nth_element(per_launch.begin(), middle, per_launch.end());
  std::printf("short_queue batches=%ld median_ns_per_launch=%.1f mean_ns_per_launch=%.1f\n",
              batches, *middle, total / static_cast<double>(batches * batch));
  return 0;
}
