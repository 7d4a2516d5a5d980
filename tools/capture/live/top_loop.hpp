/// @file
/// @brief `nvtxpp-capture top`'s run: attach or launch (top_source.hpp), then refresh every
/// interval: the screen on a terminal (top_screen.hpp), plain tables or JSON objects otherwise
/// (top_text.hpp), one table with --once; the final table when the program ends. Ctrl-C, q,
/// SIGTERM and SIGHUP end it with the terminal given back; its signal handlers only set a flag.
#pragma once

#include "top_text.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace nvtxpp::capture::live {

/// @brief What the command line asked for (commands/top_main.cpp parses it).
struct top_options {
  long pid = 0;                              ///< attach to this process (0: launch)
  std::vector<std::string> capture_options;  ///< launch: the recorder's options
  std::vector<std::string> program;          ///< launch: the program and its arguments
  std::int64_t interval_ns = 1'000'000'000;
  std::int64_t window_ns = 10'000'000'000;
  bool once = false;
  bool json = false;
  bool fold = true;
  /// A launch on the screen: the file the launcher's and the program's output go to ("":
  /// nvtxpp-top.<pid>.log in the current directory).
  std::string log;
  view_options view;
};

/// @brief Runs top. @return the exit status: 0; 2 (no such process, another user's, no recorder
/// records it, a launch that could not start); a launch: the program's (its signal re-raised)
int run_top(top_options const& options);

}  // namespace nvtxpp::capture::live
