// A CUDA program for nvtxpp-capture's capture window on a GPU (scripts/verify_ranks_gpu.sh):
// kernels before cudaProfilerStart, inside a Start/Stop pair (in the NVTX range "profiled"), and
// after cudaProfilerStop. Its kernels have the parameter shapes whose demangled spelling differs
// between demanglers (const pointers, an anonymous namespace).
//
//   window_gpu [BEFORE INSIDE AFTER]   (kernel launches of each phase; default 3 5 2)
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>

namespace reduce {
__global__ void partial_reduce(const float* in, unsigned long n, float* out) {
  unsigned long const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(out, in[i]);
  }
}
}  // namespace reduce

namespace {
__global__ void scale_add(float* y, const float* x, float a) {
  y[threadIdx.x] += a * x[threadIdx.x];
}
}  // namespace

namespace {
void phase(int launches, float* x, float* y, float* sum) {
  for (int i = 0; i < launches; ++i) {
    reduce::partial_reduce<<<4, 256>>>(x, 1024, sum);
    scale_add<<<1, 256>>>(y, x, 2.0f);
  }
  cudaDeviceSynchronize();
}
}  // namespace

int main(int argc, char** argv) {
  int const before = argc > 1 ? std::atoi(argv[1]) : 3;
  int const inside = argc > 2 ? std::atoi(argv[2]) : 5;
  int const after = argc > 3 ? std::atoi(argv[3]) : 2;
  float* x = nullptr;
  float* y = nullptr;
  float* sum = nullptr;
  if (cudaMalloc(&x, 1024 * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&y, 1024 * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&sum, sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "no GPU\n");
    return 1;
  }
  cudaMemset(x, 0, 1024 * sizeof(float));
  nvtxRangePushA("before");
  phase(before, x, y, sum);
  nvtxRangePop();
  cudaProfilerStart();
  nvtxRangePushA("profiled");
  phase(inside, x, y, sum);
  nvtxRangePop();
  cudaProfilerStop();
  nvtxRangePushA("after");
  phase(after, x, y, sum);
  nvtxRangePop();
  cudaFree(x);
  cudaFree(y);
  cudaFree(sum);
  std::printf("launches before=%d inside=%d after=%d (2 kernels each)\n", before, inside, after);
  return 0;
}
