/// @file
/// @brief What inject.cpp lends the other parts of the injection library (the CUPTI source, the
/// block writer): internal to libnvtxpp_inject.so, not exported.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

namespace nvtxpp::capture {

/// @brief Opens this process's capture file and installs the exit/signal/fork handling, once
/// (what NVTX's first call would do). The CUDA driver can load the library before any NVTX call.
/// @return false when the process is not captured (the file could not be opened).
bool ensure_capture_started() noexcept;

/// @brief Appends one capture-file record `u32 kind, u32 size, parts...` (at most 3 parts) with
/// one writev: async-signal-safe, never interleaved with other writers.
void write_file_record(std::uint32_t kind, iovec* parts, int count) noexcept;

/// @brief Appends `size` bytes of whole, already encoded records in one write (a batch).
void write_file_bytes(void const* data, std::size_t size) noexcept;

}  // namespace nvtxpp::capture
