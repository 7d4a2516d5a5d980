/// @file
/// @brief `nvtxpp-capture diff`'s analysis: two sides (each one or more traces: runs) read into
/// one summary per run, compared item by item (NVTX ranges, their GPU projections, kernels,
/// memory operations). The run is the unit of noise: an item's median instance, its calls per
/// run and its time per run are each one value per run, compared between the sides by a t test
/// over runs (logs), as measured; with --relative, after each run's run-wide factor (host ranges
/// and GPU items apart) is taken out where it moves the items alike. The verdicts of all items
/// together hold the false discovery rate at alpha (Benjamini-Hochberg), and a change must also
/// pass a threshold (docs/diff.md).
#pragma once

#include "../common/name_pattern.hpp"
#include "stats.hpp"
#include "summary.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nvtxpp::capture {

/// @brief How items are judged (docs/diff.md gives the defaults' reasons).
struct diff_options {
  double alpha = 0.01;            ///< false discovery rate over all tests; intervals at 1 - alpha
  double threshold = 0.10;        ///< smallest relative change that counts
  std::int64_t floor_ns = 100;    ///< smallest absolute change of a duration that counts
  std::size_t min_instances = 5;  ///< fewer on a side (all runs): the median instance untested
  /// The groups' run-wide shifts are the machine's (--relative): each run's factor is taken out
  /// of the items, where the shift moves the items alike (not when items were left behind by
  /// it: then it is a change, not the machine's); the shift's row gets no verdict and fails no
  /// gate, and an item is judged and gated on its change beyond the shift. By default items are
  /// judged as measured, every run-wide shift left in.
  bool relative = false;
  /// Judge items as measured, every run-wide shift left in (--absolute). The default judges
  /// as measured too, but where a group's run-wide shift is not itself a change (its row
  /// `same`), each item is tested beyond it: the runs' spread the machine adds taken out, the
  /// verdict on the change as measured (docs/diff.md, "The statistics in plain words").
  bool absolute = false;
  /// (Internal, set by compare_sides for the default) the groups (host ranges, GPU items)
  /// whose shift was found not to be a change, their items tested beyond it.
  std::array<bool, 2> quiet_groups{false, false};
  /// Numbered names (`Train step 3`) whose members are too few to test on their own are
  /// folded into one item (`Train step *`) unless this is set (--keep-numbers).
  bool keep_numbers = false;
};

/// @brief The verdict words: a change of the median instance (slower, faster), of the calls per
/// run (more, fewer), none beyond the noise (same), no test possible (untested), or an item on
/// one side only (new, gone).
enum class verdict { slower, faster, more, fewer, same, untested, added, gone };

/// @brief "slower", "faster", "more", "fewer", "same", "untested", "new", "gone".
[[nodiscard]] char const* to_string(verdict v) noexcept;

/// @brief "range", "projection", "kernel", "memory".
[[nodiscard]] char const* to_string(summary_sink::item_kind k) noexcept;

/// @brief One judged quantity of an item: one value per run on each side.
struct diff_measure {
  double base = 0;           ///< geometric mean over the base's runs (ns, or calls)
  double now = 0;            ///< the same over the new runs
  double change = 0;         ///< the estimate the interval belongs to: now / base - 1, or
                             ///< (--relative, the shift taken out) the change beyond the shift
  double measured = 0;       ///< now / base - 1 as measured (Base and New)
  bool tested = false;       ///< a test was made (2 or more runs with values on each side)
  double p = 1;              ///< the t test's two-sided p-value
  double q = 1;              ///< p adjusted for all the comparison's tests (Benjamini-Hochberg)
  stats::interval ci{};      ///< interval of `change` at 1 - alpha (contains it)
  bool significant = false;  ///< q <= alpha
  bool exact = false;        ///< tested, both sides constant (calls of a fixed loop): certain
  /// The default mode, where the group's run-wide shift was not itself a change: the test was
  /// made beyond it (the change beyond the shift: p, q), `change` and `ci` are as measured
  /// (the interval given that shift); 0 otherwise (docs/diff.md, "The statistics in plain words").
  double quiet_shift = 0;
  double beyond = 0;  ///< with quiet_shift: the change beyond it, the figure tested
};

