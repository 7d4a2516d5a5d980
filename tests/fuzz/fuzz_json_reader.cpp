// libFuzzer target: the reader of our JSON traces (readers/json_reader.hpp), which `diff` runs
// on files a user names. Outcome wanted: the trace delivered, or json_input_error; never a
// crash, a hang or unbounded memory.
#include "../../tools/capture/analyses/summary.hpp"
#include "../../tools/capture/readers/json_reader.hpp"
#include "../../tools/capture/writers/json_writer.hpp"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  static std::string const path = [] {
    char tmpl[] = "/tmp/nvtxpp-fuzz-json-XXXXXX";
    int const fd = ::mkstemp(tmpl);
    if (fd < 0) {
      std::abort();
    }
    ::close(fd);
    return std::string{tmpl};
  }();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    std::abort();
  }
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  nvtxpp::capture::summary_sink summary;
  try {
    (void)nvtxpp::capture::read_json_trace(path, {&summary});
    (void)summary.instances();
  } catch (nvtxpp::capture::json_input_error const&) {
  }
  return 0;
}
