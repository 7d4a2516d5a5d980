// Corpus: a training loop as ranges number their steps ("Train step 1", "Train step 2", ...),
// each step's kernels inside its range, one step (`--slow N`, default 12) doing five times the
// work: what a pattern trigger (`--trigger='Train step *>2x'`) should catch. 20 steps.
#include "corpus_check.hpp"

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void relax(float* p, int n, int iterations) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    float v = p[i];
    for (int k = 0; k < iterations; ++k) {
      v = v * 0.999F + 0.001F;
    }
    p[i] = v;
  }
}

int main(int argc, char** argv) {
  int slow = 12;
  if (argc > 2 && std::strcmp(argv[1], "--slow") == 0) {
    slow = std::atoi(argv[2]);
  }
  int const n = 1 << 20;
  float* p = nullptr;
  CORPUS_CHECK(cudaMalloc(&p, sizeof(float) * n));
  CORPUS_CHECK(cudaMemset(p, 0, sizeof(float) * n));
  for (int step = 1; step <= 20; ++step) {
    char name[32];
    std::snprintf(name, sizeof name, "Train step %d", step);
    nvtxRangePushA(name);  // a name made at run time: the C API takes it as it is
    int const launches = step == slow ? 20 : 4;
    for (int k = 0; k < launches; ++k) {
      relax<<<(n + 255) / 256, 256>>>(p, n, 2000);
    }
    CORPUS_CHECK(cudaGetLastError());
    CORPUS_CHECK(cudaDeviceSynchronize());
    nvtxRangePop();
  }
  float v = 0;
  CORPUS_CHECK(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost));
  corpus_expect(v > 0.0F && v < 1.0F, "relaxed towards 1");
  CORPUS_CHECK(cudaFree(p));
  return 0;
}
