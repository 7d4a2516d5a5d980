// Our Chrome Trace Event JSON back into the trace model (json_reader.hpp).
//
// The whole file is read at once and parsed by json_parser.hpp. Each trace event is parsed into
// a small tree, kept in compact form (times in ns, names interned), and dropped; nothing reaches a
// sink before the whole file has parsed and shown itself ours (otherData comes last).

#include "json_reader.hpp"

#include "../model/json_tracks.hpp"
#include "json_parser.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

namespace nvtxpp::capture {

namespace {

using json::value;

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

std::int64_t to_i64(value const* v) {
  return v != nullptr && v->t == value::type::number ? std::strtoll(v->text.c_str(), nullptr, 10)
                                                     : 0;
}

template <typename T>
T narrow(value const* v) {
  return static_cast<T>(to_i64(v));
}

std::int64_t time_of(value const& e, char const* key) {
  auto const* v = e.get(key);
  return v != nullptr && v->t == value::type::number ? micros_to_ns(v->text) : 0;
}

/// A number or string member of a counter sample as the model holds it: integers as int64
/// (uint64 past its range: the JSON does not say which a counter was), reals as double, "nan"
/// and "inf" as the reals they spell, other text as text.
testing::field_value field_of(value const& v) {
  if (v.t == value::type::number) {
    if (v.text.find_first_of(".eE") != std::string::npos) {
      return std::strtod(v.text.c_str(), nullptr);
    }
    if (v.text[0] != '-') {
      std::uint64_t const u = std::strtoull(v.text.c_str(), nullptr, 10);
      if (u > static_cast<std::uint64_t>(INT64_MAX)) {
        return u;
      }
    }
    return static_cast<std::int64_t>(std::strtoll(v.text.c_str(), nullptr, 10));
  }
  if (v.t == value::type::string) {
    if (v.text == "nan" || v.text == "inf" || v.text == "-inf") {
      return std::strtod(v.text.c_str(), nullptr);
    }
    return v.text;
  }
  return std::monostate{};
}

/// A scalar payload back into its type's bit pattern (payload_json's spelling, inverted).
std::pair<std::uint8_t, std::uint64_t> payload_of(value const* args) {
  value const* v = args->get("payload");
  std::string_view const type = args->str("payload_type");
  std::uint8_t t = 0;
  for (std::uint8_t k = 1; k <= 6; ++k) {
    if (type == payload_type_name(k)) {
      t = k;
    }
  }
  if (v == nullptr || t == 0 || (v->t != value::type::number && v->t != value::type::string)) {
    return {0, 0};
  }
  char const* text = v->text.c_str();
  std::uint64_t bits = 0;
  if (t == 3) {
    double const d = std::strtod(text, nullptr);
    std::memcpy(&bits, &d, sizeof d);
  } else if (t == 6) {
    float const f = std::strtof(text, nullptr);
    std::uint32_t b = 0;
    std::memcpy(&b, &f, sizeof f);
    bits = b;
  } else if (t == 2) {
    bits = static_cast<std::uint64_t>(std::strtoll(text, nullptr, 10));
  } else if (t == 5) {
    bits = static_cast<std::uint32_t>(static_cast<std::int32_t>(std::strtol(text, nullptr, 10)));
  } else {
    bits = std::strtoull(text, nullptr, 10);
  }
  return {t, bits};
}

std::uint8_t copy_kind_of(std::string_view kind) {
  for (unsigned k = 0; k < 32; ++k) {
    if (kind == memcpy_kind_name(static_cast<std::uint8_t>(k))) {
      return static_cast<std::uint8_t>(k);
    }
  }
  return 0;
}

mark_kind mark_kind_of(std::string_view name) {
  for (auto k : {mark_kind::sync_create, mark_kind::sync_destroy, mark_kind::sync_acquire_start,
                 mark_kind::sync_acquire_failed, mark_kind::sync_acquire_success,
                 mark_kind::sync_releasing}) {
    if (name == to_string(k)) {
      return k;
    }
  }
  return mark_kind::mark;
}

/// Attributes of a range or mark, as args_json writes them (domain as the process's index).
struct attrs {
  std::uint32_t domain = 0;
  std::uint32_t category = 0;
  std::uint32_t category_name = 0;  // interned
  std::uint32_t color = 0;
  std::uint64_t payload_bits = 0;
  std::uint8_t payload_type = 0;
  bool has_color = false;
  bool registered = false;
};

/// What the file holds of one process, compact.
struct process_events {
  struct range {
    std::uint64_t tid, end_tid, id;
    std::int64_t start, end;
    std::uint32_t name;  // interned
    attrs a;
    range_style style;
    bool unterminated;
  };
  struct mark {
    std::uint64_t tid, handle;
    std::int64_t ns;
    std::uint32_t name;
    attrs a;
    mark_kind kind;
  };
  struct counter {
    std::int64_t ns;
    std::uint32_t domain, id, name;
    std::vector<std::pair<std::uint32_t, testing::field_value>> fields;  // none: `value`
    testing::field_value value;
  };
  struct kernel {
    recording::gpu_kernel raw;
    std::uint32_t name, mangled;
    std::uint64_t graph_node;
    std::uint32_t graph;
  };
  struct gpu_op {
    std::uint64_t graph_node;
    std::uint32_t graph;
  };
  struct api {
    recording::gpu_api raw;
    std::uint32_t name;
  };
  struct category {
    std::int64_t ns;
    std::uint32_t domain, id, name;
  };
  struct begin {
    std::uint64_t tid;
    std::int64_t start;
    std::uint32_t name;
    attrs a;
  };

