/// @file
/// @brief The capture window inside the profiled program: reads the NVTXPP_CAPTURE_* variables
/// the launcher sets (launch/capture_options.hpp), configures the recorder core's gate (a range
/// outside the window costs one flag test), and opens and closes the window on its triggers:
/// the launch time (--delay, --duration), an NVTX range (--capture-range=nvtx) or
/// cudaProfilerStart/Stop (--capture-range=cudaProfilerApi, seen through CUPTI). Internal to
/// libnvtxpp_inject.so.
#pragma once

namespace nvtxpp::capture::gate {

/// @brief Reads the variables and configures the core: call before the core attaches to NVTX,
/// after recording was switched on. Without capture options, does nothing (all is recorded).
void start() noexcept;

/// @brief Whether the window is open now (GPU activity is recorded only then).
[[nodiscard]] bool window_open() noexcept;

/// @brief Whether the run has a capture window (capture options were given).
[[nodiscard]] bool windowed() noexcept;

/// @brief Whether a cudaProfilerStart may still open the window (--capture-range=cudaProfilerApi,
/// until the window that ends the capture closed): CUPTI stays attached meanwhile.
[[nodiscard]] bool profiler_start_awaited() noexcept;

/// @brief cudaProfilerStart (`start` true) or cudaProfilerStop was called.
void profiler_api(bool start) noexcept;

/// @brief In a forked child: the timer thread is the parent's; start the child's own.
void after_fork_in_child() noexcept;

}  // namespace nvtxpp::capture::gate
