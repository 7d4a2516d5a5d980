// The CUPTI source of a library built without CUPTI's headers: the CUDA driver still finds
// InitializeInjection, and the capture file says why there is no GPU activity.
#include "../inject_internal.hpp"
#include "cupti.hpp"
#include "gpu_sampler.hpp"

namespace nvtxpp::capture::cupti {

void flush_at_exit() noexcept {}
void flush_from_signal(int) noexcept {}
bool flush_live(std::int64_t) noexcept { return true; }
void after_fork_in_child() noexcept {}
void set_gpu_window(bool) noexcept {}
void set_gpu_sample(bool, bool) noexcept {}

}  // namespace nvtxpp::capture::cupti

namespace nvtxpp::capture::gpu_sampler {

void raise() noexcept {}  // no CUPTI: nothing is sampled, nothing to raise

}  // namespace nvtxpp::capture::gpu_sampler

extern "C" {

/// @brief CUDA driver entry point (CUDA_INJECTION64_PATH): called once in cuInit.
__attribute__((visibility("default"))) int InitializeInjection() {
  if (nvtxpp::capture::ensure_capture_started()) {
    char text[] = "cupti=unavailable:nvtxpp-capture was built without CUPTI headers";
    iovec part{text, sizeof text - 1};
    nvtxpp::capture::write_file_record(
        static_cast<std::uint32_t>(nvtxpp::recording::gpu_record::info), &part, 1);
  }
  return 1;
}
}
