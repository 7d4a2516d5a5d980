// The request directory between `nvtxpp-capture dump|stacks PID` and a launcher
// (flight_control.hpp).

#include "flight_control.hpp"

#include "../common/private_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

namespace nvtxpp::capture::cli {

namespace {

std::string read_whole(std::string const& path) {
  std::ifstream in{path};
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool alive(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

/// The parent of `pid` (0 when unknown).
long parent_of(long pid) {
  std::string const stat = read_whole("/proc/" + std::to_string(pid) + "/stat");
  auto const close = stat.rfind(')');
  if (close == std::string::npos) {
    return 0;
  }
  std::istringstream in{stat.substr(close + 2)};
  std::string state;
  long ppid = 0;
  in >> state >> ppid;
  return ppid;
}

/// The program file of `pid` ("" when unknown).
std::string exe_of(long pid) {
  char buf[4096];
  ssize_t const n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string{};
}

/// The launcher that records `pid` (itself a launcher, or one of its ancestors), or 0. An entry
/// whose pid now runs another program (a launcher killed, its pid reused) does not count, nor
/// does anything in the directory that is not a regular file of this user.
long find_launcher(std::string const& dir, long pid) {
  std::string const self = exe_of(::getpid());
  for (long p = pid, hops = 0; p > 1 && hops < 64; p = parent_of(p), ++hops) {
    std::string const entry = dir + "/" + std::to_string(p) + ".launcher";
    std::string text;
    std::string why;
    if (read_own_file(entry, &text, &why) && alive(p)) {
      if (exe_of(p) == self) {
        return p;
      }
      ::unlink(entry.c_str());  // stale
    }
  }
  return 0;
}

/// The owner of process `pid`, or -1 when there is no such process.
long owner_of(long pid) {
  struct stat st {};
  if (::stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) {
    return -1;
  }
  return static_cast<long>(st.st_uid);
}

/// The launcher pid an entry's name starts with (`PID.launcher`, `PID.req.CLIENT`,
/// `PID.ans.CLIENT`, each also with `.tmp`: a writer killed before its rename), or 0.
long entry_launcher(std::string const& name) {
  std::size_t const dot = name.find('.');
  if (dot == 0 || dot == std::string::npos || name.find_first_not_of("0123456789") != dot) {
    return 0;
  }
  std::string rest = name.substr(dot + 1);
  if (rest.size() > 4 && rest.compare(rest.size() - 4, 4, ".tmp") == 0) {
    rest.resize(rest.size() - 4);
  }
  bool const reply = (rest.rfind("req.", 0) == 0 || rest.rfind("ans.", 0) == 0) &&
                     rest.size() > 4 &&
                     rest.find_first_not_of("0123456789", 4) == std::string::npos;
  if (rest != "launcher" && !reply) {
    return 0;
  }
  return std::strtol(name.c_str(), nullptr, 10);
}

/// Whether `pid` may be a launcher of this user still running. No: no such process, another
/// user's (a reused pid), or one running another program. In doubt (a zombie, whose program
/// cannot be read): yes.
bool launcher_may_live(long pid) {
  if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
    return false;
  }
  long const owner = owner_of(pid);
  if (owner < 0 || owner != static_cast<long>(::getuid())) {
    return false;
  }
  std::string exe = exe_of(pid);
  if (exe.empty()) {
    return true;
  }
  std::string const deleted = " (deleted)";  // a launcher whose file was rebuilt since
  if (exe.size() > deleted.size() &&
      exe.compare(exe.size() - deleted.size(), deleted.size(), deleted) == 0) {
    exe.resize(exe.size() - deleted.size());
  }
  return exe.substr(exe.rfind('/') + 1) == "nvtxpp-capture";
}

}  // namespace

std::string control_dir_name() {
  std::string const name = "nvtxpp-capture-" + std::to_string(::getuid());
  char const* run = std::getenv("XDG_RUNTIME_DIR");
  return (run != nullptr && *run != '\0' ? std::string{run} : std::string{"/tmp"}) + "/" + name;
}

int remove_stale_entries(std::string const& dir) {
  int const fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return 0;
  }
  // Checked on the descriptor: what is read and removed below is in this directory.
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() ||
      (st.st_mode & 077) != 0) {
    ::close(fd);
    return 0;
  }
  std::vector<std::string> stale;
  int const list = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (DIR* d = list >= 0 ? ::fdopendir(list) : nullptr) {
    while (dirent* e = ::readdir(d)) {
      long const launcher = entry_launcher(e->d_name);
      if (launcher != 0 && !launcher_may_live(launcher)) {
        stale.emplace_back(e->d_name);
      }
    }
    ::closedir(d);
  } else if (list >= 0) {
    ::close(list);
  }
  int removed = 0;
  for (auto const& name : stale) {
    struct stat f {};
    // Only what a launcher or client of this user makes: a regular file, 0600 or narrower.
    if (::fstatat(fd, name.c_str(), &f, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(f.st_mode) &&
        f.st_uid == ::getuid() && (f.st_mode & 0177) == 0 && ::unlinkat(fd, name.c_str(), 0) == 0) {
      ++removed;
    }
  }
  ::close(fd);
  return removed;
}

std::string control_dir(std::string* problem) {
  problem->clear();
  std::string const name = "nvtxpp-capture-" + std::to_string(::getuid());
  char const* run = std::getenv("XDG_RUNTIME_DIR");
  if (run != nullptr && *run != '\0') {
    // The session's own directory (0700 by the spec): checked, never swapped for /tmp.
    if (std::string why = private_dir_problem(run); !why.empty()) {
      *problem = std::string{"XDG_RUNTIME_DIR ("} + run + ") cannot be trusted: " + why;
      return {};
    }
    std::string dir = std::string{run} + "/" + name;
    if (std::string why = ensure_private_dir(dir); !why.empty()) {
      *problem = dir + " cannot be trusted: " + why;
      return {};
    }
    return dir;
  }
  std::string dir = "/tmp/" + name;
  if (std::string why = ensure_private_dir(dir); !why.empty()) {
    *problem = dir + " cannot be trusted: " + why +
               " (remove it, or set XDG_RUNTIME_DIR to a directory only you can reach)";
    return {};
  }
  return dir;
}

std::string register_launcher(std::string const& dir, pid_t child) {
  std::string base = dir + "/" + std::to_string(::getpid());
  if (!write_new_file(base + ".launcher", std::to_string(child) + "\n")) {
    return {};
  }
  return base;
}

void unregister_launcher(std::string const& base) {
  if (base.empty()) {
    return;
  }
  ::unlink((base + ".launcher").c_str());
  std::string const dir = base.substr(0, base.rfind('/'));
  std::string const me = base.substr(base.rfind('/') + 1) + ".";
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string const name = e->d_name;
      if (name.rfind(me + "req.", 0) == 0) {
        ::unlink((dir + '/').append(name).c_str());
      }
    }
    ::closedir(d);
  }
}

