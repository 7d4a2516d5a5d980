// Demo for docs/ncu.md: nvtxpp's kinds of ranges around CUDA kernels, for Nsight Compute's
// NVTX filters (scripts/verify_ncu_gpu.sh profiles it with ncu --nvtx --nvtx-include).
//   "setup"                       a string literal: a registered string, default domain
//   "step {}"                     a formatted name (step 0, step 1, step 2), default domain
//   "step {}" > "update"          nested push/pop ranges of one domain
//   solver@"solve"                a range in the domain "solver" (NVTXPP_DEFINE_DOMAIN)
//   "transfer"                    a start/end range (nvtxpp::start_end_range)
// Each range launches its own kernel, so the kernels ncu profiles name the filter's ranges.
#include <nvtxpp/nvtxpp.hpp>

#include <cstdio>

NVTXPP_DEFINE_DOMAIN(solver_domain, "solver");

namespace {

__global__ void fill(float* x, int n) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    x[i] = 1.0f;
  }
}

__global__ void scale(float* x, int n, float a) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    x[i] *= a;
  }
}

__global__ void shift(float* x, int n, float b) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    x[i] += b;
  }
}

__global__ void residual(float const* x, int n, float* out) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    out[i] = x[i] - 1.0f;
  }
}

__global__ void pack(float const* x, int n, float* out) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    out[i] = x[i];
  }
}

bool check(cudaError_t status, char const* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "ncu_demo: %s: %s\n", what, cudaGetErrorString(status));
    return false;
  }
  return true;
}

}  // namespace

int main() {
  constexpr int n = 1 << 16;
  constexpr int threads = 256;
  constexpr int blocks = (n + threads - 1) / threads;
  float* x = nullptr;
  float* y = nullptr;
  if (!check(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc") ||
      !check(cudaMalloc(&y, n * sizeof(float)), "cudaMalloc")) {
    return 1;
  }
  {
    nvtxpp::scoped_range r{"setup"};
    fill<<<blocks, threads>>>(x, n);
  }
  for (int step = 0; step < 3; ++step) {
    nvtxpp::scoped_range s{"step {}", step};
    scale<<<blocks, threads>>>(x, n, 0.5f);
    {
      nvtxpp::scoped_range u{"update"};
      shift<<<blocks, threads>>>(x, n, 0.5f);
    }
    {
      nvtxpp::scoped_range_in<solver_domain> r{"solve"};
      residual<<<blocks, threads>>>(x, n, y);
    }
  }
  {
    nvtxpp::start_end_range t{"transfer"};
    pack<<<blocks, threads>>>(x, n, y);
  }
  if (!check(cudaGetLastError(), "launch") || !check(cudaDeviceSynchronize(), "synchronize")) {
    return 1;
  }
  std::printf("ncu_demo: 11 kernels under 5 kinds of range\n");
  cudaFree(y);
  cudaFree(x);
  return 0;
}
