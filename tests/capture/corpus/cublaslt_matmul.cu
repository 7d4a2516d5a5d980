// Corpus: cuBLASLt matmul, as ML frameworks call it: BF16 inputs, FP32 accumulation, an
// algorithm from the heuristic, a workspace. cuBLASLt launches its GEMM kernels through the
// driver API. Eight matmuls in NVTX ranges.
#include "corpus_check.hpp"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nvtxpp/nvtxpp.hpp>

#include <vector>

int main() {
  int const m = 2048, n = 2048, k = 2048;
  std::vector<__nv_bfloat16> host(static_cast<std::size_t>(m) * k, __float2bfloat16(1.0f));
  std::vector<float> out(static_cast<std::size_t>(m) * n);
  __nv_bfloat16 *a = nullptr, *b = nullptr;
  float* d = nullptr;
  void* workspace = nullptr;
  std::size_t const workspace_bytes = std::size_t{32} << 20;
  CORPUS_CHECK(cudaMalloc(&a, host.size() * sizeof host[0]));
  CORPUS_CHECK(cudaMalloc(&b, host.size() * sizeof host[0]));
  CORPUS_CHECK(cudaMalloc(&d, out.size() * sizeof out[0]));
  CORPUS_CHECK(cudaMalloc(&workspace, workspace_bytes));
  cudaStream_t stream = nullptr;
  CORPUS_CHECK(cudaStreamCreate(&stream));
  {
    nvtxpp::scoped_range r{"H2D Memory"};
    CORPUS_CHECK(cudaMemcpyAsync(a, host.data(), host.size() * sizeof host[0],
                                 cudaMemcpyHostToDevice, stream));
    CORPUS_CHECK(cudaMemcpyAsync(b, host.data(), host.size() * sizeof host[0],
                                 cudaMemcpyHostToDevice, stream));
  }
  cublasLtHandle_t lt = nullptr;
  CORPUS_CHECK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op = nullptr;
  CORPUS_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  CORPUS_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, m, k, m));
  CORPUS_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, n, k));
  CORPUS_CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, m, n, m));
  cublasLtMatmulPreference_t pref = nullptr;
  CORPUS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  CORPUS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes, sizeof workspace_bytes));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  CORPUS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heuristic, &found));
  corpus_expect(found == 1, "a cuBLASLt algorithm for the problem");
  float const alpha = 1.0f, beta = 0.0f;
  for (int i = 0; i < 8; ++i) {
    nvtxpp::scoped_range r{"matmul"};
    CORPUS_CHECK(cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &heuristic.algo,
                                workspace, workspace_bytes, stream));
  }
  {
    nvtxpp::scoped_range r{"D2H Memory"};
    CORPUS_CHECK(
        cudaMemcpyAsync(out.data(), d, out.size() * sizeof out[0], cudaMemcpyDeviceToHost, stream));
    CORPUS_CHECK(cudaStreamSynchronize(stream));
  }
  corpus_expect(out[0] == static_cast<float>(k) && out.back() == static_cast<float>(k), "matmul");
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(lt);
  CORPUS_CHECK(cudaStreamDestroy(stream));
  for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(d), workspace}) {
    CORPUS_CHECK(cudaFree(p));
  }
  return 0;
}
