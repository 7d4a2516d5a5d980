// The Chrome Trace Event JSON writer (docs/capture-results.md "The JSON trace").

#include "json_writer.hpp"

#include "../model/json_tracks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nvtxpp::capture {

// ------------------------------------------------------------------------------------------------
// output_file

output_file::output_file(std::string path) : path_{std::move(path)} {
  f_ = std::fopen(path_.c_str(), "w");
  if (f_ == nullptr) {
    throw output_error("cannot write trace file '" + path_ + "': " + std::strerror(errno));
  }
  if (char const* v = std::getenv("NVTXPP_CAPTURE_FAIL_WRITE_AFTER"); v != nullptr && *v != 0) {
    fail_after_ = std::strtoull(v, nullptr, 10);
  }
}

output_file::~output_file() {
  if (f_ != nullptr) {
    std::fclose(f_);
  }
}

void output_file::fail(int error) {
  throw output_error("error writing '" + path_ + "': " + std::strerror(error));
}

void output_file::write(std::string_view bytes) {
  if (f_ == nullptr) {
    fail(EBADF);
  }
  if (written_ + bytes.size() > fail_after_) {
    // The hook: write what fits, then fail as a full disk would.
    auto const fits = static_cast<std::size_t>(fail_after_ - written_);
    std::fwrite(bytes.data(), 1, fits, f_);
    written_ += fits;
    fail(ENOSPC);
  }
  if (std::fwrite(bytes.data(), 1, bytes.size(), f_) != bytes.size()) {
    fail(errno != 0 ? errno : EIO);
  }
  written_ += bytes.size();
}

void output_file::close() {
  if (f_ == nullptr) {
    return;
  }
  std::FILE* f = f_;
  f_ = nullptr;
  errno = 0;
  bool const flushed = std::fflush(f) == 0;
  int const flush_error = errno;
  // fsync: a full disk on some file systems (and NFS) shows only here.
  bool const synced = ::fsync(::fileno(f)) == 0 || errno == EINVAL || errno == EROFS;
  int const sync_error = errno;
  bool const closed = std::fclose(f) == 0;
  if (!flushed) {
    fail(flush_error != 0 ? flush_error : EIO);
  }
  if (!synced) {
    fail(sync_error);
  }
  if (!closed) {
    fail(errno != 0 ? errno : EIO);
  }
}

// ------------------------------------------------------------------------------------------------
// JSON helpers

