// The summary: nsys stats layouts of nvtx_sum, nvtx_gpu_proj_sum, cuda_gpu_kern_sum and
// cuda_gpu_mem_time_sum (docs/capture-results.md "The summary").

#include "summary.hpp"
#include "stats.hpp"

#include "../model/gpu_detail.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <vector>

namespace nvtxpp::capture {

std::string display_name(std::string_view name, std::size_t width) {
  // Split into display units (one column each): an escape, or one valid UTF-8 code point.
  std::vector<std::string> units;
  auto const* p = reinterpret_cast<unsigned char const*>(name.data());
  auto const* const end = p + name.size();
  while (p < end) {
    unsigned char const c = *p;
    if (c < 0x20U || c == 0x7FU) {
      units.push_back(c == '\n'   ? std::string{"\\n"}
                      : c == '\t' ? std::string{"\\t"}
                      : c == '\r' ? std::string{"\\r"}
                                  : fmt::format("\\x{:02x}", static_cast<unsigned>(c)));
      ++p;
      continue;
    }
    std::size_t n = 0;
    if (c < 0x80U) {
      n = 1;
    } else if ((c & 0xE0U) == 0xC0U) {
      n = 2;
    } else if ((c & 0xF0U) == 0xE0U) {
      n = 3;
    } else if ((c & 0xF8U) == 0xF0U) {
      n = 4;
    }
    bool ok = n != 0 && static_cast<std::size_t>(end - p) >= n;
    for (std::size_t i = 1; ok && i < n; ++i) {
      ok = (p[i] & 0xC0U) == 0x80U;
    }
    if (ok) {
      units.emplace_back(reinterpret_cast<char const*>(p), n);
      p += n;
    } else {
      units.push_back(fmt::format("\\x{:02x}", static_cast<unsigned>(c)));
      ++p;
    }
  }
  bool const cut = width > 0 && units.size() > width;
  std::size_t const keep = cut ? width - 1 : units.size();
  std::string out;
  for (std::size_t i = 0; i < keep; ++i) {
    out += units[i];
  }
  if (cut) {
    out += "\xE2\x80\xA6";  // U+2026 HORIZONTAL ELLIPSIS
  }
  return out;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    return std::string{text};
  }
  std::string q = "\"";
  for (char c : text) {
    if (c == '"') {
      q += '"';
    }
    q += c;
  }
  q += '"';
  return q;
}

namespace {

std::string grouped(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) {
    s.insert(static_cast<std::size_t>(i), ",");
  }
  return s;
}

/// A non-negative double as an integer, saturating (a damaged trace's sums can exceed 2^64).
std::uint64_t to_u64(double v) noexcept {
  if (!(v > 0)) {
    return 0;
  }
  return v >= 18446744073709551615.0 ? UINT64_MAX : static_cast<std::uint64_t>(v);
}

std::string grouped(double v) {
  auto const whole = to_u64(v);
  auto tenth = whole == UINT64_MAX
                   ? 0
                   : static_cast<int>(std::llround((v - static_cast<double>(whole)) * 10.0));
  std::uint64_t w = whole;
  if (tenth == 10) {
    ++w;
    tenth = 0;
  }
  return grouped(w) + "." + std::to_string(tenth);
}

/// Statistics of a set of values (sorted in place).
struct value_stats {
  double total = 0;
  std::size_t n = 0;
  double avg = 0;
  double med = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
  double stddev = 0;
};

value_stats stats_of(std::vector<std::int64_t>& d) {
  value_stats s;
  std::sort(d.begin(), d.end());
  s.n = d.size();
  if (s.n == 0) {
    return s;
  }
  for (auto v : d) {
    s.total += static_cast<double>(v);
  }
  s.avg = s.total / static_cast<double>(s.n);
  s.med = stats::median_sorted(d);
  double var = 0;
  for (auto v : d) {
    var += (static_cast<double>(v) - s.avg) * (static_cast<double>(v) - s.avg);
  }
  s.stddev = s.n > 1 ? std::sqrt(var / static_cast<double>(s.n - 1)) : 0.0;
  s.min = d.front();
  s.max = d.back();
  return s;
}

