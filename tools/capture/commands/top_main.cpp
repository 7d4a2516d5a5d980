// `nvtxpp-capture top` (top_main.hpp): its options, then live/top_loop.hpp runs it.

#include "top_main.hpp"

#include "../common/option_parsing.hpp"
#include "../launch/flight_options.hpp"
#include "../live/top_loop.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace nvtxpp::capture {

namespace {

constexpr char usage[] =
    "usage: nvtxpp-capture top [options] PID\n"
    "       nvtxpp-capture top [options] [capture options] -- program [args...]\n"
    "\n"
    "Where a program under the flight recorder spends its time now, range by range: a table\n"
    "of its NVTX ranges over the last --window, refreshed every --interval (py-spy top, for\n"
    "NVTX ranges). PID: a process of a run under `nvtxpp-capture --flight-recorder` (the\n"
    "program, any process of it, or its launcher; your own only). top only reads the run's\n"
    "rings: the program runs and records as before, and goes on when top quits.\n"
    "`-- program`: runs it under the flight recorder (--flight-recorder=64MB unless the\n"
    "capture options give a LIMIT; its dumps and summary as usual), watches it, prints the\n"
    "final table when it ends and exits with its status.\n"
    "\n"
    "options:\n"
    "      --once           wait one interval, print one table, exit 0 (with -- program:\n"
    "                       one table when the program ends, and its status)\n"
    "      --json           one JSON object a refresh, one a line (with --once: one)\n"
    "      --interval=DURATION  refresh every DURATION (default 1s)\n"
    "      --window=DURATION    the rows cover the last DURATION (default 10s); trends\n"
    "                       compare it with the DURATION before\n"
    "      --sort=KEY       total (default), self, p99, calls or name\n"
    "      --filter=PATTERN only ranges whose name matches the shell-style PATTERN (a word\n"
    "                       without wildcards: the names that hold it)\n"
    "      --threads        a row per range and thread\n"
    "      --rows=N         plain tables and JSON: N rows at most (default 40; the rest\n"
    "                       summed in one line)\n"
    "      --keep-numbers   numbered names (step 1, step 2, ...) a row each (default: one\n"
    "                       row, step *, as diff folds them)\n"
    "      --log=FILE       -- program on a terminal: where its output (and the\n"
    "                       launcher's) goes while the screen is up (default\n"
    "                       nvtxpp-top.PID.log here)\n"
    "  -h, --help           this text\n"
    "\n"
    "columns: Total% the time the range was open in the window, summed over threads (open\n"
    "on 4 threads all along: 400%); Self% that time less the ranges of its domain inside it;\n"
    "Calls/s its instances that ended, a second; Mean, p50, p99 their durations; Trend the\n"
    "mean against the window before (new: none then); GPU% the GPU work launched under it\n"
    "(with GPU detail); Thread its thread's name, or how many. (open): an instance open\n"
    "now, counted up to now. The header: the program, uptime, ranges a second, records the\n"
    "rings dropped, the GPU detail (off, full, sampled, raised).\n"
    "\n"
    "keys: t total, s self, p p99, c calls, n name (sort); / filter (Enter, Esc); space\n"
    "pause; h a row per thread; q quit. Standard output not a terminal: plain tables.\n"
    "\n"
    "exit status: 0; 2 bad usage, no such process, another user's, or none that\n"
    "nvtxpp-capture --flight-recorder records; -- program: the program's.\n";

[[noreturn]] void bad_usage(std::string const& why) {
  std::fprintf(stderr, "nvtxpp-capture top: %s (see --help)\n", why.c_str());
  std::exit(2);
}

/// The value of `--opt=VALUE` or `--opt VALUE` when `arg` is `opt`, advancing `i`.
bool take(std::string const& opt, int argc, char** argv, int& i, std::string* value) {
  std::string const arg = argv[i];
  if (arg == opt) {
    if (i + 1 >= argc) {
      bad_usage(opt + " needs a value");
    }
    *value = argv[++i];
    return true;
  }
  if (arg.rfind(opt + "=", 0) == 0) {
    *value = arg.substr(opt.size() + 1);
    return true;
  }
  return false;
}

}  // namespace

int top_main(int argc, char** argv) {
  live::top_options o;
  int end = argc;  // where `--` is
  for (int i = 0; i < argc; ++i) {
    if (std::string{argv[i]} == "--") {
      end = i;
      break;
    }
  }
  bool const launch = end < argc;
  std::string pid_text;
  for (int i = 0; i < end; ++i) {
    std::string const a = argv[i];
    std::string v;
    try {
      if (a == "-h" || a == "--help") {
        std::fputs(usage, stdout);
        return 0;
      }
      if (a == "--once") {
        o.once = true;
      } else if (a == "--json") {
        o.json = true;
      } else if (a == "--threads") {
        o.view.by_thread = true;
      } else if (a == "--keep-numbers") {
        o.fold = false;
      } else if (take("--interval", end, argv, i, &v)) {
        o.interval_ns = cli::parse_duration("--interval", v);
      } else if (take("--window", end, argv, i, &v)) {
        o.window_ns = cli::parse_duration("--window", v);
      } else if (take("--sort", end, argv, i, &v)) {
        if (!live::parse_sort_key(v, &o.view.sort)) {
          bad_usage("--sort takes total, self, p99, calls or name, not '" + v + "'");
        }
      } else if (take("--filter", end, argv, i, &v)) {
        if (std::string const why = live::set_filter(o.view, v); !why.empty()) {
          bad_usage("--filter: " + why);
        }
      } else if (take("--rows", end, argv, i, &v)) {
        char* e = nullptr;
        long const n = std::strtol(v.c_str(), &e, 10);
        if (*e != '\0' || n < 1) {
          bad_usage("--rows takes a count of 1 or more, not '" + v + "'");
        }
        o.view.max_rows = static_cast<std::size_t>(n);
      } else if (take("--log", end, argv, i, &v)) {
        o.log = v;
      } else if (launch) {
        o.capture_options.push_back(a);  // the recorder's own: it checks them
      } else if (!a.empty() && a[0] != '-' && pid_text.empty()) {
        pid_text = a;
      } else {
        bad_usage(a[0] == '-' ? "unknown option " + a : "one PID only, not also '" + a + "'");
      }
    } catch (cli::option_error const& e) {
      bad_usage(e.what());
    }
  }
  if (o.interval_ns < 10'000'000) {
    bad_usage("--interval must be 10ms or more");
  }
  if (o.window_ns < o.interval_ns || o.window_ns < 100'000'000) {
    bad_usage("--window must be 100ms or more, and no shorter than --interval");
  }
  if (launch) {
    o.program.assign(argv + end + 1, argv + argc);
    if (o.program.empty()) {
      bad_usage("no program after --");
    }
  } else {
    char* e = nullptr;
    o.pid = pid_text.empty() ? 0 : std::strtol(pid_text.c_str(), &e, 10);
    if (pid_text.empty()) {
      std::fputs(usage, stderr);
      return 2;
    }
    if (*e != '\0' || o.pid <= 0) {
      bad_usage("'" + pid_text + "' is not a process id");
    }
  }
  return live::run_top(o);
}

}  // namespace nvtxpp::capture