namespace {

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

void category_json(fmt::memory_buffer& b, event_attributes const& a) {
  b.append(std::string_view{"\"cat\":"});
  std::string cat{a.domain_name};
  if (cat.empty()) {
    cat = "default";
  }
  if (a.category != 0) {
    cat += "," + (a.category_name.empty() ? fmt::format("category {}", a.category)
                                          : std::string{a.category_name});
  }
  quoted(b, cat);
}

/// A decoded field value as JSON (reals as payload_json writes them; text quoted).
void field_json(fmt::memory_buffer& b, testing::field_value const& v) {
  auto it = std::back_inserter(b);
  switch (v.index()) {
    case 1:
      fmt::format_to(it, "{}", std::get<1>(v));
      break;
    case 2:
      fmt::format_to(it, "{}", std::get<2>(v));
      break;
    case 3: {
      double const d = std::get<3>(v);
      std::uint64_t bits = 0;
      std::memcpy(&bits, &d, sizeof bits);
      b.append(payload_json(3, bits));
      break;
    }
    case 4:
      quoted(b, std::get<4>(v));
      break;
    default:
      b.append(std::string_view{"null"});
      break;
  }
}

void payload_field_json(fmt::memory_buffer& b, testing::payload_field const& f) {
  if (!f.enum_name.empty()) {
    quoted(b, f.enum_name);
  } else if (!f.elements.empty()) {
    b.push_back('[');
    for (std::size_t i = 0; i < f.elements.size(); ++i) {
      if (i != 0) {
        b.push_back(',');
      }
      field_json(b, f.elements[i]);
    }
    b.push_back(']');
  } else {
    field_json(b, f.value);
  }
}

/// Keys args_json writes itself: payload fields of these names get a "payload." prefix.
bool reserved_arg(std::string_view k) noexcept {
  for (std::string_view r :
       {"domain", "color", "color_argb", "category", "category_name", "payload", "payload_type",
        "registered", "truncated", "depth", "unterminated", "event", "handle", "payload_schema"}) {
    if (k == r) {
      return true;
    }
  }
  return false;
}

/// Structured payloads as args members: the first payload's fields by their names, later ones
/// prefixed "payload<k>."; undecodable payloads as hex bytes ("payload_bytes").
void payloads_json(fmt::memory_buffer& b, std::vector<testing::structured_payload> const& ps) {
  auto it = std::back_inserter(b);
  for (std::size_t k = 0; k < ps.size(); ++k) {
    auto const& p = ps[k];
    std::string const prefix = k == 0 ? std::string{} : fmt::format("payload{}.", k);
    b.append(std::string_view{","});
    quoted(b, prefix + "payload_schema");
    b.push_back(':');
    if (p.schema_name.empty()) {
      fmt::format_to(it, "{}", p.schema_id);
    } else {
      quoted(b, p.schema_name);
    }
    if (!p.decoded) {
      b.append(std::string_view{","});
      quoted(b, prefix + "payload_bytes");
      b.append(std::string_view{":\""});
      for (unsigned char c : p.bytes) {
        fmt::format_to(it, "{:02x}", c);
      }
      b.push_back('"');
      continue;
    }
    for (std::size_t i = 0; i < p.fields.size(); ++i) {
      auto const& f = p.fields[i];
      std::string key = f.name.empty() ? fmt::format("field{}", i) : f.name;
      if (k == 0 && reserved_arg(key)) {
        key = "payload." + key;
      }
      b.push_back(',');
      quoted(b, prefix + key);
      b.push_back(':');
      payload_field_json(b, f);
    }
  }
}

/// args members shared by ranges and marks (no braces).
void args_json(fmt::memory_buffer& b, event_attributes const& a) {
  auto it = std::back_inserter(b);
  b.append(std::string_view{"\"domain\":"});
  quoted(b, a.domain_name);
  if (a.has_color) {
    fmt::format_to(it, ",\"color\":\"#{:06X}\",\"color_argb\":\"0x{:08X}\"", a.color & 0xFFFFFFU,
                   a.color);
  }
  if (a.category != 0) {
    fmt::format_to(it, ",\"category\":{},\"category_name\":", a.category);
    quoted(b, a.category_name);
  }
  if (a.payload_type != 0) {
    b.append(std::string_view{",\"payload\":"});
    b.append(payload_json(a.payload_type, a.payload_bits));
    fmt::format_to(it, ",\"payload_type\":\"{}\"", payload_type_name(a.payload_type));
  }
  if (a.registered) {
    b.append(std::string_view{",\"registered\":true"});
  }
  if (a.truncated) {
    b.append(std::string_view{",\"truncated\":true"});
  }
  if (!a.payloads.empty()) {
    payloads_json(b, a.payloads);
  }
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// json_sink

struct json_sink::impl {
  output_file file;
  std::int64_t base_ns;
  fmt::memory_buffer buf;
  bool first = true;
  std::size_t processes = 0;
  std::map<std::string, std::uint64_t> warning_counts;
  std::vector<std::string> warnings;
  fmt::memory_buffer resources;
  bool first_resource = true;
  // Flow arrows of the current process: correlation -> (time, track) of the API call and of the
  // first GPU operation. GPU records are few next to ranges, so these stay small.
  std::unordered_map<std::uint32_t, std::pair<std::int64_t, std::uint64_t>> api_at;
  std::unordered_map<std::uint32_t, std::pair<std::int64_t, std::uint64_t>> op_at;
  // set_origin: written into otherData at finish.
  bool has_origin = false;
  std::int64_t base_utc_ns = 0;
  std::vector<std::pair<std::string, std::string>> launch;

  impl(std::string const& path, std::int64_t base) : file{path}, base_ns{base} {
    file.write("{\"traceEvents\":[\n");
  }
  fmt::memory_buffer& begin() {
    if (!first) {
      buf.append(std::string_view{",\n"});
    }
    first = false;
    buf.push_back('{');
    return buf;
  }
  void end() {
    buf.push_back('}');
    if (buf.size() > (1U << 20U)) {
      flush();
    }
  }
  void flush() {
    if (buf.size() != 0) {
      file.write(std::string_view{buf.data(), buf.size()});
    }
    buf.clear();
  }
  void op(std::uint32_t pid, std::uint32_t correlation, std::int64_t start, std::uint64_t track) {
    (void)pid;
    if (correlation == 0) {
      return;
    }
    auto [it, fresh] = op_at.try_emplace(correlation, start, track);
    if (!fresh && start < it->second.first) {
      it->second = {start, track};
    }
  }
};

json_sink::json_sink(std::string const& path, std::int64_t base_ns)
    : d_{std::make_unique<impl>(path, base_ns)} {}

json_sink::~json_sink() = default;

std::uint64_t json_sink::bytes() const noexcept { return d_->file.bytes() + d_->buf.size(); }

std::uint64_t json_sink::gpu_track(std::uint32_t device, std::uint32_t stream) noexcept {
  return json_gpu_track(device, stream);
}

void json_sink::begin_process(process_info const& p) {
  auto& b = d_->begin();
  fmt::format_to(std::back_inserter(b),
                 "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":", p.pid);
  quoted(b, !p.title.empty()
                ? p.title
                : fmt::format("{} (pid {})", p.command.empty() ? "process" : p.command, p.pid));
  b.append(std::string_view{"}"});
  d_->end();
  ++events_;
  d_->api_at.clear();
  d_->op_at.clear();
}

void json_sink::process_sort_index(std::uint32_t pid, std::int64_t index) {
  auto& b = d_->begin();
  fmt::format_to(std::back_inserter(b),
                 "\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"args\":{{"
                 "\"sort_index\":{}}}",
                 pid, index);
  d_->end();
  ++events_;
}

void json_sink::set_origin(std::int64_t base_utc_ns,
                           std::vector<std::pair<std::string, std::string>> launch) {
  d_->has_origin = true;
  d_->base_utc_ns = base_utc_ns;
  d_->launch = std::move(launch);
}

void json_sink::on_thread(thread_info const& t) {
  if (!t.named) {
    return;
  }
  auto& b = d_->begin();
  fmt::format_to(std::back_inserter(b),
                 "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{"
                 "\"name\":",
                 t.pid, t.tid);
  quoted(b, t.name);
  b.append(std::string_view{"}"});
  d_->end();
  ++events_;
}

void json_sink::on_resource(resource_info const& r) {
  if (!d_->first_resource) {
    d_->resources.push_back(',');
  }
  d_->first_resource = false;
  fmt::format_to(std::back_inserter(d_->resources),
                 "{{\"pid\":{},\"kind\":\"{}\",\"handle\":\"{:#x}\",\"name\":", r.pid,
                 recording::resource_name(r.kind), r.handle);
  quoted(d_->resources, r.name);
  d_->resources.push_back('}');
}

void json_sink::on_range(range_info const& r) {
  auto const base = d_->base_ns;
  if (r.style == range_style::push_pop) {
    auto& b = d_->begin();
    auto it = std::back_inserter(b);
    b.append(std::string_view{"\"name\":"});
    quoted(b, r.name);
    b.push_back(',');
    category_json(b, r.attr);
    b.append(std::string_view{",\"ph\":\"X\",\"ts\":"});
    micros(b, r.start_ns - base);
    b.append(std::string_view{",\"dur\":"});
    micros(b, r.end_ns - r.start_ns);
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"args\":{{", r.pid, r.tid);
    args_json(b, r.attr);
    fmt::format_to(it, ",\"depth\":{}", r.depth);
    if (r.unterminated) {
      b.append(std::string_view{",\"unterminated\":true"});
    }
    b.append(std::string_view{"}"});
    d_->end();
    ++events_;
    return;
  }
  // Start/end: an async pair, begin on the starting thread, end on the ending one.
  for (char const ph : {'b', 'e'}) {
    auto& b = d_->begin();
    auto it = std::back_inserter(b);
    b.append(std::string_view{"\"name\":"});
    quoted(b, r.name);
    b.push_back(',');
    category_json(b, r.attr);
    fmt::format_to(it, ",\"ph\":\"{}\",\"id\":\"{:#x}\",\"ts\":", ph, r.id);
    micros(b, (ph == 'b' ? r.start_ns : r.end_ns) - base);
    fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"args\":{{", r.pid, ph == 'b' ? r.tid : r.end_tid);
    if (ph == 'b') {
      args_json(b, r.attr);
    } else {
      b.append(std::string_view{"\"domain\":"});
      quoted(b, r.attr.domain_name);
      if (r.unterminated) {
        b.append(std::string_view{",\"unterminated\":true"});
      }
    }
    b.append(std::string_view{"}"});
    d_->end();
    ++events_;
  }
}

void json_sink::on_mark(mark_info const& m) {
  bool const sync = m.kind != mark_kind::mark;
  auto& b = d_->begin();
  auto it = std::back_inserter(b);
  b.append(std::string_view{"\"name\":"});
  quoted(b, m.name);
  b.push_back(',');
  if (sync) {
    b.append(std::string_view{"\"cat\":\"nvtx.sync\""});
  } else {
    category_json(b, m.attr);
  }
  b.append(std::string_view{",\"ph\":\"i\",\"s\":\"t\",\"ts\":"});
  micros(b, m.ns - d_->base_ns);
  fmt::format_to(it, ",\"pid\":{},\"tid\":{},\"args\":{{", m.pid, m.tid);
  args_json(b, m.attr);
  if (sync) {
    fmt::format_to(it, ",\"event\":\"{}\",\"handle\":\"{:#x}\"", to_string(m.kind), m.handle);
  }
  b.append(std::string_view{"}"});
  d_->end();
  ++events_;
}

void json_sink::on_counter_sample(counter_sample_info const& c) {
  testing::counter_sample const& s = *c.sample;
  // Chrome counters have no "missing" value: a zero-reason sample draws 0, the other reasons
  // (unchanged, unavailable) draw nothing.
  bool const zero = s.no_value && *s.no_value == 0;
  if ((s.no_value && !zero) || (!zero && s.value.index() == 0 && s.fields.empty())) {
    return;
  }
  auto& b = d_->begin();
  auto it = std::back_inserter(b);
  b.append(std::string_view{"\"name\":"});
  quoted(b, s.registered ? std::string_view{s.name}
                         : std::string_view{fmt::format("counter {}", s.id)});
  b.append(std::string_view{",\"cat\":"});
  quoted(b, c.domain_name.empty() ? std::string_view{"default"} : c.domain_name);
  b.append(std::string_view{",\"ph\":\"C\",\"ts\":"});
  micros(b, c.ns - d_->base_ns);
  fmt::format_to(it, ",\"pid\":{},\"args\":{{", c.pid);
  if (zero) {
    b.append(std::string_view{"\"value\":0"});
  } else if (s.fields.empty()) {
    b.append(std::string_view{"\"value\":"});
    field_json(b, s.value);
  } else {
    for (std::size_t i = 0; i < s.fields.size(); ++i) {
      if (i != 0) {
        b.push_back(',');
      }
      quoted(b, s.fields[i].name.empty() ? fmt::format("field{}", i) : s.fields[i].name);
      b.push_back(':');
      payload_field_json(b, s.fields[i]);
    }
  }
  b.push_back('}');
  d_->end();
  ++events_;
}

namespace {

/// Common head of a GPU operation's X event, up to the opening of args.
void gpu_op_head(fmt::memory_buffer& b, std::string_view name, char const* cat, std::uint32_t pid,
                 std::uint64_t track, std::int64_t start, std::int64_t end, std::int64_t base) {
  b.append(std::string_view{"\"name\":"});
  quoted(b, name);
  fmt::format_to(std::back_inserter(b), ",\"cat\":\"{}\",\"ph\":\"X\",\"ts\":", cat);
  micros(b, start - base);
  b.append(std::string_view{",\"dur\":"});
  micros(b, std::max<std::int64_t>(end - start, 0));
  fmt::format_to(std::back_inserter(b), ",\"pid\":{},\"tid\":{},\"args\":{{", pid, track);
}

}  // namespace

void json_sink::on_kernel(kernel_info const& k) {
  auto const& r = k.raw;
  auto const track = gpu_track(r.device, r.stream);
  auto& b = d_->begin();
  gpu_op_head(b, k.demangled, "cuda_kernel", k.pid, track, r.start, r.end, d_->base_ns);
  fmt::format_to(std::back_inserter(b),
                 "\"grid\":[{},{},{}],\"block\":[{},{},{}],\"registers_per_thread\":{},"
                 "\"static_shared\":{},\"dynamic_shared\":{},\"device\":{},\"context\":{},"
                 "\"stream\":{},\"correlation\":{},\"mangled\":",
                 r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2],
                 r.registers_per_thread, r.static_shared, r.dynamic_shared, r.device, r.context,
                 r.stream, r.correlation);
  quoted(b, k.name);
  if (k.graph_node != 0) {  // run by a CUDA graph launch (docs/graphs.md)
    fmt::format_to(std::back_inserter(b), ",\"graph_node\":{},\"graph\":{}", k.graph_node, k.graph);
  }
  b.append(std::string_view{"}"});
  d_->end();
  ++events_;
  d_->op(k.pid, r.correlation, r.start, track);
}

