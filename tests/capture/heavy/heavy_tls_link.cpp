// Linked into the heavy variants of the capture tests' programs: a reference to the heavy-TLS
// library from a static constructor, so that it stays among their needed libraries (and its TLS
// in their static TLS) whatever the linker's --as-needed.
#include <cstddef>

extern "C" unsigned nvtxpp_heavy_tls_touch(std::size_t at) noexcept;

namespace {

[[maybe_unused]] unsigned const touched = nvtxpp_heavy_tls_touch(0);

}  // namespace
