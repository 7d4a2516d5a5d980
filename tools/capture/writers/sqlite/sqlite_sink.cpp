// The trace_sink of `-o FILE.sqlite` (sqlite_sink.hpp): the trace model's events as rows of
// Nsight Systems' export layout, written by sqlite_writer.
#include "sqlite_writer.hpp"

#include "../../common/launch_meta.hpp"
#include "sqlite_sink.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace nvtxpp::capture {

namespace {

std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t realtime_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// CUPTI's memory kinds (0 unknown, 1 pageable, 2 pinned, 3 device, ...) in nsys's
// ENUM_CUDA_MEM_KIND (0 pageable, 1 pinned, 2 device, ..., 7 unknown).
std::int32_t nsys_mem_kind(std::uint32_t cupti) noexcept {
  return cupti == 0 || cupti > 7 ? 7 : static_cast<std::int32_t>(cupti) - 1;
}

// CUPTI's launch types (0 regular, 1 coop single, 2 coop multi) in
// ENUM_CUDA_KERNEL_LAUNCH_TYPE (0 unknown, 1 regular, 2 coop single, 3 coop multi).
std::int32_t nsys_launch_type(std::uint8_t cupti) noexcept {
  return cupti <= 2 ? static_cast<std::int32_t>(cupti) + 1 : 0;
}

class sqlite_sink final : public trace_sink {
 public:
  sqlite_sink(std::string const& path, sqlite_writer::options opts, std::int64_t origin_mono,
              std::int64_t origin_utc, std::vector<std::pair<std::string, std::string>> launch)
      : w_{path, std::move(opts)},
        origin_{origin_mono},
        origin_utc_{origin_utc},
        launch_{std::move(launch)} {}

  void begin_process(process_info const& p) override {
    if (!have_process_) {
      // Time 0 is the capture's start, or the first process's if it started before (a
      // recording read after the fact).
      have_process_ = true;
      if (p.start_ns != 0 && p.start_ns < origin_) {
        origin_utc_ -= origin_ - p.start_ns;
        origin_ = p.start_ns;
      }
      w_.session_start(origin_utc_);
    }
    process_start_ = p.start_ns;
    // A whole track name where the source has one (a merged trace read back), else the
    // program, as nsys names processes.
    std::string_view name = p.title.empty() ? std::string_view{p.command} : p.title;
    if (p.title.empty()) {
      name = name.substr(0, name.find(' '));
    }
    w_.process(p.pid, name);
  }

  void on_domain(domain_info const& dom) override {
    if (dom.index == 0) {
      return;  // the global domain has no creation event (nsys writes none)
    }
    nsys_nvtx_row r;
    r.start = t(process_start_);
    r.type = nsys_event_type::domain_create;
    r.text = dom.name;
    r.intern_text = false;
    r.global_tid = nsys_global_tid(dom.pid, dom.pid);
    r.domain_id = dom.index;
    w_.nvtx_event(r);
  }

  void on_category(category_info const& c) override {
    nsys_nvtx_row r;
    r.start = t(c.ns);
    r.type = nsys_event_type::category_name;
    r.category = c.id;
    r.text = c.name;
    r.intern_text = false;
    r.global_tid = nsys_global_tid(c.pid, c.pid);
    r.domain_id = c.domain;
    w_.nvtx_event(r);
  }

  void on_thread(thread_info const& th) override {
    if (!th.named) {
      return;
    }
    nsys_nvtx_row r;
    r.start = t(process_start_);
    r.type = nsys_event_type::thread_name;
    r.text = th.name;
    r.intern_text = false;
    r.global_tid = nsys_global_tid(th.pid, th.tid);
    w_.nvtx_event(r);
    w_.thread_name(r.global_tid, th.name);
  }

  void on_range(range_info const& rg) override {
    nsys_nvtx_row r;
    r.start = t(rg.start_ns);
    if (!rg.unterminated) {
      r.end = t(rg.end_ns);  // nsys leaves an unterminated range's end NULL
    }
    bool const start_end = rg.style == range_style::start_end;
    r.type = start_end ? nsys_event_type::start_end : nsys_event_type::push_pop;
    if (start_end) {
      r.range_id = static_cast<std::int64_t>(rg.id);
      if (rg.end_tid != rg.tid && !rg.unterminated) {
        r.end_global_tid = nsys_global_tid(rg.pid, rg.end_tid);
      }
    }
    r.text = rg.name;
    r.global_tid = nsys_global_tid(rg.pid, rg.tid);
    attributes(r, rg.attr);
    w_.nvtx_event(r);
  }

