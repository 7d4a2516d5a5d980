// An event carries one payload: a scalar payload and a struct payload together must not compile.
#include <nvtxpp/mark.hpp>
#include <nvtxpp/struct_payload.hpp>

#include <cstdint>

namespace app {
struct chunk {
  std::uint64_t bytes;
};
NVTXPP_PAYLOAD_SCHEMA(chunk, bytes);
void copied(chunk const& c) {
#ifdef NVTXPP_COMPILE_FAIL
  nvtxpp::mark("copied", nvtxpp::payload_of(c), nvtxpp::payload{c.bytes});
#else
  nvtxpp::mark("copied", nvtxpp::payload_of(c));
#endif
}
}  // namespace app
