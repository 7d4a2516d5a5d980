// An annotated program for the nvtxpp-capture tests: `capture_app <case> [args]`. Each case
// makes a known set of NVTX calls (raw C API and nvtx3.hpp); run_tests.py runs it under
// nvtxpp-capture and checks the trace and summary against exactly these calls.
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCounters.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <nvtx3/nvToolsExtPayload.h>
#include <nvtx3/nvToolsExtSemanticsCounters.h>
#include <nvtx3/nvtx3.hpp>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <dirent.h>
#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "nvtx_c.hpp"

namespace {

using nvtxpp_test::attributes;

std::uint32_t tid() { return static_cast<std::uint32_t>(nvtxpp_test::os_thread_id()); }

void spin_us(int us) {
  timespec a{};
  timespec b{};
  ::clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    ::clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1'000'000 + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

struct app_domain {
  static constexpr char const* name{"app"};
};

// Every kind of call, once, with known attributes.
int basic() {
  nvtxNameOsThreadA(tid(), "main thread");
  nvtxNameCategoryA(1, "setup");
  auto a = attributes("outer");
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF00FF00U;
  a.category = 1;
  a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  a.payload.llValue = -7;
  nvtxRangePushEx(&a);
  nvtxRangePushW(L"inner \u00e9");
  spin_us(200);
  nvtxRangePop();
  nvtxRangePop();

  nvtxDomainHandle_t const d = nvtxDomainCreateA("io");
  nvtxDomainNameCategoryA(d, 2, "disk");
  nvtxEventAttributes_t r{};
  r.version = NVTX_VERSION;
  r.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  r.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  r.message.registered = nvtxDomainRegisterStringA(d, "read block");
  r.category = 2;
  r.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
  r.payload.dValue = 0.5;
  nvtxDomainRangePushEx(d, &r);
  spin_us(100);
  nvtxDomainRangePop(d);

  nvtxMarkA("checkpoint");
  nvtxRangeId_t const id = nvtxRangeStartA("async");
  std::thread worker{[id] {
    nvtxNameOsThreadA(tid(), "worker");
    {
      nvtx3::scoped_range_in<app_domain> r3{"nvtx3 range"};
      spin_us(100);
    }
    nvtxRangeEnd(id);
  }};
  worker.join();
  nvtxNameCudaStreamA(reinterpret_cast<cudaStream_t>(0x42), "copy stream");
  std::printf("basic done\n");
  return 0;
}

// Threads that exit early, a thread still running when main returns is joined first.
int threads() {
  std::vector<std::thread> pool;
  for (int i = 0; i < 4; ++i) {
    pool.emplace_back([i] {
      std::string const name = "t" + std::to_string(i);
      nvtxNameOsThreadA(tid(), name.c_str());
      for (int k = 0; k < 1000 * (i + 1); ++k) {
        nvtxRangePushA("work");
        nvtxRangePop();
      }
    });
  }
  for (auto& t : pool) {
    t.join();
  }
  return 0;
}

[[noreturn]] void exit_deep(int code) {
  nvtxRangePushA("deep");
  std::exit(code);
}

// exit() from inside two open ranges, after work on a thread.
int exit_case() {
  std::thread{[] {
    nvtxRangePushA("thread work");
    nvtxRangePop();
  }}.join();
  nvtxRangePushA("before exit");
  exit_deep(5);
}

// exit() while two threads record as fast as they can: blocks are in flight and threads may be
// waiting for one when the process ends. Must neither hang nor lose the file. exit() comes only
// once each thread has recorded `min_each` ranges (a condition, not a time), and the threads go
// on recording while it runs.
[[noreturn]] void exit_busy_case(long min_each) {
  static std::atomic<long> done[2]{};
  for (auto& d : done) {
    std::thread{[&d] {
      for (;;) {
        nvtxRangePushA("busy");
        nvtxRangePop();
        d.fetch_add(1, std::memory_order_release);
      }
    }}.detach();
  }
  for (auto const& d : done) {
    while (d.load(std::memory_order_acquire) < min_each) {
      std::this_thread::yield();
    }
  }
  std::exit(3);
}

int signal_case(char const* which, int steps) {
  int const sig = std::strcmp(which, "int") == 0 ? SIGINT : SIGTERM;
  static std::atomic<bool> ready{false};
  std::thread keeps_running{[] {
    nvtxRangePushA("background");
    nvtxRangePop();
    ready.store(true);
    for (;;) {
      ::pause();
    }
  }};
  keeps_running.detach();
  while (!ready.load()) {
    std::this_thread::yield();
  }
  for (int i = 0; i < steps; ++i) {
    nvtxRangePushA("step");
    nvtxRangePop();
  }
  nvtxRangePushA("interrupted");
  std::fflush(stdout);
  ::kill(::getpid(), sig);
  for (;;) {
    ::pause();
  }
}

int exception_case() {
  nvtxRangePushA("throwing");
  throw std::runtime_error("uncaught on purpose");
}

int warnings_case() {
  nvtxRangePop();        // unbalanced
  nvtxRangeEnd(0x1234);  // unknown id
  nvtxMarkA(nullptr);    // null message
  std::string const huge(10000, 'h');
  nvtxMarkA(huge.c_str());  // huge message
  nvtxRangePushA("never popped");
  return 0;
}

/// Forks a child that records the range "in child" and exits; its exit status, 1 when a signal
/// ended it. `forked` (if given) is set to false in the parent once the child exists.
int child_range(std::atomic<bool>* forked = nullptr) {
  pid_t const child = ::fork();
  if (child == 0) {
    nvtxRangePushA("in child");
    nvtxRangePop();
    std::exit(0);
  }
  if (forked != nullptr) {
    forked->store(false, std::memory_order_release);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int fork_case() {
  nvtxRangePushA("parent before fork");
  nvtxRangePop();
  int const status = child_range();
  nvtxRangePushA("parent after fork");
  nvtxRangePop();
  return status;
}

/// Forks `children` times while another thread fills blocks as fast as it can, so the writer
/// thread has blocks in hand at some of the forks. Each child records one range and exits; under
/// a leak checker a child that lost track of a block exits non-zero. Prints how many children
/// failed; returns 1 when any did.
int fork_busy_case(int children) {
  std::atomic<bool> go{false};
  std::atomic<bool> stop{false};
  std::atomic<long> ranges{0};
  // Paused (while a child runs), the busy thread sleeps rather than spins: under ThreadSanitizer
  // each child's exit takes a second (its atexit_sleep_ms), which a spinning thread would spend
  // keeping a core busy.
  std::mutex paused;
  std::condition_variable resume;
  auto const set_and_wake = [&](std::atomic<bool>& flag) {
    {
      std::lock_guard<std::mutex> lock(paused);
      flag.store(true, std::memory_order_release);
    }
    resume.notify_one();
  };
  std::thread busy([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (!go.load(std::memory_order_acquire)) {
        std::unique_lock<std::mutex> lock(paused);
        resume.wait(lock, [&] {
          return go.load(std::memory_order_acquire) || stop.load(std::memory_order_relaxed);
        });
        continue;
      }
      nvtxRangePushA("busy");
      nvtxRangePop();
      ranges.fetch_add(1, std::memory_order_relaxed);
    }
  });
  int failed = 0;
  for (int i = 0; i < children; ++i) {
    long const before = ranges.load(std::memory_order_relaxed);
    set_and_wake(go);
    while (ranges.load(std::memory_order_relaxed) < before + 3'000) {  // a few blocks filled
      std::this_thread::yield();
    }
    failed += child_range(&go) == 0 ? 0 : 1;  // the busy thread pauses once the child exists
  }
  set_and_wake(stop);
  busy.join();
  std::printf("children failed: %d of %d\n", failed, children);
  return failed == 0 ? 0 : 1;
}

/// A thread_local made before the thread's first NVTX call records a range from its destructor,
/// which runs at the thread's end: the range is kept (the capture sees a thread's end after every
/// thread_local destructor of it).
struct ranges_at_thread_end {
  bool armed = false;
  ranges_at_thread_end() = default;
  ranges_at_thread_end(ranges_at_thread_end const&) = delete;
  ranges_at_thread_end& operator=(ranges_at_thread_end const&) = delete;
  ~ranges_at_thread_end() {
    if (armed) {
      nvtxRangePushA("in a thread_local destructor");
      nvtxRangePop();
    }
  }
};
thread_local ranges_at_thread_end t_at_end;

int tls_destructor_case() {
  std::thread worker([] {
    t_at_end.armed = true;  // constructed before the thread's first NVTX call
    nvtxRangePushA("worker");
    nvtxRangePop();
  });
  worker.join();
  return 0;
}

long rss_kb(char const* key) {
  long value = -1;
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      if (std::strncmp(line, key, std::strlen(key)) == 0) {
        value = std::strtol(line + std::strlen(key), nullptr, 10);
      }
    }
    std::fclose(f);
  }
  return value;
}

// `ranges` ranges split over `threads` threads; prints the peak RSS growth (kB).
int memory_case(long ranges, int nthreads) {
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(nthreads));
  long const before = rss_kb("VmRSS:");
  long const per_thread = ranges / nthreads;
  for (int i = 0; i < nthreads; ++i) {
    pool.emplace_back([per_thread] {
      for (long k = 0; k < per_thread; ++k) {
        nvtxRangePushA("r");
        nvtxRangePop();
      }
    });
  }
  for (auto& t : pool) {
    t.join();
  }
  long const peak = rss_kb("VmHWM:");
  std::printf("rss_before_kb=%ld peak_kb=%ld growth_kb=%ld\n", before, peak, peak - before);
  return 0;
}

