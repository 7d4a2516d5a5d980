/// @file
/// @brief Writing a raw recording's outputs: the trace file (JSON or SQLite by its extension) and
/// the summary, with the failure handling every writer of ours shares (a failed write removes its
/// partial file and says so). Used for the capture's one output and for each flight-recorder dump.
#pragma once

#include "../analyses/summary.hpp"
#include "../model/trace_model.hpp"
#include "../writers/json_writer.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace nvtxpp::capture::cli {

/// @brief Whether `path` names an SQLite output.
[[nodiscard]] bool is_sqlite(std::string const& path);

/// @brief Creates the trace output for `path` (JSON times relative to `base_ns`).
/// @throws output_error (or std::exception) when it cannot be created
[[nodiscard]] std::unique_ptr<trace_sink> open_output(std::string const& path,
                                                      std::int64_t base_ns);

/// @brief What write_outputs did.
struct outputs_result {
  bool write_failed = false;
  bool fatal = false;  ///< the raw directory could not be read
};

/// @brief Reads `raw_dir` into `trace` (if any) and the summary (if `summary`), prints the
/// summary and the "written to" line; on a write failure removes `output`'s partial file.
outputs_result write_outputs(std::string const& raw_dir, std::string const& output,
                             std::unique_ptr<trace_sink> trace, bool summary,
                             summary_options const& sopt);

}  // namespace nvtxpp::capture::cli
