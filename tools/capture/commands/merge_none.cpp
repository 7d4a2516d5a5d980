// `nvtxpp-capture merge` in a build without libsqlite3: refused (merge reads SQLite files).

#include "merge_main.hpp"

#include <cstdio>

namespace nvtxpp::capture {

int merge_main(int, char**) {
  std::fputs(
      "nvtxpp-capture merge: this build has no SQLite support (libsqlite3 was not found "
      "when it was configured); merge reads SQLite files\n",
      stderr);
  return 2;
}

}  // namespace nvtxpp::capture
