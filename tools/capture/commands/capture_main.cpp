// The capture command (capture_main.hpp): runs a program with the nvtxpp NVTX injection
// library, then writes its ranges as a Chrome Trace Event JSON file and prints an
// nsys-nvtx_sum-style summary.
//
// Exit status: the program's own status; if it died of a signal, nvtxpp-capture re-raises that
// signal after writing its outputs. 2: bad usage or an unwritable output (checked before the
// program starts). 3: the program succeeded but writing the trace failed (the raw recording is
// kept). 127: the program could not be started.

#include "capture_main.hpp"
#include "../analyses/summary.hpp"
#include "../common/die_like.hpp"
#include "../common/private_files.hpp"
#include "../flight/flight_control.hpp"
#include "../flight/flight_session.hpp"
#include "../flight/flight_watch.hpp"
#include "../flight/flight_window.hpp"
#include "../launch/annotate_calls.hpp"
#include "../launch/capture_options.hpp"
#include "../launch/flight_options.hpp"
#include "../launch/gpu_sample_options.hpp"
#include "../launch/output_claim.hpp"
#include "../launch/output_name.hpp"
#include "../launch/write_outputs.hpp"
#include "../model/trace_model.hpp"
#include "../writers/sqlite/sqlite_sink.hpp"

#include <nvtxpp/version.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr char usage[] =
    "usage: nvtxpp-capture [options] [--] program [args...]\n"
    "       nvtxpp-capture --convert DIR [-o FILE] [--summary-only|--no-summary] [--csv]\n"
    "       nvtxpp-capture merge [-o OUT] [--summary-only|--no-summary] [--csv] FILE...\n"
    "       nvtxpp-capture diff [options] BASE... --vs NEW...  (what changed, with statistics)\n"
    "       nvtxpp-capture dump PID          (a --flight-recorder run: dump its window now)\n"
    "       nvtxpp-capture stacks PID|FILE... (open ranges, CUDA calls now; group ranks' reports)\n"
    "       nvtxpp-capture top PID | top -- program  (live: where the time goes now, by range)\n"
    "\n"
    "Runs program with the nvtxpp NVTX injection library and records every NVTX call.\n"
    "When it ends, writes a Chrome Trace Event JSON file (open it in https://ui.perfetto.dev\n"
    "or chrome://tracing) and prints a range summary in the layout of `nsys stats -r nvtx_sum`.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE   trace file to write (default: nvtxpp-trace.json); its extension picks\n"
    "                      the format: .sqlite an SQLite database, anything else Chrome JSON.\n"
    "                      Patterns: %p the program's pid, %h the host name, %q{VAR} the\n"
    "                      environment variable VAR (unset: exit 2), %% a percent sign. In a\n"
    "                      multi-rank launch (mpirun, srun) a name that does not tell ranks\n"
    "                      apart gets the rank before its extension (trace.rank3.json); a name\n"
    "                      another live nvtxpp-capture writes gets .pid<PID> instead\n"
    "      --summary-only  print the summary, write no trace file\n"
    "      --no-summary    write the trace file, print no summary\n"
    "      --csv           print the summary as CSV\n"
    "      --group PATTERN  the summary counts ranges matching the shell-style PATTERN\n"
    "                      ('Train step *') as one row; repeatable, the first match wins\n"
    "      --group-digits  the summary folds every run of digits in range names ('Layer *';\n"
    "                      a number inside a word, as in H2D, is kept)\n"
    "      --keep-raw DIR  keep the raw per-process recordings in DIR (default: a temporary\n"
    "                      directory, removed afterwards)\n"
    "      --convert DIR   run no program: turn the raw recording kept in DIR (--keep-raw, or\n"
    "                      the directory named after a failed write) into the outputs\n"
    "      --cuda=MODE     GPU activity through CUPTI: auto (default) and on record kernels,\n"
    "                      copies, memsets, synchronisations and CUDA API calls of programs\n"
    "                      that use CUDA (CUPTI is loaded only when the program initialises\n"
    "                      CUDA; if it cannot be loaded the trace is NVTX only, with a\n"
    "                      warning; on also warns at once); off records NVTX only\n"
    "      --cuda-api=API  runtime (default): CUDA runtime API calls, and the driver calls\n"
    "                      that launch GPU work outside them (cuLaunchKernel, cuMemcpy*,\n"
    "                      cuMemset*, cuGraphLaunch: Numba, cuBLASLt); all: every driver API\n"
    "                      call too (each runtime call makes several: costlier per launch)\n"
    "      --cuda-graph-trace=graph|node  CUDA graph launches in the outputs (Nsight Systems'\n"
    "                      option): node (default) each node's kernel, copy or memset; graph\n"
    "                      one row per launch (SQLite CUPTI_ACTIVITY_KIND_GRAPH_TRACE), its\n"
    "                      nodes' work in no kernel or memory report, as nsys's default. Graph\n"
    "                      ranges in both (docs/graphs.md)\n"
    "      --cuda-sample=ON/PERIOD  GPU activity for ON of every PERIOD only (200ms/2s:\n"
    "                      a tenth), NVTX all the time; periods start on multiples of PERIOD\n"
    "                      of the wall clock; the outputs mark them (NVTX ranges 'GPU detail:\n"
    "                      sampled' of domain nvtxpp-capture) and the summary says its GPU\n"
    "                      tables cover them only (docs/leave-it-on-gpu.md)\n"
    "      --cuda-raise=DURATION  with --flight-recorder and --cuda-sample: GPU activity in\n"
    "                      full for DURATION after a dump that a trigger, hang or request\n"
    "                      started, then a dump of those steps (default 10s; 0: none)\n"
    "capture control (Nsight Systems' names; docs/capture-control.md):\n"
    "      --capture-range=none|cudaProfilerApi|nvtx  record only between cudaProfilerStart and\n"
    "                      cudaProfilerStop, or inside the NVTX range --nvtx-capture names\n"
    "      --nvtx-capture=RANGE[@DOMAIN|@*]  the range that opens the window (default domain\n"
    "                      without @); names or patterns ('Train step *', 'Layer [0-9]@model*')\n"
    "      --capture-range-end=stop|none|repeat[:N]  after the window: record no more (stop),\n"
    "                      record to the end (none), or wait for the next one (N windows at most)\n"
    "      --delay=SECONDS record nothing for SECONDS after the launch\n"
    "      --duration=SECONDS  record for SECONDS from the first window's start, then no more\n"
    "      --nvtx-domain-include=LIST / --nvtx-domain-exclude=LIST  NVTX domains (comma list\n"
    "                      of names or patterns; 'default' is the default domain, \\ escapes a\n"
    "                      comma or 'default')\n"
    "      --annotate-calls FUNC@LIB  a range per call of a shared library's matching\n"
    "                      function (globs on the function and on the library's file name or\n"
    "                      soname; comma lists; repeatable), no rebuild: docs/annotate.md\n"
    "flight recorder (docs/leave-it-on.md):\n"
    "      --flight-recorder=LIMIT  keep only the last LIMIT of each process's recording (a\n"
    "                      duration, 30s or 5m, or a size, 64MB or 1GB) in a ring that survives\n"
    "                      the program's death; write it only in dumps: FILE.dumpN.EXT (%n in -o\n"
    "                      places N), at the end, on a crash, on `nvtxpp-capture dump PID`, on a\n"
    "                      trigger, on a hang\n"
    "      --dump-on-exit=yes|no  dump at the program's normal end (default yes; signals dump)\n"
    "      --trigger='RANGE[@DOMAIN]>FACTORx' | 'RANGE[@DOMAIN]>DURATION'  dump the window up\n"
    "                      to 10 ms after an instance of RANGE that took FACTOR times the median\n"
    "                      of its earlier ones, or longer than DURATION (250ms); repeatable.\n"
    "                      RANGE and DOMAIN may be patterns ('Train step *>3x': one median over\n"
    "                      all the numbered steps)\n"
    "      --trigger-max=N  dumps by triggers at most (default 10)\n"
    "      --trigger-cooldown=DURATION  no trigger dump sooner than this after one (default 10s)\n"
    "      --hang-timeout=DURATION  no range opened or closed for DURATION while one is open:\n"
    "                      write NAME.stacks.txt beside the trace and dump\n"
    "      --dump-scope=process|job  job: a dump on any rank of a multi-rank job (trigger,\n"
    "                      hang, crash or kill, `dump PID`) dumps every rank for the same\n"
    "                      moment, under the same number (default process)\n"
    "      --lib PATH      injection library (default: libnvtxpp_inject.so next to this program,\n"
    "                      or in ../lib)\n"
    "  -h, --help          this text\n"
    "      --version       print the version\n"
    "\n"
    "exit status: the program's (a program killed by a signal: the same signal); 2 for bad\n"
    "usage or an unwritable output file (checked before the program starts); 3 when the\n"
    "program succeeded but writing the trace failed (disk full, I/O error: the partial file is\n"
    "removed and the raw recording kept in a directory named on stderr); 127 when the\n"
    "program cannot be started. --convert: 0, 2 (bad usage or input) or 3 (write failed).\n"
    "\n"
    "environment: NVTXPP_CAPTURE_FAIL_WRITE_AFTER=N (testing) makes trace writes past N bytes\n"
    "fail with ENOSPC. NVTXPP_CAPTURE_TEST_CLOCK_SHIFT_NS=N (testing) moves a trace's wall-clock\n"
    "anchor by N ns, as another host's clock would be off (for merge's tests).\n";

