/// @file
/// @brief nvtxpp-capture's outputs other than SQLite: the Chrome Trace Event JSON writer and
/// the nsys-stats-style summary, each a trace_sink; and the output file they write through.
#pragma once

#include "name_pattern.hpp"
#include "trace_model.hpp"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nvtxpp::capture {

/// @brief A file written through stdio that reports the first failure as output_error.
///
/// Test hook: the environment variable NVTXPP_CAPTURE_FAIL_WRITE_AFTER=<bytes> makes every
/// write past that many bytes fail with ENOSPC, so the disk-full path is testable anywhere.
class output_file {
 public:
  /// @brief Creates (truncates) `path`. @throws output_error when it cannot.
  explicit output_file(std::string path);
  ~output_file();
  output_file(output_file const&) = delete;
  output_file& operator=(output_file const&) = delete;
  /// @brief Appends bytes. @throws output_error on failure.
  void write(std::string_view bytes);
  /// @brief Flushes and closes. @throws output_error on failure.
  void close();
  [[nodiscard]] std::string const& path() const noexcept { return path_; }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return written_; }

 private:
  [[noreturn]] void fail(int error);
  std::string path_;
  std::FILE* f_ = nullptr;
  std::uint64_t written_ = 0;
  std::uint64_t fail_after_ = UINT64_MAX;
};

/// @brief Writes the Chrome Trace Event JSON (see docs/capture-results.md "The JSON trace").
class json_sink : public trace_sink {
 public:
  /// @param base_ns CLOCK_MONOTONIC time that maps to ts 0 in the trace
  /// @throws output_error when the file cannot be created
  json_sink(std::string const& path, std::int64_t base_ns);
  ~json_sink() override;
  json_sink(json_sink const&) = delete;
  json_sink& operator=(json_sink const&) = delete;

  void begin_process(process_info const& p) override;
  void on_thread(thread_info const& t) override;
  void on_resource(resource_info const& r) override;
  void on_range(range_info const& r) override;
  void on_mark(mark_info const& m) override;
  /// Counter tracks: one "ph":"C" event per sample (see docs/capture-results.md).
  void on_counter_sample(counter_sample_info const& c) override;
  void on_kernel(kernel_info const& k) override;
  void on_memcpy(memcpy_info const& m) override;
  void on_memset(memset_info const& m) override;
  void on_api(api_info const& a) override;
  /// A range's GPU-side instance in a CUDA graph launch: an X event (cat "nvtx_graph") on the
  /// GPU stream track where its first node ran.
  void on_graph_range(graph_range_info const& g) override;
  void on_graph_launch(graph_launch_info const& g) override;
  void on_gpu_stream(gpu_stream_info const& s) override;
  void on_warning(warning_info const& w) override;
  void end_process(process_info const& p) override;
  void finish() override;

  /// @brief A "process_sort_index" metadata event: viewers list process `pid` by `index`
  /// (merge: by rank) rather than by pid.
  void process_sort_index(std::uint32_t pid, std::int64_t index);

  /// @brief Where the trace comes from, recorded in otherData for `merge`: `base_utc_ns`, the
  /// wall-clock time (UTC) of ts 0, which puts the trace on one clock with others; and `launch`,
  /// the capture's rank and host rows (launch_metadata(); none for a merged trace).
  void set_origin(std::int64_t base_utc_ns,
                  std::vector<std::pair<std::string, std::string>> launch);

  /// @brief Trace events written so far.
  [[nodiscard]] std::uint64_t events() const noexcept { return events_; }
  /// @brief Bytes written so far (after finish: the file's size).
  [[nodiscard]] std::uint64_t bytes() const noexcept;

  /// @brief Chrome-trace tid of the track of a GPU stream (distinct from any OS thread id).
  [[nodiscard]] static std::uint64_t gpu_track(std::uint32_t device, std::uint32_t stream) noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> d_;
  std::uint64_t events_ = 0;
};

/// @brief Options of the summary.
struct summary_options {
  bool csv = false;                    ///< CSV (RFC 4180) instead of the aligned table
  std::size_t name_width = 60;         ///< table: names longer than this (columns) cut with "…"
  std::size_t max_warning_lines = 20;  ///< warnings printed verbatim
  /// How the reader delivers CUDA graph work to every output (--cuda-graph-trace).
  graph_trace graphs = graph_trace::node;
  name_grouping grouping;  ///< ranges counted by series (--group, --group-digits)
};

