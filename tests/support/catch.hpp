// Catch2 3 when the build found it, else Catch2 2 (Debian's catch2 package).
#pragma once
#if defined(NVTXPP_CATCH2_V3)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>  // CHECK_THROWS_WITH, as Catch2 2 has it
using Catch::Approx;                                  // unqualified, as Catch2 2 has it
#else
#include <catch2/catch.hpp>
#endif