void json_sink::on_memcpy(memcpy_info const& m) {
  auto const& r = m.raw;
  auto const track = gpu_track(r.device, r.stream);
  auto& b = d_->begin();
  gpu_op_head(b, fmt::format("[CUDA memcpy {}]", memcpy_kind_name(r.copy_kind)), "cuda_memcpy",
              m.pid, track, r.start, r.end, d_->base_ns);
  if (recording::is_migration(r.copy_kind)) {  // unified memory: no stream, no launching call
    fmt::format_to(std::back_inserter(b),
                   "\"bytes\":{},\"kind\":\"{}\",\"device\":{},\"migration_cause\":{}}}", r.bytes,
                   memcpy_kind_name(r.copy_kind), r.device, r.cause);
  } else {
    fmt::format_to(std::back_inserter(b),
                   "\"bytes\":{},\"kind\":\"{}\",\"async\":{},\"device\":{},\"context\":{},"
                   "\"stream\":{},\"correlation\":{}}}",
                   r.bytes, memcpy_kind_name(r.copy_kind), (r.flags & 1U) != 0, r.device, r.context,
                   r.stream, r.correlation);
  }
  d_->end();
  ++events_;
  d_->op(m.pid, r.correlation, r.start, track);
}

void json_sink::on_memset(memset_info const& m) {
  auto const& r = m.raw;
  auto const track = gpu_track(r.device, r.stream);
  auto& b = d_->begin();
  gpu_op_head(b, "[CUDA memset]", "cuda_memset", m.pid, track, r.start, r.end, d_->base_ns);
  fmt::format_to(std::back_inserter(b),
                 "\"bytes\":{},\"value\":{},\"device\":{},\"context\":{},\"stream\":{},"
                 "\"correlation\":{}}}",
                 r.bytes, r.value, r.device, r.context, r.stream, r.correlation);
  d_->end();
  ++events_;
  d_->op(m.pid, r.correlation, r.start, track);
}

