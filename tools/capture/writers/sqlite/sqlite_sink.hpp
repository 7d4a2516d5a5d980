/// @file
/// @brief The seam between nvtxpp-capture and its SQLite writer (`-o FILE.sqlite`): main.cpp
/// calls this factory; sqlite_writer.cpp (branch `sqlite`) defines it.
#pragma once

#include "../../model/trace_model.hpp"

#include <memory>
#include <string>

namespace nvtxpp::capture {

/// @brief Creates the sink that writes the trace as an SQLite database at `path`.
///
/// Called before the captured program starts, so it must create (or truncate) the file now:
/// an unwritable path is reported then, not after a long run.
/// @throws output_error when the file cannot be created; later write failures (disk full)
/// throw output_error from the hooks or finish(). It should honour the test hook
/// NVTXPP_CAPTURE_FAIL_WRITE_AFTER=<bytes> (fail with ENOSPC once that much is written) as the
/// JSON writer does, where it can.
[[nodiscard]] std::unique_ptr<trace_sink> make_sqlite_sink(std::string const& path);

/// @brief Whether this build has the SQLite writer (false: make_sqlite_sink throws).
[[nodiscard]] bool sqlite_sink_available() noexcept;

}  // namespace nvtxpp::capture