// Stream order across many blocks: each thread pushes `n` ranges with payload 0..n-1 (and one
// nested child each), then exits at once, while its last blocks may still wait for the disk.
int order_case(long n, int nthreads) {
  std::vector<std::thread> pool;
  for (int i = 0; i < nthreads; ++i) {
    pool.emplace_back([n] {
      for (long k = 0; k < n; ++k) {
        auto a = attributes("ordered");
        a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
        a.payload.llValue = k;
        nvtxRangePushEx(&a);
        nvtxRangePushA("child");
        nvtxRangePop();
        nvtxRangePop();
      }
    });
  }
  for (auto& t : pool) {
    t.join();
  }
  return 0;
}

std::int64_t monotonic_now() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000LL + t.tv_nsec;
}

// Times against the program's own clock: two ranges of a 300 us spin, "early" right after the
// first NVTX call (when the tool only has its start-up estimate of the tick rate) and "late"
// `late_ms` after it (0: none). For each, prints the CLOCK_MONOTONIC ns read just before the
// push, just after it, just before the pop and just after it.
int clock_case(long late_ms) {
  nvtxMarkA("start");  // the first NVTX call: the tool starts here
  std::int64_t const t0 = monotonic_now();
  for (char const* name : {"early", "late"}) {
    if (name[0] == 'l') {
      if (late_ms <= 0) {
        break;
      }
      while (monotonic_now() < t0 + late_ms * 1'000'000LL) {
      }
    }
    std::int64_t const a = monotonic_now();
    nvtxRangePushA(name);
    std::int64_t const b = monotonic_now();
    while (monotonic_now() < b + 300'000) {
    }
    std::int64_t const c = monotonic_now();
    nvtxRangePop();
    std::int64_t const d = monotonic_now();
    std::printf("clock %s %lld %lld %lld %lld\n", name, static_cast<long long>(a),
                static_cast<long long>(b), static_cast<long long>(c), static_cast<long long>(d));
  }
  return 0;
}