void json_sink::on_graph_range(graph_range_info const& g) {
  auto const track = gpu_track(g.device, g.stream);
  auto& b = d_->begin();
  gpu_op_head(b, g.name, "nvtx_graph", g.pid, track, g.start_ns, g.end_ns, d_->base_ns);
  b.append(std::string_view{"\"domain\":"});
  quoted(b, g.domain_name);
  fmt::format_to(std::back_inserter(b),
                 ",\"depth\":{},\"launch\":{},\"correlation\":{},\"graph\":{},\"kernels\":{},"
                 "\"memcpys\":{},\"memsets\":{},\"busy_ns\":{},\"capture_tid\":{}}}",
                 g.depth, g.launch, g.correlation, g.graph, g.kernels, g.memcpys, g.memsets,
                 g.busy_ns, g.tid);
  d_->end();
  ++events_;
}

void json_sink::on_graph_launch(graph_launch_info const& g) {
  auto const track = gpu_track(g.device, g.stream);
  auto& b = d_->begin();
  gpu_op_head(b, fmt::format("CUDA graph {}", g.graph), "cuda_graph", g.pid, track, g.start_ns,
              g.end_ns, d_->base_ns);
  fmt::format_to(std::back_inserter(b),
                 "\"graph\":{},\"kernels\":{},\"memcpys\":{},\"memsets\":{},\"device\":{},"
                 "\"context\":{},\"stream\":{},\"correlation\":{}}}",
                 g.graph, g.kernels, g.memcpys, g.memsets, g.device, g.context, g.stream,
                 g.correlation);
  d_->end();
  ++events_;
  d_->op(g.pid, g.correlation, g.start_ns, track);
}

