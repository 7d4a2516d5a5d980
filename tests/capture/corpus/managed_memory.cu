// Corpus: unified memory (cudaMallocManaged), each phase in an NVTX range. `prefetch`: data
// written on the host, prefetched to the device (host-to-device migrations), updated by a
// kernel, prefetched back (device-to-host) and read: migrations the driver sizes the same way
// every run. `faults`: no prefetch; the kernel's page faults move the data to the device and
// the host's reads move it back (migrations on demand, in groups the driver chooses).
#include "corpus_check.hpp"

#include <cuda_runtime.h>
#include <nvtxpp/nvtxpp.hpp>

#include <cstring>

__global__ void increment(float* p, int n) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    p[i] += 1.0F;
  }
}

namespace {

void prefetch(float* p, std::size_t bytes, bool to_device, cudaStream_t s) {
  cudaMemLocation where{};
  where.type = to_device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
  where.id = 0;
  CORPUS_CHECK(cudaMemPrefetchAsync(p, bytes, where, 0, s));
}

}  // namespace

int main(int argc, char** argv) {
  bool const faults = argc > 1 && std::strcmp(argv[1], "faults") == 0;
  int managed = 0;
  CORPUS_CHECK(cudaDeviceGetAttribute(&managed, cudaDevAttrConcurrentManagedAccess, 0));
  corpus_expect(managed != 0, "a device with concurrent managed access (page migration)");
  int const n = 4 << 20;  // 16 MiB of floats
  std::size_t const bytes = sizeof(float) * static_cast<std::size_t>(n);
  float* p = nullptr;
  CORPUS_CHECK(cudaMallocManaged(&p, bytes));
  cudaStream_t s = nullptr;
  CORPUS_CHECK(cudaStreamCreate(&s));
  for (int round = 0; round < 3; ++round) {
    {
      nvtxpp::scoped_range r{"host writes"};
      for (int i = 0; i < n; ++i) {
        p[i] = static_cast<float>(round);
      }
    }
    {
      nvtxpp::scoped_range r{"device update"};
      if (!faults) {
        prefetch(p, bytes, true, s);
      }
      increment<<<(n + 255) / 256, 256, 0, s>>>(p, n);
      CORPUS_CHECK(cudaGetLastError());
      if (!faults) {
        prefetch(p, bytes, false, s);
      }
      CORPUS_CHECK(cudaStreamSynchronize(s));
    }
    {
      nvtxpp::scoped_range r{"host reads"};
      double sum = 0;
      for (int i = 0; i < n; i += 1024) {
        sum += p[i];
      }
      corpus_expect(sum == static_cast<double>(round + 1) * (n / 1024), "every element updated");
    }
  }
  CORPUS_CHECK(cudaStreamDestroy(s));
  CORPUS_CHECK(cudaFree(p));
  return 0;
}
