// Our Chrome Trace Event JSON back into the trace model (json_reader.hpp).
//
// The parser is small and strict: RFC 8259 values, nesting at most 64 deep, the whole file read
// at once. Each trace event is parsed into a small tree, kept in compact form (times in ns, names
// interned), and dropped; nothing reaches a sink before the whole file has parsed and shown
// itself ours.

#include "json_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace nvtxpp::capture {

namespace {

/// A parsed JSON value. Numbers keep their text (times are read from it exactly).
struct value {
  enum class type : std::uint8_t { null, boolean, number, string, array, object };
  type t = type::null;
  bool b = false;
  std::string text;  // string contents, or a number's text
  std::vector<value> items;
  std::vector<std::pair<std::string, value>> members;

  [[nodiscard]] value const* get(std::string_view key) const {
    for (auto const& [k, v] : members) {
      if (k == key) {
        return &v;
      }
    }
    return nullptr;
  }
  [[nodiscard]] std::string_view str(std::string_view key) const {
    auto const* v = get(key);
    return v != nullptr && v->t == type::string ? std::string_view{v->text} : std::string_view{};
  }
};

constexpr int max_depth = 64;

class parser {
 public:
  parser(std::string_view text, std::string const& path)
      : p_{text.data()}, begin_{text.data()}, end_{text.data() + text.size()}, path_{path} {}

  [[noreturn]] void fail(std::string_view what) const {
    if (p_ >= end_) {
      throw json_input_error(path_ + ": truncated JSON (" + std::string{what} + " at its end)");
    }
    throw json_input_error(
        fmt::format("{}: not valid JSON at byte {}: {}", path_, p_ - begin_, what));
  }

  void ws() noexcept {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
      ++p_;
    }
  }
  bool peek(char c) {
    ws();
    return p_ < end_ && *p_ == c;
  }
  void expect(char c) {
    ws();
    if (p_ >= end_ || *p_ != c) {
      fail(fmt::format("expected '{}'", c));
    }
    ++p_;
  }
  [[nodiscard]] bool at_end() {
    ws();
    return p_ >= end_;
  }

  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (p_ >= end_) {
        fail("unterminated string");
      }
      char const c = *p_++;
      if (c == '"') {
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20U) {
        fail("control character in a string");
      }
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (p_ >= end_) {
        fail("unterminated string");
      }
      char const e = *p_++;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out.push_back(e);
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u':
          unicode(out);
          break;
        default:
          fail("bad escape");
      }
    }
  }

  value parse(int depth = 0) {
    if (depth > max_depth) {
      fail("nested too deeply");
    }
    ws();
    if (p_ >= end_) {
      fail("expected a value");
    }
    value v;
    char const c = *p_;
    if (c == '{') {
      v.t = value::type::object;
      ++p_;
      if (!peek('}')) {
        do {
          auto key = string();
          expect(':');
          v.members.emplace_back(std::move(key), parse(depth + 1));
        } while (comma());
      }
      expect('}');
    } else if (c == '[') {
      v.t = value::type::array;
      ++p_;
      if (!peek(']')) {
        do {
          v.items.push_back(parse(depth + 1));
        } while (comma());
      }
      expect(']');
    } else if (c == '"') {
      v.t = value::type::string;
      v.text = string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.t = value::type::number;
      v.text = number();
    } else if (word("true")) {
      v.t = value::type::boolean;
      v.b = true;
    } else if (word("false")) {
      v.t = value::type::boolean;
    } else if (!word("null")) {
      fail("expected a value");
    }
    return v;
  }

  bool comma() {
    if (peek(',')) {
      ++p_;
      return true;
    }
    return false;
  }

 private:
  bool word(std::string_view w) {
    if (static_cast<std::size_t>(end_ - p_) >= w.size() && std::string_view{p_, w.size()} == w) {
      p_ += w.size();
      return true;
    }
    return false;
  }

  std::string number() {
    char const* const start = p_;
    auto digits = [&] {
      char const* const d = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
        ++p_;
      }
      if (p_ == d) {
        fail("bad number");
      }
    };
    if (*p_ == '-') {
      ++p_;
    }
    digits();
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      digits();
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) {
        ++p_;
      }
      digits();
    }
    return std::string{start, p_};
  }

  unsigned hex4() {
    if (end_ - p_ < 4) {
      fail("bad \\u escape");
    }
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char const h = *p_++;
      v <<= 4U;
      if (h >= '0' && h <= '9') {
        v |= static_cast<unsigned>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        v |= static_cast<unsigned>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        v |= static_cast<unsigned>(h - 'A' + 10);
      } else {
        fail("bad \\u escape");
      }
    }
    return v;
  }

  void unicode(std::string& out) {
    unsigned cp = hex4();
    if (cp >= 0xD800U && cp <= 0xDBFFU && end_ - p_ >= 6 && p_[0] == '\\' && p_[1] == 'u') {
      p_ += 2;
      unsigned const lo = hex4();
      cp = lo >= 0xDC00U && lo <= 0xDFFFU ? 0x10000U + ((cp - 0xD800U) << 10U) + (lo - 0xDC00U)
                                          : 0xFFFDU;
    } else if (cp >= 0xD800U && cp <= 0xDFFFU) {
      cp = 0xFFFDU;
    }
    auto put = [&](unsigned x) { out.push_back(static_cast<char>(x)); };
    if (cp < 0x80U) {
      put(cp);
    } else if (cp < 0x800U) {
      put(0xC0U | (cp >> 6U));
      put(0x80U | (cp & 0x3FU));
    } else if (cp < 0x10000U) {
      put(0xE0U | (cp >> 12U));
      put(0x80U | ((cp >> 6U) & 0x3FU));
      put(0x80U | (cp & 0x3FU));
    } else {
      put(0xF0U | (cp >> 18U));
      put(0x80U | ((cp >> 12U) & 0x3FU));
      put(0x80U | ((cp >> 6U) & 0x3FU));
      put(0x80U | (cp & 0x3FU));
    }
  }

  char const* p_;
  char const* begin_;
  char const* end_;
  std::string const& path_;
};

