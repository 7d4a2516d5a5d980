// Where `nvtxpp-capture top` gets its rows (top_source.hpp).

#include "top_source.hpp"

#include "../flight/flight_control.hpp"
#include "../flight/flight_watch.hpp"
#include "../flight/flight_window.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nvtxpp::capture::live {

namespace {

std::int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// How far behind the clock the rows end while the program runs: its recording thread hands
/// every thread's partly filled block to the ring each 100 ms, so what ended before this is in
/// the ring (and the window does not end in a gap that has not arrived yet).
constexpr std::int64_t settle_ns = 150'000'000;

/// The value of `key=` in an answer's lines, or "".
std::string value_of(std::string const& text, std::string const& key) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t const nl = text.find('\n', at);
    std::string const line = text.substr(at, nl == std::string::npos ? nl : nl - at);
    if (line.rfind(key + "=", 0) == 0) {
      return line.substr(key.size() + 1);
    }
    if (nl == std::string::npos) {
      break;
    }
    at = nl + 1;
  }
  return {};
}

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t const n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string{};
}

}  // namespace

top_source::top_source(live_options options)
    : options_{options}, table_{std::make_unique<live_table>(options)} {}

top_source::~top_source() {
  if (channel_ >= 0) {
    ::close(channel_);
  }
}

std::int64_t top_source::now_ns() const {
  if (ended_) {
    return ended_ns_;
  }
  // The newest event read, while the program records (every thread's blocks reach the ring at
  // once, so nothing read ends after it); the clock less settle_ns while it is quiet.
  std::int64_t now = monotonic_ns() - settle_ns;
  if (watch_) {
    for (auto const& p : watch_->processes()) {
      now = std::max(now, p.newest_ns);
    }
  }
  return now;
}

bool top_source::follow(std::string const& raw_dir) {
  // The launcher's working directory: its rings' links and the processes' definitions. Only a
  // real directory of this user that no one else may write in is read.
  struct stat st {};
  if (::lstat(raw_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() ||
      (st.st_mode & 022) != 0) {
    std::fprintf(stderr,
                 "nvtxpp-capture top: the recording's directory '%s' is not a directory of "
                 "yours that only you can write in; not read\n",
                 raw_dir.c_str());
    return false;
  }
  raw_dir_ = raw_dir;
  watch_ = std::make_unique<flight_watch>(raw_dir_, std::vector<watch_trigger>{}, 0);
  watch_->set_sink(table_.get());
  return true;
}

bool top_source::attach(long pid) {
  cli::control_answer const a = cli::ask_launcher("nvtxpp-capture top", "top", pid);
  if (a.status != 0) {
    return false;
  }
  if (!a.ok) {
    std::fprintf(stderr, "nvtxpp-capture top: the launcher refused: %s", a.body.c_str());
    return false;
  }
  program_ =
      static_cast<std::uint32_t>(std::strtoul(value_of(a.body, "program").c_str(), nullptr, 10));
  std::string const raw = value_of(a.body, "raw_dir");
  if (raw.empty() || program_ == 0) {
    std::fprintf(stderr, "nvtxpp-capture top: the launcher's answer names no recording\n");
    return false;
  }
  return follow(raw);
}

bool top_source::launch(std::vector<std::string> const& capture_options,
                        std::vector<std::string> const& program, std::string const& output_to,
                        int* status) {
  *status = 2;
  std::string const self = self_exe();
  if (self.empty()) {
    std::fprintf(stderr, "nvtxpp-capture top: cannot find this program (/proc/self/exe)\n");
    return false;
  }
  int out = -1;
  if (!output_to.empty()) {
    // A new file: never one that was there, never through a link.
    out = ::open(output_to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) {
      std::fprintf(stderr, "nvtxpp-capture top: cannot make %s: %s\n", output_to.c_str(),
                   std::strerror(errno));
      return false;
    }
  }
  int fds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "nvtxpp-capture top: cannot make a pipe: %s\n", std::strerror(errno));
    if (out >= 0) {
      ::close(out);
    }
    return false;
  }
  std::vector<std::string> args{self, "--top-channel=" + std::to_string(fds[1])};
  bool const has_limit =
      std::any_of(capture_options.begin(), capture_options.end(),
                  [](std::string const& o) { return o.rfind("--flight-recorder", 0) == 0; });
  if (!has_limit) {
    args.emplace_back("--flight-recorder=64MB");
  }
  args.insert(args.end(), capture_options.begin(), capture_options.end());
  args.emplace_back("--");
  args.insert(args.end(), program.begin(), program.end());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  int const null_in = out >= 0 ? ::open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
  std::fflush(nullptr);
  pid_t const child = ::fork();
  if (child < 0) {
    std::fprintf(stderr, "nvtxpp-capture top: fork failed: %s\n", std::strerror(errno));
    return false;
  }
  if (child == 0) {
    if (out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
      if (null_in >= 0) {
        ::dup2(null_in, STDIN_FILENO);
      }
    }
    ::fcntl(fds[1], F_SETFD, 0);  // the launcher's end of the side channel
    ::execv(self.c_str(), argv.data());
    std::fprintf(stderr, "nvtxpp-capture top: cannot run %s: %s\n", self.c_str(),
                 std::strerror(errno));
    ::_exit(127);
  }
  launcher_ = child;
  ::close(fds[1]);
  if (out >= 0) {
    ::close(out);
  }
  if (null_in >= 0) {
    ::close(null_in);
  }
  channel_ = fds[0];
  // The launcher says where the recording is as soon as the program is forked; or it ends
  // first (bad options: it said why, exit 2).
  while (value_of(channel_text_, "program").empty()) {
    char buf[4096];
    ssize_t const n = ::read(channel_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      int st = 0;
      while (::waitpid(launcher_, &st, 0) < 0 && errno == EINTR) {
      }
      launcher_ = 0;
      *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      if (!output_to.empty()) {
        // Its reason went to the file: shown here too, since no screen will show it.
        if (std::FILE* f = std::fopen(output_to.c_str(), "r")) {
          char line[4096];
          while (std::fgets(line, sizeof line, f) != nullptr) {
            std::fputs(line, stderr);
          }
          std::fclose(f);
        }
      }
      return false;
    }
    channel_text_.append(buf, static_cast<std::size_t>(n));
  }
  ::fcntl(channel_, F_SETFL, ::fcntl(channel_, F_GETFL) | O_NONBLOCK);
  program_ = static_cast<std::uint32_t>(
      std::strtoul(value_of(channel_text_, "program").c_str(), nullptr, 10));
  *status = 0;
  return follow(value_of(channel_text_, "raw_dir"));
}

