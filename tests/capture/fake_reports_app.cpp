// GPU work that Nsight Systems' reports treat specially, without a GPU: kernels launched outside
// every NVTX range, and unified memory migrations, driven through the test double of CUPTI
// (fake_cupti.cpp) under nvtxpp-capture (reports_tests.py checks the outputs).
//
//   nvtxpp_capture_reports_app unranged   3 kernel launches (and a copy, a memset), no NVTX at all
//   nvtxpp_capture_reports_app mixed      2 launches inside "step", 1 outside any range
//   nvtxpp_capture_reports_app managed    under "touch": 1 launch; migrations: 3 host-to-device
//                                         (64 KiB), 1 device-to-host (4 KiB), 1 device-to-device
//                                         (2 MiB, device 1)
#include <nvtx3/nvToolsExt.h>

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using launch_fn = void (*)(int, std::size_t);
using migration_fn = void (*)(int, std::uint64_t, std::uint32_t);

// CUpti_ActivityUnifiedMemoryCounterKind values.
constexpr int htod = 1;
constexpr int dtoh = 2;
constexpr int cpu_page_faults = 3;
constexpr int dtod = 8;

}  // namespace

int main(int argc, char** argv) {
  std::string const mode = argc > 1 ? argv[1] : "";
  char const* path = std::getenv("CUDA_INJECTION64_PATH");
  void* inject = path != nullptr ? ::dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  auto init = inject != nullptr
                  ? reinterpret_cast<int (*)()>(::dlsym(inject, "InitializeInjection"))
                  : nullptr;
  if (init == nullptr) {
    std::fprintf(stderr, "cannot load InitializeInjection\n");
    return 65;
  }
  init();  // what cuInit does
  void* fake = ::dlopen(std::getenv("NVTXPP_CUPTI_PATH"), RTLD_NOW | RTLD_NOLOAD);
  auto launch =
      fake != nullptr ? reinterpret_cast<launch_fn>(::dlsym(fake, "fake_cupti_launch")) : nullptr;
  auto migrate = fake != nullptr
                     ? reinterpret_cast<migration_fn>(::dlsym(fake, "fake_cupti_migration"))
                     : nullptr;
  if (launch == nullptr || migrate == nullptr) {
    std::fprintf(stderr, "the fake CUPTI is not loaded\n");
    return 66;
  }
  if (mode == "unranged") {
    launch(3, 0);
  } else if (mode == "mixed") {
    nvtxRangePushA("step");
    launch(2, 0);
    nvtxRangePop();
    launch(1, 0);
  } else if (mode == "managed") {
    nvtxRangePushA("touch");
    launch(1, 0);
    for (int i = 0; i < 3; ++i) {
      migrate(htod, 64 * 1024, 0);
    }
    migrate(dtoh, 4096, 0);
    migrate(dtod, 2 * 1024 * 1024, 1);
    migrate(cpu_page_faults, 1, 0);  // a counter the tool does not configure: no record
    nvtxRangePop();
  } else {
    std::fprintf(stderr, "usage: %s unranged|mixed|managed\n", argv[0]);
    return 2;
  }
  return 0;
}
