/// @file
/// @brief CUDA graph launches as wholes (`--cuda-graph-trace=graph`): the work of each launch's
/// nodes, recorded node by node, folded into one graph_launch_info per launch, as Nsight
/// Systems' default shows a launch (one CUPTI_ACTIVITY_KIND_GRAPH_TRACE row, its kernels and
/// copies in no kernel or memory report).
#pragma once

#include "trace_model.hpp"

#include <cstdint>
#include <functional>
#include <unordered_map>

namespace nvtxpp::capture {

/// @brief Collects one process's graph node work, then delivers one launch per correlation id.
class graph_launches {
 public:
  /// @brief Kinds of node work.
  enum class work { kernel, memcpy, memset };

  /// @brief A node's work of the launch `correlation` (the launching call's id).
  void add(std::uint32_t pid, work kind, std::uint32_t correlation, std::uint32_t graph,
           std::uint32_t device, std::uint32_t context, std::uint32_t stream, std::int64_t start,
           std::int64_t end);

  /// @brief Delivers every launch collected, by start time, and forgets them.
  void finish(std::function<void(graph_launch_info const&)> const& deliver);

 private:
  std::unordered_map<std::uint32_t, graph_launch_info> launches_;
};

}  // namespace nvtxpp::capture