[[noreturn]] void fail(int status, std::string const& message) {
  std::fprintf(stderr, "nvtxpp-capture: %s\n", message.c_str());
  std::exit(status);
}

std::string self_dir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) {
    return ".";
  }
  std::string path(buf, static_cast<std::size_t>(n));
  return path.substr(0, path.find_last_of('/'));
}

bool readable(std::string const& path) { return ::access(path.c_str(), R_OK) == 0; }

std::string find_library() {
  std::string const dir = self_dir();
  for (char const* rel :
       {"/libnvtxpp_inject.so", "/../lib/libnvtxpp_inject.so", "/../lib64/libnvtxpp_inject.so"}) {
    if (readable(dir + rel)) {
      return dir + rel;
    }
  }
  return {};
}

std::int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

pid_t g_child = -1;

/// `--cuda` value: "auto", "on" or "off"; anything else is bad usage.
bool valid_cuda_mode(std::string const& mode) {
  return mode == "auto" || mode == "on" || mode == "off";
}

/// In the child, before exec: the CUDA driver loads the injection library (the same absolute
/// path as NVTX's, so the process has one copy) and calls its InitializeInjection at cuInit,
/// which starts CUPTI. off: not set (a CUDA_INJECTION64_PATH of the user's own stays).
/// NVTXPP_CUDA tells the library the mode.
void set_cuda_env(std::string const& mode, std::string const& api, std::string const& lib) {
  ::setenv("NVTXPP_CUDA", mode.c_str(), 1);
  ::setenv("NVTXPP_CUDA_API", api.c_str(), 1);
  if (mode != "off") {
    ::setenv("CUDA_INJECTION64_PATH", lib.c_str(), 1);
  }
}

