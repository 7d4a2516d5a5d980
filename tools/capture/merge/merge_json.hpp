/// @file
/// @brief merge's JSON inputs: our Chrome JSON (a capture, a flight-recorder dump, a merged
/// trace). Each is read back by the JSON reader and written by the SQLite writer into a file in
/// the export layout, with the anchor, rank and host its otherData records; merge then takes that
/// file as it takes an SQLite input, so both kinds give the same ranks, clock, summary and
/// outputs, and may be mixed.
#pragma once

#include "../readers/sqlite_input.hpp"

#include <cstddef>
#include <string>

namespace nvtxpp::capture {

/// @brief Converts our JSON trace `path` into a new SQLite file `db_path` and inspects it as
/// inspect_input does; the input keeps the name `path` (messages, rank from the file name).
///
/// Memory: the JSON file's text while it is parsed, then its events in compact form while they
/// are written.
/// @throws input_error naming `path` (not our JSON, truncated, malformed, or written before
/// traces recorded their wall-clock anchor); output_error when `db_path` cannot be written
[[nodiscard]] merge_input inspect_json_input(std::string const& path, std::string const& db_path,
                                             std::size_t order);

}  // namespace nvtxpp::capture