/// @brief One compared item.
struct diff_row {
  summary_sink::item_kind kind = summary_sink::item_kind::range;
  std::string name;        ///< "domain:name" for ranges and projections, as the summary shows it
  std::string style;       ///< "PushPop"/"StartEnd" for ranges and projections, else ""
  std::size_t base_n = 0;  ///< instances, all base runs together
  std::size_t new_n = 0;
  std::size_t members = 1;  ///< names folded into this row (numbered families), else 1
  diff_measure median;      ///< the median instance (per run)
  diff_measure calls;       ///< instances per run
  diff_measure time;        ///< time per run
  double base_total = 0;    ///< ns: the side's total time divided by its number of runs
  double new_total = 0;
  verdict v = verdict::same;
  /// Grew beyond the noise and the threshold: its median instance or time per run (beyond its
  /// group's shift), or its whole group (the gate's condition, with how much: gate_change).
  bool grew = false;
  /// How much it grew, as measured, in the measures found grown (diff_row::grew; -1: none).
  double growth = -1;
  /// The run-wide shift of the item's group that Change is beyond (0: none taken out).
  double shift = 0;
  /// The row of a group's run-wide shift ("host ranges", "GPU items"), not an item.
  bool whole_group = false;
  std::string note;  ///< why a verdict is what it is, when not obvious

  /// @brief new_total - base_total: the impact per run.
  [[nodiscard]] double impact() const noexcept { return new_total - base_total; }
};

/// @brief One side of the comparison: one summary per trace (a run, or a rank of a job).
struct diff_side {
  std::vector<std::unique_ptr<summary_sink>> runs;
};

/// @brief The run-wide shift of one group of items (host ranges; GPU items).
struct group_shift {
  std::string group;       ///< "host ranges" or "GPU items"
  double shift = 0;        ///< mean run factor of the new side over the base's, minus 1
  std::size_t items = 0;   ///< the items the run factors are the medians over
  std::size_t apart = 0;   ///< of those, items left behind by the shift (its change against it)
  bool taken_out = false;  ///< the run factors were taken out of the items (--relative)
  /// The default mode: the shift was not itself a change (its own test), so the items were
  /// tested beyond it, their Change still as measured (diff_measure::quiet_shift).
  bool quiet = false;
};

/// @brief A family of numbered names folded into one row.
struct folded_family {
  std::string name;  ///< the row's name ("domain:Train step *")
  std::size_t members = 0;
};

/// @brief The comparison: its rows, the run-wide shifts and what was folded.
struct diff_result {
  /// Sorted as the table shows them: slower, more, new, faster, fewer, gone, untested, same;
  /// each by the size of its change of total time, largest first.
  std::vector<diff_row> rows;
  std::size_t base_runs = 0;
  std::size_t new_runs = 0;
  std::size_t tests = 0;  ///< tests made (the false discovery rate is held over these)
  std::vector<group_shift> shifts;
  std::vector<folded_family> folded;  ///< range and projection families alike, once each
};

/// @brief Compares every item of `base` with the same item (kind, name, style) of `now`.
[[nodiscard]] diff_result compare_sides(diff_side const& base, diff_side const& now,
                                        diff_options const& options);

/// @brief The CI gate (--fail-above, --gate): the rows that grew (diff_row::grew) by more than
/// `above` (a fraction, gate_change), and whose name matches one of `gates` (all rows when
/// `gates` is empty). A range or projection matches by its name without the domain or by
/// its full "domain:name".
[[nodiscard]] std::vector<diff_row const*> gate_failures(std::vector<diff_row> const& rows,
                                                         double above,
                                                         std::vector<name_pattern> const& gates);

/// @brief How much a row grew, as measured (its run-wide shift included), in the measures found
/// grown: its median instance's change, its time per run's, for more calls the calls times
/// the median instance, for its group's shift its median instance's; a group's row: its shift.
[[nodiscard]] double gate_change(diff_row const& r) noexcept;

}  // namespace nvtxpp::capture
