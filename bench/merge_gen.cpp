// Inputs for the merge benchmark (bench/merge_bench.sh): FILES SQLite traces in our export
// layout, each one "rank" of RANGES nested push/pop ranges on 4 threads (30 distinct names in two
// domains, durations varying by rank so the cross-rank summary has spread), written with the
// capture's own SQLite writer.
//   nvtxpp_merge_gen DIR [files=64] [ranges=1000000] [first=0]
// (first: the rank of the first file, so that several generators can share the work)
// Not a test.
#include "common/launch_meta.hpp"
#include "writers/sqlite/sqlite_writer.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  namespace cap = nvtxpp::capture;
  if (argc < 2) {
    std::fputs("usage: nvtxpp_merge_gen DIR [files=64] [ranges=1000000] [first=0]\n", stderr);
    return 2;
  }
  std::string const dir = argv[1];
  int const files = argc > 2 ? std::atoi(argv[2]) : 64;
  long long const ranges = argc > 3 ? std::atoll(argv[3]) : 1'000'000;
  int const first = argc > 4 ? std::atoi(argv[4]) : 0;
  std::vector<std::string> names;
  names.reserve(30);
  for (int i = 0; i < 30; ++i) {
    names.push_back((i % 3 == 0 ? "solve step " : "exchange halo ") + std::to_string(i));
  }
  auto const t0 = std::chrono::steady_clock::now();
  try {
    for (int f = first; f < first + files; ++f) {
      std::string const path = dir + "/trace.rank" + std::to_string(f) + ".sqlite";
      cap::sqlite_writer w{path};
      std::uint32_t const pid = 1000 + static_cast<std::uint32_t>(f % 8);  // pids repeat
      w.session_start(1'800'000'000'000'000'000LL + f * 1'000'000LL);
      w.capture_meta(cap::meta_rank, std::to_string(f));
      w.capture_meta(cap::meta_host, "node" + std::to_string(f / 8));
      w.process(pid, "solver");
      for (int d = 1; d <= 2; ++d) {
        cap::nsys_nvtx_row dom;
        dom.type = cap::nsys_event_type::domain_create;
        dom.text = d == 1 ? "solver" : "comm";
        dom.intern_text = false;
        dom.global_tid = cap::nsys_global_tid(pid, pid);
        dom.domain_id = d;
        w.nvtx_event(dom);
      }
      cap::nsys_nvtx_row r;
      r.color = 0xFF3070C0u;
      // Outer ranges of 4 inner ones each; rank f's durations are (1 + f % 5 / 10) times rank
      // 0's: a known imbalance.
      std::int64_t const unit = 1000 + 100 * (f % 5);
      for (long long i = 0; i < ranges; i += 5) {
        std::uint64_t const tid = pid + static_cast<std::uint64_t>(i / 5 % 4);
        std::int64_t const at = (i / 5) * 6 * unit;
        r.global_tid = cap::nsys_global_tid(pid, tid);
        r.domain_id = 1;
        r.text = names[static_cast<std::size_t>(i / 5 % 10) * 3];
        r.start = at;
        r.end = at + 5 * unit;
        w.nvtx_event(r);
        r.domain_id = 2;
        for (long long k = 1; k < 5 && i + k < ranges; ++k) {
          r.text = names[static_cast<std::size_t>((i + k) % 30)];
          r.start = at + (k - 1) * unit + 10;
          r.end = r.start + unit - 20;
          w.nvtx_event(r);
        }
      }
      w.finish();
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "nvtxpp_merge_gen: %s\n", e.what());
    return 1;
  }
  double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("wrote %d file(s) of %lld range(s) in %.1f s\n", files, ranges, s);
  return 0;
}
