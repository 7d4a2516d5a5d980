// The injection library's side of the flight recorder (flight_ring.hpp). Only this file knows
// that events may go to a ring; the ring itself (tools/recording/ring.hpp) knows nothing of
// events, and the launcher reads it through the same header.

#include "flight_ring.hpp"

#include "../../recording/format.hpp"
#include "../../recording/gpu_format.hpp"
#include "../../recording/ring.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace nvtxpp::capture::flight {

namespace {

namespace rec = nvtxpp::recording;

rec::ring g_ring;
void* g_map = nullptr;
std::size_t g_map_size = 0;
std::atomic<bool> g_active{false};

std::uint64_t now_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000U +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

/// Events (bounded by the window) go to the ring; definitions (bounded by what the program
/// registers, and needed whatever the window holds) stay in the capture file.
bool is_event(std::uint32_t kind) noexcept {
  switch (kind) {
    case static_cast<std::uint32_t>(rec::file_record::chunk):
    case static_cast<std::uint32_t>(rec::file_record::clock):
    case static_cast<std::uint32_t>(rec::gpu_record::kernel):
    case static_cast<std::uint32_t>(rec::gpu_record::memcpy):
    case static_cast<std::uint32_t>(rec::gpu_record::memset):
    case static_cast<std::uint32_t>(rec::gpu_record::sync):
    case static_cast<std::uint32_t>(rec::gpu_record::api):
      return true;
    default:
      return false;
  }
}

bool open_ring() noexcept {
  char const* bytes_text = std::getenv("NVTXPP_FLIGHT_BYTES");
  if (bytes_text == nullptr || *bytes_text == '\0') {
    return false;
  }
  std::uint64_t const wanted = std::strtoull(bytes_text, nullptr, 10);
  std::uint64_t const capacity = rec::ring::fit_capacity(wanted);
  std::size_t const size = rec::ring::region_bytes(capacity);
  void* m = map_shared_file(".ring", size);
  if (m == nullptr) {
    return false;
  }
  g_ring = rec::ring::create(m, capacity);
  g_map = m;
  g_map_size = size;
  return g_ring.valid();
}

}  // namespace

void hold_dir(char const* dir) noexcept {
  if (dir == nullptr || *dir == '\0') {
    return;
  }
  // Kept open for the process's life (a forked child shares it); closed by exec.
  int const fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && ::flock(fd, LOCK_SH) != 0) {
    ::close(fd);
  }
}

void* map_shared_file(char const* suffix, std::size_t size) noexcept {
  char const* dir = std::getenv("NVTXPP_CAPTURE_DIR");
  std::string const name = "/nvtxpp-" + std::to_string(::getpid()) + suffix;
  std::string const link = ((dir != nullptr && *dir != '\0') ? dir : ".") + name;
  // The launcher puts rings in memory-backed files (/dev/shm) where it can: pages written first
  // through a shared mapping of a disk file cost a block allocation each (a range under a 1 GB
  // ring was 2.4x as costly, bench/flight_cost.py). The capture directory gets a link to it.
  char const* ring_dir = std::getenv("NVTXPP_FLIGHT_DIR");
  std::string path = link;
  if (ring_dir != nullptr && *ring_dir != '\0') {
    path = ring_dir + name;
    ::unlink(link.c_str());
    if (::symlink(path.c_str(), link.c_str()) != 0) {
      path = link;  // no link: the file goes in the capture directory itself
    }
  }
  // Made exclusively (never through a link someone planted), readable by this user only: range
  // names can be sensitive. A file of this name is a dead process's whose pid was reused.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    ::unlink(path.c_str());
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  }
  // The file is sparse: pages cost memory (and disk) only once written, so memory grows to the
  // window and stays there.
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    std::fprintf(stderr, "nvtxpp-capture: cannot make the flight recorder's %s: %s; %s\n",
                 path.c_str(), std::strerror(errno),
                 std::strcmp(suffix, ".ring") == 0 ? "recording to the capture file instead"
                                                   : "it goes without what this file holds");
    if (fd >= 0) {
      ::close(fd);
    }
    return nullptr;
  }
  void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) {
    std::fprintf(stderr, "nvtxpp-capture: cannot map %s: %s\n", path.c_str(), std::strerror(errno));
    return nullptr;
  }
  return m;
}

bool start() noexcept {
  // The launcher removes the ring directory of a killed run only once no process holds it.
  hold_dir(std::getenv("NVTXPP_FLIGHT_DIR"));
  bool const ok = open_ring();
  g_active.store(ok, std::memory_order_release);
  return ok;
}

bool active() noexcept { return g_active.load(std::memory_order_acquire); }

bool take_record(std::uint32_t kind, iovec const* parts, int count) noexcept {
  if (!active() || !is_event(kind)) {
    return false;
  }
  g_ring.write(parts, count, now_ns());
  return true;
}

void take_batch(unsigned char const* data, std::size_t size,
                void (*to_file)(void const* data, std::size_t size) noexcept) noexcept {
  if (!active()) {
    to_file(data, size);
    return;
  }
  // Runs of definitions go to the file in one write each; events to the ring one by one.
  std::size_t at = 0;
  std::size_t file_run = 0;  // start of the pending run of definitions
  while (size - at >= 8) {
    std::uint32_t kind = 0, body = 0;
    std::memcpy(&kind, data + at, 4);
    std::memcpy(&body, data + at + 4, 4);
    std::size_t const whole = 8 + static_cast<std::size_t>(body);
    if (size - at < whole) {
      break;
    }
    if (is_event(kind)) {
      if (file_run < at) {
        to_file(data + file_run, at - file_run);
      }
      iovec part{const_cast<unsigned char*>(data + at), whole};
      g_ring.write(&part, 1, now_ns());
      file_run = at + whole;
    }
    at += whole;
  }
  if (file_run < size) {
    to_file(data + file_run, size - file_run);
  }
}

std::uint64_t pending_request(bool* gpu, bool* raise) noexcept {
  *gpu = false;
  *raise = false;
  if (!active()) {
    return 0;
  }
  auto& h = g_ring.header();
  std::uint64_t const word = h.user[flush_request].load(std::memory_order_acquire);
  std::uint64_t const want = word & ~request_flags;
  if (want == h.user[flush_done].load(std::memory_order_relaxed)) {
    return 0;
  }
  if ((word & request_flags) != 0) {
    h.user[flush_request].fetch_and(~request_flags, std::memory_order_acq_rel);
    *gpu = (word & gpu_wanted) != 0;
    *raise = (word & raise_wanted) != 0;
  }
  return want;
}

void answer(std::uint64_t n) noexcept {
  if (active()) {
    g_ring.header().user[flush_done].store(n, std::memory_order_release);
  }
}

void after_fork_in_child() noexcept {
  if (!active()) {
    return;
  }
  g_active.store(false, std::memory_order_release);
  ::munmap(g_map, g_map_size);  // the parent's: the child must not write into it
  g_map = nullptr;
  g_ring = rec::ring{};
  start();
}

}  // namespace nvtxpp::capture::flight