  std::string title;                      // process_name, whole
  std::vector<std::uint32_t> domains{0};  // by index: interned names; 0 is the global domain's ""
  std::vector<category> categories;       // each name given, in file order
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> category_names;
  std::map<std::uint64_t, std::uint32_t> threads;  // named threads and GPU tracks: tid -> name
  std::vector<range> ranges;
  std::vector<mark> marks;
  std::vector<counter> counters;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> counter_ids;  // (domain, name)
  std::vector<kernel> kernels;
  std::vector<std::pair<recording::gpu_memcpy, gpu_op>> memcpys;
  std::vector<std::pair<recording::gpu_memset, gpu_op>> memsets;
  std::vector<api> apis;
  std::map<std::uint64_t, begin> open;  // start/end ranges begun, by id
};

}  // namespace

struct json_trace::impl {
  std::string path;
  std::map<std::uint32_t, process_events> processes;
  std::vector<std::string> strings{std::string{}};  // interned; 0 is ""
  std::unordered_map<std::string, std::uint32_t> index{{std::string{}, 0}};
  json_trace_origin origin;
  bool ours = false;

  std::uint32_t intern(std::string_view s) {
    auto [it, fresh] =
        index.try_emplace(std::string{s}, static_cast<std::uint32_t>(strings.size()));
    if (fresh) {
      strings.emplace_back(s);
    }
    return it->second;
  }

  std::uint32_t domain_of(process_events& p, std::string_view name) {
    std::uint32_t const n = intern(name);
    auto it = std::find(p.domains.begin(), p.domains.end(), n);
    if (it != p.domains.end()) {
      return static_cast<std::uint32_t>(it - p.domains.begin());
    }
    p.domains.push_back(n);
    return static_cast<std::uint32_t>(p.domains.size() - 1);
  }

