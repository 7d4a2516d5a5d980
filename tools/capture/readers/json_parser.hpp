/// @file
/// @brief The JSON parser under the reader of our traces (json_reader.hpp): RFC 8259 values,
/// strict, nesting at most 64 deep, over text held whole in memory. Failures throw
/// json_input_error naming the file and the byte.
#pragma once

#include "json_reader.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nvtxpp::capture::json {

/// @brief A parsed JSON value. Numbers keep their text (times are read from it exactly).
struct value {
  enum class type : std::uint8_t { null, boolean, number, string, array, object };
  type t = type::null;
  bool b = false;
  std::string text;  ///< string contents, or a number's text
  std::vector<value> items;
  std::vector<std::pair<std::string, value>> members;

  /// @brief The member `key` of an object, or nullptr.
  [[nodiscard]] value const* get(std::string_view key) const;
  /// @brief The string member `key`, or "" when it is missing or not a string.
  [[nodiscard]] std::string_view str(std::string_view key) const;
};

/// @brief Parses `text` (the contents of `path`, named in errors) one value at a time, so a
/// caller can walk a large top-level object or array without holding it parsed whole.
class parser {
 public:
  parser(std::string_view text, std::string const& path)
      : p_{text.data()}, begin_{text.data()}, end_{text.data() + text.size()}, path_{path} {}

  /// @brief Throws json_input_error: "truncated" at the end of the text, else the byte offset.
  [[noreturn]] void fail(std::string_view what) const;
  /// @brief Whether the next character after white space is `c` (not consumed).
  [[nodiscard]] bool peek(char c);
  /// @brief Consumes `c` after white space, or fails.
  void expect(char c);
  /// @brief Consumes a ',' after white space if there is one.
  [[nodiscard]] bool comma();
  /// @brief Whether only white space is left.
  [[nodiscard]] bool at_end();
  /// @brief A string value.
  [[nodiscard]] std::string string();
  /// @brief Any value, `depth` levels below the top.
  [[nodiscard]] value parse(int depth = 0);

 private:
  void ws() noexcept;
  bool word(std::string_view w);
  std::string number();
  unsigned hex4();
  void unicode(std::string& out);

  char const* p_;
  char const* begin_;
  char const* end_;
  std::string const& path_;
};

}  // namespace nvtxpp::capture::json
