/// @file
/// @brief What the launcher's option groups (capture_options.hpp, flight_options.hpp) share: the
/// error for a bad value, and taking an option in both of its forms, `--opt VALUE` and
/// `--opt=VALUE`.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace nvtxpp::capture::cli {

/// @brief An option with a bad value (exit 2).
struct option_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// @brief Takes argument `arg` if it is one of `names`: `set(name, value)` gets its value, which
/// `next()` gives for the `--opt VALUE` form. @return false when `arg` is none of `names`.
/// @throws what `set` or `next` throw (option_error for a bad value).
template <std::size_t N, class Next, class Set>
bool parse_option(char const* const (&names)[N], std::string const& arg, Next&& next, Set&& set) {
  for (char const* name : names) {
    std::string const n = name;
    if (arg == n) {
      set(n, next());
      return true;
    }
    if (arg.rfind(n + "=", 0) == 0) {
      set(n, arg.substr(n.size() + 1));
      return true;
    }
  }
  return false;
}

}  // namespace nvtxpp::capture::cli
