/// @file
/// @brief The nvtxpp version, defined once; CMake reads it from here.
#pragma once

#define NVTXPP_VERSION_MAJOR 0
#define NVTXPP_VERSION_MINOR 1
#define NVTXPP_VERSION_PATCH 0

/// @brief The version as one number: major * 10000 + minor * 100 + patch.
#define NVTXPP_VERSION \
  (NVTXPP_VERSION_MAJOR * 10000 + NVTXPP_VERSION_MINOR * 100 + NVTXPP_VERSION_PATCH)
