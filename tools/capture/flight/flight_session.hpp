/// @file
/// @brief The launcher's side of the flight recorder while the program runs: waits for it,
/// answers `nvtxpp-capture dump PID` / `stacks PID` (a request directory, flight_control.hpp),
/// runs the watchers (triggers, hang timeout) and writes the dumps (`.dumpN`). The in-process
/// side only fills the rings; everything here reads them through offline/flight_window.hpp.
#pragma once

#include "../model/trace_model.hpp"
#include "../analyses/summary.hpp"
#include "../launch/flight_options.hpp"

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace nvtxpp::capture {
class flight_watch;
}  // namespace nvtxpp::capture

namespace nvtxpp::capture::cli {

class ring_keeper;
class job_channel;

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

  /// @brief Writes one dump of the current window. `live`: the program still runs. `number`:
  /// a job-wide dump's (0: the next of this launch); `cut_ns`: its moment (monotonic ns).
  /// @return the message for stderr (starts with "dump N" or says why none was written)
  std::string dump(std::string const& reason, bool live, bool with_summary, unsigned number = 0,
                   std::int64_t cut_ns = 0);

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
  void dump_now(std::string const& cause, bool live, bool with_stacks);
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
  std::string control_dir_;
  std::string control_;  ///< this launcher's entry in the request directory
  std::unique_ptr<ring_keeper> rings_;
  std::unique_ptr<job_channel> job_;
  std::string label_;
  std::unique_ptr<flight_watch> watch_;
};

}  // namespace nvtxpp::capture::cli
