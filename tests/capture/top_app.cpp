// A program for `nvtxpp-capture top`'s tests (top_tests.py) and bench (bench/top_cost.py):
// `top_app <case> [args]`. It says how far it got through files the tests wait for, never
// through time.
//
//   split READY STOP [OUT]  steps "step N" of 20 ms split A 12 ms (60%), B 6 ms (30%), C 2 ms
//                           (10%), on a thread named "main loop", until STOP exists; READY
//                           after 10 steps; OUT: the steps done, written at the end
//   steps N [STATUS]        N steps of the split, then exit STATUS
//   names N READY STOP      a range of a 10,010-character name, N ranges of N distinct
//                           names (no digits: nothing folds), then the split until STOP;
//                           READY after 60 of its steps
//   demo READY STOP         docs/top.md's screen: a trainer's steps whose "data" range grows,
//                           beside a thread "loader"
//   flood RATE SECONDS OUT  "tick" ranges at about RATE a second (bursts of 1000 every 1000/RATE
//                           s) for SECONDS; OUT: each burst's start and time, ns (the bench's
//                           step: CLOCK_MONOTONIC, to tell the bursts top watched)
#include <nvtx3/nvToolsExt.h>

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

void touch(char const* path) {
  if (std::FILE* f = std::fopen(path, "w")) {
    std::fclose(f);
  }
}

bool exists(char const* path) { return ::access(path, F_OK) == 0; }

std::int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// Sleeps until `t` (CLOCK_MONOTONIC ns): the ranges' edges fall on a fixed grid, so a late
/// wake-up moves one edge, never the split.
void sleep_until(std::int64_t t) {
  timespec const at{static_cast<time_t>(t / 1'000'000'000), static_cast<long>(t % 1'000'000'000)};
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) != 0) {
  }
}

constexpr std::int64_t ms = 1'000'000;

/// Step `i` from `t0`: A to +12 ms, B to +18 ms, C to +20 ms. @return its end
std::int64_t step(std::uint64_t i, std::int64_t t0) {
  std::string const name = "step " + std::to_string(i);
  nvtxRangePushA(name.c_str());
  nvtxRangePushA("A");
  sleep_until(t0 + 12 * ms);
  nvtxRangePop();
  nvtxRangePushA("B");
  sleep_until(t0 + 18 * ms);
  nvtxRangePop();
  nvtxRangePushA("C");
  sleep_until(t0 + 20 * ms);
  nvtxRangePop();
  nvtxRangePop();
  return t0 + 20 * ms;
}

void name_this_thread(char const* name) {
  nvtxNameOsThreadA(static_cast<std::uint32_t>(::syscall(SYS_gettid)), name);
}

int split(char const* ready, char const* stop, char const* out, std::uint64_t ready_after = 10) {
  name_this_thread("main loop");
  std::int64_t t = now_ns();
  std::uint64_t i = 1;
  for (; !exists(stop); ++i) {
    t = step(i, t);
    if (i == ready_after) {
      touch(ready);
    }
    if (now_ns() > t + 20 * ms) {
      t = now_ns();  // fell behind (a loaded machine): a fresh grid, not a burst of short steps
    }
  }
  if (out != nullptr) {
    if (std::FILE* f = std::fopen(out, "w")) {
      std::fprintf(f, "%llu\n", static_cast<unsigned long long>(i - 1));
      std::fclose(f);
    }
  }
  return 0;
}

int names(long n, char const* ready, char const* stop) {
  std::string const long_name = "long name " + std::string(10000, 'x');
  nvtxRangePushA(long_name.c_str());
  sleep_until(now_ns() + 50 * ms);
  nvtxRangePop();
  for (long k = 0; k < n; ++k) {
    std::string name = "name ";
    for (long x = k; x > 0 || name.size() == 5; x /= 26) {
      name += static_cast<char>('a' + x % 26);
    }
    nvtxRangePushA(name.c_str());
    nvtxRangePop();
  }
  // READY after more than a second of steps: past the slice the names filled, whenever the
  // machine lets the steps run again.
  return split(ready, stop, nullptr, 60);
}

