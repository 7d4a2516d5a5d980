/// @file
/// @brief The capture command: runs a program with the injection library and writes its
/// outputs (or, with --flight-recorder, keeps a flight recorder on it); --convert turns a kept
/// raw recording into the outputs (docs/capture-record.md).
#pragma once

namespace nvtxpp::capture {

/// @brief `nvtxpp-capture [options] [--] program [args...]` and `nvtxpp-capture --convert DIR`.
/// @return the exit status (the program's own; 2 bad usage; 3 a write failed; 127 no program)
int capture_main(int argc, char** argv);

}  // namespace nvtxpp::capture
