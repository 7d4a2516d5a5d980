// The shared statistics (tools/capture/analyses/stats.hpp): medians, the Mann-Whitney U test
// against values worked out by hand (pair counting, the tie-corrected variance), and the ratio
// interval that goes with it (hand-worked ranks, doublings, preempted instances).
#include "analyses/stats.hpp"

#include "catch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace st = nvtxpp::capture::stats;
using values = std::vector<std::int64_t>;

TEST_CASE("medians: the middle value, or the mean of the middle two") {
  CHECK(st::median_sorted({}) == 0.0);
  CHECK(st::median_sorted({7}) == 7.0);
  CHECK(st::median_sorted({1, 2, 10}) == 2.0);
  CHECK(st::median_sorted({1, 2, 4, 10}) == 3.0);
  CHECK(st::median({10, 1, 4, 2}) == 3.0);
}

TEST_CASE("U test: two samples that do not overlap") {
  // U = 0 (no a above any b); mean 12.5; variance 25 * 11 / 12; z = (0 - 12.5 + 0.5) / sd.
  auto const r = st::mann_whitney({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  CHECK(r.u == 0.0);
  CHECK(r.z == Approx(-2.5067182457620487).epsilon(1e-12));
  CHECK(r.p == Approx(0.012185780355344818).epsilon(1e-9));
  // Swapped: U is n1 n2 = 25, the same p.
  auto const s = st::mann_whitney({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  CHECK(s.u == 25.0);
  CHECK(s.p == Approx(r.p).epsilon(1e-12));
}

TEST_CASE("U test: ties count one half, and shrink the variance") {
  // Pairs a > b: 11 with ties as halves; tie groups {2 x3, 3 x3, 9 x2} in the variance.
  auto const r = st::mann_whitney({1, 2, 2, 3, 5, 8}, {2, 3, 3, 4, 9, 9, 10});
  CHECK(r.u == 11.0);
  CHECK(r.z == Approx(-1.3742384025789471).epsilon(1e-12));
  CHECK(r.p == Approx(0.16936768223501364).epsilon(1e-9));
}

TEST_CASE("U test: identical samples give no evidence") {
  values const a{5, 5, 5, 5, 5};
  CHECK(st::mann_whitney(a, a).p == 1.0);
  values const b{1, 2, 3, 4, 5, 6, 7};
  CHECK(st::mann_whitney(b, b).p == Approx(1.0));
  CHECK(st::normal_two_sided_p(1.959963984540054) == Approx(0.05).epsilon(1e-9));
}

TEST_CASE("ratio interval: worked by hand for five against five") {
  // Ratios b_j / a_i of {100..500} against itself, sorted: 1/5, 1/4, 1/3, 2/5, ... At 95%:
  // K = floor(12.5 - 1.96 * sqrt(25 * 11 / 12)) = 3, so the 3rd smallest and 3rd largest.
  values const a{100, 200, 300, 400, 500};
  auto const r = st::ratio_interval(a, a, 0.95);
  CHECK(r.change == Approx(0.0).margin(1e-12));
  CHECK(r.ci.lo == Approx(1.0 / 3 - 1).epsilon(1e-12));
  CHECK(r.ci.hi == Approx(3.0 - 1).epsilon(1e-12));
  CHECK(st::normal_two_sided_z(0.05) == Approx(1.959963984540054).epsilon(1e-9));
}

TEST_CASE("ratio interval: a doubling, and no change") {
  values a;
  for (int i = 1; i <= 50; ++i) {
    a.push_back(1000 + 7 * i);
  }
  values b;
  for (auto v : a) {
    b.push_back(2 * v);
  }
  auto const r = st::ratio_interval(a, b, 0.99);
  CHECK(r.change == Approx(1.0).epsilon(1e-9));  // every log ratio is log 2 + a symmetric part
  CHECK(r.ci.lo <= 1.0);
  CHECK(r.ci.hi >= 1.0);
  CHECK(r.ci.lo > 0.9);
  auto const same = st::ratio_interval(a, a, 0.99);
  CHECK(same.ci.lo < 0.0);
  CHECK(same.ci.hi > 0.0);
  CHECK(same.ci.hi - same.ci.lo < 0.15);  // values spread over 1007..1350
}

TEST_CASE("ratio interval: preempted instances on both sides move it little") {
  // A quarter of each side preempted (8 ms instead of about 1.2 ms), the rest 50% slower in b:
  // the interval excludes no change, as the U test does.
  values a;
  values b;
  for (int i = 0; i < 30; ++i) {
    bool const preempted = i % 4 == 0;
    a.push_back(preempted ? 8'000'000 + 1000 * i : 1'200'000 + 10 * i);
    b.push_back(preempted ? 9'000'000 + 1000 * i : 1'800'000 + 10 * i);
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  auto const r = st::ratio_interval(a, b, 0.99);
  CHECK(r.ci.lo > 0.2);
  CHECK(st::mann_whitney(a, b).p < 0.01);
}

TEST_CASE("ratio interval: long samples are thinned, zeros count as 1 ns") {
  values a(100000);
  values b(100000);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<std::int64_t>(1000 + i % 1000);
    b[i] = static_cast<std::int64_t>(2 * (1000 + i % 1000));
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  auto const r = st::ratio_interval(a, b, 0.99);
  CHECK(r.change == Approx(1.0).epsilon(1e-6));
  CHECK(r.ci.lo > 0.9);
  CHECK(r.ci.hi < 1.1);
  values const zeros{0, 0, 0, 0, 0};
  auto const z = st::ratio_interval(zeros, zeros, 0.99);
  CHECK(z.change == 0.0);
  CHECK(z.ci.lo == 0.0);
  CHECK(z.ci.hi == 0.0);
}

TEST_CASE("Student's t: p-values and quantiles against tabled values") {
  // Two-sided: t = 2.0 at 5 df is 0.1019 (tables); 1 df is Cauchy: P(|T| >= 1) = 1/2; 2 df has
  // the closed form 1 - t / sqrt(2 + t^2).
  CHECK(st::student_two_sided_p(2.0, 5) == Approx(0.10193947).epsilon(1e-7));
  CHECK(st::student_two_sided_p(1.0, 1) == Approx(0.5).epsilon(1e-12));
  CHECK(st::student_two_sided_p(0.5, 2) == Approx(1 - 0.5 / std::sqrt(2.25)).epsilon(1e-12));
  CHECK(st::student_two_sided_p(-0.5, 2) == st::student_two_sided_p(0.5, 2));
  CHECK(st::student_two_sided_p(0.0, 7) == Approx(1.0));
  // Critical values of the tables: 2.776 (4 df, 95%), 3.355 (8 df, 99%), 1.960 (normal).
  CHECK(st::student_two_sided_t(0.05, 4) == Approx(2.7764451).epsilon(1e-7));
  CHECK(st::student_two_sided_t(0.01, 8) == Approx(3.3553873).epsilon(1e-7));
  CHECK(st::student_two_sided_t(0.05, 1e9) == Approx(1.9599640).epsilon(1e-7));
}

TEST_CASE("two-sample t over runs: the estimate inside its interval, constant sides exact") {
  // a = {1, 2, 3}, b = {4, 5, 6}: diff 3, pooled variance 1, se sqrt(2/3), 4 df.
  auto const r = st::two_sample_t({1, 2, 3}, {4, 5, 6}, 0.95);
  CHECK(r.diff == Approx(3.0));
  CHECK(r.se == Approx(std::sqrt(2.0 / 3)));
  CHECK(r.df == 4.0);
  CHECK(r.p == Approx(st::student_two_sided_p(3.0 / std::sqrt(2.0 / 3), 4)));
  CHECK(r.ci.lo == Approx(3.0 - 2.7764451 * std::sqrt(2.0 / 3)).epsilon(1e-6));
  CHECK(r.ci.lo < r.diff);
  CHECK(r.diff < r.ci.hi);
  // Constant on both sides: no spread at all, the difference is certain (or nothing).
  auto const c = st::two_sample_t({5, 5, 5}, {6, 6, 6}, 0.99);
  CHECK(c.se == 0.0);
  CHECK(c.p == 0.0);
  CHECK(st::two_sample_t({5, 5, 5}, {5, 5, 5}, 0.99).p == 1.0);
  // Fewer than two values on a side: no test.
  CHECK(st::two_sample_t({5}, {6, 7}, 0.99).df == 0.0);
}

TEST_CASE("Benjamini-Hochberg: adjusted p-values, worked by hand") {
  // Sorted p: .005 .01 .03 .04 .5 (m = 5): p m / rank = .025 .025 .05 .05 .5, then the running
  // minimum from the top; returned in the input's order.
  auto const q = st::benjamini_hochberg({0.01, 0.04, 0.03, 0.005, 0.5});
  REQUIRE(q.size() == 5);
  CHECK(q[0] == Approx(0.025));
  CHECK(q[1] == Approx(0.05));
  CHECK(q[2] == Approx(0.05));
  CHECK(q[3] == Approx(0.025));
  CHECK(q[4] == Approx(0.5));
  // The running minimum: a larger p never gets a smaller q.
  auto const r = st::benjamini_hochberg({0.04, 0.041});
  CHECK(r[0] == Approx(0.041));
  CHECK(r[1] == Approx(0.041));
  CHECK(st::benjamini_hochberg({}).empty());
}
