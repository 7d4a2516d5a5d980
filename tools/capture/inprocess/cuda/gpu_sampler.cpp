// --cuda-sample: CUPTI's tracing on for ON of every PERIOD, and raised on a dump (gpu_sampler.hpp).
//
// One thread of ours (all signals blocked) sleeps until the next edge: a period's start or end,
// or a raise's end; at each it tells cupti.cpp the state (cupti::set_gpu_sample), which switches
// the activity kinds and API callbacks and writes the edge as an info record. A raise comes from
// the block writer's thread (a dump request, flight_ring.hpp); it takes the same lock briefly.
#include "gpu_sampler.hpp"

#include "../our_threads.hpp"
#include "cupti.hpp"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

namespace nvtxpp::capture::gpu_sampler {

namespace {

std::int64_t clock_ns(clockid_t id) noexcept {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

bool parse_ns(char const* text, char const** end, std::int64_t* out) noexcept {
  char* e = nullptr;
  long long const v = std::strtoll(text, &e, 10);
  if (e == text || v < 0) {
    return false;
  }
  *out = v;
  *end = e;
  return true;
}

struct state {
  plan p;
  std::int64_t offset = 0;        ///< CLOCK_REALTIME - CLOCK_MONOTONIC at start
  std::int64_t raised_until = 0;  ///< CLOCK_MONOTONIC ns (under `mutex`)
  pid_t pid = 0;                  ///< the process that started sampling
  bool unsampled = false;         ///< the thread could not start: detail all the time
  std::mutex mutex;
  std::condition_variable cv;
};
/// Set once at start (release), read by raise() on the block writer's thread; never freed: the
/// thread runs until the process ends.
std::atomic<state*> g_state{nullptr};

/// The state for now: tells cupti.cpp, returns the next edge. Caller holds the mutex.
std::int64_t apply(state& s, std::int64_t now) noexcept {
  std::int64_t next = 0;
  bool const sampled = in_period(s.p, now, s.offset, &next);
  bool const raised = now < s.raised_until;
  cupti::set_gpu_sample(sampled || raised, raised);
  return raised ? std::min(next, s.raised_until) : next;
}

void* sampler_main(void*) noexcept {
  sigset_t all;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
  state& s = *g_state.load(std::memory_order_acquire);
  std::unique_lock<std::mutex> lock{s.mutex};
  for (;;) {
    std::int64_t const next = apply(s, clock_ns(CLOCK_MONOTONIC));
    // CLOCK_MONOTONIC is steady_clock's clock here (libstdc++ on Linux).
    s.cv.wait_until(lock, std::chrono::steady_clock::time_point{std::chrono::nanoseconds{next}});
  }
  return nullptr;
}

}  // namespace

plan read_plan() noexcept {
  plan p;
  char const* text = std::getenv("NVTXPP_CUDA_SAMPLE");  // "ON_NS/PERIOD_NS"
  char const* end = nullptr;
  std::int64_t on = 0;
  std::int64_t period = 0;
  if (text == nullptr || !parse_ns(text, &end, &on) || *end != '/' ||
      !parse_ns(end + 1, &end, &period) || *end != '\0' || on <= 0 || period <= on) {
    return p;  // the launcher checks the option; a hand-set malformed value samples nothing
  }
  p.on_ns = on;
  p.period_ns = period;
  if (char const* r = std::getenv("NVTXPP_CUDA_RAISE_NS"); r != nullptr) {
    std::int64_t raise = 0;
    if (parse_ns(r, &end, &raise) && *end == '\0') {
      p.raise_ns = raise;
    }
  }
  return p;
}

bool in_period(plan const& p, std::int64_t t, std::int64_t realtime_offset_ns,
               std::int64_t* next) noexcept {
  // The phase on the wall clock: periods start at multiples of PERIOD since the epoch.
  std::int64_t phase = (t + realtime_offset_ns) % p.period_ns;
  if (phase < 0) {
    phase += p.period_ns;
  }
  bool const on = phase < p.on_ns;
  *next = t + (on ? p.on_ns - phase : p.period_ns - phase);
  return on;
}

void start() noexcept {
  plan const p = read_plan();
  if (p.on_ns == 0 || g_state.load(std::memory_order_acquire) != nullptr) {
    return;
  }
  auto* s = new (std::nothrow) state;
  if (s == nullptr) {
    return;  // out of memory at start: GPU detail all the time, as without the option
  }
  s->p = p;
  s->offset = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
  s->pid = ::getpid();
  {
    std::lock_guard<std::mutex> lock{s->mutex};
    apply(*s, clock_ns(CLOCK_MONOTONIC));  // the state from the first moment, before the thread
  }
  g_state.store(s, std::memory_order_release);
  int const error = start_thread(&sampler_main, "nvtxpp-sample", 64 * 1024);
  if (error != 0) {
    // Nothing would ever switch the state set above: GPU detail all the time instead (a period
    // that never ends), rather than none or all after a moment's state.
    {
      std::lock_guard<std::mutex> lock{s->mutex};
      s->unsampled = true;
      cupti::set_gpu_sample(true, false);
    }
    say_thread_failed("--cuda-sample: the sampler thread could not start", error,
                      "GPU detail recorded all the time");
  }
}

void raise() noexcept {
  state* s = g_state.load(std::memory_order_acquire);
  if (s == nullptr || s->p.raise_ns == 0 || s->pid != ::getpid()) {
    return;  // no sampling, no raise asked, or a forked child (CUPTI is the parent's)
  }
  std::lock_guard<std::mutex> lock{s->mutex};
  if (s->unsampled) {
    return;  // no sampler thread: GPU detail is recorded all the time already
  }
  std::int64_t const now = clock_ns(CLOCK_MONOTONIC);
  s->raised_until = std::max(s->raised_until, now + s->p.raise_ns);
  apply(*s, now);  // at once, not at the thread's next edge
  s->cv.notify_all();
}

}  // namespace nvtxpp::capture::gpu_sampler
