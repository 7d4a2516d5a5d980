/// @file
/// @brief What reduce_v1, reduce_v2 and reduce_v3 share: the three kernels, the command line,
/// CUDA error checks and small RAII owners for device, pinned and stream resources.
///
/// This is a CUDA C++ port of the reduce pattern that the tutorial "Profiling CUDA using Nsight
/// Systems: a Numba example" profiles. The kernels keep the tutorial's names, launch shape and
/// float32 arithmetic so that its timeline and ours can be read side by side.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace reduce {

// The tutorial's block size, under its name so that readers recognise it. The tutorial's grid,
// BLOCKS_PER_GRID = 32 * 40 = 1280 blocks, is replaced by launch_blocks(): one full wave of
// resident blocks (1,280 blocks are 1.2 waves on a 132-SM H100, so the last 0.2 wave ran with
// most of the GPU idle).
constexpr unsigned THREADS_PER_BLOCK = 256;

/// @brief How many elements at `p` come before the first 16-byte boundary (at most `size`):
/// float4 loads need 16-byte alignment, and a chunk of the array may start anywhere.
__device__ inline std::size_t head_before_float4(const float* p, std::size_t size) {
  const auto misalign = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) & 15u);
  const std::size_t head = ((16u - misalign) & 15u) / sizeof(float);
  return head < size ? head : size;
}

/// @brief Each thread sums a grid-stride slice of `array`, then each block reduces its threads'
/// sums in shared memory (halving the stride each step); thread 0 writes the block's sum.
///
/// Compiled for memory bandwidth: the body is read as float4 (16-byte loads), four of them in
/// flight per thread before the first add; the grid-stride index over float4s is 32-bit (at most
/// 2^30 float4s, max_array_size / 4); the few elements before the first 16-byte boundary and
/// after the last whole float4 are added by the first threads.
__global__ void __launch_bounds__(THREADS_PER_BLOCK)
    partial_reduce(const float* __restrict__ array, std::size_t size,
                   float* __restrict__ partial_reduction) {
  const unsigned tid = threadIdx.x;
  const unsigned thread = blockIdx.x * THREADS_PER_BLOCK + tid;
  const unsigned threads_per_grid = gridDim.x * THREADS_PER_BLOCK;
  const std::size_t head = head_before_float4(array, size);
  const auto* body = reinterpret_cast<const float4*>(array + head);
  const auto n4 = static_cast<unsigned>((size - head) / 4);
  const std::size_t tail = size - head - std::size_t{n4} * 4;

  // Four accumulators, one per float4 lane, keep the adds off the loads' critical path.
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  auto add = [&acc](float4 v) {
    acc.x += v.x;
    acc.y += v.y;
    acc.z += v.z;
    acc.w += v.w;
  };
  unsigned i = thread;
  // i + 3 * threads_per_grid < 2^30 + 3 * 2^21 never wraps for any grid launch_blocks() makes.
  for (; i + 3 * threads_per_grid < n4; i += 4 * threads_per_grid) {
    const float4 v0 = body[i];
    const float4 v1 = body[i + threads_per_grid];
    const float4 v2 = body[i + 2 * threads_per_grid];
    const float4 v3 = body[i + 3 * threads_per_grid];
    add(v0);
    add(v1);
    add(v2);
    add(v3);
  }
  for (; i < n4; i += threads_per_grid) {
    add(body[i]);
  }
  float s_thread = (acc.x + acc.y) + (acc.z + acc.w);
  if (thread < head) {
    s_thread += array[thread];
  }
  if (thread < tail) {
    s_thread += array[size - tail + thread];
  }

  __shared__ float s_block[THREADS_PER_BLOCK];
  s_block[tid] = s_thread;
  __syncthreads();

  // The block size is a compile-time constant, so the tree unrolls into 8 steps.
#pragma unroll
  for (unsigned step = THREADS_PER_BLOCK / 2; step > 0; step /= 2) {
    if (tid < step) {
      s_block[tid] += s_block[tid + step];
    }
    __syncthreads();
  }

  if (tid == 0) {
    partial_reduction[blockIdx.x] = s_block[0];
  }
}

/// @brief Adds `p4[j]`, `p4[j + 1]`, ... in order to `total`, `Batch` float4s at a time: all of a
/// batch's loads are issued before its first add, so a batch waits one memory round trip.
template <unsigned Batch>
__device__ inline void add_in_batches(const float4* __restrict__ p4, unsigned n4, unsigned& j,
                                      float& total) {
  for (; j + Batch <= n4; j += Batch) {
    float4 v[Batch];
#pragma unroll
    for (unsigned k = 0; k < Batch; ++k) {
      v[k] = p4[j + k];
    }
#pragma unroll
    for (unsigned k = 0; k < Batch; ++k) {
      total += v[k].x;
      total += v[k].y;
      total += v[k].z;
      total += v[k].w;
    }
  }
}

