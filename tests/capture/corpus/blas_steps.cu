// Corpus: a training loop's shape over cuBLAS and cuBLASLt, linked as trainers link them (their
// static TLS, about 104 KiB, then sits on every thread's stack, ours included). Each "step"
// range holds two SGEMMs (cuBLAS), a BF16 matmul (cuBLASLt, launched through the driver API) and
// an update kernel, and ends with a stream synchronize. For the leave-it-on checks
// (scripts/verify_leave_on_gpu.sh): the sampled mode, triggers and raises, job dumps, windows.
//
//   blas_steps [--seconds S] [--slow-at T]
// Five warm-up steps ("warmup" ranges: heuristics, lazy module loading), then steps for S seconds
// (default 4); the first step that starts T seconds or more after the loop's start does its
// matrix work ten times (a slow step for a trigger). Prints "steps=N mean_step_ns=M".
#include "corpus_check.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nvtxpp/nvtxpp.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void update(float* w, float const* g, int n, float rate) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    w[i] -= rate * g[i];
  }
}

namespace {

struct lt_matmul {
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic{};
  void* workspace = nullptr;
  std::size_t workspace_bytes = std::size_t{32} << 20;
};

}  // namespace

int main(int argc, char** argv) {
  double seconds = 4;
  double slow_at = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seconds") == 0) {
      seconds = std::atof(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--slow-at") == 0) {
      slow_at = std::atof(argv[i + 1]);
    }
  }
  int const n = 2048;
  std::size_t const elems = static_cast<std::size_t>(n) * n;
  std::vector<float> host(elems, 0.001F);
  std::vector<__nv_bfloat16> host16(elems, __float2bfloat16(0.001F));
  float *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr;
  __nv_bfloat16 *a16 = nullptr, *b16 = nullptr;
  for (float** p : {&a, &b, &c, &d}) {
    CORPUS_CHECK(cudaMalloc(p, elems * sizeof(float)));
  }
  CORPUS_CHECK(cudaMalloc(&a16, elems * sizeof(__nv_bfloat16)));
  CORPUS_CHECK(cudaMalloc(&b16, elems * sizeof(__nv_bfloat16)));
  cudaStream_t stream = nullptr;
  CORPUS_CHECK(cudaStreamCreate(&stream));
  {
    nvtxpp::scoped_range r{"H2D Memory"};
    CORPUS_CHECK(
        cudaMemcpyAsync(a, host.data(), elems * sizeof(float), cudaMemcpyHostToDevice, stream));
    CORPUS_CHECK(
        cudaMemcpyAsync(b, host.data(), elems * sizeof(float), cudaMemcpyHostToDevice, stream));
    CORPUS_CHECK(cudaMemcpyAsync(a16, host16.data(), elems * sizeof(__nv_bfloat16),
                                 cudaMemcpyHostToDevice, stream));
    CORPUS_CHECK(cudaMemcpyAsync(b16, host16.data(), elems * sizeof(__nv_bfloat16),
                                 cudaMemcpyHostToDevice, stream));
  }
  cublasHandle_t blas = nullptr;
  CORPUS_CHECK(cublasCreate(&blas));
  CORPUS_CHECK(cublasSetStream(blas, stream));
  lt_matmul m;
  CORPUS_CHECK(cudaMalloc(&m.workspace, m.workspace_bytes));
  CORPUS_CHECK(cublasLtCreate(&m.lt));
  CORPUS_CHECK(cublasLtMatmulDescCreate(&m.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CORPUS_CHECK(cublasLtMatrixLayoutCreate(&m.la, CUDA_R_16BF, n, n, n));
  CORPUS_CHECK(cublasLtMatrixLayoutCreate(&m.lb, CUDA_R_16BF, n, n, n));
  CORPUS_CHECK(cublasLtMatrixLayoutCreate(&m.ld, CUDA_R_32F, n, n, n));
  cublasLtMatmulPreference_t pref = nullptr;
  CORPUS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  CORPUS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &m.workspace_bytes, sizeof m.workspace_bytes));
  int found = 0;
  CORPUS_CHECK(cublasLtMatmulAlgoGetHeuristic(m.lt, m.op, m.la, m.lb, m.ld, m.ld, pref, 1,
                                              &m.heuristic, &found));
  corpus_expect(found == 1, "a cuBLASLt algorithm for the problem");
  float const one = 1.0F, zero = 0.0F;

  auto matrix_work = [&] {
    CORPUS_CHECK(
        cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n));
    CORPUS_CHECK(
        cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, c, n, a, n, &zero, d, n));
    CORPUS_CHECK(cublasLtMatmul(m.lt, m.op, &one, a16, m.la, b16, m.lb, &zero, c, m.ld, c, m.ld,
                                &m.heuristic.algo, m.workspace, m.workspace_bytes, stream));
  };
  auto step = [&](char const* name, int repeats) {
    nvtxpp::scoped_range r{name};
    for (int k = 0; k < repeats; ++k) {
      matrix_work();
    }
    update<<<static_cast<unsigned>((elems + 255) / 256), 256, 0, stream>>>(
        a, d, static_cast<int>(elems), 1e-6F);
    CORPUS_CHECK(cudaGetLastError());
    CORPUS_CHECK(cudaStreamSynchronize(stream));
  };
  for (int i = 0; i < 5; ++i) {
    step("warmup", 1);
  }
  using clock = std::chrono::steady_clock;
  auto const start = clock::now();
  auto const end = start + std::chrono::duration<double>(seconds);
  bool slowed = slow_at < 0;
  long steps = 0;
  while (clock::now() < end) {
    bool const slow =
        !slowed && std::chrono::duration<double>(clock::now() - start).count() >= slow_at;
    slowed = slowed || slow;
    step("step", slow ? 10 : 1);
    ++steps;
  }
  auto const ns = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start);
  std::printf("steps=%ld mean_step_ns=%lld\n", steps,
              static_cast<long long>(ns.count() / (steps > 0 ? steps : 1)));
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(m.la);
  cublasLtMatrixLayoutDestroy(m.lb);
  cublasLtMatrixLayoutDestroy(m.ld);
  cublasLtMatmulDescDestroy(m.op);
  cublasLtDestroy(m.lt);
  cublasDestroy(blas);
  for (void* p :
       {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(c), static_cast<void*>(d),
        static_cast<void*>(a16), static_cast<void*>(b16), m.workspace}) {
    CORPUS_CHECK(cudaFree(p));
  }
  CORPUS_CHECK(cudaStreamDestroy(stream));
  return 0;
}
