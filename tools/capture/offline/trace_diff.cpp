// diff's analysis (trace_diff.hpp).

#include "trace_diff.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace nvtxpp::capture {

char const* to_string(verdict v) noexcept {
  switch (v) {
    case verdict::slower:
      return "slower";
    case verdict::faster:
      return "faster";
    case verdict::added:
      return "new";
    case verdict::gone:
      return "gone";
    case verdict::same:
      break;
  }
  return "same";
}

char const* to_string(summary_sink::item_kind k) noexcept {
  switch (k) {
    case summary_sink::item_kind::projection:
      return "projection";
    case summary_sink::item_kind::kernel:
      return "kernel";
    case summary_sink::item_kind::memory:
      return "memory";
    case summary_sink::item_kind::range:
      break;
  }
  return "range";
}

namespace {

using key = std::tuple<int, std::string, std::string>;

std::vector<std::int64_t> sorted_copy(std::vector<std::int64_t> const* v) {
  std::vector<std::int64_t> s = v != nullptr ? *v : std::vector<std::int64_t>{};
  std::sort(s.begin(), s.end());
  return s;
}

double total_of(std::vector<std::int64_t> const& v) {
  double t = 0;
  for (auto x : v) {
    t += static_cast<double>(x);
  }
  return t;
}

/// The base's instances as they would be with the run-wide shift applied.
std::vector<std::int64_t> scaled(std::vector<std::int64_t> const& a, double shift) {
  std::vector<std::int64_t> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    out[i] = std::llround(static_cast<double>(a[i]) * (1 + shift));
  }
  return out;
}

/// `shift`: the run-wide shift to judge against (0: none).
void judge(diff_row& r, std::vector<std::int64_t> const& a, std::vector<std::int64_t> const& b,
           diff_options const& o, double shift) {
  if (a.empty()) {
    r.v = verdict::added;
    return;
  }
  if (b.empty()) {
    r.v = verdict::gone;
    return;
  }
  double const base = r.base_median * (1 + shift);
  double const delta = r.new_median - base;
  r.change = base > 0 ? delta / base : (delta == 0 ? 0.0 : INFINITY);
  if (a.size() < o.min_instances || b.size() < o.min_instances) {
    r.note = fmt::format("too few instances for a test (< {} on a side)", o.min_instances);
    return;
  }
  r.tested = true;
  std::vector<std::int64_t> shifted;
  if (shift != 0) {
    shifted = scaled(a, shift);
  }
  auto const& a_judged = shift != 0 ? shifted : a;
  r.p = stats::mann_whitney(a_judged, b).p;
  r.ci = stats::ratio_interval(a_judged, b, 1 - o.alpha).ci;
  // The test and the interval that goes with it must agree (they differ only at the edge:
  // ties, the thinning of long samples).
  bool const significant = r.p < o.alpha && (r.ci.lo > 0 || r.ci.hi < 0);
  bool const large =
      std::fabs(r.change) > o.threshold && std::fabs(delta) >= static_cast<double>(o.floor_ns);
  if (significant && large) {
    r.v = r.change > 0 ? verdict::slower : verdict::faster;
  } else if (significant) {
    r.note = "significant, below the threshold";
  } else if (large) {
    r.note = "not significant";
  }
}

/// The run-wide shift of the items with enough instances on both sides (diff_result::shift).
std::pair<double, std::size_t> run_shift(std::vector<diff_row> const& rows, diff_options const& o) {
  std::vector<double> logs;
  for (auto const& r : rows) {
    if (r.base_n >= o.min_instances && r.new_n >= o.min_instances && r.base_median > 0 &&
        r.new_median > 0) {
      logs.push_back(std::log(r.new_median / r.base_median));
    }
  }
  if (logs.size() < 3) {
    return {0.0, logs.size()};
  }
  std::sort(logs.begin(), logs.end());
  std::size_t const n = logs.size();
  double const mid = n % 2 == 1 ? logs[n / 2] : (logs[n / 2 - 1] + logs[n / 2]) / 2;
  return {std::expm1(mid), n};
}

int rank_of(verdict v) {
  switch (v) {
    case verdict::slower:
      return 0;
    case verdict::added:
      return 1;
    case verdict::faster:
      return 2;
    case verdict::gone:
      return 3;
    case verdict::same:
      break;
  }
  return 4;
}

}  // namespace

diff_result compare_sides(diff_side const& base, diff_side const& now,
                          diff_options const& options) {
  std::map<key, std::pair<std::vector<std::int64_t> const*, std::vector<std::int64_t> const*>>
      items;
  for (auto const& i : base.summary.instances()) {
    items[{static_cast<int>(i.kind), i.name, i.style}].first = i.durations;
  }
  for (auto const& i : now.summary.instances()) {
    items[{static_cast<int>(i.kind), i.name, i.style}].second = i.durations;
  }
  diff_result result;
  std::vector<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> samples;
  for (auto const& [k, sides] : items) {
    auto a = sorted_copy(sides.first);
    auto b = sorted_copy(sides.second);
    diff_row r;
    r.kind = static_cast<summary_sink::item_kind>(std::get<0>(k));
    r.name = std::get<1>(k);
    r.style = std::get<2>(k);
    r.base_n = a.size();
    r.new_n = b.size();
    r.base_median = stats::median_sorted(a);
    r.new_median = stats::median_sorted(b);
    r.base_total = total_of(a) / static_cast<double>(std::max<std::size_t>(base.traces, 1));
    r.new_total = total_of(b) / static_cast<double>(std::max<std::size_t>(now.traces, 1));
    result.rows.push_back(std::move(r));
    samples.emplace_back(std::move(a), std::move(b));
  }
  std::tie(result.shift, result.shift_items) = run_shift(result.rows, options);
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    judge(result.rows[i], samples[i].first, samples[i].second, options,
          options.relative ? result.shift : 0.0);
  }
  std::stable_sort(result.rows.begin(), result.rows.end(),
                   [](diff_row const& x, diff_row const& y) {
                     if (rank_of(x.v) != rank_of(y.v)) {
                       return rank_of(x.v) < rank_of(y.v);
                     }
                     return std::fabs(x.impact()) > std::fabs(y.impact());
                   });
  return result;
}

std::vector<diff_row const*> gate_failures(std::vector<diff_row> const& rows, double above,
                                           std::vector<name_pattern> const& gates) {
  std::vector<diff_row const*> out;
  for (auto const& r : rows) {
    if (r.v != verdict::slower || !(r.change > above)) {
      continue;
    }
    bool const ranged =
        r.kind == summary_sink::item_kind::range || r.kind == summary_sink::item_kind::projection;
    std::string const bare = ranged ? r.name.substr(r.name.find(':') + 1) : r.name;
    bool selected = gates.empty();
    for (auto const& g : gates) {
      selected = selected || g.matches(bare) || g.matches(r.name);
    }
    if (selected) {
      out.push_back(&r);
    }
  }
  return out;
}

}  // namespace nvtxpp::capture