std::string u(std::int64_t v) {
  return grouped(static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)));
}

/// One table: header, rows of cells (already text), which columns are left-aligned, and which
/// column holds a name (shown escaped and cut in the table, RFC 4180-quoted in CSV).
struct table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> left;
  std::vector<std::vector<std::string>> csv_rows;  // same rows, CSV cell text
};

void print_table(std::FILE* out, table const& t, bool csv, std::size_t name_width,
                 bool first_table) {
  if (csv) {
    if (!first_table) {
      fmt::print(out, "\n# {}\n", t.title);
    }
    std::string line;
    for (std::size_t i = 0; i < t.header.size(); ++i) {
      line += (i != 0 ? "," : "") + t.header[i];
    }
    fmt::print(out, "{}\n", line);
    for (auto const& r : t.csv_rows) {
      line.clear();
      for (std::size_t i = 0; i < r.size(); ++i) {
        line += (i != 0 ? "," : "") + csv_field(r[i]);
      }
      fmt::print(out, "{}\n", line);
    }
    return;
  }
  auto const cols = t.header.size();
  std::vector<std::vector<std::string>> cells;
  cells.push_back(t.header);
  for (auto const& r : t.rows) {
    std::vector<std::string> c = r;
    for (std::size_t i = 0; i < cols; ++i) {
      if (t.left[i]) {
        c[i] = display_name(c[i], name_width);
      }
    }
    cells.push_back(std::move(c));
  }
  // Width in columns (code points), not bytes: names may be UTF-8.
  auto columns = [](std::string const& s) {
    std::size_t n = 0;
    for (char c : s) {
      n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U;
    }
    return n;
  };
  std::vector<std::size_t> width(cols, 0);
  for (auto const& c : cells) {
    for (std::size_t i = 0; i < cols; ++i) {
      width[i] = std::max(width[i], columns(c[i]));
    }
  }
  fmt::print(out, "\n ** {}:\n\n", t.title);
  auto line = [&](std::vector<std::string> const& c) {
    std::string s;
    for (std::size_t i = 0; i < cols; ++i) {
      std::string pad(width[i] - columns(c[i]), ' ');
      s += " " + (t.left[i] ? c[i] + pad : pad + c[i]) + " ";
    }
    while (!s.empty() && s.back() == ' ') {
      s.pop_back();
    }
    fmt::print(out, "{}\n", s);
  };
  line(cells[0]);
  std::vector<std::string> rule(cols);
  for (std::size_t i = 0; i < cols; ++i) {
    rule[i] = std::string(width[i], '-');
  }
  line(rule);
  for (std::size_t i = 1; i < cells.size(); ++i) {
    line(cells[i]);
  }
}

struct op_time {
  std::int64_t start;
  std::int64_t end;
};

struct api_call {
  std::int64_t start;
  std::int64_t end;
  std::uint32_t correlation;
};

struct projected {
  std::size_t row;  // index into proj rows
  std::int64_t start;
  std::int64_t end;
  std::int64_t proj;
  std::int64_t range_time;
  std::uint64_t ops;
  int level = 0;
  int children = 0;
};

struct proj_row {
  std::string name;
  char const* style;
  std::vector<std::int64_t> proj;
  std::int64_t range_total = 0;
  std::uint64_t ops = 0;
  std::uint64_t level_sum = 0;
  std::uint64_t child_sum = 0;
};