  attrs attributes_of(process_events& p, value const* args, std::int64_t ns);
  void take_event(value const& e);
  void take_metadata(value const& e, process_events& p, std::uint64_t tid);
  void take_gpu(value const& e, process_events& p, std::string_view cat, std::uint64_t tid);
  void take_counter(value const& e, process_events& p);
  void take_other_data(value const& v);
  void parse_file();
  read_totals deliver_process(std::uint32_t pid, process_events const& p,
                              std::vector<trace_sink*> const& sinks) const;
  void deliver_nvtx(std::uint32_t pid, process_events const& p,
                    std::vector<trace_sink*> const& sinks, read_totals& totals) const;
  event_attributes attributes(process_events const& p, attrs const& a) const;
};

namespace {

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

}  // namespace

attrs json_trace::impl::attributes_of(process_events& p, value const* args, std::int64_t ns) {
  attrs a;
  if (args == nullptr) {
    return a;
  }
  a.domain = domain_of(p, args->str("domain"));
  if (auto const argb = args->str("color_argb"); !argb.empty()) {
    a.has_color = true;
    a.color = static_cast<std::uint32_t>(std::strtoul(std::string{argb}.c_str(), nullptr, 16));
  }
  a.category = static_cast<std::uint32_t>(to_u64(args->get("category")));
  if (a.category != 0) {
    a.category_name = intern(args->str("category_name"));
    // A category's name as given: once, and again whenever the events show it renamed.
    auto [it, fresh] = p.category_names.try_emplace({a.domain, a.category}, a.category_name);
    if (a.category_name != 0 && (fresh || it->second != a.category_name)) {
      it->second = a.category_name;
      p.categories.push_back({ns, a.domain, a.category, a.category_name});
    }
  }
  std::tie(a.payload_type, a.payload_bits) = payload_of(args);
  auto const* reg = args->get("registered");
  a.registered = reg != nullptr && reg->t == value::type::boolean && reg->b;
  return a;
}

void json_trace::impl::take_metadata(value const& e, process_events& p, std::uint64_t tid) {
  value const* args = e.get("args");
  if (args == nullptr) {
    return;
  }
  auto const what = e.str("name");
  if (what == "process_name") {
    p.title = std::string{args->str("name")};
  } else if (what == "thread_name" && e.get("tid") != nullptr) {
    p.threads[tid] = intern(args->str("name"));
  }
}

void json_trace::impl::take_gpu(value const& e, process_events& p, std::string_view cat,
                                std::uint64_t tid) {
  value const* args = e.get("args");
  value const empty;
  value const& a = args != nullptr ? *args : empty;
  std::int64_t const start = time_of(e, "ts");
  std::int64_t const end = start + time_of(e, "dur");
  // The columns every GPU operation has, into a zeroed record.
  auto common = [&](auto& raw) {
    std::memset(&raw, 0, sizeof raw);
    raw.start = start;
    raw.end = end;
    raw.device = narrow<std::uint32_t>(a.get("device"));
    raw.context = narrow<std::uint32_t>(a.get("context"));
    raw.stream = narrow<std::uint32_t>(a.get("stream"));
    raw.correlation = narrow<std::uint32_t>(a.get("correlation"));
  };
  process_events::gpu_op const graph{to_u64(a.get("graph_node")),
                                     narrow<std::uint32_t>(a.get("graph"))};
  if (cat == "cuda_kernel") {
    process_events::kernel k{};
    common(k.raw);
    auto dim = [&](char const* key, std::int32_t* out) {
      value const* v = a.get(key);
      for (std::size_t i = 0; v != nullptr && i < 3 && i < v->items.size(); ++i) {
        out[i] = narrow<std::int32_t>(&v->items[i]);
      }
    };
    dim("grid", k.raw.grid);
    dim("block", k.raw.block);
    k.raw.registers_per_thread = narrow<std::uint32_t>(a.get("registers_per_thread"));
    k.raw.static_shared = narrow<std::int32_t>(a.get("static_shared"));
    k.raw.dynamic_shared = narrow<std::int32_t>(a.get("dynamic_shared"));
    k.name = intern(e.str("name"));
    k.mangled = a.get("mangled") != nullptr ? intern(a.str("mangled")) : k.name;
    k.graph_node = graph.graph_node;
    k.graph = graph.graph;
    p.kernels.push_back(k);
  } else if (cat == "cuda_memcpy") {
    recording::gpu_memcpy m{};
    common(m);
    m.bytes = to_u64(a.get("bytes"));
    m.copy_kind = copy_kind_of(a.str("kind"));
    auto const* async = a.get("async");
    m.flags = async != nullptr && async->t == value::type::boolean && async->b ? 1 : 0;
    if (recording::is_migration(m.copy_kind)) {  // written without stream and launching call
      m.stream = recording::migration_stream;
      m.cause = narrow<std::uint32_t>(a.get("migration_cause"));
    }
    p.memcpys.emplace_back(m, graph);
  } else if (cat == "cuda_memset") {
    recording::gpu_memset m{};
    common(m);
    m.bytes = to_u64(a.get("bytes"));
    m.value = narrow<std::uint32_t>(a.get("value"));
    p.memsets.emplace_back(m, graph);
  } else if (cat == "cuda_api") {
    process_events::api c{};
    std::memset(&c.raw, 0, sizeof c.raw);
    c.raw.start = start;
    c.raw.end = end;
    c.raw.correlation = narrow<std::uint32_t>(a.get("correlation"));
    c.raw.tid = tid;
    c.raw.kind =
        static_cast<std::uint32_t>(a.str("api") == "driver" ? recording::gpu_api_kind::driver
                                                            : recording::gpu_api_kind::runtime);
    c.raw.cbid = narrow<std::uint32_t>(a.get("cbid"));
    c.raw.return_value = narrow<std::int32_t>(a.get("return_value"));
    c.name = intern(e.str("name"));
    p.apis.push_back(c);
  }
}

void json_trace::impl::take_counter(value const& e, process_events& p) {
  value const* args = e.get("args");
  if (args == nullptr || args->t != value::type::object || args->members.empty()) {
    return;
  }
  process_events::counter c;
  c.ns = time_of(e, "ts");
  auto const cat = e.str("cat");
  c.domain = domain_of(p, cat == "default" ? std::string_view{} : cat);
  c.name = intern(e.str("name"));
  auto [it, fresh] = p.counter_ids.try_emplace(
      {c.domain, c.name}, static_cast<std::uint32_t>(p.counter_ids.size() + 1));
  c.id = it->second;
  if (args->members.size() == 1 && args->members.front().first == "value") {
    c.value = field_of(args->members.front().second);
  } else {
    for (auto const& [k, v] : args->members) {
      c.fields.emplace_back(intern(k), field_of(v));
    }
  }
  p.counters.push_back(std::move(c));
}

void json_trace::impl::take_event(value const& e) {
  if (e.t != value::type::object) {
    return;
  }
  auto const ph = e.str("ph");
  auto const cat = e.str("cat");
  auto const pid = static_cast<std::uint32_t>(to_u64(e.get("pid")));
  auto const tid = to_u64(e.get("tid"));
  value const* args = e.get("args");
  auto arg = [&](char const* k) { return args != nullptr ? args->get(k) : nullptr; };
  auto flag = [&](char const* k) {
    auto const* v = arg(k);
    return v != nullptr && v->t == value::type::boolean && v->b;
  };
  if (ph == "M") {
    take_metadata(e, processes[pid], tid);
  } else if (ph == "X") {
    auto& p = processes[pid];
    // A range's args hold its domain (its cat is the domain, which may be any name); a range's
    // GPU-side instance in a graph launch holds its launch.
    if (arg("domain") != nullptr && arg("launch") == nullptr) {
      std::int64_t const start = time_of(e, "ts");
      p.ranges.push_back({tid, tid, 0, start, start + time_of(e, "dur"), intern(e.str("name")),
                          attributes_of(p, args, start), range_style::push_pop,
                          flag("unterminated")});
    } else {
      take_gpu(e, p, cat, tid);
    }
  } else if (ph == "b" || ph == "e") {
    auto& p = processes[pid];
    auto const id = to_u64(e.get("id"));
    std::int64_t const ns = time_of(e, "ts");
    if (ph == "b") {
      p.open[id] = {tid, ns, intern(e.str("name")), attributes_of(p, args, ns)};
    } else if (auto it = p.open.find(id); it != p.open.end()) {
      auto const& b = it->second;
      p.ranges.push_back(
          {b.tid, tid, id, b.start, ns, b.name, b.a, range_style::start_end, flag("unterminated")});
      p.open.erase(it);
    }
  } else if (ph == "i") {
    auto& p = processes[pid];
    std::int64_t const ns = time_of(e, "ts");
    bool const sync = cat == "nvtx.sync";
    p.marks.push_back(
        {tid, sync ? to_u64(arg("handle")) : 0, ns, intern(e.str("name")),
         attributes_of(p, args, ns),
         sync && args != nullptr ? mark_kind_of(args->str("event")) : mark_kind::mark});
  } else if (ph == "C") {
    take_counter(e, processes[pid]);
  }
}

void json_trace::impl::take_other_data(value const& v) {
  if (v.t != value::type::object) {
    return;
  }
  ours = v.str("tool") == "nvtxpp-capture";
  if (auto const* utc = v.get("base_utc_ns"); utc != nullptr && utc->t == value::type::number) {
    origin.has_utc = true;
    origin.base_utc_ns = to_i64(utc);
  }
  if (auto const* launch = v.get("launch"); launch != nullptr) {
    for (auto const& [k, x] : launch->members) {
      if (x.t == value::type::string) {
        origin.launch.emplace_back(k, x.text);
      }
    }
  }
}

void json_trace::impl::parse_file() {
  std::string const text = read_all(path);
  json::parser ps{text, path};
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
            take_event(ps.parse(1));
          } while (ps.comma());
        }
        ps.expect(']');
      } else {
        auto const v = ps.parse(1);
        if (key == "otherData") {
          take_other_data(v);
        }
      }
    } while (ps.comma());
  }
  ps.expect('}');
  if (!ps.at_end()) {
    ps.fail("text after the JSON value");
  }
  if (!events || !ours) {
    throw json_input_error(path +
                           ": a JSON file that is not a trace of nvtxpp-capture (no traceEvents, "
                           "or no otherData.tool \"nvtxpp-capture\")");
  }
}

