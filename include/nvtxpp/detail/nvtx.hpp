/// @file
/// @brief The NVTX C API, included only when annotations are compiled in.
#pragma once

#include <nvtxpp/config.hpp>

#if NVTXPP_ENABLED
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>  // nvtxDomainIsEnabled: is a tool listening?
#endif
