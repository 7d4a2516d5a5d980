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

constexpr char size_units[] = "B, KB, MB, GB, KiB, MiB, GiB";
constexpr char duration_units[] = "ns, us, ms, s, m, min, h";

/// Nanoseconds per `unit` of a duration; 0 when it is none.
double duration_scale(std::string const& unit) {
  if (unit == "ns") {
    return 1;
  }
  if (unit == "us") {
    return 1e3;
  }
  if (unit == "ms") {
    return 1e6;
  }
  if (unit == "s") {
    return 1e9;
  }
  if (unit == "m" || unit == "min") {
    return 60e9;
  }
  if (unit == "h") {
    return 3600e9;
  }
  return 0;
}

/// Bytes per `unit` of a size (any case); 0 when it is none.
double size_scale(std::string const& unit) {
  std::string u;
  for (char c : unit) {
    u += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  }
  if (u == "B") {
    return 1;
  }
  if (u == "KB" || u == "KIB") {
    return 1024.0;
  }
  if (u == "MB" || u == "MIB") {
    return 1024.0 * 1024.0;
  }
  if (u == "GB" || u == "GIB") {
    return 1024.0 * 1024.0 * 1024.0;
  }
  return 0;
}

}  // namespace

std::int64_t parse_duration(std::string const& option, std::string const& value) {
  double n = 0;
  std::string unit;
  double const scale = split_number(value, n, unit) ? duration_scale(unit) : 0;
  if (scale == 0 && !unit.empty()) {
    throw option_error(option + ": unknown duration unit '" + unit + "' in '" + value +
                       "' (a duration takes " + duration_units + ")");
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
  if (!split_number(value, n, unit) || unit.empty()) {
    throw option_error(option +
                       " takes a size (64MB, 1GB) or a duration (30s, 5m) with its unit, " +
                       "not '" + value + "'");
  }
  double const scale = size_scale(unit);
  if (scale == 0) {
    if (duration_scale(unit) != 0) {
      return 0;  // a duration (5m is five minutes)
    }
    // A unit of neither kind: said as such, never as a malformed duration ("1TB").
    bool const looks_like_size = unit.back() == 'B' || unit.back() == 'b';
    throw option_error(option + ": unknown " + (looks_like_size ? "size " : "") + "unit '" + unit +
                       "' in '" + value + "' (a size takes " + size_units +
                       (looks_like_size ? "" : std::string{"; a duration "} + duration_units) +
                       ")");
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
