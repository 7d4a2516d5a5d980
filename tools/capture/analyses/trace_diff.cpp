// diff's analysis (trace_diff.hpp).

#include "trace_diff.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace nvtxpp::capture {

char const* to_string(verdict v) noexcept {
  switch (v) {
    case verdict::slower:
      return "slower";
    case verdict::faster:
      return "faster";
    case verdict::more:
      return "more";
    case verdict::fewer:
      return "fewer";
    case verdict::untested:
      return "untested";
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
using runs_of = std::vector<std::vector<std::int64_t>>;  // one vector of durations per run

/// An item's instances on both sides, run by run.
struct item_data {
  std::array<runs_of, 2> side;  // [0] base, [1] new
  std::size_t members = 1;
};

using item_map = std::map<key, item_data>;

bool ranged(int kind) {
  return kind == static_cast<int>(summary_sink::item_kind::range) ||
         kind == static_cast<int>(summary_sink::item_kind::projection);
}

/// The items of one side, run by run.
void collect(diff_side const& d, std::size_t s, item_map& items) {
  std::size_t const runs = d.runs.size();
  for (std::size_t r = 0; r < runs; ++r) {
    for (auto const& i : d.runs[r]->instances()) {
      auto& mine = items[{static_cast<int>(i.kind), i.name, i.style}].side[s];
      mine.resize(runs);
      auto& to = mine[r];
      to.insert(to.end(), i.durations->begin(), i.durations->end());
    }
  }
}

std::size_t instances(runs_of const& v) {
  std::size_t n = 0;
  for (auto const& r : v) {
    n += r.size();
  }
  return n;
}

/// Folds numbered families whose members are too few to test on their own (diff_options::
/// keep_numbers): `Train step 0` ... `Train step 60`, one instance each a run, become
/// `Train step *`; `Layer 0` ... `Layer 11` with many instances each stay apart.
void fold_families(item_map& items, std::array<std::size_t, 2> runs, diff_options const& o,
                   std::vector<folded_family>& folded) {
  std::map<key, std::vector<key>> families;
  for (auto const& [k, d] : items) {
    if (!ranged(std::get<0>(k))) {
      continue;
    }
    auto const& name = std::get<1>(k);
    auto const colon = name.find(':');
    std::string const bare = colon == std::string::npos ? name : name.substr(colon + 1);
    std::string const folded_name = fold_digits(bare);
    if (folded_name != bare) {
      families[{std::get<0>(k), name.substr(0, colon + 1) + folded_name, std::get<2>(k)}].push_back(
          k);
    }
  }
  for (auto const& [fk, members] : families) {
    if (members.size() < 2) {
      continue;
    }
    std::vector<double> per_run;  // each member's instances per run, on its fuller side
    for (auto const& m : members) {
      double most = 0;
      for (std::size_t s = 0; s < 2; ++s) {
        most = std::max(most, static_cast<double>(instances(items[m].side[s])) /
                                  static_cast<double>(std::max<std::size_t>(runs[s], 1)));
      }
      per_run.push_back(most);
    }
    std::nth_element(per_run.begin(),
                     per_run.begin() + static_cast<std::ptrdiff_t>(per_run.size() / 2),
                     per_run.end());
    if (per_run[per_run.size() / 2] >= static_cast<double>(o.min_instances)) {
      continue;
    }
    auto& into = items[fk];
    into.members = 0;
    for (std::size_t s = 0; s < 2; ++s) {
      into.side[s].resize(runs[s]);
    }
    for (auto const& m : members) {
      auto& from = items[m];
      for (std::size_t s = 0; s < 2; ++s) {
        for (std::size_t r = 0; r < from.side[s].size(); ++r) {
          auto& to = into.side[s][r];
          to.insert(to.end(), from.side[s][r].begin(), from.side[s][r].end());
        }
      }
      into.members += from.members;
      items.erase(m);
    }
    auto const& name = std::get<1>(fk);
    bool const seen = std::any_of(folded.begin(), folded.end(),
                                  [&](folded_family const& f) { return f.name == name; });
    if (!seen) {
      folded.push_back({name, members.size()});
    }
  }
}

/// The three measures of one item, one value per run (logs), on one side.
struct side_values {
  std::vector<double> median;  // runs with instances only
  std::vector<double> calls;   // every run
  std::vector<double> time;    // every run
  double total = 0;            // all runs' total time, ns
};

side_values values_of(runs_of& runs, std::size_t nruns) {
  side_values v;
  runs.resize(nruns);
  for (auto& r : runs) {
    std::sort(r.begin(), r.end());
    double total = 0;
    for (auto x : r) {
      total += static_cast<double>(x);
    }
    v.total += total;
    if (!r.empty()) {
      v.median.push_back(std::log(std::max(stats::median_sorted(r), 1.0)));
    }
    v.calls.push_back(std::log(std::max(static_cast<double>(r.size()), 0.5)));
    v.time.push_back(std::log(std::max(total, 1.0)));
  }
  return v;
}

enum measure_id : std::size_t { med_m, calls_m, time_m, measures };

/// Host ranges against GPU items: their runs vary in different ways and amounts.
std::size_t group_of(summary_sink::item_kind k) {
  return k == summary_sink::item_kind::range ? 0 : 1;
}

struct work_item {
  diff_row row;
  std::array<side_values, 2> raw;  // as measured
  std::array<side_values, 2> v;    // as judged: beyond the run factors, where they apply
};

std::vector<double>& series(side_values& v, std::size_t m) {
  return m == med_m ? v.median : (m == calls_m ? v.calls : v.time);
}

double mean(std::vector<double> const& v) {
  double s = 0;
  for (double x : v) {
    s += x;
  }
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

double median_of(std::vector<double> v) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  std::size_t const n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Fewer items with a value in every run: no run factors (one item would move its own).
constexpr std::size_t min_factor_items = 6;

/// Each run's factor for group `g` and measure `m`: the median, over the group's items with a
/// value in every run, of the run's value against the item's mean over all runs (logs). The
/// base's and the new side's factors, and the number of items; too few items: empty.
std::pair<std::array<std::vector<double>, 2>, std::size_t> run_factors(
    std::vector<work_item>& items, std::size_t g, std::size_t m, std::array<std::size_t, 2> runs) {
  std::array<std::vector<std::vector<double>>, 2> dev{std::vector<std::vector<double>>(runs[0]),
                                                      std::vector<std::vector<double>>(runs[1])};
  std::size_t used = 0;
  for (auto& w : items) {
    if (group_of(w.row.kind) != g || w.row.base_n == 0 || w.row.new_n == 0) {
      continue;
    }
    auto& a = series(w.v[0], m);
    auto& b = series(w.v[1], m);
    if (a.size() != runs[0] || b.size() != runs[1] || w.row.base_n < runs[0] ||
        w.row.new_n < runs[1]) {
      continue;  // not in every run
    }
    double const centre =
        (mean(a) * static_cast<double>(a.size()) + mean(b) * static_cast<double>(b.size())) /
        static_cast<double>(a.size() + b.size());
    for (std::size_t s = 0; s < 2; ++s) {
      auto const& x = s == 0 ? a : b;
      for (std::size_t r = 0; r < x.size(); ++r) {
        dev[s][r].push_back(x[r] - centre);
      }
    }
    ++used;
  }
  std::array<std::vector<double>, 2> f;
  if (used >= min_factor_items) {
    for (std::size_t s = 0; s < 2; ++s) {
      for (std::size_t r = 0; r < runs[s]; ++r) {
        f[s].push_back(median_of(dev[s][r]));
      }
    }
  }
  return {f, used};
}

/// Takes each run's factor out of the values of measure `m` of group `g` (every item with a
/// value in every run), bringing all runs to the new side's mean conditions: New stays as
/// measured, and an item's change is its change beyond the group's shift.
void take_out(std::vector<work_item>& items, std::size_t g, std::size_t m,
              std::array<std::vector<double>, 2> const& f, std::array<std::size_t, 2> runs,
              bool quiet = false) {
  double const target = mean(f[1]);
  double const shift = target - mean(f[0]);
  for (auto& w : items) {
    if (group_of(w.row.kind) != g) {
      continue;
    }
    auto& a = series(w.v[0], m);
    auto& b = series(w.v[1], m);
    if (a.size() != runs[0] || b.size() != runs[1] || w.row.base_n < runs[0] ||
        w.row.new_n < runs[1]) {
      continue;  // only series with a value in every run line up with the factors
    }
    for (std::size_t s = 0; s < 2; ++s) {
      auto& x = s == 0 ? a : b;
      for (std::size_t r = 0; r < x.size(); ++r) {
        x[r] += target - f[s][r];
      }
    }
    if (quiet) {
      (m == med_m ? w.row.median : w.row.time).quiet_shift = shift;
    } else if (m == med_m) {
      w.row.shift = std::expm1(shift);
    }
  }
}

/// The estimate and, with 2 or more runs a side, the t test over runs of one measure. `raw`:
/// the values as measured (Base and New); `a`, `b`: as judged.
void test_measure(diff_measure& d, std::array<std::vector<double> const*, 2> raw,
                  std::vector<double> const& a, std::vector<double> const& b, double alpha,
                  bool testable) {
  if (a.empty() || b.empty()) {
    return;
  }
  d.base = std::exp(mean(*raw[0]));
  d.now = std::exp(mean(*raw[1]));
  d.measured = std::expm1(mean(*raw[1]) - mean(*raw[0]));
  d.change = std::expm1(mean(b) - mean(a));
  if (!testable || a.size() < 2 || b.size() < 2) {
    return;
  }
  auto const t = stats::two_sample_t(a, b, 1 - alpha);
  if (t.se == 0 && t.diff != 0 && (a.size() < 3 || b.size() < 3)) {
    return;  // two equal values a side are as often chance as a fixed count: no test
  }
  // (Every run of both sides alike, as measured: no change, whatever the number of runs.)
  d.tested = true;
  d.exact = t.se == 0;
  d.p = t.p;
  d.change = std::expm1(t.diff);
  d.ci = {std::expm1(t.ci.lo), std::expm1(t.ci.hi)};
  if (d.quiet_shift != 0) {
    // Tested beyond the group's shift (not itself a change); shown as measured: the shift
    // added back to the estimate (it is then the measured change) and to its interval.
    d.beyond = d.change;
    d.change = std::expm1(t.diff + d.quiet_shift);
    d.ci = {std::expm1(t.ci.lo + d.quiet_shift), std::expm1(t.ci.hi + d.quiet_shift)};
  }
}

/// now / base of a measure as measured (0 without a base).
double ratio(diff_measure const& m) { return m.base > 0 ? m.now / m.base : 0.0; }

bool median_testable(diff_row const& r, diff_options const& o) {
  return r.base_n >= o.min_instances && r.new_n >= o.min_instances;
}

std::string pct(double x) { return fmt::format("{:+.1f}%", 100 * x); }

/// The verdict of a row whose measures are tested and adjusted (q).
void judge(diff_row& r, diff_options const& o) {
  auto const large = [&](diff_measure const& m, bool duration) {
    double const delta = m.now - m.base;
    return std::fabs(m.change) > o.threshold &&
           (!duration || std::fabs(delta) >= static_cast<double>(o.floor_ns));
  };
  // Tested beyond a quiet shift (diff_measure::quiet_shift): significant is the change beyond
  // the shift; a verdict only where it goes the same way as the change as measured (past the
  // threshold: `large`) and the interval as measured leaves out no change. (A measured change
  // that goes against what the item did beyond the shift is no verdict. Asking the change beyond
  // the shift to pass the threshold as well found a change right at it half as often: 46 of 100
  // against 61, bench/diff_noise.py fixture, with the same false verdicts on unchanged runs.)
  auto const agrees = [&](diff_measure const& m) {
    if (m.quiet_shift == 0) {
      return true;
    }
    bool const same_way = (m.change > 0) == (m.beyond > 0);
    return same_way && (m.ci.lo > 0 || m.ci.hi < 0);
  };
  bool const med = r.median.significant && large(r.median, !r.whole_group) && agrees(r.median);
  bool const calls = r.calls.significant && large(r.calls, false);
  bool const time = r.time.significant && large(r.time, true) && agrees(r.time);
  // The growth the gate weighs, as measured, of the measures found grown: the median instance,
  // the time per run, or more calls times the median instance (more calls are more time unless
  // the instances shortened as much; tested on the calls, that holds where the preempted
  // instances of a loaded machine blur the time per run's test).
  r.growth = -1;
  if (!r.whole_group || !(o.relative && r.shift != 0)) {
    if (med && r.median.change > 0) {
      r.growth = std::max(r.growth, ratio(r.median) - 1);
    }
    if (time && r.time.change > 0) {
      r.growth = std::max(r.growth, ratio(r.time) - 1);
    }
    if (calls && r.calls.change > 0 && !r.whole_group) {
      r.growth = std::max(r.growth, ratio(r.calls) * ratio(r.median) - 1);
    }
  }
  if (r.whole_group) {
    r.growth = med && r.median.change > 0 ? r.median.change : -1;
  }
  r.grew = r.growth > 0;
  std::string const calls_text = fmt::format("calls per run {} ({:.4g} -> {:.4g})",
                                             pct(r.calls.change), r.calls.base, r.calls.now);
  if (med) {
    r.v = r.median.change > 0 ? verdict::slower : verdict::faster;
    if (calls && !r.whole_group) {
      r.note = calls_text;
    }
  } else if (calls) {
    r.v = r.calls.change > 0 ? verdict::more : verdict::fewer;
    r.note = calls_text + (time ? fmt::format(", time per run {}", pct(r.time.change)) : "");
  } else if (time) {
    r.v = r.time.change > 0 ? verdict::slower : verdict::faster;
    r.note = fmt::format(
        "time per run {} [{}, {}]: instances and calls each moved less than the threshold",
        pct(r.time.change), pct(r.time.ci.lo), pct(r.time.ci.hi));
  } else if (!r.median.tested && !r.calls.tested) {
    r.v = verdict::untested;
  } else {
    r.v = verdict::same;
    diff_measure const& m = r.median.tested ? r.median : r.calls;
    if (!r.median.tested) {
      r.note = fmt::format("median instance untested: < {} instances on a side", o.min_instances);
    } else if (m.significant) {
      r.note = "significant, below the threshold";
    } else if (m.p <= o.alpha) {
      r.note = "not significant among all the tests (false discovery rate)";
    } else if (large(m, true)) {
      r.note = "not significant";
    }
  }
}

int rank_of(verdict v) {
  switch (v) {
    case verdict::slower:
      return 0;
    case verdict::more:
      return 1;
    case verdict::added:
      return 2;
    case verdict::faster:
      return 3;
    case verdict::fewer:
      return 4;
    case verdict::gone:
      return 5;
    case verdict::untested:
      return 6;
    case verdict::same:
      break;
  }
  return 7;
}

/// Rows with their per-run values; new and gone items judged already.
std::vector<work_item> build_items(item_map& items, std::array<std::size_t, 2> runs) {
  std::vector<work_item> out;
  for (auto& [k, d] : items) {
    work_item w;
    auto& r = w.row;
    r.kind = static_cast<summary_sink::item_kind>(std::get<0>(k));
    r.name = std::get<1>(k);
    r.style = std::get<2>(k);
    r.members = d.members;
    r.base_n = instances(d.side[0]);
    r.new_n = instances(d.side[1]);
    for (std::size_t s = 0; s < 2; ++s) {
      w.v[s] = values_of(d.side[s], runs[s]);
    }
    w.raw = w.v;
    r.base_total = w.v[0].total / static_cast<double>(std::max<std::size_t>(runs[0], 1));
    r.new_total = w.v[1].total / static_cast<double>(std::max<std::size_t>(runs[1], 1));
    if (r.base_n == 0) {
      r.v = verdict::added;
    } else if (r.new_n == 0) {
      r.v = verdict::gone;
    }
    out.push_back(std::move(w));
  }
  return out;
}

/// A new or gone item: its measures' values on the side that has it.
void describe_one_side(work_item& w) {
  auto& r = w.row;
  for (std::size_t s = 0; s < 2; ++s) {
    if ((s == 0 ? r.base_n : r.new_n) == 0) {
      continue;
    }
    auto const& v = w.raw[s];
    (s == 0 ? r.median.base : r.median.now) = std::exp(mean(v.median));
    (s == 0 ? r.calls.base : r.calls.now) = std::exp(mean(v.calls));
    (s == 0 ? r.time.base : r.time.now) = std::exp(mean(v.time));
  }
}

/// The row of a group's run-wide shift: the run factors of one side against the other's.
diff_row shift_row(std::size_t g, std::array<std::vector<double>, 2> const& f, std::size_t used,
                   diff_options const& o) {
  diff_row r;
  r.whole_group = true;
  r.kind = g == 0 ? summary_sink::item_kind::range : summary_sink::item_kind::kernel;
  r.name = g == 0 ? "host ranges" : "GPU items";
  r.base_n = used;
  r.new_n = used;
  r.members = used;
  test_measure(r.median, {&f[0], &f[1]}, f[0], f[1], o.alpha, true);
  r.shift = r.median.change;
  return r;
}

/// The items of group `g` left behind by the shift `shift` (logs): their change beyond it goes
/// against it, significantly on their own runs (a t test at alpha, not adjusted: the check
/// looks for any sign that the shift is not the machine's) and by more than the threshold. A
/// shift that is the machine's (a busier machine during some runs) moves every item alike; a
/// real change that reaches many items (a child slower inside its parents, a batch size that
/// moves most kernels) moves the median item with it and leaves the untouched items where they
/// were: against it. (Items that moved further than the shift, the same way, are the changes
/// a comparison is made for, and their parents: no sign against the machine.)
std::size_t apart_from_shift(std::vector<work_item>& items, std::size_t g, std::size_t m,
                             double shift, std::array<std::size_t, 2> runs, diff_options const& o) {
  std::size_t apart = 0;
  for (auto& w : items) {
    auto const& b = series(w.raw[1], m);
    if (group_of(w.row.kind) != g || w.row.base_n < runs[0] || w.row.new_n < runs[1] ||
        series(w.raw[0], m).size() != runs[0] || b.size() != runs[1]) {
      continue;
    }
    std::vector<double> a = series(w.raw[0], m);
    for (double& x : a) {
      x += shift;
    }
    if (a.size() < 2 || b.size() < 2) {
      continue;
    }
    auto const t = stats::two_sample_t(a, b, 1 - o.alpha);
    bool const against = (t.diff > 0) != (shift > 0);
    if (against && (t.se == 0 ? t.diff != 0 : t.p <= o.alpha) &&
        std::fabs(std::expm1(t.diff)) > o.threshold) {
      ++apart;
    }
  }
  return apart;
}

/// Items left behind by the shift beyond one, or this share of the group: the shift is a
/// change. A machine moves every item alike; one item against it may be a change made the
/// other way; two kernels left where nine moved by a quarter are a change of the nine (a
/// smaller batch), not the machine's (bench/diff_noise.py, the cases' table in docs/diff.md).
constexpr double max_apart_share = 0.05;

/// Run factors and the groups' rows; with --relative, the factors taken out of the items where
/// the shift moves them alike.
void run_wide(std::vector<work_item>& work, diff_result& result, std::array<std::size_t, 2> runs,
              diff_options const& o) {
  for (std::size_t g = 0; g < 2; ++g) {
    auto const [f, used] = run_factors(work, g, med_m, runs);
    if (f[0].empty()) {
      continue;
    }
    work_item w;
    w.row = shift_row(g, f, used, o);
    group_shift gs{w.row.name, w.row.median.change, used};
    auto const consistent = [&](std::size_t m, std::array<std::vector<double>, 2> const& fm,
                                std::size_t n) {
      std::size_t const apart = apart_from_shift(work, g, m, mean(fm[1]) - mean(fm[0]), runs, o);
      if (m == med_m) {
        gs.apart = apart;
      }
      return static_cast<double>(apart) <= std::max(1.0, max_apart_share * static_cast<double>(n));
    };
    if (o.relative && runs[0] >= 2 && runs[1] >= 2) {
      gs.taken_out = consistent(med_m, f, used);
    }
    if (gs.taken_out) {
      // The time per run's factors apart, by the same rule: more calls of a few items move
      // their parents' time, not the machine's. Where they do, the instances' factors come out
      // of the time per run instead: the machine stretches each instance, and what an item's
      // time per run did beyond that is its own (its calls, its preempted instances).
      auto const [ft, used_t] = run_factors(work, g, time_m, runs);
      bool const time_too = !ft[0].empty() && consistent(time_m, ft, used_t);
      take_out(work, g, med_m, f, runs);
      take_out(work, g, time_m, time_too ? ft : f, runs);
    } else if (o.relative && runs[0] >= 2 && runs[1] >= 2) {
      w.row.note = fmt::format(
          "not taken out: {} of {} items left behind by it (a change, not the machine's)", gs.apart,
          used);
    } else if (o.quiet_groups[g] && runs[0] >= 2 && runs[1] >= 2) {
      // The default, the group's shift found not to be a change (its row `same` as measured:
      // compare_sides): it is the runs' noise. Each item is tested beyond it (each run's factor
      // out: the run-to-run spread the machine adds, and the shift), and judged as measured
      // (judge: its measured change beyond the threshold, the same way as the change beyond the
      // shift). The time per run by its own factors alike.
      gs.quiet = true;
      take_out(work, g, med_m, f, runs, true);
      auto const [ft, used_t] = run_factors(work, g, time_m, runs);
      if (!ft[0].empty()) {
        take_out(work, g, time_m, ft, runs, true);
      }
    }
    w.row.shift = gs.taken_out ? w.row.shift : 0;
    result.shifts.push_back(gs);
    work.push_back(std::move(w));
  }
}

}  // namespace

/// One comparison with the options as they are (compare_sides decides the default's groups).
static diff_result compare_as(diff_side const& base, diff_side const& now,
                              diff_options const& options);

diff_result compare_sides(diff_side const& base, diff_side const& now,
                          diff_options const& options) {
  if (options.relative || options.absolute) {
    return compare_as(base, now, options);
  }
  // The default: first as measured (--absolute), which judges each group's run-wide shift
  // (its row) among all the tests; where a shift is not a change (`same`), the items are
  // tested again beyond it.
  diff_options measured = options;
  measured.absolute = true;
  diff_result first = compare_as(base, now, measured);
  diff_options quiet = options;
  bool any = false;
  for (auto const& r : first.rows) {
    if (r.whole_group && r.median.tested && r.v == verdict::same) {
      quiet.quiet_groups[group_of(r.kind)] = true;
      any = true;
    }
  }
  return any ? compare_as(base, now, quiet) : first;
}

diff_result compare_as(diff_side const& base, diff_side const& now, diff_options const& options) {
  std::array<std::size_t, 2> const runs{base.runs.size(), now.runs.size()};
  item_map items;
  collect(base, 0, items);
  collect(now, 1, items);
  diff_result result;
  result.base_runs = runs[0];
  result.new_runs = runs[1];
  if (!options.keep_numbers) {
    fold_families(items, runs, options, result.folded);
  }
  auto work = build_items(items, runs);
  run_wide(work, result, runs, options);
  bool const two_runs = runs[0] >= 2 && runs[1] >= 2;
  std::vector<diff_measure*> tested;
  for (auto& w : work) {
    auto& r = w.row;
    if (r.base_n == 0 || r.new_n == 0) {
      describe_one_side(w);
      continue;
    }
    if (!r.whole_group) {
      auto const raw = [&](std::size_t m) {
        return std::array<std::vector<double> const*, 2>{&series(w.raw[0], m),
                                                         &series(w.raw[1], m)};
      };
      test_measure(r.median, raw(med_m), w.v[0].median, w.v[1].median, options.alpha,
                   two_runs && median_testable(r, options));
      test_measure(r.calls, raw(calls_m), w.v[0].calls, w.v[1].calls, options.alpha, two_runs);
      test_measure(r.time, raw(time_m), w.v[0].time, w.v[1].time, options.alpha, two_runs);
    } else if (!two_runs || (options.relative && r.shift != 0)) {
      r.median.tested = false;  // taken as the machine's: no verdict of its own
    }
    for (auto* m : {&r.median, &r.calls, &r.time}) {
      if (m->exact) {
        m->q = m->p;  // both sides constant: certain, no draw to hold a rate over
        m->significant = m->p == 0;
      } else if (m->tested) {
        tested.push_back(m);
      }
    }
  }
  std::vector<double> p;
  for (auto const* m : tested) {
    p.push_back(m->p);
  }
  auto const q = stats::benjamini_hochberg(p);
  for (std::size_t i = 0; i < tested.size(); ++i) {
    tested[i]->q = q[i];
    tested[i]->significant = q[i] <= options.alpha;
  }
  result.tests = tested.size();
  std::array<bool, 2> group_grew{false, false};
  for (auto& w : work) {
    if (w.row.whole_group) {
      judge(w.row, options);
      group_grew[group_of(w.row.kind)] =
          w.row.v == verdict::slower && !(options.relative && w.row.shift != 0);
    }
  }
  for (auto& w : work) {
    auto& r = w.row;
    if (r.base_n != 0 && r.new_n != 0 && !r.whole_group) {
      judge(r, options);
      if (group_grew[group_of(r.kind)] && r.shift != 0 && ratio(r.median) > 1) {
        r.growth = std::max(r.growth, ratio(r.median) - 1);  // grew with its whole group
        r.grew = true;
      }
    }
    if (r.whole_group && options.relative && r.shift != 0) {
      r.note = "taken as the machine's (--relative): not a change";
    }
    if (r.base_n != 0 && r.new_n != 0 && !two_runs) {
      r.note = "one run on a side: run-to-run noise unknown";
    }
    result.rows.push_back(std::move(r));
  }
  std::stable_sort(result.rows.begin(), result.rows.end(),
                   [](diff_row const& x, diff_row const& y) {
                     if (x.whole_group != y.whole_group) {
                       return x.whole_group;
                     }
                     if (rank_of(x.v) != rank_of(y.v)) {
                       return rank_of(x.v) < rank_of(y.v);
                     }
                     return std::fabs(x.impact()) > std::fabs(y.impact());
                   });
  return result;
}

double gate_change(diff_row const& r) noexcept { return r.growth; }

std::vector<diff_row const*> gate_failures(std::vector<diff_row> const& rows, double above,
                                           std::vector<name_pattern> const& gates) {
  std::vector<diff_row const*> out;
  for (auto const& r : rows) {
    if (!r.grew || !(gate_change(r) > above)) {
      continue;
    }
    bool const is_ranged =
        r.kind == summary_sink::item_kind::range || r.kind == summary_sink::item_kind::projection;
    std::string const bare =
        is_ranged && !r.whole_group ? r.name.substr(r.name.find(':') + 1) : r.name;
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
