// LD_PRELOAD test double of a process that refuses threads: pthread_create called from
// nvtxpp-capture's injection library (libnvtxpp_inject.so) fails with the error named by
// NVTXPP_TEST_REFUSE_THREADS (EAGAIN, EINVAL, EPERM); every other caller's thread starts as usual
// (the launcher's, the program's own). thread_start_tests.py uses it to check that a thread of
// ours that cannot start is said, and what the recording does instead.
//
// NVTXPP_TEST_SLOW_THREADS=MS: a thread of the injection library starts slowly instead: from
// pthread_create until MS milliseconds later it is "setting up", as the C library and a
// sanitizer's runtime hold their allocator's locks while they set a new thread up, and then it
// enters its start routine. A forked child whose fork came while one of our threads was setting
// up says so on stderr and exits 70 at once: where a real allocator's lock is inherited held, the
// child hangs.
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace {

/// Threads of ours between pthread_create and their start routine (set before the thread exists).
std::atomic<int> g_setting_up{0};

long slow_ms() noexcept {
  char const* e = std::getenv("NVTXPP_TEST_SLOW_THREADS");
  return e != nullptr ? std::atol(e) : 0;
}

struct slow_start {
  void* (*start)(void*);
  void* arg;
};

void* start_slowly(void* p) {
  slow_start const s = *static_cast<slow_start*>(p);
  std::free(p);
  long const ms = slow_ms();
  timespec const t{ms / 1000, (ms % 1000) * 1'000'000};
  ::nanosleep(&t, nullptr);
  g_setting_up.fetch_sub(1);
  return s.start(s.arg);
}

void child_checks_lock() {
  if (g_setting_up.load() != 0) {
    static char const said[] =
        "refuse_threads: forked while a thread was setting up (its locks inherited held)\n";
    ssize_t const w = ::write(STDERR_FILENO, said, sizeof said - 1);
    static_cast<void>(w);
    ::_exit(70);
  }
}

__attribute__((constructor)) void install() {
  if (slow_ms() > 0) {
    ::pthread_atfork(nullptr, nullptr, &child_checks_lock);
  }
}

using create_fn = int (*)(pthread_t*, pthread_attr_t const*, void* (*)(void*), void*);

int refused_error() noexcept {
  char const* e = std::getenv("NVTXPP_TEST_REFUSE_THREADS");
  if (e == nullptr) {
    return 0;
  }
  if (std::strcmp(e, "EINVAL") == 0) {
    return EINVAL;
  }
  if (std::strcmp(e, "EPERM") == 0) {
    return EPERM;
  }
  return EAGAIN;
}

bool from_injection_library(void* caller) noexcept {
  Dl_info info{};
  return ::dladdr(caller, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libnvtxpp_inject") != nullptr;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread,
                                                                     pthread_attr_t const* attr,
                                                                     void* (*start)(void*),
                                                                     void* arg) {
  if (int const e = refused_error();
      e != 0 && from_injection_library(__builtin_return_address(0))) {
    return e;
  }
  static auto const next = reinterpret_cast<create_fn>(::dlsym(RTLD_NEXT, "pthread_create"));
  if (next == nullptr) {
    return EAGAIN;
  }
  if (slow_ms() > 0 && from_injection_library(__builtin_return_address(0))) {
    auto* s = static_cast<slow_start*>(std::malloc(sizeof(slow_start)));
    if (s == nullptr) {
      return EAGAIN;
    }
    *s = slow_start{start, arg};
    g_setting_up.fetch_add(1);
    int const e = next(thread, attr, &start_slowly, s);
    if (e != 0) {
      g_setting_up.fetch_sub(1);
      std::free(s);
    }
    return e;
  }
  return next(thread, attr, start, arg);
}
