/// @file
/// @brief How the launcher asks a process with a flight recorder for the partly filled blocks of
/// its ring, and how the process answers: two words of the ring's header (ring_header::user),
/// written by both halves (inprocess/flight_ring.cpp answers, flight/flight_window.cpp asks).
#pragma once

#include <cstdint>

namespace nvtxpp::capture::flight {

/// @brief Ring words shared with the launcher (ring_header::user).
enum user_word : int {
  flush_request = 0,  ///< the launcher bumps it to ask for the partly filled blocks
  flush_done = 1,     ///< the process stores the request it has answered
};

/// @brief Set in the flush_request word (before the bump) by a dump: the GPU records CUPTI holds
/// are wanted too. A stacks request leaves it clear: it needs ranges only, and a flush of CUPTI
/// while a kernel runs would lose that kernel's record. The count is the word without it.
inline constexpr std::uint64_t gpu_wanted = 1ULL << 62U;

/// @brief Set with gpu_wanted by a dump that a trigger, a hang or a request started: with
/// --cuda-sample, the process records GPU work in full for --cuda-raise from now
/// (inprocess/cuda/gpu_sampler.hpp). Dumps at the end and the dump that closes a raise leave it
/// clear.
inline constexpr std::uint64_t raise_wanted = 1ULL << 61U;

/// @brief The flag bits of the flush_request word: the count is the word without them.
inline constexpr std::uint64_t request_flags = gpu_wanted | raise_wanted;

}  // namespace nvtxpp::capture::flight
