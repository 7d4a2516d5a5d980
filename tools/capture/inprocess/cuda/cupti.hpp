/// @file
/// @brief nvtxpp-capture's CUPTI source: GPU activity (kernels, copies, memsets, synchronisations,
/// CUDA API calls) recorded into the capture file as gpu_format.hpp records.
///
/// Two halves: a pure conversion (a CUPTI activity record in, gpu_format records and new name
/// strings out; unit-tested without a GPU) and the run-time part (cupti.cpp) that loads CUPTI
/// with dlopen when the CUDA driver calls the library's `InitializeInjection`, hands CUPTI its
/// buffers and writes what comes back. Internal to libnvtxpp_inject.so.
#pragma once

#include "../../../recording/gpu_format.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nvtxpp::capture::cupti {

/// @brief `name` without CUPTI's API version suffix: "cudaMemcpyAsync_v3020" -> "cudaMemcpyAsync",
/// "cuMemcpyHtoD_v2" -> "cuMemcpyHtoD", "cuCtxCreate_v4" -> "cuCtxCreate". Only a trailing
/// `_v<digits>` (optionally `_v<digits>_ptds`/`_ptsz` kept as is) is removed.

/// @brief Looks up a CUDA API function's name: CUPTI callback domain (1 driver, 2 runtime) and
/// callback id in, CUPTI's name (with its version suffix) out, nullptr when unknown.
using api_name_fn = char const* (*)(std::uint32_t domain, std::uint32_t cbid);

/// @brief One record for the capture file: `kind` and its body (a gpu_format struct, or the text
/// of an `info` record).
struct gpu_out {
  recording::gpu_record kind{};
  std::uint32_t size = 0;  ///< bytes of `body` used (struct records)
  alignas(8) unsigned char body[sizeof(recording::gpu_kernel)]{};
  std::string text;  ///< the body of an `info` record
  /// Kernels, copies and memsets run by a CUDA graph launch: written after `body` as a
  /// gpu_graph_tail when `graph_node` is not 0.
  std::uint64_t graph_node = 0;
  std::uint32_t graph = 0;
};

/// @brief Converts CUPTI activity records; remembers the names it has given ids (ids from 1).
/// Not thread-safe: the caller serialises (cupti.cpp holds a lock around buffer completion).
class converter {
 public:
  explicit converter(api_name_fn api_name) noexcept : api_name_{api_name} {}

  /// @brief Converts one record (a `CUpti_Activity*` of the CUDA 13 layouts: Kernel10, Memcpy6,
  /// Memset4, Synchronization2, API, Device5, UnifiedMemoryCounter3: migrations, as gpu_memcpy).
  /// Names first seen here are appended to
  /// new_strings(); write them before `out`.
  /// @return false for kinds it does not convert (the record is skipped).
  bool convert(void const* activity, gpu_out& out);

  /// @brief Ids (and texts, text_of) of the strings the last convert() calls defined, in order;
  /// the caller writes them and calls clear_new_strings().
  [[nodiscard]] std::vector<std::uint32_t> const& new_strings() const noexcept { return fresh_; }
  void clear_new_strings() noexcept { fresh_.clear(); }
  [[nodiscard]] std::string const& text_of(std::uint32_t id) const { return texts_[id - 1]; }

  /// @brief Id of `text`, defining it if new.
  std::uint32_t intern(std::string_view text);

  /// @brief CUPTI was attached again after a detach: its correlation ids may start again from
  /// the beginning. The records of the new attach get ids above every id written so far when
  /// they do (the first record's id is not above the last attach's), so a kernel is never tied
  /// to an older call that had its id; their own ids, ties intact, when they do not.
  void attached_again() noexcept {
    fresh_attach_ = true;
    previous_raw_max_ = raw_max_;
    raw_max_ = 0;
  }

  /// @brief The id written for CUPTI's correlation id `raw` (0: none).
  std::uint32_t correlation(std::uint32_t raw) noexcept {
    if (raw == 0) {
      return 0;
    }
    if (fresh_attach_) {
      fresh_attach_ = false;
      if (raw <= previous_raw_max_) {
        offset_ = written_max_;  // CUPTI counts from the beginning again
      }
    }
    raw_max_ = raw > raw_max_ ? raw : raw_max_;
    std::uint32_t const id = raw + offset_;
    written_max_ = id > written_max_ ? id : written_max_;
    return id;
  }

  /// @brief Kernels, copies and memsets converted so far (the process ran GPU work).
  [[nodiscard]] std::uint64_t gpu_work() const noexcept { return gpu_work_; }

  /// @brief Kernels, copies and memsets skipped because they had no end yet: a forced flush
  /// (a live dump) hands out the work still running without its end, and CUPTI does not hand
  /// it out again.
  [[nodiscard]] std::uint64_t in_flight() const noexcept { return in_flight_; }

 private:
  bool convert_kernel(void const* activity, gpu_out& out);
  bool convert_memcpy(void const* activity, gpu_out& out);
  bool convert_memset(void const* activity, gpu_out& out);
  bool convert_sync(void const* activity, gpu_out& out);
  bool convert_api(void const* activity, bool runtime, gpu_out& out);
  bool in_flight(std::uint64_t start, std::uint64_t end) noexcept {
    bool const running = end == 0 || end < start;
    in_flight_ += running ? 1U : 0U;
    return running;
  }
  std::uint32_t api_name_id(std::uint32_t domain, std::uint32_t cbid);

  api_name_fn api_name_;
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::unordered_map<std::uint64_t, std::uint32_t> api_ids_;  ///< (domain << 32 | cbid) -> id
  std::vector<std::string> texts_;
  std::vector<std::uint32_t> fresh_;
  std::uint64_t gpu_work_ = 0;
  std::uint64_t in_flight_ = 0;
  // Correlation ids across attaches (correlation()).
  bool fresh_attach_ = false;
  std::uint32_t raw_max_ = 0;
  std::uint32_t previous_raw_max_ = 0;
  std::uint32_t offset_ = 0;
  std::uint32_t written_max_ = 0;
};

// Run-time hooks for inject.cpp.

/// @brief The process is exiting normally: flush CUPTI (forced) and write what remains, unless
/// the at-exit handler already did. Not async-signal-safe.
void flush_at_exit() noexcept;

/// @brief A fatal signal `sig` is being handled: for SIGTERM/SIGINT/SIGHUP/SIGQUIT, has the
/// flusher thread flush CUPTI and waits for it (bounded). Async-signal-safe.
void flush_from_signal(int sig) noexcept;

/// @brief A live dump of the flight recorder is due: has the flusher thread hand over the records
/// of completed GPU work CUPTI still holds, and waits up to `wait_ns` for it. Recording goes on.
/// @return false when the flush did not finish in time
bool flush_live(std::int64_t wait_ns) noexcept;

/// @brief In a forked child: CUPTI's state is the parent's and unusable here; stop using it.
void after_fork_in_child() noexcept;

/// @brief The capture window opened or closed (inprocess/capture_gate.cpp): GPU activity kinds
/// are enabled only while it is open, so nothing outside it is recorded.
void set_gpu_window(bool open) noexcept;

/// @brief --cuda-sample (inprocess/cuda/gpu_sampler.cpp): a sampled period or a raise (`raised`)
/// runs (`on`), or neither. GPU activity is recorded only while the capture window is open and
/// one runs; each switch is written as an info record `gpu_detail`.
void set_gpu_sample(bool on, bool raised) noexcept;

}  // namespace nvtxpp::capture::cupti
