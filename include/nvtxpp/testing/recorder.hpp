/// @file
/// @brief In-process NVTX recorder for unit tests: link `nvtxpp::testing`, create a `recorder`,
/// run annotated code, assert on `events()`.
///
/// The library attaches to NVTX through NVTX's static injection hook
/// (`InitializeInjectionNvtx2_fnptr`), so no environment variable or shared library is needed.
/// A dynamic injection named by `NVTX_INJECTION64_PATH` takes precedence over it (NVTX's own
/// load order); `recorder::attached()` then stays false.
#pragma once

#include <nvtxpp/testing/event.hpp>

#include <string>
#include <vector>

namespace nvtxpp::testing {

/// @brief Records every NVTX call of this process while alive (RAII). One at a time.
///
/// Recording is lock-free and allocation-free per event (per-thread buffers; a new 64 KiB block
/// is allocated each time a thread fills one). Events of threads that have exited are kept.
/// While no recorder is alive, NVTX calls cost one relaxed atomic load, and
/// `nvtxDomainIsEnabled` returns 0 so formatting front ends can skip their work.
class recorder {
 public:
  /// @brief Clears earlier events and starts recording. Creating a second live recorder
  /// throws std::logic_error.
  recorder();
  /// @brief Stops recording.
  ~recorder();
  recorder(recorder const&) = delete;
  recorder& operator=(recorder const&) = delete;
  recorder(recorder&&) = delete;
  recorder& operator=(recorder&&) = delete;

  /// @brief Every event since construction or the last `clear()`, from all threads (exited
  /// ones included), ordered by time; ties keep each thread's call order.
  [[nodiscard]] std::vector<event> events() const;

  /// @brief `events()` joined into ranges; ranges still open are closed at the current time
  /// and marked `unterminated`.
  [[nodiscard]] std::vector<completed_range> ranges() const;

  /// @brief Problems seen in the recording: unbalanced pops, ends of unknown ids, null or
  /// truncated messages. One line each.
  [[nodiscard]] std::vector<std::string> warnings() const;

  /// @brief Drops everything recorded so far; recording continues.
  void clear();

  /// @brief True once NVTX has called this library's injection entry point, i.e. this process
  /// made an NVTX call and no other tool was injected.
  [[nodiscard]] static bool attached() noexcept;
};

}  // namespace nvtxpp::testing
