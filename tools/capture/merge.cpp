#include "merge.hpp"

#include "../recording/decode.hpp"
#include "../recording/format.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace nvtxpp::capture {

namespace {

namespace rec = nvtxpp::recording;
using testing::event_type;

// ------------------------------------------------------------------------------------------------
// JSON output.

/// Appends `s` as a JSON string body: escapes, and invalid UTF-8 replaced by U+FFFD.
void escape_into(fmt::memory_buffer& out, std::string_view s) {
  auto const* p = reinterpret_cast<unsigned char const*>(s.data());
  auto const* const end = p + s.size();
  while (p < end) {
    unsigned char const c = *p;
    if (c < 0x80U) {
      switch (c) {
        case '"':
          out.append(std::string_view{"\\\""});
          break;
        case '\\':
          out.append(std::string_view{"\\\\"});
          break;
        case '\n':
          out.append(std::string_view{"\\n"});
          break;
        case '\t':
          out.append(std::string_view{"\\t"});
          break;
        case '\r':
          out.append(std::string_view{"\\r"});
          break;
        default:
          if (c < 0x20U) {
            fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++p;
      continue;
    }
    // Multi-byte sequence: validate (no overlongs, no surrogates, <= U+10FFFF).
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if ((c & 0xE0U) == 0xC0U) {
      n = 2;
      cp = c & 0x1FU;
    } else if ((c & 0xF0U) == 0xE0U) {
      n = 3;
      cp = c & 0x0FU;
    } else if ((c & 0xF8U) == 0xF0U) {
      n = 4;
      cp = c & 0x07U;
    }
    bool ok = n != 0 && static_cast<std::size_t>(end - p) >= n;
    for (std::size_t i = 1; ok && i < n; ++i) {
      ok = (p[i] & 0xC0U) == 0x80U;
      cp = (cp << 6U) | (p[i] & 0x3FU);
    }
    ok = ok && !(n == 2 && cp < 0x80U) && !(n == 3 && cp < 0x800U) && !(n == 4 && cp < 0x10000U) &&
         cp <= 0x10FFFFU && !(cp >= 0xD800U && cp <= 0xDFFFU);
    if (ok) {
      out.append(reinterpret_cast<char const*>(p), reinterpret_cast<char const*>(p + n));
      p += n;
    } else {
      out.append(std::string_view{"\xEF\xBF\xBD"});
      ++p;
    }
  }
}

void quoted(fmt::memory_buffer& out, std::string_view s) {
  out.push_back('"');
  escape_into(out, s);
  out.push_back('"');
}

/// Microseconds with nanosecond digits, exact: 1234567 ns -> 1234.567
void micros(fmt::memory_buffer& out, std::int64_t ns) {
  if (ns < 0) {
    out.push_back('-');
    ns = -ns;
  }
  fmt::format_to(std::back_inserter(out), "{}.{:03}", ns / 1000, ns % 1000);
}

void payload_json(fmt::memory_buffer& out, rec::raw_event const& r) {
  auto const v = rec::payload_of(r);
  auto it = std::back_inserter(out);
  auto real = [&](double d, int digits) {
    if (std::isfinite(d)) {
      fmt::format_to(it, "{:.{}g}", d, digits);
    } else {
      quoted(out, std::isnan(d) ? "nan" : (d > 0 ? "inf" : "-inf"));
    }
  };
  switch (v.index()) {
    case 1:
      fmt::format_to(it, "{}", std::get<1>(v));
      break;
    case 2:
      fmt::format_to(it, "{}", std::get<2>(v));
      break;
    case 3:
      real(std::get<3>(v), 17);
      break;
    case 4:
      fmt::format_to(it, "{}", std::get<4>(v));
      break;
    case 5:
      fmt::format_to(it, "{}", std::get<5>(v));
      break;
    case 6:
      real(static_cast<double>(std::get<6>(v)), 9);
      break;
    default:
      out.append(std::string_view{"null"});
      break;
  }
}

char const* payload_type_name(std::uint8_t t) {
  static char const* const names[] = {"", "u64", "i64", "f64", "u32", "i32", "f32"};
  return t <= 6 ? names[t] : "";
}

class json_out {
 public:
  explicit json_out(std::FILE* f) : f_{f} {
    if (f_ != nullptr) {
      std::fputs("{\"traceEvents\":[\n", f_);
    }
  }
  [[nodiscard]] bool on() const { return f_ != nullptr; }
  /// Starts an event object; returns the buffer to append the members to.
  fmt::memory_buffer& begin() {
    if (!first_) {
      buf_.append(std::string_view{",\n"});
    }
    first_ = false;
    buf_.push_back('{');
    return buf_;
  }
  void end() {
    buf_.push_back('}');
    if (buf_.size() > (1U << 20U)) {
      flush();
    }
  }
  void flush() {
    if (f_ != nullptr && buf_.size() != 0) {
      std::fwrite(buf_.data(), 1, buf_.size(), f_);
    }
    buf_.clear();
  }
  void close(std::string_view other_data) {
    flush();
    if (f_ != nullptr) {
      std::fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":", f_);
      std::fwrite(other_data.data(), 1, other_data.size(), f_);
      std::fputs("}\n", f_);
    }
  }

 private:
  std::FILE* f_;
  fmt::memory_buffer buf_;
  bool first_ = true;
};

// ------------------------------------------------------------------------------------------------
// Reading a process file.

struct process_file {
  std::string path;
  unsigned char const* data = nullptr;
  std::size_t size = 0;
  rec::file_header header{};
  rec::name_tables names;
  std::string command;
  std::map<std::uint64_t, std::vector<rec::stream_piece>> pieces;  // by thread, in order
  std::map<std::uint64_t, std::vector<std::uint32_t>> piece_seq;   // their sequence numbers
  std::map<std::uint64_t, std::uint32_t> thread_index;
  bool finished = false;
  std::int32_t how = 0;
  std::int64_t finish_ns = 0;
  std::int64_t clock_ticks = 0;  // latest calibration point
  std::int64_t clock_ns = 0;

  process_file() = default;
  process_file(process_file const&) = delete;
  process_file& operator=(process_file const&) = delete;
  ~process_file() {
    if (data != nullptr) {
      ::munmap(const_cast<unsigned char*>(data), size);
    }
  }
};

/// Stores the name of a string_def or domain_def record (u32 index, text) in `table`; indices
/// from `limit` on are taken for damage and skipped.
void store_name(std::vector<std::string>& table, std::uint32_t limit, unsigned char const* body,
                std::uint32_t size) {
  if (size < 4) {
    return;
  }
  auto const index = rec::load<std::uint32_t>(body);
  if (index >= limit) {
    return;
  }
  if (table.size() <= index) {
    table.resize(index + 1U);
  }
  table[index].assign(reinterpret_cast<char const*>(body + 4), size - 4U);
}

/// Maps and indexes a file. Returns an error text, or "" on success.
std::string read_process_file(process_file& pf) {
  int fd = ::open(pf.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return "cannot open " + pf.path + ": " + std::strerror(errno);
  }
  struct stat st {};
  ::fstat(fd, &st);
  pf.size = static_cast<std::size_t>(st.st_size);
  if (pf.size < sizeof(rec::file_header)) {
    ::close(fd);
    return pf.path + ": too short for a capture file";
  }
  void* m = ::mmap(nullptr, pf.size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) {
    return "cannot map " + pf.path + ": " + std::strerror(errno);
  }
  pf.data = static_cast<unsigned char const*>(m);
  pf.header = rec::load<rec::file_header>(pf.data);
  if (std::memcmp(pf.header.magic, rec::file_magic, sizeof pf.header.magic) != 0) {
    return pf.path + ": not an nvtxpp capture file";
  }
  unsigned char const* p = pf.data + sizeof(rec::file_header);
  unsigned char const* const end = pf.data + pf.size;
  while (end - p >= 8) {
    auto const kind = static_cast<rec::file_record>(rec::load<std::uint32_t>(p));
    auto const size = rec::load<std::uint32_t>(p + 4);
    p += 8;
    if (static_cast<std::size_t>(end - p) < size) {
      return pf.path + ": last record cut short (the process was killed while writing?)";
    }
    unsigned char const* body = p;
    p += size;
    switch (kind) {
      case rec::file_record::chunk:
        if (size >= 16) {
          auto const tid = rec::load<std::uint64_t>(body);
          pf.thread_index.emplace(tid, rec::load<std::uint32_t>(body + 8));
          pf.pieces[tid].push_back({body + 16, size - 16U, rec::load<std::uint32_t>(body + 12)});
        }
        break;
      case rec::file_record::string_def:
        store_name(pf.names.strings, 1U << 26U, body, size);
        break;
      case rec::file_record::domain_def:
        store_name(pf.names.domains, 1U << 20U, body, size);
        break;
      case rec::file_record::category_name:
        if (size >= 20) {
          pf.names
              .category_names[{rec::load<std::uint32_t>(body), rec::load<std::uint32_t>(body + 4)}]
              .emplace_back(rec::load<std::int64_t>(body + 8), rec::load<std::uint32_t>(body + 16));
        }
        break;
      case rec::file_record::thread_name:
        if (size >= 20) {
          pf.names.thread_names[rec::load<std::uint64_t>(body)].emplace_back(
              rec::load<std::int64_t>(body + 8), rec::load<std::uint32_t>(body + 16));
        }
        break;
      case rec::file_record::clock:
      case rec::file_record::finish:
        if (size >= 16) {
          pf.clock_ticks = rec::load<std::int64_t>(body);
          pf.clock_ns = rec::load<std::int64_t>(body + 8);
          if (kind == rec::file_record::finish) {
            pf.finished = true;
            pf.finish_ns = pf.clock_ns;
            pf.how = size >= 20 ? rec::load<std::int32_t>(body + 16) : 0;
          }
        }
        break;
      case rec::file_record::process:
        pf.command.assign(reinterpret_cast<char const*>(body), size);
        break;
      default:
        break;  // a newer record kind: skipped
    }
  }
  // Blocks reach the file in the order they were written, which the writer thread and a final
  // flush may interleave: put each thread's pieces back in stream order (stable: pieces of one
  // block keep their file order).
  for (auto& [tid, pieces] : pf.pieces) {
    std::stable_sort(
        pieces.begin(), pieces.end(),
        [](rec::stream_piece const& a, rec::stream_piece const& b) { return a.seq < b.seq; });
  }
  return {};
}

// ------------------------------------------------------------------------------------------------
// Merging.

struct open_range {
  std::int64_t start_ns = 0;
  std::string name;
  std::uint32_t domain = 0;
  rec::raw_event attrs;  // colour, category, payload (text not kept: see `name`)
  int depth = 0;
  std::uint64_t tid = 0;
};

class merger {
 public:
  merger(merge_options const& o, merge_result& r) : opt_{o}, res_{r}, json_{o.json} {}

  void process(process_file& pf) {
    pf_ = &pf;
    pid_ = pf.header.pid;
    clock_ = clock_for(pf);
    end_ns_ = pf.finished ? pf.finish_ns : std::numeric_limits<std::int64_t>::min();
    starts_.clear();
    pending_ends_.clear();
    sync_names_.clear();
    std::vector<open_range> leftovers;
    if (json_.on()) {
      auto& b = json_.begin();
      fmt::format_to(
          std::back_inserter(b),
          "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":", pid_);
      quoted(b, fmt::format("{} (pid {})", pf.command.empty() ? "process" : pf.command, pid_));
      b.append(std::string_view{"}"});
      json_.end();
    }
    for (auto const& [tid, pieces] : pf.pieces) {
      thread(tid, pieces, leftovers);
    }
    for (auto const& [tid, history] : pf.names.thread_names) {
      if (json_.on() && !history.empty()) {
        auto& b = json_.begin();
        fmt::format_to(std::back_inserter(b),
                       "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{"
                       "\"name\":",
                       pid_, tid);
        quoted(b, pf.names.string_at(history.back().second));
        b.append(std::string_view{"}"});
        json_.end();
      }
    }
    if (end_ns_ == std::numeric_limits<std::int64_t>::min()) {
      end_ns_ = last_ns_;
      warn("process", fmt::format("process {} ended without flushing (killed?); its trace ends "
                                  "at its last recorded event",
                                  pid_));
    }
    for (auto& r : leftovers) {
      warn("unterminated",
           fmt::format("pid {} thread {}: range \"{}\" still open at the end (closed there)", pid_,
                       r.tid, r.name));
      complete_push(r, std::max(end_ns_, r.start_ns), true);
    }
    for (auto& [id, r] : starts_) {
      warn("unterminated", fmt::format("pid {}: start/end range \"{}\" never ended (closed at "
                                       "the end)",
                                       pid_, r.name));
      async_event(r, 'e', std::max(end_ns_, r.start_ns), r.tid, id, true);
      add_stats(r, std::max(end_ns_, r.start_ns) - r.start_ns, false);
    }
    for (auto& [id, e] : pending_ends_) {
      warn("unknown_end",
           fmt::format("pid {} thread {}: end of unknown range id {:#x}", pid_, e.second, id));
    }
    ++res_.processes;
  }

  void finish() {
    fmt::memory_buffer other;
    fmt::format_to(std::back_inserter(other),
                   "{{\"tool\":\"nvtxpp-capture\",\"clock\":\"CLOCK_MONOTONIC\",\"base_ns\":{},"
                   "\"processes\":{},\"warning_counts\":{{",
                   opt_.base_ns, res_.processes);
    bool first = true;
    for (auto const& [kind, n] : res_.warning_counts) {
      fmt::format_to(std::back_inserter(other), "{}\"{}\":{}", first ? "" : ",", kind, n);
      first = false;
    }
    other.append(std::string_view{"},\"warnings\":["});
    for (std::size_t i = 0; i < res_.warnings.size(); ++i) {
      if (i != 0) {
        other.push_back(',');
      }
      quoted(other, res_.warnings[i]);
    }
    other.append(std::string_view{"],\"resources\":["});
    other.append(resources_.data(), resources_.data() + resources_.size());
    other.append(std::string_view{"]}"});
    json_.close(std::string_view{other.data(), other.size()});
  }

 private:
  static rec::clock_map clock_for(process_file const& pf) {
    auto const& h = pf.header;
    rec::clock_map m;
    m.ticks0 = h.ticks0;
    m.ns0 = h.ns0;
    m.ns_per_tick = h.tsc != 0 && h.ns_per_tick > 0 ? h.ns_per_tick : 1.0;
    if (h.tsc != 0 && pf.clock_ns - h.ns0 > 200'000'000) {
      m = rec::clock_map::from(h.ticks0, h.ns0, pf.clock_ticks, pf.clock_ns);
    } else if (h.tsc == 0) {
      m.ns_per_tick = 1.0;
    }
    return m;
  }

  void warn(char const* kind, std::string text) {
    ++res_.warning_counts[kind];
    if (res_.warnings.size() < opt_.max_warning_lines) {
      res_.warnings.push_back(std::move(text));
    }
  }

  std::string message_of(rec::raw_event const& r) const {
    if (r.flags & rec::flag::null_message) {
      return "(null)";
    }
    if (r.message == rec::message_kind::inline_text) {
      return std::string{r.text};
    }
    if (r.message == rec::message_kind::string_id) {
      return pf_->names.string_at(r.string_id);
    }
    return {};
  }

  void category_json(fmt::memory_buffer& b, std::uint32_t domain, rec::raw_event const& a,
                     std::int64_t ticks) const {
    b.append(std::string_view{"\"cat\":"});
    std::string cat = pf_->names.domain_at(domain);
    if (cat.empty()) {
      cat = "default";
    }
    if (a.category != 0) {
      std::string const& cname = pf_->names.category_at(domain, a.category, ticks);
      cat += "," + (cname.empty() ? fmt::format("category {}", a.category) : cname);
    }
    quoted(b, cat);
  }

  /// args members shared by ranges and marks (no braces).
  void args_json(fmt::memory_buffer& b, std::uint32_t domain, rec::raw_event const& a,
                 std::int64_t ticks) const {
    auto it = std::back_inserter(b);
    b.append(std::string_view{"\"domain\":"});
    quoted(b, pf_->names.domain_at(domain));
    if (a.flags & rec::flag::has_color) {
      fmt::format_to(it, ",\"color\":\"#{:06X}\",\"color_argb\":\"0x{:08X}\"", a.color & 0xFFFFFFU,
                     a.color);
    }
    if (a.category != 0) {
      fmt::format_to(it, ",\"category\":{},\"category_name\":", a.category);
      quoted(b, pf_->names.category_at(domain, a.category, ticks));
    }
    if (a.payload_type != 0) {
      b.append(std::string_view{",\"payload\":"});
      payload_json(b, a);
      fmt::format_to(it, ",\"payload_type\":\"{}\"", payload_type_name(a.payload_type));
    }
    if (a.flags & rec::flag::registered) {
      b.append(std::string_view{",\"registered\":true"});
    }
    if (a.flags & rec::flag::truncated) {
      b.append(std::string_view{",\"truncated\":true"});
    }
  }

  void add_stats(open_range const& r, std::int64_t duration, bool push_pop) {
    ++res_.ranges;
    auto key = fmt::format("{}\x1F{}\x1F{}", push_pop ? 'P' : 'S', r.domain, r.name);
    auto [it, fresh] = row_index_.try_emplace(key, res_.rows.size());
    if (fresh) {
      res_.rows.push_back({pf_->names.domain_at(r.domain), r.name, push_pop, {}});
    }
    res_.rows[it->second].durations.push_back(duration);
  }

  void complete_push(open_range const& r, std::int64_t end_ns, bool unterminated) {
    add_stats(r, end_ns - r.start_ns, true);
    if (!json_.on()) {
      return;
    }
    auto& b = json_.begin();
    auto it = std::back_inserter(b);
    b.append(std::string_view{"\"name\":"});
    quoted(b, r.name);
    b.push_back(',');
    category_json(b, r.domain, r.attrs, r.attrs.ticks);
    b.append(std::string_view{",\"ph\":\"X\",\"ts\":"});
    micros(b, r.start_ns - opt_.base_ns);
    b.append(std::string_view{",\"dur\":"});
    micros(b, end_ns - r.start_ns);
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"args\":{{", pid_, r.tid);
    args_json(b, r.domain, r.attrs, r.attrs.ticks);
    fmt::format_to(it, ",\"depth\":{}", r.depth);
    if (unterminated) {
      b.append(std::string_view{",\"unterminated\":true"});
    }
    b.append(std::string_view{"}"});
    json_.end();
  }

  void async_event(open_range const& r, char ph, std::int64_t ns, std::uint64_t tid,
                   std::uint64_t id, bool unterminated) {
    if (!json_.on()) {
      return;
    }
    auto& b = json_.begin();
    auto it = std::back_inserter(b);
    b.append(std::string_view{"\"name\":"});
    quoted(b, r.name);
    b.push_back(',');
    category_json(b, r.domain, r.attrs, r.attrs.ticks);
    fmt::format_to(it, ",\"ph\":\"{}\",\"id\":\"{:#x}\",\"ts\":", ph, id);
    micros(b, ns - opt_.base_ns);
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"args\":{{", pid_, tid);
    if (ph == 'b') {
      args_json(b, r.domain, r.attrs, r.attrs.ticks);
    } else {
      fmt::format_to(it, "\"domain\":");
      quoted(b, pf_->names.domain_at(r.domain));
      if (unterminated) {
        b.append(std::string_view{",\"unterminated\":true"});
      }
    }
    b.append(std::string_view{"}"});
    json_.end();
  }

  void instant(rec::raw_event const& r, std::string const& name, std::int64_t ns, std::uint64_t tid,
               char const* cat_override) {
    ++res_.marks;
    if (!json_.on()) {
      return;
    }
    auto& b = json_.begin();
    auto it = std::back_inserter(b);
    b.append(std::string_view{"\"name\":"});
    quoted(b, name);
    b.push_back(',');
    if (cat_override != nullptr) {
      fmt::format_to(it, "\"cat\":\"{}\"", cat_override);
    } else {
      category_json(b, r.domain, r, r.ticks);
    }
    b.append(std::string_view{",\"ph\":\"i\",\"s\":\"t\",\"ts\":"});
    micros(b, ns - opt_.base_ns);
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"args\":{{", pid_, tid);
    args_json(b, r.domain, r, r.ticks);
    if (cat_override != nullptr) {
      fmt::format_to(it, ",\"event\":\"{}\",\"handle\":\"{:#x}\"", testing::to_string(r.type),
                     r.id);
    }
    b.append(std::string_view{"}"});
    json_.end();
  }

