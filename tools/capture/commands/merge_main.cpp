// `nvtxpp-capture merge`: per-rank SQLite files onto one timeline, and the cross-rank summary.

#include "merge_main.hpp"

#include "../analyses/cross_rank_summary.hpp"
#include "../analyses/summary.hpp"
#include "../common/private_files.hpp"
#include "../merge/input_pool.hpp"
#include "../merge/merge_json.hpp"
#include "../merge/merge_sqlite.hpp"
#include "../readers/json_reader.hpp"
#include "../readers/sqlite_input.hpp"
#include "../readers/sqlite_reader.hpp"
#include "../writers/json_writer.hpp"

#include <fmt/format.h>

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace nvtxpp::capture {

namespace {

constexpr char usage[] =
    "usage: nvtxpp-capture merge [-o OUT] [--summary-only|--no-summary] [--csv] [-j N]\n"
    "                            [--group PATTERN]... [--group-digits] FILE...\n"
    "\n"
    "Merges traces, typically one per rank of a job, into one trace, and prints a cross-rank\n"
    "summary: per range, the spread of its per-rank total time and the slowest rank (with GPU\n"
    "data, the same for each range's GPU projection). Inputs: nvtxpp-capture's JSON (captures,\n"
    "flight-recorder dumps, merged traces) and SQLite files in Nsight Systems' export layout\n"
    "(nvtxpp-capture -o X.sqlite, or nsys export --type sqlite), in any mix; a JSON input is\n"
    "first converted to SQLite in a folder beside the output (in $TMPDIR with --summary-only).\n"
    "\n"
    "Every process of an input that has events (NVTX ranges or marks, CUDA API calls, GPU\n"
    "work, counter samples) becomes a process of the merged trace, named by rank, host and\n"
    "pid; processes and named threads without events (an nsys export lists every process of\n"
    "the machine) are left out, and stderr counts both. Every input's times are put on one\n"
    "clock through its wall-clock anchor (its session start time).\n"
    "The rank is the one the capture recorded (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK,\n"
    "SLURM_PROCID or torchrun's RANK), else rankN in the file name (trace.rank3.sqlite) or a\n"
    "number before its\n"
    "extension (report.3.sqlite), else the input's position.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT    merged trace (default: nvtxpp-merged.json); .sqlite writes an SQLite\n"
    "                      database `nsys stats` reads, anything else Chrome JSON\n"
    "      --summary-only  print the cross-rank summary, write no trace\n"
    "      --no-summary    write the trace, print no summary\n"
    "      --csv           print the summary as CSV\n"
    "  -j, --jobs N        read and summarise up to N inputs at once, on N threads (default:\n"
    "                      the machine's cores; 1 to 1024); the output is the same for any N.\n"
    "                      An SQLite output is written by one more thread, from stage files\n"
    "                      beside it (one per thread, each the size of an input's share)\n"
    "      --group PATTERN  the summary counts ranges matching the shell-style PATTERN\n"
    "                      ('Train step *') as one; repeatable, the first match wins\n"
    "      --group-digits  the summary folds every run of digits in range names ('Layer *')\n"
    "  -h, --help          this text\n"
    "\n"
    "exit status: 0 done; 2 bad usage or an input that cannot be merged (not SQLite nor our\n"
    "JSON, truncated, damaged, not in the export layout, JSON without a wall-clock anchor:\n"
    "named on stderr); 3 the output (or a converted JSON input) could not be written.\n"
    "The output appears only when complete (written beside it under a temporary name, then\n"
    "renamed); on failure, or SIGINT/SIGTERM/SIGHUP, nothing is left behind.\n";

bool ends_with(std::string const& s, std::string const& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string real(std::string const& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string{buf} : std::string{};
}

/// " (N process(es) and M named thread(s) without events left out)", or "" when none.
std::string left_out(std::size_t processes, std::size_t threads) {
  if (processes == 0 && threads == 0) {
    return {};
  }
  std::string what = processes != 0 ? fmt::format("{} process(es)", processes) : std::string{};
  if (threads != 0) {
    what += fmt::format("{}{} named thread(s)", what.empty() ? "" : " and ", threads);
  }
  return " (" + what + " without events left out)";
}

int bad_usage(std::string const& message) {
  std::fprintf(stderr, "nvtxpp-capture merge: %s\n", message.c_str());
  return 2;
}

/// The temporary file beside `out` that becomes it at the end.
std::string temp_beside(std::string const& out) {
  auto const slash = out.find_last_of('/');
  std::string const dir = slash == std::string::npos ? "." : out.substr(0, slash);
  std::string const base = slash == std::string::npos ? out : out.substr(slash + 1);
  std::string templ = dir + "/." + base + ".partial-XXXXXX";
  int const fd = ::mkstemp(templ.data());
  if (fd < 0) {
    throw output_error("cannot create a file in " + dir + ": " + std::strerror(errno));
  }
  mode_t const mask = ::umask(0);  // mkstemp's 0600 becomes what a plain create would give
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  return templ;
}

// The partial output, for the signal handler: a signal that ends the merge (Ctrl-C, SIGTERM,
// SIGHUP) removes it before the process dies of that signal.
char g_partial[PATH_MAX + 16];
std::size_t g_stage_files = 0;  // merge_stage_path(g_partial, 0 .. g_stage_files - 1)
// Likewise the folder of converted JSON inputs: g_converted/0.sqlite .. g_converted/N-1.sqlite.
char g_converted[PATH_MAX + 16];
std::size_t g_converted_files = 0;

/// Writes `v` in decimal at `out` followed by a NUL (no allocation: for the signal handler).
void put_decimal(char* out, std::size_t v) {
  char digits[24];
  std::size_t d = 0;
  for (; d == 0 || v != 0; v /= 10) {
    digits[d++] = static_cast<char>('0' + v % 10);
  }
  for (std::size_t k = 0; k < d; ++k) {
    out[k] = digits[d - 1 - k];
  }
  out[d] = '\0';
}

/// Removes the stage files of the partial output (names built without allocating).
void unlink_stages() {
  char name[sizeof g_partial + 32];
  std::size_t const n = std::strlen(g_partial);
  std::memcpy(name, g_partial, n);
  std::memcpy(name + n, ".stage-", 7);
  for (std::size_t slot = 0; slot < g_stage_files; ++slot) {
    put_decimal(name + n + 7, slot);
    ::unlink(name);
  }
}

/// Removes the converted JSON inputs and their folder (names built without allocating).
void unlink_converted() {
  char name[sizeof g_converted + 32];
  std::size_t const n = std::strlen(g_converted);
  std::memcpy(name, g_converted, n + 1);
  name[n] = '/';
  for (std::size_t i = 0; i < g_converted_files; ++i) {
    put_decimal(name + n + 1, i);
    std::size_t const end = std::strlen(name);
    std::memcpy(name + end, ".sqlite", 8);
    ::unlink(name);
  }
  ::rmdir(g_converted);
}

void on_fatal_signal(int sig) {
  if (g_partial[0] != '\0') {
    ::unlink(g_partial);
    unlink_stages();
  }
  if (g_converted[0] != '\0') {
    unlink_converted();
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = &on_fatal_signal;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    ::sigaction(sig, &sa, nullptr);
  }
}

void guard_partial(std::string const& path) {
  std::snprintf(g_partial, sizeof g_partial, "%s", path.c_str());
  install_signal_handlers();
}

void block_fatal_signals(bool block) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    sigaddset(&set, sig);
  }
  ::sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, nullptr);
}