void json_sink::on_api(api_info const& a) {
  auto const& r = a.raw;
  auto& b = d_->begin();
  gpu_op_head(
      b, a.name.empty() ? std::string_view{"CUDA API"} : recording::strip_version_suffix(a.name),
      "cuda_api", a.pid, r.tid, r.start, r.end, d_->base_ns);
  fmt::format_to(
      std::back_inserter(b), "\"api\":\"{}\",\"cbid\":{},\"correlation\":{},\"return_value\":{}}}",
      r.kind == static_cast<std::uint32_t>(recording::gpu_api_kind::driver) ? "driver" : "runtime",
      r.cbid, r.correlation, r.return_value);
  d_->end();
  ++events_;
  if (r.correlation != 0 && !a.nested) {  // a nested call's work is its runtime call's
    d_->api_at[r.correlation] = {r.start, r.tid};
  }
}

void json_sink::on_gpu_stream(gpu_stream_info const& s) {
  auto const track = gpu_track(s.device, s.stream);
  bool const migrations = s.stream == recording::migration_stream;
  std::string name = migrations       ? std::string{"Unified memory"}
                     : s.name.empty() ? fmt::format("CUDA stream {}", s.stream)
                                      : std::string{s.name};
  if (s.device != 0) {
    name += fmt::format(" (device {})", s.device);
  }
  auto& b = d_->begin();
  fmt::format_to(std::back_inserter(b),
                 "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{"
                 "\"name\":",
                 s.pid, track);
  quoted(b, name);
  b.append(std::string_view{"}"});
  d_->end();
  // GPU tracks after the CPU threads.
  auto& c = d_->begin();
  fmt::format_to(std::back_inserter(c),
                 "\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{"
                 "\"sort_index\":{}}}",
                 s.pid, track, migrations ? 999999U : 1000000U + s.stream);
  d_->end();
  events_ += 2;
}

