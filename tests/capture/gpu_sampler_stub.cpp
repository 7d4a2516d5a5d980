// What gpu_sampler.cpp calls of the injection library, for its unit test (gpu_detail_test.cpp),
// which never starts the sampler.
#include "inprocess/cuda/cupti.hpp"
#include "inprocess/our_threads.hpp"

#include <cerrno>

namespace nvtxpp::capture {

int start_thread(void* (*)(void*), char const*, std::size_t, pthread_t*) noexcept { return EAGAIN; }
void say_thread_failed(char const*, int, char const*) noexcept {}

namespace cupti {

void set_gpu_sample(bool, bool) noexcept {}

}  // namespace cupti

}  // namespace nvtxpp::capture