/// @brief One thread adds the `count` partial sums in order (float32, as the tutorial does).
///
/// The adds stay in order, but the loads go in batches (128, then 32, then 4 sums, as float4):
/// a loop of one load and one add waits a memory round trip per element (34 us for 1,280 sums
/// on the H100, see docs/examples.md).
__global__ void single_thread_sum(const float* __restrict__ partial_reduction, unsigned count,
                                  float* __restrict__ sum) {
  float total = 0.0f;
  unsigned i = 0;
  if ((reinterpret_cast<std::uintptr_t>(partial_reduction) & 15u) == 0) {
    const auto* p4 = reinterpret_cast<const float4*>(partial_reduction);
    const unsigned n4 = count / 4;
    unsigned j = 0;
    add_in_batches<32>(p4, n4, j, total);
    add_in_batches<8>(p4, n4, j, total);
    add_in_batches<1>(p4, n4, j, total);
    i = j * 4;
  }
  for (; i < count; ++i) {
    total += partial_reduction[i];
  }
  sum[0] = total;
}

/// @brief Grid-stride `array[i] /= divisor`, float4 loads and stores where aligned.
__device__ inline void divide_range(float* __restrict__ array, std::size_t size, float divisor) {
  const unsigned thread = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned threads_per_grid = gridDim.x * blockDim.x;
  const std::size_t head = head_before_float4(array, size);
  auto* body = reinterpret_cast<float4*>(array + head);
  const auto n4 = static_cast<unsigned>((size - head) / 4);
  const std::size_t tail = size - head - std::size_t{n4} * 4;
  unsigned i = thread;
  for (; i + threads_per_grid < n4; i += 2 * threads_per_grid) {
    float4 v0 = body[i];
    float4 v1 = body[i + threads_per_grid];
    v0.x /= divisor, v0.y /= divisor, v0.z /= divisor, v0.w /= divisor;
    v1.x /= divisor, v1.y /= divisor, v1.z /= divisor, v1.w /= divisor;
    body[i] = v0;
    body[i + threads_per_grid] = v1;
  }
  for (; i < n4; i += threads_per_grid) {
    float4 v = body[i];
    v.x /= divisor, v.y /= divisor, v.z /= divisor, v.w /= divisor;
    body[i] = v;
  }
  if (thread < head) {
    array[thread] /= divisor;
  }
  if (thread < tail) {
    array[size - tail + thread] /= divisor;
  }
}

/// @brief Grid-stride `array[i] /= val_array[0]`. The divisor is read once: read inside the loop
/// (as `array[i] /= val_array[0]` reads) it is reloaded after every store, which may alias it.
__global__ void __launch_bounds__(THREADS_PER_BLOCK)
    divide_by(float* __restrict__ array, std::size_t size, const float* __restrict__ val_array) {
  divide_range(array, size, val_array[0]);
}

/// @brief Blocks per grid for partial_reduce and divide_by: as many 256-thread blocks as the
/// device holds resident at once (multiprocessors x blocks per multiprocessor), so that the
/// grid-stride loops run in exactly one wave. Asked once, then remembered.
/// Exit statuses, the same for every example (documented in docs/examples.md).
enum exit_status : int {
  exit_ok = 0,      ///< the result is right
  exit_failed = 1,  ///< wrong result, failed check or CUDA error
  exit_no_gpu = 2,  ///< no usable CUDA GPU on this machine
  exit_usage = 64,  ///< bad command line (EX_USAGE)
};

/// @brief Reports a failed CUDA call and ends the program with exit_failed.
inline void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "error: %s failed: %s (%s)\n", what, cudaGetErrorString(err),
                 cudaGetErrorName(err));
    std::exit(exit_failed);
  }
}

/// @brief Ends the program with one clear line and exit_no_gpu when no CUDA GPU can be used.
inline void require_gpu(const char* program) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaSuccess && count > 0) {
    return;
  }
  int driver = 0;
  // Without a driver, cudaGetDeviceCount says "driver version is insufficient": say it plainly.
  const bool no_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0;
  std::fprintf(stderr, "%s: no usable CUDA GPU found (%s); this example needs one.\n", program,
               no_driver            ? "no NVIDIA driver is installed"
               : err != cudaSuccess ? cudaGetErrorString(err)
                                    : "no CUDA device is visible");
  std::exit(exit_no_gpu);
}

