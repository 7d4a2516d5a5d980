// CUDA graph node events for nvtxpp-capture (see graph_nodes.hpp).
//
// Why the thread and the time suffice: CUPTI calls a resource callback synchronously, on the
// thread whose CUDA call creates the node (the capturing thread for stream capture, the caller
// of cudaGraphAdd*Node for the graph API). The NVTX ranges open there are those the thread
// pushed before this moment and had not popped: the reader knows them from the thread's NVTX
// stream. The time is read from the NVTX recorder's own clock on the same thread, so the node
// event sorts exactly among that thread's pushes and pops (no clock alignment involved).
#include "graph_nodes.hpp"

#include "../../../recording/core.hpp"
#include "../../../recording/gpu_format.hpp"
#include "../inject_internal.hpp"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdint>

namespace nvtxpp::capture::graph_nodes {

namespace {

namespace rec = nvtxpp::recording;

decltype(&::cuptiGetGraphId) g_graph_id = nullptr;
decltype(&::cuptiGetGraphNodeId) g_node_id = nullptr;

std::uint64_t node_id(CUgraphNode node) noexcept {
  std::uint64_t id = 0;
  if (node == nullptr || g_node_id(node, &id) != CUPTI_SUCCESS) {
    return 0;
  }
  return id;
}

std::uint32_t graph_id(CUgraph graph) noexcept {
  std::uint32_t id = 0;
  if (graph == nullptr || g_graph_id(graph, &id) != CUPTI_SUCCESS) {
    return 0;
  }
  return id;
}

void write(rec::graph_event event, std::uint64_t node, std::uint64_t original, std::uint32_t graph,
           std::uint32_t original_graph, std::uint32_t type,
           std::int64_t ticks = rec::now_ticks()) noexcept {
  rec::gpu_graph_node body{ticks,
                           static_cast<std::uint64_t>(::syscall(SYS_gettid)),
                           node,
                           original,
                           graph,
                           original_graph,
                           static_cast<std::uint32_t>(event),
                           type};
  iovec part{&body, sizeof body};
  write_file_record(static_cast<std::uint32_t>(rec::gpu_record::graph_node), &part, 1);
}

/// Nodes being added on this thread: GRAPHNODE_CREATE_STARTING seen, CREATED not yet. They nest:
/// adding a child-graph node copies the child graph, whose nodes are added inside (CUDA 13, at
/// cudaGraphAddChildGraphNode and again at instantiation). CUDA reports a child-graph node's type
/// at its STARTING only (its CREATED says 0). A child-graph entry's `starting` record is written
/// only if a clone comes before its `created` (the embedded graph being copied): most nodes cost
/// one record, not two.
struct pending_start {
  std::int64_t ticks = 0;
  std::uint64_t node = 0;  ///< 0 where CUDA gives no node yet at STARTING
  std::uint32_t graph = 0;
  std::uint32_t type = 0;
  bool unwritten = false;
};
constexpr int max_pending = 8;  ///< nesting depth kept (child graphs within child graphs)
struct pending_stack {
  pending_start entries[max_pending];
  int depth = 0;  ///< may exceed max_pending: entries past it are counted, not kept
};
/// A driver call that adds a node, in progress on this thread: its `call_enter` record is
/// written only if a clone comes during the call, and then its `call_exit` too.
struct pending_call {
  std::int64_t ticks = 0;
  bool active = false;
  bool written = false;
};

// initial-exec, as the recorder core's: no lazy TLS allocation inside CUDA's callback.
__attribute__((tls_model("initial-exec"))) thread_local pending_stack t_pending;
__attribute__((tls_model("initial-exec"))) thread_local pending_call t_call;

}  // namespace

bool start(void* cupti) noexcept {
  g_graph_id = reinterpret_cast<decltype(g_graph_id)>(::dlsym(cupti, "cuptiGetGraphId"));
  g_node_id = reinterpret_cast<decltype(g_node_id)>(::dlsym(cupti, "cuptiGetGraphNodeId"));
  return g_graph_id != nullptr && g_node_id != nullptr;
}

void on_resource(CUpti_CallbackId cbid, void const* data) noexcept {
  if (g_node_id == nullptr || data == nullptr) {
    return;
  }
  auto const* r = static_cast<CUpti_ResourceData const*>(data);
  auto const* g = static_cast<CUpti_GraphData const*>(r->resourceDescriptor);
  if (g == nullptr) {
    return;
  }
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATE_STARTING) {
    // A child-graph node's embedded graph is copied between this and its `created`: the reader
    // ties those clones to it (no driver call here, in CUDA's callback).
    pending_stack& p = t_pending;
    // Only a child-graph node can have nodes added inside it: an entry of another type still
    // open was abandoned (instantiation starts nodes it never creates).
    while (p.depth > 0 && p.depth <= max_pending &&
           p.entries[p.depth - 1].type != CU_GRAPH_NODE_TYPE_GRAPH) {
      --p.depth;
    }
    if (p.depth < max_pending) {
      p.entries[p.depth] = {rec::now_ticks(), node_id(g->node), graph_id(g->graph),
                            static_cast<std::uint32_t>(g->nodeType), true};
    }
    ++p.depth;
    return;
  }
  std::uint64_t const node = node_id(g->node);
  if (node == 0) {
    return;
  }
  auto type = static_cast<std::uint32_t>(g->nodeType);
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED: {
      pending_stack& p = t_pending;
      // The entry of this node, innermost first; entries above it were never created (CUDA
      // starts nodes at instantiation that it does not finish): they end here too. No entry
      // names it (a STARTING without the node's id, or a different one): the innermost ends.
      if (p.depth > max_pending) {
        --p.depth;
      } else if (p.depth > 0) {
        int k = p.depth - 1;
        while (k >= 0 && p.entries[k].node != node) {
          --k;
        }
        if (k < 0) {
          k = p.depth - 1;
        }
        if (p.entries[k].node == node || p.entries[k].node == 0) {
          type = p.entries[k].type == CU_GRAPH_NODE_TYPE_GRAPH ? p.entries[k].type : type;
        }
        p.depth = k;
      }
      if (t_call.active && !t_call.written && type == CU_GRAPH_NODE_TYPE_GRAPH) {
        // A child-graph node created inside the call: its copy may come after; open first.
        t_call.written = true;
        write(rec::graph_event::call_enter, 0, 0, 0, 0, 0, t_call.ticks);
      }
      write(rec::graph_event::created, node, 0, graph_id(g->graph), 0, type);
      break;
    }
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED: {
      if (t_call.active && !t_call.written) {  // cloned during a call adding a node
        t_call.written = true;
        write(rec::graph_event::call_enter, 0, 0, 0, 0, 0, t_call.ticks);
      }
      // Cloned while child-graph nodes are being added: say so first, outermost first.
      pending_stack& p = t_pending;
      for (int k = 0; k < p.depth && k < max_pending; ++k) {
        pending_start& e = p.entries[k];
        if (e.unwritten && (e.type == CU_GRAPH_NODE_TYPE_GRAPH || e.node == 0)) {
          e.unwritten = false;
          write(rec::graph_event::starting, e.node, 0, e.graph, 0, e.type, e.ticks);
        }
      }
      write(rec::graph_event::cloned, node, node_id(g->originalNode), graph_id(g->graph),
            graph_id(g->originalGraph), type);
      break;
    }
    case CUPTI_CBID_RESOURCE_GRAPH_NODE_UPDATED:
      write(rec::graph_event::updated, node, node_id(g->originalNode), graph_id(g->graph),
            graph_id(g->originalGraph), type);
      break;
    default:
      break;
  }
}

void on_driver_api(CUpti_CallbackId, void const* data) noexcept {
  if (g_node_id == nullptr || data == nullptr) {
    return;
  }
  auto const* c = static_cast<CUpti_CallbackData const*>(data);
  if (c->callbackSite == CUPTI_API_ENTER) {
    t_call = {rec::now_ticks(), true, false};
    return;
  }
  if (t_call.written) {
    write(rec::graph_event::call_exit, 0, 0, 0, 0, 0);
  }
  t_call = {};
}

}  // namespace nvtxpp::capture::graph_nodes
