/// @file
/// @brief stream_workers: what else nvtxpp shows in a CUDA program. Several host threads, each
/// named, each driving its own named CUDA stream through batches of copy / kernel / copy, in a
/// library domain of its own with categories ("Memory", "Compute"), payloads (a number, or a
/// struct of chunk facts on each copy), counters, formatted names, marks, and a start/end range
/// that one thread starts and another ends.
///
/// In Nsight Systems: the "stream_workers" domain under each "worker {i}" thread; the GPU rows
/// "worker {i} stream"; each range's payload (the copy's chunk_facts, or elements computed) in its
/// tooltip.
#include <nvtxpp/counter.hpp>
#include <nvtxpp/cuda.hpp>
#include <nvtxpp/nvtxpp.hpp>
#include <nvtxpp/struct_payload.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

NVTXPP_DEFINE_DOMAIN(workers_domain, "stream_workers");
using range = nvtxpp::scoped_range_in<workers_domain>;

constexpr nvtxpp::named_category memory{1, "Memory"};
constexpr nvtxpp::named_category compute{2, "Compute"};

// Work queued on the streams and not yet known to be done, summed over all workers.
nvtxpp::counter_in<workers_domain, std::int64_t> bytes_in_flight{
    "bytes in flight", nvtxpp::counter_unit{"B"}, nvtxpp::counter_scope::process,
    nvtxpp::counter_description{"bytes of copies queued and not yet synchronised"}};
nvtxpp::counter_in<workers_domain, std::int64_t> chunks_queued{
    "chunks queued", nvtxpp::counter_scope::process,
    nvtxpp::counter_description{"copies and kernels queued and not yet synchronised"}};

/// @brief What one copy moves: attached to its range as a structured payload, whose schema
/// (these names, types and offsets) Nsight Systems receives once.
struct chunk_facts {
  std::uint32_t stream;  ///< the worker's stream index
  std::uint64_t offset;  ///< byte offset of the chunk in the worker's device buffer
  std::uint64_t bytes;   ///< bytes copied
};
NVTXPP_PAYLOAD_SCHEMA(chunk_facts, stream, offset, bytes);

enum exit_status : int { exit_ok = 0, exit_failed = 1, exit_no_gpu = 2, exit_usage = 64 };

/// @brief y[i] = a * x[i] + y[i], grid-stride.
__global__ void scale_add(float* y, const float* x, float a, std::size_t n) {
  const std::size_t stride = std::size_t{blockDim.x} * gridDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = a * x[i] + y[i];
  }
}

struct options {
  unsigned workers = 4;
  unsigned batches = 6;
  std::size_t batch_size = std::size_t{1} << 22;  // float elements per batch (16 MiB)
};

void usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: stream_workers [-w W] [-b B] [-n N]\n"
      "  -w, --workers W     host threads, each with its own stream, 1 to 64 (default 4)\n"
      "  -b, --batches B     batches per worker, 1 to 1000 (default 6)\n"
      "  -n, --batch-size N  float32 elements per batch, 1 to 268435456 (default 4194304)\n"
      "  -h, --help          show this help\n");
}

[[noreturn]] void usage_error(const char* message, const char* value) {
  std::fprintf(stderr, "stream_workers: %s '%s'\n", message, value != nullptr ? value : "");
  usage(stderr);
  std::exit(exit_usage);
}

/// @brief A positive decimal number no larger than `max`, or usage_error.
std::uint64_t parse_count(const char* option, const char* text, std::uint64_t max) {
  std::uint64_t value = 0;
  bool ok = text != nullptr && *text != '\0';
  for (const char* p = text; ok && *p != '\0'; ++p) {
    const auto digit = static_cast<std::uint64_t>(*p - '0');
    ok = *p >= '0' && *p <= '9' && value <= (max - digit) / 10;
    value = value * 10 + digit;
  }
  if (!ok || value == 0 || value > max) {
    const std::string message =
        std::string{option} + " needs an integer from 1 to " + std::to_string(max) + ", got";
    usage_error(message.c_str(), text);
  }
  return value;
}

options parse_options(int argc, char** argv) {
  options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      std::exit(exit_ok);
    }
    const bool known = arg == "-w" || arg == "--workers" || arg == "-b" || arg == "--batches" ||
                       arg == "-n" || arg == "--batch-size";
    if (!known) {
      usage_error("unknown argument", argv[i]);
    }
    if (i + 1 >= argc) {
      usage_error("missing value after", argv[i]);
    }
    const char* value = argv[++i];
    if (arg == "-w" || arg == "--workers") {
      opt.workers = static_cast<unsigned>(parse_count("-w/--workers", value, 64));
    } else if (arg == "-b" || arg == "--batches") {
      opt.batches = static_cast<unsigned>(parse_count("-b/--batches", value, 1000));
    } else {
      opt.batch_size = static_cast<std::size_t>(parse_count("-n/--batch-size", value, 1u << 28));
    }
  }
  return opt;
}

/// @brief Remembers the first failed CUDA call of a worker; later calls are skipped.
struct cuda_status {
  std::string error;
  bool ok(cudaError_t err, const char* what) {
    if (error.empty() && err != cudaSuccess) {
      error = std::string{what} + " failed: " + cudaGetErrorString(err);
    }
    return error.empty();
  }
};

