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

namespace {

/// The regularized incomplete beta function I_x(a, b), by its continued fraction (modified
/// Lentz), on the side of x where the fraction converges fast.
double incomplete_beta(double x, double a, double b) noexcept {
  if (x <= 0) {
    return 0;
  }
  if (x >= 1) {
    return 1;
  }
  if (x > (a + 1) / (a + b + 2)) {
    return 1 - incomplete_beta(1 - x, b, a);
  }
  double const log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  constexpr double tiny = 1e-300;
  double c = 1;
  double d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::fabs(d) < tiny ? tiny : d);
  double f = d;
  for (int m = 1; m <= 400; ++m) {
    double const dm = m;
    // Even step, then odd step of the fraction's terms.
    double num = dm * (b - dm) * x / ((a + 2 * dm - 1) * (a + 2 * dm));
    for (int half = 0; half < 2; ++half) {
      d = 1 + num * d;
      d = 1 / (std::fabs(d) < tiny ? tiny : d);
      c = 1 + num / c;
      c = std::fabs(c) < tiny ? tiny : c;
      f *= c * d;
      num = -(a + dm) * (a + b + dm) * x / ((a + 2 * dm) * (a + 2 * dm + 1));
    }
    if (std::fabs(c * d - 1) < 1e-15) {
      break;
    }
  }
  return std::exp(log_front) * f / a;
}

}  // namespace

double student_two_sided_p(double t, double df) noexcept {
  if (std::isnan(t) || !(df > 0)) {
    return 1;
  }
  if (std::isinf(t)) {
    return 0;
  }
  if (df > 1e7) {
    return normal_two_sided_p(t);
  }
  return incomplete_beta(df / (df + t * t), df / 2, 0.5);
}

