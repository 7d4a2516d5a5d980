/// @file
/// @brief Reads one merge input (an SQLite file in Nsight Systems' export layout) back into the
/// trace model, so the JSON writer and the summary take it as they take a capture.
#pragma once

#include "../model/trace_model.hpp"
#include "sqlite_input.hpp"

#include <vector>

namespace nvtxpp::capture {

/// @brief Delivers every process of `in` to `sinks` in the trace model's order (begin_process
/// ... end_process; never finish), pids as `in` assigns them, times as nanoseconds since the
/// merged trace's anchor (the input's own times plus in.shift_ns).
///
/// Streams: rows come through SQLite queries ordered by SQLite (which sorts in bounded memory,
/// spilling to temporary files), so memory holds one process's open nesting, names and GPU
/// stream list, not its events.
/// With `ordered` false, ranges and marks come in the file's order instead of thread by thread
/// in time order (no sort; for sinks that need no order, such as the summary; depth is then 0).
/// @throws input_error when the file cannot be read; output_error from a sink
read_totals read_sqlite_input(merge_input const& in, std::vector<trace_sink*> const& sinks,
                              bool ordered = true);

/// @brief What read_sqlite_input would deliver, in totals, counted by SQL (no events read).
/// @throws input_error when the file cannot be read
read_totals count_sqlite_input(merge_input const& in);

}  // namespace nvtxpp::capture
