// Corpus: kernels launched outside every NVTX range. `none`: a program with no NVTX at all (3
// kernel names, copies, a memset), as most programs nobody annotated are; Nsight Systems lists
// their GPU work in the kernel and memory reports and nothing in the NVTX ones. `mixed`: some
// launches inside a range, some before and after it: only those inside appear under it.
#include "corpus_check.hpp"

#include <cuda_runtime.h>
#include <nvtxpp/nvtxpp.hpp>

#include <cstring>
#include <vector>

__global__ void fill(float* p, int n, float v) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    p[i] = v;
  }
}

__global__ void scale(float* p, int n, float f) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    p[i] *= f;
  }
}

__global__ void add(float* p, float const* q, int n) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    p[i] += q[i];
  }
}

namespace {

constexpr int n = 1 << 20;
constexpr int threads = 256;
constexpr int blocks = (n + threads - 1) / threads;

void work(float* a, float* b, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    fill<<<blocks, threads>>>(a, n, 1.0F);
    fill<<<blocks, threads>>>(b, n, 2.0F);
    scale<<<blocks, threads>>>(a, n, 3.0F);
    add<<<blocks, threads>>>(a, b, n);
  }
  CORPUS_CHECK(cudaGetLastError());
}

}  // namespace

int main(int argc, char** argv) {
  bool const mixed = argc > 1 && std::strcmp(argv[1], "mixed") == 0;
  float* a = nullptr;
  float* b = nullptr;
  CORPUS_CHECK(cudaMalloc(&a, sizeof(float) * n));
  CORPUS_CHECK(cudaMalloc(&b, sizeof(float) * n));
  CORPUS_CHECK(cudaMemset(b, 0, sizeof(float) * n));
  std::vector<float> host(n);
  work(a, b, 2);  // before any range
  if (mixed) {
    nvtxpp::scoped_range r{"ranged work"};
    work(a, b, 3);
    CORPUS_CHECK(cudaMemcpy(host.data(), a, sizeof(float) * n, cudaMemcpyDeviceToHost));
  }
  work(a, b, 1);  // after it
  CORPUS_CHECK(cudaMemcpy(host.data(), a, sizeof(float) * n, cudaMemcpyDeviceToHost));
  corpus_expect(host[0] == 5.0F && host[n - 1] == 5.0F, "fill, scale, add");
  CORPUS_CHECK(cudaFree(a));
  CORPUS_CHECK(cudaFree(b));
  return 0;
}
