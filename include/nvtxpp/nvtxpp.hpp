/// @file
/// @brief nvtxpp: one-line NVTX annotation for CUDA and C++. The umbrella header.
///
/// @code
/// #include <nvtxpp/nvtxpp.hpp>
/// void copy_in(int i) {
///   ANNOTATE_FUNCTION();                                   // range named "copy_in"
///   nvtxpp::scoped_range r{"H2D Memory Stream {}", i, nvtxpp::colors::yellow};
/// }
/// @endcode
/// What a range-only user does not need comes from its own header, so that this one stays cheap
/// to include in every translation unit (docs/performance.md, "Include cost"):
/// - nvtxpp/struct_payload.hpp: structs as payloads (NVTXPP_PAYLOAD_SCHEMA, nvtxpp::payload_of);
/// - nvtxpp/counter.hpp: counters (NVTX headers with nvtx3/nvToolsExtCounters.h, as in CUDA 13.0);
/// - nvtxpp/memory.hpp: memory pools and regions (NVTX's memory extension);
/// - nvtxpp/cuda.hpp and nvtxpp/memory_cuda.hpp: CUDA resource naming and CUDA memory
///   permissions (they need the CUDA runtime's headers).
#pragma once

#include <nvtxpp/attributes.hpp>
#include <nvtxpp/color.hpp>
#include <nvtxpp/config.hpp>
#include <nvtxpp/domain.hpp>
#include <nvtxpp/format.hpp>
#include <nvtxpp/macros.hpp>
#include <nvtxpp/mark.hpp>
#include <nvtxpp/naming.hpp>
#include <nvtxpp/range.hpp>
#include <nvtxpp/registered_string.hpp>
#include <nvtxpp/version.hpp>
