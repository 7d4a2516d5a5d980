/// @file
/// @brief graph_replay: a model step captured as a CUDA graph under NVTX ranges, then replayed.
///
/// The step is `layer` > `attention` (2 kernels) and `mlp` (1 kernel), captured once from a
/// stream and replayed `--replays` times (default 3) under a `replay` range. NVTX ranges pushed
/// during capture cover the capture, where nothing runs: Nsight Systems gives `layer`,
/// `attention` and `mlp` no GPU time. Under nvtxpp-capture each replay's kernels come back under
/// the ranges they were captured in (docs/graphs.md).
///
/// `--all` adds the other shapes of graph work: a graph built node by node (a memset, a copy and
/// a kernel inside `outer` > model:`build`, one more kernel with no range open) instantiated
/// twice and launched on two streams; a child graph; an executable graph updated with
/// cudaGraphExecUpdate; a graph captured on another thread. Every result is checked on the host.
#include <nvtxpp/cuda.hpp>
#include <nvtxpp/nvtxpp.hpp>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

NVTXPP_DEFINE_DOMAIN(model_domain, "model");

enum exit_status : int { exit_ok = 0, exit_failed = 1, exit_no_gpu = 2, exit_usage = 64 };

constexpr int n = 1 << 16;
constexpr int threads = 256;
constexpr int blocks = (n + threads - 1) / threads;

__global__ void scale(float* x, float a, int count) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) {
    x[i] *= a;
  }
}

__global__ void shift(float* x, float b, int count) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) {
    x[i] += b;
  }
}

__global__ void add_into(float* y, float const* x, int count) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) {
    y[i] += x[i];
  }
}

