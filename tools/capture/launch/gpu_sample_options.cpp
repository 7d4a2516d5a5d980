// The sampled GPU mode's options (gpu_sample_options.hpp).

#include "gpu_sample_options.hpp"

#include "flight_options.hpp"

#include <cstdlib>
#include <string>

namespace nvtxpp::capture::cli {

namespace {

/// Short periods cost more in switches than they save: CUPTI's switch takes tens of
/// microseconds (docs/leave-it-on-gpu.md).
constexpr std::int64_t shortest_on_ns = 1'000'000;

}  // namespace

void gpu_sample_options::set(std::string const& name, std::string const& value) {
  if (name == "--cuda-raise") {
    raise_ns = value == "0" ? 0 : parse_duration(name, value);
    return;
  }
  std::size_t const slash = value.find('/');
  if (slash == std::string::npos) {
    throw option_error(
        "--cuda-sample takes ON/PERIOD, two durations (200ms/2s: GPU activity recorded for "
        "200 ms of every 2 s), not '" +
        value + "'");
  }
  on_ns = parse_duration(name + " (its ON)", value.substr(0, slash));
  period_ns = parse_duration(name + " (its PERIOD)", value.substr(slash + 1));
  if (on_ns >= period_ns) {
    throw option_error("--cuda-sample=" + value + ": ON must be shorter than PERIOD (for GPU " +
                       "activity all the time, leave --cuda-sample out)");
  }
  if (on_ns < shortest_on_ns) {
    throw option_error("--cuda-sample=" + value + ": ON must be 1ms or more (each switch of " +
                       "CUPTI costs tens of microseconds)");
  }
}

void gpu_sample_options::validate(std::string const& cuda_mode, bool flight) {
  if (enabled() && cuda_mode == "off") {
    throw option_error("--cuda-sample samples the GPU activity CUPTI records: not with --cuda=off");
  }
  if (raise_ns >= 0 && !enabled()) {
    throw option_error("--cuda-raise raises --cuda-sample's GPU recording: give --cuda-sample too");
  }
  if (raise_ns > 0 && !flight) {
    throw option_error(
        "--cuda-raise acts on the flight recorder's dumps (a trigger, a hang, a request): give "
        "--flight-recorder too");
  }
  if (raise_ns < 0) {
    raise_ns = enabled() && flight ? default_raise_ns : 0;
  }
}

void gpu_sample_options::set_env() const {
  if (!enabled()) {
    ::unsetenv("NVTXPP_CUDA_SAMPLE");
    ::unsetenv("NVTXPP_CUDA_RAISE_NS");
    return;
  }
  ::setenv("NVTXPP_CUDA_SAMPLE", (std::to_string(on_ns) + "/" + std::to_string(period_ns)).c_str(),
           1);
  ::setenv("NVTXPP_CUDA_RAISE_NS", std::to_string(raise_ns).c_str(), 1);
}

}  // namespace nvtxpp::capture::cli
