// One merge input back into the trace model (sqlite_reader.hpp).

#include "sqlite_reader.hpp"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

namespace nvtxpp::capture {

namespace {

constexpr std::uint64_t id24 = 0xFFFFFF;

// ENUM_CUDA_MEM_KIND back to CUPTI's memory kinds (the writer's nsys_mem_kind, inverted).
std::uint8_t cupti_mem_kind(std::int64_t nsys) noexcept {
  return nsys < 0 || nsys >= 7 ? 0 : static_cast<std::uint8_t>(nsys + 1);
}

template <typename T>
T narrow(std::int64_t v) noexcept {
  return static_cast<T>(v);
}

/// One process of an input, delivered.
class process_reader {
 public:
  process_reader(merge_input const& in, input_process const& p, sqlite3* db,
                 std::vector<trace_sink*> const& sinks, read_totals& totals, bool ordered)
      : in_{in}, p_{p}, db_{db}, sinks_{sinks}, totals_{totals}, ordered_{ordered} {}

  void run() {
    process_info info;
    info.pid = p_.new_pid;
    info.command = p_.name;
    info.title = p_.label;  // holds the recorded pid already (the merged one may differ)
    info.path = in_.path;
    info.start_ns = in_.shift_ns;
    for (auto* s : sinks_) {
      s->begin_process(info);
    }
    names_and_threads();
    gpu();
    if (has("NVTX_EVENTS")) {
      events();
    }
    counters();
    streams();
    info.end_ns = last_ns_;
    info.finished = true;
    for (auto* s : sinks_) {
      s->end_process(info);
    }
    ++totals_.processes;
  }

 private:
  bool has(char const* table) {
    auto [it, fresh] = tables_.try_emplace(table, false);
    if (fresh) {
      it->second = has_table(db_, in_.path, table);
    }
    return it->second;
  }

  input_query query(std::string const& sql) {
    input_query q{db_, in_.path, sql.c_str()};
    q.bind(1, p_.pid);
    return q;
  }

  std::int64_t t(std::int64_t ns) {
    std::int64_t const v = ns + in_.shift_ns;
    last_ns_ = std::max(last_ns_, v);
    return v;
  }

  std::uint64_t tid_of(std::int64_t gtid) const noexcept {
    return static_cast<std::uint64_t>(gtid) & id24;
  }

  // Domains (eventType 75), category names (33) and thread names (39, and ThreadNames), in
  // one pass over the NVTX events.
  void names_and_threads() {
    std::map<std::uint64_t, std::string> named;
    if (has("ThreadNames")) {
      auto q = query(
          "SELECT t.globalTid, s.value FROM ThreadNames AS t JOIN StringIds AS s ON "
          "s.id = t.nameId WHERE ((t.globalTid >> 24) & 16777215) = ?1");
      while (q.next()) {
        named[tid_of(q.i64(0))] = q.text(1);
      }
    }
    if (has("NVTX_EVENTS")) {
      names(named);
    }
    for (auto const& [tid, name] : named) {
      if (!p_.has_thread(static_cast<std::uint32_t>(tid))) {
        continue;  // a named thread without events would be an empty track
      }
      thread_info th{p_.new_pid, tid, name, true};
      for (auto* s : sinks_) {
        s->on_thread(th);
      }
    }
  }

  void names(std::map<std::uint64_t, std::string>& threads) {
    auto q = query(
        "SELECT e.eventType, e.domainId, e.category, e.start, coalesce(e.text, s.value, ''), "
        "e.globalTid FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON s.id = e.textId "
        "WHERE e.eventType IN (33, 39, 75) AND ((e.globalTid >> 24) & 16777215) = ?1 "
        "ORDER BY e.start");
    while (q.next()) {
      auto const domain = narrow<std::uint32_t>(q.i64(1));
      if (q.i64(0) == 39) {
        threads[tid_of(q.i64(5))] = q.text(4);
      } else if (q.i64(0) == 75) {
        auto& name = domains_[domain];
        name = q.text(4);
        domain_info d{p_.new_pid, domain, name};
        for (auto* s : sinks_) {
          s->on_domain(d);
        }
      } else {
        auto const id = narrow<std::uint32_t>(q.i64(2));
        auto& name = categories_[{domain, id}];
        name = q.text(4);
        category_info c{p_.new_pid, domain, id, t(q.i64(3)), name};
        for (auto* s : sinks_) {
          s->on_category(c);
        }
      }
    }
  }