  void on_mark(mark_info const& m) override {
    if (m.kind != mark_kind::mark) {
      return;  // synchronization-object events have no NVTX_EVENTS form in nsys's export
    }
    nsys_nvtx_row r;
    r.start = t(m.ns);
    r.type = nsys_event_type::mark;
    r.text = m.name;
    r.global_tid = nsys_global_tid(m.pid, m.tid);
    attributes(r, m.attr);
    w_.nvtx_event(r);
  }

  void on_kernel(kernel_info const& k) override {
    auto const& raw = k.raw;
    device_of_context_[raw.context] = raw.device;
    std::string const short_name = nsys_short_kernel_name(k.demangled);
    nsys_kernel_row r;
    r.start = t(raw.start);
    r.end = t(raw.end);
    r.device = raw.device;
    r.context = raw.context;
    r.stream = raw.stream;
    r.correlation = raw.correlation;
    r.global_pid = nsys_global_pid(k.pid);
    r.demangled = k.demangled.empty() ? k.name : k.demangled;
    r.short_name = short_name.empty() ? r.demangled : std::string_view{short_name};
    r.mangled = k.name;
    r.launch_type = nsys_launch_type(raw.launch_type);
    r.cache_config = raw.cache_config;
    r.registers_per_thread = raw.registers_per_thread;
    for (int i = 0; i < 3; ++i) {
      r.grid[i] = raw.grid[i];
      r.block[i] = raw.block[i];
    }
    r.static_shared = raw.static_shared;
    r.dynamic_shared = raw.dynamic_shared;
    r.local_per_thread = raw.local_per_thread;
    r.local_total = raw.local_total;
    r.grid_id = raw.grid_id;
    r.shared_executed = raw.shared_executed;
    r.graph_node = k.graph_node;
    w_.kernel(r);
  }

  void on_graph_range(graph_range_info const& g) override {
    nvtxpp_graph_range_row r;
    r.start = t(g.start_ns);
    r.end = t(g.end_ns);
    r.text = g.name;
    r.domain_id = g.domain;
    r.global_tid = nsys_global_tid(g.pid, g.tid);
    r.nvtx_start = t(g.cpu_start_ns);
    r.global_pid = nsys_global_pid(g.pid);
    r.device = g.device;
    r.context = g.context;
    r.stream = g.stream;
    r.correlation = g.correlation;
    r.graph = g.graph;
    r.launch = g.launch;
    r.depth = g.depth;
    r.kernels = g.kernels;
    r.memcpys = g.memcpys;
    r.memsets = g.memsets;
    r.busy_ns = g.busy_ns;
    w_.graph_range(r);
  }

  void on_memcpy(memcpy_info const& m) override {
    auto const& raw = m.raw;
    device_of_context_[raw.context] = raw.device;
    nsys_memcpy_row r;
    r.start = t(raw.start);
    r.end = t(raw.end);
    r.device = raw.device;
    r.context = raw.context;
    r.stream = raw.stream;
    r.correlation = raw.correlation;
    r.global_pid = nsys_global_pid(m.pid);
    r.bytes = raw.bytes;
    r.copy_kind = raw.copy_kind;  // CUPTI's memcpy kinds are ENUM_CUDA_MEMCPY_OPER's ids
    r.src_kind = nsys_mem_kind(raw.src_kind);
    r.dst_kind = nsys_mem_kind(raw.dst_kind);
    if (recording::is_migration(raw.copy_kind)) {
      r.stream = 0;  // CUPTI gives migrations no stream (the trace's own track id is ours)
      r.migration_cause = raw.cause;
    }
    w_.memcpy(r);
  }

  void on_graph_launch(graph_launch_info const& g) override {
    nsys_graph_trace_row r;
    r.start = t(g.start_ns);
    r.end = t(g.end_ns);
    r.device = g.device;
    r.context = g.context;
    r.stream = g.stream;
    r.correlation = g.correlation;
    r.graph = g.graph;
    r.global_pid = nsys_global_pid(g.pid);
    w_.graph_trace(r);
  }

