// The request directory between `nvtxpp-capture dump|stacks PID` and a launcher
// (flight_control.hpp).

#include "flight_control.hpp"

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

namespace nvtxpp::capture::cli {

namespace {

bool write_whole(std::string const& path, std::string const& text) {
  std::string const tmp = path + ".tmp";
  {
    std::ofstream o{tmp, std::ios::trunc};
    o << text;
    if (!o) {
      return false;
    }
  }
  return ::rename(tmp.c_str(), path.c_str()) == 0;
}

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
/// whose pid now runs another program (a launcher killed, its pid reused) does not count.
long find_launcher(std::string const& dir, long pid) {
  std::string const self = exe_of(::getpid());
  for (long p = pid, hops = 0; p > 1 && hops < 64; p = parent_of(p), ++hops) {
    std::string const entry = dir + "/" + std::to_string(p) + ".launcher";
    if (::access(entry.c_str(), F_OK) == 0 && alive(p)) {
      if (exe_of(p) == self) {
        return p;
      }
      ::unlink(entry.c_str());  // stale
    }
  }
  return 0;
}

}  // namespace

std::string control_dir() {
  char const* run = std::getenv("XDG_RUNTIME_DIR");
  std::string base = run != nullptr && *run != '\0' && ::access(run, W_OK) == 0 ? run : "/tmp";
  std::string dir = base + "/nvtxpp-capture-" + std::to_string(::getuid());
  ::mkdir(dir.c_str(), 0700);
  return dir;
}

std::string register_launcher(pid_t child) {
  std::string base = control_dir() + "/" + std::to_string(::getpid());
  if (!write_whole(base + ".launcher", std::to_string(child) + "\n")) {
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
      r.verb = read_whole(path);
      ::unlink(path.c_str());
      out.push_back(r);
    }
    ::closedir(d);
  }
  return out;
}

void answer_request(std::string const& base, long client, std::string const& text) {
  write_whole(base + ".ans." + std::to_string(client), text);
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
  std::string const dir = control_dir();
  long const launcher = find_launcher(dir, pid);
  if (launcher == 0) {
    std::fprintf(stderr,
                 "nvtxpp-capture %s: no nvtxpp-capture --flight-recorder records process %ld\n",
                 verb.c_str(), pid);
    return 2;
  }
  std::string const base = dir + "/" + std::to_string(launcher);
  std::string const answer = base + ".ans." + std::to_string(::getpid());
  if (!write_whole(base + ".req." + std::to_string(::getpid()), verb)) {
    std::fprintf(stderr, "nvtxpp-capture %s: cannot write a request in %s: %s\n", verb.c_str(),
                 dir.c_str(), std::strerror(errno));
    return 2;
  }
  // Until the answer is there or the launcher is gone (a dump of a large window takes a while).
  while (::access(answer.c_str(), F_OK) != 0) {
    if (!alive(launcher)) {
      std::fprintf(stderr, "nvtxpp-capture %s: the launcher (pid %ld) ended before answering\n",
                   verb.c_str(), launcher);
      return 1;
    }
    timespec const step{0, 10'000'000};
    ::nanosleep(&step, nullptr);
  }
  std::string const text = read_whole(answer);
  ::unlink(answer.c_str());
  auto const nl = text.find('\n');
  std::string const status = text.substr(0, nl);
  std::string const body = nl == std::string::npos ? std::string{} : text.substr(nl + 1);
  std::fputs(body.c_str(), status == "ok" ? stdout : stderr);
  return status == "ok" ? 0 : 1;
}

}  // namespace nvtxpp::capture::cli
