// memory_pool: an arena over one cudaMalloc, annotated with nvtxpp/memory.hpp so that
// compute-sanitizer sees its buffers. Two bugs on demand:
//   --bug off-by-one   the kernel writes one element past its output buffer, into the pool's
//                      memory between "output" and its neighbour: inside the cudaMalloc, so
//                      memcheck sees nothing, unless the arena's buffers are NVTX regions.
//   --bug read-only    the kernel writes into "lookup", which is read-only for the GPU while
//                      the kernel runs (nvtxpp::cuda_access_scope): reported with annotations.
//   --bug leak         the program never releases the arena nor its buffers: memcheck
//                      --leak-check full reports each buffer leaked, by its name.
// Each buffer's address is printed: compute-sanitizer's out-of-bounds report gives the address
// and size of the region it hit ("nearest allocation at ... of size 4,000 bytes"), not its name
// (it prints names in its leak and unused-memory reports).
// --no-annotate switches the annotations off at run time: the same binary shows both outcomes.
//
//   compute-sanitizer --tool memcheck ./memory_pool --bug off-by-one                  # reported
//   compute-sanitizer --tool memcheck ./memory_pool --bug off-by-one --no-annotate    # silent
//   compute-sanitizer --tool initcheck --track-unused-memory ./memory_pool            # clean
#include <nvtxpp/memory_cuda.hpp>
#include <nvtxpp/range.hpp>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

namespace {

constexpr int bad_usage = 64;
constexpr int no_gpu = 2;

#define MEMORY_POOL_CHECK(call)                                   \
  do {                                                            \
    cudaError_t const memory_pool_err_ = (call);                  \
    if (memory_pool_err_ != cudaSuccess) {                        \
      std::fprintf(stderr, "memory_pool: %s failed: %s\n", #call, \
                   cudaGetErrorString(memory_pool_err_));         \
      std::exit(1);                                               \
    }                                                             \
  } while (0)

/// A bump arena over one cudaMalloc, as pools are: 256-byte aligned slots, nothing freed until
/// the arena ends. With annotations its memory is an NVTX heap and each buffer a named region.
class arena {
 public:
  arena(std::size_t bytes, bool annotate, bool free_first)
      : bytes_{bytes}, free_first_{free_first} {
    MEMORY_POOL_CHECK(cudaMalloc(&base_, bytes));
    if (annotate) heap_.emplace(base_, bytes, "arena");
  }
  arena(arena const&) = delete;
  arena& operator=(arena const&) = delete;
  ~arena() {
    // NVTX's order: unregister the heap, then free its memory (--free-before-unregister: the
    // other way round, to compare what initcheck reports at the free).
    if (!free_first_) heap_.reset();
    cudaFree(base_);
    heap_.reset();
  }

  /// A buffer of @p n floats and its region (empty without annotations).
  struct buffer {
    float* data;
    std::size_t n;
    nvtxpp::region region;
  };
  buffer allocate(std::size_t n, char const* name) {
    std::size_t const bytes = n * sizeof(float);
    std::size_t const at = (used_ + 255) / 256 * 256;
    if (at + bytes > bytes_) {
      std::fprintf(stderr, "memory_pool: arena exhausted\n");
      std::exit(1);
    }
    used_ = at + bytes;
    auto* p = reinterpret_cast<float*>(static_cast<unsigned char*>(base_) + at);
    buffer b{p, n, {}};
    if (heap_) b.region = heap_->region(p, bytes, std::string_view{name});
    return b;
  }

 private:
  void* base_ = nullptr;
  std::size_t bytes_;
  std::size_t used_ = 0;
  bool free_first_;
  std::optional<nvtxpp::heap> heap_;
};

__global__ void fill(float* out, std::size_t n, float value) {
  std::size_t const i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = value + static_cast<float>(i % 7);
}

/// out[i] = in[i] * lookup[i] for i < n + overrun: overrun 1 is the off-by-one bug.
__global__ void scale(float const* in, float const* lookup, float* out, std::size_t n,
                      std::size_t overrun) {
  std::size_t const i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n + overrun) out[i] = in[i % n] * lookup[i % n];
}

