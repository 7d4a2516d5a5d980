// The launcher's side of the flight recorder (flight_session.hpp).

#include "flight_session.hpp"

#include "../common/private_files.hpp"
#include "../launch/output_name.hpp"
#include "../launch/write_outputs.hpp"
#include "flight_control.hpp"
#include "flight_watch.hpp"
#include "flight_window.hpp"
#include "job_channel.hpp"
#include "ring_keeper.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <utility>

namespace nvtxpp::capture::cli {

namespace {

std::int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// How long a dump waits for the processes to hand over their partly filled blocks.
constexpr std::int64_t flush_wait_ns = 2'000'000'000;

/// The raised steps' dump comes this long after the raise ends: the process's first period
/// after it has started, so the whole raise is in the window.
constexpr std::int64_t raise_dump_margin_ns = 200'000'000;

/// The cause a raised steps' dump gives (a job's ranks raise nothing on it).
constexpr char raise_dump_cause[] = "GPU detail raised after dump ";

/// Whether a process of the run samples its GPU work (CUPTI loaded under --cuda-sample: its
/// capture file holds the `gpu_sample` info record, written when CUPTI starts): only then does a
/// raise record anything, and a dump of the raised steps follow.
bool gpu_sampled(std::string const& raw_dir) {
  constexpr std::size_t look = std::size_t{16} << 20;  // the record comes early in the file
  for (std::uint32_t pid : ring_processes(raw_dir)) {
    std::FILE* f = std::fopen((raw_dir + "/nvtxpp-" + std::to_string(pid) + ".bin").c_str(), "rb");
    if (f == nullptr) {
      continue;
    }
    std::string bytes(look, '\0');
    bytes.resize(std::fread(bytes.data(), 1, look, f));
    std::fclose(f);
    if (bytes.find("gpu_sample=") != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

flight_session::flight_session(flight_options opt, std::string raw_dir, std::string output,
                               bool trace, bool summary, summary_options sopt, std::int64_t base_ns)
    : opt_{std::move(opt)},
      raw_dir_{std::move(raw_dir)},
      output_{std::move(output)},
      trace_{trace},
      summary_{summary},
      sopt_{sopt},
      base_ns_{base_ns} {
  std::vector<watch_trigger> triggers;
  for (auto const& t : opt_.triggers) {
    triggers.push_back({t.text, t.range, t.domain, t.factor, t.bound_ns});
  }
  watch_ = std::make_unique<flight_watch>(raw_dir_, std::move(triggers), opt_.hang_ns);
}

void flight_session::set_label(std::string const& label) {
  label_ = label;
  watch_->set_label(label);
}

void flight_session::join_job(std::string const& output) {
  auto const job = detect_job(process_env());
  if (!job) {
    std::fprintf(stderr,
                 "nvtxpp-capture: --dump-scope=job: no multi-rank job in the environment (a rank "
                 "and one of NVTXPP_JOB_ID, PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid, "
                 "SLURM_JOB_ID); this process dumps alone\n");
    return;
  }
  job_ = std::make_unique<job_channel>();
  if (std::string const why = job_->join(output, *job); !why.empty()) {
    std::fprintf(stderr, "nvtxpp-capture: rank %ld: --dump-scope=job: %s; this rank dumps alone\n",
                 job->rank, why.c_str());
    job_.reset();
  }
}

void flight_session::write_stacks() {
  std::string const report = stacks_text(true);
  std::string const name = stacks_name(output_);
  if (FILE* f = std::fopen(name.c_str(), "w")) {
    std::fputs(report.c_str(), f);
    std::fclose(f);
    std::fprintf(stderr, "nvtxpp-capture: %sstacks in %s\n",
                 label_.empty() ? "" : (label_ + ": ").c_str(), name.c_str());
  } else {
    std::fprintf(stderr, "nvtxpp-capture: cannot write %s: %s\n", name.c_str(),
                 std::strerror(errno));
  }
}

void flight_session::dump_now(std::string const& cause, bool live, bool with_stacks,
                              watch_firing const* fired, bool raise) {
  std::int64_t const seen_ns = now_ns();
  dump_spec d{cause, live};
  d.raise = raise && live;
  if (fired != nullptr) {
    d.cut_ns = fired->end_ns + trigger_tail_ns;
    d.ends_at_cut = true;
  }
  bool joined = false;  // another rank's dump of the same moment: it follows a raise up
  if (job_) {
    // The moment every rank cuts at: the trigger's, else now.
    std::int64_t const at = d.ends_at_cut ? monotonic_to_realtime(d.cut_ns) : realtime_ns();
    bool seen = false;
    d.number = job_->announce(label_ + ": " + cause + (with_stacks ? " [stacks]" : ""), at,
                              d.ends_at_cut, &joined, &seen);
    if (seen) {
      std::fprintf(stderr,
                   "nvtxpp-capture: %s: %s: the moment of job dump %u, already written; no "
                   "second dump\n",
                   label_.c_str(), cause.c_str(), d.number);
      return;
    }
    if (d.number == 0) {
      std::fprintf(stderr,
                   "nvtxpp-capture: %s: cannot announce a job dump in %s: %s; this rank "
                   "dumps alone\n",
                   label_.c_str(), job_->dir().c_str(), std::strerror(errno));
    } else {
      d.cut_ns = d.ends_at_cut ? d.cut_ns : realtime_to_monotonic(at);
      d.reason = "job dump started by " + label_ + ": " + cause;
    }
  }
  if (with_stacks) {
    write_stacks();
  }
  std::string msg = dump(d);
  if (fired != nullptr && !failed_) {
    // How late the dump came is said: its window ends at the instance all the same, unless the
    // ring wrapped past the instance's start meanwhile.
    msg += fmt::format(
        " {:.0f} ms after the instance ended (seen after {:.0f} ms; the window ends {:.0f} ms "
        "after it)",
        static_cast<double>(now_ns() - fired->end_ns) / 1e6,
        static_cast<double>(seen_ns - fired->end_ns) / 1e6,
        static_cast<double>(trigger_tail_ns) / 1e6);
    // The watcher and the window map the same ticks through calibrations taken at different
    // times: they agree within microseconds.
    constexpr std::int64_t clock_slack_ns = 50'000;
    auto const start = last_thread_starts_.find({fired->pid, fired->tid});
    if (start == last_thread_starts_.end() || start->second > fired->start_ns + clock_slack_ns) {
      msg +=
          "; the window no longer reaches back to the instance's start, so the instance is not "
          "in it: a larger --flight-recorder LIMIT keeps more";
    }
  }
  std::fprintf(stderr, "nvtxpp-capture: %s%s\n", label_.empty() ? "" : (label_ + ": ").c_str(),
               msg.c_str());
  if (d.raise && !joined) {
    schedule_raise_dump(failed_ ? next_dump_ : last_number_);
  }
}

void flight_session::schedule_raise_dump(unsigned raised_by) {
  if (opt_.raise_ns <= 0 || !gpu_sampled(raw_dir_)) {
    return;  // nothing raised: no CUPTI (a program without CUDA), or no sampling
  }
  raise_dump_at_ = now_ns() + opt_.raise_ns + raise_dump_margin_ns;  // a later raise postpones
  raised_by_ = raised_by;
}

void flight_session::serve_raise_dump() {
  if (raise_dump_at_ == 0 || now_ns() < raise_dump_at_) {
    return;
  }
  raise_dump_at_ = 0;
  // In job scope announced as any dump (one number on every rank); it raises nothing again.
  dump_now(fmt::format("{}{}: the {:g} s after it, GPU activity in full", raise_dump_cause,
                       raised_by_, static_cast<double>(opt_.raise_ns) / 1e9),
           true, false, nullptr, false);
}

void flight_session::serve_job() {
  if (!job_) {
    return;
  }
  for (auto const& d : job_->take_new()) {
    // How long the announcement took to reach this rank (the job's clocks agreeing): said, so a
    // user sees what "the same moment" meant.
    // (The moment can lie ahead of its announcement: a trigger's window ends 10 ms after the
    // slow instance, and ranks may see that first; said as 0.)
    double const late_ms =
        std::max(0.0, static_cast<double>(realtime_ns() - d.cut_realtime_ns) / 1e6);
    std::string cause = d.cause;
    bool const stacks = cause.size() > 9 && cause.compare(cause.size() - 9, 9, " [stacks]") == 0;
    if (stacks) {
      cause.resize(cause.size() - 9);
      watch_->mark_hang_reported();  // the job's hang: reported once, by every rank
      write_stacks();
    }
    dump_spec spec{"job dump started by " + cause};
    spec.raise = cause.find(raise_dump_cause) == std::string::npos;  // every rank raises
    spec.number = d.number;
    spec.cut_ns = realtime_to_monotonic(d.cut_realtime_ns);
    spec.ends_at_cut = d.ends_at_cut;
    std::fprintf(stderr, "nvtxpp-capture: %s: %s (seen %.0f ms after the announcement)\n",
                 label_.c_str(), dump(spec).c_str(), late_ms);
    // (The raised steps' dump comes from the rank that started this one, for every rank.)
  }
}

flight_session::~flight_session() { unregister_launcher(control_); }

void flight_session::keep_rings(std::string const& ring_dir) {
  rings_ = std::make_unique<ring_keeper>(ring_dir, raw_dir_);
}

int flight_session::wait_for(pid_t child) {
  child_ = child;
  if (!control_dir_.empty()) {
    control_ = register_launcher(control_dir_, child);
    if (control_.empty()) {
      std::fprintf(stderr,
                   "nvtxpp-capture: cannot register in %s: %s; `nvtxpp-capture dump|stacks`"
                   " cannot reach this run\n",
                   control_dir_.c_str(), std::strerror(errno));
    }
  }
  std::uint32_t triggered = 0;
  std::int64_t cooldown_until = 0;
  int status = 0;
  for (;;) {
    pid_t const r = ::waitpid(child, &status, WNOHANG);
    if (rings_) {
      rings_->adopt();
    }
    if (r == child || (r < 0 && errno != EINTR)) {
      break;
    }
    serve_requests();
    if (watch_->active()) {
      watch_->poll(now_ns());
      for (auto const& fired : watch_->take_fired()) {
        std::int64_t const t = now_ns();
        if (triggered >= opt_.trigger_max) {
          watch_->note_skipped(fired, "--trigger-max reached");
        } else if (t < cooldown_until) {
          watch_->note_skipped(fired, "cool-down");
        } else {
          ++triggered;
          cooldown_until = t + opt_.cooldown_ns;
          dump_now("trigger " + fired.text, true, false, &fired);
        }
      }
      if (watch_->hang_due(now_ns())) {
        std::fprintf(stderr, "nvtxpp-capture: no range opened or closed for %.3g s\n",
                     static_cast<double>(opt_.hang_ns) / 1e9);
        dump_now("hang", true, true);
      }
    }
    serve_job();
    serve_raise_dump();
    timespec const step{0, 20'000'000};
    ::nanosleep(&step, nullptr);
  }
  return status;
}

void flight_session::serve_requests() {
  if (control_.empty()) {
    return;
  }
  for (auto const& req : take_requests(control_)) {
    if (req.verb == "dump") {
      if (job_) {
        // Every rank dumps; the client hears of this rank's.
        dump_now("requested by nvtxpp-capture dump", true, false);
        answer_request(control_, req.client,
                       std::string{failed_ ? "error\n" : "ok\n"} + "dump " +
                           std::to_string(next_dump_ - 1) + " of every rank of the job\n");
        continue;
      }
      dump_spec spec{"requested by nvtxpp-capture dump"};
      spec.raise = true;
      std::string const msg = dump(spec);
      std::fprintf(stderr, "nvtxpp-capture: %s\n", msg.c_str());
      schedule_raise_dump(failed_ ? next_dump_ : last_number_);
      answer_request(control_, req.client, (failed_ ? "error\n" : "ok\n") + msg + "\n");
    } else if (req.verb == "stacks") {
      answer_request(control_, req.client, "ok\n" + stacks_text(true));
    } else if (req.verb == "top") {
      // `nvtxpp-capture top PID` follows the rings itself: where they are is all it needs.
      answer_request(control_, req.client,
                     "ok\nraw_dir=" + raw_dir_ + "\nprogram=" + std::to_string(child_) + "\n");
    } else {
      answer_request(control_, req.client, "error\nunknown request '" + req.verb + "'\n");
    }
  }
}

std::string flight_session::stacks_text(bool live) {
  if (live) {
    request_flush(raw_dir_, flush_wait_ns, false);
  }
  if (!watch_->following()) {
    // No watcher runs: read what the window holds now (ranges opened before it are not seen).
    flight_watch once{raw_dir_, {}, 0};
    once.set_label(label_);
    once.poll(now_ns());
    return once.stacks_report(now_ns(), false);
  }
  watch_->poll(now_ns());
  return watch_->stacks_report(now_ns(), true);
}

std::string flight_session::dump(dump_spec const& d) {
  if (d.number != 0) {
    next_dump_ = d.number;  // a job-wide dump's number, the same on every rank
  }
  if (d.live) {
    request_flush(raw_dir_, flush_wait_ns, true, d.raise && opt_.raise_ns > 0);
  }
  if (rings_) {
    rings_->adopt();
  }
  std::string tmp = raw_dir_ + "/dump-XXXXXX";
  if (::mkdtemp(tmp.data()) == nullptr) {
    failed_ = true;
    return "cannot make a directory in " + raw_dir_ + ": " + std::strerror(errno) +
           "; no dump written (the window stays in the ring for the next dump)";
  }
  window_result const w =
      compose_window(raw_dir_, tmp, opt_.keep_ns, now_ns(), d.live, d.cut_ns, d.ends_at_cut);
  for (auto const& e : w.errors) {
    std::fprintf(stderr, "nvtxpp-capture: %s\n", e.c_str());
  }
  last_thread_starts_ = w.thread_starts;
  if (d.unless_repeat && w.errors.empty() && last_number_ != 0 && w.digest == last_digest_ &&
      ::access(last_name_.c_str(), F_OK) == 0) {
    // The same window again (the last dump came after the program ended): one file is enough.
    failed_ = false;
    if (d.with_summary) {
      static_cast<void>(write_outputs(tmp, last_name_, nullptr, true, sopt_));
    }
    remove_tree(tmp);
    return "no dump (" + d.reason + "): the window is the one dump " +
           std::to_string(last_number_) + " holds, byte for byte (" + last_name_ +
           "); not written again";
  }
  std::string const name = dump_name(output_, next_dump_);
  std::unique_ptr<trace_sink> sink;
  failed_ = false;
  try {
    if (trace_) {
      sink = open_output(name, base_ns_);
    }
    std::fflush(nullptr);
    outputs_result const r =
        write_outputs(tmp, name, std::move(sink), d.with_summary || !trace_, sopt_);
    failed_ = r.write_failed || r.fatal;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "nvtxpp-capture: %s\n", e.what());
    failed_ = true;
  }
  remove_tree(tmp);
  if (failed_) {
    return "dump " + std::to_string(next_dump_) + " (" + d.reason + ") could not be written to " +
           name + "; the window stays in the ring for the next dump";
  }
  std::string result = "dump " + std::to_string(next_dump_) + " (" + d.reason +
                       "): " + std::to_string(w.processes) + " process(es), " +
                       std::to_string(w.ring_bytes / 1024) + " KiB of window, written to " + name;
  last_number_ = next_dump_;
  last_name_ = name;
  last_digest_ = w.digest;
  ++next_dump_;
  return result;
}

bool flight_session::finish(int status, bool torn_down) {
  bool ok = true;
  bool const by_signal = WIFSIGNALED(status);
  if (watch_->active()) {
    watch_->poll(now_ns());  // the last triggers' ranges, for the closing notes
  }
  if (rings_) {
    rings_->adopt();  // a ring made just before the program ended
  }
  serve_job();  // a job dump announced while the program ended
  if (by_signal && job_ && !torn_down) {
    // This rank died on its own (crash, SIGKILL, OOM killer): every rank dumps this moment. A
    // rank whose launcher passed a SIGTERM/SIGHUP on (the job being torn down) only dumps its own.
    dump_now("program killed by signal " + std::to_string(WTERMSIG(status)), false, false);
    ok = !failed_;
  } else if (opt_.dump_on_exit || by_signal) {
    std::string const reason =
        by_signal ? "program killed by signal " + std::to_string(WTERMSIG(status)) : "at exit";
    dump_spec spec{reason, false, summary_};
    spec.unless_repeat = true;
    std::string const msg = dump(spec);
    std::fprintf(stderr, "nvtxpp-capture: %s%s\n",
                 job_ && !label_.empty() ? (label_ + ": ").c_str() : "", msg.c_str());
    ok = !failed_;
  }
  if (!ok && rings_) {
    rings_->restore();  // the raw recording is kept for a later --convert: the rings with it
  }
  for (auto const& note : watch_->closing_notes()) {
    std::fprintf(stderr, "nvtxpp-capture: %s\n", note.c_str());
  }
  return ok;
}

}  // namespace nvtxpp::capture::cli
