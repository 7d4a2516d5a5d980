// `nvtxpp-capture top`'s table on its own (tools/capture/analyses/live_table.hpp): ranges of a
// known split fed as the flight recorder's watcher delivers them, and the rows read back: shares,
// self time, calls, quantiles, trends, open ranges, threads, GPU work in either order, the bound
// on names. No terminal, no clock, no files (ctest name capture.top_table).

#include "analyses/live_table.hpp"
#include "analyses/stats.hpp"

#include "catch.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cap = nvtxpp::capture;

namespace {

constexpr std::int64_t ms = 1'000'000;
constexpr std::int64_t s = 1'000'000'000;

/// Feeds push/pop ranges of one thread as the watcher does: each at its end, with its depth.
struct feeder {
  cap::live_table& table;
  std::uint32_t pid = 100;
  std::uint64_t tid = 100;

  void range(std::string const& name, std::int64_t start, std::int64_t end, int depth,
             std::string const& domain = "", std::uint32_t domain_index = 0) const {
    cap::range_info r;
    r.pid = pid;
    r.tid = tid;
    r.end_tid = tid;
    r.start_ns = start;
    r.end_ns = end;
    r.depth = depth;
    r.name = name;
    r.attr.domain = domain_index;
    r.attr.domain_name = domain;
    table.on_range(r);
  }

  /// Step `i` at `t`: "step i" around A (6 ms), B (3 ms), C (1 ms). @return its end
  std::int64_t step(int i, std::int64_t t, std::int64_t a = 6 * ms) const {
    std::int64_t const a_end = t + a;
    range("A", t, a_end, 1);
    range("B", a_end, a_end + 3 * ms, 1);
    range("C", a_end + 3 * ms, a_end + 4 * ms, 1);
    range("step " + std::to_string(i), t, a_end + 4 * ms, 0);
    return a_end + 4 * ms;
  }
};

cap::live_row const* find(cap::live_snapshot const& snap, std::string const& name) {
  for (auto const& r : snap.rows) {
    if (r.name == name) {
      return &r;
    }
  }
  return nullptr;
}

void begin(cap::live_table& t, std::uint32_t pid, std::int64_t start) {
  cap::process_info p;
  p.pid = pid;
  p.start_ns = start;
  p.command = "./app";
  t.begin_process(p);
}

}  // namespace

TEST_CASE("a known split reads back: total, self, calls, quantiles, folding", "[top]") {
  cap::live_table table;
  feeder f{table};
  begin(table, 100, 100 * s);
  std::int64_t t = 100 * s;
  int i = 0;
  while (t < 130 * s) {
    t = f.step(++i, t);
  }
  auto const snap = table.snapshot(t);
  REQUIRE(snap.seconds == Approx(10).margin(1));
  auto const* a = find(snap, "A");
  auto const* b = find(snap, "B");
  auto const* c = find(snap, "C");
  auto const* step = find(snap, "step *");
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  REQUIRE(c != nullptr);
  REQUIRE(step != nullptr);  // numbered names folded into one row
  CHECK(find(snap, "step 7") == nullptr);
  CHECK(a->total_pct == Approx(60).margin(0.7));
  CHECK(b->total_pct == Approx(30).margin(0.7));
  CHECK(c->total_pct == Approx(10).margin(0.7));
  CHECK(step->total_pct == Approx(100).margin(1));
  CHECK(step->self_pct < 0.5);  // all of a step's time is in A, B and C
  CHECK(a->self_pct == Approx(a->total_pct));
  CHECK(a->calls_per_s == Approx(100).margin(2));
  CHECK(a->mean_ns == Approx(6 * ms));
  CHECK(a->p50_ns == Approx(6 * ms));
  CHECK(a->p99_ns == Approx(6 * ms));
  CHECK(step->p50_ns == Approx(10 * ms));
  CHECK(snap.ranges_per_s == Approx(400).margin(8));
  CHECK(snap.previous);
  CHECK(a->trend == Approx(0).margin(1e-9));
  CHECK(a->threads == 1);
  CHECK(a->thread == "100");
  CHECK(snap.rows.front().name == "step *");  // by total
  CHECK(snap.gpu_state == "off");
}