/// cuda_gpu_kern_sum and cuda_gpu_mem_time_sum share a layout but for the count's name.
table by_name(std::map<std::string, std::vector<std::int64_t>> const& src, std::string title,
              char const* count, char const* name) {
  table t;
  t.title = std::move(title);
  t.header = {"Time (%)", "Total Time (ns)", count,         "Avg (ns)", "Med (ns)",
              "Min (ns)", "Max (ns)",        "StdDev (ns)", name};
  t.left = {false, false, false, false, false, false, false, false, true};
  std::vector<std::pair<value_stats, std::string>> rows;
  double all = 0;
  for (auto const& [key, values] : src) {
    auto v = values;
    rows.emplace_back(stats_of(v), key);
    all += rows.back().first.total;
  }
  std::stable_sort(rows.begin(), rows.end(), [](auto const& a, auto const& b) {
    return a.first.total != b.first.total ? a.first.total > b.first.total : a.second < b.second;
  });
  for (auto const& [s, key] : rows) {
    double const pct = all > 0 ? 100.0 * s.total / all : 0.0;
    auto const total = to_u64(s.total);
    t.rows.push_back({fmt::format("{:.1f}", pct), grouped(total), grouped(std::uint64_t{s.n}),
                      grouped(s.avg), grouped(s.med), u(s.min), u(s.max), grouped(s.stddev), key});
    t.csv_rows.push_back({fmt::format("{:.1f}", pct), std::to_string(total), std::to_string(s.n),
                          fmt::format("{:.1f}", s.avg), fmt::format("{:.1f}", s.med),
                          std::to_string(s.min), std::to_string(s.max),
                          fmt::format("{:.1f}", s.stddev), key});
  }
  return t;
}

}  // namespace

struct summary_sink::impl {
  name_grouping grouping;  // numbered range names into series (--group, --group-digits)

  struct row {
    std::string domain;
    std::string name;
    bool push_pop;
    std::vector<std::int64_t> durations;
  };
  std::vector<row> rows;
  std::unordered_map<std::string, std::size_t> row_index;
  std::string range_key;  // on_range's lookup key, its capacity kept: no allocation a range

  // GPU (whole trace): kernel durations by name, memory operation durations by name.
  std::map<std::string, std::vector<std::int64_t>> kernels;
  std::map<std::string, std::vector<std::int64_t>> memops;
  bool gpu = false;

  // Projection, per process: GPU operations by correlation, runtime calls by thread.
  std::unordered_map<std::uint32_t, std::vector<op_time>> ops;
  std::unordered_map<std::uint64_t, std::vector<api_call>> calls;
  bool calls_sorted = false;
  std::map<std::uint64_t, std::vector<projected>> projected_by_tid;
  std::vector<proj_row> proj_rows;
  std::unordered_map<std::string, std::size_t> proj_index;

  // Ranges' GPU-side instances in CUDA graph launches (graph_range_info), by "domain:name".
  struct graph_row {
    std::vector<std::int64_t> spans;
    std::uint64_t kernels = 0;
    std::uint64_t memcpys = 0;
    std::uint64_t memsets = 0;
  };
  std::map<std::string, graph_row> graph_rows;
  /// --cuda-graph-trace=graph: launch durations by "CUDA graph <id>"; node: graph node work seen.
  std::map<std::string, std::vector<std::int64_t>> graph_launches;
  std::uint64_t graph_nodes = 0;

  // --cuda-sample (model/gpu_detail.hpp): the periods' ranges, and the time the sampled
  // processes' traces cover (from each one's first range to its end).
  struct sampling {
    std::uint64_t periods = 0;
    std::uint64_t raised = 0;
    std::int64_t detail_ns = 0;
    std::int64_t span_ns = 0;
    std::uint64_t left_out = 0;
    std::string switches;  // the last process's "<n on>:<median ns>:<n off>:<median ns>"
    bool any = false;
    bool process = false;  // the process being read was sampled
    std::int64_t process_first = INT64_MAX;
  } sampled;

  /// " (sampled periods only: 9.8% of the time)" for the GPU tables' titles, "" unsampled.
  [[nodiscard]] std::string coverage() const {
    if (!sampled.any) {
      return {};
    }
    return fmt::format(" - GPU detail in sampled periods only ({:.1f}% of the time)", share());
  }
  [[nodiscard]] double share() const {
    return sampled.span_ns > 0 ? 100.0 * static_cast<double>(sampled.detail_ns) /
                                     static_cast<double>(sampled.span_ns)
                               : 0.0;
  }

