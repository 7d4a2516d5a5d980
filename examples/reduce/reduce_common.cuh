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

// The tutorial's launch shape, under its names so that readers recognise them.
constexpr unsigned THREADS_PER_BLOCK = 256;
constexpr unsigned BLOCKS_PER_GRID = 32 * 40;

/// @brief Each thread sums a grid-stride slice of `array`, then each block reduces its threads'
/// sums in shared memory (halving the stride each step); thread 0 writes the block's sum.
__global__ void partial_reduce(const float* array, std::size_t size, float* partial_reduction) {
  const std::size_t i_start = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t threads_per_grid = std::size_t{blockDim.x} * gridDim.x;
  float s_thread = 0.0f;
  for (std::size_t i = i_start; i < size; i += threads_per_grid) {
    s_thread += array[i];
  }

  __shared__ float s_block[THREADS_PER_BLOCK];
  const unsigned tid = threadIdx.x;
  s_block[tid] = s_thread;
  __syncthreads();

  for (unsigned i = blockDim.x / 2; i > 0; i /= 2) {
    if (tid < i) {
      s_block[tid] += s_block[tid + i];
    }
    __syncthreads();
  }

  if (tid == 0) {
    partial_reduction[blockIdx.x] = s_block[0];
  }
}

/// @brief One thread adds the `count` partial sums in order (float32, as the tutorial does).
__global__ void single_thread_sum(const float* partial_reduction, unsigned count, float* sum) {
  float total = 0.0f;
  for (unsigned i = 0; i < count; ++i) {
    total += partial_reduction[i];
  }
  sum[0] = total;
}

/// @brief Grid-stride `array[i] /= val_array[0]`.
__global__ void divide_by(float* array, std::size_t size, const float* val_array) {
  const std::size_t i_start = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t threads_per_grid = std::size_t{blockDim.x} * gridDim.x;
  for (std::size_t i = i_start; i < size; i += threads_per_grid) {
    array[i] /= val_array[0];
  }
}

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

/// The command line of the reduce programs.
struct options {
  std::size_t array_size = 100'000'000;  ///< -n/--array-size
  unsigned streams = 4;                  ///< -s/--streams (reduce_v3 only)
  bool bug = false;                      ///< --bug (reduce_v3 only)
};

// Large enough for any GPU we target; larger requests are refused up front instead of failing
// later in a host allocation.
constexpr std::size_t max_array_size = std::size_t{1} << 32;
constexpr unsigned max_streams = 256;

inline void usage(std::FILE* out, const char* program, bool with_streams) {
  std::fprintf(out, "usage: %s [-n N]%s\n", program, with_streams ? " [-s S] [--bug]" : "");
  std::fprintf(out, "  -n, --array-size N  number of float32 elements (default 100000000)\n");
  if (with_streams) {
    std::fprintf(out, "  -s, --streams S     number of CUDA streams, 1 to %u (default 4)\n",
                 max_streams);
    std::fprintf(out,
                 "  --bug               reuse one stream for every chunk (the tutorial's bug)\n");
  }
  std::fprintf(out, "  -h, --help          show this help\n");
}

[[noreturn]] inline void usage_error(const char* program, bool with_streams, const char* message,
                                     const char* value) {
  std::fprintf(stderr, "%s: %s%s%s%s\n", program, message, value ? " '" : "", value ? value : "",
               value ? "'" : "");
  usage(stderr, program, with_streams);
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
inline options parse_options(int argc, char** argv, const char* program, bool with_streams) {
  options opt;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* value = nullptr;
    // Accept "-n N", "--array-size N" and "--array-size=N".
    auto matches = [&](const char* short_name, const char* long_name) {
      const std::size_t long_len = std::strlen(long_name);
      if (std::strcmp(arg, short_name) == 0 || std::strcmp(arg, long_name) == 0) {
        if (i + 1 >= argc) {
          usage_error(program, with_streams, "missing value after", arg);
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
      usage(stdout, program, with_streams);
      std::exit(exit_ok);
    } else if (matches("-n", "--array-size")) {
      if (!parse_count(value, max_array_size, number)) {
        usage_error(program, with_streams,
                    "-n/--array-size needs an integer from 1 to 4294967296, got", value);
      }
      opt.array_size = static_cast<std::size_t>(number);
    } else if (with_streams && matches("-s", "--streams")) {
      if (!parse_count(value, max_streams, number)) {
        usage_error(program, with_streams, "-s/--streams needs an integer from 1 to 256, got",
                    value);
      }
      opt.streams = static_cast<unsigned>(number);
    } else if (with_streams && std::strcmp(arg, "--bug") == 0) {
      opt.bug = true;
    } else {
      usage_error(program, with_streams, "unknown argument", arg);
    }
  }
  if (with_streams && opt.streams > opt.array_size) {
    usage_error(program, with_streams, "-s/--streams must not exceed -n/--array-size", nullptr);
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
  device_buffer<float> array(BLOCKS_PER_GRID, "cudaMalloc(warm-up array)");
  device_buffer<float> partial(BLOCKS_PER_GRID, "cudaMalloc(warm-up partial sums)");
  device_buffer<float> sum(1, "cudaMalloc(warm-up sum)");
  // Defined contents keep memory checkers quiet; the values themselves are never used.
  check(cudaMemset(array.get(), 0, BLOCKS_PER_GRID * sizeof(float)), "cudaMemset(warm-up)");
  partial_reduce<<<BLOCKS_PER_GRID, THREADS_PER_BLOCK>>>(array.get(), BLOCKS_PER_GRID,
                                                         partial.get());
  single_thread_sum<<<1, 1>>>(partial.get(), BLOCKS_PER_GRID, sum.get());
  divide_by<<<BLOCKS_PER_GRID, THREADS_PER_BLOCK>>>(array.get(), BLOCKS_PER_GRID, sum.get());
  check(cudaGetLastError(), "warm-up kernel launch");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(warm-up)");
}

}  // namespace reduce
