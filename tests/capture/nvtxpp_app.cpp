// An nvtxpp-annotated program for the nvtxpp-capture tests: formatted names are built only when
// a tool listens, so this proves the injection library answers nvtxDomainIsEnabled.
#include <nvtxpp/nvtxpp.hpp>

#include <thread>

namespace {

void compute_step(int i) {
  NVTXPP_FUNCTION();
  NVTXPP_SCOPE("step {}", i);
}

}  // namespace

int main() {
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