TEST_CASE("the window slides: old slices leave, trends compare with the window before", "[top]") {
  cap::live_table table;
  feeder f{table};
  begin(table, 100, 0);
  std::int64_t t = 1 * s;
  int i = 0;
  while (t < 11 * s) {
    t = f.step(++i, t);
  }
  while (t < 21 * s) {
    t = f.step(++i, t, 12 * ms);  // A twice as long
  }
  auto const snap = table.snapshot(t);
  auto const* a = find(snap, "A");
  REQUIRE(a != nullptr);
  CHECK(a->mean_ns == Approx(12 * ms).epsilon(0.01));
  CHECK(a->trend == Approx(1.0).margin(0.05));
  // Nothing for 30 s: the rows are gone.
  auto const later = table.snapshot(t + 30 * s);
  CHECK(later.rows.empty());
  CHECK(later.ranges == 0);
}

TEST_CASE("the first seconds: shares of the time covered, no trend yet", "[top]") {
  cap::live_table table;
  feeder f{table};
  begin(table, 100, 50 * s);
  std::int64_t t = 50 * s;
  int i = 0;
  while (t < 52 * s) {
    t = f.step(++i, t);
  }
  auto const snap = table.snapshot(t);
  CHECK(snap.seconds == Approx(2).margin(0.02));
  CHECK_FALSE(snap.previous);
  auto const* a = find(snap, "A");
  REQUIRE(a != nullptr);
  CHECK(a->total_pct == Approx(60).margin(0.7));
  CHECK(std::isnan(a->trend));
}

TEST_CASE("open ranges count up to now, their children taken out of their self time", "[top]") {
  cap::live_table table;
  feeder f{table};
  begin(table, 100, 0);
  // "train" open since 1 s; steps inside it (depth 1 and 2 here).
  std::int64_t t = 1 * s;
  for (int i = 1; t < 6 * s; ++i) {
    std::int64_t const a_end = t + 6 * ms;
    f.range("A", t, a_end, 2);
    f.range("step " + std::to_string(i), t, a_end + 4 * ms, 1);
    t = a_end + 4 * ms;
  }
  cap::range_info train;
  train.pid = 100;
  train.tid = 100;
  train.start_ns = 1 * s;
  train.end_ns = t;
  train.depth = 0;
  train.name = "train";
  train.unterminated = true;
  table.add_open(train);
  auto const snap = table.snapshot(t);
  auto const* tr = find(snap, "train");
  REQUIRE(tr != nullptr);
  CHECK(tr->open);
  CHECK(tr->calls == 0);
  CHECK(tr->total_pct == Approx(100).margin(0.5));
  CHECK(tr->self_pct < 1);
  // The next snapshot has forgotten it (the watcher gives the open ranges each time).
  auto const next = table.snapshot(t);
  CHECK(find(next, "train") == nullptr);
}

TEST_CASE("threads: one row per name summed over threads, or a row per thread", "[top]") {
  cap::live_table table;
  begin(table, 100, 0);
  feeder f1{table, 100, 101};
  feeder f2{table, 100, 102};
  cap::thread_info named{100, 101, "worker 0", true};
  table.on_thread(named);
  for (std::int64_t t = 1 * s; t < 5 * s; t += 10 * ms) {
    f1.range("work", t, t + 10 * ms, 0);
    f2.range("work", t, t + 5 * ms, 0);
  }
  auto const all = table.snapshot(5 * s);
  auto const* w = find(all, "work");
  REQUIRE(w != nullptr);
  CHECK(w->threads == 2);
  CHECK(w->thread == "2 threads");
  CHECK(w->total_pct == Approx(150).margin(1));  // summed over threads
  auto const each = table.snapshot(5 * s, true);
  REQUIRE(each.rows.size() == 2);
  CHECK(each.rows[0].thread == "worker 0");
  CHECK(each.rows[0].total_pct == Approx(100).margin(1));
  CHECK(each.rows[1].thread == "102");
  CHECK(each.rows[1].total_pct == Approx(50).margin(1));
}

TEST_CASE("domains apart: the same name in two domains is two rows", "[top]") {
  cap::live_table table;
  begin(table, 100, 0);
  feeder f{table};
  f.range("op", 1 * s, 2 * s, 0, "torch", 1);
  f.range("op", 2 * s, 3 * s, 0);
  auto const snap = table.snapshot(3 * s);
  REQUIRE(snap.rows.size() == 2);
  CHECK(((snap.rows[0].domain == "torch") != (snap.rows[1].domain == "torch")));
}

