/// @file
/// @brief What `nvtxpp-capture top` prints: the rows a view shows (sorted, filtered, cut) and
/// their text: the header, the table (its columns fitted to a width: the screen's, or a wide
/// plain table when standard output is not a terminal) and the JSON object of a refresh. The
/// terminal screen (top_screen.hpp) draws these same lines.
#pragma once

#include "../analyses/live_table.hpp"
#include "../common/name_pattern.hpp"
#include "top_source.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nvtxpp::capture::live {

/// @brief The orders a view sorts its rows by (keys of the screen, --sort).
enum class sort_key { total, self, p99, calls, name };

/// @brief "total", "self", "p99", "calls", "name".
[[nodiscard]] char const* to_string(sort_key k) noexcept;

/// @brief Reads a sort key's word. @return false when `text` is none
[[nodiscard]] bool parse_sort_key(std::string_view text, sort_key* out) noexcept;

/// @brief What of a snapshot a view shows.
struct view_options {
  sort_key sort = sort_key::total;
  std::string filter;  ///< a shell-style pattern over the rows' names ("": every row)
  std::shared_ptr<name_pattern const> pattern;  ///< `filter`, parsed (null: every row)
  std::size_t max_rows = 40;                    ///< rows shown at most (the rest summed up)
  bool by_thread = false;                       ///< a row per (name, thread)
};

/// @brief Sets `filter` (and its pattern). @return "" or what is wrong with the pattern
[[nodiscard]] std::string set_filter(view_options& v, std::string const& text);

/// @brief The rows a view shows, in its order, and what the others add up to.
struct view_rows {
  std::vector<live_row const*> shown;
  std::size_t more = 0;       ///< rows left out past max_rows
  double more_total_pct = 0;  ///< their total share
  std::size_t filtered = 0;   ///< rows the filter left out
};

/// @brief Sorts, filters and cuts `snap`'s rows as `v` says.
[[nodiscard]] view_rows select_rows(live_snapshot const& snap, view_options const& v);

/// @brief "6.00ms", "812us", "95ns", "1.25s"; "-" for 0.
[[nodiscard]] std::string format_duration(double ns);

/// @brief A row's trend: "+12%", "-3%", "0%", "new", or "" (no window before to compare).
[[nodiscard]] std::string format_trend(live_row const& r);

/// @brief The header's two lines (no newline at their ends): the program, pid, uptime and
/// window; ranges per second, records dropped, the GPU detail state, the view.
[[nodiscard]] std::vector<std::string> header_lines(program_state const& p,
                                                    live_snapshot const& snap,
                                                    view_options const& v, std::size_t width);

/// @brief The table's lines for `width` columns (the column heads first): the numbers, a
/// GPU% column when GPU detail is recorded, a Thread column when there is room (or by
/// thread), and the range's name in what is left, cut with "…" where too long.
[[nodiscard]] std::vector<std::string> table_lines(live_snapshot const& snap, view_rows const& rows,
                                                   view_options const& v, std::size_t width);

/// @brief The plain form of a refresh (standard output not a terminal, --once, the final table
/// after the screen): the header and the table, `width` columns wide at most (160 off a
/// terminal; a terminal's own width on one), each line ended.
[[nodiscard]] std::string plain_text(program_state const& p, live_snapshot const& snap,
                                     view_options const& v, std::size_t width = 160);

/// @brief The JSON form of a refresh: one object on one line (ended), the rows as the view
/// selects them.
[[nodiscard]] std::string json_text(program_state const& p, live_snapshot const& snap,
                                    view_options const& v);

}  // namespace nvtxpp::capture::live
