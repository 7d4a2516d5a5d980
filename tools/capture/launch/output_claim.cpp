// The trace file's claim (output_claim.hpp).

#include "output_claim.hpp"

#include "output_name.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <utility>

namespace nvtxpp::capture::cli {

namespace {

enum class lock_result { held, busy, unlockable, unopenable };

/// Opens `path` without truncating it and tries to lock it; `fd` is left open only when held.
lock_result try_lock(std::string const& path, int& fd) {
  fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return lock_result::unopenable;
  }
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int const err = errno;
    if (err == EINTR) {
      continue;
    }
    ::close(fd);
    fd = -1;
    return err == EWOULDBLOCK ? lock_result::busy : lock_result::unlockable;
  }
  return lock_result::held;
}

}  // namespace

output_claim output_claim::take(std::string const& path, long pid) {
  output_claim c;
  c.path_ = path;
  lock_result r = try_lock(path, c.fd_);
  if (r != lock_result::busy) {
    return c;
  }
  std::string const tag = "pid" + std::to_string(pid);
  for (int n = 1; n <= 1000 && r == lock_result::busy; ++n) {
    c.path_ = insert_before_extension(path, n == 1 ? tag : tag + "-" + std::to_string(n));
    r = try_lock(c.path_, c.fd_);
  }
  std::fprintf(stderr,
               "nvtxpp-capture: %s is being written by another nvtxpp-capture; this one writes "
               "%s\n",
               path.c_str(), c.path_.c_str());
  return c;
}

output_claim::output_claim(output_claim&& other) noexcept
    : path_{std::move(other.path_)}, fd_{std::exchange(other.fd_, -1)} {}

output_claim& output_claim::operator=(output_claim&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

output_claim::~output_claim() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

}  // namespace nvtxpp::capture::cli
