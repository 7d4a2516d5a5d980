// An nvtxpp-annotated program for the nvtxpp-capture tests: formatted names are built only when
// a tool listens, so this proves the injection library answers nvtxDomainIsEnabled.
#include <nvtxpp/memory.hpp>
#include <nvtxpp/nvtxpp.hpp>

#include <cstring>
#include <thread>

namespace {

void compute_step(int i) {
  NVTXPP_FUNCTION();
  NVTXPP_SCOPE("step {}", i);
}

/// A pool's heap and regions (NVTX memory extension), on two threads: what the capture's
/// "arena bytes in use" track must show is 0, 100, 300, 100, 150, 0, 0.
int heaps() {
  static unsigned char pool[4096];
  nvtxpp::scoped_range r{"pooling"};
  nvtxpp::heap h{pool, sizeof pool, "arena"};
  auto a = h.region(pool, 100, "a {}", 1);
  std::thread{[&h] { auto b = h.region(pool + 1024, 200, "b"); }}.join();
  a.resize(150);
  a.reset();
  return h.registered() ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "heaps") == 0) return heaps();
  nvtxpp::name_current_thread("driver {}", 7);
  for (int i = 0; i < 3; ++i) {
    compute_step(i);
  }
  std::thread{[] {
    nvtxpp::name_current_thread("helper");
    nvtxpp::scoped_range r{"on helper", nvtxpp::colors::yellow};
  }}.join();
  return 0;
}
