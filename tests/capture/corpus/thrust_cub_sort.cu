// Corpus: Thrust and CUB. thrust::sort of 16 M keys (its temporary storage, its kernels), then
// cub::DeviceRadixSort::SortPairs, three times each, in NVTX ranges.
#include "corpus_check.hpp"

#include <cuda_runtime.h>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/sort.h>
#include <cub/device/device_radix_sort.cuh>
#include <nvtxpp/nvtxpp.hpp>

#include <cstdint>

int main() {
  std::size_t const count = std::size_t{1} << 24;
  thrust::host_vector<std::uint32_t> host(count);
  std::uint32_t x = 12345;
  for (auto& v : host) {
    x = x * 1664525u + 1013904223u;
    v = x;
  }
  thrust::device_vector<std::uint32_t> keys;
  for (int i = 0; i < 3; ++i) {
    {
      nvtxpp::scoped_range r{"H2D Memory"};
      keys = host;
    }
    nvtxpp::scoped_range r{"thrust::sort"};
    thrust::sort(keys.begin(), keys.end());
  }
  corpus_expect(keys[0] <= keys[1] && keys[count - 2] <= keys[count - 1], "thrust sort");

  thrust::device_vector<std::uint32_t> in = host, out(count), vin(count, 7), vout(count);
  std::size_t temp_bytes = 0;
  CORPUS_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, temp_bytes, thrust::raw_pointer_cast(in.data()),
      thrust::raw_pointer_cast(out.data()), thrust::raw_pointer_cast(vin.data()),
      thrust::raw_pointer_cast(vout.data()), count));
  void* temp = nullptr;
  CORPUS_CHECK(cudaMalloc(&temp, temp_bytes));
  for (int i = 0; i < 3; ++i) {
    nvtxpp::scoped_range r{"cub::SortPairs"};
    CORPUS_CHECK(cub::DeviceRadixSort::SortPairs(
        temp, temp_bytes, thrust::raw_pointer_cast(in.data()), thrust::raw_pointer_cast(out.data()),
        thrust::raw_pointer_cast(vin.data()), thrust::raw_pointer_cast(vout.data()), count));
  }
  CORPUS_CHECK(cudaDeviceSynchronize());
  corpus_expect(out[0] <= out[1] && vout[0] == 7u, "cub sort");
  CORPUS_CHECK(cudaFree(temp));
  return 0;
}
