/// @file
/// @brief merge's SQLite output: one database in the layout our writer produces (so `nsys
/// stats` reads it), filled input by input with SQL that copies each table's rows and remaps
/// what would collide.
#pragma once

#include "sqlite_input.hpp"

#include <string>
#include <vector>

namespace nvtxpp::capture {

/// @brief Writes `inputs` (identities assigned) into a new database at `path` whose session
/// starts at `anchor_utc_ns`.
///
/// Per input: the rows of its processes with events (merge_input::processes; ThreadNames and
/// NVTX thread names: of threads with events), others left out; those rows shifted onto the merged
/// clock (start, end, timestamps + shift_ns); globalPid/globalTid/endGlobalTid and pids given the
/// input's new pids; strings deduplicated by value into the output's StringIds (ids rewritten);
/// correlation ids, NVTX domain ids and generic event/type/source ids offset past the previous
/// inputs'; PROCESSES named by rank, host and pid. Columns are copied by name, those the output's
/// tables have (an nsys export's extra tables and columns are left out). SQLite does the copying in
/// bounded memory.
/// @throws input_error for an input that cannot be read; output_error when writing fails
void write_merged_sqlite(std::string const& path, std::vector<merge_input> const& inputs,
                         std::int64_t anchor_utc_ns);

}  // namespace nvtxpp::capture
