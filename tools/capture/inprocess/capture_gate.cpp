// The capture window inside the profiled program (capture_gate.hpp).
//
// The core's gate is a flag the event callbacks test anyway; this file decides when it flips.
// Window changes are rare (a trigger range, a profiler call, a timer): they take a mutex. The
// timer thread exists only with --delay (no trigger) or --duration.

#include "capture_gate.hpp"

#include "../../recording/core.hpp"
#include "../common/name_pattern.hpp"
#include "../common/name_spec.hpp"
#include "cuda/cupti.hpp"
#include "our_threads.hpp"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace nvtxpp::capture::gate {

namespace {

namespace rec = nvtxpp::recording;

enum class trigger { time, cuda, nvtx };
enum class after { stop, none, repeat };

struct policy {
  trigger by = trigger::time;
  after end = after::stop;
  std::uint32_t max_windows = 0;  // repeat:N (0: no limit)
  std::int64_t open_from_ns = 0;  // launch + --delay (CLOCK_MONOTONIC)
  std::int64_t duration_ns = 0;   // 0: no limit
  // State, under `mutex`.
  std::uint32_t opened = 0;
  bool open = false;
  bool done = false;          // no window opens any more
  std::int64_t close_at = 0;  // --duration's end once the first window opened (0: none)
  bool timer_wanted = false;
};

/// Set once by start() after the mutex (release); never freed (threads may outlive main).
std::atomic<policy*> g_policy{nullptr};
std::mutex* g_mutex = nullptr;
std::condition_variable* g_cv = nullptr;
std::mutex* g_parent_mutex = nullptr;  // a forked child's: the parent's, never used again
std::condition_variable* g_parent_cv = nullptr;
std::atomic<bool> g_open{true};               // window state for CUPTI (true without gating)
std::atomic<bool> g_profiler_awaited{false};  // cudaProfilerApi, and a window may still open

std::int64_t env_int(char const* name, std::int64_t fallback) {
  char const* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    return fallback;
  }
  errno = 0;
  char* end = nullptr;
  long long const n = std::strtoll(v, &end, 10);
  return errno == 0 && *end == '\0' ? static_cast<std::int64_t>(n) : fallback;
}

std::string env_str(char const* name) {
  char const* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// Name patterns (common/name_pattern.hpp, compiled into this library: no dependency, hidden
// like the rest of it). Made once at start(), never freed; matched once per interned text or
// domain, and per inline message only while the window waits for its trigger.
name_pattern const* g_range_pattern = nullptr;
name_pattern const* g_domain_pattern = nullptr;
std::vector<name_pattern> const* g_filter = nullptr;  // --nvtx-domain-include/-exclude

bool range_matches(std::string_view name) noexcept { return g_range_pattern->matches(name); }
bool domain_matches(std::string_view name) noexcept { return g_domain_pattern->matches(name); }
bool filter_names(std::string_view name) noexcept {
  for (auto const& p : *g_filter) {
    if (p.matches(name)) {
      return true;
    }
  }
  return false;
}

/// The domain filter's comma list (`\` escapes a comma; an unescaped `default` is the default
/// domain, `\default` a domain of that name): the other items are names or patterns.
void set_filter(std::string const& list, bool include) {
  bool default_named = false;
  auto* patterns = new std::vector<name_pattern>;
  for (auto const& item : split_name_list(list)) {
    if (item == "default") {
      default_named = true;
    } else {
      patterns->emplace_back(item);
    }
  }
  g_filter = patterns;
  rec::set_domain_filter(&filter_names, default_named, include);
}

/// The plain characters a pattern starts with (escapes removed), up to its first wildcard.
std::string literal_prefix(std::string const& pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    char const c = pattern[i];
    if (c == '*' || c == '?' || c == '[') {
      break;
    }
    if (c == '\\' && i + 1 < pattern.size()) {
      ++i;
    }
    out += pattern[i];
  }
  return out;
}