  // GPU records, table by table, each in time order.
  void gpu() {
    kernels();
    memcpys();
    memsets();
    syncs();
    api_calls();
  }

  static constexpr char const* pid_of = "((globalPid >> 24) & 16777215) = ?1";

  /// The columns every GPU work table's query starts with (start, end, deviceId, contextId,
  /// streamId, correlationId) into `raw`, zeroed first; the stream is noted and counted.
  template <typename Raw>
  void work_columns(input_query& q, Raw& raw) {
    std::memset(&raw, 0, sizeof raw);
    raw.start = t(q.i64(0));
    raw.end = t(q.i64(1));
    raw.device = narrow<std::uint32_t>(q.i64(2));
    raw.context = narrow<std::uint32_t>(q.i64(3));
    raw.stream = narrow<std::uint32_t>(q.i64(4));
    raw.correlation = narrow<std::uint32_t>(q.i64(5));
    stream(raw.device, raw.context, raw.stream);
    ++totals_.gpu_ops;
  }

  void kernels() {
    if (!has("CUPTI_ACTIVITY_KIND_KERNEL")) {
      return;
    }
    auto q = query(fmt::format(
        "SELECT start, end, deviceId, contextId, streamId, correlationId, "
        "coalesce(d.value, ''), coalesce(m.value, ''), gridX, gridY, gridZ, blockX, blockY, "
        "blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory, "
        "localMemoryPerThread, localMemoryTotal, gridId, coalesce(sharedMemoryExecuted, 0), "
        "coalesce(launchType, 0), coalesce(cacheConfig, 0) "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL AS k LEFT JOIN StringIds AS d ON d.id = "
        "k.demangledName LEFT JOIN StringIds AS m ON m.id = k.mangledName WHERE {} "
        "ORDER BY start",
        pid_of));
    while (q.next()) {
      kernel_info k;
      k.pid = p_.new_pid;
      work_columns(q, k.raw);
      k.demangled = q.text(6);
      k.name = q.text(7).empty() ? k.demangled : q.text(7);
      for (int i = 0; i < 3; ++i) {
        k.raw.grid[i] = narrow<std::int32_t>(q.i64(8 + i));
        k.raw.block[i] = narrow<std::int32_t>(q.i64(11 + i));
      }
      k.raw.registers_per_thread = narrow<std::uint32_t>(q.i64(14));
      k.raw.static_shared = narrow<std::int32_t>(q.i64(15));
      k.raw.dynamic_shared = narrow<std::int32_t>(q.i64(16));
      k.raw.local_per_thread = narrow<std::uint32_t>(q.i64(17));
      k.raw.local_total = narrow<std::uint64_t>(q.i64(18));
      k.raw.grid_id = narrow<std::uint64_t>(q.i64(19));
      k.raw.shared_executed = narrow<std::uint32_t>(q.i64(20));
      auto const launch = q.i64(21);  // ENUM_CUDA_KERNEL_LAUNCH_TYPE: CUPTI's + 1
      k.raw.launch_type = launch >= 1 && launch <= 3 ? narrow<std::uint8_t>(launch - 1) : 0;
      k.raw.cache_config = narrow<std::uint8_t>(q.i64(22));
      for (auto* s : sinks_) {
        s->on_kernel(k);
      }
    }
  }

