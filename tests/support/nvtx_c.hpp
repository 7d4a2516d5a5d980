// Helpers for tests that call the NVTX C API directly.
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace nvtxpp_test {

/// The calling thread's OS id (gettid), as NVTX tools and nvtxpp::testing report it.
inline std::uint64_t os_thread_id() { return static_cast<std::uint64_t>(::syscall(SYS_gettid)); }

/// Event attributes with an ASCII message and nothing else set.
inline nvtxEventAttributes_t attributes(char const* message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

}  // namespace nvtxpp_test