// Calls to time, without a tool or under one: prints ns per push+pop.
double ns_since(timespec const& a) {
  timespec b{};
  ::clock_gettime(CLOCK_MONOTONIC, &b);
  return static_cast<double>((b.tv_sec - a.tv_sec) * 1'000'000'000LL + (b.tv_nsec - a.tv_nsec));
}

// Whole-process recording cost: n push/pop ranges, three times; each time first n pairs of
// clock reads (the floor a range's two timestamps set), so the two figures of a line come from
// the same moment of the machine.
int overhead_case(long n) {
  for (int rep = 0; rep < 3; ++rep) {
    timespec a{};
#if defined(__x86_64__)
    ::clock_gettime(CLOCK_MONOTONIC, &a);
    std::uint64_t sink = 0;
    for (long i = 0; i < n; ++i) {
      sink += __rdtsc();
      sink += __rdtsc();
    }
    double const floor_ns = ns_since(a) / static_cast<double>(n);
    asm volatile("" : : "r"(sink));
    std::printf("two_tsc_ns=%.2f ", floor_ns);
#endif
    ::clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; ++i) {
      nvtxRangePushA("range");
      nvtxRangePop();
    }
    std::printf("push_pop_ns=%.2f\n", ns_since(a) / static_cast<double>(n));
  }
  return 0;
}

