/// @file
/// @brief The options of the sampled GPU mode: `--cuda-sample=ON/PERIOD` records GPU activity
/// (CUPTI) for ON of every PERIOD, NVTX all the time; `--cuda-raise=DURATION` (with
/// `--flight-recorder`) records it in full for DURATION after a dump that a trigger, a hang or a
/// request started. docs/leave-it-on-gpu.md.
#pragma once

#include "../common/option_parsing.hpp"

#include <cstdint>
#include <string>

namespace nvtxpp::capture::cli {

/// @brief --cuda-raise's default with --flight-recorder and --cuda-sample.
inline constexpr std::int64_t default_raise_ns = 10'000'000'000;

/// @brief The sampled GPU mode's options.
struct gpu_sample_options {
  std::int64_t on_ns = 0;  ///< 0: no sampling (GPU activity all the time)
  std::int64_t period_ns = 0;
  std::int64_t raise_ns = -1;  ///< -1: not given (validate() sets the default)

  [[nodiscard]] bool enabled() const noexcept { return on_ns != 0; }

  /// @brief Takes `arg` if it is one of these options. @throws option_error naming the option.
  template <class Next>
  bool parse(std::string const& arg, Next&& next) {
    return parse_option(
        names, arg, next,
        [this](std::string const& name, std::string const& value) { set(name, value); });
  }

  /// @brief Checks them with the run's other choices (`cuda_mode`: --cuda's value; `flight`:
  /// --flight-recorder given), and sets --cuda-raise's default. @throws option_error
  void validate(std::string const& cuda_mode, bool flight);

  /// @brief The variables the injection library reads (NVTXPP_CUDA_SAMPLE, NVTXPP_CUDA_RAISE_NS);
  /// both unset without sampling.
  void set_env() const;

 private:
  static constexpr char const* names[] = {"--cuda-sample", "--cuda-raise"};
  void set(std::string const& name, std::string const& value);
};

}  // namespace nvtxpp::capture::cli
