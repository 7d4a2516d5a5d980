// Files in places other users share (private_files.hpp).

#include "private_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace nvtxpp::capture::cli {

namespace {

std::string stat_problem(struct stat const& st) {
  if (!S_ISDIR(st.st_mode)) {
    return "it is not a directory";
  }
  if (st.st_uid != ::getuid()) {
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by you (uid " +
           std::to_string(::getuid()) + ")";
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string{"its mode is "} + mode + ": others can reach it (it must be 0700)";
  }
  return {};
}

/// Removes what is below the open directory `fd` (closed here).
void remove_below(int fd) {
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return;
  }
  while (dirent* e = ::readdir(d)) {
    char const* name = e->d_name;
    if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) {
      continue;
    }
    if (::unlinkat(fd, name, 0) == 0) {
      continue;
    }
    int const sub = ::openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub >= 0) {
      remove_below(sub);
      ::unlinkat(fd, name, AT_REMOVEDIR);
    }
  }
  ::closedir(d);
}

/// A descriptor of its own (its own reading position, unlike dup's) for the directory `fd`.
int reopen(int fd) { return ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); }

bool all_digits(std::string const& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

/// Whether a directory of an older version (no lock) still names a living process
/// (`nvtxpp-<pid>.<kind>` files of its programs).
bool names_living_process(int fd) {
  int const dup = reopen(fd);
  DIR* d = dup >= 0 ? ::fdopendir(dup) : nullptr;
  if (d == nullptr) {
    if (dup >= 0) {
      ::close(dup);
    }
    return true;  // cannot tell: keep it
  }
  bool living = false;
  while (dirent* e = ::readdir(d)) {
    std::string const name = e->d_name;
    if (name.rfind("nvtxpp-", 0) != 0) {
      continue;
    }
    std::string const pid = name.substr(7, name.find('.') - 7);
    if (all_digits(pid) && (::kill(std::atoi(pid.c_str()), 0) == 0 || errno == EPERM)) {
      living = true;
      break;
    }
  }
  ::closedir(d);
  return living;
}

}  // namespace

std::string private_dir_problem(std::string const& dir) {
  int const fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP || errno == ENOTDIR) {
      struct stat st {};
      if (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
        return "it is a symbolic link";
      }
      return "it is not a directory";
    }
    return std::strerror(errno);
  }
  struct stat st {};
  std::string why = ::fstat(fd, &st) == 0 ? stat_problem(st) : std::strerror(errno);
  ::close(fd);
  return why;
}

std::string ensure_private_dir(std::string const& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return std::strerror(errno);
  }
  return private_dir_problem(dir);
}

bool write_new_file(std::string const& path, std::string const& text) {
  std::string const tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    // Our own leftover (the directory is private): a writer killed between open and rename.
    ::unlink(tmp.c_str());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  }
  if (fd < 0) {
    return false;
  }
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t const n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool read_own_file(std::string const& path, std::string* text, std::string* why) {
  int const fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *why = errno == ELOOP ? "it is a symbolic link" : std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::getuid()) {
    *why = !S_ISREG(st.st_mode) ? "it is not a regular file"
                                : "it belongs to uid " + std::to_string(st.st_uid);
    ::close(fd);
    return false;
  }
  text->clear();
  char buf[4096];
  for (;;) {
    ssize_t const n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0 || text->size() > (1U << 20)) {
      break;
    }
    text->append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return true;
}

void remove_tree(std::string const& dir) {
  int const fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    remove_below(fd);
  }
  ::rmdir(dir.c_str());
}

int hold_dir(std::string const& dir) {
  int const fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && ::flock(fd, LOCK_SH) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void mark_kept(std::string const& dir) {
  int const fd =
      ::open((dir + "/.kept").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) {
    ::close(fd);
  }
}

int remove_abandoned(std::string const& parent, std::string const& prefix, int min_age_s,
                     bool any_suffix) {
  int const pfd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = pfd >= 0 ? ::fdopendir(pfd) : nullptr;
  if (d == nullptr) {
    if (pfd >= 0) {
      ::close(pfd);
    }
    return 0;
  }
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  int removed = 0;
  while (dirent* e = ::readdir(d)) {
    std::string const name = e->d_name;
    // mkdtemp's names: the prefix and six characters. An all-digit suffix is a per-user
    // directory (nvtxpp-capture-<uid>: the request directory), never a working directory.
    bool const fits =
        any_suffix ? name.size() > prefix.size()
                   : name.size() == prefix.size() + 6 && !all_digits(name.substr(prefix.size()));
    if (!fits || name.rfind(prefix, 0) != 0) {
      continue;
    }
    int const fd = ::openat(pfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      continue;  // a symlink, a file, someone else's: not ours to touch
    }
    struct stat st {};
    bool const ours = ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid();
    bool const old_enough = st.st_mtime + min_age_s < now.tv_sec;
    struct stat kept {};
    bool const marked = ::fstatat(fd, ".kept", &kept, AT_SYMLINK_NOFOLLOW) == 0;
    if (ours && old_enough && !marked && ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        !names_living_process(fd)) {
      remove_below(reopen(fd));
      if (::unlinkat(pfd, name.c_str(), AT_REMOVEDIR) == 0) {
        ++removed;
      }
    }
    ::close(fd);
  }
  ::closedir(d);
  return removed;
}

}  // namespace nvtxpp::capture::cli