std::vector<control_request> take_requests(std::string const& base) {
  std::vector<control_request> out;
  std::string const dir = base.substr(0, base.rfind('/'));
  std::string const prefix = base.substr(base.rfind('/') + 1) + ".req.";
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string const name = e->d_name;
      bool const unfinished =
          name.size() > prefix.size() + 4 && name.compare(name.size() - 4, 4, ".tmp") == 0;
      if (name.rfind(prefix, 0) != 0 || unfinished) {
        continue;
      }
      std::string const path = (dir + '/').append(name);
      control_request r;
      r.client = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
      std::string why;
      bool const own = read_own_file(path, &r.verb, &why);
      ::unlink(path.c_str());
      if (!own) {
        // Only this user can write in the directory; refused all the same (root, a bind mount).
        std::fprintf(stderr, "nvtxpp-capture: refused request %s: %s\n", path.c_str(), why.c_str());
        continue;
      }
      out.push_back(r);
    }
    ::closedir(d);
  }
  return out;
}

void answer_request(std::string const& base, long client, std::string const& text) {
  write_new_file(base + ".ans." + std::to_string(client), text);
}

control_answer ask_launcher(std::string const& who, std::string const& verb, long pid) {
  control_answer out;
  out.status = 2;
  long const owner = owner_of(pid);
  if (owner < 0) {
    std::fprintf(stderr, "%s: no process %ld (it has ended, or never ran)\n", who.c_str(), pid);
    return out;
  }
  if (owner != static_cast<long>(::getuid())) {
    std::fprintf(stderr,
                 "%s: process %ld belongs to another user (uid %ld); %s reaches only your own "
                 "runs\n",
                 who.c_str(), pid, owner, verb.c_str());
    return out;
  }
  std::string problem;
  std::string const dir = control_dir(&problem);
  if (dir.empty()) {
    std::fprintf(stderr, "%s: the request directory %s\n", who.c_str(), problem.c_str());
    return out;
  }
  long const launcher = find_launcher(dir, pid);
  if (launcher == 0) {
    std::fprintf(stderr, "%s: no nvtxpp-capture --flight-recorder records process %ld\n",
                 who.c_str(), pid);
    return out;
  }
  std::string const base = dir + "/" + std::to_string(launcher);
  std::string const answer = base + ".ans." + std::to_string(::getpid());
  if (!write_new_file(base + ".req." + std::to_string(::getpid()), verb)) {
    std::fprintf(stderr, "%s: cannot write a request in %s: %s\n", who.c_str(), dir.c_str(),
                 std::strerror(errno));
    return out;
  }
  // Until the answer is there or the launcher is gone (a dump of a large window takes a while).
  while (::access(answer.c_str(), F_OK) != 0) {
    if (!alive(launcher)) {
      std::fprintf(stderr, "%s: the launcher (pid %ld) ended before answering\n", who.c_str(),
                   launcher);
      out.status = 1;
      return out;
    }
    timespec const step{0, 10'000'000};
    ::nanosleep(&step, nullptr);
  }
  std::string text;
  std::string why;
  bool const own = read_own_file(answer, &text, &why);
  ::unlink(answer.c_str());
  if (!own) {
    std::fprintf(stderr, "%s: refused the answer %s: %s\n", who.c_str(), answer.c_str(),
                 why.c_str());
    return out;
  }
  auto const nl = text.find('\n');
  out.status = 0;
  out.ok = text.substr(0, nl) == "ok";
  out.body = nl == std::string::npos ? std::string{} : text.substr(nl + 1);
  return out;
}

int control_client(std::string const& verb, int argc, char** argv) {
  if (argc != 1) {
    std::fprintf(stderr, "usage: nvtxpp-capture %s PID\n", verb.c_str());
    return 2;
  }
  char* end = nullptr;
  long const pid = std::strtol(argv[0], &end, 10);
  if (*end != '\0' || pid <= 0) {
    std::fprintf(stderr, "nvtxpp-capture %s: '%s' is not a process id\n", verb.c_str(), argv[0]);
    return 2;
  }
  control_answer const a = ask_launcher("nvtxpp-capture " + verb, verb, pid);
  if (a.status != 0) {
    return a.status;
  }
  std::fputs(a.body.c_str(), a.ok ? stdout : stderr);
  return a.ok ? 0 : 1;
}

}  // namespace nvtxpp::capture::cli
