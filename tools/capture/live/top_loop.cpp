// nvtxpp-capture top's run (top_loop.hpp).

#include "top_loop.hpp"

#include "../common/die_like.hpp"
#include "top_screen.hpp"
#include "top_source.hpp"

#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

namespace nvtxpp::capture::live {

namespace {

/// The signal that asked top to stop (0: none). The handlers only set it: the loop sees it
/// within one key wait (50 ms) or one poll (250 ms) and gives the terminal back.
volatile sig_atomic_t g_signal = 0;

void on_signal(int sig) { g_signal = sig; }

/// SIGINT, SIGTERM, SIGHUP: set before the screen takes the terminal (ncurses leaves signals
/// that have a handler alone). No SA_RESTART: a wait they interrupt returns at once.
void catch_signals() {
  struct sigaction sa {};
  sa.sa_handler = &on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    ::sigaction(sig, &sa, nullptr);
  }
}

std::int64_t mono_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// How often the rings are read, however long the interval: a ring never laps top between
/// two reads, and the program's end is seen within this.
constexpr std::int64_t poll_ns = 250'000'000;

/// Reads the rings until `until_ns`, the program's end or a signal.
void wait_polling(top_source& src, std::int64_t until_ns) {
  src.poll();
  while (!src.ended() && g_signal == 0) {
    std::int64_t const now = mono_ns();
    if (now >= until_ns) {
      break;
    }
    std::int64_t const nap = std::min(poll_ns, until_ns - now);
    timespec const t{static_cast<time_t>(nap / 1'000'000'000),
                     static_cast<long>(nap % 1'000'000'000)};
    ::nanosleep(&t, nullptr);
    src.poll();
  }
}

/// A launch's exit status: the program's (the launcher's mirrors it); a death by a signal, by
/// the same signal.
int exit_like(int status) {
  if (status < 0) {
    return 0;
  }
  if (WIFSIGNALED(status)) {
    int const sig = WTERMSIG(status);
    std::fflush(nullptr);
    raise_as_default(sig);
    return 128 + sig;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/// The width a plain table may take: the terminal's, when standard output is one (the final
/// table after the screen, `--once` typed at a prompt), else 160 columns.
std::size_t plain_width() noexcept {
  winsize w{};
  if (::isatty(STDOUT_FILENO) != 0 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 &&
      w.ws_col >= 40) {
    return w.ws_col;
  }
  return 160;
}

void print(top_source& src, top_options const& o, view_options const& view) {
  live_snapshot const snap = src.snapshot(view.by_thread);
  program_state const state = src.state();
  std::string const text =
      o.json ? json_text(state, snap, view) : plain_text(state, snap, view, plain_width());
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

/// A launch whose watching stopped (a signal, q): waits for the program, prints its final
/// table, and gives its status. A second signal leaves it running (its launcher goes on).
int finish_launch(top_source& src, top_options const& o, view_options const& view,
                  std::string const& log) {
  if (!src.ended()) {
    std::fprintf(stderr,
                 "nvtxpp-capture top: waiting for the program (pid %u) to end; Ctrl-C again "
                 "leaves it running%s%s\n",
                 src.state().pid, log.empty() ? "" : "; its output goes to ", log.c_str());
    int const first = g_signal;
    g_signal = 0;
    if (first == SIGTERM || first == SIGHUP) {
      ::kill(src.launcher(), first);  // passed on to the program, as the launcher does
    }
    while (!src.ended() && g_signal == 0) {
      wait_polling(src, std::numeric_limits<std::int64_t>::max());
    }
    if (!src.ended()) {
      return 130;
    }
  }
  print(src, o, view);
  if (!log.empty()) {
    std::fprintf(stderr, "nvtxpp-capture top: the program's output is in %s\n", log.c_str());
  }
  return exit_like(src.finish());
}

int run_once(top_source& src, top_options const& o, bool launched) {
  if (launched) {
    wait_polling(src, std::numeric_limits<std::int64_t>::max());
    return finish_launch(src, o, o.view, "");
  }
  wait_polling(src, mono_ns() + o.interval_ns);
  print(src, o, o.view);
  return 0;
}

/// Plain tables (standard output not a terminal) or JSON objects, one per interval.
int run_stream(top_source& src, top_options const& o, bool launched) {
  std::int64_t next = mono_ns() + o.interval_ns;
  for (;;) {
    wait_polling(src, next);
    if (g_signal != 0 || src.ended()) {
      break;
    }
    print(src, o, o.view);
    if (!o.json) {
      std::fputs("\n", stdout);
    }
    next = std::max(next + o.interval_ns, mono_ns());
  }
  if (launched) {
    return finish_launch(src, o, o.view, "");
  }
  if (src.ended()) {
    print(src, o, o.view);
    std::fprintf(stderr, "nvtxpp-capture top: the program (pid %u) ended\n", src.state().pid);
  }
  return 0;
}

int run_screen(top_source& src, top_options const& o, bool launched, std::string const& log) {
  screen_view sv;
  sv.view = o.view;
  {
    top_screen screen;
    live_snapshot snap;
    program_state state;
    bool drawn = false;
    bool by_thread = sv.view.by_thread;
    std::int64_t next_poll = 0;
    std::int64_t next_refresh = 0;
    while (g_signal == 0 && !sv.quit) {
      std::int64_t const now = mono_ns();
      if (now >= next_poll) {
        src.poll();
        next_poll = now + std::min(poll_ns, o.interval_ns);
      }
      if (src.ended()) {
        break;
      }
      bool draw = false;
      if ((!sv.paused || !drawn) && now >= next_refresh) {
        snap = src.snapshot(sv.view.by_thread);
        state = src.state();
        next_refresh = now + o.interval_ns;
        draw = true;
      }
      if (draw) {
        screen.draw(state, snap, sv);
        drawn = true;
      }
      if (screen.handle_key(50, sv) && drawn) {
        if (sv.view.by_thread != by_thread) {
          snap = src.snapshot(sv.view.by_thread);  // rows keyed otherwise: the same data again
          by_thread = sv.view.by_thread;
        }
        screen.draw(state, snap, sv);  // a key, or a new size
      }
    }
  }  // the terminal is given back here
  if (src.ended()) {
    if (launched) {
      return finish_launch(src, o, sv.view, log);
    }
    print(src, o, sv.view);
    std::fprintf(stderr, "nvtxpp-capture top: the program (pid %u) ended\n", src.state().pid);
    return 0;
  }
  return launched ? finish_launch(src, o, sv.view, log) : 0;
}

}  // namespace

int run_top(top_options const& o) {
  live_options lo;
  lo.window_ns = o.window_ns;
  lo.slice_ns = std::max<std::int64_t>(o.window_ns / 10, 1'000'000);
  lo.fold_numbers = o.fold;
  top_source src{lo};
  bool const screen = !o.once && !o.json && ::isatty(STDOUT_FILENO) && ::isatty(STDIN_FILENO);
  catch_signals();
  bool const launched = o.pid == 0;
  std::string log;
  if (launched) {
    if (screen) {
      log = o.log.empty() ? "nvtxpp-top." + std::to_string(::getpid()) + ".log" : o.log;
    }
    int status = 2;
    if (!src.launch(o.capture_options, o.program, log, &status)) {
      return status != 0 ? status : 2;
    }
  } else if (!src.attach(o.pid)) {
    return 2;
  }
  if (o.once) {
    return run_once(src, o, launched);
  }
  if (screen) {
    try {
      return run_screen(src, o, launched, log);
    } catch (std::runtime_error const& e) {
      std::fprintf(stderr, "nvtxpp-capture top: %s; plain tables instead\n", e.what());
    }
  }
  return run_stream(src, o, launched);
}

}  // namespace nvtxpp::capture::live