/// @brief One worker: its own thread name, its own stream, `batches` rounds of
/// H2D copy, kernel, D2H copy, each checked on the host. Ends `lifetime`, which main started.
void run_worker(unsigned id, const options& opt,
                nvtxpp::start_end_range_in<workers_domain> lifetime, cuda_status& status) {
  nvtxpp::name_current_thread("worker {}", id);
  const std::size_t n = opt.batch_size;
  const std::uint64_t bytes = n * sizeof(float);

  cudaStream_t stream = nullptr;
  float* host = nullptr;  // pinned: x then y, 2n floats
  float* dev = nullptr;   // x then y, 2n floats
  if (status.ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate")) {
    nvtxpp::name_cuda_stream(stream, "worker {} stream", id);
  }
  if (status.ok(cudaMallocHost(reinterpret_cast<void**>(&host), 2 * bytes), "cudaMallocHost")) {
    status.ok(cudaMalloc(reinterpret_cast<void**>(&dev), 2 * bytes), "cudaMalloc");
  }

  for (unsigned b = 0; b < opt.batches && status.error.empty(); ++b) {
    range batch{"worker {} batch {}", id, b};
    // x = id + 1, y = b, so y becomes 2 * (id + 1) + b: exact in float32.
    const auto x_value = static_cast<float>(id + 1);
    const auto y_value = static_cast<float>(b);
    {
      range fill{"fill inputs", nvtxpp::payload{bytes * 2}};
      for (std::size_t i = 0; i < n; ++i) {
        host[i] = x_value;
        host[n + i] = y_value;
      }
    }
    {
      bytes_in_flight.add(static_cast<std::int64_t>(3 * bytes));  // H2D (2 bytes) + D2H (bytes)
      chunks_queued.add(3);                                       // H2D, kernel, D2H
      range copy{"H2D {:.1f} MiB", static_cast<double>(2 * bytes) / (1 << 20), memory,
                 nvtxpp::payload_of(chunk_facts{id, 0, 2 * bytes}), nvtxpp::colors::yellow};
      status.ok(cudaMemcpyAsync(dev, host, 2 * bytes, cudaMemcpyHostToDevice, stream),
                "cudaMemcpyAsync(H2D)");
    }
    {
      range kernel{"scale_add", compute, nvtxpp::payload{std::uint64_t{n}}, nvtxpp::colors::green};
      scale_add<<<1024, 256, 0, stream>>>(dev + n, dev, 2.0f, n);
      status.ok(cudaGetLastError(), "scale_add launch");
    }
    {
      range copy{"D2H {:.1f} MiB", static_cast<double>(bytes) / (1 << 20), memory,
                 nvtxpp::payload_of(chunk_facts{id, bytes, bytes}), nvtxpp::colors::orange};
      status.ok(cudaMemcpyAsync(host + n, dev + n, bytes, cudaMemcpyDeviceToHost, stream),
                "cudaMemcpyAsync(D2H)");
    }
    {
      range wait{"wait for stream"};
      status.ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      bytes_in_flight.subtract(static_cast<std::int64_t>(3 * bytes));
      chunks_queued.subtract(3);
    }
    if (!status.error.empty()) {
      break;
    }
    const float expected = 2.0f * x_value + y_value;
    for (std::size_t i = 0; i < n; ++i) {
      if (host[n + i] != expected) {
        status.error = "worker " + std::to_string(id) + " batch " + std::to_string(b) +
                       ": element " + std::to_string(i) + " is " + std::to_string(host[n + i]) +
                       ", expected " + std::to_string(expected);
        break;
      }
    }
    nvtxpp::mark_in<workers_domain>("worker {} batch {} checked", id, b);
  }
  cudaFree(dev);
  cudaFreeHost(host);
  if (stream != nullptr) {
    cudaStreamDestroy(stream);
  }
  lifetime.end();  // started by main, ended here
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse_options(argc, argv);

  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    int driver = 0;
    const bool no_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0;
    std::fprintf(stderr, "stream_workers: no usable CUDA GPU found (%s); this example needs one.\n",
                 no_driver            ? "no NVIDIA driver is installed"
                 : err != cudaSuccess ? cudaGetErrorString(err)
                                      : "no CUDA device is visible");
    return exit_no_gpu;
  }

  nvtxpp::name_current_thread("main");
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    nvtxpp::name_cuda_device(0, "GPU 0: {}", static_cast<const char*>(prop.name));
  }

  std::vector<cuda_status> status(opt.workers);
  {
    range all{"run {} workers x {} batches", opt.workers, opt.batches};
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < opt.workers; ++i) {
      // Started here, on the main thread; ended by worker i on its own thread.
      nvtxpp::start_end_range_in<workers_domain> lifetime{"worker {} lifetime", i};
      threads.emplace_back(run_worker, i, std::cref(opt), std::move(lifetime), std::ref(status[i]));
    }
    for (std::thread& t : threads) {
      t.join();
    }
  }

  int result = exit_ok;
  for (unsigned i = 0; i < opt.workers; ++i) {
    if (!status[i].error.empty()) {
      std::fprintf(stderr, "error: worker %u: %s\n", i, status[i].error.c_str());
      result = exit_failed;
    }
  }
  if (result == exit_ok) {
    std::printf("%u workers x %u batches of %zu elements: all results correct\n", opt.workers,
                opt.batches, opt.batch_size);
  }
  return result;
}
