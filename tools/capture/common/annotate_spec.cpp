// The "FUNC@LIB" call specification (annotate_spec.hpp).
#include "annotate_spec.hpp"

#include <fnmatch.h>

namespace nvtxpp::capture {
namespace {

std::string trimmed(std::string const& s) {
  std::size_t const b = s.find_first_not_of(" \t");
  if (b == std::string::npos) {
    return {};
  }
  std::size_t const e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::vector<call_rule> parse_call_rules(std::string const& text, std::string* error) {
  std::vector<call_rule> out;
  std::size_t from = 0;
  while (from <= text.size()) {
    std::size_t const to = std::min(text.find(',', from), text.size());
    std::string const entry = trimmed(text.substr(from, to - from));
    from = to + 1;
    if (entry.empty()) {
      continue;
    }
    std::size_t const at = entry.find('@');
    std::string why;
    if (at == std::string::npos) {
      why = "has no '@' (write FUNC@LIB, e.g. 'compress*@libz.so*')";
    } else if (entry.find('@', at + 1) != std::string::npos) {
      why = "has more than one '@'";
    } else if (at == 0) {
      why = "names no function before '@'";
    } else if (at + 1 == entry.size()) {
      why = "names no library after '@'";
    }
    if (!why.empty()) {
      if (error != nullptr) {
        *error = "call specification '" + entry + "' " + why;
      }
      return {};
    }
    out.push_back({entry.substr(0, at), entry.substr(at + 1)});
  }
  if (out.empty() && error != nullptr) {
    *error = "empty call specification";
  }
  return out;
}

bool glob_match(char const* pattern, char const* text) { return ::fnmatch(pattern, text, 0) == 0; }

}  // namespace nvtxpp::capture
