/// @file
/// @brief Capture control for long runs, with Nsight Systems' option names: what part of a run
/// is recorded (`--capture-range`, `--nvtx-capture`, `--capture-range-end`, `--delay`,
/// `--duration`) and which NVTX domains (`--nvtx-domain-include` / `--nvtx-domain-exclude`).
/// The launcher parses them and hands them to the injection library in NVTXPP_CAPTURE_*
/// variables (inprocess/capture_gate.hpp reads them).
#pragma once

#include "../common/option_parsing.hpp"

#include <cstdint>
#include <string>

namespace nvtxpp::capture::cli {

/// @brief The capture window options.
struct capture_options {
  std::string range = "none";  ///< none, cudaProfilerApi or nvtx
  std::string nvtx_capture;    ///< RANGE[@DOMAIN] (nvtx): names or patterns (name_pattern.hpp)
  std::string range_end = "stop";
  std::uint32_t repeat = 0;  ///< repeat:N's N; 0 without a limit
  std::int64_t delay_ns = 0;
  std::int64_t duration_ns = 0;  ///< 0: no limit
  std::string domain_include;    ///< comma list as given (names or patterns; `default`)
  std::string domain_exclude;

  /// @brief Takes argument `arg` if it is a capture option; `next` gives the following argument
  /// for the `--opt VALUE` form. @return false when `arg` is no capture option.
  /// @throws option_error for a bad value.
  template <class Next>
  bool parse(std::string const& arg, Next&& next) {
    return parse_option(
        names, arg, next,
        [this](std::string const& name, std::string const& value) { set(name, value); });
  }

  /// @brief Checks the options together (e.g. --nvtx-capture needs --capture-range=nvtx).
  void validate() const;

  /// @brief Sets the NVTXPP_CAPTURE_* variables for the program (`t0_ns`: CLOCK_MONOTONIC at the
  /// launch, from which --delay counts).
  void export_env(std::int64_t t0_ns) const;

  /// @brief Whether any option differs from "record everything".
  [[nodiscard]] bool windowed() const noexcept {
    return range != "none" || delay_ns != 0 || duration_ns != 0;
  }

 private:
  static constexpr char const* names[] = {"--capture-range",
                                          "--nvtx-capture",
                                          "--capture-range-end",
                                          "--delay",
                                          "--duration",
                                          "-c",
                                          "--nvtx-domain-include",
                                          "--nvtx-domain-exclude",
                                          "-p",
                                          "-y",
                                          "-d"};
  void set(std::string const& name, std::string const& value);
};

}  // namespace nvtxpp::capture::cli
