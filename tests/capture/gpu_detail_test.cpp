// The sampled GPU mode's pure parts: the periods read back from the edge records
// (tools/capture/model/gpu_detail.hpp) and the wall-clock phase the sampler follows
// (tools/capture/inprocess/cuda/gpu_sampler.cpp, its thread and CUPTI left out).
#include "model/gpu_detail.hpp"
#include "inprocess/cuda/gpu_sampler.hpp"

#include "catch.hpp"

#include <cstdint>

namespace cap = nvtxpp::capture;

TEST_CASE("periods are read from their edges, split at a raise, closed at the end") {
  cap::gpu_detail_periods p;
  CHECK_FALSE(p.sampled());
  CHECK(p.on_info("gpu_sample", "200000000/2000000000"));
  CHECK(p.sampled());
  CHECK(p.on_info("gpu_detail", "on:1000:sample:4000"));
  CHECK(p.on_info("gpu_detail", "off:1200:300"));
  CHECK(p.on_info("gpu_detail", "on:3000:sample:0"));
  CHECK(p.on_info("gpu_detail", "on:3100:raise:0"));   // a raise inside a period: split
  CHECK(p.on_info("cupti", "loaded"));                 // other records: ignored
  CHECK_FALSE(p.on_info("gpu_detail", "sideways:5"));  // malformed: said
  p.close(5000);
  auto const& v = p.periods();
  REQUIRE(v.size() == 3);
  CHECK((v[0].start == 1000 && v[0].end == 1200 && !v[0].raised));
  CHECK((v[1].start == 3000 && v[1].end == 3100 && !v[1].raised));
  CHECK((v[2].start == 3100 && v[2].end == 5000 && v[2].raised));
  CHECK(p.switch_on_ns() == std::vector<std::int64_t>{4000});
  CHECK(p.switch_off_ns() == std::vector<std::int64_t>{300});
  // [start, end): the edge rule's interval.
  CHECK_FALSE(p.contains(999));
  CHECK(p.contains(1000));
  CHECK(p.contains(1199));
  CHECK_FALSE(p.contains(1200));
  CHECK_FALSE(p.contains(2999));
  CHECK(p.contains(3100));
  CHECK(p.contains(4999));
  CHECK_FALSE(p.contains(5000));
}

TEST_CASE("a flight recorder's window keeps the periods inside it, cut to it") {
  cap::gpu_detail_periods p;
  p.on_info("gpu_detail", "on:100:sample:0");
  p.on_info("gpu_detail", "off:200:0");
  p.on_info("gpu_detail", "on:1000:sample:0");
  p.on_info("gpu_detail", "off:1200:0");
  p.on_info("gpu_detail", "on:2000:raise:0");
  p.on_info("gpu_window", "1100:2500");
  p.close(9000);
  auto const w = p.in_window();
  REQUIRE(w.size() == 2);
  CHECK((w[0].start == 1100 && w[0].end == 1200));
  CHECK((w[1].start == 2000 && w[1].end == 2500 && w[1].raised));
  cap::gpu_detail_periods unbounded;
  unbounded.on_info("gpu_detail", "on:100:sample:0");
  unbounded.on_info("gpu_window", "0:0");  // a whole ring, no cut: all of it
  unbounded.close(300);
  REQUIRE(unbounded.in_window().size() == 1);
  CHECK(unbounded.in_window()[0].end == 300);
}

TEST_CASE("periods start on multiples of PERIOD of the wall clock") {
  namespace s = cap::gpu_sampler;
  s::plan const p{200, 2000, 0};
  std::int64_t next = 0;
  // Wall clock = monotonic + 10'000: phase 0 at monotonic 0, 2000, 4000...
  CHECK(s::in_period(p, 0, 10'000, &next));
  CHECK(next == 200);
  CHECK(s::in_period(p, 199, 10'000, &next));
  CHECK(next == 200);
  CHECK_FALSE(s::in_period(p, 200, 10'000, &next));
  CHECK(next == 2000);
  CHECK_FALSE(s::in_period(p, 1999, 10'000, &next));
  CHECK(next == 2000);
  // Another process (another monotonic clock, the same wall clock) samples the same moments.
  CHECK(s::in_period(p, 4000 - 500, 10'500, &next));
  CHECK(next == 3700);
}