/// The NVTX trigger `RANGE[@DOMAIN]`: exact names as before, patterns through the matchers.
void set_nvtx_trigger(std::string const& spec, rec::window_config& c) {
  name_at_domain const parts = split_at_domain(spec);
  name_pattern range{parts.range};
  if (range.is_literal()) {
    c.trigger_range = range.literal();
  } else {
    c.trigger_range = parts.range;
    c.trigger_range_prefix = literal_prefix(parts.range);
    g_range_pattern = new name_pattern{std::move(range)};
    c.trigger_range_matches = &range_matches;
  }
  if (!parts.has_domain || parts.domain == "*") {
    c.trigger_domain = parts.domain;  // "" the default domain, "*" any
    return;
  }
  name_pattern domain{parts.domain};
  if (domain.is_literal()) {
    c.trigger_domain = domain.literal();
  } else {
    c.trigger_domain = parts.domain;
    g_domain_pattern = new name_pattern{std::move(domain)};
    c.trigger_domain_matches = &domain_matches;
  }
}

/// Flips the core's gate and CUPTI's activity kinds. Caller holds the mutex.
void apply(bool open) noexcept {
  policy& p = *g_policy.load(std::memory_order_acquire);
  p.open = open;
  rec::set_window(open);
  g_open.store(open, std::memory_order_release);
  cupti::set_gpu_window(open);
}

/// Opens the window if the policy allows now. Caller holds the mutex.
void try_open(std::int64_t now) noexcept {
  policy& p = *g_policy.load(std::memory_order_acquire);
  if (p.open || p.done || now < p.open_from_ns || (p.close_at != 0 && now >= p.close_at)) {
    return;
  }
  ++p.opened;
  if (p.opened == 1 && p.duration_ns != 0) {
    p.close_at = now + p.duration_ns;
    g_cv->notify_all();
  }
  apply(true);
}

/// The range or profiler call that opened the window ended. Caller holds the mutex.
void trigger_ended() noexcept {
  policy& p = *g_policy.load(std::memory_order_acquire);
  if (!p.open || p.end == after::none) {
    return;  // none: recording goes on to the end of the run
  }
  if (p.end == after::stop || (p.max_windows != 0 && p.opened >= p.max_windows)) {
    p.done = true;
    g_profiler_awaited.store(false, std::memory_order_release);
    rec::set_trigger_armed(false);
  }
  apply(false);
}

void on_trigger_begin() noexcept {
  std::lock_guard<std::mutex> lock{*g_mutex};
  try_open(rec::monotonic_ns());
}

void on_trigger_end() noexcept {
  std::lock_guard<std::mutex> lock{*g_mutex};
  trigger_ended();
}

void* timer_main(void*) noexcept {
  sigset_t all;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
  policy& p = *g_policy.load(std::memory_order_acquire);
  std::unique_lock<std::mutex> lock{*g_mutex};
  for (;;) {
    std::int64_t const now = rec::monotonic_ns();
    if (p.by == trigger::time && !p.open && !p.done && p.opened == 0 && now >= p.open_from_ns) {
      try_open(now);
    }
    if (p.close_at != 0 && now >= p.close_at && !p.done) {
      p.done = true;  // --duration is over: no window opens again
      g_profiler_awaited.store(false, std::memory_order_release);
      rec::set_trigger_armed(false);
      if (p.open) {
        apply(false);
      } else {
        cupti::set_gpu_window(false);  // (closed already: CUPTI may detach now)
      }
    }
    if (p.done) {
      return nullptr;
    }
    std::int64_t next = 0;
    if (p.by == trigger::time && p.opened == 0) {
      next = p.open_from_ns;
    } else if (p.close_at != 0) {
      next = p.close_at;
    }
    // CLOCK_MONOTONIC is steady_clock's clock here (libstdc++ on Linux).
    if (next != 0) {
      g_cv->wait_until(lock, std::chrono::steady_clock::time_point{std::chrono::nanoseconds{next}});
    } else {
      g_cv->wait(lock);
    }
  }
}

/// Starts the timer thread. Without one, a window by time would never open and --duration would
/// never close one: the window then opens now and stays open (by time), or closes only when its
/// trigger ends (--duration with a trigger), and the line says so.
void start_timer() noexcept {
  int const error = start_thread(&timer_main, "nvtxpp-window", 64 * 1024);
  if (error == 0) {
    return;
  }
  policy& p = *g_policy.load(std::memory_order_acquire);
  bool by_time = false;
  {
    std::lock_guard<std::mutex> lock{*g_mutex};
    by_time = p.by == trigger::time;
    p.duration_ns = 0;
    p.close_at = 0;
    if (by_time && !p.done) {
      p.open_from_ns = 0;
      try_open(rec::monotonic_ns());
    }
  }
  if (by_time) {
    say_thread_failed("--delay/--duration: the capture window's timer thread could not start",
                      error, "recording from now to the end of the run");
  } else {
    say_thread_failed("--duration: the capture window's timer thread could not start", error,
                      "each window closes when its trigger ends");
  }
}

}  // namespace