void unguard_partial() {
  block_fatal_signals(true);
  g_partial[0] = '\0';
  block_fatal_signals(false);
}

void remove_partial(std::string const& path) {
  for (char const* suffix : {"", "-journal", "-wal", "-shm"}) {
    ::unlink((path + suffix).c_str());
  }
  for (std::size_t slot = 0; slot < g_stage_files; ++slot) {
    ::unlink(merge_stage_path(path, slot).c_str());
  }
}

/// A -j value: digits only, 1 to max_merge_jobs.
bool parse_jobs(std::string const& value, unsigned& jobs) {
  if (value.empty() || value.size() > 5 ||
      value.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  unsigned long const n = std::stoul(value);  // at most 5 digits: cannot throw
  if (n < 1 || n > max_merge_jobs) {
    return false;
  }
  jobs = static_cast<unsigned>(n);
  return true;
}

/// The command line, parsed.
struct merge_args {
  std::string output = "nvtxpp-merged.json";
  bool trace = true;
  bool summary = true;
  unsigned jobs = std::max(1U, std::thread::hardware_concurrency());
  summary_options sopt;
  std::vector<std::string> groups;
  bool group_digits = false;
  std::vector<std::string> files;
};

/// Parses the command line; a status to exit with when there is nothing to merge (bad usage,
/// --help).
std::optional<int> parse(int argc, char** argv, merge_args& m) {
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    if (a == "--") {
      m.files.insert(m.files.end(), argv + i + 1, argv + argc);
      break;
    }
    if (a == "-o" || a == "--output") {
      if (i + 1 >= argc) {
        return bad_usage("-o needs a value (see --help)");
      }
      m.output = argv[++i];
    } else if (a.rfind("--output=", 0) == 0) {
      m.output = a.substr(9);
    } else if (a == "--summary-only") {
      m.trace = false;
    } else if (a == "--no-summary") {
      m.summary = false;
    } else if (a == "-j" || a == "--jobs" || a.rfind("--jobs=", 0) == 0 ||
               (a.rfind("-j", 0) == 0 && a.size() > 2)) {
      std::string value;
      if (a == "-j" || a == "--jobs") {
        if (i + 1 >= argc) {
          return bad_usage(a + " needs a value (see --help)");
        }
        value = argv[++i];
      } else {
        value = a.substr(a[1] == 'j' ? 2 : 7);
      }
      if (!parse_jobs(value, m.jobs)) {
        return bad_usage(
            fmt::format("-j {}: not a number of threads from 1 to {}", value, max_merge_jobs));
      }
    } else if (a == "--csv") {
      m.sopt.csv = true;
    } else if (a == "--group" || a.rfind("--group=", 0) == 0) {
      if (a == "--group" && i + 1 >= argc) {
        return bad_usage("--group needs a pattern (see --help)");
      }
      m.groups.push_back(a == "--group" ? argv[++i] : a.substr(8));
    } else if (a == "--group-digits") {
      m.group_digits = true;
    } else if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return bad_usage("unknown option " + a + " (see --help)");
    } else {
      m.files.push_back(a);
    }
  }
  if (!m.trace && !m.summary) {
    return bad_usage("--summary-only and --no-summary together leave nothing to do");
  }
  if (m.files.empty()) {
    std::fputs(usage, stderr);
    return 2;
  }
  if (m.output.empty()) {
    return bad_usage("-o needs a file name");
  }
  try {
    m.sopt.grouping = name_grouping{m.groups, m.group_digits};
  } catch (std::invalid_argument const& e) {
    return bad_usage(std::string{"--group: "} + e.what());
  }
  return std::nullopt;
}

