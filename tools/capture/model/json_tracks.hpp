/// @file
/// @brief Our Chrome JSON's track of a GPU stream: the thread id the JSON writer gives it and
/// the JSON reader recognises (docs/capture-results.md, "The JSON trace").
#pragma once

#include <cstdint>

namespace nvtxpp::capture {

/// @brief The JSON tid of the track of GPU stream `stream` of device `device`: above any Linux
/// thread id (pid_max <= 2^22) and below 2^31, which every viewer accepts.
[[nodiscard]] constexpr std::uint64_t json_gpu_track(std::uint32_t device,
                                                     std::uint32_t stream) noexcept {
  return 0x40000000ULL + (static_cast<std::uint64_t>(device & 0xFFU) << 20U) + (stream & 0xFFFFFU);
}

}  // namespace nvtxpp::capture
