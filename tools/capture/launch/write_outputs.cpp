// Writing a raw recording's outputs (write_outputs.hpp).

#include "write_outputs.hpp"

#include "../common/launch_meta.hpp"
#include "../readers/raw/raw_reader.hpp"
#include "../writers/sqlite/sqlite_sink.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace nvtxpp::capture::cli {

bool is_sqlite(std::string const& path) {
  std::string const ext = ".sqlite";
  return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
}

std::unique_ptr<trace_sink> open_output(std::string const& path, std::int64_t base_ns) {
  if (is_sqlite(path)) {
    return make_sqlite_sink(path);
  }
  auto json = std::make_unique<json_sink>(path, base_ns);
  // The wall-clock anchor, rank and host the SQLite output records too: merge reads them.
  json->set_origin(utc_of_monotonic(base_ns), launch_metadata());
  return json;
}

namespace {

// Past these a JSON trace is slow or impossible to open in the viewers.
constexpr std::uint64_t json_event_limit = 5'000'000;
constexpr std::uint64_t json_byte_limit = 1ULL << 30U;

}  // namespace

/// Reads `raw_dir` into the trace output (if any) and the summary (if wanted), prints what
/// happened. A write failure is reported once, the partial file removed, the summary still
/// printed (from a second read).
outputs_result write_outputs(std::string const& raw_dir, std::string const& output,
                             std::unique_ptr<trace_sink> trace, bool summary,
                             summary_options const& sopt) {
  outputs_result res;
  auto sum = std::make_unique<summary_sink>();
  sum->set_grouping(sopt.grouping);
  read_totals totals;
  try {
    reader rd{raw_dir, sopt.max_warning_lines, sopt.graphs};
    if (trace) {
      rd.add_sink(*trace);
    }
    if (summary) {
      rd.add_sink(*sum);
    }
    totals = rd.run();
  } catch (output_error const& e) {
    std::fprintf(stderr, "nvtxpp-capture: %s; no trace written\n", e.what());
    trace.reset();  // closes the file before it is removed
    for (char const* suffix : {"", "-journal", "-wal", "-shm"}) {  // SQLite's side files too
      ::unlink((output + suffix).c_str());
    }
    res.write_failed = true;
    if (summary) {
      sum = std::make_unique<summary_sink>();
      sum->set_grouping(sopt.grouping);
      try {
        reader rd{raw_dir, sopt.max_warning_lines, sopt.graphs};
        rd.add_sink(*sum);
        totals = rd.run();
      } catch (std::exception const& e2) {
        std::fprintf(stderr, "nvtxpp-capture: %s\n", e2.what());
        return res;
      }
    } else {
      return res;
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "nvtxpp-capture: %s\n", e.what());
    res.fatal = true;
    return res;
  }
  if (summary) {
    std::fflush(stdout);
    sum->print(stdout, totals, sopt);
  } else if (!totals.warning_counts.empty()) {
    std::uint64_t n = 0;
    for (auto const& [kind, count] : totals.warning_counts) {
      n += count;
    }
    std::fprintf(stderr, "nvtxpp-capture: %llu warning(s); run with the summary to see them\n",
                 static_cast<unsigned long long>(n));
  }
  if (auto const& u = totals.unattributed; u[0] + u[1] + u[2] != 0) {
    // Never silent: GPU time that projects onto no range (docs/capture-gpu.md, "Never
    // silent").
    std::fprintf(stderr,
                 "nvtxpp-capture: %llu GPU operation(s) with no launching CUDA API call in the "
                 "recording (%llu kernel(s), %llu copy(ies), %llu memset(s)): kept in the trace, "
                 "under no NVTX range\n",
                 static_cast<unsigned long long>(u[0] + u[1] + u[2]),
                 static_cast<unsigned long long>(u[0]), static_cast<unsigned long long>(u[1]),
                 static_cast<unsigned long long>(u[2]));
  }
  if (trace && !res.write_failed) {
    std::string gpu;
    if (totals.gpu_ops != 0 || totals.api_calls != 0) {
      gpu = ", " + std::to_string(totals.gpu_ops) + " GPU operation(s), " +
            std::to_string(totals.api_calls) + " CUDA API call(s)";
    }
    if (totals.counter_samples != 0) {
      gpu += ", " + std::to_string(totals.counter_samples) + " counter sample(s)";
    }
    std::fprintf(stderr,
                 "nvtxpp-capture: %llu range(s), %llu instant event(s)%s from %zu process(es) "
                 "written to %s\n",
                 static_cast<unsigned long long>(totals.ranges),
                 static_cast<unsigned long long>(totals.marks), gpu.c_str(), totals.processes,
                 output.c_str());
    std::uint64_t event_limit = json_event_limit;
    if (char const* v = std::getenv("NVTXPP_CAPTURE_JSON_EVENT_LIMIT"); v != nullptr && *v != 0) {
      event_limit = std::strtoull(v, nullptr, 10);  // testing: the notice without 5 M events
    }
    if (auto const* json = dynamic_cast<json_sink const*>(trace.get());
        json != nullptr && (json->events() > event_limit || json->bytes() > json_byte_limit)) {
      std::fprintf(stderr,
                   "nvtxpp-capture: %s holds %llu events (%.1f MiB), more than JSON viewers open "
                   "comfortably; write -o FILE.sqlite for traces this large\n",
                   output.c_str(), static_cast<unsigned long long>(json->events()),
                   static_cast<double>(json->bytes()) / (1024.0 * 1024.0));
    }
  }
  return res;
}

}  // namespace nvtxpp::capture::cli