/// The folder JSON inputs are converted into (merge_json.hpp), one SQLite file per input:
/// beside the output, as its stage files are (the file system the user chose for large files),
/// or in $TMPDIR when no trace is written. Removed with everything in it at the end, on failure,
/// and on a fatal signal.
class converted_inputs {
 public:
  /// Makes the folder when some of `json` is true. @throws output_error
  converted_inputs(merge_args const& m, std::vector<char> const& json) {
    if (std::find(json.begin(), json.end(), 1) == json.end()) {
      return;
    }
    std::string templ;
    if (m.trace) {
      auto const slash = m.output.find_last_of('/');
      std::string const dir = slash == std::string::npos ? "." : m.output.substr(0, slash);
      std::string const base = slash == std::string::npos ? m.output : m.output.substr(slash + 1);
      templ = dir + "/." + base + ".inputs.partial-XXXXXX";
    } else {
      char const* tmp = std::getenv("TMPDIR");
      templ = std::string{tmp != nullptr && *tmp != '\0' ? tmp : "/tmp"} +
              "/nvtxpp-merge-inputs.partial-XXXXXX";
    }
    block_fatal_signals(true);  // no window in which the folder exists and is not guarded
    if (::mkdtemp(templ.data()) == nullptr) {
      int const err = errno;
      block_fatal_signals(false);
      throw output_error("cannot create a folder for the converted JSON inputs (" + templ +
                         "): " + std::strerror(err));
    }
    dir_ = templ;
    std::snprintf(g_converted, sizeof g_converted, "%s", dir_.c_str());
    g_converted_files = json.size();
    install_signal_handlers();
    block_fatal_signals(false);
  }
  ~converted_inputs() {
    if (dir_.empty()) {
      return;
    }
    block_fatal_signals(true);
    g_converted[0] = '\0';
    block_fatal_signals(false);
    cli::remove_tree(dir_);
  }
  converted_inputs(converted_inputs const&) = delete;
  converted_inputs& operator=(converted_inputs const&) = delete;

  /// The SQLite file input `i` is converted into.
  [[nodiscard]] std::string path_of(std::size_t i) const {
    return dir_ + "/" + std::to_string(i) + ".sqlite";
  }

 private:
  std::string dir_;
};