bool ok(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "graph_replay: %s: %s\n", what, cudaGetErrorString(e));
    return false;
  }
  return true;
}
#define GR_CHECK(call)      \
  do {                      \
    if (!ok(call, #call)) { \
      return false;         \
    }                       \
  } while (0)

/// Every element of device buffer `d` equals `want`.
bool expect(float const* d, float want, char const* what) {
  std::vector<float> h(n);
  GR_CHECK(cudaMemcpy(h.data(), d, sizeof(float) * n, cudaMemcpyDeviceToHost));
  for (float v : h) {
    if (std::fabs(v - want) > 1e-3f * std::fabs(want) + 1e-6f) {
      std::fprintf(stderr, "graph_replay: %s: %g, want %g\n", what, static_cast<double>(v),
                   static_cast<double>(want));
      return false;
    }
  }
  return true;
}

bool fill(float* d, float value) {
  std::vector<float> h(n, value);
  GR_CHECK(cudaMemcpy(d, h.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  return true;
}

/// The issue's step: x = 2x + 1 (attention), y += x (mlp), captured under its ranges.
bool capture_step(cudaStream_t s, float* x, float* y, cudaGraph_t* graph) {
  GR_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  {
    nvtxpp::scoped_range layer{"layer"};
    {
      nvtxpp::scoped_range attention{"attention"};
      scale<<<blocks, threads, 0, s>>>(x, 2.0f, n);
      shift<<<blocks, threads, 0, s>>>(x, 1.0f, n);
    }
    {
      nvtxpp::scoped_range mlp{"mlp"};
      add_into<<<blocks, threads, 0, s>>>(y, x, n);
    }
  }
  GR_CHECK(cudaStreamEndCapture(s, graph));
  return true;
}

bool issue_step(cudaStream_t s, int replays) {
  float* x = nullptr;
  float* y = nullptr;
  GR_CHECK(cudaMalloc(&x, sizeof(float) * n));
  GR_CHECK(cudaMalloc(&y, sizeof(float) * n));
  if (!fill(x, 1.0f) || !fill(y, 0.0f)) {
    return false;
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (!capture_step(s, x, y, &graph)) {
    return false;
  }
  GR_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  float want_x = 1.0f;
  float want_y = 0.0f;
  {
    nvtxpp::scoped_range replay{"replay"};
    for (int i = 0; i < replays; ++i) {
      GR_CHECK(cudaGraphLaunch(exec, s));
      want_x = 2.0f * want_x + 1.0f;
      want_y += want_x;
    }
    GR_CHECK(cudaStreamSynchronize(s));
  }
  bool const good = expect(x, want_x, "attention result") && expect(y, want_y, "mlp result");
  GR_CHECK(cudaGraphExecDestroy(exec));
  GR_CHECK(cudaGraphDestroy(graph));
  GR_CHECK(cudaFree(x));
  GR_CHECK(cudaFree(y));
  return good;
}

cudaKernelNodeParams kernel_params(void* func, void** args) {
  cudaKernelNodeParams p{};
  p.func = func;
  p.gridDim = dim3(blocks);
  p.blockDim = dim3(threads);
  p.kernelParams = args;
  return p;
}

/// Node by node: a = 0 (memset), a = c (copy), a *= 3 (kernel) under `outer` > model:`build`,
/// then a += 1 with no range open; instantiated twice, launched on two streams.
bool graph_api_two_execs(cudaStream_t s1, cudaStream_t s2, float* a, float* c) {
  if (!fill(c, 2.0f)) {
    return false;
  }
  cudaGraph_t graph = nullptr;
  GR_CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t memset_node = nullptr;
  cudaGraphNode_t copy_node = nullptr;
  cudaGraphNode_t scale_node = nullptr;
  cudaGraphNode_t shift_node = nullptr;
  float three = 3.0f;
  float one = 1.0f;
  int count = n;
  void* scale_args[] = {&a, &three, &count};
  void* shift_args[] = {&a, &one, &count};
  {
    nvtxpp::scoped_range outer{"outer"};
    nvtxpp::scoped_range_in<model_domain> build{"build"};
    cudaMemsetParams m{};
    m.dst = a;
    m.value = 0;
    m.elementSize = sizeof(float);
    m.width = n;
    m.height = 1;
    GR_CHECK(cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &m));
    GR_CHECK(cudaGraphAddMemcpyNode1D(&copy_node, graph, &memset_node, 1, a, c, sizeof(float) * n,
                                      cudaMemcpyDeviceToDevice));
    cudaKernelNodeParams const k = kernel_params(reinterpret_cast<void*>(&scale), scale_args);
    GR_CHECK(cudaGraphAddKernelNode(&scale_node, graph, &copy_node, 1, &k));
  }
  cudaKernelNodeParams const k = kernel_params(reinterpret_cast<void*>(&shift), shift_args);
  GR_CHECK(cudaGraphAddKernelNode(&shift_node, graph, &scale_node, 1, &k));  // no range open
  cudaGraphExec_t exec1 = nullptr;
  cudaGraphExec_t exec2 = nullptr;
  GR_CHECK(cudaGraphInstantiate(&exec1, graph, 0));
  GR_CHECK(cudaGraphInstantiate(&exec2, graph, 0));
  GR_CHECK(cudaGraphLaunch(exec1, s1));
  GR_CHECK(cudaStreamSynchronize(s1));
  GR_CHECK(cudaGraphLaunch(exec2, s2));
  GR_CHECK(cudaStreamSynchronize(s2));
  bool const good = expect(a, 7.0f, "graph API result");
  GR_CHECK(cudaGraphExecDestroy(exec1));
  GR_CHECK(cudaGraphExecDestroy(exec2));
  GR_CHECK(cudaGraphDestroy(graph));
  return good;
}

/// A child graph (d += 1, added under `child_body`) added to a parent under `parent`.
bool child_graph(cudaStream_t s, float* d) {
  if (!fill(d, 0.0f)) {
    return false;
  }
  float one = 1.0f;
  int count = n;
  void* args[] = {&d, &one, &count};
  cudaGraph_t child = nullptr;
  cudaGraph_t parent = nullptr;
  GR_CHECK(cudaGraphCreate(&child, 0));
  GR_CHECK(cudaGraphCreate(&parent, 0));
  {
    nvtxpp::scoped_range body{"child_body"};
    cudaGraphNode_t node = nullptr;
    cudaKernelNodeParams const k = kernel_params(reinterpret_cast<void*>(&shift), args);
    GR_CHECK(cudaGraphAddKernelNode(&node, child, nullptr, 0, &k));
  }
  {
    nvtxpp::scoped_range outer{"parent"};
    cudaGraphNode_t node = nullptr;
    GR_CHECK(cudaGraphAddChildGraphNode(&node, parent, nullptr, 0, child));
  }
  cudaGraphExec_t exec = nullptr;
  GR_CHECK(cudaGraphInstantiate(&exec, parent, 0));
  GR_CHECK(cudaGraphLaunch(exec, s));
  GR_CHECK(cudaStreamSynchronize(s));
  bool const good = expect(d, 1.0f, "child graph result");
  GR_CHECK(cudaGraphExecDestroy(exec));
  GR_CHECK(cudaGraphDestroy(parent));
  GR_CHECK(cudaGraphDestroy(child));
  return good;
}

bool capture_scale(cudaStream_t s, float* e, float a, char const* range, cudaGraph_t* graph) {
  GR_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  {
    nvtxpp::scoped_range r{range};
    scale<<<blocks, threads, 0, s>>>(e, a, n);
  }
  GR_CHECK(cudaStreamEndCapture(s, graph));
  return true;
}

/// e *= 2 captured under `v1`, instantiated, launched; e *= 5 captured under `v2`, the
/// executable graph updated from it (cudaGraphExecUpdate), launched again.
bool exec_update(cudaStream_t s, float* e) {
  if (!fill(e, 1.0f)) {
    return false;
  }
  cudaGraph_t g1 = nullptr;
  cudaGraph_t g2 = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (!capture_scale(s, e, 2.0f, "v1", &g1)) {
    return false;
  }
  GR_CHECK(cudaGraphInstantiate(&exec, g1, 0));
  GR_CHECK(cudaGraphLaunch(exec, s));
  if (!capture_scale(s, e, 5.0f, "v2", &g2)) {
    return false;
  }
  cudaGraphExecUpdateResultInfo info{};
  GR_CHECK(cudaGraphExecUpdate(exec, g2, &info));
  GR_CHECK(cudaGraphLaunch(exec, s));
  GR_CHECK(cudaStreamSynchronize(s));
  bool const good = expect(e, 10.0f, "updated graph result");
  GR_CHECK(cudaGraphExecDestroy(exec));
  GR_CHECK(cudaGraphDestroy(g1));
  GR_CHECK(cudaGraphDestroy(g2));
  return good;
}

/// f += 1 captured on a worker thread under `worker`, replayed by this thread (whose open range
/// `main_open` is not the node's).
bool other_thread(cudaStream_t s, float* f) {
  if (!fill(f, 0.0f)) {
    return false;
  }
  cudaGraph_t graph = nullptr;
  bool captured = false;
  {
    nvtxpp::scoped_range main_open{"main_open"};
    std::thread worker{[&] {
      cudaStream_t own = nullptr;
      if (!ok(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking), "worker stream") ||
          !ok(cudaStreamBeginCapture(own, cudaStreamCaptureModeThreadLocal), "worker capture")) {
        return;
      }
      {
        nvtxpp::scoped_range r{"worker"};
        shift<<<blocks, threads, 0, own>>>(f, 1.0f, n);
      }
      captured = ok(cudaStreamEndCapture(own, &graph), "worker end capture") &&
                 ok(cudaStreamDestroy(own), "worker stream destroy");
    }};
    worker.join();
  }
  if (!captured) {
    return false;
  }
  cudaGraphExec_t exec = nullptr;
  GR_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  GR_CHECK(cudaGraphLaunch(exec, s));
  GR_CHECK(cudaStreamSynchronize(s));
  bool const good = expect(f, 1.0f, "other thread's graph result");
  GR_CHECK(cudaGraphExecDestroy(exec));
  GR_CHECK(cudaGraphDestroy(graph));
  return good;
}

bool all_cases(cudaStream_t s1, cudaStream_t s2) {
  float* buffers[5] = {};
  for (auto& b : buffers) {
    GR_CHECK(cudaMalloc(&b, sizeof(float) * n));
  }
  bool const good = graph_api_two_execs(s1, s2, buffers[0], buffers[1]) &&
                    child_graph(s1, buffers[2]) && exec_update(s1, buffers[3]) &&
                    other_thread(s1, buffers[4]);
  for (auto* b : buffers) {
    GR_CHECK(cudaFree(b));
  }
  return good;
}

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: graph_replay [-r N] [--all]\n"
               "  -r, --replays N  replays of the captured step, 1 to 1000000 (default 3)\n"
               "      --all        also the other graph shapes (graph API, two executable\n"
               "                   graphs on two streams, child graph, cudaGraphExecUpdate,\n"
               "                   capture on another thread)\n"
               "  -h, --help       show this help\n");
}

}  // namespace