  /// nvtx_sum.
  [[nodiscard]] table nvtx_table() {
    table t;
    t.title = "NVTX Range Summary (nvtxpp-capture; nsys nvtx_sum layout)";
    t.header = {"Time (%)", "Total Time (ns)", "Instances",   "Avg (ns)", "Med (ns)",
                "Min (ns)", "Max (ns)",        "StdDev (ns)", "Style",    "Range"};
    t.left = {false, false, false, false, false, false, false, false, true, true};
    struct r {
      value_stats s;
      char const* style;
      std::string range;
    };
    std::vector<r> sorted;
    double all = 0;
    for (auto& s : rows) {
      sorted.push_back(
          {stats_of(s.durations), s.push_pop ? "PushPop" : "StartEnd", s.domain + ":" + s.name});
      all += sorted.back().s.total;
    }
    std::stable_sort(sorted.begin(), sorted.end(), [](r const& a, r const& b) {
      return a.s.total != b.s.total ? a.s.total > b.s.total : a.range < b.range;
    });
    for (auto const& x : sorted) {
      double const pct = all > 0 ? 100.0 * x.s.total / all : 0.0;
      auto const total = to_u64(x.s.total);
      t.rows.push_back({fmt::format("{:.1f}", pct), grouped(total), grouped(std::uint64_t{x.s.n}),
                        grouped(x.s.avg), grouped(x.s.med), u(x.s.min), u(x.s.max),
                        grouped(x.s.stddev), x.style, x.range});
      t.csv_rows.push_back(
          {fmt::format("{:.1f}", pct), std::to_string(total), std::to_string(x.s.n),
           fmt::format("{:.1f}", x.s.avg), fmt::format("{:.1f}", x.s.med), std::to_string(x.s.min),
           std::to_string(x.s.max), fmt::format("{:.1f}", x.s.stddev), x.style, x.range});
    }
    return t;
  }

  /// nvtx_gpu_proj_sum.
  [[nodiscard]] table projection_table() {
    table p;
    p.title = "NVTX GPU Projection Summary (nsys nvtx_gpu_proj_sum layout)" + coverage();
    p.header = {"Range",
                "Style",
                "Total Proj Time (ns)",
                "Total Range Time (ns)",
                "Range Instances",
                "Proj Avg (ns)",
                "Proj Med (ns)",
                "Proj Min (ns)",
                "Proj Max (ns)",
                "Proj StdDev (ns)",
                "Total GPU Ops",
                "Avg GPU Ops",
                "Avg Range Lvl",
                "Avg Num Child"};
    p.left = {true,  true,  false, false, false, false, false,
              false, false, false, false, false, false, false};
    struct pr {
      value_stats s;
      proj_row const* row;
    };
    std::vector<pr> prs;
    for (auto& pr_row : proj_rows) {
      auto v = pr_row.proj;
      prs.push_back({stats_of(v), &pr_row});
    }
    std::stable_sort(prs.begin(), prs.end(), [](pr const& a, pr const& b) {
      return a.s.total != b.s.total ? a.s.total > b.s.total : a.row->name < b.row->name;
    });
    for (auto const& x : prs) {
      auto const n = static_cast<double>(x.s.n);
      auto const avg_ops = static_cast<double>(x.row->ops) / n;
      auto const lvl = static_cast<double>(x.row->level_sum) / n;
      auto const child = static_cast<double>(x.row->child_sum) / n;
      auto const total = to_u64(x.s.total);
      p.rows.push_back({x.row->name, x.row->style, grouped(total), u(x.row->range_total),
                        grouped(std::uint64_t{x.s.n}), grouped(x.s.avg), grouped(x.s.med),
                        u(x.s.min), u(x.s.max), grouped(x.s.stddev), grouped(x.row->ops),
                        grouped(avg_ops), grouped(lvl), grouped(child)});
      p.csv_rows.push_back(
          {x.row->name, x.row->style, std::to_string(total), std::to_string(x.row->range_total),
           std::to_string(x.s.n), fmt::format("{:.1f}", x.s.avg), fmt::format("{:.1f}", x.s.med),
           std::to_string(x.s.min), std::to_string(x.s.max), fmt::format("{:.1f}", x.s.stddev),
           std::to_string(x.row->ops), fmt::format("{:.1f}", avg_ops), fmt::format("{:.1f}", lvl),
           fmt::format("{:.1f}", child)});
    }
    return p;
  }

