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

std::string p_text(diff_row const& r) {
  if (!r.tested) {
    return "-";
  }
  return r.p < 1e-4 ? std::string{"<1e-4"} : fmt::format("{:.4f}", r.p);
}

std::string signed_human(double ns) { return (ns > 0 ? "+" : "") + human_ns(ns); }

}  // namespace

std::string shift_note(diff_result const& result, diff_options const& options) {
  if (options.relative) {
    return fmt::format(
        "changes are relative to the run-wide shift, {} (the median change of {} items; "
        "--relative)",
        pct(result.shift), result.shift_items);
  }
  if (result.shift_items >= 3 && std::fabs(result.shift) > options.threshold) {
    return fmt::format(
        "note: the items moved together by {} (the median change of {} items): the machine "
        "(load, clocks) differed between the runs, or the change touches everything; "
        "--relative judges each item against that shift",
        pct(result.shift), result.shift_items);
  }
  return {};
}

void print_diff_table(std::FILE* out, diff_result const& result, diff_options const& options,
                      std::size_t name_width) {
  auto const& rows = result.rows;
  text_table t;
  t.title = fmt::format("Changes, base -> new (U test at alpha {}, threshold {:.1f}%)",
                        options.alpha, 100 * options.threshold);
  t.header = {
      "Verdict",  "Kind",      "Name",        "Style",
      "Base Med", "New Med",   "Change",      fmt::format("{:g}% CI", 100 * (1 - options.alpha)),
      "p",        "Instances", "Total/trace", "Note"};
  t.left = {true, true, true, true, false, false, false, false, false, false, false, true};
  std::map<std::string, std::size_t> counts;
  for (auto const& r : rows) {
    ++counts[to_string(r.v)];
    std::string const ci = r.tested ? "[" + pct(r.ci.lo) + ", " + pct(r.ci.hi) + "]" : "-";
    t.rows.push_back({to_string(r.v), to_string(r.kind), r.name, r.style,
                      r.base_n != 0 ? human_ns(r.base_median) : "-",
                      r.new_n != 0 ? human_ns(r.new_median) : "-", both(r) ? pct(r.change) : "-",
                      ci, p_text(r), fmt::format("{} / {}", r.base_n, r.new_n),
                      signed_human(r.impact()), r.note});
  }
  print_text_table(out, t, false, name_width, true);
  fmt::print(out, "\n {} item(s): {} slower, {} faster, {} same, {} new, {} gone\n", rows.size(),
             counts["slower"], counts["faster"], counts["same"], counts["new"], counts["gone"]);
  if (auto const note = shift_note(result, options); !note.empty()) {
    fmt::print(out, " {}\n", note);
  }
}

void print_diff_csv(std::FILE* out, std::vector<diff_row> const& rows) {
  fmt::print(out,
             "Kind,Name,Style,Base,New,Change %,CI Low %,CI High %,p-value,Base Instances,"
             "New Instances,Base Total,New Total,Total Change,Verdict,Note\n");
  auto num = [](double v) {
    return std::isinf(v) ? std::string{v > 0 ? "inf" : "-inf"} : fmt::format("{:.3f}", v);
  };
  for (auto const& r : rows) {
    bool const b = both(r);
    fmt::print(
        out, "{},{},{},{},{},{},{},{},{},{},{},{:.1f},{:.1f},{:.1f},{},{}\n", to_string(r.kind),
        csv_field(r.name), r.style, r.base_n != 0 ? fmt::format("{:.1f}", r.base_median) : "",
        r.new_n != 0 ? fmt::format("{:.1f}", r.new_median) : "", b ? num(100 * r.change) : "",
        r.tested ? num(100 * r.ci.lo) : "", r.tested ? num(100 * r.ci.hi) : "",
        r.tested ? fmt::format("{:.6g}", r.p) : "", r.base_n, r.new_n, r.base_total, r.new_total,
        r.impact(), to_string(r.v), csv_field(r.note));
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
      "largest changes (median per instance, base vs new)</text>\n"
      "<text x=\"10\" y=\"40\">grey bar: base median; coloured bar: new median, with its {:g}% "
      "interval; red slower, green faster, grey same (U test at alpha {}, threshold "
      "{:.1f}%)</text>\n",
      label_w + bar_w + 260, height, 100 * (1 - options.alpha), options.alpha,
      100 * options.threshold);
  int y = 60;
  for (auto const* r : pick) {
    double hi = std::max(r->base_median, r->new_median);
    if (r->tested && std::isfinite(r->ci.hi)) {
      hi = std::max(hi, r->base_median * (1 + r->ci.hi));
    }
    double const scale = hi > 0 ? bar_w / hi : 0;
    s += fmt::format("<text x=\"10\" y=\"{}\">{} {}</text>\n", y + 16, to_string(r->kind),
                     xml(r->name));
    s += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"14\" fill=\"#c7c7c7\"><title>base "
        "{}</title></rect>\n",
        label_w, y + 4, r->base_median * scale, human_ns(r->base_median));
    s += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"14\" fill=\"{}\"><title>new "
        "{}</title></rect>\n",
        label_w, y + 20, r->new_median * scale, colour(r->v), human_ns(r->new_median));
    if (r->tested && std::isfinite(r->ci.lo) && std::isfinite(r->ci.hi)) {
      double const lo = std::max(0.0, r->base_median * (1 + r->ci.lo) * scale);
      double const up = r->base_median * (1 + r->ci.hi) * scale;
      s += fmt::format(
          "<path d=\"M{0:.1f} {1} V{2} M{0:.1f} {3} H{4:.1f} M{4:.1f} {1} V{2}\" "
          "stroke=\"black\" stroke-width=\"1.5\"/>\n",
          label_w + lo, y + 21, y + 33, y + 27, label_w + up);
    }
    std::string const change = r->base_n != 0 && r->new_n != 0 ? pct(r->change) : std::string{};
    s += fmt::format(
        "<text x=\"{}\" y=\"{}\">{} \xE2\x86\x92 {}  {}  <tspan font-weight=\"bold\" "
        "fill=\"{}\">{}</tspan></text>\n",
        label_w + bar_w + 10, y + 24, r->base_n != 0 ? human_ns(r->base_median) : "-",
        r->new_n != 0 ? human_ns(r->new_median) : "-", change, colour(r->v), to_string(r->v));
    y += row_h;
  }
  if (pick.empty()) {
    s += "<text x=\"10\" y=\"80\">(no items)</text>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace nvtxpp::capture
