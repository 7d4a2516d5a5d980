// Capture control options (capture_options.hpp).

#include "capture_options.hpp"

#include "../common/name_pattern.hpp"
#include "../common/name_spec.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace nvtxpp::capture::cli {

namespace {

/// Seconds (a decimal number, at least 0) to nanoseconds.
std::int64_t seconds(std::string const& name, std::string const& value) {
  errno = 0;
  char* end = nullptr;
  double const s = std::strtod(value.c_str(), &end);
  if (value.empty() || errno != 0 || *end != '\0' || !std::isfinite(s) || s < 0 || s > 1e9) {
    throw option_error(name + " takes seconds (a number, 0 or more), not '" + value + "'");
  }
  return static_cast<std::int64_t>(std::llround(s * 1e9));
}

/// Refuses a malformed name pattern among `patterns` (exit 2 before the program starts).
void check_patterns(std::string const& option, std::string const& value,
                    std::vector<std::string> const& patterns) {
  for (auto const& p : patterns) {
    try {
      static_cast<void>(name_pattern{p});
    } catch (std::invalid_argument const& e) {
      throw option_error(option + " '" + value + "': " + e.what());
    }
  }
}

}  // namespace

void capture_options::set(std::string const& name, std::string const& value) {
  if (name == "--capture-range" || name == "-c") {
    if (value != "none" && value != "cudaProfilerApi" && value != "nvtx") {
      throw option_error("--capture-range takes none, cudaProfilerApi or nvtx, not '" + value +
                         "'");
    }
    range = value;
  } else if (name == "--nvtx-capture" || name == "-p") {
    name_at_domain const parts = split_at_domain(value);
    if (parts.range.empty() || (parts.has_domain && parts.domain.empty())) {
      throw option_error("--nvtx-capture takes RANGE, RANGE@DOMAIN or RANGE@*, not '" + value +
                         "'");
    }
    check_patterns("--nvtx-capture", value, {parts.range, parts.domain});
    nvtx_capture = value;
  } else if (name == "--capture-range-end") {
    if (value == "stop" || value == "none" || value == "repeat") {
      range_end = value;
      repeat = 0;
    } else if (value.rfind("repeat:", 0) == 0) {
      std::string const n = value.substr(7);
      char* end = nullptr;
      errno = 0;
      unsigned long const v = std::strtoul(n.c_str(), &end, 10);
      if (n.empty() || n[0] == '-' || *end != '\0' || errno != 0 || v == 0 || v > 1'000'000'000) {
        throw option_error("--capture-range-end=repeat:N takes a count N of 1 or more, not '" + n +
                           "'");
      }
      range_end = "repeat";
      repeat = static_cast<std::uint32_t>(v);
    } else if (value == "stop-shutdown" || value.rfind("repeat-shutdown", 0) == 0) {
      throw option_error("--capture-range-end=" + value +
                         " is not supported: nvtxpp-capture never ends the program (use stop or "
                         "repeat[:N])");
    } else {
      throw option_error("--capture-range-end takes stop, none or repeat[:N], not '" + value + "'");
    }
  } else if (name == "--delay" || name == "-y") {
    delay_ns = seconds("--delay", value);
  } else if (name == "--duration" || name == "-d") {
    duration_ns = seconds("--duration", value);
    if (duration_ns == 0) {
      throw option_error("--duration must be more than 0 seconds");
    }
  } else if (name == "--nvtx-domain-include" || name == "--nvtx-domain-exclude") {
    check_patterns(name, value, split_name_list(value));
    (name == "--nvtx-domain-include" ? domain_include : domain_exclude) = value;
  }
}

void capture_options::validate() const {
  if (!nvtx_capture.empty() && range != "nvtx") {
    throw option_error("--nvtx-capture needs --capture-range=nvtx");
  }
  if (range == "nvtx" && nvtx_capture.empty()) {
    throw option_error("--capture-range=nvtx needs --nvtx-capture=RANGE[@DOMAIN]");
  }
  if (!domain_include.empty() && !domain_exclude.empty()) {
    throw option_error("--nvtx-domain-include and --nvtx-domain-exclude cannot be used together");
  }
}

void capture_options::export_env(std::int64_t t0_ns) const {
  auto put = [](char const* name, std::string const& v) {
    if (v.empty()) {
      ::unsetenv(name);
    } else {
      ::setenv(name, v.c_str(), 1);
    }
  };
  put("NVTXPP_CAPTURE_RANGE", windowed() ? range : std::string{});
  put("NVTXPP_CAPTURE_NVTX", nvtx_capture);
  put("NVTXPP_CAPTURE_RANGE_END",
      windowed() ? range_end + ":" + std::to_string(repeat) : std::string{});
  put("NVTXPP_CAPTURE_T0", windowed() ? std::to_string(t0_ns) : std::string{});
  put("NVTXPP_CAPTURE_DELAY_NS", delay_ns != 0 ? std::to_string(delay_ns) : std::string{});
  put("NVTXPP_CAPTURE_DURATION_NS", duration_ns != 0 ? std::to_string(duration_ns) : std::string{});
  put("NVTXPP_CAPTURE_DOMAIN_INCLUDE", domain_include);
  put("NVTXPP_CAPTURE_DOMAIN_EXCLUDE", domain_exclude);
}

}  // namespace nvtxpp::capture::cli