void start() noexcept {
  try {
    bool include = false;
    std::string list = env_str("NVTXPP_CAPTURE_DOMAIN_INCLUDE");
    if (!list.empty()) {
      include = true;
    } else {
      list = env_str("NVTXPP_CAPTURE_DOMAIN_EXCLUDE");
    }
    if (!list.empty()) {
      set_filter(list, include);
    }

    std::string const range = env_str("NVTXPP_CAPTURE_RANGE");
    if (range.empty()) {
      return;  // no window: everything is recorded
    }
    auto* p = new policy;
    p->by = range == "nvtx"              ? trigger::nvtx
            : range == "cudaProfilerApi" ? trigger::cuda
                                         : trigger::time;
    std::string const end = env_str("NVTXPP_CAPTURE_RANGE_END");  // "stop:0", "repeat:N", "none:0"
    p->end = end.rfind("repeat", 0) == 0 ? after::repeat
             : end.rfind("none", 0) == 0 ? after::none
                                         : after::stop;
    if (std::size_t const colon = end.find(':'); colon != std::string::npos) {
      p->max_windows =
          static_cast<std::uint32_t>(std::strtoul(end.c_str() + colon + 1, nullptr, 10));
    }
    std::int64_t const t0 = env_int("NVTXPP_CAPTURE_T0", rec::monotonic_ns());
    p->open_from_ns = t0 + env_int("NVTXPP_CAPTURE_DELAY_NS", 0);
    p->duration_ns = env_int("NVTXPP_CAPTURE_DURATION_NS", 0);
    g_mutex = new std::mutex;
    g_cv = new std::condition_variable;
    g_policy.store(p, std::memory_order_release);
    g_profiler_awaited.store(p->by == trigger::cuda, std::memory_order_release);

    rec::window_config c;
    if (p->by == trigger::nvtx) {
      set_nvtx_trigger(env_str("NVTXPP_CAPTURE_NVTX"), c);
      c.trigger_begin = &on_trigger_begin;
      c.trigger_end = &on_trigger_end;
    }
    g_open.store(false, std::memory_order_release);
    rec::set_window_config(c);  // closed until a trigger opens it
    p->timer_wanted = p->by == trigger::time || p->duration_ns != 0;
    if (p->by == trigger::time && rec::monotonic_ns() >= p->open_from_ns) {
      std::lock_guard<std::mutex> lock{*g_mutex};
      try_open(rec::monotonic_ns());
    }
    if (p->timer_wanted) {
      start_timer();
    }
  } catch (...) {
    // Out of memory at start, or a malformed pattern the launcher would have refused (the
    // variables set by hand): the window options are not applied (everything is recorded).
  }
}

bool window_open() noexcept { return g_open.load(std::memory_order_acquire); }

bool windowed() noexcept { return g_policy.load(std::memory_order_acquire) != nullptr; }

bool profiler_start_awaited() noexcept {
  return g_profiler_awaited.load(std::memory_order_acquire);
}

void profiler_api(bool start_call) noexcept {
  policy const* p = g_policy.load(std::memory_order_acquire);
  if (p == nullptr || p->by != trigger::cuda) {
    return;
  }
  std::lock_guard<std::mutex> lock{*g_mutex};
  if (start_call) {
    try_open(rec::monotonic_ns());
  } else {
    trigger_ended();
  }
}

void after_fork_in_child() noexcept {
  policy const* p = g_policy.load(std::memory_order_acquire);
  if (p == nullptr) {
    return;
  }
  // The parent's timer thread may have held the mutex at the fork: fresh ones.
  auto* m = new (std::nothrow) std::mutex;
  auto* cv = new (std::nothrow) std::condition_variable;
  if (m == nullptr || cv == nullptr) {
    return;  // keeps the parent's (usable unless the timer held them at the fork)
  }
  g_parent_mutex = g_mutex;  // reachable on purpose: not freed, it may be held
  g_parent_cv = g_cv;
  g_mutex = m;
  g_cv = cv;
  if (p->timer_wanted && !p->done) {
    start_timer();
  }
}

}  // namespace nvtxpp::capture::gate