TEST_CASE("many distinct names: bounded, the rest counted as (other)", "[top]") {
  cap::live_options o;
  o.max_cells = 50;
  cap::live_table table{o};
  begin(table, 100, 0);
  feeder f{table};
  std::int64_t t = 1 * s;
  std::int64_t total = 0;
  for (int i = 0; i < 2000; ++i) {
    // Names without digits: nothing to fold.
    std::string name = "n";
    for (int k = i; k > 0; k /= 26) {
      name += static_cast<char>('a' + k % 26);
    }
    f.range(name, t, t + 1 * ms, 0);
    t += 1 * ms;
    total += 1 * ms;
  }
  auto const snap = table.snapshot(t);
  CHECK(snap.rows.size() <= 50 * 4);
  auto const* other = find(snap, "(other)");
  REQUIRE(other != nullptr);
  CHECK(other->other);
  std::int64_t sum = 0;
  for (auto const& r : snap.rows) {
    sum += r.total_ns;
  }
  CHECK(sum == total);  // nothing lost, only lumped
}

TEST_CASE("GPU work under the ranges around its launching call, in either order", "[top]") {
  cap::live_table table;
  begin(table, 100, 0);
  cap::gpu_info loaded{100, "cupti", "loaded"};
  table.on_gpu_info(loaded);
  feeder f{table};
  auto api = [&](std::uint32_t corr, std::int64_t at) {
    cap::api_info a;
    a.pid = 100;
    a.raw.start = at;
    a.raw.end = at + 1000;
    a.raw.correlation = corr;
    a.raw.tid = 100;
    table.on_api(a);
  };
  auto kernel = [&](std::uint32_t corr, std::int64_t start, std::int64_t end) {
    cap::kernel_info k;
    k.pid = 100;
    k.raw.start = start;
    k.raw.end = end;
    k.raw.correlation = corr;
    table.on_kernel(k);
  };
  // 1: the GPU records first (the trace model's order), then the ranges.
  api(1, 1 * s + 1 * ms);
  kernel(1, 1 * s + 2 * ms, 1 * s + 4 * ms);
  f.range("forward", 1 * s, 1 * s + 5 * ms, 1);
  f.range("step 1", 1 * s, 1 * s + 10 * ms, 0);
  // 2: the ranges first (live: CUPTI hands its records over later), the kernel before its call.
  f.range("forward", 2 * s, 2 * s + 5 * ms, 1);
  f.range("step 2", 2 * s, 2 * s + 10 * ms, 0);
  kernel(2, 2 * s + 2 * ms, 2 * s + 5 * ms);
  api(2, 2 * s + 1 * ms);
  auto const snap = table.snapshot(3 * s);
  auto const* fw = find(snap, "forward");
  auto const* st = find(snap, "step *");
  REQUIRE(fw != nullptr);
  REQUIRE(st != nullptr);
  CHECK(fw->gpu_ns == 5 * ms);
  CHECK(st->gpu_ns == 5 * ms);  // inclusive: under every range open at the call
  CHECK(snap.gpu_ops == 2);
  CHECK(snap.gpu_ns == 5 * ms);
  CHECK(snap.gpu_state == "full");
}

TEST_CASE("sampled GPU detail: the state and the share of the window its periods cover", "[top]") {
  cap::live_table table;
  begin(table, 100, 0);
  feeder f{table};
  table.on_gpu_info({100, "gpu_sample", "200000000/2000000000"});
  for (std::int64_t p = 0; p < 10; ++p) {
    std::string const on = "on:" + std::to_string(p * 2 * s) + ":sample:1000";
    std::string const off = "off:" + std::to_string(p * 2 * s + 200 * ms) + ":1000";
    table.on_gpu_info({100, "gpu_detail", on});
    table.on_gpu_info({100, "gpu_detail", off});
  }
  f.range("x", 0, 20 * s, 0);
  auto const snap = table.snapshot(20 * s);
  CHECK(snap.gpu_state == "sampled");
  CHECK(snap.gpu_covered == Approx(0.1).margin(0.01));
  table.on_gpu_info({100, "gpu_detail", "on:" + std::to_string(20 * s) + ":raise:1000"});
  CHECK(table.snapshot(21 * s).gpu_state == "raised");
}