  /// Ranges in CUDA graph launches: one instance per range and launch (nvtxpp-capture's own).
  [[nodiscard]] table graph_range_table() {
    table g;
    g.title =
        "NVTX Ranges in CUDA Graph Launches (nvtxpp-capture: GPU side of capture-time "
        "ranges)";
    g.header = {"Range",     "Total GPU Time (ns)",
                "Instances", "Avg (ns)",
                "Med (ns)",  "Min (ns)",
                "Max (ns)",  "Kernels",
                "Memcpys",   "Memsets"};
    g.left = {true, false, false, false, false, false, false, false, false, false};
    std::vector<std::pair<value_stats, std::pair<std::string, graph_row const*>>> sorted;
    for (auto const& [name, g_row] : graph_rows) {
      auto v = g_row.spans;
      sorted.push_back({stats_of(v), {name, &g_row}});
    }
    std::stable_sort(sorted.begin(), sorted.end(), [](auto const& a, auto const& b) {
      return a.first.total != b.first.total ? a.first.total > b.first.total
                                            : a.second.first < b.second.first;
    });
    for (auto const& [st, named] : sorted) {
      auto const& [name, g_row] = named;
      auto const total = to_u64(st.total);
      g.rows.push_back({name, grouped(total), grouped(std::uint64_t{st.n}), grouped(st.avg),
                        grouped(st.med), u(st.min), u(st.max), grouped(g_row->kernels),
                        grouped(g_row->memcpys), grouped(g_row->memsets)});
      g.csv_rows.push_back({name, std::to_string(total), std::to_string(st.n),
                            fmt::format("{:.1f}", st.avg), fmt::format("{:.1f}", st.med),
                            std::to_string(st.min), std::to_string(st.max),
                            std::to_string(g_row->kernels), std::to_string(g_row->memcpys),
                            std::to_string(g_row->memsets)});
    }
    return g;
  }

  /// The lines after the tables: graph work listed node by node, the warnings.
  void print_notes(std::FILE* out, read_totals const& totals,
                   summary_options const& options) const {
    bool const csv = options.csv;
    if (sampled.any) {
      fmt::print(out,
                 "\n{}GPU detail was sampled (--cuda-sample): {} period(s){}, {:.3f} s of the "
                 "{:.3f} s the trace covers ({:.1f}%). The GPU tables (projection, kernels, "
                 "memory) cover those periods only; NVTX ranges cover the whole trace. {} GPU "
                 "record(s) whose launching call started outside a period were left out "
                 "(docs/leave-it-on-gpu.md, the edge rule)\n",
                 csv ? "# " : " ** ", sampled.periods,
                 sampled.raised != 0 ? fmt::format(" ({} raised by a dump)", sampled.raised) : "",
                 static_cast<double>(sampled.detail_ns) / 1e9,
                 static_cast<double>(sampled.span_ns) / 1e9, share(), sampled.left_out);
      unsigned long long on_n = 0, off_n = 0;
      long long on_ns = 0, off_ns = 0;
      if (std::sscanf(sampled.switches.c_str(), "%llu:%lld:%llu:%lld", &on_n, &on_ns, &off_n,
                      &off_ns) == 4 &&
          on_n + off_n != 0) {
        fmt::print(out,
                   "{}CUPTI's switches (the last process): on {} time(s), median {:.1f} us; off "
                   "{} time(s), median {:.1f} us\n",
                   csv ? "# " : " ** ", on_n, static_cast<double>(on_ns) / 1e3, off_n,
                   static_cast<double>(off_ns) / 1e3);
      }
    }
    if (graph_nodes != 0) {
      // Why these tables and Nsight Systems' defaults differ on graph programs (docs/graphs.md).
      fmt::print(out,
                 "\n{}{} operation(s) of CUDA graph launches are listed node by node "
                 "(--cuda-graph-trace=node, the default here); Nsight Systems' default "
                 "(--cuda-graph-trace=graph) leaves them out of its kernel and memory reports\n",
                 csv ? "# " : " ** ", graph_nodes);
    }
    std::uint64_t total_warnings = 0;
    for (auto const& [kind, n] : totals.warning_counts) {
      total_warnings += n;
    }
    if (total_warnings != 0) {
      fmt::print(out, "\n{}Warnings ({}):", csv ? "# " : " ** ", total_warnings);
      for (auto const& [kind, n] : totals.warning_counts) {
        fmt::print(out, " {}={}", kind, n);
      }
      std::fputs("\n", out);
      std::size_t shown = 0;
      for (auto const& w : totals.warnings) {
        if (shown++ == options.max_warning_lines) {
          break;
        }
        // Warnings quote names: escape them as the table does (a name may hold a newline).
        fmt::print(out, "{}{}\n", csv ? "# " : "    ", display_name(w, SIZE_MAX / 2));
      }
      if (total_warnings > totals.warnings.size()) {
        fmt::print(out, "{}... and {} more\n", csv ? "# " : "    ",
                   total_warnings - totals.warnings.size());
      }
    }
  }