volatile sig_atomic_t g_forwarded = 0;

void forward_signal(int sig) {
  g_forwarded = 1;
  if (g_child > 0) {
    ::kill(g_child, sig);
  }
}

namespace cap = nvtxpp::capture;
namespace cli = nvtxpp::capture::cli;
using cli::open_output;
using cli::outputs_result;
using cli::write_outputs;

/// Takes `arg` when it is a capture-control option (bad values end the run with status 2).
template <class Options, class Next>
bool parse_capture_option(Options& c, std::string const& arg, Next&& next) {
  try {
    return c.parse(arg, next);
  } catch (cli::option_error const& e) {
    fail(2, e.what());
  }
}

/// Earliest recording start among the files of a raw directory (the trace's time 0 for
/// --convert); 0 when none can be read.
std::int64_t earliest_start(std::string const& dir, long* pid = nullptr) {
  std::int64_t best = 0;
  bool any = false;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string const name = e->d_name;
      if (name.rfind("nvtxpp-", 0) != 0 || name.size() < 12 ||
          name.compare(name.size() - 4, 4, ".bin") != 0) {
        continue;
      }
      int fd = ::open((dir + "/" + name).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        continue;
      }
      nvtxpp::recording::file_header h{};
      if (::read(fd, &h, sizeof h) == static_cast<ssize_t>(sizeof h) &&
          std::memcmp(h.magic, nvtxpp::recording::file_magic, sizeof h.magic) == 0 &&
          (!any || h.ns0 < best)) {
        best = h.ns0;
        any = true;
        if (pid != nullptr) {
          *pid = static_cast<long>(h.pid);  // --convert's %p: the recording's first process
        }
      }
      ::close(fd);
    }
    ::closedir(d);
  }
  return best;
}

