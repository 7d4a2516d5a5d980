// Corpus: cuBLAS GEMM. Five SGEMMs of 1024 x 1024 matrices, each in an NVTX range, between a
// host-to-device and a device-to-host range. `cublas_gemm [N [REPEATS]]` changes the size and
// the number of SGEMMs (scripts/verify_diff_gpu.sh compares runs of two sizes).
#include "corpus_check.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtxpp/nvtxpp.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  int const n = argc > 1 ? std::atoi(argv[1]) : 1024;
  int const repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  if (n < 1 || n > 16384 || repeats < 1) {
    std::fprintf(stderr, "usage: cublas_gemm [N (1..16384) [REPEATS]]\n");
    return 2;
  }
  std::size_t const bytes = sizeof(float) * n * n;
  std::vector<float> a(static_cast<std::size_t>(n) * n, 1.0f), c(a.size());
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  CORPUS_CHECK(cudaMalloc(&da, bytes));
  CORPUS_CHECK(cudaMalloc(&db, bytes));
  CORPUS_CHECK(cudaMalloc(&dc, bytes));
  cublasHandle_t handle = nullptr;
  CORPUS_CHECK(cublasCreate(&handle));
  {
    nvtxpp::scoped_range r{"H2D Memory"};
    CORPUS_CHECK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
    CORPUS_CHECK(cudaMemcpy(db, a.data(), bytes, cudaMemcpyHostToDevice));
  }
  float const alpha = 1.0f, beta = 0.0f;
  for (int i = 0; i < repeats; ++i) {
    nvtxpp::scoped_range r{"sgemm"};
    CORPUS_CHECK(
        cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, da, n, db, n, &beta, dc, n));
  }
  {
    nvtxpp::scoped_range r{"D2H Memory"};
    CORPUS_CHECK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));
  }
  corpus_expect(c[0] == static_cast<float>(n) && c.back() == static_cast<float>(n), "sgemm");
  CORPUS_CHECK(cublasDestroy(handle));
  CORPUS_CHECK(cudaFree(da));
  CORPUS_CHECK(cudaFree(db));
  CORPUS_CHECK(cudaFree(dc));
  return 0;
}