  void op(std::uint32_t correlation, std::int64_t start, std::int64_t end) {
    gpu = true;
    if (correlation != 0) {
      ops[correlation].push_back({start, end});
    }
  }

  void project(range_info const& r, std::string_view name) {
    if (!calls_sorted) {
      for (auto& [tid, v] : calls) {
        std::sort(v.begin(), v.end(),
                  [](api_call const& a, api_call const& b) { return a.start < b.start; });
      }
      calls_sorted = true;
    }
    auto it = calls.find(r.tid);
    if (it == calls.end()) {
      return;
    }
    auto const& v = it->second;
    auto c = std::lower_bound(v.begin(), v.end(), r.start_ns,
                              [](api_call const& a, std::int64_t t) { return a.start < t; });
    std::int64_t lo = INT64_MAX;
    std::int64_t hi = INT64_MIN;
    std::uint64_t n = 0;
    for (; c != v.end() && c->start <= r.end_ns; ++c) {
      if (c->end > r.end_ns) {
        continue;
      }
      auto o = ops.find(c->correlation);
      if (o == ops.end()) {
        continue;
      }
      ++n;
      for (auto const& t : o->second) {
        lo = std::min(lo, t.start);
        hi = std::max(hi, t.end);
      }
    }
    if (n == 0) {
      return;
    }
    std::string key = fmt::format("{}:{}", r.attr.domain_name, name);
    char const* style = r.style == range_style::push_pop ? "PushPop" : "StartEnd";
    auto [ix, fresh] = proj_index.try_emplace(std::string{style} + '\x1F' + key, proj_rows.size());
    if (fresh) {
      proj_rows.push_back({key, style, {}, 0, 0, 0, 0});
    }
    projected_by_tid[r.tid].push_back(
        {ix->second, r.start_ns, r.end_ns, hi - lo, r.end_ns - r.start_ns, n});
  }
};

summary_sink::summary_sink() : d_{std::make_unique<impl>()} {}
summary_sink::~summary_sink() = default;

void summary_sink::begin_process(process_info const&) {
  d_->sampled.process = false;
  d_->sampled.process_first = INT64_MAX;
  d_->ops.clear();
  d_->calls.clear();
  d_->calls_sorted = false;
  d_->projected_by_tid.clear();
}

void summary_sink::set_grouping(name_grouping grouping) { d_->grouping = std::move(grouping); }

void summary_sink::on_range(range_info const& r) {
  bool const push_pop = r.style == range_style::push_pop;
  d_->sampled.process_first = std::min(d_->sampled.process_first, r.start_ns);
  if (is_gpu_detail_range(r.attr.domain_name, r.name)) {
    d_->sampled.any = d_->sampled.process = true;
    ++d_->sampled.periods;
    d_->sampled.raised += r.name == gpu_detail_raised ? 1 : 0;
    d_->sampled.detail_ns += r.end_ns - r.start_ns;
  }
  std::string grouped;
  std::string_view grouped_name = r.name;
  if (d_->grouping.active()) {
    grouped = d_->grouping.group_of(r.name);
    grouped_name = grouped;
  }
  // By domain name, not index: pooled processes number their domains each their own way. (Built
  // in place, not formatted: this runs for every range of the trace.)
  std::string& key = d_->range_key;
  key.clear();
  key += push_pop ? 'P' : 'S';
  key += '\x1F';
  key += r.attr.domain_name;
  key += '\x1F';
  key += grouped_name;
  auto it = d_->row_index.find(key);
  if (it == d_->row_index.end()) {
    it = d_->row_index.emplace(key, d_->rows.size()).first;
    d_->rows.push_back({std::string{r.attr.domain_name}, std::string{grouped_name}, push_pop, {}});
  }
  d_->rows[it->second].durations.push_back(r.end_ns - r.start_ns);
  // nsys projects the ranges that start and end on one thread.
  if (!d_->ops.empty() && r.tid == r.end_tid) {
    d_->project(r, grouped_name);
  }
}