/// The parsed command line of the capture command.
struct capture_args {
  std::string output = "nvtxpp-trace.json";
  std::string keep_raw;
  std::string convert;
  std::string lib;
  std::string cuda_mode = "auto";
  std::string cuda_api = "runtime";
  bool summary = true;
  bool trace = true;
  cap::summary_options sopt;
  std::vector<std::string> groups;
  bool group_digits = false;
  cli::capture_options capture;
  cli::flight_options flight;
  cli::gpu_sample_options sample;
  cap::annotate_calls annotate;
  int program = 0;  ///< argv index of the program (argc: none)
  /// `nvtxpp-capture top -- program` (--top-channel=FD, not for users): where the recording
  /// is goes to FD once the program is forked, and "end" once the program ended; the recording
  /// is removed only once the reader closed its end (top reads the last window first).
  int top_channel = -1;
};

/// Takes `a` when it is one of the --cuda options (bad values end the run with status 2).
bool parse_cuda_option(capture_args& c, std::string const& a,
                       std::function<std::string()> const& value) {
  if (a.rfind("--cuda-api=", 0) == 0) {
    c.cuda_api = a.substr(11);
    if (c.cuda_api != "runtime" && c.cuda_api != "all") {
      fail(2, "--cuda-api takes runtime or all, not '" + c.cuda_api + "'");
    }
  } else if (a.rfind("--cuda-graph-trace=", 0) == 0) {
    std::string const mode = a.substr(19);
    if (mode != "graph" && mode != "node") {
      fail(2, "--cuda-graph-trace takes graph or node, not '" + mode + "'");
    }
    c.sopt.graphs = mode == "graph" ? cap::graph_trace::graph : cap::graph_trace::node;
  } else if (a == "--cuda" || a.rfind("--cuda=", 0) == 0) {
    c.cuda_mode = a == "--cuda" ? value() : a.substr(7);
    if (!valid_cuda_mode(c.cuda_mode)) {
      fail(2, "--cuda takes auto, on or off, not '" + c.cuda_mode + "'");
    }
  } else {
    return false;
  }
  return true;
}

/// Takes `a` when it is an option of the outputs (-o, the summary's).
bool parse_output_option(capture_args& c, std::string const& a,
                         std::function<std::string()> const& value) {
  if (a == "-o" || a == "--output") {
    c.output = value();
  } else if (a.rfind("--output=", 0) == 0) {
    c.output = a.substr(9);
  } else if (a == "--summary-only") {
    c.trace = false;
  } else if (a == "--no-summary") {
    c.summary = false;
  } else if (a == "--csv") {
    c.sopt.csv = true;
  } else if (a == "--group" || a.rfind("--group=", 0) == 0) {
    c.groups.push_back(a == "--group" ? value() : a.substr(8));
  } else if (a == "--group-digits") {
    c.group_digits = true;
  } else if (a == "--keep-raw") {
    c.keep_raw = value();
  } else if (a == "--convert") {
    c.convert = value();
  } else {
    return false;
  }
  return true;
}

/// Parses the options before the program; a status when there is nothing to run (--help).
std::optional<int> parse_args(int argc, char** argv, capture_args& c) {
  int i = 1;
  for (; i < argc; ++i) {
    std::string const a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        fail(2, (a == "--output" ? std::string{"-o"} : a) + " needs a value (see --help)");
      }
      return argv[++i];
    };
    if (a == "--") {
      ++i;
      break;
    }
    if (parse_output_option(c, a, value) || parse_cuda_option(c, a, value) ||
        parse_capture_option(c.capture, a, value) || parse_capture_option(c.flight, a, value) ||
        parse_capture_option(c.sample, a, value)) {
    } else if (a == "--annotate-calls" || a.rfind("--annotate-calls=", 0) == 0) {
      std::string why;
      if (!c.annotate.add(a == "--annotate-calls" ? value() : a.substr(17), &why)) {
        fail(2, why);
      }
    } else if (a == "--lib") {
      c.lib = value();
    } else if (a.rfind("--top-channel=", 0) == 0) {
      char* end = nullptr;
      long const fd = std::strtol(a.c_str() + 14, &end, 10);
      if (*end != '\0' || fd < 3 || ::fcntl(static_cast<int>(fd), F_GETFD) < 0) {
        fail(2, "--top-channel takes an open descriptor (it is nvtxpp-capture top's own)");
      }
      c.top_channel = static_cast<int>(fd);
      ::fcntl(c.top_channel, F_SETFD, FD_CLOEXEC);  // the program does not inherit it
    } else if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      return 0;
    } else if (a == "--version") {
      std::printf("nvtxpp-capture %d.%d.%d\n", NVTXPP_VERSION_MAJOR, NVTXPP_VERSION_MINOR,
                  NVTXPP_VERSION_PATCH);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      fail(2, "unknown option " + a + " (see --help)");
    } else {
      break;
    }
  }
  c.program = i;
  return std::nullopt;
}

