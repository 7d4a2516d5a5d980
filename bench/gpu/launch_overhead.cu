// What a tool adds to each kernel launch: times N launches of an empty kernel (plus one
// synchronisation at the end) inside one NVTX range, and prints ns per launch. Run it with no
// tool, under nvtxpp-capture and under `nsys profile -t cuda,nvtx` to compare (see
// scripts/verify_capture_gpu.sh, docs/performance.md).
//
//   launch_overhead [N]     (default 100000)
// Exit status: 0; 2 when no GPU is usable.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void empty_kernel() {}

int main(int argc, char** argv) {
  long const n = argc > 1 ? std::atol(argv[1]) : 100000L;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "launch_overhead: no usable CUDA device\n");
    return 2;
  }
  // Warm-up: context creation and module loading stay out of the timed loop.
  empty_kernel<<<1, 1>>>();
  cudaDeviceSynchronize();
  for (int rep = 0; rep < 3; ++rep) {
    nvtxRangePushA("launch loop");
    auto const t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) {
      empty_kernel<<<1, 1>>>();
    }
    cudaError_t const err = cudaDeviceSynchronize();
    auto const t1 = std::chrono::steady_clock::now();
    nvtxRangePop();
    if (err != cudaSuccess) {
      std::fprintf(stderr, "launch_overhead: %s\n", cudaGetErrorString(err));
      return 1;
    }
    double const ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    std::printf("launches=%ld ns_per_launch=%.1f\n", n, ns / static_cast<double>(n));
  }
  return 0;
}
