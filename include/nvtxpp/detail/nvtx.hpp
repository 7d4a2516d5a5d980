/// @file
/// @brief The NVTX C API, included only when annotations are compiled in.
#pragma once

#include <nvtxpp/config.hpp>

// NVTX's extension headers define static functions a translation unit may not call; clang warns
// about them (-Wunused-function) wherever the toolkit's include directory is not a system one,
// as under nvcc -ccbin clang++. These pragmas keep a user's -Werror build clean.
#if defined(__clang__)
#define NVTXPP_DETAIL_NVTX_HEADERS_BEGIN \
  _Pragma("clang diagnostic push") _Pragma("clang diagnostic ignored \"-Wunused-function\"")
#define NVTXPP_DETAIL_NVTX_HEADERS_END _Pragma("clang diagnostic pop")
#else
#define NVTXPP_DETAIL_NVTX_HEADERS_BEGIN
#define NVTXPP_DETAIL_NVTX_HEADERS_END
#endif

#if NVTXPP_ENABLED
NVTXPP_DETAIL_NVTX_HEADERS_BEGIN
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>  // nvtxDomainIsEnabled: is a tool listening?
NVTXPP_DETAIL_NVTX_HEADERS_END
#endif
