// A payload field of a type NVTX schemas cannot describe (a nested struct) must not compile.
#include <nvtxpp/struct_payload.hpp>

#include <cstdint>

namespace app {
struct inner {
  int x;
};
struct chunk {
  std::uint64_t bytes;
#ifdef NVTXPP_COMPILE_FAIL
  inner nested;
#else
  int nested;
#endif
};
NVTXPP_PAYLOAD_SCHEMA(chunk, bytes, nested);
}  // namespace app
