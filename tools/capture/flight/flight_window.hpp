/// @file
/// @brief Reading the flight recorder's rings (offline side): each process of a raw directory
/// has its definitions in nvtxpp-<pid>.bin and its events in the ring nvtxpp-<pid>.ring
/// (inprocess/flight_ring.hpp). `compose_window` snapshots the rings (while the processes run, or
/// after they died) into ordinary capture files that every reader of ours takes as they are.
#pragma once

#include "../../recording/ring.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nvtxpp::capture {

/// @brief A ring file mapped shared (its user words are written: requests), unmapped with it.
class ring_file {
 public:
  /// @param writable false: mapped read-only, for a reader that asks the process nothing (the
  ///   watcher; `top`): nothing of the ring can be changed through it
  explicit ring_file(std::string const& path, bool writable = true);
  ~ring_file();
  ring_file(ring_file const&) = delete;
  ring_file& operator=(ring_file const&) = delete;
  /// @brief The ring, or nullptr when the file is no ring (then error() says why).
  [[nodiscard]] recording::ring const* get() const { return ring_.valid() ? &ring_ : nullptr; }
  [[nodiscard]] std::string const& error() const { return error_; }

 private:
  void* map_ = nullptr;
  std::size_t size_ = 0;
  recording::ring ring_;
  std::string error_;
};

/// @brief The ring file of process `pid` in `dir`.
[[nodiscard]] std::string ring_path(std::string const& dir, std::uint32_t pid);

/// @brief Whether `pid` runs (a zombie or a pid gone: no).
[[nodiscard]] bool running(std::uint32_t pid);

/// @brief The processes of `raw_dir` that record into a ring (their pids).
[[nodiscard]] std::vector<std::uint32_t> ring_processes(std::string const& raw_dir);

/// @brief Asks every live ring writer of `raw_dir` to put its partly filled blocks in its ring
/// (the rings' flush_request word), and waits until each live process has answered, each is
/// gone, or `max_wait_ns` passed. @return the number of processes that did not answer
/// `gpu`: the GPU records CUPTI holds too (a dump; not for a stacks report). `raise` (with
/// `gpu`): with --cuda-sample, GPU recording goes to full for --cuda-raise (a dump that a
/// trigger, hang or request started).
std::size_t request_flush(std::string const& raw_dir, std::int64_t max_wait_ns, bool gpu = true,
                          bool raise = false);

/// @brief What compose_window wrote.
struct window_result {
  std::size_t processes = 0;
  std::uint64_t records = 0;      ///< ring records kept
  std::uint64_t ring_bytes = 0;   ///< their bytes
  std::uint64_t cut_records = 0;  ///< events and GPU records left out after the window's end
  /// A 64-bit FNV-1a digest of every file written, with each process's pid: two windows with
  /// the same digest are, but for a collision, the same bytes (and make the same dump).
  std::uint64_t digest = 0xcbf29ce484222325ULL;
  /// Each thread's earliest event in the window (CLOCK_MONOTONIC ns), by pid and tid.
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::int64_t> thread_starts;
  std::vector<std::string> errors;
};

/// @brief Writes into `out_dir` one capture file per process of `raw_dir`: its header, its
/// window (the ring's records; with `keep_ns` > 0 only those of the last `keep_ns` before the
/// newest), then its definitions. A process without a finish record gets one, at `end_ns` for a
/// process still running (`live`), at its newest record otherwise (then marked as killed).
/// Stream pieces whose block's start fell out of the window are left out (their ticks count
/// from records that are gone). `cut_ns` > 0 (monotonic ns; a job-wide dump's moment, a
/// trigger's): the `keep_ns` are counted back from it instead of from the newest record (from
/// the newest when that is older). Records after it are kept, unless `ends_at_cut`: then the
/// window ends there, whenever it is composed: events after it are left out, and GPU work too
/// unless a CUDA call of the window launched it; a process that ran past it ends there (its
/// open ranges cut, as at a live dump).
window_result compose_window(std::string const& raw_dir, std::string const& out_dir,
                             std::int64_t keep_ns, std::int64_t end_ns, bool live,
                             std::int64_t cut_ns = 0, bool ends_at_cut = false);

}  // namespace nvtxpp::capture