/// Microseconds as our writer prints them ("1234.567") to nanoseconds, exactly; other number
/// spellings through double.
std::int64_t micros_to_ns(std::string_view t) {
  bool const neg = !t.empty() && t[0] == '-';
  std::string_view s = neg ? t.substr(1) : t;
  if (s.find_first_of("eE") == std::string_view::npos && s.size() < 16) {  // no overflow
    auto const dot = s.find('.');
    std::int64_t whole = 0;
    for (char c : s.substr(0, dot)) {
      whole = whole * 10 + (c - '0');
    }
    std::int64_t frac = 0;
    if (dot != std::string_view::npos) {
      auto const f = s.substr(dot + 1);
      for (std::size_t i = 0; i < 3; ++i) {
        frac = frac * 10 + (i < f.size() ? f[i] - '0' : 0);
      }
      if (f.size() > 3 && f[3] >= '5') {
        ++frac;
      }
    }
    auto const ns = whole * 1000 + frac;
    return neg ? -ns : ns;
  }
  // Other spellings through double, bounded as the recorder bounds times (2^62 ns).
  double const ns = std::strtod(std::string{t}.c_str(), nullptr) * 1000.0;
  constexpr double bound = 4.6e18;
  return std::isnan(ns) ? 0 : std::llround(std::clamp(ns, -bound, bound));
}

std::uint64_t to_u64(value const* v) {
  if (v == nullptr) {
    return 0;
  }
  if (v->t == value::type::number) {
    return std::strtoull(v->text.c_str(), nullptr, 10);
  }
  if (v->t == value::type::string) {
    return std::strtoull(v->text.c_str(), nullptr, 0);  // ids are written as "0x..."
  }
  return 0;
}

std::int64_t time_of(value const& e, char const* key) {
  auto const* v = e.get(key);
  return v != nullptr && v->t == value::type::number ? micros_to_ns(v->text) : 0;
}

