// Throughput and size of nvtxpp-capture's SQLite output
// (tools/capture/writers/sqlite/sqlite_writer.hpp): N push/pop ranges through the row writer, then
// rows/s, bytes per range and peak memory.
//   nvtxpp_sqlite_bench [ranges=10000000] [distinct names=100 | 0: every name distinct] [file]
// Not a test: the figures depend on the machine and its disk.
#include "writers/sqlite/sqlite_writer.hpp"

#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  namespace cap = nvtxpp::capture;
  long long const n = argc > 1 ? std::atoll(argv[1]) : 10'000'000;
  long long const distinct = argc > 2 ? std::atoll(argv[2]) : 100;
  std::string const path = argc > 3 ? argv[3] : "/tmp/nvtxpp_sqlite_bench.sqlite";

  std::vector<std::string> names;
  for (long long i = 0; i < distinct; ++i) {
    names.push_back("range name " + std::to_string(i));
  }
  auto const t0 = std::chrono::steady_clock::now();
  try {
    cap::sqlite_writer w{path};
    cap::nsys_nvtx_row r;
    r.global_tid = cap::nsys_global_tid(4242, 4243);
    r.color = 0xFF00FF00u;
    std::string unique;
    for (long long i = 0; i < n; ++i) {
      if (distinct > 0) {
        r.text = names[static_cast<std::size_t>(i % distinct)];
      } else {
        unique = "iteration " + std::to_string(i);
        r.text = unique;
      }
      r.start = i * 1000;
      r.end = i * 1000 + 500;
      r.category = i % 4 == 0 ? std::optional<std::int64_t>{2} : std::nullopt;
      w.nvtx_event(r);
    }
    w.finish();
  } catch (cap::output_error const& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  struct stat st {};
  stat(path.c_str(), &st);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "ranges %lld  distinct names %lld  time %.2f s  %.2f M rows/s  file %.1f MiB  "
      "%.1f bytes/range  peak RSS %.1f MiB\n",
      n, distinct, s, static_cast<double>(n) / s / 1e6, static_cast<double>(st.st_size) / (1 << 20),
      static_cast<double>(st.st_size) / static_cast<double>(n),
      static_cast<double>(ru.ru_maxrss) / 1024);
  return 0;
}
