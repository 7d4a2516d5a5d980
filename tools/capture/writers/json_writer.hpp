/// @file
/// @brief The Chrome Trace Event JSON writer (a trace_sink), and the output file the text
/// outputs write through.
#pragma once

#include "../model/trace_model.hpp"

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

}  // namespace nvtxpp::capture
