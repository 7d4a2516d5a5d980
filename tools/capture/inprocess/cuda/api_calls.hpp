/// @file
/// @brief The flight recorder's record of the CUDA API call each thread is inside now
/// (recording/call_table.hpp), kept from CUPTI's API callbacks so that the launcher's stacks
/// reports can name the call a hung thread waits in, with how long it has waited. Internal to
/// libnvtxpp_inject.so; only with the flight recorder (the table is what `nvtxpp-capture stacks`
/// reads), and off with NVTXPP_API_CALLS=off.
#pragma once

#include <cstdint>

namespace nvtxpp::capture::api_calls {

/// @brief Whether the calls are wanted: the flight recorder runs, NVTXPP_API_CALLS is not `off`.
[[nodiscard]] bool wanted() noexcept;

/// @brief Maps this process's table `nvtxpp-<pid>.calls`. @return false when it cannot (said
/// on stderr)
bool start() noexcept;

/// @brief One CUPTI API callback (`data`: CUpti_CallbackData) of the runtime (`domain` 2) or
/// driver (1) API: the calling thread enters or leaves the call.
void on_callback(std::uint32_t domain, std::uint32_t cbid, void const* data) noexcept;

/// @brief The callbacks that reach on_callback changed (a detach, an attach, the whole API
/// domains or only the calls that wait): a call a thread entered before may never be seen to
/// return, so each thread's calls are forgotten at its next call entered.
void coverage_changed() noexcept;

/// @brief In a forked child: the table is the parent's; stop writing it.
void after_fork_in_child() noexcept;

}  // namespace nvtxpp::capture::api_calls
