// The build route's filters: which functions get a range. Internal to nvtxpp::instrument.
#pragma once

#include <string>

namespace nvtxpp::instrument {

/// INCLUDE and EXCLUDE regular expressions (POSIX extended, matched anywhere in the display
/// name; anchor with ^ and $). A name is admitted when no INCLUDE was given or one matches, and
/// no EXCLUDE matches.
///
/// Sources: the lists each instrumented target registers at start-up (nvtxpp_instrument()'s
/// INCLUDE/EXCLUDE, through nvtxpp_instrument_add_rules), unless the environment sets
/// NVTXPP_INSTRUMENT_INCLUDE or NVTXPP_INSTRUMENT_EXCLUDE (';'-separated lists, read once at the
/// first decision; a set variable, even empty, replaces the registered list of its kind).
class filter_set {
 public:
  /// Whether @p name gets a range. Thread-safe; called once per function (slow path).
  bool admits(std::string const& name);
};

/// The process's filters.
filter_set& filters();

/// Registered rules so far (for tests and the verbose listing): "include: ...; exclude: ...".
std::string describe_filters();

}  // namespace nvtxpp::instrument

extern "C" {
/// Adds the rules of one instrumented target: two null-terminated arrays of regular expressions
/// (either may be null). Called by the start-up code nvtxpp_instrument() generates.
void nvtxpp_instrument_add_rules(char const* const* include, char const* const* exclude);
}
