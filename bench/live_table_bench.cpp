// What `nvtxpp-capture top`'s table pays per range (tools/capture/analyses/live_table.hpp;
// docs/top.md, "Cost"): top feeds it every range the watched program ends, a million a second
// in the goal of issue 53, so its per-range path is most of top's budget besides the decoding.
//
//   flood      one name on one thread, push/pop at depth 0 (bench/top_cost.py's `tick`)
//   trainer    a numbered step around three inner ranges on one thread (`step N` folds)
//   threads    the flood's name on 8 threads in turn
//   names      256 names in turn (one thread): the caches before the maps miss
//
// Each iteration is one range end, at 1 us intervals, so the slices turn as they do live.
#include "analyses/live_table.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

namespace cap = nvtxpp::capture;

cap::range_info range(std::string const& name, std::uint64_t tid, std::int64_t start,
                      std::int64_t end, int depth) {
  cap::range_info r;
  r.pid = 100;
  r.tid = tid;
  r.end_tid = tid;
  r.start_ns = start;
  r.end_ns = end;
  r.depth = depth;
  r.name = name;
  return r;
}

/// Feeds `names` (each with its thread and depth) in turn, one range end a microsecond.
void feed(benchmark::State& state, std::vector<std::string> const& names,
          std::vector<std::uint64_t> const& tids, std::vector<int> const& depths) {
  cap::live_table table;
  cap::process_info p;
  p.pid = 100;
  p.start_ns = 1'000'000'000;
  table.begin_process(p);
  std::int64_t t = p.start_ns;
  std::size_t i = 0;
  for (auto _ : state) {
    cap::range_info const r = range(names[i], tids[i], t, t + 700, depths[i]);
    table.on_range(r);
    t += 1000;
    i = i + 1 == names.size() ? 0 : i + 1;
    if ((t & ((1 << 30) - 1)) < 1000) {
      benchmark::DoNotOptimize(table.snapshot(t));  // a refresh now and then, as top's
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void flood(benchmark::State& state) { feed(state, {"tick"}, {7}, {0}); }

void trainer(benchmark::State& state) {
  std::vector<std::string> names;
  std::vector<int> depths;
  for (int k = 0; k < 64; ++k) {
    for (char const* inner : {"forward", "backward", "optimizer"}) {
      names.emplace_back(inner);
      depths.push_back(1);
    }
    names.push_back("step " + std::to_string(k));
    depths.push_back(0);
  }
  feed(state, names, std::vector<std::uint64_t>(names.size(), 7), depths);
}

void threads(benchmark::State& state) {
  std::vector<std::uint64_t> tids;
  for (std::uint64_t k = 0; k < 8; ++k) {
    tids.push_back(100 + k);
  }
  feed(state, std::vector<std::string>(8, "tick"), tids, std::vector<int>(8, 0));
}

void names(benchmark::State& state) {
  std::vector<std::string> names;
  for (int k = 0; k < 256; ++k) {
    names.push_back("kernel_" + std::string(1, static_cast<char>('a' + k % 26)) +
                    std::string(1, static_cast<char>('a' + k / 26)));
  }
  feed(state, names, std::vector<std::uint64_t>(names.size(), 7),
       std::vector<int>(names.size(), 0));
}

BENCHMARK(flood);
BENCHMARK(trainer);
BENCHMARK(threads);
BENCHMARK(names);

}  // namespace

BENCHMARK_MAIN();
