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
/// CUDA resource naming is in nvtxpp/cuda.hpp and CUDA memory permissions in
/// nvtxpp/memory_cuda.hpp (they need the CUDA runtime headers). Counters (nvtxpp/counter.hpp) come
/// with it when the NVTX headers have the counters extension
/// (nvtx3/nvToolsExtCounters.h, as in CUDA 13.0); structured payloads (nvtxpp/struct_payload.hpp)
/// always do.
#pragma once

#include <nvtxpp/attributes.hpp>
#include <nvtxpp/color.hpp>
#include <nvtxpp/config.hpp>
#include <nvtxpp/domain.hpp>
#include <nvtxpp/format.hpp>
#include <nvtxpp/macros.hpp>
#include <nvtxpp/mark.hpp>
#include <nvtxpp/memory.hpp>
#include <nvtxpp/naming.hpp>
#include <nvtxpp/range.hpp>
#include <nvtxpp/registered_string.hpp>
#include <nvtxpp/struct_payload.hpp>
#include <nvtxpp/version.hpp>

// Older NVTX headers lack the counters extension: the umbrella then leaves counters out.
#if !NVTXPP_ENABLED || __has_include(<nvtx3/nvToolsExtCounters.h>)
#include <nvtxpp/counter.hpp>
#endif
