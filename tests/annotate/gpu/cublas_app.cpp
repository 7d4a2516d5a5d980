// A cuBLAS program with no annotation of its own: `cublasSgemm` calls become ranges only
// through the no-rebuild route (scripts/verify_annotate_gpu.sh, annotate.gpu_cublas).
// Usage: annotate_cublas [CALLS] (default 20). Exit 1 when a product is wrong.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

bool ok(cudaError_t e, char const* what) {
  if (e != cudaSuccess) std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

bool ok(cublasStatus_t s, char const* what) {
  if (s != CUBLAS_STATUS_SUCCESS) std::fprintf(stderr, "%s: status %d\n", what, int(s));
  return s == CUBLAS_STATUS_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  int const calls = argc > 1 ? std::atoi(argv[1]) : 20;
  int const n = 256;
  std::size_t const count = static_cast<std::size_t>(n) * n;
  std::vector<float> a(count), b(count), c(count);
  for (std::size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(i % 7) * 0.25f;
    b[i] = static_cast<float>(i % 5) * 0.5f;
  }
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  cublasHandle_t h = nullptr;
  if (!ok(cudaMalloc(&da, count * sizeof(float)), "cudaMalloc") ||
      !ok(cudaMalloc(&db, count * sizeof(float)), "cudaMalloc") ||
      !ok(cudaMalloc(&dc, count * sizeof(float)), "cudaMalloc") ||
      !ok(cudaMemcpy(da, a.data(), count * sizeof(float), cudaMemcpyHostToDevice), "copy a") ||
      !ok(cudaMemcpy(db, b.data(), count * sizeof(float), cudaMemcpyHostToDevice), "copy b") ||
      !ok(cublasCreate(&h), "cublasCreate")) {
    return 1;
  }
  float const alpha = 1.0f, beta = 0.0f;
  for (int k = 0; k < calls; ++k) {
    if (!ok(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, da, n, db, n, &beta, dc, n),
            "cublasSgemm")) {
      return 1;
    }
  }
  if (!ok(cudaMemcpy(c.data(), dc, count * sizeof(float), cudaMemcpyDeviceToHost), "copy c")) {
    return 1;
  }
  // Column-major C = A * B, checked on a few entries.
  int wrong = 0;
  for (int i = 0; i < n; i += 37) {
    for (int j = 0; j < n; j += 41) {
      double s = 0;
      for (int k = 0; k < n; ++k) {
        s += static_cast<double>(a[static_cast<std::size_t>(k) * n + i]) *
             b[static_cast<std::size_t>(j) * n + k];
      }
      if (std::fabs(s - c[static_cast<std::size_t>(j) * n + i]) > 1e-3 * (1 + std::fabs(s)))
        ++wrong;
    }
  }
  cublasDestroy(h);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  std::printf("annotate_cublas: %d cublasSgemm calls, %s\n", calls,
              wrong == 0 ? "results right" : "WRONG");
  return wrong == 0 ? 0 : 1;
}