// Prints the injection variables the launcher set ("-" when unset).
int env_case() {
  for (char const* name : {"NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", "NVTXPP_CUDA"}) {
    char const* v = std::getenv(name);
    std::printf("%s=%s\n", name, v != nullptr ? v : "-");
  }
  return 0;
}

// Does what the CUDA driver does at cuInit when CUDA_INJECTION64_PATH is set (no GPU needed):
// dlopen that library and call its InitializeInjection. False when it cannot.
bool call_cuda_injection() {
  char const* path = std::getenv("CUDA_INJECTION64_PATH");
  if (path == nullptr) {
    std::printf("no CUDA_INJECTION64_PATH\n");
    return true;
  }
  void* lib = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  auto init =
      lib != nullptr ? reinterpret_cast<int (*)()>(::dlsym(lib, "InitializeInjection")) : nullptr;
  if (init == nullptr) {
    std::fprintf(stderr, "cannot load InitializeInjection from %s\n", path);
    return false;
  }
  std::printf("InitializeInjection returned %d\n", init());
  return true;
}

// "cuInit", then one NVTX range, and exit `status`.
int cuda_inject_case(int status) {
  if (!call_cuda_injection()) {
    return 65;
  }
  nvtxRangePushA("after cuInit");
  nvtxRangePop();
  std::fflush(stdout);
  return status;
}

// Says it is ready (touches $APP_READY) and waits until $APP_STOP exists: the test acts in
// between, and the program waits for its word, never for a time.
void wait_for_files() {
  char const* ready = std::getenv("APP_READY");
  char const* stop = std::getenv("APP_STOP");
  if (ready == nullptr || stop == nullptr) {
    return;
  }
  if (FILE* f = std::fopen(ready, "w")) {
    std::fclose(f);
  }
  while (::access(stop, F_OK) != 0) {
    timespec const t{0, 2'000'000};
    ::nanosleep(&t, nullptr);  // polling a condition, not standing in for one
  }
}

using fake_api_fn = int (*)(int, int, std::uint32_t, char const*);

/// Waits until the fake CUPTI was detached `n` times (or refused it once) and a subscriber
/// follows stream creation again, making CUDA calls (the detach needs a call's exit); the times
/// detached in `detached`. Polls a condition, 20 s at most.
bool wait_detached(void* fake, fake_api_fn api, int n, int* detached) {
  auto state = reinterpret_cast<void (*)(int*, int*, int*)>(::dlsym(fake, "fake_cupti_state"));
  for (int i = 0; state != nullptr && i < 20'000; ++i) {
    int refused = 0;
    int names = 0;
    state(detached, &refused, &names);
    if ((*detached >= n && names != 0) || refused != 0) {  // (a refusal ends the detaching)
      return true;
    }
    api(1, 2, 131, "cudaStreamSynchronize_v3020");  // a CUDA call: its exit may detach
    api(0, 2, 131, "cudaStreamSynchronize_v3020");
    ::usleep(1000);
  }
  return false;
}

// A thread inside ranges "step" > "sync" and inside cudaStreamSynchronize and the driver's
// cuStreamSynchronize under it (the fake's API callbacks), until the test says stop; a second
// thread "loader" is inside cudaMemcpy with no range open. APP_WAIT_DETACH=1: all that once CUPTI
// is detached (the calls that wait are followed then), with the main thread first inside
// cudaGetDevice, which does not wait (not followed while detached).
int fake_in_call(void* fake) {
  auto api =
      fake != nullptr ? reinterpret_cast<fake_api_fn>(::dlsym(fake, "fake_cupti_api")) : nullptr;
  if (api == nullptr) {
    std::fprintf(stderr, "the fake CUPTI is not loaded\n");
    return 66;
  }
  bool const detached = std::getenv("APP_WAIT_DETACH") != nullptr;
  int times = 0;
  if (detached && !wait_detached(fake, api, 1, &times)) {
    std::fprintf(stderr, "CUPTI was never detached\n");
    return 67;
  }
  std::atomic<bool> loader_in{false};
  std::atomic<bool> done{false};
  std::thread loader{[&] {
    nvtxNameOsThreadA(static_cast<std::uint32_t>(::gettid()), "loader");
    api(1, 2, 31, "cudaMemcpy_v3020");
    loader_in.store(true);
    while (!done.load()) {
      std::this_thread::yield();
    }
    api(0, 2, 31, "cudaMemcpy_v3020");
  }};
  while (!loader_in.load()) {
    std::this_thread::yield();
  }
  nvtxRangePushA("step");
  nvtxRangePushA("sync");
  if (detached) {
    api(1, 2, 17, "cudaGetDevice_v3020");
  }
  int const called = api(1, 2, 131, "cudaStreamSynchronize_v3020");
  api(1, 1, 126, "cuStreamSynchronize");
  wait_for_files();
  api(0, 1, 126, "cuStreamSynchronize");
  api(0, 2, 131, "cudaStreamSynchronize_v3020");
  if (detached) {
    api(0, 2, 17, "cudaGetDevice_v3020");
  }
  nvtxRangePop();
  nvtxRangePop();
  done.store(true);
  loader.join();
  std::printf("api callbacks %s\n", called != 0 ? "enabled" : "not enabled");
  return 0;
}

