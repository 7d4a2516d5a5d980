/// @file
/// @brief reduce_v4: the same job as reduce_v3 (sum the array, divide it by the sum) done as fast
/// as the hardware allows, with the same range names.
///
/// - The array goes over in one chunk per stream; each chunk is summed by CUB
///   (`cub::DeviceReduce::Sum`) as soon as its copy lands, so the reductions hide behind the
///   copies still running (`H2D Memory Stream {i}`, `Sum Kernels Stream {i}`).
/// - No host round trip for the total: every stream waits on the other streams' "summed" events
///   and its divide kernel adds the per-chunk sums itself (`Divide Kernel Stream {i}`), so the
///   first chunk's copy back starts one divide after the last chunk's sum. CUB's own NVTX ranges
///   (`cub::DeviceReduce::Sum`, CCCL's domain) nest inside `Sum Kernels Stream {i}`.
/// - Each chunk's sum also goes back to the host (a 4-byte `D2H Memory Stream {i}`) to be shown.
///
/// Unlike reduce_v3, each chunk is summed once (reduce_v3 repeats the sum 50 times to give the
/// GPU more to do than the copies). `--bandwidth` first measures the copy bandwidths the program
/// is bounded by (see docs/examples.md).
#include <cub/device/device_reduce.cuh>
#include <nvtxpp/cuda.hpp>
#include <nvtxpp/nvtxpp.hpp>

#include <vector>

#include "reduce_common.cuh"