TEST_CASE("the durations' histogram: quantiles within 3%, exact for equal values", "[top]") {
  namespace stats = nvtxpp::capture::stats;
  stats::log_histogram h;  // 100,000 values: counted in place after the first 64
  for (std::int64_t i = 1; i <= 100000; ++i) {
    h.add(i * 1000);
  }
  CHECK(h.quantile(0.5) == Approx(50'000'000).epsilon(0.03));
  CHECK(h.quantile(0.99) == Approx(99'000'000).epsilon(0.03));
  stats::log_histogram few;
  for (int i = 0; i < 3; ++i) {
    few.add(5);
  }
  CHECK(few.quantile(0.99) == 5);
  // Merged: as if counted together (a row summed over slices).
  stats::log_histogram a;
  stats::log_histogram b;
  for (std::int64_t i = 0; i < 1000; ++i) {
    a.add(6'000'000);
    b.add(i < 990 ? 1'000 : 50'000'000);
  }
  a.merge(b);
  CHECK(a.quantile(0.25) == Approx(1'000));
  CHECK(a.quantile(0.5) == Approx(6'000'000));
  CHECK(a.quantile(1.0) == Approx(50'000'000));
  CHECK(stats::log_histogram{}.quantile(0.5) == 0);
}

TEST_CASE("the recent pairs never mix names or threads up, whatever the stream", "[top]") {
  // The table finds a range's row, thread and cell by the name's length and first and last 8
  // bytes, in a cache of 256 pairs: names alike there (the same ends, a different middle),
  // short names, more pairs than the cache holds, slices turning under the cached cells. A
  // random stream's rows must be its sums, counted here.
  std::vector<std::string> names{"a", "ab", "ba", "abc", "acb", "tick", "tock", "forward"};
  for (char c = 'A'; c <= 'Z'; ++c) {
    names.push_back(std::string{"abcdefgh-middle"} + c + "-ijklmnop");  // alike but the middle
  }
  for (int k = 0; k < 40; ++k) {
    names.push_back("step " + std::to_string(k));  // folded: one row
  }
  std::vector<std::uint64_t> tids;
  for (std::uint64_t k = 0; k < 300; ++k) {
    tids.push_back(1000 + 7 * k);  // more threads than the cache has pairs
  }
  cap::live_table table;
  begin(table, 100, 100 * s);
  std::map<std::string, std::pair<std::uint64_t, std::int64_t>> want;  // row -> calls, total
  std::map<std::pair<std::string, std::uint64_t>, std::uint64_t> want_by_thread;
  std::uint64_t x = 88172645463325252ULL;
  auto next = [&x] {
    x ^= x << 13U;
    x ^= x >> 7U;
    x ^= x << 17U;
    return x;
  };
  std::int64_t t = 100 * s;
  std::int64_t refreshed = t;
  while (t < 108 * s) {
    // Bursts of one pair (as programs repeat a few), then another.
    std::string const& name = names[next() % names.size()];
    std::uint64_t const tid = tids[next() % (next() % 4 == 0 ? tids.size() : 8)];
    for (std::uint64_t n = 1 + next() % 40; n > 0; --n) {
      std::int64_t const dur = 100 + static_cast<std::int64_t>(next() % 5000);
      feeder{table, 100, tid}.range(name, t, t + dur, 0);
      std::string const row = name.rfind("step ", 0) == 0 ? "step *" : name;
      ++want[row].first;
      want[row].second += dur;
      ++want_by_thread[{row, tid}];
      t += dur + static_cast<std::int64_t>(next() % 2000);
    }
    if (t - refreshed > 700 * ms) {
      (void)table.snapshot(t);  // a refresh turns the slices under the cached cells
      refreshed = t;
    }
  }
  auto const snap = table.snapshot(t);  // the window holds all of it
  REQUIRE(snap.start_ns == 100 * s);
  std::uint64_t calls = 0;
  for (auto const& r : snap.rows) {
    INFO(r.name);
    REQUIRE(want.count(r.name) == 1);
    CHECK(r.calls == want[r.name].first);
    CHECK(r.total_ns == want[r.name].second);
    CHECK(r.self_ns == want[r.name].second);
    calls += r.calls;
  }
  CHECK(snap.rows.size() == want.size());
  CHECK(calls == snap.ranges);
  auto const by_thread = table.snapshot(t, true);
  CHECK(by_thread.rows.size() == want_by_thread.size());
  for (auto const& r : by_thread.rows) {
    INFO(r.name << " on " << r.tid);
    CHECK(r.calls == want_by_thread[{r.name, r.tid}]);
  }
}