  void on_memset(memset_info const& m) override {
    auto const& raw = m.raw;
    device_of_context_[raw.context] = raw.device;
    nsys_memset_row r;
    r.start = t(raw.start);
    r.end = t(raw.end);
    r.device = raw.device;
    r.context = raw.context;
    r.stream = raw.stream;
    r.correlation = raw.correlation;
    r.global_pid = nsys_global_pid(m.pid);
    r.value = raw.value;
    r.bytes = raw.bytes;
    r.mem_kind = nsys_mem_kind(raw.mem_kind);
    w_.memset(r);
  }

  void on_sync(sync_info const& s) override {
    auto const& raw = s.raw;
    nsys_sync_row r;
    r.start = t(raw.start);
    r.end = t(raw.end);
    // CUPTI's sync record has no device: the one its context ran other work on.
    auto const it = device_of_context_.find(raw.context);
    r.device = it != device_of_context_.end() ? it->second : 0;
    r.context = raw.context;
    r.stream = raw.stream;
    r.correlation = raw.correlation;
    r.global_pid = nsys_global_pid(s.pid);
    r.sync_type = static_cast<std::int32_t>(raw.type);  // same ids as ENUM_CUPTI_SYNC_TYPE
    r.event = raw.event;
    w_.sync(r);
  }

  void on_api(api_info const& a) override {
    auto const& raw = a.raw;
    nsys_api_row r;
    r.start = t(raw.start);
    r.end = t(raw.end);
    r.event_class = raw.kind == static_cast<std::uint32_t>(recording::gpu_api_kind::driver) ? 1 : 0;
    r.global_tid = nsys_global_tid(a.pid, raw.tid);
    r.correlation = raw.correlation;
    r.name = a.name;
    r.return_value = raw.return_value;
    w_.api(r);
  }

  void on_gpu_stream(gpu_stream_info const& s) override {
    if (!s.name.empty()) {
      w_.nvtx_cuda_stream(s.name, s.pid, s.device, s.context, s.stream);
    }
  }

  void on_gpu_info(gpu_info const& g) override {
    std::string key = "NVTXPP_GPU_INFO:";
    key += g.key;
    w_.capture_meta(key, g.value);
  }

  void end_process(process_info const&) override { device_of_context_.clear(); }

  void finish() override {
    if (!have_process_) {
      w_.session_start(origin_utc_);
    }
    for (auto const& [name, value] : launch_) {  // rank and host, for merge
      w_.capture_meta(name, value);
    }
    w_.drop_if_empty("NVTX_EVENTS");  // no NVTX: no table, as in nsys's export
    w_.finish();
  }

 private:
  std::int64_t t(std::int64_t mono_ns) const noexcept { return mono_ns - origin_; }

  void on_schema(schema_info const& si) override {
    recording::schema_def const& sd = *si.def;
    if (sd.is_enum) {
      return;  // where nsys keeps registered enums is not known yet (no export shows one)
    }
    nsys_schema_row r;
    r.domain_id = sd.domain;
    r.schema_id = sd.id;
    r.name = sd.name;
    r.type = sd.type;
    r.flags = sd.flags;
    r.num_entries = sd.entries.size();
    r.payload_size = sd.static_size;
    r.align_to = sd.pack_align;
    w_.payload_schema(r);
    for (std::size_t i = 0; i < sd.entries.size(); ++i) {
      auto const& e = sd.entries[i];
      nsys_schema_entry_row er;
      er.domain_id = sd.domain;
      er.schema_id = sd.id;
      er.index = i;
      er.flags = e.flags;
      er.type = e.type;
      er.name = e.name;
      er.description = e.description;
      er.array_or_union = e.array_or_union;
      er.offset = e.offset;
      w_.payload_schema_entry(er);
    }
  }