// The detach's edges (run with the capture window closed at the start: --capture-range=nvtx
// --nvtx-capture=window --capture-range-end=repeat). Waits until CUPTI is detached (making CUDA
// calls, whose exit the detach needs), launches outside any window (the fake creates its stream
// 0x5000 then: while detached); then three windows "window" of two launches each (the first
// names the stream), after each the detach again and one launch outside. `fork`: a child forked
// while detached after the first window (its own NVTX range and a launch). Prints "detached N".
int fake_detach(void* fake, void (*launch)(int, std::size_t), bool fork_child) {
  auto api = reinterpret_cast<fake_api_fn>(::dlsym(fake, "fake_cupti_api"));
  if (api == nullptr) {
    std::fprintf(stderr, "the fake CUPTI is not loaded\n");
    return 66;
  }
  int detached = 0;
  if (!wait_detached(fake, api, 1, &detached)) {
    std::fprintf(stderr, "CUPTI was never detached\n");
    return 67;
  }
  nvtxMarkA("outside 0");
  launch(1, 0);
  for (int w = 1; w <= 3; ++w) {
    nvtxRangePushA("window");
    if (w == 1) {  // (NVTX outside the window is not recorded)
      nvtxNameCudaStreamA(reinterpret_cast<cudaStream_t>(std::uintptr_t{0x5000}), "fake stream");
    }
    nvtxMarkA(("launch " + std::to_string(w)).c_str());
    launch(2, 0);
    nvtxRangePop();
    if (!wait_detached(fake, api, w + 1, &detached)) {
      std::fprintf(stderr, "CUPTI was not detached after window %d\n", w);
      return 67;
    }
    nvtxMarkA(("outside " + std::to_string(w)).c_str());
    launch(1, 0);
    if (fork_child && w == 1) {
      pid_t const child = ::fork();
      if (child == 0) {
        nvtxRangePushA("in child");
        launch(1, 0);
        nvtxRangePop();
        std::exit(0);
      }
      int status = 0;
      ::waitpid(child, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return 68;
      }
    }
  }
  std::printf("detached %d\n", detached);
  return 0;
}

// Steps "Train step 1", "Train step 2", ... of 20 ms, step 5 of 300 ms, each launching one kernel
// (and a copy and a memset) at its end, until $APP_STOP exists: GPU work before and after a
// slow step, whose records the (fake) CUPTI hands over only when flushed.
int fake_gpu_steps(void (*launch)(int, std::size_t)) {
  char const* stop = std::getenv("APP_STOP");
  for (int i = 1; i <= 5 || (stop != nullptr && ::access(stop, F_OK) != 0); ++i) {
    std::string const name = "Train step " + std::to_string(i);
    nvtxRangePushA(name.c_str());
    spin_us(i == 5 ? 300'000 : 20'000);
    launch(1, 0);
    nvtxRangePop();
  }
  return 0;
}

