/// @file
/// @brief The reader of the raw recording the injection library writes (a directory of
/// nvtxpp-<pid>.bin files): each process file mapped, indexed and delivered to the trace
/// model's sinks (model/trace_model.hpp), one process at a time.
#pragma once

#include "../../model/trace_model.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace nvtxpp::capture {

/// @brief Reads a raw recording directory (nvtxpp-<pid>.bin files) and drives sinks.
class reader {
 public:
  /// @param max_warning_lines warnings kept verbatim in read_totals::warnings
  /// @param graphs how CUDA graph work is delivered
  explicit reader(std::string raw_dir, std::size_t max_warning_lines = 20,
                  graph_trace graphs = graph_trace::node);
  /// @brief Adds a sink (not owned; must outlive run()).
  void add_sink(trace_sink& sink);
  /// @brief Reads every process file and delivers it to the sinks, then calls finish on each.
  /// @throws std::runtime_error when the directory cannot be read; output_error from a sink
  [[nodiscard]] read_totals run();

 private:
  std::string dir_;
  std::size_t max_warning_lines_;
  graph_trace graphs_;
  std::vector<trace_sink*> sinks_;
};

}  // namespace nvtxpp::capture
