/// @file
/// @brief merge's threads: one job per input on up to N threads, failing as a loop would.
#pragma once

#include <cstddef>
#include <functional>

namespace nvtxpp::capture {

/// @brief The most threads `merge -j` takes (a larger value is a usage error).
inline constexpr unsigned max_merge_jobs = 1024;

/// @brief Whether SQLite allows one connection per thread (it was built thread-safe).
[[nodiscard]] bool sqlite_threads_allowed() noexcept;

/// @brief Runs `fn(i)` for every i in [0, count) on up to `jobs` threads, the calling one among
/// them, and then `in_order(i)` (if given) for each i in order, one at a time, once fn(0..i) have
/// ended.
///
/// Inputs are claimed in order, at most 2 x `jobs` past the first whose in_order has not run, so
/// what fn leaves for in_order is held for that many inputs at most. Once a call throws, no
/// further input is claimed; when the claimed ones have ended, the exception of the lowest input
/// that threw is rethrown: the one a loop in order would have thrown first (in_order has then run
/// for the inputs before it). With `jobs` 1 it is that loop.
void for_each_input(std::size_t count, unsigned jobs, std::function<void(std::size_t)> const& fn,
                    std::function<void(std::size_t)> const& in_order = {});

}  // namespace nvtxpp::capture
