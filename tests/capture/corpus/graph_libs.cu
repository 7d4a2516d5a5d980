// Corpus: a CUDA graph captured around library calls: a cuBLAS SGEMM, a kernel of our own and a
// memset, captured on a stream inside NVTX ranges, instantiated once and replayed four times.
#include "corpus_check.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtxpp/nvtxpp.hpp>

#include <vector>

__global__ void add_one(float* p, int n) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    p[i] += 1.0f;
  }
}

int main() {
  int const n = 512;
  std::size_t const count = static_cast<std::size_t>(n) * n;
  std::vector<float> ones(count, 1.0f), out(count);
  float *a = nullptr, *c = nullptr, *scratch = nullptr;
  CORPUS_CHECK(cudaMalloc(&a, count * sizeof(float)));
  CORPUS_CHECK(cudaMalloc(&c, count * sizeof(float)));
  CORPUS_CHECK(cudaMalloc(&scratch, count * sizeof(float)));
  CORPUS_CHECK(cudaMemcpy(a, ones.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  CORPUS_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasHandle_t handle = nullptr;
  CORPUS_CHECK(cublasCreate(&handle));
  CORPUS_CHECK(cublasSetStream(handle, stream));
  // cuBLAS needs its workspace before capture (it must not allocate while capturing).
  float const alpha = 1.0f, beta = 0.0f;
  CORPUS_CHECK(
      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, a, n, &beta, c, n));
  CORPUS_CHECK(cudaStreamSynchronize(stream));

  cudaGraph_t graph = nullptr;
  {
    nvtxpp::scoped_range r{"capture"};
    CORPUS_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    {
      nvtxpp::scoped_range g{"gemm"};
      CORPUS_CHECK(
          cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, a, n, &beta, c, n));
    }
    {
      nvtxpp::scoped_range e{"epilogue"};
      add_one<<<(static_cast<unsigned>(count) + 255) / 256, 256, 0, stream>>>(
          c, static_cast<int>(count));
      CORPUS_CHECK(cudaMemsetAsync(scratch, 0, count * sizeof(float), stream));
    }
    CORPUS_CHECK(cudaStreamEndCapture(stream, &graph));
  }
  cudaGraphExec_t exec = nullptr;
  CORPUS_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 4; ++i) {
    nvtxpp::scoped_range r{"replay"};
    CORPUS_CHECK(cudaGraphLaunch(exec, stream));
  }
  CORPUS_CHECK(cudaStreamSynchronize(stream));
  {
    nvtxpp::scoped_range r{"D2H Memory"};
    CORPUS_CHECK(cudaMemcpy(out.data(), c, count * sizeof(float), cudaMemcpyDeviceToHost));
  }
  corpus_expect(out[0] == static_cast<float>(n) + 1.0f, "gemm then add_one");
  CORPUS_CHECK(cudaGraphExecDestroy(exec));
  CORPUS_CHECK(cudaGraphDestroy(graph));
  CORPUS_CHECK(cublasDestroy(handle));
  CORPUS_CHECK(cudaStreamDestroy(stream));
  for (float* p : {a, c, scratch}) {
    CORPUS_CHECK(cudaFree(p));
  }
  return 0;
}
