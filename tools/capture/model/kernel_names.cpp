// Kernel names as Nsight Systems writes them (kernel_names.hpp).

#include "kernel_names.hpp"

#include <cstdlib>

#if NVTXPP_CAPTURE_HAVE_CUFILT
#include <nv_decode.h>
#else
#include <cxxabi.h>
#endif

namespace nvtxpp::capture {

namespace {

bool is_space(char c) { return c == ' '; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && is_space(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

/// One part between separators: "float const*" -> "const float *", "float*" -> "float *".
std::string normalise_part(std::string_view part) {
  std::string_view const t = trim(part);
  std::size_t stars = t.size();
  while (stars > 0 && (t[stars - 1] == '*' || t[stars - 1] == '&')) {
    --stars;
  }
  std::string_view base = trim(t.substr(0, stars));
  std::string_view const declarator = t.substr(stars);
  if (base.empty() || base.find_first_of("*&") != std::string_view::npos) {
    return std::string{part};  // another shape: left as it is
  }
  bool constant = false;
  constexpr std::string_view suffix = " const";
  if (base.size() > suffix.size() && base.substr(base.size() - suffix.size()) == suffix) {
    constant = true;
    base = trim(base.substr(0, base.size() - suffix.size()));
    if (base.find(" const") != std::string_view::npos || base.rfind("const ", 0) == 0) {
      return std::string{part};
    }
  }
  if (!constant && declarator.empty()) {
    return std::string{part};
  }
  std::size_t const lead = part.find_first_not_of(' ');
  std::size_t const last = part.find_last_not_of(' ');
  std::string out{part.substr(0, lead)};  // the space after a comma stays
  if (constant) {
    out += "const ";
  }
  out += base;
  if (!declarator.empty()) {
    out += ' ';
    out += declarator;
  }
  out += part.substr(last + 1);
  return out;
}

}  // namespace

std::string normalise_demangled(std::string_view demangled) {
  std::string s{demangled};
  constexpr std::string_view anon = "(anonymous namespace)";
  for (std::size_t at = s.find(anon); at != std::string::npos; at = s.find(anon, at)) {
    s.replace(at, anon.size(), "<unnamed>");
  }
  std::string out;
  std::size_t from = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    bool const sep =
        i == s.size() || s[i] == ',' || s[i] == '(' || s[i] == ')' || s[i] == '<' || s[i] == '>';
    // "<unnamed>" is a name, not a template's brackets.
    if (sep && i < s.size() && (s[i] == '<' || s[i] == '>') &&
        (s.compare(i, 9, "<unnamed>") == 0 || (i >= 8 && s.compare(i - 8, 9, "<unnamed>") == 0))) {
      continue;
    }
    if (sep) {
      out += normalise_part(std::string_view{s}.substr(from, i - from));
      if (i < s.size()) {
        out += s[i];
      }
      from = i + 1;
    }
  }
  return out;
}

std::string demangle_kernel_name(std::string_view name) {
  if (name.rfind("_Z", 0) != 0) {
    return {};
  }
  std::string const z{name};
  int status = 0;
  std::string out;
#if NVTXPP_CAPTURE_HAVE_CUFILT
  char* d = __cu_demangle(z.c_str(), nullptr, nullptr, &status);
  if (status == 0 && d != nullptr) {
    out = d;
  }
#else
  char* d = abi::__cxa_demangle(z.c_str(), nullptr, nullptr, &status);
  if (status == 0 && d != nullptr) {
    out = normalise_demangled(d);
  }
#endif
  std::free(d);
  return out;
}

char const* kernel_name_demangler() noexcept {
#if NVTXPP_CAPTURE_HAVE_CUFILT
  return "cu_demangle";
#else
  return "cxa_demangle";
#endif
}

}  // namespace nvtxpp::capture
