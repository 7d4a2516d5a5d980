// Launch-to-completion time of CUDA graph replays: the issue's step (`layer` > `attention`, 2
// kernels; `mlp`, 1 kernel) captured once, then `replays` launches and one stream
// synchronisation, timed on the host, `rounds` times (after a warm-up round). Run with no tool,
// under nvtxpp-capture, and under nvtxpp-capture with NVTXPP_GRAPH_NODES=off
// (scripts/verify_graphs_gpu.sh): the attribution of replayed work to capture-time ranges adds
// nothing to a replay (no host nodes, no API calls), so the last two should match.
//
//   graph_replay_cost [replays=10000] [rounds=7]
// Prints one line per round and `median_ns_per_replay=<x>`.
#include <nvtx3/nvToolsExt.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

__global__ void scale(float* x, float a, int n) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    x[i] = x[i] * a;
  }
}

__global__ void add_into(float* y, float const* x, int n) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    y[i] += x[i];
  }
}

bool ok(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "graph_replay_cost: %s: %s\n", what, cudaGetErrorString(e));
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long const replays = argc > 1 ? std::atol(argv[1]) : 10000;
  int const rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  if (replays < 1 || rounds < 1) {
    std::fprintf(stderr, "usage: graph_replay_cost [replays>=1] [rounds>=1]\n");
    return 64;
  }
  constexpr int n = 1024;
  float* x = nullptr;
  float* y = nullptr;
  cudaStream_t s = nullptr;
  if (!ok(cudaMalloc(&x, sizeof(float) * n), "cudaMalloc") ||
      !ok(cudaMalloc(&y, sizeof(float) * n), "cudaMalloc") ||
      !ok(cudaMemset(x, 0, sizeof(float) * n), "cudaMemset") ||
      !ok(cudaMemset(y, 0, sizeof(float) * n), "cudaMemset") ||
      !ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate")) {
    return 1;
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (!ok(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "begin capture")) {
    return 1;
  }
  nvtxRangePushA("layer");
  nvtxRangePushA("attention");
  scale<<<n / 256, 256, 0, s>>>(x, 1.0f, n);
  scale<<<n / 256, 256, 0, s>>>(x, 1.0f, n);
  nvtxRangePop();
  nvtxRangePushA("mlp");
  add_into<<<n / 256, 256, 0, s>>>(y, x, n);
  nvtxRangePop();
  nvtxRangePop();
  if (!ok(cudaStreamEndCapture(s, &graph), "end capture") ||
      !ok(cudaGraphInstantiate(&exec, graph, 0), "instantiate")) {
    return 1;
  }
  std::vector<double> per_replay;
  for (int r = -1; r < rounds; ++r) {  // round -1: warm-up
    auto const t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < replays; ++i) {
      if (!ok(cudaGraphLaunch(exec, s), "cudaGraphLaunch")) {
        return 1;
      }
    }
    if (!ok(cudaStreamSynchronize(s), "cudaStreamSynchronize")) {
      return 1;
    }
    auto const t1 = std::chrono::steady_clock::now();
    double const ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    if (r >= 0) {
      per_replay.push_back(ns / static_cast<double>(replays));
      std::printf("round %d: %ld replays in %.0f ns: %.1f ns per replay\n", r, replays, ns,
                  per_replay.back());
    }
  }
  std::sort(per_replay.begin(), per_replay.end());
  std::printf("median_ns_per_replay=%.1f min=%.1f max=%.1f\n", per_replay[per_replay.size() / 2],
              per_replay.front(), per_replay.back());
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  cudaFree(x);
  cudaFree(y);
  return 0;
}
