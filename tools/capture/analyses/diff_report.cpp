// diff's outputs (diff_report.hpp).

#include "diff_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace nvtxpp::capture {

std::string human_ns(double ns) {
  double const a = std::fabs(ns);
  if (a < 1e3) {
    return fmt::format("{:.0f} ns", ns);
  }
  if (a < 1e6) {
    return fmt::format("{:.3g} µs", ns / 1e3);
  }
  if (a < 1e9) {
    return fmt::format("{:.3g} ms", ns / 1e6);
  }
  return fmt::format("{:.3g} s", ns / 1e9);
}

namespace {

std::string pct(double x) {
  if (std::isinf(x)) {
    return x > 0 ? "+inf%" : "-inf%";
  }
  return fmt::format("{:+.1f}%", 100 * x);
}

bool both(diff_row const& r) { return r.base_n != 0 && r.new_n != 0; }

std::string p_text(diff_measure const& m) {
  if (!m.tested) {
    return "-";
  }
  return m.p < 1e-4 ? std::string{"<1e-4"} : fmt::format("{:.4f}", m.p);
}

std::string signed_human(double ns) { return (ns > 0 ? "+" : "") + human_ns(ns); }

std::string calls_text(diff_row const& r) {
  auto const one = [](double v) {
    return v == std::floor(v) ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v);
  };
  return one(r.calls.base) + " -> " + one(r.calls.now);
}

}  // namespace

std::string shift_note(diff_result const& result, diff_options const& options) {
  if (result.shifts.empty()) {
    return {};
  }
  std::string list;
  std::string out_list;
  std::string quiet_list;
  for (auto const& g : result.shifts) {
    list += fmt::format("{}{} {}", list.empty() ? "" : ", ", g.group, pct(g.shift));
    if (g.taken_out) {
      out_list += fmt::format("{}{} {}", out_list.empty() ? "" : ", ", g.group, pct(g.shift));
    }
    if (g.quiet) {
      quiet_list += fmt::format("{}{} {}", quiet_list.empty() ? "" : ", ", g.group, pct(g.shift));
    }
  }
  if (!options.relative && !quiet_list.empty()) {
    return fmt::format(
        "Change is each item's own, as measured (its Base and New); the run-wide shifts ({}; "
        "the rows 'all': the median item's) are shown, not taken out of Change. Where a shift "
        "is no change (its row `same`: {}), each item was tested beyond it, the spread its runs "
        "share taken out: a verdict needs the change beyond the shift significant, and the "
        "change as measured past the threshold, the same way; --absolute tests as measured "
        "only, --relative takes out a shift that moves every item alike",
        list, quiet_list);
  }
  if (!options.relative) {
    return fmt::format(
        "Change is each item's own, as measured (its Base and New); the run-wide shifts ({}; "
        "the rows 'all': the median item's) are shown, not taken out: --relative takes out a "
        "shift that moves every item alike",
        list);
  }
  if (out_list.empty()) {
    return fmt::format(
        "--relative: no run-wide shift taken out ({}): items were left behind by it, so it is a "
        "change, not the machine's; Change is each item's own, as measured",
        list);
  }
  return fmt::format(
      "--relative: Beyond Shift is an item's change beyond the run-wide shift of its group ({}; "
      "taken as the machine's), and its interval, p and verdict are that figure's; Change is as "
      "measured",
      out_list);
}

std::string test_line(diff_result const& result, diff_options const& options) {
  if (result.base_runs < 2 || result.new_runs < 2) {
    return fmt::format(
        "{} run(s) against {}: no verdict of slower, faster, more or fewer, since one run says "
        "nothing of how runs differ; give 2 or more runs a side (5 find a 25% change of an item "
        "whose runs vary by 3.5%: docs/diff.md)",
        result.base_runs, result.new_runs);
  }
  return fmt::format(
      "{} runs against {}: each item's median instance, calls and time per run compared over "
      "runs (t test), {} tests at a false discovery rate of {}",
      result.base_runs, result.new_runs, result.tests, options.alpha);
}

std::string folded_line(diff_result const& result) {
  if (result.folded.empty()) {
    return {};
  }
  std::string list;
  for (std::size_t i = 0; i < result.folded.size() && i < 4; ++i) {
    list += fmt::format("{}{} ({} names)", i != 0 ? ", " : "",
                        display_name(result.folded[i].name, 40), result.folded[i].members);
  }
  if (result.folded.size() > 4) {
    list += fmt::format(" and {} more", result.folded.size() - 4);
  }
  return fmt::format(
      "numbered ranges too few to test one by one are folded: {}; --keep-numbers keeps every "
      "number apart",
      list);
}

