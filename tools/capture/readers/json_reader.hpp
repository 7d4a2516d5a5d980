/// @file
/// @brief Reads nvtxpp-capture's own Chrome Trace Event JSON (a capture, a dump, a merged file)
/// back into the trace model, for the analyses over traces (`diff`) and for `merge`. Only our
/// JSON: a file without `otherData.tool == "nvtxpp-capture"` is refused, as is anything
/// truncated or malformed.
///
/// What comes back is what the JSON holds of the model: processes (command or whole track name),
/// named threads; NVTX ranges (push/pop `X` events and start/end `b`/`e` pairs, unterminated ones
/// flagged) and marks with their domain, colour, category, scalar payload and threads, times to
/// the nanosecond; counter samples; GPU kernels, copies and memsets with their launch
/// parameters, device, context, stream and correlation id; CUDA API calls; the names of GPU
/// streams. Not read back, because the JSON does not hold them whole: structured payloads (their
/// fields are there, their schema is not), a kernel's local memory, grid id, launch type and cache
/// configuration, copies' and memsets' memory kinds, API names' version suffixes, which driver
/// calls were nested, counter registrations (a sample's integer type), the GPU-side instances of
/// ranges in CUDA graph launches and graph launches as wholes, flow arrows, warnings, named
/// resources.
#pragma once

#include "../model/trace_model.hpp"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nvtxpp::capture {

/// @brief A file that is not a complete JSON trace of ours; the message starts with its name.
class json_input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief Where a trace came from, as its otherData records it.
struct json_trace_origin {
  /// Whether the file records the UTC time of its ts 0 (files written before merge read JSON do
  /// not).
  bool has_utc = false;
  std::int64_t base_utc_ns = 0;  ///< otherData.base_utc_ns: the UTC time of ts 0
  /// otherData.launch: the rank and host rows of the capture, by META_DATA_CAPTURE's names
  /// (launch_meta.hpp); empty for a merged trace.
  std::vector<std::pair<std::string, std::string>> launch;
};

/// @brief One JSON trace of ours, parsed whole and checked, held compact (times in ns, names
/// interned) until delivered.
class json_trace {
 public:
  /// @brief Parses all of `path`. @throws json_input_error naming the file
  explicit json_trace(std::string const& path);
  ~json_trace();
  json_trace(json_trace const&) = delete;
  json_trace& operator=(json_trace const&) = delete;

  [[nodiscard]] json_trace_origin const& origin() const noexcept;

  /// @brief Delivers the trace process by process to `sinks`: begin_process, on_domain*,
  /// on_category*, on_thread*, GPU operations and API calls, ranges, marks and counter samples
  /// (each in file order), on_gpu_stream*, end_process; never finish. Times are ns since ts 0;
  /// a process's start is 0.
  /// @throws output_error from a sink
  read_totals deliver(std::vector<trace_sink*> const& sinks) const;

 private:
  struct impl;
  std::unique_ptr<impl> d_;
};

/// @brief json_trace{path}.deliver(sinks): nothing is delivered when the file is refused.
/// @throws json_input_error naming the file; output_error from a sink
read_totals read_json_trace(std::string const& path, std::vector<trace_sink*> const& sinks);

/// @brief Whether `path` is a readable regular file whose first byte other than white space is
/// '{' (what our JSON starts with; an SQLite file starts with "SQLite format 3").
[[nodiscard]] bool starts_as_json_object(std::string const& path) noexcept;

}  // namespace nvtxpp::capture
