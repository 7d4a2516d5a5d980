// Clock facts of a machine, for the floors quoted in docs/capture-cost.md: the cost of
// clock_gettime(CLOCK_MONOTONIC) and of rdtsc, and how wide a (rdtsc, clock_gettime, rdtsc)
// bracket is (what a calibration pair between the two clocks can be sure of).
//   g++ -O2 bench/clock_probe.cpp -o clock_probe && ./clock_probe
#include <time.h>
#include <x86intrin.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>
static int64_t mono() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
int main() {
  const int N = 200000;
  int64_t a = mono();
  uint64_t t0 = __rdtsc();
  for (int i = 0; i < N; ++i) (void)mono();
  int64_t b = mono();
  uint64_t t1 = __rdtsc();
  double ns_per_tick = double(b - a) / double(t1 - t0);
  printf("clock_gettime: %.1f ns/call\n", double(b - a) / N);
  a = mono();
  volatile uint64_t s = 0;
  for (int i = 0; i < N; ++i) s += __rdtsc();
  b = mono();
  printf("rdtsc: %.1f ns/call\n", double(b - a) / N);
  std::vector<double> w;
  for (int i = 0; i < 10000; ++i) {
    uint64_t x = __rdtsc();
    (void)mono();
    uint64_t y = __rdtsc();
    w.push_back((y - x) * ns_per_tick);
  }
  std::sort(w.begin(), w.end());
  printf("bracket tsc|gettime|tsc width ns: min %.0f p50 %.0f p99 %.0f max %.0f\n", w[0],
         w[w.size() / 2], w[w.size() * 99 / 100], w.back());
  FILE* f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  char buf[64] = {0};
  if (f) {
    if (fgets(buf, sizeof buf, f) == nullptr) buf[0] = 0;
    fclose(f);
  }
  printf("clocksource: %s", buf);
}