void print_diff_table(std::FILE* out, diff_result const& result, diff_options const& options,
                      std::size_t name_width) {
  auto const& rows = result.rows;
  text_table t;
  t.title = fmt::format(
      "Changes, base -> new ({} run(s) against {}; false discovery rate {}, threshold {:.1f}%)",
      result.base_runs, result.new_runs, options.alpha, 100 * options.threshold);
  // --relative with a shift taken out: the figure judged is the change beyond it, a column of
  // its own beside the change as measured.
  bool const beyond = std::any_of(result.shifts.begin(), result.shifts.end(),
                                  [](group_shift const& g) { return g.taken_out; });
  t.header = {
      "Verdict",  "Kind",      "Name",     "Style",
      "Base Med", "New Med",   "Change",   fmt::format("{:g}% CI", 100 * (1 - options.alpha)),
      "p",        "Calls/run", "Time/run", "Total/run",
      "Note"};
  t.left = {true, true, true, true, false, false, false, false, false, false, false, false, true};
  if (beyond) {
    t.header.insert(t.header.begin() + 7, "Beyond Shift");
    t.left.insert(t.left.begin() + 7, false);
  }
  std::map<std::string, std::size_t> counts;
  std::size_t items = 0;
  for (auto const& r : rows) {
    if (!r.whole_group) {
      ++counts[to_string(r.v)];
      ++items;
    }
    std::string const ci =
        r.median.tested ? "[" + pct(r.median.ci.lo) + ", " + pct(r.median.ci.hi) + "]" : "-";
    std::vector<std::string> row;
    if (r.whole_group) {
      row = {to_string(r.v),
             "all",
             r.name,
             "",
             "-",
             "-",
             pct(r.median.change),
             ci,
             p_text(r.median),
             "-",
             "-",
             "-",
             r.note.empty()
                 ? fmt::format("run-wide shift over {} items (the median item's)", r.members)
                 : r.note};
      if (beyond) {
        row.insert(row.begin() + 7, "-");
      }
      t.rows.push_back(std::move(row));
      continue;
    }
    row = {to_string(r.v),
           to_string(r.kind),
           r.name,
           r.style,
           r.base_n != 0 ? human_ns(r.median.base) : "-",
           r.new_n != 0 ? human_ns(r.median.now) : "-",
           both(r) ? pct(r.median.measured) : "-",
           ci,
           p_text(r.median),
           both(r) ? calls_text(r) : "-",
           both(r) ? pct(r.time.measured) : "-",
           signed_human(r.impact()),
           r.note};
    if (beyond) {
      row.insert(row.begin() + 7, both(r) && r.shift != 0 ? pct(r.median.change) : "-");
    }
    t.rows.push_back(std::move(row));
  }
  print_text_table(out, t, false, name_width, true);
  fmt::print(out,
             "\n {} item(s): {} slower, {} faster, {} more, {} fewer, {} same, {} untested, {} "
             "new, {} gone\n",
             items, counts["slower"], counts["faster"], counts["more"], counts["fewer"],
             counts["same"], counts["untested"], counts["new"], counts["gone"]);
  for (auto const& line :
       {test_line(result, options), folded_line(result), shift_note(result, options)}) {
    if (!line.empty()) {
      std::string l = line;
      for (std::size_t at = l.find('\n'); at != std::string::npos; at = l.find('\n', at + 2)) {
        l.insert(at + 1, " ");
      }
      fmt::print(out, " {}\n", l);
    }
  }
}

void print_diff_csv(std::FILE* out, std::vector<diff_row> const& rows) {
  fmt::print(out,
             "Kind,Name,Style,Base,New,Change %,CI Low %,CI High %,p-value,Base Instances,"
             "New Instances,Base Total,New Total,Total Change,Verdict,Note,q-value,"
             "Base Calls/Run,New Calls/Run,Calls Change %,Calls q-value,Time/Run Change %,"
             "Time CI Low %,Time CI High %,Time q-value,Members,Shift %,Beyond Shift %\n");
  auto num = [](double v) {
    return std::isinf(v) ? std::string{v > 0 ? "inf" : "-inf"} : fmt::format("{:.3f}", v);
  };
  auto pct_of = [&](double v, bool present) { return present ? num(100 * v) : std::string{}; };
  auto q_of = [](diff_measure const& m) {
    return m.tested ? fmt::format("{:.6g}", m.q) : std::string{};
  };
  for (auto const& r : rows) {
    bool const b = both(r);
    bool const item = !r.whole_group;  // a group's row has a shift, not durations or calls
    auto const& m = r.median;
    fmt::print(out, "{},{},{},{},{},{},{},{},{},{},{},{:.1f},{:.1f},{:.1f},{},{},",
               r.whole_group ? "all" : to_string(r.kind), csv_field(r.name), r.style,
               r.base_n != 0 && item ? fmt::format("{:.1f}", m.base) : "",
               r.new_n != 0 && item ? fmt::format("{:.1f}", m.now) : "",
               pct_of(item ? m.measured : m.change, b), pct_of(m.ci.lo, m.tested),
               pct_of(m.ci.hi, m.tested), m.tested ? fmt::format("{:.6g}", m.p) : "", r.base_n,
               r.new_n, r.base_total, r.new_total, r.impact(), to_string(r.v), csv_field(r.note));
    fmt::print(out, "{},{},{},{},{},{},{},{},{},{},{},{}\n", q_of(m),
               r.base_n != 0 && item ? fmt::format("{:.6g}", r.calls.base) : "",
               r.new_n != 0 && item ? fmt::format("{:.6g}", r.calls.now) : "",
               pct_of(r.calls.change, b && item), q_of(r.calls), pct_of(r.time.measured, b && item),
               pct_of(r.time.ci.lo, r.time.tested), pct_of(r.time.ci.hi, r.time.tested),
               q_of(r.time), r.members, num(100 * r.shift),
               pct_of(m.change, b && item && r.shift != 0));
  }
}