void top_source::read_channel() {
  if (channel_ < 0 || launcher_done_) {
    return;
  }
  char buf[256];
  for (;;) {
    ssize_t const n = ::read(channel_, buf, sizeof buf);
    if (n > 0) {
      channel_text_.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) {
      launcher_done_ = true;  // the launcher is gone
    }
    break;
  }
  if (channel_text_.find("\nend\n") != std::string::npos) {
    launcher_done_ = true;
  }
}

void top_source::poll() {
  if (!watch_) {
    return;
  }
  read_channel();
  bool const gone = launcher_done_ || (program_ != 0 && !running(program_));
  watch_->poll(monotonic_ns());
  if (gone && !ended_) {
    // Everything the program wrote is in its rings now (its end flushes them): read once more,
    // then the rows stay those of its last window.
    watch_->poll(monotonic_ns());
    ended_ = true;
    ended_ns_ = table_->newest_ns();
    for (auto const& p : watch_->processes()) {
      ended_ns_ = std::max(ended_ns_, p.newest_ns);
    }
    if (ended_ns_ == 0) {
      ended_ns_ = monotonic_ns();
    }
  }
}

live_snapshot top_source::snapshot(bool by_thread) {
  std::int64_t const began = monotonic_ns();
  std::int64_t const now = now_ns();
  if (watch_) {
    watch_->for_each_open(
        now, [](range_info const& r, void* table) { static_cast<live_table*>(table)->add_open(r); },
        table_.get());
  }
  live_snapshot snap = table_->snapshot(now, by_thread);
  refresh_ns_ = monotonic_ns() - began;
  return snap;
}

program_state top_source::state() const {
  program_state s;
  s.pid = program_;
  s.ended = ended_;
  s.refresh_ns = refresh_ns_;
  rusage self{};
  if (::getrusage(RUSAGE_SELF, &self) == 0) {
    s.top_cpu_s = static_cast<double>(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
                  static_cast<double>(self.ru_utime.tv_usec + self.ru_stime.tv_usec) / 1e6;
  }
  if (!watch_) {
    return s;
  }
  auto const processes = watch_->processes();
  s.processes = processes.size();
  for (auto const& p : processes) {
    if (p.pid == program_ || s.command.empty()) {
      s.command = p.command;
      s.start_ns = p.start_ns;
    }
    s.dropped += p.ring_dropped;
    s.lapped_bytes += p.lapped_bytes;
  }
  return s;
}

int top_source::finish() {
  if (launcher_ == 0) {
    return launcher_status_;
  }
  if (channel_ >= 0) {
    ::close(channel_);  // the launcher waits for this before it removes the recording
    channel_ = -1;
  }
  int st = 0;
  while (::waitpid(launcher_, &st, 0) < 0 && errno == EINTR) {
  }
  launcher_ = 0;
  launcher_status_ = st;
  return st;
}

}  // namespace nvtxpp::capture::live
