// The no-rebuild route's call specification: "FUNC@LIB[,FUNC@LIB...]", globs (fnmatch) on a
// function's name and on a shared library's file name or soname. Shared by the audit library
// (NVTXPP_ANNOTATE_CALLS) and nvtxpp-capture's --annotate-calls, which checks it before the run.
#pragma once

#include <string>
#include <vector>

namespace nvtxpp::capture {

/// One "FUNC@LIB" entry.
struct call_rule {
  std::string function;  ///< glob on the symbol's name (C++ names are matched mangled)
  std::string library;   ///< glob on the library's file name (no directory) or its soname
};

/// Parses @p text: comma-separated "FUNC@LIB" entries (spaces around them ignored). An entry
/// without '@', with an empty side, or with more than one '@' is an error: @p error receives
/// a one-line reason and the result is empty.
std::vector<call_rule> parse_call_rules(std::string const& text, std::string* error);

/// fnmatch(3) without flags: '*', '?' and '[...]'.
bool glob_match(char const* pattern, char const* text);

}  // namespace nvtxpp::capture