namespace {

/// A process's JSON track title back into the model: "COMMAND (pid N)" ("process" for an unknown
/// command) gives the command; anything else (merge's "rank R (HOST, pid P) NAME") is a whole
/// title.
void name_process(process_info& info, std::string const& title) {
  std::string const suffix = fmt::format(" (pid {})", info.pid);
  if (title.size() > suffix.size() &&
      title.compare(title.size() - suffix.size(), suffix.size(), suffix) == 0) {
    info.command = title.substr(0, title.size() - suffix.size());
    if (info.command == "process") {
      info.command.clear();
    }
  } else {
    info.title = title;
  }
}

/// The name the JSON writer gives a GPU stream's track when the program did not name the stream:
/// such a track name is no name of the stream's own.
std::string default_track_name(std::uint32_t device, std::uint32_t stream) {
  std::string name = stream == recording::migration_stream ? std::string{"Unified memory"}
                                                           : fmt::format("CUDA stream {}", stream);
  if (device != 0) {
    name += fmt::format(" (device {})", device);
  }
  return name;
}

}  // namespace

read_totals json_trace::impl::deliver_process(std::uint32_t pid, process_events const& p,
                                              std::vector<trace_sink*> const& sinks) const {
  auto each = [&](auto const& info, auto hook) {
    for (auto* s : sinks) {
      (s->*hook)(info);
    }
  };
  read_totals totals;
  process_info info;
  info.pid = pid;
  info.path = path;
  info.finished = true;
  name_process(info, p.title);
  each(info, &trace_sink::begin_process);
  for (std::size_t i = 0; i < p.domains.size(); ++i) {
    each(domain_info{pid, static_cast<std::uint32_t>(i), strings[p.domains[i]]},
         &trace_sink::on_domain);
  }
  for (auto const& c : p.categories) {
    each(category_info{pid, c.domain, c.id, c.ns, strings[c.name]}, &trace_sink::on_category);
  }
  for (auto const& [tid, name] : p.threads) {
    if (tid < json_gpu_track(0, 0)) {  // GPU tracks' names are streams' (below)
      each(thread_info{pid, tid, strings[name], true}, &trace_sink::on_thread);
    }
  }
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> streams;
  for (auto const& k : p.kernels) {
    kernel_info ki;
    ki.pid = pid;
    ki.raw = k.raw;
    ki.demangled = strings[k.name];
    ki.name = strings[k.mangled];
    ki.graph_node = k.graph_node;
    ki.graph = k.graph;
    streams.emplace(k.raw.device, k.raw.context, k.raw.stream);
    each(ki, &trace_sink::on_kernel);
  }
  for (auto const& [raw, graph] : p.memcpys) {
    streams.emplace(raw.device, raw.context, raw.stream);
    each(memcpy_info{pid, raw, graph.graph_node, graph.graph}, &trace_sink::on_memcpy);
  }
  for (auto const& [raw, graph] : p.memsets) {
    streams.emplace(raw.device, raw.context, raw.stream);
    each(memset_info{pid, raw, graph.graph_node, graph.graph}, &trace_sink::on_memset);
  }
  for (auto const& a : p.apis) {
    api_info ai;
    ai.pid = pid;
    ai.raw = a.raw;
    ai.raw.pid = pid;
    ai.name = strings[a.name];
    each(ai, &trace_sink::on_api);
  }
  totals.gpu_ops = p.kernels.size() + p.memcpys.size() + p.memsets.size();
  totals.api_calls = p.apis.size();
  deliver_nvtx(pid, p, sinks, totals);
  for (auto const& [device, context, stream] : streams) {
    auto it = p.threads.find(json_gpu_track(device, stream));
    std::string name = it == p.threads.end() ? std::string{} : strings[it->second];
    if (name == default_track_name(device, stream)) {
      name.clear();
    } else if (auto const dev = fmt::format(" (device {})", device);
               device != 0 && name.size() > dev.size() &&
               name.compare(name.size() - dev.size(), dev.size(), dev) == 0) {
      name.resize(name.size() - dev.size());
    }
    each(gpu_stream_info{pid, device, context, stream, name}, &trace_sink::on_gpu_stream);
  }
  each(info, &trace_sink::end_process);
  return totals;
}

