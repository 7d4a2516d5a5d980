/// @file
/// @brief reduce_v3: the array split into one chunk per CUDA stream (the tutorial's run_v3).
/// Per stream i: `H2D Memory Stream {i}` (yellow), `Sum Kernels Stream {i}` (green; 50 rounds of
/// partial_reduce + single_thread_sum), `D2H Memory Stream {i}` (orange); the host adds the
/// per-stream sums and sends the total back (`H2D Memory Default Stream`), then per stream
/// `Divide Kernel Stream {i}` (green) and `D2H Memory Stream {i}`. Streams are named `stream {i}`.
///
/// `--bug` reproduces the tutorial's bug, one stream reused for every chunk (in Python,
/// `[cuda.stream()] * n`). The check that all streams are distinct reports it; the work still
/// runs, so a profile shows the serialised timeline, and the program exits with status 1.
#include <nvtxpp/cuda.hpp>
#include <nvtxpp/nvtxpp.hpp>

#include <vector>

#include "reduce_common.cuh"

namespace {

// The tutorial repeats the sum kernels to give the GPU more to do than the copies.
constexpr int sum_rounds = 50;

/// @brief How many distinct handles `streams` holds.
std::size_t distinct_streams(const std::vector<cudaStream_t>& streams) {
  std::size_t distinct = 0;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    bool seen = false;
    for (std::size_t j = 0; j < i && !seen; ++j) {
      seen = streams[j] == streams[i];
    }
    distinct += seen ? 0 : 1;
  }
  return distinct;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace reduce;
  const options opt = parse_options(argc, argv, "reduce_v3", cli_features{true, true, false});
  require_gpu("reduce_v3");
  const std::size_t n = opt.array_size;
  const unsigned n_streams = opt.streams;

  {
    nvtxpp::scoped_range range{"Compilation", nvtxpp::colors::red};
    warm_up();
  }
  const unsigned blocks = launch_blocks();  // asked inside warm_up(), so free here

  pinned_buffer<float> a(n, "cudaMallocHost(array)");
  for (std::size_t i = 0; i < n; ++i) {
    a.get()[i] = 1.0f;
  }
  // Chunk i is [begin[i], begin[i + 1]); sizes differ by at most one element.
  std::vector<std::size_t> begin(n_streams + 1);
  for (unsigned i = 0; i <= n_streams; ++i) {
    begin[i] = n / n_streams * i + n % n_streams * i / n_streams;
  }
  std::printf("Old sum: %.3f\n", host_sum(a.get(), n));

  std::vector<stream_owner> owned;
  std::vector<cudaStream_t> streams;
  if (opt.bug) {
    owned.emplace_back();
    streams.assign(n_streams, owned.front().get());  // the bug: one stream, n_streams times
  } else {
    for (unsigned i = 0; i < n_streams; ++i) {
      streams.push_back(owned.emplace_back().get());
    }
  }
  for (unsigned i = 0; i < n_streams; ++i) {
    nvtxpp::name_cuda_stream(streams[i], "stream {}", i);
  }
  const std::size_t distinct = distinct_streams(streams);
  const bool streams_ok = distinct == n_streams;
  if (!streams_ok) {
    std::fprintf(stderr,
                 "stream check FAILED: %u streams requested but only %zu distinct; every chunk "
                 "shares one stream, so copies and kernels cannot overlap (the --bug)\n",
                 n_streams, distinct);
  }

  // Allocated up front rather than inside the H2D ranges as the tutorial does: cudaMalloc may
  // synchronise the device, which would serialise the streams we want to overlap.
  device_buffer<float> dev_a(n, "cudaMalloc(array)");
  device_buffer<float> dev_a_reduce(std::size_t{blocks} * n_streams, "cudaMalloc(partial sums)");
  device_buffer<float> dev_a_sum(n_streams, "cudaMalloc(sums)");
  device_buffer<float> dev_a_sum_all(1, "cudaMalloc(total)");
  pinned_buffer<float> cpu_sums(n_streams + 1, "cudaMallocHost(sums)");  // last one: the total

  for (unsigned i = 0; i < n_streams; ++i) {
    const cudaStream_t stream = streams[i];
    float* chunk = dev_a.get() + begin[i];
    const std::size_t size = begin[i + 1] - begin[i];
    float* partial = dev_a_reduce.get() + std::size_t{blocks} * i;
    float* sum = dev_a_sum.get() + i;
    cpu_sums.get()[i] = std::nanf("");
    {
      nvtxpp::scoped_range range{"H2D Memory Stream {}", i, nvtxpp::colors::yellow};
      check(cudaMemcpyAsync(chunk, a.get() + begin[i], size * sizeof(float), cudaMemcpyHostToDevice,
                            stream),
            "cudaMemcpyAsync(H2D chunk)");
    }
    {
      nvtxpp::scoped_range range{"Sum Kernels Stream {}", i, nvtxpp::colors::green};
      for (int round = 0; round < sum_rounds; ++round) {
        partial_reduce<<<blocks, THREADS_PER_BLOCK, 0, stream>>>(chunk, size, partial);
        single_thread_sum<<<1, 1, 0, stream>>>(partial, blocks, sum);
      }
      check(cudaGetLastError(), "sum kernel launch");
    }
    {
      nvtxpp::scoped_range range{"D2H Memory Stream {}", i, nvtxpp::colors::orange};
      check(cudaMemcpyAsync(cpu_sums.get() + i, sum, sizeof(float), cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync(D2H sum)");
    }
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(sums)");

  double total = 0.0;
  for (unsigned i = 0; i < n_streams; ++i) {
    total += static_cast<double>(cpu_sums.get()[i]);
  }
  float* const cpu_sum_all = cpu_sums.get() + n_streams;
  *cpu_sum_all = static_cast<float>(total);
  {
    // The tutorial labels this host-to-device copy "D2H Memory Default Stream".
    nvtxpp::scoped_range range{"H2D Memory Default Stream", nvtxpp::colors::yellow};
    check(cudaMemcpy(dev_a_sum_all.get(), cpu_sum_all, sizeof(float), cudaMemcpyHostToDevice),
          "cudaMemcpy(H2D total)");
  }

  for (unsigned i = 0; i < n_streams; ++i) {
    const cudaStream_t stream = streams[i];
    float* chunk = dev_a.get() + begin[i];
    const std::size_t size = begin[i + 1] - begin[i];
    {
      nvtxpp::scoped_range range{"Divide Kernel Stream {}", i, nvtxpp::colors::green};
      divide_by<<<blocks, THREADS_PER_BLOCK, 0, stream>>>(chunk, size, dev_a_sum_all.get());
      check(cudaGetLastError(), "divide kernel launch");
    }
    {
      nvtxpp::scoped_range range{"D2H Memory Stream {}", i, nvtxpp::colors::orange};
      check(cudaMemcpyAsync(a.get() + begin[i], chunk, size * sizeof(float), cudaMemcpyDeviceToHost,
                            stream),
            "cudaMemcpyAsync(D2H chunk)");
    }
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  const int status = report_new_sum(host_sum(a.get(), n));
  if (!streams_ok) {
    return exit_failed;
  }
  return status;
}
