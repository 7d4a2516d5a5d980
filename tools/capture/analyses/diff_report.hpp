/// @file
/// @brief `nvtxpp-capture diff`'s outputs: the terminal table (every row with its evidence: the
/// two medians, the interval, the p-value), the CSV (one row per item) and the SVG picture of the
/// largest changes.
#pragma once

#include "trace_diff.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace nvtxpp::capture {

/// @brief Prints the table (names shown as the summary shows them, cut to `name_width`), a
/// closing line counting the verdicts, and a line on the run-wide shift when it is larger than
/// the threshold or the changes are relative to it.
void print_diff_table(std::FILE* out, diff_result const& result, diff_options const& options,
                      std::size_t name_width);

/// @brief The lines on the run-wide shifts of host ranges and GPU items ("" when there is
/// nothing to say).
[[nodiscard]] std::string shift_note(diff_result const& result, diff_options const& options);

/// @brief The line saying how the items were tested (runs a side, tests, false discovery rate),
/// or why no verdict of change could be given (one run on a side).
[[nodiscard]] std::string test_line(diff_result const& result, diff_options const& options);

/// @brief The line naming the numbered families folded into one row each ("" when none).
[[nodiscard]] std::string folded_line(diff_result const& result);

/// @brief Prints the CSV: a header row, then one row per item (RFC 4180 fields).
void print_diff_csv(std::FILE* out, std::vector<diff_row> const& rows);

/// @brief The SVG picture: the `top` items with the largest change of total time (changed
/// items first), each as a pair of bars (base and new median, scaled per item) with the new
/// median's interval, its change and its verdict written beside it.
[[nodiscard]] std::string diff_svg(std::vector<diff_row> const& rows, diff_options const& options,
                                   std::size_t top = 20);

/// @brief A duration for people: "850 ns", "12.3 µs", "4.56 ms", "1.23 s".
[[nodiscard]] std::string human_ns(double ns);

}  // namespace nvtxpp::capture
