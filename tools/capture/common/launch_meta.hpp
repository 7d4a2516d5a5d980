/// @file
/// @brief What the launcher knows about the job a capture belongs to (rank, host), written into
/// the SQLite output's META_DATA_CAPTURE and the JSON output's otherData so that
/// `nvtxpp-capture merge` can name processes by rank and host; the wall-clock anchor of a JSON
/// trace; and the testing-only shift of the anchors.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nvtxpp::capture {

/// META_DATA_CAPTURE names written by the capture and read by merge.
inline constexpr char meta_rank[] = "NVTXPP_RANK";              ///< "3"
inline constexpr char meta_rank_source[] = "NVTXPP_RANK_VAR";   ///< "OMPI_COMM_WORLD_RANK"
inline constexpr char meta_world_size[] = "NVTXPP_WORLD_SIZE";  ///< "4" when known
inline constexpr char meta_host[] = "NVTXPP_HOST";              ///< gethostname()

/// @brief The (name, value) rows to record: the rank, its variable and the number of ranks when
/// the launchers' variables say this is one rank of several (common/rank_vars.hpp: Open MPI,
/// PMI, PMIx, Slurm, PyTorch's RANK of WORLD_SIZE), and the host name.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> launch_metadata();

/// @brief Testing only: NVTXPP_CAPTURE_TEST_CLOCK_SHIFT_NS=<signed ns>, added to the recording's
/// wall-clock anchor (TARGET_INFO_SESSION_START_TIME) as if the host's clock were that far off;
/// 0 when unset or not a number.
[[nodiscard]] std::int64_t test_clock_shift_ns() noexcept;

/// @brief The wall-clock time (UTC, ns since the epoch) of CLOCK_MONOTONIC time `mono_ns`, from
/// one read of each clock, moved by test_clock_shift_ns(): the anchor a JSON trace records for
/// its ts 0, as the SQLite output records its session start.
[[nodiscard]] std::int64_t utc_of_monotonic(std::int64_t mono_ns) noexcept;

}  // namespace nvtxpp::capture