namespace {

using namespace reduce;

/// @brief `array[i] /= (sums[0] + ... + sums[count - 1])`, added in order in float32 by each
/// thread (the sums are a few values in L1; a separate kernel would cost a launch and an event).
__global__ void __launch_bounds__(THREADS_PER_BLOCK)
    divide_by_sum(float* __restrict__ array, std::size_t size, const float* __restrict__ sums,
                  unsigned count) {
  float total = 0.0f;
  for (unsigned i = 0; i < count; ++i) {
    total += sums[i];
  }
  divide_range(array, size, total);
}

/// @brief Owns one CUDA event without timing (cheapest for cross-stream waits) or with it.
class event_owner {
 public:
  explicit event_owner(bool timing) {
    check(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming),
          "cudaEventCreateWithFlags");
  }
  ~event_owner() {
    if (event_ != nullptr) {
      cudaEventDestroy(event_);
    }
  }
  event_owner(event_owner&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  event_owner& operator=(event_owner&&) = delete;
  event_owner(const event_owner&) = delete;
  event_owner& operator=(const event_owner&) = delete;
  [[nodiscard]] cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

/// @brief Best of three timings (ms, CUDA events) of `cudaMemcpyAsync(dst, src, bytes, kind)`.
float best_copy_ms(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  event_owner start(true), stop(true);
  float best = 0.0f;
  for (int round = 0; round < 3; ++round) {
    check(cudaEventRecord(start.get()), "cudaEventRecord");
    check(cudaMemcpyAsync(dst, src, bytes, kind), "cudaMemcpyAsync(bandwidth)");
    check(cudaEventRecord(stop.get()), "cudaEventRecord");
    check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
    best = round == 0 || ms < best ? ms : best;
  }
  return best;
}

/// @brief Prints the copy bandwidths that bound this program: device memory (a device-to-device
/// copy of the array: read and write, so 2 x bytes moved), host-to-device and device-to-host from
/// pinned memory, and the copy floor bytes/H2D + bytes/D2H.
void measure_bandwidth(float* host, float* device, std::size_t n) {
  const std::size_t bytes = n * sizeof(float);
  device_buffer<float> other(n, "cudaMalloc(bandwidth copy)");
  check(cudaMemset(device, 0, bytes), "cudaMemset(bandwidth)");
  const float d2d = best_copy_ms(other.get(), device, bytes, cudaMemcpyDeviceToDevice);
  const float h2d = best_copy_ms(device, host, bytes, cudaMemcpyHostToDevice);
  const float d2h = best_copy_ms(host, device, bytes, cudaMemcpyDeviceToHost);
  const double mb = static_cast<double>(bytes) / 1e6;
  // MB per ms = GB/s.
  std::printf(
      "Bandwidth (best of 3, CUDA events, %.1f MB): device memory %.1f GB/s (a "
      "device-to-device copy, %.3f ms, counted as read + write), host-to-device %.1f GB/s "
      "(%.3f ms), device-to-host %.1f GB/s (%.3f ms)\n",
      mb, 2.0 * mb / static_cast<double>(d2d), static_cast<double>(d2d),
      mb / static_cast<double>(h2d), static_cast<double>(h2d), mb / static_cast<double>(d2h),
      static_cast<double>(d2h));
  std::printf("Copy floor: %.3f ms (H2D %.3f + D2H %.3f)\n", static_cast<double>(h2d + d2h),
              static_cast<double>(h2d), static_cast<double>(d2h));
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse_options(argc, argv, "reduce_v4", cli_features{true, false, true});
  require_gpu("reduce_v4");
  const std::size_t n = opt.array_size;
  const unsigned n_streams = opt.streams;

  std::vector<std::size_t> begin(n_streams + 1);
  for (unsigned i = 0; i <= n_streams; ++i) {
    begin[i] = n / n_streams * i + n % n_streams * i / n_streams;
  }
  // One CUB scratch area per stream (the reductions run at once), sized for the largest chunk.
  std::size_t scratch_bytes = 0;
  const std::size_t largest_chunk = (n + n_streams - 1) / n_streams;
  check(cub::DeviceReduce::Sum(nullptr, scratch_bytes, static_cast<const float*>(nullptr),
                               static_cast<float*>(nullptr), largest_chunk),
        "cub::DeviceReduce::Sum(scratch size)");
  scratch_bytes = (scratch_bytes + 255) / 256 * 256;  // keep each stream's area aligned

  unsigned blocks = 0;
  {
    nvtxpp::scoped_range range{"Compilation", nvtxpp::colors::red};
    warm_up();
    blocks = launch_blocks();
    // CUB's kernels and divide_by_sum load their modules at their first launch: pay it here.
    device_buffer<float> zeros(blocks, "cudaMalloc(warm-up)");
    device_buffer<float> sum(1, "cudaMalloc(warm-up sum)");
    device_buffer<unsigned char> scratch(scratch_bytes, "cudaMalloc(warm-up scratch)");
    check(cudaMemset(zeros.get(), 0, blocks * sizeof(float)), "cudaMemset(warm-up)");
    std::size_t bytes = scratch_bytes;
    check(cub::DeviceReduce::Sum(scratch.get(), bytes, zeros.get(), sum.get(), blocks),
          "cub::DeviceReduce::Sum(warm-up)");
    // No sums to add: divides by 0, harmlessly (the values are never used).
    divide_by_sum<<<blocks, THREADS_PER_BLOCK>>>(zeros.get(), blocks, sum.get(), 0);
    check(cudaGetLastError(), "warm-up kernel launch");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(warm-up)");
  }

  pinned_buffer<float> a(n, "cudaMallocHost(array)");
  for (std::size_t i = 0; i < n; ++i) {
    a.get()[i] = 1.0f;
  }
  std::vector<stream_owner> owned;
  std::vector<event_owner> summed, divided;
  for (unsigned i = 0; i < n_streams; ++i) {
    owned.emplace_back();
    summed.emplace_back(false);
    divided.emplace_back(false);
    nvtxpp::name_cuda_stream(owned[i].get(), "stream {}", i);
  }
  device_buffer<float> dev_a(n, "cudaMalloc(array)");
  device_buffer<float> dev_sums(n_streams, "cudaMalloc(sums)");
  device_buffer<unsigned char> scratch(scratch_bytes * n_streams, "cudaMalloc(CUB scratch)");
  pinned_buffer<float> cpu_sums(n_streams, "cudaMallocHost(sums)");
  if (opt.bandwidth) {
    nvtxpp::scoped_range range{"Bandwidth", nvtxpp::colors::blue};
    measure_bandwidth(a.get(), dev_a.get(), n);
    for (std::size_t i = 0; i < n; ++i) {
      a.get()[i] = 1.0f;  // the device-to-host measurement overwrote the array
    }
  }
  std::printf("Old sum: %.3f\n", host_sum(a.get(), n));

  // Chunk by chunk: copy, sum, sum back. (Queuing every copy before the first sum was tried and
  // was slower on the H100: each sum then waited for all the copies, see docs/examples.md.)
  for (unsigned i = 0; i < n_streams; ++i) {
    const cudaStream_t stream = owned[i].get();
    const std::size_t size = begin[i + 1] - begin[i];
    cpu_sums.get()[i] = std::nanf("");
    {
      nvtxpp::scoped_range range{"H2D Memory Stream {}", i, nvtxpp::colors::yellow};
      check(cudaMemcpyAsync(dev_a.get() + begin[i], a.get() + begin[i], size * sizeof(float),
                            cudaMemcpyHostToDevice, stream),
            "cudaMemcpyAsync(H2D chunk)");
    }
    {
      nvtxpp::scoped_range range{"Sum Kernels Stream {}", i, nvtxpp::colors::green};
      std::size_t bytes = scratch_bytes;
      check(cub::DeviceReduce::Sum(scratch.get() + scratch_bytes * i, bytes, dev_a.get() + begin[i],
                                   dev_sums.get() + i, size, stream),
            "cub::DeviceReduce::Sum");
      check(cudaEventRecord(summed[i].get(), stream), "cudaEventRecord(summed)");
    }
    {
      nvtxpp::scoped_range range{"D2H Memory Stream {}", i, nvtxpp::colors::orange};
      check(cudaMemcpyAsync(cpu_sums.get() + i, dev_sums.get() + i, sizeof(float),
                            cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync(D2H sum)");
    }
  }

  // The divides run one after another (each waits for the previous chunk's), in chunk order: run
  // at once they share the GPU and all finish late, and the first copy back starts later.
  for (unsigned i = 0; i < n_streams; ++i) {
    const cudaStream_t stream = owned[i].get();
    float* chunk = dev_a.get() + begin[i];
    const std::size_t size = begin[i + 1] - begin[i];
    {
      nvtxpp::scoped_range range{"Divide Kernel Stream {}", i, nvtxpp::colors::green};
      for (unsigned j = 0; j < n_streams; ++j) {
        if (j != i) {
          check(cudaStreamWaitEvent(stream, summed[j].get(), 0), "cudaStreamWaitEvent(summed)");
        }
      }
      if (i > 0) {
        check(cudaStreamWaitEvent(stream, divided[i - 1].get(), 0), "cudaStreamWaitEvent(divided)");
      }
      divide_by_sum<<<blocks, THREADS_PER_BLOCK, 0, stream>>>(chunk, size, dev_sums.get(),
                                                              n_streams);
      check(cudaGetLastError(), "divide kernel launch");
      check(cudaEventRecord(divided[i].get(), stream), "cudaEventRecord(divided)");
    }
    {
      nvtxpp::scoped_range range{"D2H Memory Stream {}", i, nvtxpp::colors::orange};
      check(cudaMemcpyAsync(a.get() + begin[i], chunk, size * sizeof(float), cudaMemcpyDeviceToHost,
                            stream),
            "cudaMemcpyAsync(D2H chunk)");
    }
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  double device_total = 0.0;
  for (unsigned i = 0; i < n_streams; ++i) {
    device_total += static_cast<double>(cpu_sums.get()[i]);
  }
  std::printf("Device sum: %.3f\n", device_total);
  return report_new_sum(host_sum(a.get(), n));
}
