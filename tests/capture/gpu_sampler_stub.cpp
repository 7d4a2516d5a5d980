// The one CUPTI hook gpu_sampler.cpp calls, for its unit test (gpu_detail_test.cpp), which
// never starts the sampler's thread.
#include "inprocess/cuda/cupti.hpp"

namespace nvtxpp::capture::cupti {

void set_gpu_sample(bool, bool) noexcept {}

}  // namespace nvtxpp::capture::cupti