/// @brief Computes the summary tables: nvtx_sum; with GPU activity also nvtx_gpu_proj_sum,
/// cuda_gpu_kern_sum and cuda_gpu_mem_time_sum (nsys stats layouts).
///
/// Keeps one duration per range instance (8 bytes) and, per process, the CUDA runtime calls and
/// GPU operations (for the projection); ranges themselves are not kept.
class summary_sink : public trace_sink {
 public:
  summary_sink();
  ~summary_sink() override;
  summary_sink(summary_sink const&) = delete;
  summary_sink& operator=(summary_sink const&) = delete;

  void begin_process(process_info const& p) override;
  void on_range(range_info const& r) override;
  void on_kernel(kernel_info const& k) override;
  void on_memcpy(memcpy_info const& m) override;
  void on_memset(memset_info const& m) override;
  void on_api(api_info const& a) override;
  void on_graph_range(graph_range_info const& g) override;
  void on_graph_launch(graph_launch_info const& g) override;
  void end_process(process_info const& p) override;

  /// @brief Prints the tables, then the warnings of `totals`.
  void print(std::FILE* out, read_totals const& totals, summary_options const& options) const;

  /// @brief One range's (or one range's GPU projection's) totals over what the sink received.
  struct range_total {
    std::string range;  ///< "domain:name", as the tables show it
    bool push_pop = true;
    std::uint64_t instances = 0;
    std::int64_t total_ns = 0;    ///< saturating sum of the durations (projected durations)
    std::int64_t longest_ns = 0;  ///< the longest instance
  };
  /// @brief nvtx_sum's rows as totals (for merge's cross-rank summary).
  [[nodiscard]] std::vector<range_total> range_totals() const;
  /// @brief nvtx_gpu_proj_sum's rows as totals (projected time); empty without GPU activity.
  [[nodiscard]] std::vector<range_total> projection_totals() const;
  /// @brief Whether GPU operations were received.
  [[nodiscard]] bool has_gpu() const noexcept;

  /// @brief Ranges (and their GPU projections) are counted by the series their name belongs to
  /// (`Train step *` for `Train step 1`, `Train step 2`, ...) rather than by name. Set before
  /// the first range arrives.
  void set_grouping(name_grouping grouping);

  /// @brief What an item of the tables is.
  enum class item_kind { range, projection, kernel, memory };
  /// @brief One row of the tables with every instance's duration (unsorted; for `diff`).
  struct item_instances {
    item_kind kind;
    std::string name;   ///< "domain:name" for ranges and projections, as the tables show it
    char const* style;  ///< "PushPop" or "StartEnd" for ranges and projections, else ""
    std::vector<std::int64_t> const* durations;  ///< valid while the sink lives
  };
  /// @brief Every row of nvtx_sum, nvtx_gpu_proj_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum.
  [[nodiscard]] std::vector<item_instances> instances() const;

 private:
  struct impl;
  std::unique_ptr<impl> d_;
};

/// @brief A table in the summary's two layouts: aligned text (names escaped and cut to
/// `name_width`) or CSV. `left` marks the left-aligned (name) columns; `csv_rows` are the rows'
/// CSV cell texts (unformatted numbers).
struct text_table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> left;
  std::vector<std::vector<std::string>> csv_rows;
};

/// @brief Prints `t` as the summary prints its tables (CSV: a "# title" line before every table
/// but the first).
void print_text_table(std::FILE* out, text_table const& t, bool csv, std::size_t name_width,
                      bool first_table);

/// @brief A name as the summary table shows it: control characters and invalid UTF-8 escaped
/// (\n, \t, \x1b, ...), cut to `width` columns (code points) with "…" when longer.
[[nodiscard]] std::string display_name(std::string_view name, std::size_t width);

/// @brief A CSV field (RFC 4180): quoted, quotes doubled, when it holds a comma, quote, CR or LF.
[[nodiscard]] std::string csv_field(std::string_view text);

}  // namespace nvtxpp::capture
