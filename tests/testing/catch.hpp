/// @file
/// @brief Includes Catch2's test macros from Catch2 3 or Catch2 2 (whichever CMake found).
#pragma once

#if defined(NVTXPP_CATCH2_V3)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#else
#include <catch2/catch.hpp>
#endif
