// The shared statistics (stats.hpp).

#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nvtxpp::capture::stats {

double median_sorted(std::vector<std::int64_t> const& sorted) noexcept {
  std::size_t const n = sorted.size();
  if (n == 0) {
    return 0;
  }
  return n % 2 == 1
             ? static_cast<double>(sorted[n / 2])
             : (static_cast<double>(sorted[n / 2 - 1]) + static_cast<double>(sorted[n / 2])) / 2.0;
}

double median(std::vector<std::int64_t> values) {
  std::sort(values.begin(), values.end());
  return median_sorted(values);
}

double normal_two_sided_p(double z) noexcept { return std::erfc(std::fabs(z) / std::sqrt(2.0)); }

rank_test mann_whitney(std::vector<std::int64_t> const& a, std::vector<std::int64_t> const& b) {
  rank_test r;
  double const n1 = static_cast<double>(a.size());
  double const n2 = static_cast<double>(b.size());
  if (a.empty() || b.empty()) {
    return r;
  }
  // Walk both sorted samples in value order; each run of equal values gets their mean rank.
  double rank_sum_a = 0;  // sum of a's ranks
  double ties = 0;        // sum of t^3 - t over runs of t equal values
  std::size_t i = 0;
  std::size_t j = 0;
  double next_rank = 1;
  while (i < a.size() || j < b.size()) {
    std::int64_t const v = j == b.size() || (i < a.size() && a[i] <= b[j]) ? a[i] : b[j];
    std::size_t ca = 0;
    std::size_t cb = 0;
    while (i < a.size() && a[i] == v) {
      ++i;
      ++ca;
    }
    while (j < b.size() && b[j] == v) {
      ++j;
      ++cb;
    }
    double const t = static_cast<double>(ca + cb);
    double const mean_rank = next_rank + (t - 1) / 2;
    rank_sum_a += mean_rank * static_cast<double>(ca);
    ties += t * t * t - t;
    next_rank += t;
  }
  double const n = n1 + n2;
  r.u = rank_sum_a - n1 * (n1 + 1) / 2;
  double const mean = n1 * n2 / 2;
  double const var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)));
  if (!(var > 0)) {
    return r;  // every value tied: no evidence of a difference
  }
  double const d = r.u - mean;
  double const corrected = std::max(std::fabs(d) - 0.5, 0.0);
  r.z = std::copysign(corrected / std::sqrt(var), d);
  r.p = normal_two_sided_p(r.z);
  return r;
}

double normal_two_sided_z(double p) noexcept {
  double lo = 0;
  double hi = 40;
  for (int i = 0; i < 200; ++i) {  // p falls as z grows
    double const mid = (lo + hi) / 2;
    (normal_two_sided_p(mid) > p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

namespace {

constexpr std::size_t max_pair_values = 1000;

/// log(v) of at most max_pair_values of `sorted`'s quantiles (all of it when shorter).
std::vector<double> thinned_logs(std::vector<std::int64_t> const& sorted) {
  std::size_t const n = std::min(sorted.size(), max_pair_values);
  double const step = static_cast<double>(sorted.size()) / static_cast<double>(n);
  std::vector<double> out(n);
  for (std::size_t k = 0; k < n; ++k) {
    auto const at = sorted.size() <= max_pair_values
                        ? k
                        : static_cast<std::size_t>((static_cast<double>(k) + 0.5) * step);
    out[k] = std::log(static_cast<double>(std::max<std::int64_t>(sorted[at], 1)));
  }
  return out;
}

}  // namespace

ratio_estimate ratio_interval(std::vector<std::int64_t> const& a,
                              std::vector<std::int64_t> const& b, double level) {
  ratio_estimate r;
  if (a.empty() || b.empty()) {
    return r;
  }
  auto const la = thinned_logs(a);
  auto const lb = thinned_logs(b);
  std::vector<double> d;
  d.reserve(la.size() * lb.size());
  for (double y : lb) {
    for (double x : la) {
      d.push_back(y - x);
    }
  }
  std::size_t const nm = d.size();
  auto at = [&](std::size_t k) {  // the k-th smallest (0-based)
    std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(k), d.end());
    return d[k];
  };
  double const n = static_cast<double>(la.size());
  double const m = static_cast<double>(lb.size());
  double const z = normal_two_sided_z(1 - level);
  double const k = std::floor(n * m / 2 - z * std::sqrt(n * m * (n + m + 1) / 12));
  std::size_t const rank = static_cast<std::size_t>(std::max(k, 1.0));  // 1-based
  double const median = nm % 2 == 1 ? at(nm / 2) : (at(nm / 2 - 1) + at(nm / 2)) / 2;
  r.change = std::expm1(median);
  r.ci.lo = std::expm1(at(rank - 1));
  r.ci.hi = std::expm1(at(nm - rank));
  return r;
}

}  // namespace nvtxpp::capture::stats
