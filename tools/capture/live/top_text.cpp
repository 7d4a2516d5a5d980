// What `nvtxpp-capture top` prints (top_text.hpp).

#include "top_text.hpp"

#include "../analyses/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

namespace nvtxpp::capture::live {

namespace {

/// Columns a text takes: its UTF-8 code points (display_name's output is valid UTF-8).
std::size_t columns_of(std::string_view s) {
  std::size_t n = 0;
  for (char c : s) {
    n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1U : 0U;
  }
  return n;
}

/// `s` cut to `width` columns ("…" at the cut), or padded to it with spaces (`pad`).
std::string fit(std::string const& s, std::size_t width, bool pad = true) {
  std::string out = display_name(s, width);
  if (pad) {
    out.append(width - std::min(width, columns_of(out)), ' ');
  }
  return out;
}

std::string range_label(live_row const& r) {
  return r.domain.empty() ? r.name : r.domain + ":" + r.name;
}

std::string format_pct(double pct) { return fmt::format("{:.1f}", pct); }

std::string format_rate(double per_s) {
  if (per_s >= 1e7) {
    return fmt::format("{:.1f}M", per_s / 1e6);
  }
  return per_s >= 1e4 ? fmt::format("{:.0f}", per_s) : fmt::format("{:.1f}", per_s);
}

std::string format_uptime(double seconds) {
  auto const s = static_cast<long long>(std::max(0.0, seconds));
  return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}

/// The GPU detail state; sampled, with the share of the window its periods cover.
std::string gpu_words(live_snapshot const& snap) {
  std::string words = snap.gpu_state;
  if (snap.gpu_state == "sampled" || snap.gpu_state == "raised") {
    words += fmt::format(" {:.0f}%", 100 * snap.gpu_covered);
  }
  return snap.gpu_stale ? words + ", stale" : words;
}

/// JSON string contents: quotes, backslashes and control characters escaped; bytes that are
/// not UTF-8 become U+FFFD (a name is the program's bytes, JSON must stay valid).
std::string json_string(std::string_view s) {
  std::string out = "\"";
  auto const* p = reinterpret_cast<unsigned char const*>(s.data());
  auto const* const end = p + s.size();
  while (p < end) {
    unsigned char const c = *p;
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++p;
    } else if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
      ++p;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++p;
    } else {
      std::size_t const n = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
      bool ok = n > 0 && static_cast<std::size_t>(end - p) >= n;
      for (std::size_t i = 1; ok && i < n; ++i) {
        ok = (p[i] & 0xC0U) == 0x80U;
      }
      if (ok) {
        out.append(reinterpret_cast<char const*>(p), n);
        p += n;
      } else {
        out += "\\ufffd";
        ++p;
      }
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : std::string{"null"};
}

/// Nanoseconds as a whole number (no exponent: 21384500, not 2.13845e+07).
std::string json_ns(double v) {
  return std::isfinite(v) ? fmt::format("{:.0f}", v) : std::string{"null"};
}

}  // namespace

char const* to_string(sort_key k) noexcept {
  switch (k) {
    case sort_key::total:
      return "total";
    case sort_key::self:
      return "self";
    case sort_key::p99:
      return "p99";
    case sort_key::calls:
      return "calls";
    case sort_key::name:
      return "name";
  }
  return "total";
}

bool parse_sort_key(std::string_view text, sort_key* out) noexcept {
  for (sort_key k :
       {sort_key::total, sort_key::self, sort_key::p99, sort_key::calls, sort_key::name}) {
    if (text == to_string(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

std::string set_filter(view_options& v, std::string const& text) {
  if (text.empty()) {
    v.filter.clear();
    v.pattern.reset();
    return {};
  }
  try {
    // A word without wildcards finds the names that hold it (as top's and htop's filters do).
    v.pattern = std::make_shared<name_pattern const>(has_wildcards(text) ? text : "*" + text + "*");
    v.filter = text;
  } catch (std::invalid_argument const& e) {
    return e.what();
  }
  return {};
}

view_rows select_rows(live_snapshot const& snap, view_options const& v) {
  view_rows out;
  std::vector<live_row const*> rows;
  for (auto const& r : snap.rows) {
    if (v.pattern && !r.other && !v.pattern->matches(r.name) &&
        !v.pattern->matches(range_label(r))) {
      ++out.filtered;
      continue;
    }
    rows.push_back(&r);
  }
  auto const by = [&v](live_row const* a, live_row const* b) {
    switch (v.sort) {
      case sort_key::self:
        if (a->self_ns != b->self_ns) {
          return a->self_ns > b->self_ns;
        }
        break;
      case sort_key::p99:
        if (a->p99_ns != b->p99_ns) {
          return a->p99_ns > b->p99_ns;
        }
        break;
      case sort_key::calls:
        if (a->calls != b->calls) {
          return a->calls > b->calls;
        }
        break;
      case sort_key::name:
        if (a->name != b->name) {
          return a->name < b->name;
        }
        break;
      case sort_key::total:
        break;
    }
    if (a->total_ns != b->total_ns) {
      return a->total_ns > b->total_ns;
    }
    return std::tie(a->name, a->thread) < std::tie(b->name, b->thread);
  };
  std::stable_sort(rows.begin(), rows.end(), by);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i < v.max_rows) {
      out.shown.push_back(rows[i]);
    } else {
      ++out.more;
      out.more_total_pct += rows[i]->total_pct;
    }
  }
  return out;
}

std::string format_duration(double ns) {
  if (!(ns > 0)) {
    return "-";
  }
  if (ns < 1e3) {
    return fmt::format("{:.0f}ns", ns);
  }
  double const us = ns / 1e3;
  if (us < 1e3) {
    return us < 10    ? fmt::format("{:.2f}us", us)
           : us < 100 ? fmt::format("{:.1f}us", us)
                      : fmt::format("{:.0f}us", us);
  }
  double const ms = ns / 1e6;
  if (ms < 1e3) {
    return ms < 10    ? fmt::format("{:.2f}ms", ms)
           : ms < 100 ? fmt::format("{:.1f}ms", ms)
                      : fmt::format("{:.0f}ms", ms);
  }
  double const s = ns / 1e9;
  return s < 100 ? fmt::format("{:.2f}s", s) : fmt::format("{:.0f}s", s);
}

std::string format_trend(live_row const& r) {
  if (r.fresh) {
    return "new";
  }
  if (!std::isfinite(r.trend)) {
    return "";
  }
  double const pct = 100 * r.trend;
  if (std::fabs(pct) < 0.5) {
    return "0%";
  }
  return std::fabs(pct) >= 999 ? (pct > 0 ? ">+999%" : "-99%") : fmt::format("{:+.0f}%", pct);
}

std::vector<std::string> header_lines(program_state const& p, live_snapshot const& snap,
                                      view_options const& v, std::size_t width) {
  double const up = static_cast<double>(snap.end_ns - p.start_ns) / 1e9;
  std::string first = fmt::format("nvtxpp-capture top  pid {}  up {}{}  ", p.pid,
                                  format_uptime(p.start_ns > 0 ? up : 0), p.ended ? "  ended" : "");
  first += p.command.empty() ? "(command unknown)" : p.command;
  // The view's state first: it must survive a narrow terminal's cut.
  std::string second = fmt::format(
      "sort {}{}  window {:.1f}s  {} ranges/s  dropped {}{}  GPU {}", to_string(v.sort),
      v.filter.empty() ? std::string{} : "  filter " + v.filter, snap.seconds,
      format_rate(snap.ranges_per_s), p.dropped,
      p.lapped_bytes > 0 ? fmt::format(" (+{} KiB unread)", p.lapped_bytes / 1024) : std::string{},
      gpu_words(snap));
  return {fit(first, width, false), fit(second, width, false)};
}

std::vector<std::string> table_lines(live_snapshot const& snap, view_rows const& rows,
                                     view_options const& v, std::size_t width) {
  bool const gpu = snap.gpu_state != "off";
  constexpr std::size_t numbers = 53;  // Total% .. Trend, with their spaces
  constexpr std::size_t thread_width = 12;
  std::size_t const gpu_width = gpu ? 6 : 0;
  bool const thread =
      v.by_thread || width >= numbers + gpu_width + thread_width + 1 + 24;  // room for names
  std::size_t const used = numbers + gpu_width + (thread ? thread_width + 1 : 0);
  std::size_t const name_width = width > used + 8 ? width - used : 8;
  std::vector<std::string> out;
  std::string head = fmt::format("{:>6} {:>6} {:>8} {:>7} {:>7} {:>7} {:>5} ", "Total%", "Self%",
                                 "Calls/s", "Mean", "p50", "p99", "Trend");
  if (gpu) {
    head += fmt::format("{:>5} ", "GPU%");
  }
  if (thread) {
    head += fit("Thread", thread_width) + " ";
  }
  head += "Range";
  out.push_back(std::move(head));
  for (live_row const* r : rows.shown) {
    std::string line = fmt::format(
        "{:>6} {:>6} {:>8} {:>7} {:>7} {:>7} {:>5} ", format_pct(r->total_pct),
        format_pct(r->self_pct), format_rate(r->calls_per_s), format_duration(r->mean_ns),
        format_duration(r->p50_ns), format_duration(r->p99_ns), format_trend(*r));
    if (gpu) {
      line += fmt::format("{:>5} ", r->gpu_ns > 0 ? format_pct(r->gpu_pct) : std::string{"-"});
    }
    if (thread) {
      line += fit(r->thread, thread_width) + " ";
    }
    line += fit(range_label(*r) + (r->open ? " (open)" : ""), name_width, false);
    out.push_back(std::move(line));
  }
  if (rows.more > 0) {
    out.push_back(fit(fmt::format("({} more row(s), Total% {} together; sort or filter to see "
                                  "them)",
                                  rows.more, format_pct(rows.more_total_pct)),
                      width, false));
  }
  return out;
}

std::string plain_text(program_state const& p, live_snapshot const& snap, view_options const& v,
                       std::size_t width) {
  std::string out;
  for (auto const& l : header_lines(p, snap, v, width)) {
    out += l + "\n";
  }
  view_rows const rows = select_rows(snap, v);
  for (auto const& l : table_lines(snap, rows, v, width)) {
    out += l + "\n";
  }
  return out;
}

std::string json_text(program_state const& p, live_snapshot const& snap, view_options const& v) {
  view_rows const rows = select_rows(snap, v);
  std::string out = fmt::format(
      "{{\"program\":{},\"pid\":{},\"uptime_s\":{},\"ended\":{},\"window_s\":{},"
      "\"ranges\":{},\"ranges_per_s\":{},\"dropped\":{},\"lapped_bytes\":{},"
      "\"gpu_detail\":{},\"gpu_stale\":{},\"gpu_covered\":{},\"gpu_ops\":{},\"gpu_ns\":{},\"sort\":"
      "{},"
      "\"filter\":{},\"by_thread\":{},\"refresh_ms\":{},\"top_cpu_s\":{},\"rows\":[",
      json_string(p.command), p.pid,
      json_number(p.start_ns > 0 ? static_cast<double>(snap.end_ns - p.start_ns) / 1e9 : 0),
      p.ended ? "true" : "false", json_number(snap.seconds), snap.ranges,
      json_number(snap.ranges_per_s), p.dropped, p.lapped_bytes, json_string(snap.gpu_state),
      snap.gpu_stale ? "true" : "false", json_number(snap.gpu_covered), snap.gpu_ops, snap.gpu_ns,
      json_string(to_string(v.sort)), json_string(v.filter), v.by_thread ? "true" : "false",
      json_number(static_cast<double>(p.refresh_ns) / 1e6), json_number(p.top_cpu_s));
  bool first = true;
  for (live_row const* r : rows.shown) {
    out += first ? "" : ",";
    first = false;
    out += fmt::format(
        "{{\"domain\":{},\"name\":{},\"other\":{},\"thread\":{},\"threads\":{},\"pid\":{},"
        "\"tid\":{},\"total_pct\":{},\"self_pct\":{},\"calls\":{},\"calls_per_s\":{},"
        "\"mean_ns\":{},\"p50_ns\":{},\"p99_ns\":{},\"trend\":{},\"new\":{},\"open\":{},"
        "\"gpu_ns\":{},\"gpu_pct\":{}}}",
        json_string(r->domain), json_string(r->name), r->other ? "true" : "false",
        json_string(r->thread), r->threads, r->pid, r->tid, json_number(r->total_pct),
        json_number(r->self_pct), r->calls, json_number(r->calls_per_s), json_ns(r->mean_ns),
        json_ns(r->p50_ns), json_ns(r->p99_ns), json_number(r->trend), r->fresh ? "true" : "false",
        r->open ? "true" : "false", r->gpu_ns, json_number(r->gpu_pct));
  }
  out += fmt::format("],\"more_rows\":{},\"more_total_pct\":{}}}\n", rows.more,
                     json_number(rows.more_total_pct));
  return out;
}

}  // namespace nvtxpp::capture::live
