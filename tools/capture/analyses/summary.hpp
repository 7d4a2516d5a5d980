/// @file
/// @brief The summary at exit (nsys stats' tables: nvtx_sum, nvtx_gpu_proj_sum,
/// cuda_gpu_kern_sum, cuda_gpu_mem_time_sum), a trace_sink; and the text tables every analysis
/// prints (the summary, merge's cross-rank summary, diff).
#pragma once

#include "../common/name_pattern.hpp"
#include "../model/trace_model.hpp"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nvtxpp::capture {

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
  void on_gpu_info(gpu_info const& g) override;

  /// @brief --cuda-sample: the share of the trace's time (%) its GPU numbers cover; negative
  /// when GPU detail was not sampled (docs/leave-it-on-gpu.md).
  [[nodiscard]] double gpu_sampled_share() const noexcept;
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
