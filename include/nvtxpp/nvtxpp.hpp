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
/// CUDA resource naming is in nvtxpp/cuda.hpp (it needs the CUDA runtime headers).
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