event_attributes json_trace::impl::attributes(process_events const& p, attrs const& a) const {
  event_attributes e;
  e.domain = a.domain;
  e.domain_name = strings[p.domains[a.domain]];
  e.has_color = a.has_color;
  e.color = a.color;
  e.category = a.category;
  e.category_name = strings[a.category_name];
  e.payload_type = a.payload_type;
  e.payload_bits = a.payload_bits;
  e.registered = a.registered;
  return e;
}

void json_trace::impl::deliver_nvtx(std::uint32_t pid, process_events const& p,
                                    std::vector<trace_sink*> const& sinks,
                                    read_totals& totals) const {
  for (auto const& r : p.ranges) {
    range_info ri;
    ri.pid = pid;
    ri.style = r.style;
    ri.tid = r.tid;
    ri.end_tid = r.end_tid;
    ri.start_ns = r.start;
    ri.end_ns = r.end;
    ri.id = r.id;
    ri.unterminated = r.unterminated;
    ri.name = strings[r.name];
    ri.attr = attributes(p, r.a);
    for (auto* s : sinks) {
      s->on_range(ri);
    }
  }
  for (auto const& m : p.marks) {
    mark_info mi;
    mi.pid = pid;
    mi.tid = m.tid;
    mi.ns = m.ns;
    mi.kind = m.kind;
    mi.handle = m.handle;
    mi.name = strings[m.name];
    mi.attr = attributes(p, m.a);
    for (auto* s : sinks) {
      s->on_mark(mi);
    }
  }
  testing::counter_sample sample;
  for (auto const& c : p.counters) {
    sample.id = c.id;
    sample.name = strings[c.name];
    sample.value = c.value;
    sample.fields.clear();
    for (auto const& [name, v] : c.fields) {
      sample.fields.emplace_back();
      sample.fields.back().name = strings[name];
      sample.fields.back().value = v;
    }
    // The JSON gives a counter's samples no thread: the process's main thread takes them.
    counter_sample_info ci{pid, pid, c.ns, c.domain, strings[p.domains[c.domain]], &sample};
    for (auto* s : sinks) {
      s->on_counter_sample(ci);
    }
  }
  totals.ranges = p.ranges.size();
  totals.marks = p.marks.size();
  totals.counter_samples = p.counters.size();
}

