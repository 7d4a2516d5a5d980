// Corpus: several host threads, each with a CUDA stream and a cuBLAS handle of its own, each
// doing its copies, GEMMs and a kernel inside its own NVTX ranges at the same time as the others.
#include "corpus_check.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtxpp/cuda.hpp>
#include <nvtxpp/nvtxpp.hpp>

#include <thread>
#include <vector>

__global__ void fill(float* p, float v, int n) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    p[i] = v;
  }
}

void worker(int id) {
  nvtxpp::name_current_thread("worker {}", id);
  int const n = 256;
  std::size_t const count = static_cast<std::size_t>(n) * n;
  cudaStream_t stream = nullptr;
  CORPUS_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  nvtxpp::name_cuda_stream(stream, "worker stream {}", id);
  cublasHandle_t handle = nullptr;
  CORPUS_CHECK(cublasCreate(&handle));
  CORPUS_CHECK(cublasSetStream(handle, stream));
  float *a = nullptr, *c = nullptr;
  CORPUS_CHECK(cudaMalloc(&a, count * sizeof(float)));
  CORPUS_CHECK(cudaMalloc(&c, count * sizeof(float)));
  std::vector<float> host(count, 1.0f);
  float const alpha = 1.0f, beta = 0.0f;
  for (int batch = 0; batch < 6; ++batch) {
    nvtxpp::scoped_range step{"batch"};
    {
      nvtxpp::scoped_range r{"H2D Memory"};
      CORPUS_CHECK(
          cudaMemcpyAsync(a, host.data(), count * sizeof(float), cudaMemcpyHostToDevice, stream));
    }
    {
      nvtxpp::scoped_range r{"compute"};
      fill<<<(static_cast<unsigned>(count) + 255) / 256, 256, 0, stream>>>(c, 0.0f,
                                                                           static_cast<int>(count));
      CORPUS_CHECK(
          cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, a, n, &beta, c, n));
    }
    {
      nvtxpp::scoped_range r{"D2H Memory"};
      CORPUS_CHECK(
          cudaMemcpyAsync(host.data(), c, count * sizeof(float), cudaMemcpyDeviceToHost, stream));
      CORPUS_CHECK(cudaStreamSynchronize(stream));
    }
    corpus_expect(host[0] == static_cast<float>(n), "gemm of ones");
    std::fill(host.begin(), host.end(), 1.0f);
  }
  CORPUS_CHECK(cublasDestroy(handle));
  CORPUS_CHECK(cudaStreamDestroy(stream));
  CORPUS_CHECK(cudaFree(a));
  CORPUS_CHECK(cudaFree(c));
}

int main() {
  CORPUS_CHECK(cudaFree(nullptr));  // the context, before the threads
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back(worker, i);
  }
  for (auto& t : threads) {
    t.join();
  }
  return 0;
}
