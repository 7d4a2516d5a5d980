// Corpus: stream-ordered allocation. Buffers from a cudaMemPool (release threshold raised so it
// keeps its memory) and from the device's default pool, allocated, filled, copied and freed on a
// stream in every step, each phase in an NVTX range.
#include "corpus_check.hpp"

#include <cuda_runtime.h>
#include <nvtxpp/nvtxpp.hpp>

#include <cstdint>
#include <vector>

__global__ void iota(int* p, int n) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    p[i] = i;
  }
}

int main() {
  cudaStream_t stream = nullptr;
  CORPUS_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool = nullptr;
  CORPUS_CHECK(cudaMemPoolCreate(&pool, &props));
  std::uint64_t threshold = UINT64_MAX;
  CORPUS_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  int const n = 1 << 20;
  std::vector<int> host(static_cast<std::size_t>(n));
  for (int step = 0; step < 8; ++step) {
    nvtxpp::scoped_range r{"step"};
    int* a = nullptr;
    int* b = nullptr;
    {
      nvtxpp::scoped_range s{"allocate"};
      CORPUS_CHECK(cudaMallocFromPoolAsync(&a, sizeof(int) * n, pool, stream));
      CORPUS_CHECK(cudaMallocAsync(&b, sizeof(int) * n, stream));
    }
    {
      nvtxpp::scoped_range s{"work"};
      CORPUS_CHECK(cudaMemsetAsync(b, 0, sizeof(int) * n, stream));
      iota<<<(n + 255) / 256, 256, 0, stream>>>(a, n);
      CORPUS_CHECK(cudaMemcpyAsync(b, a, sizeof(int) * n, cudaMemcpyDeviceToDevice, stream));
      CORPUS_CHECK(
          cudaMemcpyAsync(host.data(), b, sizeof(int) * n, cudaMemcpyDeviceToHost, stream));
    }
    {
      nvtxpp::scoped_range s{"free"};
      CORPUS_CHECK(cudaFreeAsync(a, stream));
      CORPUS_CHECK(cudaFreeAsync(b, stream));
    }
    CORPUS_CHECK(cudaStreamSynchronize(stream));
    corpus_expect(host[12345] == 12345, "iota through the pool");
  }
  CORPUS_CHECK(cudaMemPoolDestroy(pool));
  CORPUS_CHECK(cudaStreamDestroy(stream));
  return 0;
}
