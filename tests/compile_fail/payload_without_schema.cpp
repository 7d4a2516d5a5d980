// nvtxpp::payload_of on a type without NVTXPP_PAYLOAD_SCHEMA must not compile.
#include <nvtxpp/mark.hpp>
#include <nvtxpp/struct_payload.hpp>

#include <cstdint>

namespace app {
struct chunk {
  std::uint64_t bytes;
};
#ifndef NVTXPP_COMPILE_FAIL
NVTXPP_PAYLOAD_SCHEMA(chunk, bytes);
#endif
void copied(chunk const& c) { nvtxpp::mark("copied", nvtxpp::payload_of(c)); }
}  // namespace app
