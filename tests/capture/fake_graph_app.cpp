// CUDA graphs without a GPU: the graph node events and graph launches a CUDA program makes,
// driven through the test double of CUPTI (fake_cupti.cpp) under nvtxpp-capture, for every case
// the graph attribution must hold for (cupti_tests.py `fake_graphs` checks the outputs).
//
// Node and graph ids are the fake's handles (see fake_cupti.cpp). Node types are CUDA's
// CUgraphNodeType values: 0 kernel, 1 memcpy, 2 memset, 4 child graph.
#include <nvtx3/nvToolsExt.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using node_fn = void (*)(int, std::uint32_t, std::uint64_t, std::uint32_t, std::uint64_t, int);
using launch_fn = void (*)(std::uint32_t, std::uint64_t const*, int const*, int, std::uint32_t);
node_fn g_node = nullptr;
launch_fn g_launch = nullptr;

constexpr int kernel = 0;
constexpr int memcpy_node = 1;
constexpr int memset_node = 2;
constexpr int child_node = 4;

/// What CUDA reports for one node added to `graph`: `starting`, then `created`.
void created(std::uint32_t graph, std::uint64_t node, int type = kernel) {
  g_node(3, graph, 0, 0, 0, type);
  g_node(0, graph, node, 0, 0, type);
}
void cloned(std::uint32_t graph, std::uint64_t node, std::uint32_t from_graph, std::uint64_t from,
            int type = kernel) {
  g_node(1, graph, node, from_graph, from, type);
}
void updated(std::uint32_t graph, std::uint64_t node, std::uint32_t from_graph,
             std::uint64_t from) {
  g_node(2, graph, node, from_graph, from, kernel);
}
void launch(std::uint32_t graph, std::vector<std::uint64_t> const& nodes,
            std::vector<int> const& kinds, std::uint32_t stream) {
  g_launch(graph, nodes.data(), kinds.data(), static_cast<int>(nodes.size()), stream);
}

void push(nvtxDomainHandle_t d, char const* name) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  nvtxDomainRangePushEx(d, &a);
}

/// The issue's example: `layer` > `attention` (2 kernels), `mlp` (1 kernel), captured, then
/// instantiated (graph 2) and replayed 3 times under `replay`.
void issue_example() {
  nvtxRangePushA("layer");
  nvtxRangePushA("attention");
  created(1, 101);
  created(1, 102);
  nvtxRangePop();
  nvtxRangePushA("mlp");
  created(1, 103);
  nvtxRangePop();
  nvtxRangePop();
  for (std::uint64_t n : {101, 102, 103}) {
    cloned(2, n + 100, 1, n);
  }
  nvtxRangePushA("replay");
  for (int i = 0; i < 3; ++i) {
    launch(2, {201, 202, 203}, {kernel, kernel, kernel}, 7);
  }
  nvtxRangePop();
}

/// Built node by node (the graph API) under `outer` > `dom2:build` (two domains), a copy, a
/// memset and a kernel, then one more kernel with no range open; instantiated twice (graphs 11,
/// 12) and launched on two streams (7 and 8).
void graph_api_two_execs(nvtxDomainHandle_t dom2) {
  nvtxRangePushA("outer");
  push(dom2, "build");
  created(10, 301, memcpy_node);
  created(10, 302, memset_node);
  created(10, 303, kernel);
  nvtxDomainRangePop(dom2);
  nvtxRangePop();
  created(10, 304, kernel);  // no range open
  int const types[] = {memcpy_node, memset_node, kernel, kernel};
  for (std::uint64_t i = 0; i < 4; ++i) {
    cloned(11, 401 + i, 10, 301 + i, types[i]);
    cloned(12, 501 + i, 10, 301 + i, types[i]);
  }
  std::vector<int> const kinds = {1, 2, 0, 0};
  launch(11, {401, 402, 403, 404}, kinds, 7);
  launch(12, {501, 502, 503, 504}, kinds, 8);
}