  void thread(std::uint64_t tid, std::vector<rec::stream_piece> const& pieces,
              std::vector<open_range>& leftovers) {
    std::map<std::uint32_t, std::vector<open_range>> stacks;  // by domain
    std::int64_t last = std::numeric_limits<std::int64_t>::min();
    rec::for_each_record(
        pieces, tid,
        [&](rec::raw_event const& r) {
          last = std::max(last, clock_.to_ns(r.ticks));
          last_ns_ = std::max(last_ns_, last);
          if (r.flags & rec::flag::null_message) {
            warn("null_message", fmt::format("pid {} thread {}: null message passed to {}", pid_,
                                             tid, testing::to_string(r.type)));
          }
          if (r.flags & rec::flag::truncated) {
            warn("truncated",
                 fmt::format("pid {} thread {}: message longer than {} bytes "
                             "truncated ({})",
                             pid_, tid, testing::max_message_bytes, testing::to_string(r.type)));
          }
          switch (r.type) {
            case event_type::push: {
              auto& stack = stacks[r.domain];
              open_range o;
              o.start_ns = last;
              o.name = message_of(r);
              o.domain = r.domain;
              o.attrs = r;
              o.attrs.text = {};
              o.depth = static_cast<int>(stack.size());
              o.tid = tid;
              stack.push_back(std::move(o));
              break;
            }
            case event_type::pop: {
              auto& stack = stacks[r.domain];
              if (stack.empty()) {
                warn("unbalanced_pop", fmt::format("pid {} thread {}: pop without a matching "
                                                   "push in domain \"{}\"",
                                                   pid_, tid, pf_->names.domain_at(r.domain)));
                break;
              }
              complete_push(stack.back(), last, false);
              stack.pop_back();
              break;
            }
            case event_type::start: {
              open_range o;
              o.start_ns = last;
              o.name = message_of(r);
              o.domain = r.domain;
              o.attrs = r;
              o.attrs.text = {};
              o.tid = tid;
              async_event(o, 'b', last, tid, r.id, false);
              if (auto it = pending_ends_.find(r.id); it != pending_ends_.end()) {
                async_event(o, 'e', it->second.first, it->second.second, r.id, false);
                add_stats(o, std::max<std::int64_t>(it->second.first - o.start_ns, 0), false);
                pending_ends_.erase(it);
              } else {
                starts_[r.id] = std::move(o);
              }
              break;
            }
            case event_type::end: {
              if (auto it = starts_.find(r.id); it != starts_.end()) {
                async_event(it->second, 'e', last, tid, r.id, false);
                add_stats(it->second, last - it->second.start_ns, false);
                starts_.erase(it);
              } else {
                pending_ends_[r.id] = {last, tid};  // its start may be on a thread not read yet
              }
              break;
            }
            case event_type::mark:
              instant(r, message_of(r), last, tid, nullptr);
              break;
            case event_type::sync_create:
              sync_names_[r.id] = message_of(r);
              [[fallthrough]];
            case event_type::sync_destroy:
            case event_type::sync_acquire_start:
            case event_type::sync_acquire_failed:
            case event_type::sync_acquire_success:
            case event_type::sync_releasing:
              instant(r, sync_names_[r.id], last, tid, "nvtx.sync");
              break;
            case event_type::name_resource: {
              if (!first_resource_) {
                resources_.push_back(',');
              }
              first_resource_ = false;
              fmt::format_to(std::back_inserter(resources_),
                             "{{\"pid\":{},\"kind\":\"{}\",\"handle\":\"{:#x}\",\"name\":", pid_,
                             rec::resource_name(static_cast<rec::resource_kind>(r.category)), r.id);
              quoted(resources_, message_of(r));
              resources_.push_back('}');
              break;
            }
            default:
              break;  // naming and domain events: reflected in names, not drawn
          }
        },
        res_.warnings);
    for (auto& [domain, stack] : stacks) {
      for (auto& o : stack) {
        leftovers.push_back(std::move(o));
      }
    }
  }