void json_sink::on_warning(warning_info const& w) {
  ++d_->warning_counts[std::string{w.kind}];
  if (d_->warnings.size() < 20) {
    d_->warnings.emplace_back(w.text);
  }
}

void json_sink::end_process(process_info const& p) {
  ++d_->processes;
  // Flow arrows: each CUDA API call to the first GPU operation it launched. Ids are unique
  // across processes: pid in the high 32 bits, correlation id in the low ones.
  std::vector<std::pair<std::uint32_t, std::pair<std::int64_t, std::uint64_t>>> flows;
  for (auto const& [corr, at] : d_->api_at) {
    if (d_->op_at.count(corr) != 0) {
      flows.emplace_back(corr, at);
    }
  }
  std::sort(flows.begin(), flows.end());
  for (auto const& [corr, api] : flows) {
    auto const& op = d_->op_at[corr];
    auto const id = (static_cast<std::uint64_t>(p.pid) << 32U) | corr;
    auto& b = d_->begin();
    fmt::format_to(std::back_inserter(b),
                   "\"name\":\"launch\",\"cat\":\"cuda_flow\",\"ph\":\"s\",\"id\":{},\"ts\":", id);
    micros(b, api.first - d_->base_ns);
    fmt::format_to(std::back_inserter(b), ",\"pid\":{},\"tid\":{}", p.pid, api.second);
    d_->end();
    auto& c = d_->begin();
    fmt::format_to(
        std::back_inserter(c),
        "\"name\":\"launch\",\"cat\":\"cuda_flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{},\"ts\":",
        id);
    micros(c, op.first - d_->base_ns);
    fmt::format_to(std::back_inserter(c), ",\"pid\":{},\"tid\":{}", p.pid, op.second);
    d_->end();
    events_ += 2;
  }
  d_->api_at.clear();
  d_->op_at.clear();
}

