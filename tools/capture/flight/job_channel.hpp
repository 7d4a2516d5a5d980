/// @file
/// @brief Job-wide dumps (`--dump-scope=job`): how the flight recorders of one job's ranks agree
/// on a moment to dump, with no service but the output directory they share (a cluster's shared
/// filesystem, or a node's local disk).
///
/// A job is named by its launcher's environment (job_identity). Its ranks meet in
/// `<output directory>/.nvtxpp-job-<job id>/`, a directory of the user's alone (checked as
/// private_files.hpp checks). A rank that wants a dump announces it: the file `dump<N>`, made
/// whole and exclusively (link(2) of a finished file: no reader sees half of it, no two ranks make
/// the same N), holding the cut (wall-clock ns), the rank, whether the windows end at the cut (a
/// trigger's) and the cause. Every rank looks for
/// new announcements at each of its launcher's 20 ms polls and dumps its window for that cut
/// under the same number N. Announcements less than 1 s apart are one moment: a rank that finds
/// `dump<N>` made within 1 s of its own cut joins it instead of making N+1.
///
/// Every launcher of the job holds a shared lock on the directory; the last one to leave
/// removes it, and a later start removes one that no process holds (a job killed whole).
#pragma once

#include "../launch/output_name.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nvtxpp::capture::cli {

/// @brief Which job this process belongs to, and its rank there.
struct job_identity {
  std::string id;        ///< the job's id, safe as a file name part
  std::string variable;  ///< the variable it came from (NVTXPP_JOB_ID, PMIX_NAMESPACE, ...)
  long rank = 0;
  long size = 0;
};

/// @brief The job of a multi-rank launch: its id from NVTXPP_JOB_ID, TORCHELASTIC_RUN_ID (when the
/// rank is torchrun's; its default "none" with MASTER_ADDR and MASTER_PORT), PMIX_NAMESPACE (Open
/// MPI, PMIx launchers), OMPI_MCA_ess_base_jobid, or SLURM_JOB_ID with SLURM_STEP_ID, in that
/// order; its rank as detect_rank() finds it. nullopt when either is missing.
[[nodiscard]] std::optional<job_identity> detect_job(env_lookup const& env);

/// @brief One announced job-wide dump.
struct job_dump {
  unsigned number = 0;
  std::int64_t cut_realtime_ns = 0;  ///< the moment every rank cuts its window at
  long rank = 0;                     ///< the rank that started it
  bool ends_at_cut = false;          ///< every window ends at the cut (a trigger's moment)
  std::string cause;                 ///< why ("trigger step>3x", "hang", ...)
};

/// @brief A rank's end of the job's meeting directory.
class job_channel {
 public:
  job_channel() = default;
  ~job_channel();
  job_channel(job_channel const&) = delete;
  job_channel& operator=(job_channel const&) = delete;

  /// @brief Joins the job's directory beside `output` (the trace file name).
  /// @return "" when joined, else why the rank must dump alone
  std::string join(std::string const& output, job_identity const& job);

  /// @brief Announces a dump at `cut_realtime_ns` for `cause` (`ends_at_cut`: the windows end
  /// there), or joins one announced within 1 s of it.
  /// @return its number (0 when the directory could not take it); `joined` (when given) says
  /// whether it was another rank's announcement of the same moment, `seen` whether this rank
  /// has already taken that one (take_new): its dump is written
  unsigned announce(std::string const& cause, std::int64_t cut_realtime_ns,
                    bool ends_at_cut = false, bool* joined = nullptr, bool* seen = nullptr);

  /// @brief The dumps others announced since the last call, oldest first.
  [[nodiscard]] std::vector<job_dump> take_new();

  /// @brief Leaves the job: the last rank out removes the directory.
  void leave();

  /// @brief The meeting directory.
  [[nodiscard]] std::string const& dir() const noexcept { return dir_; }

 private:
  [[nodiscard]] std::optional<job_dump> read_dump(unsigned n) const;

  std::string dir_;
  long rank_ = 0;
  int fd_ = -1;        ///< the directory, held (shared lock)
  unsigned seen_ = 0;  ///< the highest number this rank has dumped or let pass
};

/// @brief The wall clock in ns.
[[nodiscard]] std::int64_t realtime_ns();

/// @brief `realtime` (ns of the wall clock) on this machine's monotonic clock, the clock of the
/// rings' records.
[[nodiscard]] std::int64_t realtime_to_monotonic(std::int64_t realtime);

/// @brief `monotonic` (ns) on the wall clock: the inverse of realtime_to_monotonic.
[[nodiscard]] std::int64_t monotonic_to_realtime(std::int64_t monotonic);

}  // namespace nvtxpp::capture::cli