json_trace::json_trace(std::string const& path) : d_{std::make_unique<impl>()} {
  d_->path = path;
  d_->parse_file();
}

json_trace::~json_trace() = default;

json_trace_origin const& json_trace::origin() const noexcept { return d_->origin; }

read_totals json_trace::deliver(std::vector<trace_sink*> const& sinks) const {
  read_totals totals;
  for (auto const& [pid, p] : d_->processes) {
    read_totals const t = d_->deliver_process(pid, p, sinks);
    ++totals.processes;
    totals.ranges += t.ranges;
    totals.marks += t.marks;
    totals.counter_samples += t.counter_samples;
    totals.gpu_ops += t.gpu_ops;
    totals.api_calls += t.api_calls;
  }
  return totals;
}

read_totals read_json_trace(std::string const& path, std::vector<trace_sink*> const& sinks) {
  return json_trace{path}.deliver(sinks);
}

bool starts_as_json_object(std::string const& path) noexcept {
  // Only a regular file is read: a FIFO would block, or lose the bytes read from it.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return false;
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return false;
  }
  int c = 0;
  while ((c = std::fgetc(f)) == ' ' || c == '\n' || c == '\r' || c == '\t') {
  }
  std::fclose(f);
  return c == '{';
}

}  // namespace nvtxpp::capture
