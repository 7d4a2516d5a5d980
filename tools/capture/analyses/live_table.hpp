/// @file
/// @brief `nvtxpp-capture top`'s table: where a running program spent the last seconds, range by
/// range (py-spy top's table, for NVTX ranges). A trace_sink fed with ranges as they end (the
/// flight recorder's watcher delivers them live, flight/flight_watch.hpp; any reader of the trace
/// model could), kept in time slices so that the window slides: per row its total and self time,
/// calls per second, mean, p50 and p99, the trend against the window before, the GPU time under
/// it, and its threads. Pure: no terminal, no clock, no files; the caller says what "now" is.
///
/// Rows are numbered names folded as `diff` folds them (common/name_pattern.hpp fold_digits:
/// `step 1` ... `step 999` are one row `step *`). Self time is a range's own, less the ranges of
/// its domain nested in it on its thread (the trace model's depth). GPU work (kernels, copies,
/// memsets) counts under every range open on its launching thread when the launching call was
/// made, whichever comes first: the ranges or the GPU records.
///
/// Bounded whatever the program does: at most `max_cells` (name, thread) cells a slice and
/// `max_names` names; what does not fit is counted in one row, "(other)".
#pragma once

#include "../model/trace_model.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nvtxpp::capture {

/// @brief How the table slices time and what it keeps.
struct live_options {
  std::int64_t window_ns = 10'000'000'000;  ///< the window the rows cover
  std::int64_t slice_ns = 1'000'000'000;    ///< the window moves by slices of this (<= window)
  std::size_t max_cells = 4096;             ///< (name, thread) cells a slice keeps
  std::size_t max_names = 1U << 18U;        ///< distinct row names kept
  bool fold_numbers = true;                 ///< `step 12` counts as `step *`
};

/// @brief One row: a range name (all threads, or one thread).
struct live_row {
  std::string domain;  ///< "" the default domain
  std::string name;    ///< folded; "(other)" for the row of what was not kept
  bool other = false;
  std::uint32_t pid = 0;      ///< the process, when one
  std::uint64_t tid = 0;      ///< the thread, when one
  std::size_t threads = 0;    ///< threads the row's instances ran on
  std::string thread;         ///< the thread's name (or id), or "N threads"
  std::uint64_t calls = 0;    ///< instances that ended in the window
  std::int64_t total_ns = 0;  ///< time open in the window, summed over threads
  std::int64_t self_ns = 0;   ///< of that, not inside another range of its domain
  std::int64_t gpu_ns = 0;    ///< GPU work launched under it
  double total_pct = 0;       ///< of the window's time
  double self_pct = 0;
  double gpu_pct = 0;
  double calls_per_s = 0;
  double mean_ns = 0;  ///< of the instances that ended in the window (0: none)
  double p50_ns = 0;
  double p99_ns = 0;
  /// The mean against the window before: mean / previous mean - 1; NaN when either has no
  /// instance or the data does not reach back that far.
  double trend = 0;
  bool fresh = false;  ///< no instance in the window before (which the data covers)
  bool open = false;   ///< an instance is open at the window's end (counted up to it)
};

/// @brief The window's rows and totals.
struct live_snapshot {
  std::int64_t start_ns = 0;  ///< the window (CLOCK_MONOTONIC ns)
  std::int64_t end_ns = 0;
  double seconds = 0;
  std::uint64_t ranges = 0;  ///< instances that ended in the window
  double ranges_per_s = 0;
  bool previous = false;       ///< the data covers the window before (trends)
  std::vector<live_row> rows;  ///< by total time, largest first; "(other)" among them
  std::uint64_t gpu_ops = 0;   ///< GPU operations that ended in the window
  std::int64_t gpu_ns = 0;     ///< their time
  /// The GPU detail state: "off" (no GPU records), "full", "sampled", "raised".
  std::string gpu_state = "off";
  double gpu_covered = 1;  ///< sampled: the share of the window its periods cover (0..1)
  /// GPU detail is recorded but no GPU work of the window has reached the table (between
  /// sampled periods, or CUPTI still holds the records): the GPU column is not current.
  bool gpu_stale = false;
};

/// @brief The live table (see the file comment).
class live_table : public trace_sink {
 public:
  explicit live_table(live_options options = {});
  ~live_table() override;
  live_table(live_table const&) = delete;
  live_table& operator=(live_table const&) = delete;

  void begin_process(process_info const& p) override;
  void on_thread(thread_info const& t) override;
  void on_range(range_info const& r) override;
  void on_api(api_info const& a) override;
  void on_kernel(kernel_info const& k) override;
  void on_memcpy(memcpy_info const& m) override;
  void on_memset(memset_info const& m) override;
  void on_gpu_info(gpu_info const& g) override;

  /// @brief A range open at the next snapshot's end (counted up to it, no call); the next
  /// snapshot forgets it.
  void add_open(range_info const& r);

  /// @brief The rows of the window that ends at `now_ns`. `by_thread`: a row per (name, thread).
  [[nodiscard]] live_snapshot snapshot(std::int64_t now_ns, bool by_thread = false);

  /// @brief The newest range end received (0: none yet).
  [[nodiscard]] std::int64_t newest_ns() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> d_;
};

}  // namespace nvtxpp::capture