/// A child graph: its kernel added under `child_body` (graph 20), the child graph added to a
/// parent (graph 21) under `parent` (CUDA copies it into the node: graph 22), then instantiated
/// (graph 23) and launched once.
void child_graph() {
  nvtxRangePushA("child_body");
  created(20, 601);
  nvtxRangePop();
  nvtxRangePushA("parent");
  // cudaGraphAddChildGraphNode: CUDA copies the child graph (20) into the new node (graph 22)
  // between the node's `starting` and `created`.
  g_node(3, 21, 0, 0, 0, child_node);
  cloned(22, 603, 20, 601);
  g_node(0, 21, 602, 0, 0, child_node);
  nvtxRangePop();
  cloned(23, 701, 22, 603);
  cloned(23, 702, 21, 602, child_node);
  launch(23, {701}, {kernel}, 7);
  // Through the driver call, whose enter and exit bracket the copy wherever CUDA makes it:
  // before the node's `starting` (parent2), or after its `created` (parent3).
  nvtxRangePushA("parent2");
  g_node(4, 0, 0, 0, 0, 0);
  cloned(25, 605, 20, 601);
  g_node(3, 24, 0, 0, 0, child_node);
  g_node(0, 24, 604, 0, 0, child_node);
  g_node(5, 0, 0, 0, 0, 0);
  nvtxRangePop();
  nvtxRangePushA("parent3");
  g_node(4, 0, 0, 0, 0, 0);
  g_node(3, 26, 0, 0, 0, child_node);
  g_node(0, 26, 606, 0, 0, child_node);
  cloned(27, 607, 20, 601);
  g_node(5, 0, 0, 0, 0, 0);
  nvtxRangePop();
  cloned(28, 1201, 25, 605);
  cloned(29, 1202, 27, 607);
  launch(28, {1201}, {kernel}, 7);
  launch(29, {1202}, {kernel}, 7);
}

/// Child graphs in the order CUDA 13 reports them (recorded on an H100 with a CUPTI subscriber):
/// STARTING names the node and, for a child-graph node, its type (its CREATED and CLONED say 0);
/// adding a child graph copies its nodes inside the node's STARTING..CREATED, each with its own
/// STARTING, CREATED and CLONED; instantiation copies them again, then runs them as nodes of the
/// executable graph that no event names, numbered after the graph's own (graph << 32 | index).
/// Parent (graph 3) under `parent13`: A, child 1 (B1 -> B2, added under `body13`), D, child 2
/// (E, under `body13`); instantiated as graph 6, launched once.
std::uint64_t nid(std::uint32_t graph, std::uint32_t index) {
  return (static_cast<std::uint64_t>(graph) << 32) | index;
}
void added13(std::uint32_t graph, std::uint32_t index) {
  g_node(3, graph, nid(graph, index), 0, 0, kernel);
  g_node(0, graph, nid(graph, index), 0, 0, kernel);
}
void copied13(std::uint32_t graph, std::uint32_t index, std::uint32_t from_graph,
              std::uint32_t from_index) {
  added13(graph, index);
  cloned(graph, nid(graph, index), from_graph, nid(from_graph, from_index));
}
void child_graph_cuda13() {
  nvtxRangePushA("body13");
  added13(101, 0);  // B1
  added13(101, 1);  // B2
  added13(102, 0);  // E
  nvtxRangePop();
  nvtxRangePushA("parent13");
  added13(103, 0);           // A
  g_node(4, 0, 0, 0, 0, 0);  // cuGraphAddChildGraphNode(child 1)
  g_node(3, 103, nid(103, 1), 0, 0, child_node);
  copied13(104, 0, 101, 0);
  copied13(104, 1, 101, 1);
  g_node(0, 103, nid(103, 1), 0, 0, kernel);
  g_node(5, 0, 0, 0, 0, 0);
  added13(103, 2);           // D
  g_node(4, 0, 0, 0, 0, 0);  // cuGraphAddChildGraphNode(child 2)
  g_node(3, 103, nid(103, 3), 0, 0, child_node);
  copied13(105, 0, 102, 0);
  g_node(0, 103, nid(103, 3), 0, 0, kernel);
  g_node(5, 0, 0, 0, 0, 0);
  nvtxRangePop();
  // cudaGraphInstantiate (no range open). CUDA also starts nodes of its own it never creates
  // (seen: 4 for an instantiation of a 4-node graph), more than the program's nesting depth.
  for (std::uint32_t i = 0; i < 12; ++i) {
    g_node(3, 111, nid(111, i), 0, 0, i % 3);
  }
  copied13(106, 0, 103, 0);
  g_node(3, 106, nid(106, 1), 0, 0, child_node);
  copied13(107, 0, 104, 0);
  copied13(107, 1, 104, 1);
  g_node(0, 106, nid(106, 1), 0, 0, kernel);
  cloned(106, nid(106, 1), 103, nid(103, 1));
  copied13(106, 2, 103, 2);
  g_node(3, 106, nid(106, 3), 0, 0, child_node);
  copied13(108, 0, 105, 0);
  g_node(0, 106, nid(106, 3), 0, 0, kernel);
  cloned(106, nid(106, 3), 103, nid(103, 3));
  added13(106, 7);  // a node of CUDA's own, never launched
  // More of CUDA's own at instantiation: a child-graph node whose copy's node is started but
  // never created.
  g_node(3, 109, nid(109, 0), 0, 0, child_node);
  g_node(3, 110, nid(110, 0), 0, 0, kernel);
  g_node(0, 109, nid(109, 0), 0, 0, kernel);
  // Launched: A, B1 and B2 as 106:4 and 106:5, D, E as 106:6.
  launch(106, {nid(106, 0), nid(106, 4), nid(106, 5), nid(106, 2), nid(106, 6)},
         {kernel, kernel, kernel, kernel, kernel}, 7);
}

