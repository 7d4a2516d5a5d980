// Shell-style patterns over range names (name_pattern.hpp).

#include "name_pattern.hpp"

#include <cstddef>
#include <stdexcept>

namespace nvtxpp::capture {

namespace {

/// Where the bracket expression starting at `open` (`[`) ends (index of its `]`), or npos.
std::size_t bracket_end(std::string_view p, std::size_t open) noexcept {
  std::size_t i = open + 1;
  if (i < p.size() && (p[i] == '!' || p[i] == '^')) {
    ++i;
  }
  if (i < p.size() && p[i] == ']') {
    ++i;  // a leading ']' is a member
  }
  for (; i < p.size(); ++i) {
    if (p[i] == '\\') {
      ++i;
    } else if (p[i] == ']') {
      return i;
    }
  }
  return std::string_view::npos;
}

/// Whether `c` is in the set `p[open..close]` (close at its `]`).
bool in_set(std::string_view p, std::size_t open, std::size_t close, char c) noexcept {
  std::size_t i = open + 1;
  bool negate = false;
  if (p[i] == '!' || p[i] == '^') {
    negate = true;
    ++i;
  }
  bool found = false;
  while (i < close) {
    char lo = p[i];
    if (lo == '\\' && i + 1 < close) {
      lo = p[++i];
    }
    ++i;
    char hi = lo;
    if (i + 1 < close && p[i] == '-') {
      hi = p[i + 1];
      if (hi == '\\' && i + 2 < close) {
        hi = p[i + 2];
        ++i;
      }
      i += 2;
    }
    auto const u = static_cast<unsigned char>(c);
    if (static_cast<unsigned char>(lo) <= u && u <= static_cast<unsigned char>(hi)) {
      found = true;
    }
  }
  return found != negate;
}

}  // namespace

bool has_wildcards(std::string_view text) noexcept {
  return text.find_first_of("*?[\\") != std::string_view::npos;
}

name_pattern::name_pattern(std::string_view text) : text_(text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    char const c = text[i];
    if (c == '\\') {
      if (i + 1 == text.size()) {
        throw std::invalid_argument("pattern '" + text_ + "' ends in a lone '\\'");
      }
      unescaped_ += text[++i];
      continue;
    }
    if (c == '*' || c == '?') {
      literal_ = false;
      continue;
    }
    if (c == '[') {
      std::size_t const close = bracket_end(text, i);
      if (close == std::string_view::npos) {
        throw std::invalid_argument("pattern '" + text_ + "': the '[' at position " +
                                    std::to_string(i + 1) + " has no closing ']'");
      }
      // Reversed ranges ([z-a]) match nothing: almost surely a mistake.
      for (std::size_t k = i + 1; k + 2 < close; ++k) {
        if (text[k + 1] == '-' && text[k] != '\\' &&
            static_cast<unsigned char>(text[k]) > static_cast<unsigned char>(text[k + 2]) &&
            text[k + 2] != ']') {
          throw std::invalid_argument("pattern '" + text_ + "': the range '" +
                                      std::string(text.substr(k, 3)) + "' is reversed");
        }
      }
      literal_ = false;
      i = close;
      continue;
    }
    unescaped_ += c;
  }
}

bool name_pattern::matches(std::string_view name) const noexcept {
  if (literal_) {
    return name == unescaped_;
  }
  std::string_view const p = text_;
  // Iterative matcher with one backtrack point (the last '*'): linear in practice, never
  // exponential (a pattern of many stars against a long name stays O(|p| * |name|)).
  std::size_t pi = 0;
  std::size_t ni = 0;
  std::size_t star_p = std::string_view::npos;
  std::size_t star_n = 0;
  while (ni < name.size()) {
    if (pi < p.size()) {
      char const c = p[pi];
      if (c == '*') {
        star_p = pi++;
        star_n = ni;
        continue;
      }
      if (c == '?') {
        ++pi;
        ++ni;
        continue;
      }
      if (c == '[') {
        std::size_t const close = bracket_end(p, pi);
        if (in_set(p, pi, close, name[ni])) {
          pi = close + 1;
          ++ni;
          continue;
        }
      } else {
        char const want = (c == '\\') ? p[pi + 1] : c;
        if (want == name[ni]) {
          pi += (c == '\\') ? 2 : 1;
          ++ni;
          continue;
        }
      }
    }
    if (star_p == std::string_view::npos) {
      return false;
    }
    pi = star_p + 1;
    ni = ++star_n;
  }
  while (pi < p.size() && p[pi] == '*') {
    ++pi;
  }
  return pi == p.size();
}

std::string fold_digits(std::string_view name) {
  auto const is_digit = [](char c) { return c >= '0' && c <= '9'; };
  auto const is_letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  std::string out;
  out.reserve(name.size());
  for (std::size_t i = 0; i < name.size();) {
    char const c = name[i];
    if (is_digit(c)) {
      std::size_t end = i;
      while (end < name.size() && is_digit(name[end])) {
        ++end;
      }
      // A number inside a word (H2D, D2H) is part of the name, not a counter.
      bool const in_word =
          i > 0 && is_letter(name[i - 1]) && end < name.size() && is_letter(name[end]);
      if (in_word) {
        out.append(name.substr(i, end - i));
      } else {
        out += '*';
      }
      i = end;
      continue;
    }
    if (c == '*' || c == '?' || c == '[' || c == '\\') {
      out += '\\';
    }
    out += c;
    ++i;
  }
  return out;
}

name_grouping::name_grouping(std::vector<std::string> const& patterns, bool fold) : fold_(fold) {
  patterns_.reserve(patterns.size());
  for (auto const& p : patterns) {
    patterns_.emplace_back(p);
  }
}

std::string name_grouping::group_of(std::string_view name) const {
  for (auto const& p : patterns_) {
    if (p.matches(name)) {
      return p.text();
    }
  }
  if (fold_) {
    return fold_digits(name);
  }
  return std::string{name};
}

}  // namespace nvtxpp::capture