  void memcpys() {
    if (!has("CUPTI_ACTIVITY_KIND_MEMCPY")) {
      return;
    }
    auto q = query(fmt::format(
        "SELECT start, end, deviceId, contextId, streamId, correlationId, bytes, copyKind, "
        "coalesce(srcKind, 7), coalesce(dstKind, 7) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE {} "
        "ORDER BY start",
        pid_of));
    while (q.next()) {
      memcpy_info m;
      m.pid = p_.new_pid;
      work_columns(q, m.raw);
      m.raw.bytes = narrow<std::uint64_t>(q.i64(6));
      m.raw.copy_kind = narrow<std::uint8_t>(q.i64(7));  // CUPTI's ids are nsys's
      m.raw.src_kind = cupti_mem_kind(q.i64(8));
      m.raw.dst_kind = cupti_mem_kind(q.i64(9));
      for (auto* s : sinks_) {
        s->on_memcpy(m);
      }
    }
  }

  void memsets() {
    if (!has("CUPTI_ACTIVITY_KIND_MEMSET")) {
      return;
    }
    auto q = query(fmt::format(
        "SELECT start, end, deviceId, contextId, streamId, correlationId, bytes, value, "
        "coalesce(memKind, 7) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE {} ORDER BY start",
        pid_of));
    while (q.next()) {
      memset_info m;
      m.pid = p_.new_pid;
      work_columns(q, m.raw);
      m.raw.bytes = narrow<std::uint64_t>(q.i64(6));
      m.raw.value = narrow<std::uint32_t>(q.i64(7));
      m.raw.mem_kind = cupti_mem_kind(q.i64(8));
      for (auto* s : sinks_) {
        s->on_memset(m);
      }
    }
  }

  void syncs() {
    if (!has("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")) {
      return;
    }
    auto q = query(
        fmt::format("SELECT start, end, contextId, streamId, correlationId, syncType, eventId "
                    "FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE {} ORDER BY start",
                    pid_of));
    while (q.next()) {
      sync_info s;
      s.pid = p_.new_pid;
      std::memset(&s.raw, 0, sizeof s.raw);
      s.raw.start = t(q.i64(0));
      s.raw.end = t(q.i64(1));
      s.raw.context = narrow<std::uint32_t>(q.i64(2));
      s.raw.stream = narrow<std::uint32_t>(q.i64(3));
      s.raw.correlation = narrow<std::uint32_t>(q.i64(4));
      s.raw.type = narrow<std::uint32_t>(q.i64(5));
      s.raw.event = narrow<std::uint32_t>(q.i64(6));
      for (auto* sink : sinks_) {
        sink->on_sync(s);
      }
    }
  }

  void api_calls() {
    if (!has("CUPTI_ACTIVITY_KIND_RUNTIME")) {
      return;
    }
    auto q = query(
        "SELECT r.start, r.end, r.eventClass, r.globalTid, r.correlationId, "
        "coalesce(s.value, ''), r.returnValue FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r LEFT JOIN "
        "StringIds AS s ON s.id = r.nameId WHERE ((r.globalTid >> 24) & 16777215) = ?1 "
        "ORDER BY r.start");
    while (q.next()) {
      api_info a;
      a.pid = p_.new_pid;
      std::memset(&a.raw, 0, sizeof a.raw);
      a.raw.start = t(q.i64(0));
      a.raw.end = t(q.i64(1));
      a.raw.kind = static_cast<std::uint32_t>(q.i64(2) == 1 ? recording::gpu_api_kind::driver
                                                            : recording::gpu_api_kind::runtime);
      a.raw.tid = tid_of(q.i64(3));
      a.raw.pid = p_.new_pid;
      a.raw.correlation = narrow<std::uint32_t>(q.i64(4));
      a.name = q.text(5);
      a.raw.return_value = narrow<std::int32_t>(q.i64(6));
      ++totals_.api_calls;
      for (auto* s : sinks_) {
        s->on_api(a);
      }
    }
  }

  void stream(std::uint32_t device, std::uint32_t context, std::uint32_t stream) {
    streams_.emplace(device, context, stream);
  }