/// docs/top.md's screen: a trainer whose "data" range grows (2 ms, and 0.15 ms more each second)
/// inside steps of "forward" 6 ms, "backward" 9 ms and "optimizer" 1 ms, beside a thread
/// "loader" that decodes 3 ms of every 5 ms; until STOP exists, READY after 10 steps.
int demo(char const* ready, char const* stop) {
  std::atomic<bool> done{false};
  std::thread loader{[&done] {
    name_this_thread("loader");
    for (std::int64_t t = now_ns(); !done.load(); t += 5 * ms) {
      nvtxRangePushA("decode batch");
      sleep_until(t + 3 * ms);
      nvtxRangePop();
      sleep_until(t + 5 * ms);
    }
  }};
  name_this_thread("train");
  std::int64_t const began = now_ns();
  for (std::uint64_t i = 1; !exists(stop); ++i) {
    std::int64_t t = now_ns();
    auto const data = 2 * ms + (t - began) * 15 / 100'000;  // 0.15 ms more each second
    nvtxRangePushA(("step " + std::to_string(i)).c_str());
    for (auto const& [name, len] : {std::pair<char const*, std::int64_t>{"data", data},
                                    {"forward", 6 * ms},
                                    {"backward", 9 * ms},
                                    {"optimizer", 1 * ms}}) {
      nvtxRangePushA(name);
      t += len;
      sleep_until(t);
      nvtxRangePop();
    }
    nvtxRangePop();
    if (i == 10) {
      touch(ready);
    }
  }
  done = true;
  loader.join();
  return 0;
}

int flood(double rate, double seconds, char const* out) {
  constexpr int burst = 1000;
  auto const period = static_cast<std::int64_t>(1e9 * burst / rate);
  std::int64_t const end = now_ns() + static_cast<std::int64_t>(seconds * 1e9);
  std::vector<std::pair<std::int64_t, std::int64_t>> bursts;  // (start, ns) of each burst
  bursts.reserve(static_cast<std::size_t>(seconds * rate / burst) + 16);
  for (std::int64_t t = now_ns(); t < end; t += period) {
    std::int64_t const a = now_ns();
    for (int k = 0; k < burst; ++k) {
      nvtxRangePushA("tick");
      nvtxRangePop();
    }
    bursts.emplace_back(a, now_ns() - a);
    sleep_until(t + period);
  }
  if (std::FILE* f = std::fopen(out, "w")) {
    for (auto const& [at, ns] : bursts) {
      std::fprintf(f, "%lld %lld\n", static_cast<long long>(at), static_cast<long long>(ns));
    }
    std::fclose(f);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string const which = argc > 1 ? argv[1] : "";
  auto arg = [&](int i, char const* fallback) { return argc > i ? argv[i] : fallback; };
  if (which == "split") {
    return split(arg(2, "ready"), arg(3, "stop"), argc > 4 ? argv[4] : nullptr);
  }
  if (which == "steps") {
    std::int64_t t = now_ns();
    for (long i = 1, n = std::atol(arg(2, "50")); i <= n; ++i) {
      t = step(static_cast<std::uint64_t>(i), t);
    }
    return std::atoi(arg(3, "0"));
  }
  if (which == "names") {
    return names(std::atol(arg(2, "100000")), arg(3, "ready"), arg(4, "stop"));
  }
  if (which == "demo") {
    return demo(arg(2, "ready"), arg(3, "stop"));
  }
  if (which == "flood") {
    return flood(std::atof(arg(2, "1000000")), std::atof(arg(3, "10")), arg(4, "flood.txt"));
  }
  std::fputs("usage: top_app split|steps|names|flood ...\n", stderr);
  return 64;
}