/// cudaGraphExecUpdate: graph 30 captured under `v1`, instantiated (31) and launched; graph 32
/// captured under `v2`, the executable graph updated from it, launched again; then from graph 33
/// (`v3`), launched a third time.
void exec_update() {
  nvtxRangePushA("v1");
  created(30, 801);
  nvtxRangePop();
  cloned(31, 901, 30, 801);
  launch(31, {901}, {kernel}, 7);
  nvtxRangePushA("v2");
  created(32, 802);
  nvtxRangePop();
  updated(31, 901, 32, 802);
  launch(31, {901}, {kernel}, 7);
  // The same with the update event's two nodes the other way round (either order is read).
  nvtxRangePushA("v3");
  created(33, 803);
  nvtxRangePop();
  updated(33, 803, 31, 901);
  launch(31, {901}, {kernel}, 7);
}

/// A graph captured on another thread, under that thread's `worker` range, replayed here: the
/// main thread's open ranges (`main_open`) must not count.
void other_thread() {
  nvtxRangePushA("main_open");
  std::thread t{[] {
    nvtxRangePushA("worker");
    created(40, 1001);
    nvtxRangePop();
  }};
  t.join();
  nvtxRangePop();
  cloned(41, 1101, 40, 1001);
  launch(41, {1101}, {kernel}, 7);
}

}  // namespace

int main(int argc, char** argv) {
  char const* path = std::getenv("CUDA_INJECTION64_PATH");
  void* inject = path != nullptr ? ::dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  auto init = inject != nullptr
                  ? reinterpret_cast<int (*)()>(::dlsym(inject, "InitializeInjection"))
                  : nullptr;
  if (init == nullptr) {
    std::fprintf(stderr, "cannot load InitializeInjection\n");
    return 65;
  }
  init();  // what cuInit does
  void* fake = ::dlopen(std::getenv("NVTXPP_CUPTI_PATH"), RTLD_NOW | RTLD_NOLOAD);
  if (fake != nullptr) {
    g_node = reinterpret_cast<node_fn>(::dlsym(fake, "fake_cupti_graph_node"));
    g_launch = reinterpret_cast<launch_fn>(::dlsym(fake, "fake_cupti_graph_launch"));
  }
  if (g_node == nullptr || g_launch == nullptr) {
    std::fprintf(stderr, "the fake CUPTI is not loaded\n");
    return 66;
  }
  if (argc > 2 && std::string{argv[1]} == "nodes") {
    // What a node creation costs the program (docs/graphs.md "Cost"): N nodes added, each with
    // its `starting` and `created` events, timed; one range open.
    long const n = std::atol(argv[2]);
    nvtxRangePushA("nodes");
    auto const t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) {
      created(50, 100000 + static_cast<std::uint64_t>(i));
    }
    auto const t1 = std::chrono::steady_clock::now();
    nvtxRangePop();
    std::printf("ns_per_node=%.1f\n",
                std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(n));
    return 0;
  }
  issue_example();
  if (argc > 1 && std::string{argv[1]} == "issue") {
    return 0;  // the issue's example only (the picture in docs/graphs.md)
  }
  nvtxDomainHandle_t const dom2 = nvtxDomainCreateA("dom2");
  graph_api_two_execs(dom2);
  child_graph();
  child_graph_cuda13();
  exec_update();
  other_thread();
  return 0;
}
