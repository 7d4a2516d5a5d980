// Our threads inside the profiled program (our_threads.hpp).
//
// glibc carves every thread's static TLS (each module loaded at start, and those loaded later
// with initial-exec TLS), its thread descriptor and a guard page out of the stack size it is
// given, and refuses a stack they do not fit in (EINVAL). A fixed 64 KiB stack then fails in
// exactly the programs users run: cuBLASLt carries 92 KiB of TLS. So a stack is what the thread
// needs plus what the process takes: glibc's own figure where it lends it, else the modules'
// PT_TLS segments with a margin; and a stack that is still too small is retried larger. Stack
// pages are mapped lazily: a larger stack costs address space, not memory.

#include "our_threads.hpp"

#include "../../recording/core.hpp"
#include "../../recording/gpu_format.hpp"
#include "inject_internal.hpp"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace nvtxpp::capture {

namespace rec = nvtxpp::recording;

namespace {

/// The modules' static TLS as their PT_TLS segments say (an upper bound: a module loaded later
/// with dynamic TLS counts too).
int add_tls(dl_phdr_info* info, std::size_t, void* sum) noexcept {
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    ElfW(Phdr) const& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_TLS) {
      std::size_t const align = ph.p_align > 1 ? ph.p_align : 1;
      *static_cast<std::size_t*>(sum) += (ph.p_memsz + align - 1) / align * align;
    }
  }
  return 0;
}

/// Room for glibc's thread descriptor, its static TLS surplus and the guard page when the sum of
/// the PT_TLS segments is all we know.
constexpr std::size_t descriptor_margin = 64 * 1024;

std::size_t page_size() noexcept {
  long const p = ::sysconf(_SC_PAGESIZE);
  return p > 0 ? static_cast<std::size_t>(p) : 4096;
}

std::size_t round_up(std::size_t n, std::size_t to) noexcept { return (n + to - 1) / to * to; }

/// Our threads created and not yet in their `main`: the C library and a sanitizer's runtime set a
/// new thread up in between, with the allocator (glibc's pthread_getattr_np allocates; so does
/// dynamic TLS). fork() waits for them (wait_for_starting_threads).
std::atomic<int> g_starting{0};

/// Every thread of ours begins here: it has left the runtime's set-up.
void* entered(void* arg) noexcept {
  g_starting.fetch_sub(1, std::memory_order_acq_rel);
  // POSIX lets a function pointer travel as void* (dlsym depends on it).
  return reinterpret_cast<void* (*)(void*)>(arg)(nullptr);
}

/// One try at a stack of `size` bytes: 0 or the error.
int try_start(void* (*main)(void*), std::size_t size, pthread_t* t) noexcept {
  pthread_attr_t attr;
  if (int const e = ::pthread_attr_init(&attr); e != 0) {
    return e;
  }
  ::pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int e = ::pthread_attr_setstacksize(&attr, size);
  if (e == 0) {
    g_starting.fetch_add(1, std::memory_order_acq_rel);
    e = ::pthread_create(t, &attr, &entered, reinterpret_cast<void*>(main));
    if (e != 0) {
      g_starting.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
  ::pthread_attr_destroy(&attr);
  return e;
}

char const* error_name(int error) noexcept {
  switch (error) {
    case EINVAL:
      return "EINVAL";
    case EAGAIN:
      return "EAGAIN";
    case EPERM:
      return "EPERM";
    case ENOMEM:
      return "ENOMEM";
    default:
      return nullptr;
  }
}

/// What glibc takes from a new thread's stack in this process before the thread runs (static
/// TLS, thread descriptor, guard, its minimum).
std::size_t stack_overhead_bytes() noexcept {
  std::size_t tls = 0;
  ::dl_iterate_phdr(&add_tls, &tls);
  std::size_t overhead = tls + descriptor_margin;
  // glibc's own minimum for this process (page + static TLS with its surplus + PTHREAD_STACK_MIN):
  // exported (GLIBC_PRIVATE) since 2.15, looked up so that another libc simply lacks it.
  using minstack_fn = std::size_t (*)(pthread_attr_t const*);
  if (auto* minstack =
          reinterpret_cast<minstack_fn>(::dlsym(RTLD_DEFAULT, "__pthread_get_minstack"))) {
    pthread_attr_t attr;
    if (::pthread_attr_init(&attr) == 0) {
      overhead = std::max(overhead, minstack(&attr));
      ::pthread_attr_destroy(&attr);
    }
  }
  return overhead;
}

}  // namespace

int start_thread(void* (*main)(void*), char const* name, std::size_t stack_bytes,
                 pthread_t* thread) noexcept {
  std::size_t const page = page_size();
  std::size_t extra = stack_overhead_bytes();
  pthread_t t{};
  int error = EINVAL;
  // EINVAL: glibc counted more than we did. Three larger tries (up to ~8x, plus 7 MiB) before
  // giving up; any other error (no memory, no threads left) a larger stack cannot mend.
  for (int attempt = 0; attempt < 4 && error == EINVAL; ++attempt) {
    error = try_start(main, round_up(stack_bytes + extra, page), &t);
    extra = extra * 2 + (std::size_t{1} << 20);
  }
  if (error != 0) {
    return error;
  }
  ::pthread_setname_np(t, name);
  if (thread != nullptr) {
    *thread = t;
  }
  return 0;
}

void wait_for_starting_threads() noexcept {
  std::int64_t const give_up = rec::monotonic_ns() + 1'000'000'000;
  while (g_starting.load(std::memory_order_acquire) > 0 && rec::monotonic_ns() < give_up) {
    ::sched_yield();
  }
}

void our_threads_after_fork_in_child() noexcept {
  g_starting.store(0, std::memory_order_relaxed);  // the child has none of the parent's threads
}

void say_thread_failed(char const* what, int error, char const* outcome) noexcept {
  char code[32];
  char const* named = error_name(error);
  if (named == nullptr) {
    std::snprintf(code, sizeof code, "error %d", error);
    named = code;
  }
  char text[512];
  int const n = std::snprintf(text, sizeof text, "thread=%s (%s); %s", what, named, outcome);
  if (n <= 0) {
    return;
  }
  std::size_t const len = std::min(static_cast<std::size_t>(n), sizeof text - 1);
  // The line on stderr: "nvtxpp-capture: " and the text after "thread=".
  char line[560];
  int const m = std::snprintf(line, sizeof line, "nvtxpp-capture: %s\n", text + 7);
  if (m > 0) {
    ssize_t const w =
        ::write(STDERR_FILENO, line, std::min(static_cast<std::size_t>(m), sizeof line - 1));
    static_cast<void>(w);  // nowhere to say that stderr is gone
  }
  iovec part{text, len};
  write_file_record(static_cast<std::uint32_t>(recording::gpu_record::info), &part, 1);
}

}  // namespace nvtxpp::capture