/// Checks the options together (bad usage ends the run with status 2).
void validate(capture_args& c) {
  if (!c.trace && !c.summary) {
    fail(2, "--summary-only and --no-summary together leave nothing to do");
  }
  try {
    c.sopt.grouping = cap::name_grouping{c.groups, c.group_digits};
  } catch (std::invalid_argument const& e) {
    fail(2, std::string{"--group: "} + e.what());
  }
  if (c.capture.range == "cudaProfilerApi" && c.cuda_mode == "off") {
    fail(2,
         "--capture-range=cudaProfilerApi sees cudaProfilerStart through CUPTI: not with "
         "--cuda=off");
  }
  try {
    c.capture.validate();
    c.flight.validate();
    c.sample.validate(c.cuda_mode, c.flight.enabled);
    c.flight.raise_ns = c.sample.raise_ns;
    if (c.top_channel >= 0 && !c.flight.enabled) {
      fail(2, "--top-channel needs --flight-recorder");
    }
    if (c.flight.enabled) {
      if (!c.convert.empty()) {
        fail(2, "--flight-recorder records a run: not with --convert");
      }
      c.output = cli::protect_dump_number(c.output);  // %n: the dump's number, set at each dump
    }
    if (c.trace) {
      cli::check_pattern(c.output, cli::process_env());
    }
  } catch (std::exception const& e) {
    fail(2, e.what());
  }
}

/// --convert: a kept raw recording (or a flight recorder's raw directory) into the outputs.
int convert_main(capture_args& c, int argc) {
  if (c.program < argc) {
    fail(2, "--convert runs no program (see --help)");
  }
  struct stat st {};
  if (::stat(c.convert.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    fail(2, "cannot read raw recording directory '" + c.convert + "'");
  }
  std::string const window_dir = c.convert + "/window";
  if (!cap::ring_processes(c.convert).empty()) {
    // A flight recorder's raw directory: its rings' window, as ordinary capture files.
    ::mkdir(window_dir.c_str(), 0755);
    auto const w = cap::compose_window(c.convert, window_dir, 0, 0, false);
    for (auto const& e : w.errors) {
      std::fprintf(stderr, "nvtxpp-capture: %s\n", e.c_str());
    }
    c.convert = window_dir;
  }
  std::unique_ptr<cap::trace_sink> sink;
  cli::output_claim claim;
  if (c.trace) {
    try {
      long pid = 0;
      std::int64_t const start = earliest_start(c.convert, &pid);
      claim =
          cli::output_claim::take(cli::resolve_output_name(c.output, pid, cli::process_env()), pid);
      c.output = claim.path();
      sink = open_output(c.output, start);
    } catch (std::exception const& e) {
      fail(2, e.what());
    }
  }
  auto const r = write_outputs(c.convert, c.output, std::move(sink), c.summary, c.sopt);
  return r.fatal ? 2 : r.write_failed ? 3 : 0;
}

/// The injection library to load, as one canonical absolute path (for NVTX and the driver).
void locate_library(capture_args& c) {
  if (c.lib.empty()) {
    c.lib = find_library();
    if (c.lib.empty()) {
      fail(2, "cannot find libnvtxpp_inject.so next to " + self_dir() + " (use --lib)");
    }
  } else if (!readable(c.lib)) {
    fail(2, "cannot read injection library " + c.lib);
  }
  if (char resolved[PATH_MAX]; ::realpath(c.lib.c_str(), resolved) != nullptr) {
    c.lib = resolved;
  } else if (c.lib[0] != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) != nullptr) {
      c.lib = std::string{cwd} + "/" + c.lib;
    }
  }
  if (std::string why; c.annotate.wanted() && !c.annotate.locate(c.lib, self_dir(), &why)) {
    fail(2, why);
  }
}

