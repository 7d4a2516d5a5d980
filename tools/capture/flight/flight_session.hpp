/// @file
/// @brief The launcher's side of the flight recorder while the program runs: waits for it,
/// answers `nvtxpp-capture dump PID` / `stacks PID` / `top PID` (a request directory,
/// flight_control.hpp),
/// runs the watchers (triggers, hang timeout) and writes the dumps (`.dumpN`). The in-process
/// side only fills the rings; everything here reads them through flight/flight_window.hpp.
#pragma once

#include "../analyses/summary.hpp"
#include "../launch/flight_options.hpp"
#include "../model/trace_model.hpp"

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace nvtxpp::capture {
class flight_watch;
struct watch_firing;
}  // namespace nvtxpp::capture

namespace nvtxpp::capture::cli {

class ring_keeper;
class job_channel;

/// @brief How long past a slow instance's end a trigger's dump holds: the window ends there
/// however late the dump is written (the watcher sees an end up to 120 ms after it, and a dump
/// takes as long as its window is large), so it shows the moment and the start of what came
/// next, not whatever the program did until the dump.
inline constexpr std::int64_t trigger_tail_ns = 10'000'000;

/// @brief What one dump writes.
struct dump_spec {
  std::string reason;
  bool live = true;  ///< the program still runs
  bool with_summary = false;
  unsigned number = 0;       ///< a job-wide dump's number (0: the next of this launch)
  std::int64_t cut_ns = 0;   ///< the moment it is for (monotonic ns; 0: now)
  bool ends_at_cut = false;  ///< the window ends at `cut_ns`: later records are left out
  /// Not written when its window is, byte for byte, the last dump's and that file is still
  /// there (the dump at the program's end after a dump of the finished program).
  bool unless_repeat = false;
  /// With --cuda-sample: the process records GPU work in full for --cuda-raise from this dump
  /// on, and a dump of those steps follows (a dump that a trigger, hang or request started).
  bool raise = false;
};

/// @brief One launch under --flight-recorder.
class flight_session {
 public:
  /// @param output the trace file name, expanded (a `%n` mark left for dump numbers)
  flight_session(flight_options opt, std::string raw_dir, std::string output, bool trace,
                 bool summary, summary_options sopt, std::int64_t base_ns);
  ~flight_session();
  flight_session(flight_session const&) = delete;
  flight_session& operator=(flight_session const&) = delete;

  /// @brief Waits for `child` to end, serving requests and watchers meanwhile.
  /// @return its wait status
  int wait_for(pid_t child);

  /// @brief The dump at the program's end (when `--dump-on-exit` or a signal asks for it), and
  /// the watchers' closing notes. `torn_down`: this launcher passed a SIGTERM/SIGHUP on to the
  /// program (a job torn down: its death starts no job-wide dump).
  /// @return false when a dump could not be written
  bool finish(int status, bool torn_down = false);

  /// @brief Writes one dump of the current window, as `d` says.
  /// @return the message for stderr (starts with "dump N" or says why none was written)
  std::string dump(dump_spec const& d);

  /// @brief Names the launch in the stacks reports ("rank 3").
  void set_label(std::string const& label);

  /// @brief Serves `dump PID` / `stacks PID` through the request directory `dir` (checked by
  /// control_dir()); without it, the launch answers no requests.
  void set_control_dir(std::string dir) { control_dir_ = std::move(dir); }

  /// @brief --dump-scope=job: meets the job's other ranks beside `output` (job_channel.hpp).
  /// Without a job or a trusted meeting place, says why on stderr and dumps alone.
  void join_job(std::string const& output);

  /// @brief Keeps the rings that the processes make in `ring_dir` nameless (ring_keeper.hpp).
  void keep_rings(std::string const& ring_dir);

  /// @brief Whether the last dump failed (the window is then still in the rings).
  [[nodiscard]] bool failed() const noexcept { return failed_; }

 private:
  void serve_requests();
  std::string stacks_text(bool live);
  /// Dumps for `cause`: in job scope announced to every rank first (one number for all).
  /// `fired`: a trigger's, whose window ends trigger_tail_ns after the instance.
  void dump_now(std::string const& cause, bool live, bool with_stacks,
                watch_firing const* fired = nullptr, bool raise = true);
  /// After a dump that raised GPU recording: the dump of the raised steps, once it is over.
  void schedule_raise_dump(unsigned raised_by);
  void serve_raise_dump();
  /// The dumps other ranks announced.
  void serve_job();
  void write_stacks();

  flight_options opt_;
  std::string raw_dir_;
  std::string output_;
  bool trace_;
  bool summary_;
  summary_options sopt_;
  std::int64_t base_ns_;
  unsigned next_dump_ = 1;
  bool failed_ = false;
  /// The last dump written: its number, file and window's digest (flight_window.hpp).
  unsigned last_number_ = 0;
  std::string last_name_;
  std::uint64_t last_digest_ = 0;
  /// Where the last window composed starts in each thread (pid, tid).
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::int64_t> last_thread_starts_;
  std::string control_dir_;
  std::string control_;  ///< this launcher's entry in the request directory
  pid_t child_ = 0;      ///< the program
  std::unique_ptr<ring_keeper> rings_;
  std::unique_ptr<job_channel> job_;
  std::string label_;
  std::int64_t raise_dump_at_ = 0;  ///< when the raised steps' dump is due (0: none)
  unsigned raised_by_ = 0;          ///< the dump that raised them
  std::unique_ptr<flight_watch> watch_;
};

}  // namespace nvtxpp::capture::cli
