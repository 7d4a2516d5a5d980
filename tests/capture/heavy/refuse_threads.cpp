// LD_PRELOAD test double of a process that refuses threads: pthread_create called from
// nvtxpp-capture's injection library (libnvtxpp_inject.so) fails with the error named by
// NVTXPP_TEST_REFUSE_THREADS (EAGAIN, EINVAL, EPERM); every other caller's thread starts as usual
// (the launcher's, the program's own). thread_start_tests.py uses it to check that a thread of
// ours that cannot start is said, and what the recording does instead.
#include <dlfcn.h>
#include <pthread.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace {

using create_fn = int (*)(pthread_t*, pthread_attr_t const*, void* (*)(void*), void*);

int refused_error() noexcept {
  char const* e = std::getenv("NVTXPP_TEST_REFUSE_THREADS");
  if (e == nullptr) {
    return 0;
  }
  if (std::strcmp(e, "EINVAL") == 0) {
    return EINVAL;
  }
  if (std::strcmp(e, "EPERM") == 0) {
    return EPERM;
  }
  return EAGAIN;
}

bool from_injection_library(void* caller) noexcept {
  Dl_info info{};
  return ::dladdr(caller, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libnvtxpp_inject") != nullptr;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread,
                                                                     pthread_attr_t const* attr,
                                                                     void* (*start)(void*),
                                                                     void* arg) {
  if (int const e = refused_error();
      e != 0 && from_injection_library(__builtin_return_address(0))) {
    return e;
  }
  static auto const next = reinterpret_cast<create_fn>(::dlsym(RTLD_NEXT, "pthread_create"));
  return next != nullptr ? next(thread, attr, start, arg) : EAGAIN;
}