  merge_options const& opt_;
  merge_result& res_;
  json_out json_;
  process_file* pf_ = nullptr;
  std::uint32_t pid_ = 0;
  rec::clock_map clock_;
  std::int64_t end_ns_ = 0;
  std::int64_t last_ns_ = std::numeric_limits<std::int64_t>::min();
  std::unordered_map<std::uint64_t, open_range> starts_;
  std::unordered_map<std::uint64_t, std::pair<std::int64_t, std::uint64_t>> pending_ends_;
  std::unordered_map<std::uint64_t, std::string> sync_names_;
  std::unordered_map<std::string, std::size_t> row_index_;
  fmt::memory_buffer resources_;
  bool first_resource_ = true;
};

}  // namespace

merge_result merge(merge_options const& options) {
  merge_result result;
  DIR* dir = ::opendir(options.raw_dir.c_str());
  if (dir == nullptr) {
    throw std::runtime_error("cannot read " + options.raw_dir + ": " + std::strerror(errno));
  }
  std::vector<std::string> files;
  while (dirent* d = ::readdir(dir)) {
    std::string_view const name = d->d_name;
    if (name.rfind("nvtxpp-", 0) == 0 && name.size() > 11 &&
        name.substr(name.size() - 4) == ".bin") {
      files.push_back(options.raw_dir + "/" + std::string{name});
    }
  }
  ::closedir(dir);
  std::sort(files.begin(), files.end());
  merger m{options, result};
  for (auto const& path : files) {
    process_file pf;
    pf.path = path;
    std::string const error = read_process_file(pf);
    if (!error.empty()) {
      ++result.warning_counts["file"];
      result.warnings.push_back(error);
      if (pf.data == nullptr ||
          std::memcmp(pf.header.magic, rec::file_magic, sizeof pf.header.magic) != 0) {
        continue;  // unreadable: nothing to merge; a cut-short file still merges what it has
      }
    }
    m.process(pf);
  }
  m.finish();
  return result;
}

