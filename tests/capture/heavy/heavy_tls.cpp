// A library with 1 MiB of initial-exec TLS, like the CUDA math libraries (cuBLASLt carries
// 92 KiB, cuBLAS 12 KiB) but larger: glibc takes a program's static TLS from every thread's
// stack, so a program linked with it refuses (EINVAL) any thread whose stack is smaller. The
// capture tests link their programs with it (the "heavy" variants) to check that the threads
// nvtxpp-capture starts inside a program start in such a program too.
#include <cstddef>

namespace {

constexpr std::size_t tls_bytes = std::size_t{1} << 20;

}  // namespace

// initial-exec: static TLS even when the library is loaded late (dlopen), as such libraries ask.
__attribute__((tls_model("initial-exec"))) thread_local unsigned char nvtxpp_heavy_tls[tls_bytes];

/// @brief Touches the calling thread's copy of the TLS (keeps the variable, and the library
/// linked, whatever the linker's --as-needed).
extern "C" __attribute__((visibility("default"))) unsigned nvtxpp_heavy_tls_touch(
    std::size_t at) noexcept {
  nvtxpp_heavy_tls[at % tls_bytes] =
      static_cast<unsigned char>(nvtxpp_heavy_tls[at % tls_bytes] + 1);
  return nvtxpp_heavy_tls[at % tls_bytes];
}
