// merge's JSON inputs (merge_json.hpp).

#include "merge_json.hpp"

#include "../readers/json_reader.hpp"
#include "../writers/sqlite/sqlite_writer.hpp"

#include <memory>

namespace nvtxpp::capture {

merge_input inspect_json_input(std::string const& path, std::string const& db_path,
                               std::size_t order) {
  {
    std::unique_ptr<json_trace> trace;
    try {
      trace = std::make_unique<json_trace>(path);
    } catch (json_input_error const& e) {
      throw input_error(e.what());
    }
    json_trace_origin const& origin = trace->origin();
    if (!origin.has_utc) {
      // Without it the trace cannot share a clock with the others (its ts are monotonic-clock
      // times of one boot of one host).
      throw input_error(path +
                        ": records no wall-clock time (no otherData.base_utc_ns: written by an "
                        "nvtxpp-capture from before merge read JSON); record it again, or "
                        "--convert its kept raw recording");
    }
    // Times stay ns since ts 0, which is base_utc_ns: the file's own clock, as merge expects of
    // an input.
    auto sink = make_sqlite_sink_at(db_path, sqlite_writer::options{}, 0, origin.base_utc_ns,
                                    origin.launch);
    trace->deliver({sink.get()});
    sink->finish();
  }
  merge_input in = inspect_input(db_path, order);
  in.path = path;
  return in;
}

}  // namespace nvtxpp::capture