void usage(FILE* to) {
  std::fprintf(to,
               "usage: memory_pool [--bug none|off-by-one|read-only|leak] [--no-annotate] [-n N]\n"
               "                   [--free-before-unregister]\n"
               "  an arena over one cudaMalloc; its buffers are NVTX regions unless "
               "--no-annotate\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view bug = "none";
  bool annotate = true;
  bool free_first = false;
  std::size_t n = 1000;  // 4000 bytes a buffer: slots of 4096, so 96 bytes of padding follow
  for (int i = 1; i < argc; ++i) {
    std::string_view const a = argv[i];
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if (a == "--no-annotate") {
      annotate = false;
    } else if (a == "--annotate") {
      annotate = true;
    } else if (a == "--free-before-unregister") {
      free_first = true;
    } else if (a == "--bug" || a == "-n") {
      if (i + 1 == argc) {
        std::fprintf(stderr, "memory_pool: missing value after %s\n", argv[i]);
        return bad_usage;
      }
      if (a == "--bug") {
        bug = argv[++i];
      } else {
        char* end = nullptr;
        unsigned long long const v = std::strtoull(argv[++i], &end, 10);
        if (*end != '\0' || v == 0 || v > (1ULL << 24)) {
          std::fprintf(stderr, "memory_pool: -n needs an integer in 1..16777216\n");
          return bad_usage;
        }
        n = static_cast<std::size_t>(v);
      }
    } else {
      std::fprintf(stderr, "memory_pool: unknown argument %s\n", argv[i]);
      usage(stderr);
      return bad_usage;
    }
  }
  if (bug != "none" && bug != "off-by-one" && bug != "read-only" && bug != "leak") {
    std::fprintf(stderr, "memory_pool: --bug is none, off-by-one, read-only or leak\n");
    return bad_usage;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "memory_pool: no usable CUDA GPU found\n");
    return no_gpu;
  }
  // compute-sanitizer wants the CUDA runtime initialised before the first NVTX call.
  MEMORY_POOL_CHECK(cudaFree(nullptr));
  {
    nvtxpp::scoped_range run{"memory_pool {}", annotate ? "annotated" : "plain"};
    // --bug leak: the arena and its buffers are never released (the program forgets them).
    auto* const owned = new arena{1 << 20, annotate, free_first};
    arena& pool = *owned;
    auto* const buffers = new arena::buffer[3]{
        pool.allocate(n, "input"), pool.allocate(n, "output"), pool.allocate(n, "lookup")};
    auto& input = buffers[0];
    auto& output = buffers[1];
    auto& lookup = buffers[2];
    // Said before any kernel: under compute-sanitizer a reported error ends the CUDA context.
    std::printf("memory_pool: regions %s\n",
                input.region.registered() ? "registered (a tool listens)" : "not registered");
    for (auto const* b : {&input, &output, &lookup}) {
      std::printf("memory_pool: buffer %s at %p (%zu bytes)\n",
                  b == &input    ? "input"
                  : b == &output ? "output"
                                 : "lookup",
                  static_cast<void*>(b->data), b->n * sizeof(float));
    }
    std::fflush(stdout);
    std::vector<float> host(n, 1.5f);
    MEMORY_POOL_CHECK(
        cudaMemcpy(input.data, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    unsigned const threads = 256;
    auto const blocks = static_cast<unsigned>((n + 1 + threads - 1) / threads);
    fill<<<blocks, threads>>>(lookup.data, n, 2.0f);
    MEMORY_POOL_CHECK(cudaGetLastError());
    {
      // The table is read-only for every kernel from here on.
      nvtxpp::cuda_access_scope read_only{lookup.region, nvtxpp::access::read};
      float* const target = bug == "read-only" ? lookup.data : output.data;
      std::size_t const overrun = bug == "off-by-one" ? 1 : 0;
      scale<<<blocks, threads>>>(input.data, lookup.data, target, n, overrun);
      MEMORY_POOL_CHECK(cudaGetLastError());
      MEMORY_POOL_CHECK(cudaDeviceSynchronize());
    }
    MEMORY_POOL_CHECK(
        cudaMemcpy(host.data(), output.data, n * sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("memory_pool: %s, bug %.*s: output[0] = %.1f\n",
                annotate ? "annotated" : "not annotated", static_cast<int>(bug.size()), bug.data(),
                static_cast<double>(host[0]));
    if (bug != "leak") {
      delete[] buffers;  // the regions end first, then the arena's heap and its memory
      delete owned;
    }
  }
  return 0;
}