/// The run's directories: the raw recording's, the flight recorder's rings', the request
/// directory; held so that a later launcher removes them only once nothing uses them.
struct run_dirs {
  std::string control;  ///< `dump PID` and `stacks PID` requests (flight recorder only)
  std::string raw;
  int raw_hold = -1;
  std::string ring;
  int ring_hold = -1;
};

run_dirs make_dirs(capture_args const& c) {
  run_dirs d;
  // `dump PID` and `stacks PID` reach a flight recorder through a directory that must be this
  // user's alone: checked before the program starts, never replaced by something weaker.
  if (c.flight.enabled) {
    std::string problem;
    d.control = cli::control_dir(&problem);
    if (d.control.empty()) {
      fail(2, "the request directory " + problem);
    }
  }
  // Working directories of killed runs (no process holds them any more) go first.
  char const* tmpdir = std::getenv("TMPDIR");
  std::string const tmp_parent = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
  cli::remove_abandoned(tmp_parent, "nvtxpp-capture-", 10);
  cli::remove_abandoned("/dev/shm", "nvtxpp-flight-", 10);
  // And their launchers' entries in the request directory (a launcher killed with its program).
  cli::remove_stale_entries(c.flight.enabled ? d.control : cli::control_dir_name());
  d.raw = c.keep_raw;
  if (d.raw.empty()) {
    std::string templ = tmp_parent + "/nvtxpp-capture-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
      fail(2, "cannot create a temporary directory: " + std::string{std::strerror(errno)});
    }
    d.raw = templ;
  } else if (::mkdir(d.raw.c_str(), 0755) != 0 && errno != EEXIST) {
    fail(2, "cannot create " + d.raw + ": " + std::strerror(errno));
  }
  // Held (shared) by this launcher and by every process of the program, so that a later
  // launcher removes it only once all of them are gone (cli::remove_abandoned).
  d.raw_hold = cli::hold_dir(d.raw);
  // --flight-recorder: the rings in memory-backed files where there are (flight_ring.cpp says
  // why), linked from the raw directory.
  if (c.flight.enabled && ::access("/dev/shm", W_OK) == 0) {
    std::string templ = "/dev/shm/nvtxpp-flight-XXXXXX";
    if (::mkdtemp(templ.data()) != nullptr) {
      d.ring = templ;
      d.ring_hold = cli::hold_dir(d.ring);
    }
  }
  return d;
}

/// Ctrl-C reaches the whole process group: the program handles it; this launcher waits to
/// merge. A SIGTERM/SIGHUP sent to the launcher alone is passed on to the program.
void handle_signals() {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, nullptr);
  ::sigaction(SIGQUIT, &ignore, nullptr);
  struct sigaction fwd {};
  fwd.sa_handler = &forward_signal;
  ::sigaction(SIGTERM, &fwd, nullptr);
  ::sigaction(SIGHUP, &fwd, nullptr);
}

/// In the child: waits for the launcher's go (`go_read`), then runs the program with the
/// injection library. Never returns.
[[noreturn]] void run_child(capture_args const& c, run_dirs const& d, int go_read,
                            std::int64_t base_ns, char** argv) {
  char byte = 0;
  ssize_t got = 0;
  while ((got = ::read(go_read, &byte, 1)) < 0 && errno == EINTR) {
  }
  if (got != 1) {
    ::_exit(127);  // the launcher gave up (it says why)
  }
  ::close(go_read);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP}) {
    ::sigaction(sig, &dfl, nullptr);
  }
  ::setenv("NVTX_INJECTION64_PATH", c.lib.c_str(), 1);
  ::setenv("NVTXPP_CAPTURE_DIR", d.raw.c_str(), 1);
  // This launcher is one rank itself (`torchrun ... nvtxpp-capture`, `mpirun ... nvtxpp-capture`):
  // its output is named by rank, and its processes need no rank label of their own (the
  // injection library labels a process whose rank is not its launcher's: a trace of
  // `nvtxpp-capture -- torchrun ...` holds every rank).
  if (auto const rank = cli::detect_rank(cli::process_env())) {
    ::setenv("NVTXPP_LAUNCHER_RANK", std::to_string(rank->rank).c_str(), 1);
  } else {
    ::unsetenv("NVTXPP_LAUNCHER_RANK");
  }
  if (c.flight.enabled) {
    ::setenv("NVTXPP_FLIGHT_BYTES", std::to_string(c.flight.ring_bytes).c_str(), 1);
    if (!d.ring.empty()) {
      ::setenv("NVTXPP_FLIGHT_DIR", d.ring.c_str(), 1);
    }
  }
  set_cuda_env(c.cuda_mode, c.cuda_api, c.lib);
  c.sample.set_env();
  c.capture.export_env(base_ns);
  if (c.annotate.wanted()) {
    c.annotate.set_env();
  }
  ::execvp(argv[c.program], argv + c.program);
  std::fprintf(stderr, "nvtxpp-capture: cannot run '%s': %s\n", argv[c.program],
               std::strerror(errno));
  ::_exit(127);
}

