/// @file
/// @brief One trace file of any kind we read, into the trace model: our JSON (a capture, a
/// dump, a merged file), our SQLite, or Nsight Systems' SQLite export. The format is told by the
/// file's first bytes, never by its name.
#pragma once

#include "../model/trace_model.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace nvtxpp::capture {

/// @brief A file that cannot be read as a trace (missing, unreadable, truncated, damaged,
/// foreign); the message starts with the file's name and fits on one line.
class trace_input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief Checks `path` fully (an SQLite file: its layout; JSON: parsed to the end) before any
/// event reaches `sinks`, then delivers every process of it (begin_process ... end_process, never
/// finish). Ranges come in no particular order.
/// @throws trace_input_error; output_error from a sink
read_totals read_trace_file(std::string const& path, std::vector<trace_sink*> const& sinks);

}  // namespace nvtxpp::capture