  void attributes(input_query const& q, event_attributes& a) {
    a.domain = narrow<std::uint32_t>(q.i64(9));
    auto d = domains_.find(a.domain);
    a.domain_name = d == domains_.end() ? std::string_view{} : std::string_view{d->second};
    a.has_color = !q.null(5);
    a.color = narrow<std::uint32_t>(q.i64(5));
    a.category = narrow<std::uint32_t>(q.i64(4));
    auto c = categories_.find({a.domain, a.category});
    a.category_name = c == categories_.end() ? std::string_view{} : std::string_view{c->second};
    a.payload_type = 0;
    a.payload_bits = 0;
    // uint64Value, int64Value, doubleValue, uint32Value, int32Value, floatValue: payload types
    // 1..6 (trace_model.hpp).
    for (int i = 0; i < 6; ++i) {
      if (q.null(10 + i)) {
        continue;
      }
      a.payload_type = static_cast<std::uint8_t>(i + 1);
      if (i == 2 || i == 5) {
        double const v = q.f64(10 + i);
        if (i == 2) {
          std::memcpy(&a.payload_bits, &v, sizeof v);
        } else {
          float const f = static_cast<float>(v);
          std::uint32_t bits = 0;
          std::memcpy(&bits, &f, sizeof f);
          a.payload_bits = bits;
        }
      } else {
        a.payload_bits = static_cast<std::uint64_t>(q.i64(10 + i));
      }
      break;
    }
  }

  // Ranges and marks, thread by thread in time order.
  void events() {
    auto q = query(
        std::string{"SELECT e.start, e.end, e.eventType, e.rangeId, coalesce(e.category, 0), "
                    "e.color, coalesce(e.text, s.value, ''), e.globalTid, e.endGlobalTid, "
                    "coalesce(e.domainId, 0), e.uint64Value, e.int64Value, e.doubleValue, "
                    "e.uint32Value, e.int32Value, e.floatValue FROM NVTX_EVENTS AS e LEFT "
                    "JOIN StringIds AS s ON s.id = e.textId WHERE e.eventType IN (34, 59, 60) "
                    "AND ((e.globalTid >> 24) & 16777215) = ?1"} +
        (ordered_ ? " ORDER BY e.globalTid, e.start" : ""));
    std::int64_t thread = -1;
    std::map<std::uint32_t, std::vector<std::int64_t>> open;  // per domain: ends of open ranges
    range_info r;
    mark_info m;
    while (q.next()) {
      if (q.i64(7) != thread) {
        thread = q.i64(7);
        open.clear();
      }
      auto const type = q.i64(2);
      if (type == 34) {
        m.pid = p_.new_pid;
        m.tid = tid_of(q.i64(7));
        m.ns = t(q.i64(0));
        m.name = q.text(6);
        attributes(q, m.attr);
        ++totals_.marks;
        for (auto* s : sinks_) {
          s->on_mark(m);
        }
        continue;
      }
      if (q.null(1)) {
        continue;  // never ended: nsys's reports leave these out too
      }
      r.pid = p_.new_pid;
      r.style = type == 59 ? range_style::push_pop : range_style::start_end;
      r.tid = tid_of(q.i64(7));
      r.end_tid = q.null(8) ? r.tid : tid_of(q.i64(8));
      r.start_ns = t(q.i64(0));
      r.end_ns = t(q.i64(1));
      r.id = r.style == range_style::start_end ? static_cast<std::uint64_t>(q.i64(3)) : 0;
      r.name = q.text(6);
      attributes(q, r.attr);
      r.depth = 0;
      if (ordered_ && r.style == range_style::push_pop) {
        auto& stack = open[r.attr.domain];
        while (!stack.empty() && stack.back() <= r.start_ns) {
          stack.pop_back();
        }
        r.depth = static_cast<int>(stack.size());
        stack.push_back(r.end_ns);
      }
      ++totals_.ranges;
      for (auto* s : sinks_) {
        s->on_range(r);
      }
    }
  }

