/// @file
/// @brief What the two halves of delivering a process share (process_delivery.cpp): the read
/// file, its clock, the sinks, the totals and warnings, and the CUDA graph ranges both feed.
#pragma once

#include "../../model/graph_ranges.hpp"
#include "trace_model_internal.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nvtxpp::capture::detail {

/// One process being delivered: where its events come from and where they go. The GPU half
/// (process_delivery_gpu.hpp) and the thread half (process_delivery_threads.hpp) both deliver
/// through it, so that warnings and counts keep one order and one set of totals.
struct delivery_context {
  delivery_context(process_file& file, std::vector<trace_sink*> const& to, read_totals& counts,
                   std::size_t max_warning_lines)
      : pf{file},
        sinks{to},
        totals{counts},
        max_warnings{max_warning_lines},
        pid{file.header.pid},
        clock{clock_for(file)} {}

  process_file& pf;
  std::vector<trace_sink*> const& sinks;
  read_totals& totals;
  std::size_t max_warnings;  // warning lines kept in `totals` (all are counted and delivered)
  std::uint32_t pid = 0;
  rec::clock_map clock;
  // CUDA graph work under capture-time ranges (graph_ranges.hpp): the GPU half gives it the
  // node events and the graph work, the thread half the ranges.
  graph_ranges graphs;

  /// Calls `f` on every sink, in order.
  template <class F>
  void each(F&& f) {
    for (auto* s : sinks) {
      f(*s);
    }
  }

  /// Counts a warning of `kind`, keeps its line (up to max_warnings) and delivers it.
  void warn(char const* kind, std::string text) {
    ++totals.warning_counts[kind];
    if (totals.warnings.size() < max_warnings) {
      totals.warnings.push_back(text);
    }
    warning_info const w{kind, text};
    each([&](trace_sink& s) { s.on_warning(w); });
  }
};

}  // namespace nvtxpp::capture::detail
