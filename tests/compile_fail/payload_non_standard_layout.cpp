// A payload type that is not standard-layout (here: a virtual function) must not compile.
#include <nvtxpp/struct_payload.hpp>

#include <cstdint>

namespace app {
struct chunk {
  std::uint64_t bytes;
#ifdef NVTXPP_COMPILE_FAIL
  virtual ~chunk() = default;
#endif
};
NVTXPP_PAYLOAD_SCHEMA(chunk, bytes);
}  // namespace app