  /// Counter samples, as nsys 2025.3 exports them (GENERIC_EVENT_* tables; see
  /// sqlite_writer::generic_event). A counter's type is written at its first sample. A no-value
  /// sample whose reason is "zero" is written as 0; "unchanged" and "unavailable" ones, and
  /// samples of an id never registered, have no value to write and are skipped.
  void on_counter_sample(counter_sample_info const& c) override {
    testing::counter_sample const& cs = *c.sample;
    if (!cs.registered || (cs.no_value && *cs.no_value != 0)) {
      return;
    }
    testing::field_value zero;  // the value of a NVTX_COUNTER_SAMPLE_ZERO sample
    if (cs.no_value) {
      bool const real = cs.value_type == 19 || cs.value_type == 20;  // FLOAT, DOUBLE
      zero = real ? testing::field_value{0.0} : testing::field_value{std::int64_t{0}};
    }
    testing::field_value const& value = cs.no_value ? zero : cs.value;
    std::int64_t const source = nsys_global_pid(c.pid);
    if (sources_.insert(source).second) {
      w_.generic_source(source);
    }
    auto const key = std::make_tuple(c.pid, c.domain, cs.id);
    auto it = counter_types_.find(key);
    std::vector<sqlite_writer::generic_value> values;
    auto value_of = [](testing::field_value const& v, sqlite_writer::generic_value& out) {
      if (auto const* i = std::get_if<std::int64_t>(&v)) {
        out.type = 0;
        out.i = *i;
      } else if (auto const* u = std::get_if<std::uint64_t>(&v)) {
        out.type = 1;
        out.u = *u;
      } else if (auto const* d = std::get_if<double>(&v)) {
        out.type = 3;
        out.d = *d;
      } else {
        return false;
      }
      return true;
    };
    std::vector<std::string> names;
    if (cs.fields.empty()) {
      sqlite_writer::generic_value g;
      if (!value_of(value, g)) {
        return;
      }
      values.push_back(g);
      names.push_back(cs.name);
    } else {
      for (auto const& f : cs.fields) {
        sqlite_writer::generic_value g;
        if (value_of(f.value, g)) {
          values.push_back(g);
          names.push_back(f.name.empty() ? cs.name : f.name);
        }
      }
      if (values.empty()) {
        return;
      }
    }
    if (it == counter_types_.end()) {
      std::int64_t const type = source + 1 + static_cast<std::int64_t>(counter_types_.size());
      std::vector<sqlite_writer::generic_field> fields(values.size());
      for (std::size_t i = 0; i < values.size(); ++i) {
        fields[i].name = names[i];
        fields[i].type = values[i].type;
      }
      w_.generic_type(type, source, cs.name, fields.data(), fields.size());
      it = counter_types_.emplace(key, type).first;
    }
    w_.generic_event(t(c.ns), it->second, nsys_global_tid(c.pid, c.tid), values.data(),
                     values.size());
  }

  /// binaryData: the bytes of the event's first structured payload (nsys's exact encoding of
  /// this column is not known yet; the raw payload is the natural reading of "binary payload").
  static void attributes(nsys_nvtx_row& r, event_attributes const& a) {
    if (!a.payloads.empty()) {
      auto const& b = a.payloads.front().bytes;
      r.binary = std::string_view{reinterpret_cast<char const*>(b.data()), b.size()};
    }
    r.domain_id = a.domain;
    if (a.has_color) {
      r.color = a.color;
    }
    if (a.category != 0) {
      r.category = a.category;
    }
    r.payload_type = a.payload_type;
    r.payload_bits = a.payload_bits;
  }

  sqlite_writer w_;
  std::int64_t origin_;
  std::int64_t origin_utc_;
  std::vector<std::pair<std::string, std::string>> launch_;
  bool have_process_ = false;
  std::int64_t process_start_ = 0;
  std::unordered_map<std::uint32_t, std::uint32_t> device_of_context_;
  std::set<std::int64_t> sources_;  // GENERIC_EVENT_SOURCES written (one per process)
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, std::int64_t>
      counter_types_;  // (pid, domain, counter id) -> GENERIC_EVENT_TYPES typeId
};

}  // namespace

std::unique_ptr<trace_sink> make_sqlite_sink(std::string const& path) {
  sqlite_writer::options opts;
  if (char const* v = std::getenv("NVTXPP_CAPTURE_FAIL_WRITE_AFTER"); v != nullptr && *v != 0) {
    opts.fail_write_after = std::strtoull(v, nullptr, 10);
  }
  return std::make_unique<sqlite_sink>(path, opts, monotonic_ns(),
                                       realtime_ns() + test_clock_shift_ns(), launch_metadata());
}

std::unique_ptr<trace_sink> make_sqlite_sink_at(
    std::string const& path, sqlite_writer::options const& opts, std::int64_t origin_mono_ns,
    std::int64_t origin_utc_ns,
    std::optional<std::vector<std::pair<std::string, std::string>>> launch) {
  return std::make_unique<sqlite_sink>(path, opts, origin_mono_ns, origin_utc_ns,
                                       launch ? std::move(*launch) : launch_metadata());
}

bool sqlite_sink_available() noexcept { return true; }

}  // namespace nvtxpp::capture
