/// @file
/// @brief `nvtxpp-capture diff`: the command line of the comparison of two runs (main.cpp
/// dispatches to it).
#pragma once

namespace nvtxpp::capture {

/// @brief Runs `nvtxpp-capture diff ARGS...`; argv[0] is "diff". Returns the exit status: 0
/// done (also when the two sides have nothing in common), 1 the gate (--fail-above) failed, 2
/// bad usage or an unreadable input (nothing written), 3 the picture (--svg) could not be
/// written.
int diff_main(int argc, char** argv);

}  // namespace nvtxpp::capture