/// What the file holds, compact, by process.
struct collected {
  struct range {
    std::uint64_t tid, end_tid;
    std::int64_t start, end;
    range_style style;
    std::uint32_t name, domain;  // interned
  };
  struct op {
    std::int64_t start, end;
    std::uint32_t correlation;
    std::uint32_t name;  // kernel: interned demangled name; memcpy: copy kind
    std::uint64_t tid;   // API calls: the calling thread
  };
  struct process {
    std::vector<range> ranges;
    std::vector<op> kernels, memcpys, memsets, apis;
    struct begin {
      std::uint64_t tid;
      std::int64_t start;
      std::uint32_t name, domain;
    };
    std::map<std::uint64_t, begin> open;  // start/end ranges begun, by id
  };
  std::map<std::uint32_t, process> processes;
  std::vector<std::string> strings;
  std::unordered_map<std::string, std::uint32_t> index;
  bool ours = false;
  std::uint64_t events = 0;

  std::uint32_t intern(std::string_view s) {
    auto [it, fresh] =
        index.try_emplace(std::string{s}, static_cast<std::uint32_t>(strings.size()));
    if (fresh) {
      strings.emplace_back(s);
    }
    return it->second;
  }
};

std::uint8_t copy_kind_of(std::string_view kind) {
  for (unsigned k = 0; k < 32; ++k) {
    if (kind == memcpy_kind_name(static_cast<std::uint8_t>(k))) {
      return static_cast<std::uint8_t>(k);
    }
  }
  return 0;
}

void take_event(collected& c, value const& e) {
  if (e.t != value::type::object) {
    return;
  }
  ++c.events;
  auto const ph = e.str("ph");
  auto const cat = e.str("cat");
  auto const pid = static_cast<std::uint32_t>(to_u64(e.get("pid")));
  auto const tid = to_u64(e.get("tid"));
  value const* args = e.get("args");
  auto arg = [&](char const* k) { return args != nullptr ? args->get(k) : nullptr; };
  auto domain = [&] { return args != nullptr ? args->str("domain") : std::string_view{}; };
  if (ph == "X") {
    std::int64_t const start = time_of(e, "ts");
    std::int64_t const end = start + time_of(e, "dur");
    auto const corr = static_cast<std::uint32_t>(to_u64(arg("correlation")));
    auto& p = c.processes[pid];
    // A range's args hold its domain (its cat is the domain, which may be any name); a range's
    // GPU-side instance in a graph launch holds its launch.
    bool const range = arg("domain") != nullptr && arg("launch") == nullptr;
    if (range) {
      p.ranges.push_back({tid, tid, start, end, range_style::push_pop, c.intern(e.str("name")),
                          c.intern(domain())});
    } else if (cat == "cuda_kernel") {
      p.kernels.push_back({start, end, corr, c.intern(e.str("name")), 0});
    } else if (cat == "cuda_memcpy") {
      std::string_view const kind = args != nullptr ? args->str("kind") : std::string_view{};
      p.memcpys.push_back({start, end, corr, copy_kind_of(kind), 0});
    } else if (cat == "cuda_memset") {
      p.memsets.push_back({start, end, corr, 0, 0});
    } else if (cat == "cuda_api") {
      p.apis.push_back({start, end, corr, 0, tid});
    }
  } else if (ph == "b" || ph == "e") {
    auto& p = c.processes[pid];
    auto const id = to_u64(e.get("id"));
    if (ph == "b") {
      p.open[id] = {tid, time_of(e, "ts"), c.intern(e.str("name")), c.intern(domain())};
    } else if (auto it = p.open.find(id); it != p.open.end()) {
      auto const& b = it->second;
      p.ranges.push_back(
          {b.tid, tid, b.start, time_of(e, "ts"), range_style::start_end, b.name, b.domain});
      p.open.erase(it);
    }
  }
}