void summary_sink::on_kernel(kernel_info const& k) {
  d_->graph_nodes += k.graph_node != 0 ? 1 : 0;
  d_->kernels[std::string{k.demangled}].push_back(k.raw.end - k.raw.start);
  d_->op(k.raw.correlation, k.raw.start, k.raw.end);
}

void summary_sink::on_memcpy(memcpy_info const& m) {
  d_->graph_nodes += m.graph_node != 0 ? 1 : 0;
  d_->memops[fmt::format("[CUDA memcpy {}]", memcpy_kind_name(m.raw.copy_kind))].push_back(
      m.raw.end - m.raw.start);
  d_->op(m.raw.correlation, m.raw.start, m.raw.end);
}

void summary_sink::on_memset(memset_info const& m) {
  d_->graph_nodes += m.graph_node != 0 ? 1 : 0;
  d_->memops["[CUDA memset]"].push_back(m.raw.end - m.raw.start);
  d_->op(m.raw.correlation, m.raw.start, m.raw.end);
}

void summary_sink::on_graph_range(graph_range_info const& g) {
  auto& row = d_->graph_rows[std::string{g.domain_name} + ":" + std::string{g.name}];
  row.spans.push_back(g.end_ns - g.start_ns);
  row.kernels += g.kernels;
  row.memcpys += g.memcpys;
  row.memsets += g.memsets;
}

void summary_sink::on_graph_launch(graph_launch_info const& g) {
  d_->gpu = true;
  d_->graph_launches[fmt::format("CUDA graph {}", g.graph)].push_back(g.end_ns - g.start_ns);
}

void summary_sink::on_api(api_info const& a) {
  // As nsys: projection through the call that launched the work, runtime or driver (a driver
  // call the runtime made inside its own is not one: launch_index.hpp).
  if (!a.nested) {
    d_->calls[a.raw.tid].push_back({a.raw.start, a.raw.end, a.raw.correlation});
  }
}

void summary_sink::on_gpu_info(gpu_info const& g) {
  if (g.key == "gpu_sample") {
    d_->sampled.any = d_->sampled.process = true;  // sampled, whether or not a period came
  } else if (g.key == "gpu_detail_left_out") {
    d_->sampled.left_out += std::strtoull(std::string{g.value}.c_str(), nullptr, 10);
  } else if (g.key == "gpu_detail_switch_ns") {
    d_->sampled.switches = std::string{g.value};
  }
}

