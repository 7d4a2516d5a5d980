// What gpu_sampler.cpp calls of the injection library, for its unit test (gpu_detail_test.cpp),
// which never starts the sampler.
#include "inprocess/cuda/cupti.hpp"
#include "inprocess/inject_internal.hpp"

namespace nvtxpp::capture {

bool start_thread(void* (*)(void*), char const*, std::size_t, pthread_t*) noexcept { return false; }

namespace cupti {

void set_gpu_sample(bool, bool) noexcept {}

}  // namespace cupti

}  // namespace nvtxpp::capture
