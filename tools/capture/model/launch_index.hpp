/// @file
/// @brief Which CUDA API call launched each GPU operation of a process: the rule that ties GPU
/// work to the NVTX ranges of the launching thread, for runtime and driver launches alike.
///
/// A GPU operation (kernel, copy, memset) carries the correlation id of the API call that
/// launched it. That call is a runtime call (cudaLaunchKernel), or a driver call made by the
/// program itself (cuLaunchKernel from Numba, cuBLASLt, a module loaded by hand). The CUDA
/// runtime makes driver calls of its own inside its calls; those are *nested*: a driver record
/// that shares a runtime record's correlation id, or lies inside a runtime call of its thread.
/// Nested calls are not launches of their own: Nsight Systems lists only the runtime call, and
/// GPU work whose id is a nested call's belongs to the runtime call around it.
#pragma once

#include "../../recording/gpu_format.hpp"

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace nvtxpp::capture {

/// @brief Built from every API record of one process (times as recorded, any order).
class launch_index {
 public:
  explicit launch_index(std::vector<recording::gpu_api> const& calls);

  /// @brief A driver call the runtime made inside one of its own calls.
  [[nodiscard]] bool nested(recording::gpu_api const& call) const;

  /// @brief Correlation id of the call that launched GPU work with id `correlation`: the id
  /// itself for a runtime call or a driver call of the program's own, the runtime call's around
  /// it for a nested driver call, 0 when no recorded call has that id.
  [[nodiscard]] std::uint32_t launcher(std::uint32_t correlation) const;

 private:
  struct span {
    std::int64_t start;
    std::int64_t end;
    std::uint32_t correlation;
  };
  /// The runtime call of thread `tid` that holds [start, end], or nullptr.
  [[nodiscard]] span const* enclosing(std::uint64_t tid, std::int64_t start,
                                      std::int64_t end) const;

  std::unordered_map<std::uint64_t, std::vector<span>> runtime_;  ///< by thread, by start
  std::unordered_set<std::uint32_t> runtime_ids_;
  std::unordered_map<std::uint32_t, std::uint32_t> launcher_;  ///< driver ids -> launching id
};

}  // namespace nvtxpp::capture
