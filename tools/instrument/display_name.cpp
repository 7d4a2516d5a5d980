// display_name() and function_name(): from a mangled symbol to the name a range shows.
#include "symbols.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>

namespace nvtxpp::instrument {
namespace {

bool ends_with(std::string const& s, char const* tail) {
  std::size_t const n = std::strlen(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

/// Drops " [clone .cold]"-style suffixes (compiler-made copies of one function).
void strip_clones(std::string& s) {
  for (std::size_t at = s.rfind(" [clone "); at != std::string::npos; at = s.rfind(" [clone ")) {
    if (s.back() != ']') {
      break;
    }
    s.erase(at);
  }
}

/// Drops the trailing cv/ref qualifiers of a member function ("() const &" -> "()").
void strip_qualifiers(std::string& s) {
  for (bool again = true; again;) {
    again = false;
    while (!s.empty() && s.back() == ' ') {
      s.pop_back();
    }
    for (char const* q : {"const", "volatile", "&&", "&", "noexcept", "transaction_safe"}) {
      if (ends_with(s, q) && s.size() > std::strlen(q)) {
        char const before = s[s.size() - std::strlen(q) - 1];
        if (before == ' ' || before == ')' || before == '&') {
          s.erase(s.size() - std::strlen(q));
          again = true;
          break;
        }
      }
    }
  }
}

/// Erases every "[abi:...]" tag.
void strip_abi_tags(std::string& s) {
  for (std::size_t at = s.find("[abi:"); at != std::string::npos; at = s.find("[abi:", at)) {
    std::size_t const close = s.find(']', at);
    if (close == std::string::npos) {
      break;
    }
    s.erase(at, close - at + 1);
  }
}

/// Position just after the return type (0 when there is none): the last space outside any
/// bracket before the function's own name. Scanning stops at an "operator" keyword, whose
/// name may hold spaces and bracket characters ("operator new", "operator< <int>").
std::size_t name_start(std::string const& head) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < head.size(); ++i) {
    char const c = head[i];
    if (depth == 0 && head.compare(i, 8, "operator") == 0 &&
        (i == 0 || head[i - 1] == ':' || head[i - 1] == ' ')) {
      break;
    }
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ' ' && depth == 0) {
      start = i + 1;
    }
  }
  return start;
}

}  // namespace

std::string display_name(std::string const& demangled) {
  std::string s = demangled;
  strip_clones(s);
  strip_qualifiers(s);
  if (s.empty() || s.back() != ')') {
    return demangled;  // not a function signature
  }
  // The parameter list: the last parenthesised group.
  int depth = 0;
  std::size_t open = std::string::npos;
  for (std::size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') {
      ++depth;
    } else if (s[i] == '(' && --depth == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string::npos || open == 0) {
    return demangled;
  }
  std::string head = s.substr(0, open);
  strip_abi_tags(head);
  return head.substr(name_start(head));
}

std::string function_name(char const* mangled) {
  if (mangled == nullptr) {
    return {};
  }
  if (mangled[0] != '_' || mangled[1] != 'Z') {
    return mangled;  // C, or not mangled
  }
  int status = 0;
  char* out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return mangled;
  }
  std::string name = display_name(out);
  std::free(out);
  return name;
}

}  // namespace nvtxpp::instrument