// Steps "Train step 1" ... "Train step $APP_STEPS" of $APP_STEP_US each, each launching one kernel
// (and a copy and a memset) in its middle, right after a mark "launch N": with --cuda-sample,
// the marks (NVTX, always recorded) say when each launch was made.
int fake_gpu_sample_steps(void (*launch)(int, std::size_t)) {
  char const* steps_text = std::getenv("APP_STEPS");
  char const* us_text = std::getenv("APP_STEP_US");
  int const steps = steps_text != nullptr ? std::atoi(steps_text) : 40;
  int const us = us_text != nullptr ? std::atoi(us_text) : 10'000;
  for (int i = 1; i <= steps; ++i) {
    std::string const name = "Train step " + std::to_string(i);
    nvtxRangePushA(name.c_str());
    spin_us(us / 2);
    std::string const mark = "launch " + std::to_string(i);
    nvtxMarkA(mark.c_str());
    launch(1, 0);
    spin_us(us / 2);
    nvtxRangePop();
  }
  return 0;
}

// The names of this process's threads (/proc/self/task/*/comm), comma-separated.
std::string thread_names() {
  std::string names;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') {
        continue;
      }
      std::string const path = std::string{"/proc/self/task/"} + e->d_name + "/comm";
      if (FILE* f = std::fopen(path.c_str(), "r")) {
        char name[64] = {};
        if (std::fgets(name, sizeof name, f) != nullptr) {
          name[std::strcspn(name, "\n")] = '\0';
          names += (names.empty() ? "" : ",") + std::string{name};
        }
        std::fclose(f);
      }
    }
    ::closedir(d);
  }
  return names;
}

