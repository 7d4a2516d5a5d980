// Rings nameless while they are in use (ring_keeper.hpp).

#include "ring_keeper.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace nvtxpp::capture::cli {

namespace {

bool ends_with(std::string const& s, char const* suffix) {
  std::string const x{suffix};
  return s.size() > x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

/// Copies the data of `from` into `to` (both at offset 0), leaving holes as holes.
bool copy_sparse(int from, int to) {
  struct stat st {};
  if (::fstat(from, &st) != 0 || ::ftruncate(to, st.st_size) != 0) {
    return false;
  }
  std::vector<char> buf(1U << 20);
  off_t at = 0;
  while (at < st.st_size) {
    off_t const data = ::lseek(from, at, SEEK_DATA);
    if (data < 0) {
      break;  // no more data: the rest is a hole
    }
    off_t const hole = ::lseek(from, data, SEEK_HOLE);
    for (off_t o = data; o < hole;) {
      auto const want = static_cast<std::size_t>(std::min<off_t>(hole - o, 1 << 20));
      ssize_t const n = ::pread(from, buf.data(), want, o);
      if (n <= 0 || ::pwrite(to, buf.data(), static_cast<std::size_t>(n), o) != n) {
        return false;
      }
      o += n;
    }
    at = hole;
  }
  return true;
}

}  // namespace

int ring_keeper::restore() {
  int failed = 0;
  for (auto const& f : files_) {
    std::string const path = ring_dir_ + "/" + f.name + (ring_dir_ == raw_dir_ ? ".ring-copy" : "");
    int const to = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool ok = to >= 0 && copy_sparse(f.fd, to);
    if (to >= 0) {
      ::close(to);
    }
    std::string const link = raw_dir_ + "/" + f.name;
    std::string const tmp = link + ".kept";
    ::unlink(tmp.c_str());
    ok =
        ok && ::symlink(path.c_str(), tmp.c_str()) == 0 && ::rename(tmp.c_str(), link.c_str()) == 0;
    if (!ok) {
      ::unlink(tmp.c_str());
      ++failed;
    }
  }
  return failed;
}

ring_keeper::ring_keeper(std::string ring_dir, std::string raw_dir)
    : ring_dir_{std::move(ring_dir)}, raw_dir_{std::move(raw_dir)} {}

ring_keeper::~ring_keeper() {
  for (auto const& f : files_) {
    ::close(f.fd);
  }
}

int ring_keeper::adopt() {
  int const dfd = ::open(ring_dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR* d = dfd >= 0 ? ::fdopendir(dfd) : nullptr;
  if (d == nullptr) {
    if (dfd >= 0) {
      ::close(dfd);
    }
    return 0;
  }
  int taken = 0;
  while (dirent* e = ::readdir(d)) {
    std::string const name = e->d_name;
    if (name.rfind("nvtxpp-", 0) != 0 || !(ends_with(name, ".ring") || ends_with(name, ".calls"))) {
      continue;
    }
    // The process made it with O_EXCL in a directory only this user can write: a regular file
    // of ours. Checked anyway, and never through a link (in the raw directory the name may be
    // the link to the ring directory, or our own link from an earlier call).
    int const fd = ::openat(dfd, name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      continue;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::getuid()) {
      ::close(fd);
      continue;
    }
    // The readers' name first (an atomic replace: never a moment without one), then the file's.
    std::string const link = raw_dir_ + "/" + name;
    std::string const tmp = link + ".kept";
    std::string const target = "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd);
    ::unlink(tmp.c_str());
    if (::symlink(target.c_str(), tmp.c_str()) != 0 || ::rename(tmp.c_str(), link.c_str()) != 0) {
      ::unlink(tmp.c_str());
      ::close(fd);
      continue;  // the name stays: correct, only not cleaned on a kill
    }
    if (ring_dir_ != raw_dir_) {
      ::unlinkat(dfd, name.c_str(), 0);  // in the raw directory, the rename removed it
    }
    files_.push_back({fd, name});
    ++taken;
  }
  ::closedir(d);
  return taken;
}

}  // namespace nvtxpp::capture::cli
