// Corpus: a CUDA graph (a memset, a copy and kernels, captured from a stream) replayed under a
// range, beside kernels launched outside graphs (`empty`, as in a scaling test): compared with
// Nsight Systems in both graph trace modes (its default `graph`: one row per launch, the nodes'
// work in no kernel or memory report; `node`: every node's work).
#include "corpus_check.hpp"

#include <cuda_runtime.h>
#include <nvtxpp/nvtxpp.hpp>

#include <vector>

__global__ void empty() {}

__global__ void axpy(float* y, float const* x, float a, int n) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    y[i] += a * x[i];
  }
}

__global__ void square(float* y, int n) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    y[i] *= y[i];
  }
}

int main() {
  int const n = 1 << 16;
  std::size_t const bytes = sizeof(float) * n;
  float *x = nullptr, *y = nullptr, *z = nullptr;
  CORPUS_CHECK(cudaMalloc(&x, bytes));
  CORPUS_CHECK(cudaMalloc(&y, bytes));
  CORPUS_CHECK(cudaMalloc(&z, bytes));
  std::vector<float> host(n, 1.0F);
  CORPUS_CHECK(cudaMemcpy(x, host.data(), bytes, cudaMemcpyHostToDevice));
  cudaStream_t s = nullptr;
  CORPUS_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  {
    nvtxpp::scoped_range r{"warm-up"};
    for (int i = 0; i < 4; ++i) {
      empty<<<1, 1, 0, s>>>();
    }
    CORPUS_CHECK(cudaStreamSynchronize(s));
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  {
    nvtxpp::scoped_range r{"capture"};
    CORPUS_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CORPUS_CHECK(cudaMemsetAsync(y, 0, bytes, s));
    CORPUS_CHECK(cudaMemcpyAsync(z, x, bytes, cudaMemcpyDeviceToDevice, s));
    for (int k = 0; k < 3; ++k) {
      axpy<<<(n + 255) / 256, 256, 0, s>>>(y, z, 1.0F, n);
    }
    square<<<(n + 255) / 256, 256, 0, s>>>(y, n);
    CORPUS_CHECK(cudaStreamEndCapture(s, &graph));
    CORPUS_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  }
  {
    nvtxpp::scoped_range r{"replay"};
    for (int i = 0; i < 20; ++i) {
      CORPUS_CHECK(cudaGraphLaunch(exec, s));
    }
    CORPUS_CHECK(cudaStreamSynchronize(s));
  }
  CORPUS_CHECK(cudaMemcpy(host.data(), y, bytes, cudaMemcpyDeviceToHost));
  corpus_expect(host[0] == 9.0F && host[n - 1] == 9.0F, "(3 x 1)^2 after each replay");
  CORPUS_CHECK(cudaGraphExecDestroy(exec));
  CORPUS_CHECK(cudaGraphDestroy(graph));
  CORPUS_CHECK(cudaStreamDestroy(s));
  CORPUS_CHECK(cudaFree(x));
  CORPUS_CHECK(cudaFree(y));
  CORPUS_CHECK(cudaFree(z));
  return 0;
}