// Waits (up to 20 s) until a thread of each name in $APP_THREADS (comma-separated) runs in this
// process; prints "threads: all" when they all do, else "threads: missing NAME..."; then the
// names seen ("seen: ...").
void wait_for_threads() {
  std::string const want = std::getenv("APP_THREADS") != nullptr ? std::getenv("APP_THREADS") : "";
  auto missing = [&want] {
    std::string const have = "," + thread_names() + ",";
    std::string out;
    for (std::size_t at = 0; at < want.size();) {
      std::size_t const comma = std::min(want.find(',', at), want.size());
      std::string const name = want.substr(at, comma - at);
      if (!name.empty() && have.find("," + name + ",") == std::string::npos) {
        out += " " + name;
      }
      at = comma + 1;
    }
    return out;
  };
  std::string gone = missing();
  for (int i = 0; i < 2000 && !gone.empty(); ++i) {
    ::usleep(10'000);
    gone = missing();
  }
  std::printf("threads: %s\nseen: %s\n", gone.empty() ? "all" : ("missing" + gone).c_str(),
              thread_names().c_str());
  std::fflush(stdout);
}

// With the test double of CUPTI (fake_cupti.cpp, NVTXPP_CUPTI_PATH): "cuInit", then 3 kernel
// launches (and a copy and a memset) inside the range "gpu work". mode: exit (return 0), none
// (no GPU work), drop (CUPTI drops 5 records), term (SIGTERM with the records still buffered),
// fork (a child after the work), our_threads (first waits for the threads $APP_THREADS names:
// wait_for_threads).
int fake_gpu_case(std::string const& mode) {
  if (!call_cuda_injection()) {
    return 65;
  }
  if (mode == "none") {
    return 0;
  }
  void* fake = ::dlopen(std::getenv("NVTXPP_CUPTI_PATH"), RTLD_NOW | RTLD_NOLOAD);
  if (mode == "driver") {
    // GPU work launched through the driver API (fake_cupti_driver): the program's own driver
    // launches, runtime launches whose driver calls CUPTI also reports (both ways of
    // correlating them), and a kernel no recorded call launched.
    auto driver = fake != nullptr
                      ? reinterpret_cast<void (*)(int)>(::dlsym(fake, "fake_cupti_driver"))
                      : nullptr;
    if (driver == nullptr) {
      std::fprintf(stderr, "the fake CUPTI is not loaded\n");
      return 66;
    }
    char const* const names[] = {"driver work", "runtime shared id", "runtime own id", "stray"};
    for (int what = 0; what < 4; ++what) {
      nvtxRangePushA(names[what]);
      spin_us(1000);
      driver(what);
      spin_us(1000);
      nvtxRangePop();
    }
    return 0;
  }
  if (mode == "in_call") {
    return fake_in_call(fake);
  }
  auto launch =
      fake != nullptr
          ? reinterpret_cast<void (*)(int, std::size_t)>(::dlsym(fake, "fake_cupti_launch"))
          : nullptr;
  if (launch == nullptr) {
    std::fprintf(stderr, "the fake CUPTI is not loaded\n");
    return 66;
  }
  if (mode == "steps") {
    return fake_gpu_steps(launch);
  }
  if (mode == "detach" || mode == "detach_fork") {
    return fake_detach(fake, launch, mode == "detach_fork");
  }
  if (mode == "sample_steps") {
    // APP_DRIVER=1: each step's work launched through the driver API (fake_cupti_driver(0): two
    // cuLaunchKernel, a copy and a memset), as Numba and cuBLASLt launch theirs.
    static void (*driver)(int) = nullptr;
    if (std::getenv("APP_DRIVER") != nullptr) {
      driver = reinterpret_cast<void (*)(int)>(::dlsym(fake, "fake_cupti_driver"));
      if (driver == nullptr) {
        std::fprintf(stderr, "the fake CUPTI is not loaded\n");
        return 66;
      }
      return fake_gpu_sample_steps([](int, std::size_t) { driver(0); });
    }
    return fake_gpu_sample_steps(launch);
  }
  if (mode == "our_threads") {
    // Ranges enough to fill several 64 KiB blocks (the block writer's work), then the threads.
    for (int i = 0; i < 20'000; ++i) {
      nvtxRangePushA("fill");
      nvtxRangePop();
    }
    wait_for_threads();
  }
  // The fake creates stream 0x5000 (its CUPTI stream 7) in launch(): the name is given first,
  // as a program may name a handle before or after the stream exists.
  nvtxNameCudaStreamA(reinterpret_cast<cudaStream_t>(std::uintptr_t{0x5000}), "fake stream");
  nvtxRangePushA("gpu work");
  spin_us(1000);  // margins far above any clock-mapping error
  launch(3, mode == "drop" ? 5 : 0);
  spin_us(1000);
  nvtxRangePop();
  if (mode == "hold") {
    // The work's records stay in (fake) CUPTI's buffer: a live dump must ask for them.
    wait_for_files();
    return 0;
  }
  if (mode == "term") {
    nvtxRangePushA("killed");
    std::raise(SIGTERM);
  }
  if (mode == "fork") {
    pid_t const child = ::fork();
    if (child == 0) {
      nvtxRangePushA("in child");
      nvtxRangePop();
      std::exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  return 0;
}

}  // namespace

/// NVTX extensions: counters (every sample kind) inside a range "counting", structured
/// payloads on a push, a mark and an nvtxMarkPayload, one payload of an unknown schema.
int extensions_case() {
  nvtxDomainHandle_t const d = nvtxDomainCreateA("ext");
  nvtxSemanticsCounter_t sem{};
  sem.header.structSize = sizeof sem;
  sem.header.semanticId = NVTX_SEMANTIC_ID_COUNTERS_V1;
  sem.header.version = NVTX_COUNTER_SEMANTIC_VERSION;
  sem.unit = "B";
  sem.unitScaleNumerator = 1;
  sem.unitScaleDenominator = 1;
  nvtxCounterAttr_t ca{};
  ca.structSize = sizeof ca;
  ca.schemaId = NVTX_PAYLOAD_ENTRY_TYPE_INT64;
  ca.name = "bytes in flight";
  ca.scopeId = NVTX_SCOPE_CURRENT_SW_PROCESS;
  ca.semantics = &sem.header;
  std::uint64_t const bytes = nvtxCounterRegister(d, &ca);
  ca.schemaId = NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE;
  ca.name = "load";
  ca.semantics = nullptr;
  std::uint64_t const load = nvtxCounterRegister(d, &ca);
  ca.schemaId = NVTX_PAYLOAD_ENTRY_TYPE_UINT16;
  ca.name = "queue";
  std::uint64_t const queue = nvtxCounterRegister(d, &ca);

  nvtxEventAttributes_t const counting = nvtxpp_test::attributes("counting");
  nvtxDomainRangePushEx(d, &counting);
  nvtxCounterSampleInt64(d, bytes, 100);
  nvtxCounterSampleInt64(d, bytes, 300);
  nvtxCounterSampleNoValue(d, bytes, NVTX_COUNTER_SAMPLE_ZERO);
  nvtxCounterSampleNoValue(d, bytes, NVTX_COUNTER_SAMPLE_UNAVAILABLE);
  nvtxCounterSampleFloat64(d, load, 0.25);
  std::uint16_t const q[3] = {1, 2, 3};
  nvtxCounterBatch_t batch{};
  batch.counterId = queue;
  batch.counters = q;
  batch.countersSize = sizeof q;
  nvtxCounterBatchSubmit(d, &batch);
  nvtxDomainRangePop(d);

  struct request {
    std::int32_t id;
    double size;
    char tag[8];
  };
  nvtxPayloadSchemaEntry_t const entries[] = {
      {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "id", nullptr, 0, offsetof(request, id), nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, "size", "bytes", 0, offsetof(request, size), nullptr,
       nullptr},
      {NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE, NVTX_PAYLOAD_ENTRY_TYPE_CHAR, "tag", nullptr, 8,
       offsetof(request, tag), nullptr, nullptr}};
  nvtxPayloadSchemaAttr_t sa{};
  sa.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
                 NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                 NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                 NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE;
  sa.name = "request";
  sa.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
  sa.entries = entries;
  sa.numEntries = 3;
  sa.payloadStaticSize = sizeof(request);
  std::uint64_t const schema = nvtxPayloadSchemaRegister(d, &sa);
  request r{};
  r.id = 42;
  r.size = 1.5;
  std::strcpy(r.tag, "get");
  nvtxEventAttributes_t a = nvtxpp_test::attributes("serve");
  nvtxPayloadData_t pd{};
  NVTX_PAYLOAD_EVTATTR_SET_DATA(a, &pd, schema, &r, sizeof r)
  nvtxDomainRangePushEx(d, &a);
  nvtxDomainRangePop(d);
  nvtxPayloadData_t const unknown{0xBADBAD, sizeof r, &r};
  nvtxEventAttributes_t m = nvtxpp_test::attributes("unknown payload");
  m.payloadType = NVTX_PAYLOAD_TYPE_EXT;
  m.payload.ullValue = NVTX_POINTER_AS_PAYLOAD_ULLVALUE(&unknown);
  m.reserved0 = 1;
  nvtxDomainMarkEx(d, &m);
  r.id = 7;
  nvtxPayloadData_t const again{schema, sizeof r, &r};
  nvtxMarkPayload(d, &again, 1);
  std::printf("extensions done\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: capture_app <case> [args]\n");
    return 64;
  }
  std::string const which = argv[1];
  if (which == "basic") return basic();
  if (which == "threads") return threads();
  if (which == "exit") return exit_case();
  if (which == "signal") {
    return signal_case(argc > 2 ? argv[2] : "term", argc > 3 ? std::atoi(argv[3]) : 100);
  }
  if (which == "exit_busy") exit_busy_case(argc > 2 ? std::atol(argv[2]) : 20'000L);
  if (which == "order") {
    return order_case(argc > 2 ? std::atol(argv[2]) : 100'000L, argc > 3 ? std::atoi(argv[3]) : 4);
  }
  if (which == "exception") return exception_case();
  if (which == "extensions") return extensions_case();
  if (which == "warnings") return warnings_case();
  if (which == "fork") return fork_case();
  if (which == "tls_destructor") return tls_destructor_case();
  if (which == "fork_busy") return fork_busy_case(argc > 2 ? std::atoi(argv[2]) : 20);
  if (which == "return") {
    nvtxRangePushA("returning");
    nvtxRangePop();
    return argc > 2 ? std::atoi(argv[2]) : 0;
  }
  if (which == "touch") {  // proves whether the program ran
    if (FILE* f = std::fopen(argv[2], "w")) {
      std::fclose(f);
    }
    return 0;
  }
  if (which == "memory") {
    return memory_case(argc > 2 ? std::atol(argv[2]) : 10'000'000L,
                       argc > 3 ? std::atoi(argv[3]) : 8);
  }
  if (which == "env") return env_case();
  if (which == "cuda_inject") return cuda_inject_case(argc > 2 ? std::atoi(argv[2]) : 0);
  if (which == "fake_gpu") return fake_gpu_case(argc > 2 ? argv[2] : "exit");
  if (which == "clock") return clock_case(argc > 2 ? std::atol(argv[2]) : 0L);
  if (which == "overhead") return overhead_case(argc > 2 ? std::atol(argv[2]) : 2'000'000L);
  std::fprintf(stderr, "unknown case %s\n", which.c_str());
  return 64;
}
