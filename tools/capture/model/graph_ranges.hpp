/// @file
/// @brief Offline attribution of replayed CUDA graph work to capture-time NVTX ranges.
///
/// Input, per process: the graph node events of the in-process source
/// (tools/capture/inprocess/cuda/graph_nodes.cpp: created on thread T at time t, cloned from,
/// updated from; a child-graph node's embedded graph is the graph of the clones made on its
/// thread between its `starting` and its `created`), the GPU work records that carry a graph node
/// id, the graph launches' API calls, and the process's push/pop ranges (streamed, after the GPU
/// side).
///
/// Rule: a node belongs to the push/pop ranges (any domain) that were open on the thread that
/// created it, at that moment; a clone belongs to its original's ranges; a node of an executable
/// graph updated by cudaGraphExecUpdate belongs, for launches after the update, to the ranges of
/// the node it was updated from; a node inside a child graph belongs also to the ranges of the
/// child-graph node that embeds it (outer), then its own (inner). Each graph launch (its work
/// shares the launch's correlation id) gives each of those ranges one GPU-side instance spanning
/// its nodes' work in that launch.
///
/// Memory: the node events and the graph work records of the process (the GPU side is held by
/// the reader anyway), and only the ranges that contain a node creation.
#pragma once

#include "trace_model.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace nvtxpp::capture {

/// @brief Collects one process's graph events and work, then emits graph_range_info instances.
class graph_ranges {
 public:
  graph_ranges();
  ~graph_ranges();
  graph_ranges(graph_ranges const&) = delete;
  graph_ranges& operator=(graph_ranges const&) = delete;

  /// @brief A graph node event; `ns` is its time (the event's ticks through the process's NVTX
  /// clock map).
  void on_node_event(recording::gpu_graph_node const& e, std::int64_t ns);

  /// @brief Kinds of graph work.
  enum class work_kind : std::uint8_t { kernel, memcpy, memset };

  /// @brief GPU work run as graph node `node` (CUPTI graphNodeId, not 0) of graph `graph`.
  void on_work(work_kind kind, std::uint64_t node, std::uint32_t graph, std::uint32_t device,
               std::uint32_t context, std::uint32_t stream, std::uint32_t correlation,
               std::int64_t start_ns, std::int64_t end_ns);

  /// @brief A CUDA API call (graph launches give the time an update must precede).
  void on_api(recording::gpu_api const& a);

  /// @brief A completed range of the process (push/pop ranges are the ones kept).
  void on_range(range_info const& r);

  /// @brief Emits the process's graph range instances (start order), with `pid`; calls `warn`
  /// once for work whose node was never seen created. Resets for the next process.
  void finish(std::uint32_t pid, std::function<void(graph_range_info const&)> const& emit,
              std::function<void(std::string)> const& warn);

 private:
  struct impl;
  std::unique_ptr<impl> d_;
};

}  // namespace nvtxpp::capture