double student_two_sided_t(double p, double df) noexcept {
  double lo = 0;
  double hi = 1;
  while (student_two_sided_p(hi, df) > p && hi < 1e12) {
    hi *= 2;
  }
  for (int i = 0; i < 200; ++i) {  // p falls as t grows
    double const mid = (lo + hi) / 2;
    (student_two_sided_p(mid, df) > p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

std::pair<double, double> pooled_variance(std::vector<double> const& a,
                                          std::vector<double> const& b) {
  double ss = 0;
  for (auto const* v : {&a, &b}) {
    if (v->empty()) {
      continue;
    }
    auto const [lo, hi] = std::minmax_element(v->begin(), v->end());
    if (*lo == *hi) {
      continue;  // constant: exactly no spread (the mean's rounding would invent some)
    }
    double mean = 0;
    for (double x : *v) {
      mean += x / static_cast<double>(v->size());
    }
    for (double x : *v) {
      ss += (x - mean) * (x - mean);
    }
  }
  double const df = static_cast<double>(a.size() + b.size()) - 2;
  return {df > 0 ? ss / df : 0.0, std::max(df, 0.0)};
}

mean_difference two_sample_t(std::vector<double> const& a, std::vector<double> const& b,
                             double level) {
  mean_difference r;
  if (a.size() < 2 || b.size() < 2) {
    return r;
  }
  auto mean_of = [](std::vector<double> const& v) {
    auto const [lo, hi] = std::minmax_element(v.begin(), v.end());
    if (*lo == *hi) {
      return *lo;
    }
    double m = 0;
    for (double x : v) {
      m += x / static_cast<double>(v.size());
    }
    return m;
  };
  r.diff = mean_of(b) - mean_of(a);
  auto const [var, d] = pooled_variance(a, b);
  r.df = d;
  r.se =
      std::sqrt(var * (1.0 / static_cast<double>(a.size()) + 1.0 / static_cast<double>(b.size())));
  if (!(r.se > 0)) {
    r.se = 0;
    r.p = r.diff == 0 ? 1.0 : 0.0;
    r.ci = {r.diff, r.diff};
    return r;
  }
  r.p = student_two_sided_p(r.diff / r.se, r.df);
  double const t = student_two_sided_t(1 - level, r.df);
  r.ci = {r.diff - t * r.se, r.diff + t * r.se};
  return r;
}

std::vector<double> benjamini_hochberg(std::vector<double> const& p) {
  std::size_t const m = p.size();
  std::vector<std::size_t> order(m);
  for (std::size_t i = 0; i < m; ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return p[x] < p[y]; });
  std::vector<double> q(m, 1.0);
  double running = 1;
  for (std::size_t k = m; k-- > 0;) {  // from the largest p down: q is the running minimum
    double const v = p[order[k]] * static_cast<double>(m) / static_cast<double>(k + 1);
    running = std::min(running, v);
    q[order[k]] = std::min(running, 1.0);
  }
  return q;
}

log_histogram::log_histogram(log_histogram const& o) : bins_{o.bins_}, adds_{o.adds_} {
  if (o.dense_) {
    dense_ = std::make_unique<dense>(*o.dense_);
  }
}

log_histogram& log_histogram::operator=(log_histogram const& o) {
  if (this != &o) {
    log_histogram copy{o};
    *this = std::move(copy);
  }
  return *this;
}

void log_histogram::add_listed(std::uint16_t b, std::int64_t value) {
  auto const it = std::lower_bound(bins_.begin(), bins_.end(), b,
                                   [](bin const& x, std::uint16_t v) { return x.bucket < v; });
  if (it != bins_.end() && it->bucket == b) {
    ++it->count;
    it->sum += value;
  } else {
    bins_.insert(it, {b, 1, value});
  }
  if (!dense_ && ++adds_ >= dense_after) {
    make_dense();
  }
}

void log_histogram::make_dense() {
  // Centred on the median bucket so far.
  std::uint64_t total = 0;
  for (auto const& x : bins_) {
    total += x.count;
  }
  std::uint16_t median = bins_.empty() ? 0 : bins_.back().bucket;
  std::uint64_t seen = 0;
  for (auto const& x : bins_) {
    seen += x.count;
    if (2 * seen >= total) {
      median = x.bucket;
      break;
    }
  }
  dense_ = std::make_unique<dense>();
  dense_->base =
      static_cast<std::uint16_t>(median > dense_buckets / 2 ? median - dense_buckets / 2 : 0);
  std::vector<bin> rest;
  for (auto const& x : bins_) {
    auto const i = static_cast<unsigned>(x.bucket - dense_->base);
    if (i < dense_buckets) {
      dense_->count[i] += static_cast<std::uint32_t>(x.count);
      dense_->sum[i] += x.sum;
    } else {
      rest.push_back(x);
    }
  }
  bins_ = std::move(rest);
}

std::vector<log_histogram::bin> log_histogram::sorted() const {
  if (!dense_) {
    return bins_;
  }
  std::vector<bin> out;
  auto it = bins_.begin();
  for (unsigned i = 0; i < dense_buckets; ++i) {
    if (dense_->count[i] == 0) {
      continue;
    }
    auto const b = static_cast<std::uint16_t>(dense_->base + i);
    for (; it != bins_.end() && it->bucket < b; ++it) {
      out.push_back(*it);
    }
    out.push_back({b, dense_->count[i], dense_->sum[i]});
  }
  out.insert(out.end(), it, bins_.end());
  return out;
}

void log_histogram::merge(log_histogram const& o) {
  std::vector<bin> const theirs = o.sorted();
  if (theirs.empty()) {
    return;
  }
  std::vector<bin> const mine = sorted();
  std::vector<bin> out;
  out.reserve(mine.size() + theirs.size());
  auto a = mine.begin();
  auto b = theirs.begin();
  while (a != mine.end() || b != theirs.end()) {
    if (b == theirs.end() || (a != mine.end() && a->bucket < b->bucket)) {
      out.push_back(*a++);
    } else if (a == mine.end() || b->bucket < a->bucket) {
      out.push_back(*b++);
    } else {
      out.push_back({a->bucket, a->count + b->count, a->sum + b->sum});
      ++a;
      ++b;
    }
  }
  bins_ = std::move(out);
  dense_.reset();
}

double log_histogram::quantile(double p) const {
  std::vector<bin> const all = sorted();
  std::uint64_t total = 0;
  for (auto const& x : all) {
    total += x.count;
  }
  if (total == 0) {
    return 0;
  }
  auto const rank = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(p * static_cast<double>(total))));
  std::uint64_t seen = 0;
  for (auto const& x : all) {
    seen += x.count;
    if (seen >= rank) {
      return static_cast<double>(x.sum) / static_cast<double>(x.count);
    }
  }
  return static_cast<double>(all.back().sum) / static_cast<double>(all.back().count);
}

}  // namespace nvtxpp::capture::stats