/// Checks every input before anything is written: SQLite inputs as they are, JSON inputs
/// (`json`) converted into `converted`'s folder. @throws input_error, output_error
std::vector<merge_input> inspect_all(merge_args const& m, std::vector<char> const& json,
                                     converted_inputs const& converted) {
  std::vector<merge_input> inputs(m.files.size());
  std::string const out_real = m.trace ? real(m.output) : std::string{};
  for_each_input(m.files.size(), m.jobs, [&](std::size_t i) {
    if (!out_real.empty() && real(m.files[i]) == out_real) {
      throw input_error(m.files[i] + ": is also the output (-o)");
    }
    inputs[i] = json[i] != 0 ? inspect_json_input(m.files[i], converted.path_of(i), i)
                             : inspect_input(m.files[i], i);
  });
  return inputs;
}

/// Reads the inputs, writes the trace (if wanted) under a partial name and renames it.
class merge_run {
 public:
  merge_run(merge_args const& m, std::vector<merge_input> const& inputs, std::int64_t anchor)
      : m_{m}, inputs_{inputs}, anchor_{anchor} {}

  /// @throws input_error, output_error (the partial file is then removed)
  void run() {
    try {
      if (!m_.trace) {
        per_input(nullptr);
        return;
      }
      block_fatal_signals(true);  // no window in which the file exists and is not guarded
      try {
        partial_ = temp_beside(m_.output);
      } catch (...) {
        block_fatal_signals(false);
        throw;
      }
      g_stage_files = m_.jobs + 1;  // write_merged_sqlite's stage files, if any
      guard_partial(partial_);
      block_fatal_signals(false);
      if (ends_with(m_.output, ".sqlite")) {
        // The summary when wanted, else counts only, as each input is read.
        merge_work work;
        work.jobs = m_.jobs;
        work.final_path = m_.output;
        work.per_input = [this](std::size_t i) { read_one(i, nullptr, m_.summary); };
        work.in_order = [this](std::size_t i) { add_one(i); };
        write_merged_sqlite(partial_, inputs_, anchor_, work);
      } else {
        json_sink json{partial_, 0};
        json.set_origin(anchor_, {});     // a merged trace: one clock, no one rank or host
        for (auto const& in : inputs_) {  // viewers list the processes by rank
          for (auto const& p : in.processes) {
            json.process_sort_index(p.new_pid, in.rank);
          }
        }
        per_input(&json);
        json.finish();
      }
      if (::rename(partial_.c_str(), m_.output.c_str()) != 0) {
        throw output_error("cannot rename " + partial_ + " to " + m_.output + ": " +
                           std::strerror(errno));
      }
      unguard_partial();
    } catch (...) {
      if (!partial_.empty()) {
        remove_partial(partial_);
      }
      throw;
    }
  }

  /// Says on stderr where each input went and what was written; prints the summary.
  void report() const {
    std::size_t empty_processes = 0;
    std::size_t empty_threads = 0;
    for (auto const& in : inputs_) {
      std::fprintf(stderr,
                   "nvtxpp-capture merge: rank %ld (from %s) host %s: %s, clock %+.3f ms, %zu "
                   "process(es) with events%s\n",
                   in.rank, in.rank_source.c_str(), in.host.empty() ? "unknown" : in.host.c_str(),
                   in.path.c_str(), static_cast<double>(in.shift_ns) / 1e6, in.processes.size(),
                   left_out(in.empty_processes, in.empty_threads).c_str());
      empty_processes += in.empty_processes;
      empty_threads += in.empty_threads;
    }
    if (m_.trace) {
      std::string gpu;
      if (all_.gpu_ops != 0 || all_.api_calls != 0) {
        gpu =
            fmt::format(", {} GPU operation(s), {} CUDA API call(s)", all_.gpu_ops, all_.api_calls);
      }
      if (all_.counter_samples != 0) {
        gpu += fmt::format(", {} counter sample(s)", all_.counter_samples);
      }
      std::fprintf(stderr,
                   "nvtxpp-capture merge: %llu range(s), %llu instant event(s)%s from %zu "
                   "process(es) with events of %zu input(s)%s written to %s\n",
                   static_cast<unsigned long long>(all_.ranges),
                   static_cast<unsigned long long>(all_.marks), gpu.c_str(), all_.processes,
                   inputs_.size(), left_out(empty_processes, empty_threads).c_str(),
                   m_.output.c_str());
    }
    if (m_.summary) {
      std::fflush(stderr);
      ranks_.print(stdout, m_.sopt);
    }
  }