void summary_sink::end_process(process_info const& process) {
  if (d_->sampled.process && d_->sampled.process_first != INT64_MAX &&
      process.end_ns > d_->sampled.process_first) {
    d_->sampled.span_ns += process.end_ns - d_->sampled.process_first;
  }
  // Nesting among the projected ranges of each thread: a range containing a projected range
  // contains its runtime calls, so it is projected too; the tree over projected ranges is the
  // tree over all ranges, restricted.
  for (auto& [tid, v] : d_->projected_by_tid) {
    std::sort(v.begin(), v.end(), [](projected const& a, projected const& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<std::size_t> stack;
    for (std::size_t i = 0; i < v.size(); ++i) {
      while (!stack.empty() && v[stack.back()].end < v[i].end) {
        stack.pop_back();
      }
      v[i].level = static_cast<int>(stack.size());
      if (!stack.empty()) {
        ++v[stack.back()].children;
      }
      stack.push_back(i);
    }
    for (auto const& p : v) {
      auto& row = d_->proj_rows[p.row];
      row.proj.push_back(p.proj);
      // Saturates: the reader bounds each time to 2^62 ns, not a sum of many.
      row.range_total =
          p.range_time > INT64_MAX - row.range_total ? INT64_MAX : row.range_total + p.range_time;
      row.ops += p.ops;
      row.level_sum += static_cast<std::uint64_t>(p.level);
      row.child_sum += static_cast<std::uint64_t>(p.children);
    }
  }
  d_->projected_by_tid.clear();
  d_->ops.clear();
  d_->calls.clear();
}

void summary_sink::print(std::FILE* out, read_totals const& totals,
                         summary_options const& options) const {
  bool const csv = options.csv;
  std::vector<table> tables;
  tables.push_back(d_->nvtx_table());
  if (d_->gpu) {
    tables.push_back(d_->projection_table());
    if (!d_->graph_rows.empty()) {
      tables.push_back(d_->graph_range_table());
    }
    tables.push_back(by_name(
        d_->kernels, "CUDA GPU Kernel Summary (nsys cuda_gpu_kern_sum layout)" + d_->coverage(),
        "Instances", "Name"));
    tables.push_back(by_name(
        d_->memops,
        "CUDA GPU MemOps Summary (by Time) (nsys cuda_gpu_mem_time_sum layout)" + d_->coverage(),
        "Count", "Operation"));
    if (!d_->graph_launches.empty()) {
      tables.push_back(by_name(d_->graph_launches,
                               "CUDA Graph Launches (--cuda-graph-trace=graph: each launch as one "
                               "operation, its nodes in no table above)",
                               "Launches", "Graph"));
    }
  }
  for (std::size_t i = 0; i < tables.size(); ++i) {
    print_table(out, tables[i], csv, options.name_width, i == 0);
    if (i == 0 && !csv && d_->rows.empty()) {
      std::fputs("\n (no NVTX ranges recorded)\n", out);
    }
  }

  d_->print_notes(out, totals, options);
}

// ------------------------------------------------------------------------------------------------
// Totals for merge's cross-rank summary, and the table printer for its tables.

std::vector<summary_sink::range_total> summary_sink::range_totals() const {
  std::vector<range_total> out;
  out.reserve(d_->rows.size());
  for (auto const& r : d_->rows) {
    std::int64_t total = 0;
    std::int64_t longest = 0;
    for (auto v : r.durations) {
      total = v > INT64_MAX - total ? INT64_MAX : total + v;
      longest = std::max(longest, v);
    }
    out.push_back({r.domain + ":" + r.name, r.push_pop, r.durations.size(), total, longest});
  }
  return out;
}

std::vector<summary_sink::range_total> summary_sink::projection_totals() const {
  std::vector<range_total> out;
  out.reserve(d_->proj_rows.size());
  for (auto const& r : d_->proj_rows) {
    std::int64_t total = 0;
    std::int64_t longest = 0;
    for (auto v : r.proj) {
      total = v > INT64_MAX - total ? INT64_MAX : total + v;
      longest = std::max(longest, v);
    }
    out.push_back({r.name, std::string_view{r.style} == "PushPop", r.proj.size(), total, longest});
  }
  return out;
}

bool summary_sink::has_gpu() const noexcept { return d_->gpu; }

double summary_sink::gpu_sampled_share() const noexcept {
  return d_->sampled.any ? d_->share() : -1.0;
}

std::vector<summary_sink::item_instances> summary_sink::instances() const {
  std::vector<item_instances> out;
  for (auto const& r : d_->rows) {
    out.push_back({item_kind::range, r.domain + ":" + r.name, r.push_pop ? "PushPop" : "StartEnd",
                   &r.durations});
  }
  for (auto const& r : d_->proj_rows) {
    out.push_back({item_kind::projection, r.name, r.style, &r.proj});
  }
  for (auto const& [name, v] : d_->kernels) {
    out.push_back({item_kind::kernel, name, "", &v});
  }
  for (auto const& [name, v] : d_->memops) {
    out.push_back({item_kind::memory, name, "", &v});
  }
  return out;
}

void print_text_table(std::FILE* out, text_table const& t, bool csv, std::size_t name_width,
                      bool first_table) {
  table tt{t.title, t.header, t.rows, t.left, t.csv_rows};
  print_table(out, tt, csv, name_width, first_table);
}

}  // namespace nvtxpp::capture
