// `nvtxpp-capture merge`: per-rank SQLite files onto one timeline, and the cross-rank summary.

#include "merge_main.hpp"

#include "../offline/cross_rank_summary.hpp"
#include "../offline/merge_sqlite.hpp"
#include "../offline/sqlite_input.hpp"
#include "../offline/sqlite_reader.hpp"
#include "../writers.hpp"

#include <fmt/format.h>

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nvtxpp::capture {

namespace {

constexpr char usage[] =
    "usage: nvtxpp-capture merge [-o OUT] [--summary-only|--no-summary] [--csv] FILE...\n"
    "\n"
    "Merges SQLite traces in Nsight Systems' export layout (nvtxpp-capture -o X.sqlite, or\n"
    "nsys export --type sqlite), typically one per rank of a job, into one trace, and prints\n"
    "a cross-rank summary: per range, the spread of its per-rank total time and the slowest\n"
    "rank (with GPU data, the same for each range's GPU projection).\n"
    "\n"
    "Every input becomes its own process(es), named by rank, host and pid; every input's\n"
    "times are put on one clock through its wall-clock anchor (its session start time).\n"
    "The rank is the one the capture recorded (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or\n"
    "SLURM_PROCID), else rankN in the file name (trace.rank3.sqlite) or a number before its\n"
    "extension (report.3.sqlite), else the input's position.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT    merged trace (default: nvtxpp-merged.json); .sqlite writes an SQLite\n"
    "                      database `nsys stats` reads, anything else Chrome JSON\n"
    "      --summary-only  print the cross-rank summary, write no trace\n"
    "      --no-summary    write the trace, print no summary\n"
    "      --csv           print the summary as CSV\n"
    "  -h, --help          this text\n"
    "\n"
    "exit status: 0 done; 2 bad usage or an input that cannot be merged (not SQLite, truncated,\n"
    "damaged, not in the export layout: named on stderr); 3 the output could not be written.\n"
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

void on_fatal_signal(int sig) {
  if (g_partial[0] != '\0') {
    ::unlink(g_partial);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void guard_partial(std::string const& path) {
  std::snprintf(g_partial, sizeof g_partial, "%s", path.c_str());
  struct sigaction sa {};
  sa.sa_handler = &on_fatal_signal;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    ::sigaction(sig, &sa, nullptr);
  }
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
}

}  // namespace

int merge_main(int argc, char** argv) {
  std::string output = "nvtxpp-merged.json";
  bool trace = true;
  bool summary = true;
  summary_options sopt;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    if (a == "--") {
      files.insert(files.end(), argv + i + 1, argv + argc);
      break;
    }
    if (a == "-o" || a == "--output") {
      if (i + 1 >= argc) {
        return bad_usage("-o needs a value (see --help)");
      }
      output = argv[++i];
    } else if (a.rfind("--output=", 0) == 0) {
      output = a.substr(9);
    } else if (a == "--summary-only") {
      trace = false;
    } else if (a == "--no-summary") {
      summary = false;
    } else if (a == "--csv") {
      sopt.csv = true;
    } else if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return bad_usage("unknown option " + a + " (see --help)");
    } else {
      files.push_back(a);
    }
  }
  if (!trace && !summary) {
    return bad_usage("--summary-only and --no-summary together leave nothing to do");
  }
  if (files.empty()) {
    std::fputs(usage, stderr);
    return 2;
  }
  if (output.empty()) {
    return bad_usage("-o needs a file name");
  }

  // Every input is checked before anything is written.
  std::vector<merge_input> inputs;
  std::string const out_real = trace ? real(output) : std::string{};
  try {
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (!out_real.empty() && real(files[i]) == out_real) {
        return bad_usage(files[i] + ": is also the output (-o)");
      }
      inputs.push_back(inspect_input(files[i], i));
    }
  } catch (input_error const& e) {
    return bad_usage(e.what());
  }
  std::int64_t const anchor = assign_identities(inputs);
  std::map<long, std::string const*> seen;
  for (auto const& in : inputs) {
    if (auto [it, fresh] = seen.try_emplace(in.rank, &in.path); !fresh) {
      std::fprintf(stderr, "nvtxpp-capture merge: warning: %s and %s both say rank %ld\n",
                   it->second->c_str(), in.path.c_str(), in.rank);
    }
  }

  cross_rank_summary ranks;
  read_totals all;
  std::string partial;
  try {
    auto per_input = [&](trace_sink* extra) {
      for (auto const& in : inputs) {
        summary_sink s;
        std::vector<trace_sink*> sinks;
        if (extra != nullptr) {
          sinks.push_back(extra);
        }
        if (summary) {
          sinks.push_back(&s);
        }
        // Only the JSON writer needs ranges thread by thread in time order (nesting depth).
        auto const t =
            sinks.empty() ? count_sqlite_input(in) : read_sqlite_input(in, sinks, extra != nullptr);
        all.processes += t.processes;
        all.ranges += t.ranges;
        all.marks += t.marks;
        all.gpu_ops += t.gpu_ops;
        all.api_calls += t.api_calls;
        all.counter_samples += t.counter_samples;
        if (summary) {
          ranks.add(in.rank, s);
        }
      }
    };
    if (!trace) {
      per_input(nullptr);
    } else {
      block_fatal_signals(true);  // no window in which the file exists and is not guarded
      try {
        partial = temp_beside(output);
      } catch (...) {
        block_fatal_signals(false);
        throw;
      }
      guard_partial(partial);
      block_fatal_signals(false);
      if (ends_with(output, ".sqlite")) {
        write_merged_sqlite(partial, inputs, anchor);
        per_input(nullptr);  // the summary when wanted, else counts only
      } else {
        json_sink json{partial, 0};
        for (auto const& in : inputs) {  // viewers list the processes by rank
          for (auto const& p : in.processes) {
            json.process_sort_index(p.new_pid, in.rank);
          }
        }
        per_input(&json);
        json.finish();
      }
      if (::rename(partial.c_str(), output.c_str()) != 0) {
        throw output_error("cannot rename " + partial + " to " + output + ": " +
                           std::strerror(errno));
      }
      unguard_partial();
      partial.clear();
    }
  } catch (input_error const& e) {
    if (!partial.empty()) {
      remove_partial(partial);
    }
    std::fprintf(stderr, "nvtxpp-capture merge: %s; nothing written\n", e.what());
    return 2;
  } catch (std::exception const& e) {
    if (!partial.empty()) {
      remove_partial(partial);
    }
    std::fprintf(stderr, "nvtxpp-capture merge: %s; nothing written\n", e.what());
    return 3;
  }

  for (auto const& in : inputs) {
    std::fprintf(stderr, "nvtxpp-capture merge: rank %ld (from %s) host %s: %s, clock %+.3f ms\n",
                 in.rank, in.rank_source.c_str(), in.host.empty() ? "unknown" : in.host.c_str(),
                 in.path.c_str(), static_cast<double>(in.shift_ns) / 1e6);
  }
  if (trace) {
    std::string gpu;
    if (all.gpu_ops != 0 || all.api_calls != 0) {
      gpu = fmt::format(", {} GPU operation(s), {} CUDA API call(s)", all.gpu_ops, all.api_calls);
    }
    if (all.counter_samples != 0) {
      gpu += fmt::format(", {} counter sample(s)", all.counter_samples);
    }
    std::fprintf(stderr,
                 "nvtxpp-capture merge: %llu range(s), %llu instant event(s)%s from %zu "
                 "process(es) of %zu input(s) written to %s\n",
                 static_cast<unsigned long long>(all.ranges),
                 static_cast<unsigned long long>(all.marks), gpu.c_str(), all.processes,
                 inputs.size(), output.c_str());
  }
  if (summary) {
    std::fflush(stderr);
    ranks.print(stdout, sopt);
  }
  return 0;
}

}  // namespace nvtxpp::capture
