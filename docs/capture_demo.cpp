// Demo for docs/capture.md: a small pipeline annotated with nvtxpp.
#include <time.h>
#include <nvtxpp/nvtxpp.hpp>
#include <thread>
#include <vector>
static void spin_us(int us) {
  timespec a{}, b{};
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}
static void load(int i) {
  NVTXPP_FUNCTION();
  spin_us(150 + 40 * i);
}
static void compute(int i) {
  NVTXPP_FUNCTION();
  {
    NVTXPP_SCOPE("kernel {}", i);
    spin_us(300);
  }
  spin_us(50);
}
int main() {
  nvtxpp::name_current_thread("main");
  std::vector<std::thread> w;
  for (int t = 0; t < 2; ++t)
    w.emplace_back([t] {
      nvtxpp::name_current_thread("worker {}", t);
      for (int i = 0; i < 3; ++i) {
        NVTXPP_SCOPE("batch {}", i);
        load(i);
        compute(i);
      }
    });
  {
    NVTXPP_SCOPE("wait");
    for (auto& x : w) x.join();
  }
  NVTXPP_MARK("done");
}
