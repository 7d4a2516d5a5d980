/// @file
/// @brief Reads nvtxpp-capture's own Chrome Trace Event JSON (a capture, a dump, a merged file)
/// back into the trace model, for the analyses over traces (`diff`). Only our JSON: a file
/// without `otherData.tool == "nvtxpp-capture"` is refused, as is anything truncated or
/// malformed.
///
/// What comes back: NVTX ranges (push/pop `X` events and start/end `b`/`e` pairs, with domain,
/// style, threads and times to the nanosecond), GPU kernels, copies and memsets, and CUDA API
/// calls with their correlation ids (so the GPU projection of each range can be recomputed).
/// Marks, counters, resources and names are not read back.
#pragma once

#include "trace_model.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace nvtxpp::capture {

/// @brief A file that is not a complete JSON trace of ours; the message starts with its name.
class json_input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief Parses all of `path` (our JSON), then delivers it process by process to `sinks`
/// (begin_process, GPU operations and API calls, ranges in file order, end_process; never
/// finish). Nothing is delivered when the file is refused.
/// @throws json_input_error naming the file; output_error from a sink
read_totals read_json_trace(std::string const& path, std::vector<trace_sink*> const& sinks);

}  // namespace nvtxpp::capture
