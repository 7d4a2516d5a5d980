/// @file
/// @brief `nvtxpp-capture top`: a live table of where a program under the flight recorder
/// spends its time now, range by range (docs/top.md). Only parses its options; live/ runs it.
#pragma once

namespace nvtxpp::capture {

/// @brief `nvtxpp-capture top [options] PID` / `top [options] [capture options] -- program`.
/// @return the exit status (live/top_loop.hpp)
int top_main(int argc, char** argv);

}  // namespace nvtxpp::capture
