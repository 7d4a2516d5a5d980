// Shows what the heavy-TLS library does to a program (thread_start_tests.py checks it first, so
// the fixture is known to reproduce the failure on this machine's glibc): starts a thread with a
// 64 KiB stack (what nvtxpp-capture's threads once had) and one with 8 MiB, and prints the
// outcome of each: "64 KiB: EINVAL", "8 MiB: ok". (ThreadSanitizer's pthread_create enlarges a
// stack too small for the static TLS itself: there the line says so.)
#include <pthread.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

extern "C" unsigned nvtxpp_heavy_tls_touch(std::size_t at) noexcept;

namespace {

void* body(void*) { return reinterpret_cast<void*>(std::size_t{nvtxpp_heavy_tls_touch(1)}); }

char const* start_with(std::size_t stack) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack);
  pthread_t t{};
  int const e = pthread_create(&t, &attr, &body, nullptr);
  pthread_attr_destroy(&attr);
  if (e != 0) {
    return e == EINVAL ? "EINVAL" : e == EAGAIN ? "EAGAIN" : std::strerror(e);
  }
  pthread_join(t, nullptr);
  return "ok";
}

}  // namespace

#if defined(__SANITIZE_THREAD__)
constexpr bool sanitizer_enlarges_stacks = true;  // its pthread_create adds the static TLS
#else
constexpr bool sanitizer_enlarges_stacks = false;
#endif

int main() {
  std::printf("64 KiB: %s%s\n", start_with(std::size_t{64} << 10),
              sanitizer_enlarges_stacks ? " (ThreadSanitizer enlarges small stacks)" : "");
  std::printf("8 MiB: %s\n", start_with(std::size_t{8} << 20));
  return 0;
}
