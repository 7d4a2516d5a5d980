// make_sqlite_sink for a build without the SQLite writer: `-o FILE.sqlite` is refused before the
// program runs (exit 2), with a message saying why.

#include "sqlite_sink.hpp"

namespace nvtxpp::capture {

std::unique_ptr<trace_sink> make_sqlite_sink(std::string const& path) {
  throw output_error("cannot write trace file '" + path +
                     "': this nvtxpp-capture was built without SQLite output (use a .json file)");
}

bool sqlite_sink_available() noexcept { return false; }

}  // namespace nvtxpp::capture
