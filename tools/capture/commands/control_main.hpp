/// @file
/// @brief The commands that talk to a running flight recorder: `dump PID` (its window, now) and
/// `stacks PID` (where every thread is), and `stacks FILE...` (ranks' reports grouped).
#pragma once

namespace nvtxpp::capture {

/// @brief `nvtxpp-capture dump PID`. @return the exit status
int dump_main(int argc, char** argv);

/// @brief `nvtxpp-capture stacks PID | FILE...`. @return the exit status
int stacks_main(int argc, char** argv);

}  // namespace nvtxpp::capture
