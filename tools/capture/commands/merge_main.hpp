/// @file
/// @brief `nvtxpp-capture merge`: the command line of the merge (main.cpp dispatches to it).
#pragma once

namespace nvtxpp::capture {

/// @brief Runs `nvtxpp-capture merge ARGS...`; argv[0] is "merge". Returns the exit status:
/// 0 done, 2 bad usage or an input that cannot be merged (nothing written), 3 the output could
/// not be written (nothing left behind).
int merge_main(int argc, char** argv);

}  // namespace nvtxpp::capture
