/// @file
/// @brief How the command line writes a range with its domain (`RANGE@DOMAIN`) and a list of
/// names (`keep,de\,fault`) in the options that take name patterns (name_pattern.hpp):
/// `--trigger`, `--nvtx-capture`, `--nvtx-domain-include` and `--nvtx-domain-exclude`. The parts
/// keep their escapes (the pattern reads them), so `\@` and `\,` are an '@' and a ',' of a
/// name. Header-only: the launcher and the injection library share it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nvtxpp::capture {

/// @brief A range pattern and, after its `@`, a domain pattern.
struct name_at_domain {
  std::string range;        ///< before the '@' (all of the text without one)
  std::string domain;       ///< after it
  bool has_domain = false;  ///< an unescaped '@' was there
};

/// @brief Splits `text` at its last '@' that no '\' escapes.
[[nodiscard]] inline name_at_domain split_at_domain(std::string_view text) {
  std::size_t at = std::string_view::npos;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '@') {
      at = i;
    }
  }
  name_at_domain out;
  if (at == std::string_view::npos) {
    out.range = std::string{text};
    return out;
  }
  out.range = std::string{text.substr(0, at)};
  out.domain = std::string{text.substr(at + 1)};
  out.has_domain = true;
  return out;
}

/// @brief Splits a comma list at the commas that no '\' escapes (empty items are dropped).
[[nodiscard]] inline std::vector<std::string> split_name_list(std::string_view list) {
  std::vector<std::string> out;
  std::string cur;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i] == '\\' && i + 1 < list.size()) {
      cur += list[i];
      cur += list[++i];
    } else if (list[i] == ',') {
      if (!cur.empty()) {
        out.push_back(std::move(cur));
      }
      cur.clear();
    } else {
      cur += list[i];
    }
  }
  if (!cur.empty()) {
    out.push_back(std::move(cur));
  }
  return out;
}

}  // namespace nvtxpp::capture
