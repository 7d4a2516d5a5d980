// nvtxpp-capture's entry point: a short dispatch to its commands. Each command parses its own
// options: capture (the default: run a program, or --convert), merge, diff, dump, stacks and
// top.
//
// Exit status: the command's (capture_main.hpp, merge_main.hpp, diff_main.hpp,
// control_main.hpp, top_main.hpp).

#include "capture_main.hpp"
#include "control_main.hpp"
#include "diff_main.hpp"
#include "merge_main.hpp"
#include "top_main.hpp"

#include <cstring>

int main(int argc, char** argv) {
  namespace cap = nvtxpp::capture;
  if (argc > 1) {
    char const* const command = argv[1];
    if (std::strcmp(command, "merge") == 0) {  // per-rank files onto one timeline
      return cap::merge_main(argc - 1, argv + 1);
    }
    if (std::strcmp(command, "diff") == 0) {  // what changed between two sets of runs
      return cap::diff_main(argc - 1, argv + 1);
    }
    if (std::strcmp(command, "dump") == 0) {  // a flight recorder's window, now
      return cap::dump_main(argc - 2, argv + 2);
    }
    if (std::strcmp(command, "stacks") == 0) {  // where a flight recorder's threads are
      return cap::stacks_main(argc - 2, argv + 2);
    }
    if (std::strcmp(command, "top") == 0) {  // where a flight recorder's program spends its time
      return cap::top_main(argc - 2, argv + 2);
    }
  }
  return cap::capture_main(argc, argv);
}
