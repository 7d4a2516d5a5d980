// nvtxpp-capture top's terminal screen (top_screen.hpp), through ncurses.

#include "top_screen.hpp"

#include <curses.h>
#include <langinfo.h>

#include <clocale>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvtxpp::capture::live {

namespace {

constexpr char help_line[] =
    " q:quit t:total s:self p:p99 c:calls n:name /:filter space:pause h:threads";

/// The text as this terminal can show it: as it is in a UTF-8 locale; else each character
/// past ASCII as '?' ('~' for the "…" of a cut name).
std::string for_terminal(std::string const& s, bool utf8) {
  if (utf8) {
    return s;
  }
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    auto const c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    out += s.compare(i, 3, "\xe2\x80\xa6") == 0 ? '~' : '?';
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0U) == 0x80U) {
      ++i;
    }
  }
  return out;
}

void put_line(int y, std::string const& text, bool utf8) {
  std::string const shown = for_terminal(text, utf8);
  move(y, 0);
  clrtoeol();
  // addnstr counts bytes; the lines are fitted to the width in characters already.
  addnstr(shown.c_str(), static_cast<int>(shown.size()));
}

}  // namespace

top_screen::top_screen() {
  std::setlocale(LC_ALL, "");
  utf8_ = std::strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
  // newterm rather than initscr: a terminal it cannot use is an error to report, not an exit.
  if (newterm(nullptr, stdout, stdin) == nullptr) {
    throw std::runtime_error("cannot use this terminal (TERM unset or unknown)");
  }
  open_ = true;
  cbreak();  // Ctrl-C still raises SIGINT: the caller's handler sets its flag
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
}

top_screen::~top_screen() { close(); }

void top_screen::close() {
  if (open_) {
    curs_set(1);
    endwin();
    open_ = false;
  }
}

bool top_screen::handle_key(int timeout_ms, screen_view& v) {
  timeout(timeout_ms);
  int const k = getch();
  if (k == ERR) {
    return false;
  }
  if (k == KEY_RESIZE) {
    return true;
  }
  v.message.clear();
  if (v.editing) {
    if (k == '\n' || k == '\r' || k == KEY_ENTER) {
      v.editing = false;
      if (std::string const why = set_filter(v.view, v.typed); !why.empty()) {
        v.message = "filter: " + why;
      }
    } else if (k == 27) {  // Esc
      v.editing = false;
    } else if (k == KEY_BACKSPACE || k == 127 || k == 8) {
      if (!v.typed.empty()) {
        v.typed.pop_back();
      }
    } else if (k >= 32 && k < 256) {
      v.typed += static_cast<char>(k);
    }
    return true;
  }
  switch (k) {
    case 'q':
    case 'Q':
      v.quit = true;
      break;
    case 't':
      v.view.sort = sort_key::total;
      break;
    case 's':
      v.view.sort = sort_key::self;
      break;
    case 'p':
      v.view.sort = sort_key::p99;
      break;
    case 'c':
      v.view.sort = sort_key::calls;
      break;
    case 'n':
      v.view.sort = sort_key::name;
      break;
    case 'h':
      v.view.by_thread = !v.view.by_thread;
      break;
    case ' ':
      v.paused = !v.paused;
      break;
    case '/':
      v.editing = true;
      v.typed = v.view.filter;
      break;
    default:
      return false;
  }
  return true;
}

void top_screen::draw(program_state const& p, live_snapshot const& snap, screen_view const& v) {
  if (!open_) {
    return;
  }
  int const lines = LINES;
  auto const width = static_cast<std::size_t>(COLS > 0 ? COLS : 80);
  erase();
  auto header = header_lines(p, snap, v.view, width);
  if (v.paused && !header.empty()) {
    header[0] = header_lines(p, snap, v.view, width > 9 ? width - 9 : width)[0] + "  PAUSED";
  }
  int y = 0;
  for (auto const& h : header) {
    if (y < lines - 1) {
      put_line(y++, h, utf8_);
    }
  }
  if (y < lines - 1) {
    put_line(y++, v.message, utf8_);
  }
  // What fits between the header and the bottom line: the column heads, the rows, a line for
  // the rows left out.
  int const room = lines - 1 - y;
  view_options shown = v.view;
  shown.max_rows = room > 2 ? static_cast<std::size_t>(room - 2) : 0;
  view_rows const rows = select_rows(snap, shown);
  auto const table = table_lines(snap, rows, shown, width);
  for (std::size_t i = 0; i < table.size() && y < lines - 1; ++i) {
    if (i == 0) {
      attron(A_BOLD);
    }
    put_line(y++, table[i], utf8_);
    if (i == 0) {
      attroff(A_BOLD);
    }
  }
  std::string const bottom =
      v.editing ? "filter (Enter applies, Esc drops): " + v.typed : std::string{help_line};
  attron(A_REVERSE);
  put_line(lines - 1, bottom.substr(0, width - 1), utf8_);  // not the last cell: no scroll
  attroff(A_REVERSE);
  refresh();
}

}  // namespace nvtxpp::capture::live
