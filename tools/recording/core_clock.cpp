// The recorder core's clock: the TSC when it is invariant (NVTXPP_NO_TSC turns it off), else
// CLOCK_MONOTONIC; calibrated once, at the first NVTX call (raw_ticks: core_internal.hpp).

#include "core_internal.hpp"

#include <time.h>

#include <cstdlib>
#include <limits>

namespace nvtxpp::recording {

using namespace detail;

namespace {

// ---------------------------------------------------------------------------------------------
// Clock.

bool invariant_tsc() noexcept {
#if NVTXPP_RECORDING_HAVE_TSC
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000007U, &a, &b, &c, &d) != 0) {
    return (d & (1U << 8)) != 0;
  }
#endif
  return false;
}

tick_clock calibrate() noexcept {
  tick_clock c;
  c.tsc = invariant_tsc() && std::getenv("NVTXPP_NO_TSC") == nullptr;
  g_tsc.store(c.tsc, std::memory_order_relaxed);
  clock_point const p0 = read_clock_point();
  c.ns0 = p0.ns;
  c.ticks0 = p0.ticks;
  if (c.tsc) {
    // A first estimate of the rate: the program waits for it (it runs at the first NVTX call),
    // so it is short. Decoders replace it with one from a later calibration point as soon as
    // that point is `min_baseline_ns` away (current_clock_map, and the capture's file reader).
    while (monotonic_ns() - c.ns0 < start_estimate_ns) {
    }
    clock_point const p1 = read_clock_point();
    if (p1.ticks != c.ticks0) {
      c.ns_per_tick = static_cast<double>(p1.ns - c.ns0) / static_cast<double>(p1.ticks - c.ticks0);
    }
  }
  return c;
}

}  // namespace

// -----------------------------------------------------------------------------------------------
// Public (internal) interface.

std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t now_ticks() noexcept { return raw_ticks(); }

clock_point read_clock_point() noexcept {
  clock_point best;
  std::int64_t narrowest = std::numeric_limits<std::int64_t>::max();
  for (int i = 0; i < 8; ++i) {
    std::int64_t const before = raw_ticks();
    std::int64_t const ns = monotonic_ns();
    std::int64_t const after = raw_ticks();
    if (after - before < narrowest) {
      narrowest = after - before;
      best.ticks = before + (after - before) / 2;
      best.ns = ns;
    }
  }
  return best;
}

tick_clock const& clock() noexcept {
  static tick_clock const c = calibrate();
  return c;
}

clock_map current_clock_map() noexcept {
  tick_clock const& c = clock();
  if (c.tsc) {
    // Decoding so soon after the start (a short test): wait until the baseline is long enough
    // (at most min_baseline_ns, once) rather than decode with the short start-up estimate.
    while (monotonic_ns() - c.ns0 < min_baseline_ns) {
    }
  }
  clock_point const now = read_clock_point();
  std::int64_t const n1 = now.ns;
  std::int64_t const t1 = now.ticks;
  clock_map m;
  m.ticks0 = c.ticks0;
  m.ns0 = c.ns0;
  m.ns_per_tick = c.ns_per_tick;
  if (c.tsc && n1 - c.ns0 >= min_baseline_ns) {
    m = clock_map::from(c.ticks0, c.ns0, t1, n1);
  }
  return m;
}

}  // namespace nvtxpp::recording