/// @brief Blocks per grid for partial_reduce and divide_by: as many 256-thread blocks as the
/// device holds resident at once (multiprocessors x resident blocks per multiprocessor), so that
/// the grid-stride loops run in exactly one wave. Asked once, then remembered.
inline unsigned launch_blocks() {
  static const unsigned blocks = [] {
    int device = 0;
    int sms = 0;
    int per_sm = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
          "cudaDeviceGetAttribute(multiprocessors)");
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, partial_reduce, THREADS_PER_BLOCK,
                                                        0),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return static_cast<unsigned>(sms) * static_cast<unsigned>(per_sm > 0 ? per_sm : 1);
  }();
  return blocks;
}

/// The command line of the reduce programs.
struct options {
  std::size_t array_size = 100'000'000;  ///< -n/--array-size
  unsigned streams = 4;                  ///< -s/--streams (reduce_v3, reduce_v4)
  bool bug = false;                      ///< --bug (reduce_v3 only)
  bool bandwidth = false;                ///< --bandwidth (reduce_v4 only)
};

/// Which options beyond -n a program takes.
struct cli_features {
  bool streams = false;    ///< -s/--streams
  bool bug = false;        ///< --bug
  bool bandwidth = false;  ///< --bandwidth
};

// Large enough for any GPU we target; larger requests are refused up front instead of failing
// later in a host allocation.
constexpr std::size_t max_array_size = std::size_t{1} << 32;
constexpr unsigned max_streams = 256;

inline void usage(std::FILE* out, const char* program, cli_features cli) {
  std::fprintf(out, "usage: %s [-n N]%s%s%s\n", program, cli.streams ? " [-s S]" : "",
               cli.bug ? " [--bug]" : "", cli.bandwidth ? " [--bandwidth]" : "");
  std::fprintf(out, "  -n, --array-size N  number of float32 elements (default 100000000)\n");
  if (cli.streams) {
    std::fprintf(out, "  -s, --streams S     number of CUDA streams, 1 to %u (default 4)\n",
                 max_streams);
  }
  if (cli.bug) {
    std::fprintf(out,
                 "  --bug               reuse one stream for every chunk (the tutorial's bug)\n");
  }
  if (cli.bandwidth) {
    std::fprintf(out,
                 "  --bandwidth         first measure device, host-to-device and device-to-host\n"
                 "                      copy bandwidth with CUDA events (best of 3)\n");
  }
  std::fprintf(out, "  -h, --help          show this help\n");
}

[[noreturn]] inline void usage_error(const char* program, cli_features cli, const char* message,
                                     const char* value) {
  std::fprintf(stderr, "%s: %s%s%s%s\n", program, message, value ? " '" : "", value ? value : "",
               value ? "'" : "");
  usage(stderr, program, cli);
  std::exit(exit_usage);
}

/// @brief Parses a positive decimal count no larger than `max`; false on anything else.
inline bool parse_count(const char* text, std::uint64_t max, std::uint64_t& value) {
  if (text == nullptr || *text == '\0') {
    return false;
  }
  std::uint64_t result = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') {
      return false;
    }
    const auto digit = static_cast<std::uint64_t>(*p - '0');
    if (result > (max - digit) / 10) {
      return false;  // larger than max (and never overflows)
    }
    result = result * 10 + digit;
  }
  if (result == 0) {
    return false;
  }
  value = result;
  return true;
}