namespace {

std::string grouped(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) {
    s.insert(static_cast<std::size_t>(i), ",");
  }
  return s;
}

std::string grouped(double v) {
  auto const whole = static_cast<std::uint64_t>(v);
  auto tenth = static_cast<int>(std::llround((v - static_cast<double>(whole)) * 10.0));
  std::uint64_t w = whole;
  if (tenth == 10) {
    ++w;
    tenth = 0;
  }
  return grouped(w) + "." + std::to_string(tenth);
}

}  // namespace

void print_summary(std::FILE* out, merge_result& result, bool csv) {
  struct row {
    double percent;
    std::uint64_t total;
    std::uint64_t count;
    double avg;
    double med;
    std::int64_t min;
    std::int64_t max;
    double stddev;
    char const* style;
    std::string range;
  };
  std::vector<row> rows;
  double all = 0;
  for (auto& s : result.rows) {
    auto& d = s.durations;
    std::sort(d.begin(), d.end());
    double total = 0;
    for (auto v : d) {
      total += static_cast<double>(v);
    }
    auto const n = d.size();
    double const avg = total / static_cast<double>(n);
    double const med =
        n % 2 == 1 ? static_cast<double>(d[n / 2])
                   : (static_cast<double>(d[n / 2 - 1]) + static_cast<double>(d[n / 2])) / 2.0;
    double var = 0;
    for (auto v : d) {
      var += (static_cast<double>(v) - avg) * (static_cast<double>(v) - avg);
    }
    double const stddev = n > 1 ? std::sqrt(var / static_cast<double>(n - 1)) : 0.0;
    rows.push_back({0.0, static_cast<std::uint64_t>(total), n, avg, med, d.front(), d.back(),
                    stddev, s.push_pop ? "PushPop" : "StartEnd", s.domain + ":" + s.name});
    all += total;
  }
  for (auto& r : rows) {
    r.percent = all > 0 ? 100.0 * static_cast<double>(r.total) / all : 0.0;
  }
  std::stable_sort(rows.begin(), rows.end(), [](auto const& a, auto const& b) {
    return a.total != b.total ? a.total > b.total : a.range < b.range;
  });

  if (csv) {
    std::fputs(
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),"
        "StdDev (ns),Style,Range\n",
        out);
    for (auto const& r : rows) {
      std::string range = r.range;
      if (range.find_first_of(",\"\n") != std::string::npos) {
        std::string q = "\"";
        for (char c : range) {
          q += c == '"' ? std::string{"\"\""} : std::string(1, c);
        }
        range = q + "\"";
      }
      fmt::print(out, "{:.1f},{},{},{:.1f},{:.1f},{},{},{:.1f},{},{}\n", r.percent, r.total,
                 r.count, r.avg, r.med, r.min, r.max, r.stddev, r.style, range);
    }
  } else {
    std::vector<std::array<std::string, 10>> cells;
    cells.push_back({"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)",
                     "Max (ns)", "StdDev (ns)", "Style", "Range"});
    for (auto const& r : rows) {
      cells.push_back({fmt::format("{:.1f}", r.percent), grouped(r.total), grouped(r.count),
                       grouped(r.avg), grouped(r.med), grouped(static_cast<std::uint64_t>(r.min)),
                       grouped(static_cast<std::uint64_t>(r.max)), grouped(r.stddev), r.style,
                       r.range});
    }
    std::array<std::size_t, 10> width{};
    for (auto const& c : cells) {
      for (std::size_t i = 0; i < 10; ++i) {
        width[i] = std::max(width[i], c[i].size());
      }
    }
    std::fputs("\n ** NVTX Range Summary (nvtxpp-capture; nsys nvtx_sum layout):\n\n", out);
    auto line = [&](std::array<std::string, 10> const& c) {
      std::string s;
      for (std::size_t i = 0; i < 10; ++i) {
        bool const left = i >= 8;
        std::string pad(width[i] - c[i].size(), ' ');
        s += " " + (left ? c[i] + pad : pad + c[i]) + " ";
      }
      while (!s.empty() && s.back() == ' ') {
        s.pop_back();
      }
      fmt::print(out, "{}\n", s);
    };
    line(cells[0]);
    std::array<std::string, 10> rule;
    for (std::size_t i = 0; i < 10; ++i) {
      rule[i] = std::string(width[i], '-');
    }
    line(rule);
    for (std::size_t i = 1; i < cells.size(); ++i) {
      line(cells[i]);
    }
    if (rows.empty()) {
      std::fputs("\n (no NVTX ranges recorded)\n", out);
    }
  }
  std::uint64_t total_warnings = 0;
  for (auto const& [kind, n] : result.warning_counts) {
    total_warnings += n;
  }
  if (total_warnings != 0) {
    fmt::print(out, "\n{}Warnings ({}):", csv ? "# " : " ** ", total_warnings);
    for (auto const& [kind, n] : result.warning_counts) {
      fmt::print(out, " {}={}", kind, n);
    }
    std::fputs("\n", out);
    for (auto const& w : result.warnings) {
      fmt::print(out, "{}{}\n", csv ? "# " : "    ", w);
    }
    if (total_warnings > result.warnings.size()) {
      fmt::print(out, "{}... and {} more\n", csv ? "# " : "    ",
                 total_warnings - result.warnings.size());
    }
  }
}

}  // namespace nvtxpp::capture