std::string read_all(std::string const& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    throw json_input_error(path + ": cannot read: " + std::strerror(errno));
  }
  std::string text;
  char buf[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    text.append(buf, n);
  }
  bool const bad = std::ferror(f) != 0;
  int const err = errno;
  std::fclose(f);
  if (bad) {
    throw json_input_error(path + ": cannot read: " + std::strerror(err));
  }
  return text;
}

collected parse_file(std::string const& path) {
  std::string const text = read_all(path);
  parser ps{text, path};
  collected c;
  if (!ps.peek('{')) {
    throw json_input_error(path + ": not a trace of nvtxpp-capture (no JSON object)");
  }
  ps.expect('{');
  bool events = false;
  if (!ps.peek('}')) {
    do {
      auto const key = ps.string();
      ps.expect(':');
      if (key == "traceEvents" && ps.peek('[')) {
        events = true;
        ps.expect('[');
        if (!ps.peek(']')) {
          do {
            take_event(c, ps.parse(1));
          } while (ps.comma());
        }
        ps.expect(']');
      } else {
        auto const v = ps.parse(1);
        if (key == "otherData" && v.t == value::type::object) {
          c.ours = v.str("tool") == "nvtxpp-capture";
        }
      }
    } while (ps.comma());
  }
  ps.expect('}');
  if (!ps.at_end()) {
    ps.fail("text after the JSON value");
  }
  if (!events || !c.ours) {
    throw json_input_error(path +
                           ": a JSON file that is not a trace of nvtxpp-capture (no traceEvents, "
                           "or no otherData.tool \"nvtxpp-capture\")");
  }
  return c;
}

}  // namespace

read_totals read_json_trace(std::string const& path, std::vector<trace_sink*> const& sinks) {
  collected const c = parse_file(path);
  read_totals totals;
  for (auto const& [pid, p] : c.processes) {
    process_info info;
    info.pid = pid;
    info.path = path;
    info.finished = true;
    for (auto* s : sinks) {
      s->begin_process(info);
    }
    for (auto const& k : p.kernels) {
      kernel_info ki;
      ki.pid = pid;
      ki.raw.start = k.start;
      ki.raw.end = k.end;
      ki.raw.correlation = k.correlation;
      ki.name = ki.demangled = c.strings[k.name];
      for (auto* s : sinks) {
        s->on_kernel(ki);
      }
    }
    for (auto const& m : p.memcpys) {
      memcpy_info mi;
      mi.pid = pid;
      mi.raw.start = m.start;
      mi.raw.end = m.end;
      mi.raw.correlation = m.correlation;
      mi.raw.copy_kind = static_cast<std::uint8_t>(m.name);
      for (auto* s : sinks) {
        s->on_memcpy(mi);
      }
    }
    for (auto const& m : p.memsets) {
      memset_info mi;
      mi.pid = pid;
      mi.raw.start = m.start;
      mi.raw.end = m.end;
      mi.raw.correlation = m.correlation;
      for (auto* s : sinks) {
        s->on_memset(mi);
      }
    }
    for (auto const& a : p.apis) {
      api_info ai;
      ai.pid = pid;
      ai.raw.start = a.start;
      ai.raw.end = a.end;
      ai.raw.correlation = a.correlation;
      ai.raw.tid = a.tid;
      for (auto* s : sinks) {
        s->on_api(ai);
      }
    }
    for (auto const& r : p.ranges) {
      range_info ri;
      ri.pid = pid;
      ri.style = r.style;
      ri.tid = r.tid;
      ri.end_tid = r.end_tid;
      ri.start_ns = r.start;
      ri.end_ns = r.end;
      ri.name = c.strings[r.name];
      ri.attr.domain_name = c.strings[r.domain];
      for (auto* s : sinks) {
        s->on_range(ri);
      }
    }
    info.end_ns = 0;
    for (auto* s : sinks) {
      s->end_process(info);
    }
    ++totals.processes;
    totals.ranges += p.ranges.size();
    totals.gpu_ops += p.kernels.size() + p.memcpys.size() + p.memsets.size();
    totals.api_calls += p.apis.size();
  }
  return totals;
}

}  // namespace nvtxpp::capture
