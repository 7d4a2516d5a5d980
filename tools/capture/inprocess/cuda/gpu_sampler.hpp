/// @file
/// @brief `--cuda-sample=ON/PERIOD`: GPU detail recorded for ON out of every PERIOD, NVTX all the
/// time. A thread of ours switches CUPTI's tracing on at each period's start and off at its end
/// (cupti::set_gpu_sample); `raise()` (a flight recorder dump's trigger, hang or request)
/// records in full for `--cuda-raise`, then sampling goes on. Periods start on multiples of
/// PERIOD of the wall clock, so every process and every rank of a job samples the same moments.
/// Internal to libnvtxpp_inject.so.
#pragma once

#include <cstdint>

namespace nvtxpp::capture::gpu_sampler {

/// @brief The sampling asked for (NVTXPP_CUDA_SAMPLE=ON_NS/PERIOD_NS, NVTXPP_CUDA_RAISE_NS).
struct plan {
  std::int64_t on_ns = 0;  ///< 0: no sampling (GPU detail all the time)
  std::int64_t period_ns = 0;
  std::int64_t raise_ns = 0;  ///< 0: dumps raise nothing
};

/// @brief Reads the plan from the environment; `on_ns` 0 when none (or malformed).
[[nodiscard]] plan read_plan() noexcept;

/// @brief Whether `t` (CLOCK_MONOTONIC ns) lies in a sampled period, for a process whose wall
/// clock is `realtime_offset_ns` ahead of CLOCK_MONOTONIC; `next` gets the next edge after `t`.
[[nodiscard]] bool in_period(plan const& p, std::int64_t t, std::int64_t realtime_offset_ns,
                             std::int64_t* next) noexcept;

/// @brief Starts sampling (called once CUPTI records): sets the state for now and starts the
/// thread that follows the periods. Does nothing without a plan.
void start() noexcept;

/// @brief A dump was asked with a raise: GPU detail in full from now for the plan's raise_ns.
/// Async-safe enough for the block writer's thread (a short lock, never in a signal handler).
void raise() noexcept;

}  // namespace nvtxpp::capture::gpu_sampler
