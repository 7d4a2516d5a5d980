/// @file
/// @brief The merge's threads (no SQL here): the board of units that the workers and the one
/// writer share, and the pool of workers that run the units. What a unit does (stage a piece,
/// call per_input) and what the writer does with it are the caller's (merge_sqlite.cpp).
#pragma once

#include "merge_plan.hpp"

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace nvtxpp::capture::merge {

/// @brief The state of a plan's units, shared by the workers and the writer under one lock.
///
/// Workers take units in plan order. A piece unit is taken only once its stage slot is free: the
/// writer has appended the piece that used the slot before it (plan.ordinal(u) < appended +
/// slots); a per_input unit needs no slot. A unit that throws stops the merge: no unit is taken
/// after it, while those already taken still end.
class stage_board {
 public:
  /// @brief How a unit ended, as the writer sees it.
  struct outcome {
    bool ended = false;        ///< false: the merge stopped before any worker took the unit
    std::exception_ptr error;  ///< what the unit threw, if anything
  };

  explicit stage_board(merge_plan const& plan);
  stage_board(stage_board const&) = delete;
  stage_board& operator=(stage_board const&) = delete;

  /// @brief Worker: the next unit, once it may be taken; none when all are taken or the merge
  /// stopped.
  [[nodiscard]] std::optional<std::size_t> take();
  /// @brief Worker: unit `u` (taken) ended, throwing `error` (null: it succeeded).
  void end(std::size_t u, std::exception_ptr error);

  /// @brief Writer: waits for unit `u` to end, or for the merge to stop before it was taken.
  [[nodiscard]] outcome wait(std::size_t u);
  /// @brief Writer: how unit `u` ended, without waiting (ended false while it has not).
  [[nodiscard]] outcome poll(std::size_t u);
  /// @brief Writer: piece unit `u` is appended, so its stage slot is free.
  void appended(std::size_t u);
  /// @brief Stops the merge: workers take no further unit.
  void stop();

 private:
  [[nodiscard]] bool may_take() const;  // with mu_ held

  merge_plan const& plan_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t next_ = 0;      // the next unit a worker takes
  std::size_t appended_ = 0;  // piece units the writer has appended
  bool stopped_ = false;
  std::vector<bool> ended_;  // [unit]
  std::vector<std::exception_ptr> errors_;
};

/// @brief Worker threads that take units from a board and run them until none is left. The
/// destructor stops the board and joins them, so a writer that throws leaves no thread behind.
class stage_workers {
 public:
  /// @brief Starts `threads` workers, each running `run(u)` for the units it takes (what `run`
  /// throws is that unit's error). @throws std::system_error when a thread cannot start (those
  /// started are stopped and joined first)
  stage_workers(stage_board& board, std::size_t threads, std::function<void(std::size_t)> run);
  ~stage_workers();
  stage_workers(stage_workers const&) = delete;
  stage_workers& operator=(stage_workers const&) = delete;

 private:
  void work();
  void join() noexcept;

  stage_board& board_;
  std::function<void(std::size_t)> run_;
  std::vector<std::thread> threads_;
};

}  // namespace nvtxpp::capture::merge
