// Job-wide dumps through the output directory (job_channel.hpp).

#include "job_channel.hpp"

#include "../common/private_files.hpp"
#include "../common/rank_vars.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace nvtxpp::capture::cli {

namespace {

/// One moment: announcements closer than this are the same dump.
constexpr std::int64_t same_moment_ns = 1'000'000'000;

std::string safe_id(std::string const& text) {
  std::string out;
  for (char const c : text) {
    bool const ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  return out.substr(0, 128);
}

std::int64_t clock_ns(clockid_t id) {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

std::int64_t realtime_ns() { return clock_ns(CLOCK_REALTIME); }

std::int64_t realtime_to_monotonic(std::int64_t realtime) {
  return realtime - (clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC));
}

std::int64_t monotonic_to_realtime(std::int64_t monotonic) {
  return monotonic + (clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC));
}

std::optional<job_identity> detect_job(env_lookup const& env) {
  auto const rank = detect_rank(env);
  if (!rank) {
    return std::nullopt;
  }
  job_identity job;
  job.rank = rank->rank;
  job.size = rank->size;
  if (auto v = env("NVTXPP_JOB_ID"); v && !v->empty()) {
    job.id = safe_id(*v);
    job.variable = "NVTXPP_JOB_ID";
    return job;
  }
  if (rank->variable == torch_rank_source.rank) {
    // torchrun's run id is "none" unless --rdzv-id gives one: with its rendezvous address and
    // port (unique among the jobs running on a host) two such jobs stay apart.
    if (auto v = env(torch_run_id_var); v && !v->empty()) {
      std::string id = *v;
      if (id == "none") {
        id += "." + env("MASTER_ADDR").value_or("") + "." + env("MASTER_PORT").value_or("");
      }
      job.id = safe_id(id);
      job.variable = torch_run_id_var;
      return job;
    }
  }
  for (char const* var : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"}) {
    if (auto v = env(var); v && !v->empty()) {
      job.id = safe_id(*v);
      job.variable = var;
      return job;
    }
  }
  if (auto v = env("SLURM_JOB_ID"); v && !v->empty()) {
    auto const step = env("SLURM_STEP_ID");
    job.id = safe_id(*v + "." + (step ? *step : std::string{"0"}));
    job.variable = "SLURM_JOB_ID";
    return job;
  }
  return std::nullopt;
}

job_channel::~job_channel() { leave(); }

std::string job_channel::join(std::string const& output, job_identity const& job) {
  auto const slash = output.rfind('/');
  std::string const parent = slash == std::string::npos ? "." : output.substr(0, slash);
  // The leftovers of jobs killed whole (no launcher holds them) go first.
  remove_abandoned(parent, ".nvtxpp-job-", 10, true);
  dir_ = parent + "/.nvtxpp-job-" + job.id;
  rank_ = job.rank;
  if (std::string why = ensure_private_dir(dir_); !why.empty()) {
    return dir_ + " cannot be trusted: " + why;
  }
  fd_ = hold_dir(dir_);
  if (fd_ < 0) {
    return "cannot hold " + dir_ + ": " + std::strerror(errno);
  }
  // Dumps announced before this rank came are not its to take.
  for (unsigned n = seen_ + 1; read_dump(n); ++n) {
    seen_ = n;
  }
  return {};
}

std::optional<job_dump> job_channel::read_dump(unsigned n) const {
  std::string text;
  std::string why;
  if (!read_own_file(dir_ + "/dump" + std::to_string(n), &text, &why)) {
    return std::nullopt;
  }
  std::istringstream in{text};
  job_dump d;
  d.number = n;
  std::string until;
  in >> d.cut_realtime_ns >> d.rank >> until;
  d.ends_at_cut = until == "until";
  std::getline(in >> std::ws, d.cause);
  if (!in && !in.eof()) {
    return std::nullopt;
  }
  return d;
}

unsigned job_channel::announce(std::string const& cause, std::int64_t cut_realtime_ns,
                               bool ends_at_cut, bool* joined, bool* seen) {
  if (joined != nullptr) {
    *joined = false;
  }
  if (seen != nullptr) {
    *seen = false;
  }
  if (fd_ < 0) {
    return 0;
  }
  // A trigger's moment this rank has already dumped for another's trigger (two ranks' triggers
  // on one slow collective, the other's announcement seen first): the same dump, not a second.
  for (unsigned n = seen_; ends_at_cut && n > 0 && n + 8 > seen_; --n) {
    auto const other = read_dump(n);
    if (other && other->ends_at_cut &&
        std::llabs(other->cut_realtime_ns - cut_realtime_ns) < same_moment_ns) {
      if (joined != nullptr) {
        *joined = true;
      }
      if (seen != nullptr) {
        *seen = true;
      }
      return n;
    }
  }
  std::string const tmp =
      dir_ + "/.announce." + std::to_string(rank_) + "." + std::to_string(::getpid());
  // "until": every rank's window ends at the cut; "from": records after it are kept.
  std::string const text = std::to_string(cut_realtime_ns) + " " + std::to_string(rank_) +
                           (ends_at_cut ? " until " : " from ") + cause + "\n";
  ::unlink(tmp.c_str());
  if (!write_new_file(tmp, text)) {
    return 0;
  }
  unsigned result = 0;
  for (unsigned n = seen_ + 1; n < seen_ + 10'000; ++n) {
    if (::link(tmp.c_str(), (dir_ + "/dump" + std::to_string(n)).c_str()) == 0) {
      result = n;
      break;
    }
    if (errno != EEXIST) {
      break;
    }
    auto const other = read_dump(n);
    if (other && std::llabs(other->cut_realtime_ns - cut_realtime_ns) < same_moment_ns) {
      result = n;  // another rank's announcement of the same moment: one dump
      if (joined != nullptr) {
        *joined = true;
      }
      break;
    }
  }
  ::unlink(tmp.c_str());
  if (result > seen_) {
    seen_ = result;
  }
  return result;
}

std::vector<job_dump> job_channel::take_new() {
  std::vector<job_dump> out;
  if (fd_ < 0) {
    return out;
  }
  while (auto d = read_dump(seen_ + 1)) {
    ++seen_;
    out.push_back(*d);
  }
  return out;
}

void job_channel::leave() {
  if (fd_ < 0) {
    return;
  }
  ::close(fd_);
  fd_ = -1;
  // The last rank out (no other holder) removes the directory.
  int const fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    remove_tree(dir_);
  }
  if (fd >= 0) {
    ::close(fd);
  }
}

}  // namespace nvtxpp::capture::cli