int main(int argc, char** argv) {
  int replays = 3;
  bool all = false;
  for (int i = 1; i < argc; ++i) {
    std::string const arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return exit_ok;
    }
    if (arg == "--all") {
      all = true;
    } else if (arg == "-r" || arg == "--replays") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "graph_replay: missing value for %s\n", arg.c_str());
        return exit_usage;
      }
      char* end = nullptr;
      long const v = std::strtol(argv[++i], &end, 10);
      if (end == argv[i] || *end != '\0' || v < 1 || v > 1'000'000) {
        std::fprintf(stderr, "graph_replay: --replays needs an integer from 1 to 1000000\n");
        return exit_usage;
      }
      replays = static_cast<int>(v);
    } else {
      std::fprintf(stderr, "graph_replay: unknown argument '%s'\n", arg.c_str());
      usage(stderr);
      return exit_usage;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "graph_replay: no usable CUDA GPU found\n");
    return exit_no_gpu;
  }
  cudaStream_t s1 = nullptr;
  cudaStream_t s2 = nullptr;
  if (!ok(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), "stream") ||
      !ok(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), "stream")) {
    return exit_failed;
  }
  nvtxpp::name_cuda_stream(s1, "graph stream 1");
  nvtxpp::name_cuda_stream(s2, "graph stream 2");
  bool const good = issue_step(s1, replays) && (!all || all_cases(s1, s2));
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
  if (!good) {
    return exit_failed;
  }
  std::printf("graph_replay: %d replays%s, all results correct\n", replays,
              all ? " and every other graph shape" : "");
  return exit_ok;
}
