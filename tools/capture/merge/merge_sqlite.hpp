/// @file
/// @brief merge's SQLite output: one database in the layout our writer produces (so `nsys
/// stats` reads it), filled input by input with SQL that copies each table's rows and remaps
/// what would collide.
#pragma once

#include "../readers/sqlite_input.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace nvtxpp::capture {

/// @brief How write_merged_sqlite runs, and what else it does per input.
struct merge_work {
  unsigned jobs = 1;  ///< threads that read inputs (1: this thread alone, no stage files)
  /// Called once per input with its position, after its rows are read: on a worker thread with
  /// jobs above 1 (concurrently with other inputs'), else on this thread after the input is
  /// written. Its exception counts as that input's failure. May be empty.
  std::function<void(std::size_t)> per_input;
  /// Called once per input, in input order on this thread, after its per_input and after the
  /// input is written. May be empty.
  std::function<void(std::size_t)> in_order;
  /// The name the output gets once written (it is written under a temporary one): what the
  /// file records as its path. Empty: the path written.
  std::string final_path;
};

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
///
/// With `work.jobs` above 1, up to that many threads read and remap the inputs (an input cut into
/// pieces by rowid when there are fewer inputs than threads), each input or piece into a stage
/// file beside `path` (merge_stage_path), while this thread appends them to the output in input
/// order: the same rows, in the same order, with the same ids, as with one thread. Each input's
/// per_input call is a unit of work of its own.
/// @throws input_error for an input that cannot be read; output_error when writing fails (the
/// stage files are removed either way)
void write_merged_sqlite(std::string const& path, std::vector<merge_input> const& inputs,
                         std::int64_t anchor_utc_ns, merge_work const& work);

/// @brief Stage file `slot` of a merge into `path` (slots 0 .. jobs - 1 hold inputs, slot jobs
/// the string maps): for removing them when a signal ends the merge.
[[nodiscard]] std::string merge_stage_path(std::string const& path, std::size_t slot);

}  // namespace nvtxpp::capture
