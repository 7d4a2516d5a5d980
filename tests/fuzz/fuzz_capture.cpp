// libFuzzer target: nvtxpp-capture's readers of untrusted bytes. The first input byte picks
// the reader: even - the rest is one thread's raw stream (recording/decode.hpp); odd - the rest
// is a whole process file (nvtxpp-<pid>.bin, NVTX and GPU records) read by the launcher's
// trace_model reader into the JSON and summary sinks.
// Outcome wanted: warnings, never a crash, a hang or unbounded memory.
#include "../../tools/capture/analyses/summary.hpp"
#include "../../tools/capture/readers/raw/raw_reader.hpp"
#include "../../tools/capture/writers/json_writer.hpp"
#include "../../tools/recording/decode/decode.hpp"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void decode_stream(std::uint8_t const* data, std::size_t size) {
  namespace rec = nvtxpp::recording;
  std::vector<rec::stream_piece> pieces{{data, size, 0}};
  rec::name_tables names;
  names.strings.push_back("s1");
  names.domains.push_back("d1");
  std::vector<nvtxpp::testing::event> events;
  std::vector<std::string> warnings;
  rec::decode_thread(pieces, 7, 1, names, rec::clock_map{}, events, warnings);
  rec::finish_events(events, warnings);
}

std::string const& scratch_dir() {
  static std::string const dir = [] {
    char tmpl[] = "/tmp/nvtxpp-fuzz-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) std::abort();
    return std::string{tmpl};
  }();
  return dir;
}

// A file in a directory, read by the launcher's reader with the sinks of its default outputs
// (the JSON trace and the summary, both written to /dev/null).
void read_capture_file(std::uint8_t const* data, std::size_t size) {
  std::string const path = scratch_dir() + "/nvtxpp-1.bin";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size != 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  static std::FILE* const sink = std::fopen("/dev/null", "w");
  nvtxpp::capture::json_sink json{"/dev/null", 0};
  nvtxpp::capture::summary_sink summary;
  nvtxpp::capture::reader reader{scratch_dir()};
  reader.add_sink(json);
  reader.add_sink(summary);
  auto const totals = reader.run();
  summary.print(sink, totals, nvtxpp::capture::summary_options{});
  nvtxpp::capture::summary_options csv;
  csv.csv = true;
  summary.print(sink, totals, csv);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  if (size == 0) return 0;
  if ((data[0] & 1U) == 0) {
    decode_stream(data + 1, size - 1);
  } else {
    read_capture_file(data + 1, size - 1);
  }
  return 0;
}
