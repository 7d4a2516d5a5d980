/// @file
/// @brief `nvtxpp-capture top`'s terminal screen (ncurses): the header, the table and a line of
/// keys at the bottom, fitted to the terminal (80x24 and up) and redrawn when it is resized.
/// Keys as in top/htop: sort by total (t), self (s), p99 (p), calls (c) or name (n); `/` a filter
/// (a name pattern, typed at the bottom, Enter to apply, Esc to drop); space pauses; h a row per
/// thread; q quits. The terminal is given back (endwin) however the screen ends: q, the caller's
/// signal flag, the program's end, an exception.
#pragma once

#include "top_source.hpp"
#include "top_text.hpp"

#include <string>

namespace nvtxpp::capture::live {

/// @brief What the keys change.
struct screen_view {
  view_options view;
  bool paused = false;
  bool quit = false;
  bool editing = false;  ///< the filter is being typed
  std::string typed;     ///< what was typed of it
  std::string message;   ///< one line above the table until the next key ("": none)
};

/// @brief The screen. One at a time; the terminal is the screen's while it lives.
class top_screen {
 public:
  /// @throws std::runtime_error when the terminal cannot be used (no terminal, unknown TERM)
  top_screen();
  ~top_screen();
  top_screen(top_screen const&) = delete;
  top_screen& operator=(top_screen const&) = delete;

  /// @brief Gives the terminal back now (later calls do nothing).
  void close();

  /// @brief Waits up to `timeout_ms` for a key and applies it to `v`.
  /// @return true when the screen must be drawn again (a key changed the view, the terminal
  /// was resized)
  bool handle_key(int timeout_ms, screen_view& v);

  /// @brief Draws the header, the rows that fit and the bottom line.
  void draw(program_state const& p, live_snapshot const& snap, screen_view const& v);

 private:
  bool open_ = false;
  bool utf8_ = false;
};

}  // namespace nvtxpp::capture::live
