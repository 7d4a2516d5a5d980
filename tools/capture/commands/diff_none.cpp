// `nvtxpp-capture diff` in a build without libsqlite3: refused (its readers include SQLite's).

#include "diff_main.hpp"

#include <cstdio>

namespace nvtxpp::capture {

int diff_main(int, char**) {
  std::fputs(
      "nvtxpp-capture diff: this build has no SQLite support (libsqlite3 was not found when it "
      "was configured)\n",
      stderr);
  return 2;
}

}  // namespace nvtxpp::capture
