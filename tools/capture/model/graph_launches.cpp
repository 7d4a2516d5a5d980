// CUDA graph launches as wholes (graph_launches.hpp).
#include "graph_launches.hpp"

#include <algorithm>
#include <vector>

namespace nvtxpp::capture {

void graph_launches::add(std::uint32_t pid, work kind, std::uint32_t correlation,
                         std::uint32_t graph, std::uint32_t device, std::uint32_t context,
                         std::uint32_t stream, std::int64_t start, std::int64_t end) {
  auto [it, fresh] = launches_.try_emplace(correlation);
  graph_launch_info& l = it->second;
  if (fresh || start < l.start_ns) {
    // The launch sits where its first node ran (CUPTI's graph record names the launch's stream,
    // where the first node runs).
    l.pid = pid;
    l.device = device;
    l.context = context;
    l.stream = stream;
    l.start_ns = start;
    l.correlation = correlation;
    l.graph = graph;
  }
  l.end_ns = fresh ? end : std::max(l.end_ns, end);
  switch (kind) {
    case work::kernel:
      ++l.kernels;
      break;
    case work::memcpy:
      ++l.memcpys;
      break;
    case work::memset:
      ++l.memsets;
      break;
  }
}

void graph_launches::finish(std::function<void(graph_launch_info const&)> const& deliver) {
  std::vector<graph_launch_info> order;
  order.reserve(launches_.size());
  for (auto const& [correlation, l] : launches_) {
    order.push_back(l);
  }
  launches_.clear();
  std::sort(order.begin(), order.end(), [](auto const& a, auto const& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.correlation < b.correlation;
  });
  for (auto const& l : order) {
    deliver(l);
  }
}

}  // namespace nvtxpp::capture
