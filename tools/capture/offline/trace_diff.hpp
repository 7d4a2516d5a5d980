/// @file
/// @brief `nvtxpp-capture diff`'s analysis: two sides (each one or more traces, pooled) read
/// into summaries, compared item by item (NVTX ranges, their GPU projections, kernels, memory
/// operations) with a verdict per item that does not cry wolf: `slower` or `faster` only when
/// the change of the median is both significant (the Mann-Whitney U test's p below alpha, and
/// the interval of the change that goes with the test excluding 0) and larger than a threshold
/// (relative, and an absolute floor) (docs/diff.md).
#pragma once

#include "name_pattern.hpp"
#include "stats.hpp"
#include "writers.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace nvtxpp::capture {

/// @brief How items are judged (docs/diff.md gives the defaults' reasons).
struct diff_options {
  double alpha = 0.01;            ///< significance level of the two-sided U test
  double threshold = 0.10;        ///< smallest relative change of the median that counts
  std::int64_t floor_ns = 100;    ///< smallest absolute change of the median that counts
  std::size_t min_instances = 5;  ///< fewer on a side: no test, verdict `same`, a note
  /// Judge each item against the run-wide shift (--relative): the base's instances are scaled by
  /// it before the test, and Change is relative to it.
  bool relative = false;
};

/// @brief The five verdict words.
enum class verdict { slower, faster, same, added, gone };

/// @brief "slower", "faster", "same", "new", "gone".
[[nodiscard]] char const* to_string(verdict v) noexcept;

/// @brief "range", "projection", "kernel", "memory".
[[nodiscard]] char const* to_string(summary_sink::item_kind k) noexcept;

/// @brief One compared item.
struct diff_row {
  summary_sink::item_kind kind = summary_sink::item_kind::range;
  std::string name;   ///< "domain:name" for ranges and projections, as the summary shows it
  std::string style;  ///< "PushPop"/"StartEnd" for ranges and projections, else ""
  std::size_t base_n = 0;
  std::size_t new_n = 0;
  double base_median = 0;  ///< ns (0 when the side has no instance)
  double new_median = 0;
  double base_total = 0;  ///< ns, the side's total divided by its number of traces
  double new_total = 0;
  double change = 0;     ///< new_median / base_median - 1 (both sides present)
  bool tested = false;   ///< a test was made (enough instances on both sides)
  double p = 1;          ///< the U test's two-sided p-value
  stats::interval ci{};  ///< interval of the change (stats::ratio_interval) at 1 - alpha
  verdict v = verdict::same;
  std::string note;  ///< why a verdict is what it is, when not obvious ("too few instances")

  /// @brief new_total - base_total: the impact per trace.
  [[nodiscard]] double impact() const noexcept { return new_total - base_total; }
};

/// @brief One side of the comparison: its traces, pooled into one summary.
struct diff_side {
  summary_sink summary;
  std::size_t traces = 0;
};

/// @brief The comparison: its rows and the run-wide shift.
struct diff_result {
  /// Sorted as the table shows them: slower, new, faster, gone, same; each by the size of its
  /// change of total time, largest first.
  std::vector<diff_row> rows;
  /// The run-wide shift: the median over the items with enough instances on both sides of
  /// new median / base median, minus 1 (0 with fewer than 3 such items). A machine that was
  /// busier (or its clocks lower) during one side's runs moves every item by about this much.
  double shift = 0;
  std::size_t shift_items = 0;  ///< the items it is the median of
};

/// @brief Compares every item of `base` with the same item (kind, name, style) of `now`.
[[nodiscard]] diff_result compare_sides(diff_side const& base, diff_side const& now,
                                        diff_options const& options);

/// @brief The CI gate (--fail-above, --gate): the rows `slower` by more than `above` (a
/// fraction) whose name matches one of `gates` (all rows when `gates` is empty). A range or
/// projection matches by its name without the domain or by its full "domain:name".
[[nodiscard]] std::vector<diff_row const*> gate_failures(std::vector<diff_row> const& rows,
                                                         double above,
                                                         std::vector<name_pattern> const& gates);

}  // namespace nvtxpp::capture