  // Counter samples: one value per sample (field 0), as the capture writes them.
  void counters() {
    if (!has("GENERIC_EVENTS") || !has("GENERIC_EVENT_TYPES") || !has("GENERIC_EVENT_DATA")) {
      return;
    }
    auto q = query(
        "SELECT g.timestamp, g.globalTid, coalesce(s.value, ''), d.intVal, d.uintVal, "
        "d.doubleVal, d.floatVal FROM GENERIC_EVENTS AS g JOIN GENERIC_EVENT_TYPES AS ty ON "
        "ty.typeId = g.typeId LEFT JOIN StringIds AS s ON s.id = ty.nameId JOIN "
        "GENERIC_EVENT_DATA AS d ON d.genericEventId = g.genericEventId AND d.fieldIdx = 0 "
        "WHERE ((g.globalTid >> 24) & 16777215) = ?1 ORDER BY g.timestamp");
    testing::counter_sample sample;
    while (q.next()) {
      sample.name = q.text(2);
      if (!q.null(3)) {
        sample.value = q.i64(3);
      } else if (!q.null(4)) {
        sample.value = static_cast<std::uint64_t>(q.i64(4));
      } else if (!q.null(5)) {
        sample.value = q.f64(5);
      } else if (!q.null(6)) {
        sample.value = q.f64(6);
      } else {
        continue;
      }
      counter_sample_info c;
      c.pid = p_.new_pid;
      c.tid = tid_of(q.i64(1));
      c.ns = t(q.i64(0));
      c.sample = &sample;
      ++totals_.counter_samples;
      for (auto* s : sinks_) {
        s->on_counter_sample(c);
      }
    }
  }

  void streams() {
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::string> names;
    if (has("TARGET_INFO_NVTX_CUDA_STREAM")) {
      auto q = query(
          "SELECT deviceId, contextId, streamId, name FROM TARGET_INFO_NVTX_CUDA_STREAM "
          "WHERE processId = ?1");
      while (q.next()) {
        names[{narrow<std::uint32_t>(q.i64(0)), narrow<std::uint32_t>(q.i64(1)),
               narrow<std::uint32_t>(q.i64(2))}] = q.text(3);
      }
    }
    for (auto const& key : streams_) {
      auto const& [device, context, stream] = key;
      auto it = names.find(key);
      gpu_stream_info g{p_.new_pid, device, context, stream,
                        it == names.end() ? std::string_view{} : std::string_view{it->second}};
      for (auto* s : sinks_) {
        s->on_gpu_stream(g);
      }
    }
  }

  merge_input const& in_;
  input_process const& p_;
  sqlite3* db_;
  std::vector<trace_sink*> const& sinks_;
  read_totals& totals_;
  bool ordered_;
  std::map<std::string, bool> tables_;
  std::map<std::uint32_t, std::string> domains_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> categories_;
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> streams_;
  std::int64_t last_ns_ = 0;
};

}  // namespace

read_totals count_sqlite_input(merge_input const& in) {
  sqlite_db db = open_input(in.db_path);
  read_totals totals;
  totals.processes = in.processes.size();
  auto count = [&](char const* table, char const* where) -> std::uint64_t {
    if (!has_table(db.get(), in.path, table)) {
      return 0;
    }
    auto const sql = fmt::format("SELECT count(*) FROM {} WHERE {}", table, where);
    input_query q{db.get(), in.path, sql.c_str()};
    return q.next() ? static_cast<std::uint64_t>(q.i64(0)) : 0;
  };
  totals.ranges = count("NVTX_EVENTS", "eventType IN (59, 60) AND end IS NOT NULL");
  totals.marks = count("NVTX_EVENTS", "eventType = 34");
  totals.gpu_ops = count("CUPTI_ACTIVITY_KIND_KERNEL", "1") +
                   count("CUPTI_ACTIVITY_KIND_MEMCPY", "1") +
                   count("CUPTI_ACTIVITY_KIND_MEMSET", "1");
  totals.api_calls = count("CUPTI_ACTIVITY_KIND_RUNTIME", "1");
  totals.counter_samples = count("GENERIC_EVENTS", "1");
  return totals;
}

read_totals read_sqlite_input(merge_input const& in, std::vector<trace_sink*> const& sinks,
                              bool ordered) {
  sqlite_db db = open_input(in.db_path);
  read_totals totals;
  for (auto const& p : in.processes) {
    process_reader{in, p, db.get(), sinks, totals, ordered}.run();
  }
  return totals;
}

}  // namespace nvtxpp::capture