/// The output's name, claimed against other launchers (it may hold the program's pid, %p), and
/// its sink opened: before the program runs, so that a long run cannot end in nothing. On
/// failure the program (still waiting) is killed and the run ends with status 2.
std::unique_ptr<cap::trace_sink> open_trace(capture_args& c, run_dirs const& d,
                                            cli::output_claim& claim, std::int64_t base_ns) {
  std::unique_ptr<cap::trace_sink> sink;
  try {
    claim = cli::output_claim::take(
        cli::resolve_output_name(c.output, static_cast<long>(g_child), cli::process_env()),
        static_cast<long>(g_child));
    c.output = claim.path();
    if (!c.flight.enabled) {
      sink = open_output(c.output, base_ns);
    } else {
      // Dumps are written beside it: the folder must take them (checked before the run).
      std::string const dir = c.output.find('/') == std::string::npos
                                  ? "."
                                  : c.output.substr(0, c.output.rfind('/') + 1);
      if (::access(dir.c_str(), W_OK) != 0) {
        throw std::runtime_error("cannot write dumps in '" + dir + "': " + std::strerror(errno));
      }
    }
  } catch (std::exception const& e) {
    ::kill(g_child, SIGKILL);
    while (::waitpid(g_child, nullptr, 0) < 0 && errno == EINTR) {
    }
    if (c.keep_raw.empty()) {
      cli::remove_tree(d.raw);
    }
    if (!d.ring.empty()) {
      cli::remove_tree(d.ring);
    }
    fail(2, std::string{e.what()});
  }
  return sink;
}

/// --flight-recorder: the session that keeps the rings, dumps and reports until the program
/// ends. Sets `status` (the program's); the outputs' result.
outputs_result run_flight_session(capture_args const& c, run_dirs const& d, std::int64_t base_ns,
                                  int& status) {
  outputs_result r;
  // Nothing is written but dumps; the claimed name only keeps other launchers off it.
  cli::flight_session session{c.flight, d.raw, c.output, c.trace, c.summary, c.sopt, base_ns};
  session.set_control_dir(d.control);
  if (c.flight.job_scope) {
    session.join_job(c.trace ? c.output : "./" + c.output);
  }
  if (c.keep_raw.empty()) {
    // A kept recording keeps its rings' names too (the user asked for the files).
    session.keep_rings(d.ring.empty() ? d.raw : d.ring);
  }
  if (auto const rank = cli::detect_rank(cli::process_env())) {
    session.set_label("rank " + std::to_string(rank->rank));
  }
  status = session.wait_for(g_child);
  r.write_failed = !session.finish(status, g_forwarded != 0);
  if (struct stat st{}; c.trace && ::stat(c.output.c_str(), &st) == 0 && st.st_size == 0) {
    ::unlink(c.output.c_str());  // the claim made it; dumps have their own names
  }
  return r;
}

/// The run's directories removed, or kept (and said so) when the recording is all there is.
void clean_up(capture_args const& c, run_dirs const& d, outputs_result const& r) {
  if (r.write_failed) {
    // Out of reach of the next launcher's clean-up of abandoned directories.
    cli::mark_kept(d.raw);
    // The recording is all there is now: keep it, and say how to finish the job later.
    std::fprintf(stderr,
                 "nvtxpp-capture: the raw recording is kept in %s; once there is room, run: "
                 "nvtxpp-capture --convert %s -o %s\n",
                 d.raw.c_str(), d.raw.c_str(), c.output.c_str());
  }
  std::fflush(nullptr);
  if (c.keep_raw.empty() && !r.write_failed) {
    cli::remove_tree(d.raw);
    if (!d.ring.empty()) {
      cli::remove_tree(d.ring);
    }
  } else if (!d.ring.empty()) {
    cli::mark_kept(d.ring);
    std::fprintf(stderr, "nvtxpp-capture: the raw recording's rings are in %s (linked from %s)\n",
                 d.ring.c_str(), d.raw.c_str());
  }
  ::close(d.raw_hold);
  if (d.ring_hold >= 0) {
    ::close(d.ring_hold);
  }
}