void json_sink::finish() {
  fmt::memory_buffer other;
  fmt::format_to(std::back_inserter(other),
                 "{{\"tool\":\"nvtxpp-capture\",\"clock\":\"CLOCK_MONOTONIC\",\"base_ns\":{},"
                 "\"processes\":{},",
                 d_->base_ns, d_->processes);
  if (d_->has_origin) {
    fmt::format_to(std::back_inserter(other), "\"base_utc_ns\":{},", d_->base_utc_ns);
  }
  if (!d_->launch.empty()) {
    other.append(std::string_view{"\"launch\":{"});
    for (std::size_t i = 0; i < d_->launch.size(); ++i) {
      if (i != 0) {
        other.push_back(',');
      }
      quoted(other, d_->launch[i].first);
      other.push_back(':');
      quoted(other, d_->launch[i].second);
    }
    other.append(std::string_view{"},"});
  }
  other.append(std::string_view{"\"warning_counts\":{"});
  bool first = true;
  for (auto const& [kind, n] : d_->warning_counts) {
    fmt::format_to(std::back_inserter(other), "{}\"{}\":{}", first ? "" : ",", kind, n);
    first = false;
  }
  other.append(std::string_view{"},\"warnings\":["});
  for (std::size_t i = 0; i < d_->warnings.size(); ++i) {
    if (i != 0) {
      other.push_back(',');
    }
    quoted(other, d_->warnings[i]);
  }
  other.append(std::string_view{"],\"resources\":["});
  other.append(d_->resources.data(), d_->resources.data() + d_->resources.size());
  other.append(std::string_view{"]}"});
  d_->flush();
  d_->file.write("\n],\"displayTimeUnit\":\"ns\",\"otherData\":");
  d_->file.write(std::string_view{other.data(), other.size()});
  d_->file.write("}\n");
  d_->file.close();
}

}  // namespace nvtxpp::capture
