/// @file
/// @brief nvtxpp-capture's second half: reads the per-process files the injection library
/// wrote, writes the Chrome Trace Event JSON and computes the nvtx_sum-style summary.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace nvtxpp::capture {

/// @brief Durations of all instances of one range (one summary row).
struct range_stats {
  std::string domain;                   ///< "" for the global domain
  std::string name;                     ///< range message
  bool push_pop = true;                 ///< style: PushPop or StartEnd
  std::vector<std::int64_t> durations;  ///< ns, one per instance
};

/// @brief What merging produced besides the trace file.
struct merge_result {
  std::vector<range_stats> rows;                        ///< unsorted summary rows
  std::vector<std::string> warnings;                    ///< first warnings, in order found
  std::map<std::string, std::uint64_t> warning_counts;  ///< by kind
  std::size_t processes = 0;                            ///< process files read
  std::uint64_t ranges = 0;  ///< ranges completed (incl. closed at the end)
  std::uint64_t marks = 0;   ///< instant events
};

/// @brief Options of a merge.
struct merge_options {
  std::string raw_dir;                 ///< directory holding nvtxpp-<pid>.bin files
  std::FILE* json = nullptr;           ///< where to write the trace; nullptr: no trace
  std::int64_t base_ns = 0;            ///< CLOCK_MONOTONIC time that maps to ts 0 in the trace
  std::size_t max_warning_lines = 20;  ///< warnings kept verbatim
};

/// @brief Reads every process file of `raw_dir` and writes the trace.
/// @throws std::runtime_error when the directory cannot be read
merge_result merge(merge_options const& options);

/// @brief Prints the summary table (nsys nvtx_sum layout) or CSV, then the warnings.
void print_summary(std::FILE* out, merge_result& result, bool csv);

}  // namespace nvtxpp::capture
