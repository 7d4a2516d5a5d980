// The commands that talk to a running flight recorder (control_main.hpp).

#include "control_main.hpp"

#include "../flight/flight_control.hpp"
#include "../flight/flight_watch.hpp"

#include <cstdio>
#include <string>

namespace nvtxpp::capture {

int dump_main(int argc, char** argv) { return cli::control_client("dump", argc, argv); }

/// `stacks PID` asks the launcher; `stacks FILE...` groups ranks' reports.
int stacks_main(int argc, char** argv) {
  if (argc < 1) {
    std::fputs("usage: nvtxpp-capture stacks PID | nvtxpp-capture stacks FILE...\n", stderr);
    return 2;
  }
  std::string const first = argv[0];
  if (argc == 1 && !first.empty() && first.find_first_not_of("0123456789") == std::string::npos) {
    return cli::control_client("stacks", argc, argv);
  }
  bool ok = true;
  std::string const text = group_stacks({argv, argv + argc}, ok);
  std::fputs(text.c_str(), stdout);
  return ok ? 0 : 2;
}

}  // namespace nvtxpp::capture
