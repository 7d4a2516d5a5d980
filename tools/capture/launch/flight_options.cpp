// The flight recorder's options (flight_options.hpp).

#include "flight_options.hpp"

#include "../common/name_pattern.hpp"
#include "../common/name_spec.hpp"
#include "output_name.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace nvtxpp::capture::cli {

namespace {

/// A number followed by a unit; false when malformed.
bool split_number(std::string const& value, double& number, std::string& unit) {
  errno = 0;
  char* end = nullptr;
  number = std::strtod(value.c_str(), &end);
  if (value.empty() || end == value.c_str() || errno != 0 || !std::isfinite(number) || number < 0 ||
      value[0] == '-' || value[0] == '+' || value[0] == ' ') {
    return false;
  }
  unit.assign(end);
  return true;
}

constexpr char dump_mark = '\x01';  // stands for %n until a dump's number is known

}  // namespace

std::int64_t parse_duration(std::string const& option, std::string const& value) {
  double n = 0;
  std::string unit;
  double scale = 0;
  if (split_number(value, n, unit)) {
    if (unit == "ns") {
      scale = 1;
    } else if (unit == "us") {
      scale = 1e3;
    } else if (unit == "ms") {
      scale = 1e6;
    } else if (unit == "s") {
      scale = 1e9;
    } else if (unit == "m" || unit == "min") {
      scale = 60e9;
    } else if (unit == "h") {
      scale = 3600e9;
    }
  }
  double const ns = n * scale;
  if (scale == 0 || ns < 1 || ns > 9e18) {
    throw option_error(
        option + " takes a duration above 0 with a unit (250ms, 30s, 5m, 1h), not '" + value + "'");
  }
  return static_cast<std::int64_t>(std::llround(ns));
}

std::uint64_t parse_size(std::string const& option, std::string const& value) {
  double n = 0;
  std::string unit;
  if (!split_number(value, n, unit)) {
    throw option_error(option + " takes a duration (30s, 5m) or a size (64MB, 1GB), not '" + value +
                       "'");
  }
  std::string u;
  for (char c : unit) {
    u += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  }
  double scale = 0;
  if (u == "B") {
    scale = 1;
  } else if (u == "KB" || u == "KIB") {
    scale = 1024.0;
  } else if (u == "MB" || u == "MIB") {
    scale = 1024.0 * 1024.0;
  } else if (u == "GB" || u == "GIB") {
    scale = 1024.0 * 1024.0 * 1024.0;
  } else {
    return 0;  // not a size (5m is five minutes)
  }
  double const bytes = n * scale;
  if (bytes < 1 || bytes > 1e15) {
    throw option_error(
        option + " takes a size from 1B (the ring is made at least 1 MiB) up, not '" + value + "'");
  }
  return static_cast<std::uint64_t>(bytes);
}

trigger_spec parse_trigger(std::string const& value) {
  trigger_spec t;
  t.text = value;
  auto const gt = value.rfind('>');
  auto bad = [&](char const* why) {
    return option_error(
        "--trigger takes 'RANGE[@DOMAIN]>FACTORx' or 'RANGE[@DOMAIN]>DURATION' "
        "(e.g. 'step>3x', 'step@trainer>250ms'), not '" +
        value + "': " + why);
  };
  if (gt == std::string::npos || gt == 0 || gt + 1 == value.size()) {
    throw bad("a range name, '>' and a bound are needed");
  }
  std::string const bound = value.substr(gt + 1);
  name_at_domain const parts = split_at_domain(std::string_view{value}.substr(0, gt));
  if (parts.has_domain && (parts.range.empty() || parts.domain.empty())) {
    throw bad("empty range or domain around '@'");
  }
  t.range = parts.range;
  t.domain = parts.domain;
  try {
    static_cast<void>(name_pattern{t.range});
    static_cast<void>(name_pattern{t.domain});
  } catch (std::invalid_argument const& e) {
    throw option_error("--trigger '" + value + "': " + e.what());
  }
  if (bound.back() == 'x') {
    double f = 0;
    std::string unit;
    if (!split_number(bound, f, unit) || unit != "x" || f <= 1.0) {
      throw bad("a factor is a number above 1 followed by x");
    }
    t.factor = f;
  } else {
    try {
      t.bound_ns = parse_duration("--trigger", bound);
    } catch (option_error const&) {
      throw bad("the bound is neither FACTORx nor a duration with a unit");
    }
  }
  return t;
}

void flight_options::set(std::string const& name, std::string const& value) {
  if (name != "--flight-recorder") {
    set_any_ = true;
  }
  if (name == "--flight-recorder") {
    enabled = true;
    std::uint64_t const bytes = parse_size(name, value);
    if (bytes != 0) {
      ring_bytes = bytes;
      keep_ns = 0;
    } else {
      keep_ns = parse_duration("--flight-recorder (a duration or a size)", value);
      ring_bytes = duration_ring_bytes;
    }
  } else if (name == "--dump-on-exit") {
    if (value != "yes" && value != "no") {
      throw option_error("--dump-on-exit takes yes or no, not '" + value + "'");
    }
    dump_on_exit = value == "yes";
  } else if (name == "--trigger") {
    triggers.push_back(parse_trigger(value));
  } else if (name == "--trigger-max") {
    char* end = nullptr;
    errno = 0;
    unsigned long const v = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || value[0] == '-' || *end != '\0' || errno != 0 || v > 1'000'000) {
      throw option_error("--trigger-max takes a count (0 or more), not '" + value + "'");
    }
    trigger_max = static_cast<std::uint32_t>(v);
  } else if (name == "--trigger-cooldown") {
    cooldown_ns = value == "0" ? 0 : parse_duration(name, value);
  } else if (name == "--hang-timeout") {
    hang_ns = parse_duration(name, value);
  } else if (name == "--dump-scope") {
    if (value != "process" && value != "job") {
      throw option_error("--dump-scope takes process or job, not '" + value + "'");
    }
    job_scope = value == "job";
  }
}

void flight_options::validate() const {
  if (set_any_ && !enabled) {
    throw option_error(
        "--dump-on-exit, --dump-scope, --trigger, --trigger-max, --trigger-cooldown and "
        "--hang-timeout need "
        "--flight-recorder=LIMIT");
  }
}

std::string protect_dump_number(std::string const& pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += "%%";
      ++i;
    } else if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'n') {
      out += dump_mark;
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

std::string dump_name(std::string const& output, unsigned n) {
  if (output.find(dump_mark) == std::string::npos) {
    return insert_before_extension(output, "dump" + std::to_string(n));
  }
  std::string out;
  for (char c : output) {
    if (c == dump_mark) {
      out += std::to_string(n);
    } else {
      out += c;
    }
  }
  return out;
}

std::string stacks_name(std::string const& output) {
  std::string name;
  for (char c : output) {
    if (c != dump_mark) {
      name += c;
    }
  }
  auto const slash = name.rfind('/');
  auto const dot = name.rfind('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)) {
    name.resize(dot);
  }
  return name + ".stacks.txt";
}

}  // namespace nvtxpp::capture::cli
