/// @file
/// @brief Shell-style patterns over range names (`Train step *`, `Layer ?`, `[A-Z]*`), the one
/// matcher used wherever a user names ranges: `--trigger`, `--nvtx-capture`, `diff --group` and
/// `--gate`, the summaries' grouping. A name without `*`, `?`, `[` or `\` is an exact name, so
/// every name that worked before a pattern syntax existed means what it meant.
///
/// Syntax (as fnmatch(3) without flags, but validated up front):
/// - `*` any run of characters (also none), `?` one character;
/// - `[abc]`, `[a-z]`, `[!a-z]` (or `[^a-z]`) one character of (not of) a set; `]` first in the
///   set stands for itself;
/// - `\x` the character x itself (`\*` a star).
/// Malformed: a `[` with no closing `]`, a `\` at the end, a range whose ends are reversed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nvtxpp::capture {

/// @brief A validated shell-style pattern.
class name_pattern {
 public:
  /// @brief Parses `text`. @throws std::invalid_argument naming what is wrong and where
  explicit name_pattern(std::string_view text);

  /// @brief Whether `name` matches the whole pattern.
  [[nodiscard]] bool matches(std::string_view name) const noexcept;

  /// @brief Whether the pattern has no wildcard (matches exactly one name).
  [[nodiscard]] bool is_literal() const noexcept { return literal_; }

  /// @brief The pattern as written.
  [[nodiscard]] std::string const& text() const noexcept { return text_; }

  /// @brief The literal name, with escapes removed (only meaningful when is_literal()).
  [[nodiscard]] std::string const& literal() const noexcept { return unescaped_; }

 private:
  std::string text_;
  std::string unescaped_;
  bool literal_ = true;
};

/// @brief Whether `text` uses any pattern syntax (`*`, `?`, `[`, `\`).
[[nodiscard]] bool has_wildcards(std::string_view text) noexcept;

/// @brief `name` with every run of decimal digits replaced by `*`: "Train step 12" ->
/// "Train step *", "Layer 3/block 10" -> "Layer */block *", "layer0" -> "layer*". A number
/// inside a word (letters on both sides: "H2D Memory", "D2H") is kept. A name without digits is
/// returned as it is. The result, read as a pattern, matches `name` (its wildcards escaped).
[[nodiscard]] std::string fold_digits(std::string_view name);

/// @brief Grouping of numbered names into one series: the first pattern of `groups` that
/// matches `name` gives its group (the pattern's text); else, with `fold`, fold_digits(name);
/// else `name` itself.
class name_grouping {
 public:
  name_grouping() = default;
  /// @throws std::invalid_argument for a malformed pattern
  name_grouping(std::vector<std::string> const& patterns, bool fold);

  /// @brief The series `name` belongs to.
  [[nodiscard]] std::string group_of(std::string_view name) const;

  /// @brief Whether it changes any name at all (no patterns, no folding: identity).
  [[nodiscard]] bool active() const noexcept { return fold_ || !patterns_.empty(); }

 private:
  std::vector<name_pattern> patterns_;
  bool fold_ = false;
};

}  // namespace nvtxpp::capture