/// The launcher's exit status: the program's; its death by a signal, by the same signal.
int exit_like(int status, int rc) {
  if (WIFSIGNALED(status)) {
    int const sig = WTERMSIG(status);
    std::fprintf(stderr, "nvtxpp-capture: program killed by signal %d (%s)\n", sig, strsignal(sig));
    // Same death as the program, without a core file of this launcher.
    struct rlimit no_core {};
    ::setrlimit(RLIMIT_CORE, &no_core);
    nvtxpp::capture::raise_as_default(sig);
    return 128 + sig;  // a signal whose default action is not to terminate
  }
  if (rc != 0 && WEXITSTATUS(status) == 0) {
    return rc;
  }
  return WEXITSTATUS(status);
}

/// Writes `text` whole to top's side channel (a reader gone: nothing more to say).
void tell_top(int fd, std::string const& text) {
  std::size_t at = 0;
  while (fd >= 0 && at < text.size()) {
    ssize_t const n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return;
    }
    at += static_cast<std::size_t>(n);
  }
}

/// Waits until top has closed its end of the side channel (it read the last window), at most
/// `max_ms`: a top that hangs does not keep the recording's files forever.
void wait_for_top(int fd, int max_ms) {
  for (int waited = 0; fd >= 0 && waited < max_ms; waited += 50) {
    pollfd p{fd, 0, 0};
    if (::poll(&p, 1, 50) > 0 && (p.revents & (POLLERR | POLLHUP)) != 0) {
      return;
    }
  }
}

}  // namespace

int nvtxpp::capture::capture_main(int argc, char** argv) {
  capture_args c;
  if (auto const status = parse_args(argc, argv, c)) {
    return *status;
  }
  validate(c);
  if (!c.convert.empty()) {
    return convert_main(c, argc);
  }
  if (c.program >= argc) {
    std::fputs(usage, stderr);
    return 2;
  }
  locate_library(c);
  std::int64_t const base_ns = monotonic_ns();
  run_dirs const d = make_dirs(c);
  handle_signals();
  // The child waits (a pipe) until the output is settled: its name may hold the program's pid
  // (%p), and it must be writable before the program runs: a long run must not end in nothing.
  int go[2] = {-1, -1};
  if (::pipe2(go, O_CLOEXEC) != 0) {
    fail(2, "cannot create a pipe: " + std::string{std::strerror(errno)});
  }
  std::fflush(nullptr);
  g_child = ::fork();
  if (g_child < 0) {
    fail(2, "fork failed: " + std::string{std::strerror(errno)});
  }
  if (g_child == 0) {
    ::close(go[1]);
    run_child(c, d, go[0], base_ns, argv);
  }
  ::close(go[0]);
  cli::output_claim claim;
  std::unique_ptr<cap::trace_sink> sink;
  if (c.trace) {
    sink = open_trace(c, d, claim, base_ns);
  }
  ::signal(SIGPIPE, SIG_IGN);  // a child killed meanwhile: EPIPE, not the launcher's death
  tell_top(c.top_channel, "raw_dir=" + d.raw + "\nprogram=" + std::to_string(g_child) + "\n");
  if (char const byte = 1; ::write(go[1], &byte, 1) != 1) {
    fail(2, "cannot start the program: " + std::string{std::strerror(errno)});
  }
  ::close(go[1]);
  int status = 0;
  outputs_result r;
  if (c.flight.enabled) {
    r = run_flight_session(c, d, base_ns, status);
  } else {
    while (::waitpid(g_child, &status, 0) < 0 && errno == EINTR) {
    }
    r = write_outputs(d.raw, c.output, std::move(sink), c.summary, c.sopt);
  }
  int const rc = r.write_failed ? 3 : r.fatal ? 2 : 0;
  if (c.top_channel >= 0) {
    tell_top(c.top_channel, "end\n");
    wait_for_top(c.top_channel, 30'000);
    ::close(c.top_channel);
  }
  clean_up(c, d, r);
  return exit_like(status, rc);
}