 private:
  // Every input through `extra` (the JSON writer, or none) and a summary of its own; without
  // the JSON writer (which takes one input at a time), on m_.jobs threads.
  void per_input(trace_sink* extra) {
    auto const n = inputs_.size();
    if (extra == nullptr) {
      for_each_input(
          n, m_.jobs, [this](std::size_t i) { read_one(i, nullptr, m_.summary); },
          [this](std::size_t i) { add_one(i); });
    } else if (m_.jobs > 1 && m_.summary) {  // summaries on threads, then the JSON
      for_each_input(
          n, m_.jobs, [this](std::size_t i) { read_one(i, nullptr, true); },
          [this](std::size_t i) { add_summary(i); });
      for (std::size_t i = 0; i < n; ++i) {
        read_one(i, extra, false);
        add_one(i);
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        read_one(i, extra, m_.summary);
        add_one(i);
      }
    }
  }

  // Input i through `extra` (or none) and, with `summary`, a summary of its own.
  void read_one(std::size_t i, trace_sink* extra, bool summary) {
    auto& r = results_[i];
    std::vector<trace_sink*> sinks;
    if (extra != nullptr) {
      sinks.push_back(extra);
    }
    if (summary) {
      r.summary = std::make_unique<summary_sink>();
      r.summary->set_grouping(m_.sopt.grouping);
      sinks.push_back(r.summary.get());
    }
    // Only the JSON writer needs ranges thread by thread in time order (nesting depth).
    r.totals = sinks.empty() ? count_sqlite_input(inputs_[i])
                             : read_sqlite_input(inputs_[i], sinks, extra != nullptr);
  }

  // In input order: input i's totals and its summary (then freed) into the merge's.
  void add_one(std::size_t i) {
    auto const& t = results_[i].totals;
    all_.processes += t.processes;
    all_.ranges += t.ranges;
    all_.marks += t.marks;
    all_.gpu_ops += t.gpu_ops;
    all_.api_calls += t.api_calls;
    all_.counter_samples += t.counter_samples;
    add_summary(i);
  }

  void add_summary(std::size_t i) {
    if (auto& s = results_[i].summary) {
      ranks_.add(inputs_[i].rank, *s);
      s.reset();
    }
  }

  /// What reading one input left for add_one.
  struct input_result {
    std::unique_ptr<summary_sink> summary;
    read_totals totals;
  };

  merge_args const& m_;
  std::vector<merge_input> const& inputs_;
  std::int64_t anchor_;
  std::string partial_;
  cross_rank_summary ranks_;
  read_totals all_;
  std::vector<input_result> results_{inputs_.size()};
};

}  // namespace

int merge_main(int argc, char** argv) {
  merge_args m;
  if (auto const status = parse(argc, argv, m)) {
    return *status;
  }
  if (!sqlite_threads_allowed()) {
    m.jobs = 1;  // an SQLite built without threads: one connection at a time
  }
  // Our JSON starts with '{', an SQLite file with its header: anything else is left to the
  // SQLite checks, which name what is wrong with it.
  std::vector<char> json(m.files.size());
  for (std::size_t i = 0; i < m.files.size(); ++i) {
    json[i] = starts_as_json_object(m.files[i]) ? 1 : 0;
  }
  std::vector<merge_input> inputs;
  std::optional<converted_inputs> converted;
  try {
    converted.emplace(m, json);
    inputs = inspect_all(m, json, *converted);
  } catch (input_error const& e) {
    return bad_usage(e.what());
  } catch (output_error const& e) {
    std::fprintf(stderr, "nvtxpp-capture merge: %s; nothing written\n", e.what());
    return 3;
  }
  std::int64_t const anchor = assign_identities(inputs);
  std::map<long, std::string const*> seen;
  for (auto const& in : inputs) {
    if (auto [it, fresh] = seen.try_emplace(in.rank, &in.path); !fresh) {
      std::fprintf(stderr, "nvtxpp-capture merge: warning: %s and %s both say rank %ld\n",
                   it->second->c_str(), in.path.c_str(), in.rank);
    }
  }
  merge_run run{m, inputs, anchor};
  try {
    run.run();
  } catch (input_error const& e) {
    std::fprintf(stderr, "nvtxpp-capture merge: %s; nothing written\n", e.what());
    return 2;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "nvtxpp-capture merge: %s; nothing written\n", e.what());
    return 3;
  }
  run.report();
  return 0;
}

}  // namespace nvtxpp::capture