/// @brief Parses argv; bad input prints the usage and exits with exit_usage.
inline options parse_options(int argc, char** argv, const char* program, cli_features cli) {
  options opt;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* value = nullptr;
    // Accept "-n N", "--array-size N" and "--array-size=N".
    auto matches = [&](const char* short_name, const char* long_name) {
      const std::size_t long_len = std::strlen(long_name);
      if (std::strcmp(arg, short_name) == 0 || std::strcmp(arg, long_name) == 0) {
        if (i + 1 >= argc) {
          usage_error(program, cli, "missing value after", arg);
        }
        value = argv[++i];
        return true;
      }
      if (std::strncmp(arg, long_name, long_len) == 0 && arg[long_len] == '=') {
        value = arg + long_len + 1;
        return true;
      }
      return false;
    };
    std::uint64_t number = 0;
    if (std::strcmp(arg, "-h") == 0 || std::strcmp(arg, "--help") == 0) {
      usage(stdout, program, cli);
      std::exit(exit_ok);
    } else if (matches("-n", "--array-size")) {
      if (!parse_count(value, max_array_size, number)) {
        usage_error(program, cli, "-n/--array-size needs an integer from 1 to 4294967296, got",
                    value);
      }
      opt.array_size = static_cast<std::size_t>(number);
    } else if (cli.streams && matches("-s", "--streams")) {
      if (!parse_count(value, max_streams, number)) {
        usage_error(program, cli, "-s/--streams needs an integer from 1 to 256, got", value);
      }
      opt.streams = static_cast<unsigned>(number);
    } else if (cli.bug && std::strcmp(arg, "--bug") == 0) {
      opt.bug = true;
    } else if (cli.bandwidth && std::strcmp(arg, "--bandwidth") == 0) {
      opt.bandwidth = true;
    } else {
      usage_error(program, cli, "unknown argument", arg);
    }
  }
  if (cli.streams && opt.streams > opt.array_size) {
    usage_error(program, cli, "-s/--streams must not exceed -n/--array-size", nullptr);
  }
  return opt;
}

/// @brief Sums on the host in double: a float32 running sum would stop growing at 2^24.
inline double host_sum(const float* data, std::size_t size) {
  double total = 0.0;
  for (std::size_t i = 0; i < size; ++i) {
    total += static_cast<double>(data[i]);
  }
  return total;
}

/// @brief Prints "New sum" and turns the result into the exit status.
inline int report_new_sum(double new_sum) {
  std::printf("New sum: %.3f\n", new_sum);
  if (!(std::fabs(new_sum - 1.0) <= 1e-3)) {  // also false for NaN
    std::fprintf(stderr, "error: New sum is %.6f, expected 1 within 1e-3\n", new_sum);
    return exit_failed;
  }
  return exit_ok;
}

/// @brief Owns `size` elements of device memory (cudaMalloc/cudaFree).
template <class T>
class device_buffer {
 public:
  device_buffer(std::size_t size, const char* what) {
    check(cudaMalloc(reinterpret_cast<void**>(&ptr_), size * sizeof(T)), what);
  }
  ~device_buffer() { cudaFree(ptr_); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  [[nodiscard]] T* get() const noexcept { return ptr_; }

 private:
  T* ptr_ = nullptr;
};

/// @brief Owns `size` elements of page-locked host memory (cudaMallocHost/cudaFreeHost).
template <class T>
class pinned_buffer {
 public:
  pinned_buffer(std::size_t size, const char* what) {
    check(cudaMallocHost(reinterpret_cast<void**>(&ptr_), size * sizeof(T)), what);
  }
  ~pinned_buffer() { cudaFreeHost(ptr_); }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  [[nodiscard]] T* get() const noexcept { return ptr_; }

 private:
  T* ptr_ = nullptr;
};

/// @brief Owns one CUDA stream.
class stream_owner {
 public:
  stream_owner() { check(cudaStreamCreate(&stream_), "cudaStreamCreate"); }
  ~stream_owner() {
    if (stream_ != nullptr) {
      cudaStreamDestroy(stream_);
    }
  }
  stream_owner(stream_owner&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  stream_owner& operator=(stream_owner&&) = delete;
  stream_owner(const stream_owner&) = delete;
  stream_owner& operator=(const stream_owner&) = delete;
  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

/// @brief The first-launch warm-up that the tutorial calls "Compilation": the first CUDA call
/// creates the context, and each kernel's first launch loads its module (and JIT-compiles its PTX
/// on a GPU the binary holds no machine code for). Launches each kernel once on a small array.
inline void warm_up() {
  const unsigned blocks = launch_blocks();
  device_buffer<float> array(blocks, "cudaMalloc(warm-up array)");
  device_buffer<float> partial(blocks, "cudaMalloc(warm-up partial sums)");
  device_buffer<float> sum(1, "cudaMalloc(warm-up sum)");
  // Defined contents keep memory checkers quiet; the values themselves are never used.
  check(cudaMemset(array.get(), 0, blocks * sizeof(float)), "cudaMemset(warm-up)");
  partial_reduce<<<blocks, THREADS_PER_BLOCK>>>(array.get(), blocks, partial.get());
  single_thread_sum<<<1, 1>>>(partial.get(), blocks, sum.get());
  divide_by<<<blocks, THREADS_PER_BLOCK>>>(array.get(), blocks, sum.get());
  check(cudaGetLastError(), "warm-up kernel launch");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(warm-up)");
}

}  // namespace reduce