namespace {

std::string xml(std::string_view s) {
  std::string out = display_name(s, 70);
  std::string e;
  for (char c : out) {
    switch (c) {
      case '&':
        e += "&amp;";
        break;
      case '<':
        e += "&lt;";
        break;
      case '>':
        e += "&gt;";
        break;
      case '"':
        e += "&quot;";
        break;
      default:
        e += c;
    }
  }
  return e;
}

char const* colour(verdict v) {
  switch (v) {
    case verdict::slower:
      return "#d62728";
    case verdict::faster:
      return "#2ca02c";
    case verdict::added:
      return "#9467bd";
    case verdict::gone:
      return "#8c564b";
    case verdict::more:
      return "#ff7f0e";
    case verdict::fewer:
      return "#17becf";
    case verdict::untested:
      return "#bcbd22";
    case verdict::same:
      break;
  }
  return "#7f7f7f";
}

}  // namespace

std::string diff_svg(std::vector<diff_row> const& rows, diff_options const& options,
                     std::size_t top) {
  std::vector<diff_row const*> pick;
  for (auto const& r : rows) {
    pick.push_back(&r);
  }
  // Changed items first, then by the size of the change of total time.
  std::stable_sort(pick.begin(), pick.end(), [](diff_row const* a, diff_row const* b) {
    bool const ca = a->v != verdict::same;
    bool const cb = b->v != verdict::same;
    return ca != cb ? ca : std::fabs(a->impact()) > std::fabs(b->impact());
  });
  pick.resize(std::min(pick.size(), top));
  constexpr int row_h = 46;
  constexpr int label_w = 430;
  constexpr int bar_w = 360;
  int const height = 70 + row_h * static_cast<int>(pick.size()) + 20;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">nvtxpp-capture diff: the "
      "largest changes (median instance, geometric mean over runs, base vs new)</text>\n"
      "<text x=\"10\" y=\"40\">grey bar: base median; coloured bar: new median, with its {:g}% "
      "interval; red slower, green faster, orange more, cyan fewer, olive untested, grey same "
      "(false discovery rate {}, threshold {:.1f}%)</text>\n",
      label_w + bar_w + 260, height, 100 * (1 - options.alpha), options.alpha,
      100 * options.threshold);
  int y = 60;
  for (auto const* r : pick) {
    double hi = std::max(r->median.base, r->median.now);
    if (r->median.tested && std::isfinite(r->median.ci.hi)) {
      hi = std::max(hi, r->median.base * (1 + r->shift) * (1 + r->median.ci.hi));
    }
    double const scale = hi > 0 ? bar_w / hi : 0;
    s += fmt::format("<text x=\"10\" y=\"{}\">{} {}</text>\n", y + 16, to_string(r->kind),
                     xml(r->name));
    s += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"14\" fill=\"#c7c7c7\"><title>base "
        "{}</title></rect>\n",
        label_w, y + 4, r->median.base * scale, human_ns(r->median.base));
    s += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"14\" fill=\"{}\"><title>new "
        "{}</title></rect>\n",
        label_w, y + 20, r->median.now * scale, colour(r->v), human_ns(r->median.now));
    // The interval of the figure judged; with --relative and a shift taken out that figure is
    // beyond the shift, so the whisker is moved by it to stand around the new median as measured.
    double const moved = r->median.base * (1 + r->shift);
    if (r->median.tested && std::isfinite(r->median.ci.lo) && std::isfinite(r->median.ci.hi)) {
      double const lo = std::max(0.0, moved * (1 + r->median.ci.lo) * scale);
      double const up = moved * (1 + r->median.ci.hi) * scale;
      s += fmt::format(
          "<path d=\"M{0:.1f} {1} V{2} M{0:.1f} {3} H{4:.1f} M{4:.1f} {1} V{2}\" "
          "stroke=\"black\" stroke-width=\"1.5\"/>\n",
          label_w + lo, y + 21, y + 33, y + 27, label_w + up);
    }
    std::string change = r->base_n != 0 && r->new_n != 0 ? pct(r->median.measured) : std::string{};
    if (!change.empty() && r->shift != 0) {
      change += " (beyond shift " + pct(r->median.change) + ")";
    }
    s += fmt::format(
        "<text x=\"{}\" y=\"{}\">{} \xE2\x86\x92 {}  {}  <tspan font-weight=\"bold\" "
        "fill=\"{}\">{}</tspan></text>\n",
        label_w + bar_w + 10, y + 24, r->base_n != 0 ? human_ns(r->median.base) : "-",
        r->new_n != 0 ? human_ns(r->median.now) : "-", change, colour(r->v), to_string(r->v));
    y += row_h;
  }
  if (pick.empty()) {
    s += "<text x=\"10\" y=\"80\">(no items)</text>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace nvtxpp::capture
