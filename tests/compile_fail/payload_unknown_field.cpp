// A payload schema naming a field the struct does not have must not compile.
#include <nvtxpp/struct_payload.hpp>

#include <cstdint>

namespace app {
struct chunk {
  std::uint64_t bytes;
  std::uint32_t stream;
};
#ifdef NVTXPP_COMPILE_FAIL
NVTXPP_PAYLOAD_SCHEMA(chunk, bytes, streams);
#else
NVTXPP_PAYLOAD_SCHEMA(chunk, bytes, stream);
#endif
}  // namespace app
