// A pointer field in a payload schema must not compile: the tool copies the struct's bytes, not
// what a pointer points to.
#include <nvtxpp/struct_payload.hpp>

#include <cstdint>

namespace app {
struct chunk {
  std::uint64_t bytes;
#ifdef NVTXPP_COMPILE_FAIL
  char const* label;
#else
  char label[16];
#endif
};
NVTXPP_PAYLOAD_SCHEMA(chunk, bytes, label);
}  // namespace app
