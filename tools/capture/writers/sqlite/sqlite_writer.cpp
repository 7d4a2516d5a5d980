// nvtxpp-capture's SQLite output in Nsight Systems' export layout (sqlite_writer.hpp): the schema
// (sqlite_schema.inc), strings, and one insert per row kind. The trace_sink that feeds it from
// the trace model is sqlite_sink.cpp.

#include "sqlite_writer.hpp"

#include "../../common/launch_meta.hpp"
#include "sqlite_limit_vfs.hpp"

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

struct enum_row {
  int id;
  char const* name;
  char const* label;
};
struct enum_table {
  char const* table;
  enum_row const* rows;
  std::size_t count;
};
#include "nsys_enums.inc"

#include "sqlite_schema.inc"

std::atomic<unsigned> vfs_serial{0};

// Hashes string_views that point into interned storage, so lookups need no allocation.
struct sv_hash {
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

class statement {
 public:
  statement() = default;
  statement(statement const&) = delete;
  statement& operator=(statement const&) = delete;
  ~statement() { finalize(); }
  void finalize() noexcept {
    sqlite3_finalize(s_);
    s_ = nullptr;
  }
  sqlite3_stmt** out() noexcept { return &s_; }
  sqlite3_stmt* get() const noexcept { return s_; }

 private:
  sqlite3_stmt* s_ = nullptr;
};

}  // namespace

struct sqlite_writer::impl {
  std::string path;
  sqlite3* db = nullptr;
  std::unique_ptr<limit_vfs> vfs;
  bool finished = false;

  statement schema_ins, schema_entry_ins;
  statement gsource_ins, gtype_ins, gfield_ins, gevent_ins, gdata_ins;
  statement graph_range_ins;  ///< NVTXPP_GRAPH_RANGES, prepared with the table (first row)
  statement graph_trace_ins;  ///< CUPTI_ACTIVITY_KIND_GRAPH_TRACE, likewise
  statement string_ins, nvtx_ins, kernel_ins, memcpy_ins, memset_ins, sync_ins, api_ins, thread_ins,
      process_ins, stream_ins, capture_ins, export_ins, session_ins;

  // Interned texts live in 1 MiB chunks the map's keys point into (one allocation per chunk,
  // not per string).
  static constexpr std::size_t chunk_bytes = std::size_t{1} << 20;
  std::vector<std::unique_ptr<char[]>> chunks;
  std::size_t chunk_used = chunk_bytes;
  std::unordered_map<std::string_view, std::int64_t, sv_hash> ids;
  std::size_t interned_bytes = 0;  // text plus an estimate of the map's cost per entry
  std::size_t budget = 0;

  std::string_view store(std::string_view text) {
    if (text.size() > chunk_bytes / 4) {
      chunks.push_back(std::make_unique<char[]>(text.size()));
      std::memcpy(chunks.back().get(), text.data(), text.size());
      auto* big = chunks.back().get();
      // Keep filling the previous chunk: swap the big one behind it.
      if (chunks.size() >= 2) {
        std::swap(chunks[chunks.size() - 1], chunks[chunks.size() - 2]);
      }
      return {big, text.size()};
    }
    if (chunk_used + text.size() > chunk_bytes) {
      chunks.push_back(std::make_unique<char[]>(chunk_bytes));
      chunk_used = 0;
    }
    char* at = chunks.back().get() + chunk_used;
    std::memcpy(at, text.data(), text.size());
    chunk_used += text.size();
    return {at, text.size()};
  }

  ~impl() {
    // Statements first: sqlite3_close refuses while any is alive.
    for (statement* s :
         {&schema_ins,      &schema_entry_ins, &gsource_ins, &gtype_ins,  &gfield_ins,
          &gevent_ins,      &gdata_ins,        &string_ins,  &nvtx_ins,   &kernel_ins,
          &memcpy_ins,      &memset_ins,       &sync_ins,    &api_ins,    &thread_ins,
          &process_ins,     &stream_ins,       &capture_ins, &export_ins, &session_ins,
          &graph_range_ins, &graph_trace_ins}) {
      s->finalize();
    }
    if (db != nullptr) {
      sqlite3_close(db);
    }
    if (vfs) {
      sqlite3_vfs_unregister(&vfs->vfs);
    }
  }

  void open_database(options const& opts);  // at `path`
  std::uint64_t write_enum_tables();
  void prepare_inserts();

  [[noreturn]] void fail(int rc) const {
    std::string what = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if ((rc & 0xFF) == SQLITE_FULL) {
      what += std::string(" (") + std::strerror(ENOSPC) + ")";
    }
    throw output_error("error writing '" + path + "': " + what);
  }

  void check(int rc) const {
    if (rc != SQLITE_OK) {
      fail(rc);
    }
  }

  void exec(char const* sql) const { check(sqlite3_exec(db, sql, nullptr, nullptr, nullptr)); }

  void prepare(statement& s, char const* sql) const {
    check(sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, s.out(), nullptr));
  }

  void step(statement& s) const {
    int const rc = sqlite3_step(s.get());
    sqlite3_reset(s.get());
    if (rc != SQLITE_DONE) {
      fail(rc);
    }
  }
};

namespace {

void bind(sqlite3_stmt* s, int i, std::int64_t v) { sqlite3_bind_int64(s, i, v); }
void bind(sqlite3_stmt* s, int i, std::optional<std::int64_t> v) {
  if (v) {
    sqlite3_bind_int64(s, i, *v);
  } else {
    sqlite3_bind_null(s, i);
  }
}
void bind_u64(sqlite3_stmt* s, int i, std::uint64_t v) {
  // Stored as the same 64 bits, as SQLite has no unsigned type.
  std::int64_t x = 0;
  std::memcpy(&x, &v, sizeof x);
  sqlite3_bind_int64(s, i, x);
}
void bind_text(sqlite3_stmt* s, int i, std::string_view v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}
void bind_null(sqlite3_stmt* s, int i) { sqlite3_bind_null(s, i); }
/// NULL for 0 (nsys leaves unset schema fields NULL).
void bind_nz(sqlite3_stmt* s, int i, std::uint64_t v) {
  if (v == 0) {
    sqlite3_bind_null(s, i);
  } else {
    bind_u64(s, i, v);
  }
}
void bind_text_or_null(sqlite3_stmt* s, int i, std::string_view v) {
  if (v.empty()) {
    sqlite3_bind_null(s, i);
  } else {
    bind_text(s, i, v);
  }
}

}  // namespace

/// Creates the database at `path` (through `opts`' failing VFS when it asks for one) and opens
/// its one transaction with the schema.
void sqlite_writer::impl::open_database(options const& opts) {
  auto& d = *this;
  // Create or truncate through stdio first: an unwritable path gets errno's words, and an old
  // database at the path is not reopened.
  if (std::FILE* f = std::fopen(path.c_str(), "w"); f != nullptr) {
    std::fclose(f);
  } else {
    throw output_error("cannot write '" + path + "': " + std::strerror(errno));
  }

  char const* vfs_name = nullptr;
  if (opts.fail_write_after != UINT64_MAX) {
    d.vfs = std::make_unique<limit_vfs>();
    auto& v = *d.vfs;
    v.budget = opts.fail_write_after;
    v.name = "nvtxpp-limit-" + std::to_string(vfs_serial.fetch_add(1));
    init_limit_vfs(v);
    if (int const rc = sqlite3_vfs_register(&v.vfs, 0); rc != SQLITE_OK) {
      d.vfs.reset();
      d.fail(rc);
    }
    vfs_name = v.name.c_str();
  }

  int const rc =
      sqlite3_open_v2(path.c_str(), &d.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs_name);
  if (rc != SQLITE_OK) {
    std::string const what = d.db != nullptr ? sqlite3_errmsg(d.db) : sqlite3_errstr(rc);
    throw output_error("cannot write '" + path + "': " + what);
  }
  sqlite3_extended_result_codes(d.db, 1);

  // One writer, one transaction, no journal: the file is only meant to be read once finished.
  d.exec("PRAGMA journal_mode=OFF");
  d.exec("PRAGMA synchronous=OFF");
  d.exec("PRAGMA locking_mode=EXCLUSIVE");
  d.exec("PRAGMA temp_store=MEMORY");
  d.exec(("PRAGMA cache_size=-" + std::to_string(std::max(opts.cache_kib, 1024))).c_str());
  d.exec("BEGIN");
  d.exec(schema_sql);
}

/// Nsight Systems' enum tables (ENUM_*), as its exports carry them; the rows written.
std::uint64_t sqlite_writer::impl::write_enum_tables() {
  auto& d = *this;
  std::uint64_t rows = 0;
  for (auto const& t : nsys_enum_tables) {
    std::string const create = std::string("CREATE TABLE ") + t.table +
                               " (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT)";
    d.exec(create.c_str());
    statement ins;
    d.prepare(ins, (std::string("INSERT INTO ") + t.table + " VALUES (?,?,?)").c_str());
    for (std::size_t i = 0; i < t.count; ++i) {
      bind(ins.get(), 1, std::int64_t{t.rows[i].id});
      bind_text(ins.get(), 2, t.rows[i].name);
      bind_text(ins.get(), 3, t.rows[i].label);
      d.step(ins);
      ++rows;
    }
  }
  return rows;
}

/// The insert statements of every table the writer fills.
void sqlite_writer::impl::prepare_inserts() {
  auto& d = *this;
  d.prepare(d.string_ins, "INSERT INTO StringIds (id, value) VALUES (?,?)");
  d.prepare(d.nvtx_ins,
            "INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, category, color, text, "
            "globalTid, endGlobalTid, textId, domainId, uint64Value, int64Value, doubleValue, "
            "uint32Value, int32Value, floatValue, binaryData) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  d.prepare(d.schema_ins,
            "INSERT INTO NVTX_PAYLOAD_SCHEMAS (domainId, schemaId, name, type, flags, numEntries, "
            "payloadSize, alignTo) VALUES (?,?,?,?,?,?,?,?)");
  d.prepare(d.schema_entry_ins,
            "INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId, schemaId, idx, flags, type, name, "
            "description, arrayOrUnionDetail, offset) VALUES (?,?,?,?,?,?,?,?,?)");
  d.prepare(d.gsource_ins,
            "INSERT INTO GENERIC_EVENT_SOURCES (sourceId, nameId, timeSourceId, sourceGroupId) "
            "VALUES (?,?,3,0)");
  d.prepare(d.gtype_ins,
            "INSERT INTO GENERIC_EVENT_TYPES (typeId, sourceId, nameId) VALUES (?,?,?)");
  d.prepare(d.gfield_ins,
            "INSERT INTO GENERIC_EVENT_TYPE_FIELDS (typeId, fieldIdx, fieldNameId, offset, size, "
            "type) VALUES (?,?,?,?,?,?)");
  d.prepare(d.gevent_ins,
            "INSERT INTO GENERIC_EVENTS (genericEventId, rawTimestamp, timestamp, typeId, "
            "globalTid) VALUES (?,?,?,?,?)");
  d.prepare(d.gdata_ins,
            "INSERT INTO GENERIC_EVENT_DATA (genericEventId, fieldIdx, intVal, uintVal, floatVal, "
            "doubleVal) VALUES (?,?,?,?,NULL,?)");
  d.prepare(d.kernel_ins,
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
            "greenContextId, streamId, correlationId, globalPid, demangledName, shortName, "
            "mangledName, launchType, cacheConfig, registersPerThread, gridX, gridY, gridZ, "
            "blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
            "localMemoryPerThread, localMemoryTotal, gridId, sharedMemoryExecuted, "
            "graphNodeId, sharedMemoryLimitConfig) "
            "VALUES (?,?,?,?,0,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0)");
  d.prepare(d.memcpy_ins,
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
            "greenContextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, "
            "dstKind, migrationCause, copyCount) VALUES (?,?,?,?,0,?,?,?,?,?,?,?,?,1)");
  d.prepare(d.memset_ins,
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, "
            "greenContextId, streamId, correlationId, globalPid, value, bytes, memKind) "
            "VALUES (?,?,?,?,0,?,?,?,?,?,?)");
  d.prepare(d.sync_ins,
            "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, "
            "greenContextId, streamId, correlationId, globalPid, syncType, eventId) "
            "VALUES (?,?,?,?,0,?,?,?,?,?)");
  d.prepare(d.api_ins,
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
            "correlationId, nameId, returnValue) VALUES (?,?,?,?,?,?,?)");
  d.prepare(d.thread_ins, "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?,0,?)");
  d.prepare(d.process_ins, "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?,?,?)");
  d.prepare(d.stream_ins,
            "INSERT INTO TARGET_INFO_NVTX_CUDA_STREAM (name, hwId, vmId, processId, deviceId, "
            "contextId, streamId) VALUES (?,?,1,?,?,?,?)");
  d.prepare(d.capture_ins, "INSERT INTO META_DATA_CAPTURE (name, value) VALUES (?,?)");
  d.prepare(d.export_ins, "INSERT INTO META_DATA_EXPORT (name, value) VALUES (?,?)");
  d.prepare(d.session_ins,
            "INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs, utcTime, localTime) "
            "VALUES (?,?,?)");
}

sqlite_writer::sqlite_writer(std::string path) : sqlite_writer(std::move(path), options{}) {}

sqlite_writer::sqlite_writer(std::string path, options opts)
    : path_{std::move(path)},
      final_path_{opts.final_path.empty() ? path_ : opts.final_path},
      impl_{std::make_unique<impl>()} {
  auto& d = live();
  d.path = path_;
  d.budget = opts.intern_budget_bytes;
  d.open_database(opts);
  rows_ += d.write_enum_tables();
  d.prepare_inserts();
}

sqlite_writer::~sqlite_writer() = default;

sqlite_writer::impl& sqlite_writer::live() const {
  if (!impl_) {
    throw output_error("error writing '" + path_ + "': the database was already closed");
  }
  return *impl_;
}

std::optional<std::int64_t> sqlite_writer::intern(std::string_view text) {
  return intern(text, false);
}

std::int64_t sqlite_writer::intern_required(std::string_view text) { return *intern(text, true); }

std::optional<std::int64_t> sqlite_writer::intern(std::string_view text, bool force) {
  auto& d = live();
  if (auto it = d.ids.find(text); it != d.ids.end()) {
    return it->second;
  }
  if (!force && d.interned_bytes + text.size() + 64 > d.budget) {
    return std::nullopt;
  }
  auto const id = static_cast<std::int64_t>(d.ids.size()) + 1;
  bind(d.string_ins.get(), 1, id);
  bind_text(d.string_ins.get(), 2, text);
  d.step(d.string_ins);
  ++rows_;
  d.ids.emplace(d.store(text), id);
  // Node, bucket and allocator overhead of an unordered_map entry, roughly.
  d.interned_bytes += text.size() + 64;
  return id;
}

void sqlite_writer::nvtx_event(nsys_nvtx_row const& r) {
  auto& d = live();
  sqlite3_stmt* s = d.nvtx_ins.get();
  std::optional<std::int64_t> text_id;
  if (!r.text.empty() && r.intern_text) {
    text_id = intern(r.text);
  }
  bind(s, 1, r.start);
  bind(s, 2, r.end);
  bind(s, 3, std::int64_t{static_cast<std::int32_t>(r.type)});
  bind(s, 4, r.range_id);
  bind(s, 5, r.category);
  bind(s, 6, r.color ? std::optional<std::int64_t>{*r.color} : std::nullopt);
  if (r.text.empty() || text_id) {
    bind_null(s, 7);
  } else {
    bind_text(s, 7, r.text);
  }
  bind(s, 8, r.global_tid);
  bind(s, 9, r.end_global_tid);
  bind(s, 10, text_id);
  bind(s, 11, r.domain_id);
  for (int i = 12; i <= 17; ++i) {
    bind_null(s, i);
  }
  std::uint64_t const b = r.payload_bits;
  switch (r.payload_type) {
    case 1:
      bind_u64(s, 12, b);
      break;
    case 2:
      bind_u64(s, 13, b);
      break;
    case 3: {
      double v = 0;
      std::memcpy(&v, &b, sizeof v);
      sqlite3_bind_double(s, 14, v);
      break;
    }
    case 4:
      bind(s, 15, std::int64_t{static_cast<std::uint32_t>(b)});
      break;
    case 5:
      bind(s, 16, std::int64_t{static_cast<std::int32_t>(static_cast<std::uint32_t>(b))});
      break;
    case 6: {
      auto const bits = static_cast<std::uint32_t>(b);
      float v = 0;
      std::memcpy(&v, &bits, sizeof v);
      sqlite3_bind_double(s, 17, static_cast<double>(v));
      break;
    }
    default:
      break;
  }
  if (r.binary.empty()) {
    bind_null(s, 18);
  } else {
    sqlite3_bind_blob(s, 18, r.binary.data(), static_cast<int>(r.binary.size()), SQLITE_TRANSIENT);
  }
  d.step(d.nvtx_ins);
  ++rows_;
}

void sqlite_writer::payload_schema(nsys_schema_row const& r) {
  auto& d = live();
  sqlite3_stmt* s = d.schema_ins.get();
  bind(s, 1, r.domain_id);
  bind_u64(s, 2, r.schema_id);
  bind_text_or_null(s, 3, r.name);
  bind_nz(s, 4, r.type);
  bind_nz(s, 5, r.flags);
  bind_u64(s, 6, r.num_entries);
  bind_nz(s, 7, r.payload_size);
  bind_nz(s, 8, r.align_to);
  d.step(d.schema_ins);
  ++rows_;
}

void sqlite_writer::payload_schema_entry(nsys_schema_entry_row const& r) {
  auto& d = live();
  sqlite3_stmt* s = d.schema_entry_ins.get();
  bind(s, 1, r.domain_id);
  bind_u64(s, 2, r.schema_id);
  bind_u64(s, 3, r.index);
  bind_nz(s, 4, r.flags);
  bind_nz(s, 5, r.type);
  bind_text_or_null(s, 6, r.name);
  bind_text_or_null(s, 7, r.description);
  bind_nz(s, 8, r.array_or_union);
  bind_nz(s, 9, r.offset);
  d.step(d.schema_entry_ins);
  ++rows_;
}

void sqlite_writer::generic_source(std::int64_t source_id) {
  auto& d = live();
  sqlite3_stmt* s = d.gsource_ins.get();
  bind(s, 1, source_id);
  bind(s, 2, intern_required("GenericCounters"));
  d.step(d.gsource_ins);
  ++rows_;
}

void sqlite_writer::generic_type(std::int64_t type_id, std::int64_t source_id,
                                 std::string_view name, generic_field const* fields,
                                 std::size_t count) {
  auto& d = live();
  sqlite3_stmt* s = d.gtype_ins.get();
  bind(s, 1, type_id);
  bind(s, 2, source_id);
  bind(s, 3, intern_required(name));
  d.step(d.gtype_ins);
  ++rows_;
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < count; ++i) {
    sqlite3_stmt* f = d.gfield_ins.get();
    bind(f, 1, type_id);
    bind(f, 2, static_cast<std::int64_t>(i));
    bind(f, 3, intern_required(fields[i].name));
    bind(f, 4, offset);
    bind(f, 5, std::int64_t{fields[i].size});
    bind(f, 6, std::int64_t{fields[i].type});
    d.step(d.gfield_ins);
    ++rows_;
    offset += fields[i].size;
  }
}

void sqlite_writer::generic_event(std::int64_t timestamp, std::int64_t type_id,
                                  std::int64_t global_tid, generic_value const* values,
                                  std::size_t count) {
  auto& d = live();
  std::int64_t const id = ++generic_events_;
  sqlite3_stmt* s = d.gevent_ins.get();
  bind(s, 1, id);
  bind(s, 2, timestamp);
  bind(s, 3, timestamp);
  bind(s, 4, type_id);
  bind(s, 5, global_tid);
  d.step(d.gevent_ins);
  ++rows_;
  for (std::size_t i = 0; i < count; ++i) {
    sqlite3_stmt* v = d.gdata_ins.get();
    bind(v, 1, id);
    bind(v, 2, static_cast<std::int64_t>(i));
    sqlite3_bind_null(v, 3);
    sqlite3_bind_null(v, 4);
    sqlite3_bind_null(v, 5);
    if (values[i].type == 0) {
      bind(v, 3, values[i].i);
    } else if (values[i].type == 1) {
      bind_u64(v, 4, values[i].u);
    } else {
      sqlite3_bind_double(v, 5, values[i].d);
    }
    d.step(d.gdata_ins);
    ++rows_;
  }
}

void sqlite_writer::kernel(nsys_kernel_row const& r) {
  auto& d = live();
  auto const demangled = intern_required(r.demangled);
  auto const short_name = intern_required(r.short_name);
  auto const mangled = r.mangled.empty() ? std::optional<std::int64_t>{} : intern(r.mangled);
  sqlite3_stmt* s = d.kernel_ins.get();
  bind(s, 1, r.start);
  bind(s, 2, r.end);
  bind(s, 3, std::int64_t{r.device});
  bind(s, 4, std::int64_t{r.context});
  bind(s, 5, std::int64_t{r.stream});
  bind(s, 6, std::int64_t{r.correlation});
  bind(s, 7, r.global_pid);
  bind(s, 8, demangled);
  bind(s, 9, short_name);
  bind(s, 10, mangled);
  bind(s, 11, std::int64_t{r.launch_type});
  bind(s, 12, std::int64_t{r.cache_config});
  bind(s, 13, std::int64_t{r.registers_per_thread});
  for (int i = 0; i < 3; ++i) {
    bind(s, 14 + i, std::int64_t{r.grid[i]});
    bind(s, 17 + i, std::int64_t{r.block[i]});
  }
  bind(s, 20, std::int64_t{r.static_shared});
  bind(s, 21, std::int64_t{r.dynamic_shared});
  bind(s, 22, std::int64_t{r.local_per_thread});
  bind_u64(s, 23, r.local_total);
  bind_u64(s, 24, r.grid_id);
  bind(s, 25, std::int64_t{r.shared_executed});
  if (r.graph_node != 0) {
    bind_u64(s, 26, r.graph_node);
  } else {
    bind_null(s, 26);
  }
  d.step(d.kernel_ins);
  ++rows_;
}

void sqlite_writer::memcpy(nsys_memcpy_row const& r) {
  auto& d = live();
  sqlite3_stmt* s = d.memcpy_ins.get();
  bind(s, 1, r.start);
  bind(s, 2, r.end);
  bind(s, 3, std::int64_t{r.device});
  bind(s, 4, std::int64_t{r.context});
  bind(s, 5, std::int64_t{r.stream});
  if (r.migration_cause) {  // a migration: no launching call
    bind_null(s, 6);
  } else {
    bind(s, 6, std::int64_t{r.correlation});
  }
  bind(s, 7, r.global_pid);
  bind_u64(s, 8, r.bytes);
  bind(s, 9, std::int64_t{r.copy_kind});
  bind(s, 10, std::int64_t{r.src_kind});
  bind(s, 11, std::int64_t{r.dst_kind});
  bind(s, 12, r.migration_cause);
  d.step(d.memcpy_ins);
  ++rows_;
}

void sqlite_writer::graph_range(nvtxpp_graph_range_row const& r) {
  auto& d = live();
  if (d.graph_range_ins.get() == nullptr) {
    d.exec(R"sql(CREATE TABLE NVTXPP_GRAPH_RANGES (
  start INTEGER NOT NULL,
  end INTEGER NOT NULL,
  text TEXT,
  domainId INTEGER NOT NULL,
  globalTid INTEGER NOT NULL,
  nvtxStart INTEGER NOT NULL,
  depth INTEGER NOT NULL,
  globalPid INTEGER NOT NULL,
  deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL,
  correlationId INTEGER NOT NULL,
  graphId INTEGER NOT NULL,
  launch INTEGER NOT NULL,
  kernels INTEGER NOT NULL,
  memcpys INTEGER NOT NULL,
  memsets INTEGER NOT NULL,
  busy INTEGER NOT NULL))sql");
    d.prepare(d.graph_range_ins,
              "INSERT INTO NVTXPP_GRAPH_RANGES VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  }
  sqlite3_stmt* s = d.graph_range_ins.get();
  bind(s, 1, r.start);
  bind(s, 2, r.end);
  bind_text(s, 3, r.text);
  bind(s, 4, std::int64_t{r.domain_id});
  bind(s, 5, r.global_tid);
  bind(s, 6, r.nvtx_start);
  bind(s, 7, std::int64_t{r.depth});
  bind(s, 8, r.global_pid);
  bind(s, 9, std::int64_t{r.device});
  bind(s, 10, std::int64_t{r.context});
  bind(s, 11, std::int64_t{r.stream});
  bind(s, 12, std::int64_t{r.correlation});
  bind(s, 13, std::int64_t{r.graph});
  bind_u64(s, 14, r.launch);
  bind(s, 15, std::int64_t{r.kernels});
  bind(s, 16, std::int64_t{r.memcpys});
  bind(s, 17, std::int64_t{r.memsets});
  bind(s, 18, r.busy_ns);
  d.step(d.graph_range_ins);
  ++rows_;
}

void sqlite_writer::graph_trace(nsys_graph_trace_row const& r) {
  auto& d = live();
  if (d.graph_trace_ins.get() == nullptr) {
    // The columns of Nsight Systems 2025.3's export (seen on the GPU machine).
    d.exec(R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (
  start INTEGER NOT NULL,
  end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL,
  greenContextId INTEGER,
  streamId INTEGER NOT NULL,
  correlationId INTEGER,
  globalPid INTEGER,
  graphId INTEGER NOT NULL,
  graphExecId INTEGER))sql");
    d.prepare(d.graph_trace_ins,
              "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start, end, deviceId, contextId, "
              "greenContextId, streamId, correlationId, globalPid, graphId) "
              "VALUES (?,?,?,?,0,?,?,?,?)");
  }
  sqlite3_stmt* s = d.graph_trace_ins.get();
  bind(s, 1, r.start);
  bind(s, 2, r.end);
  bind(s, 3, std::int64_t{r.device});
  bind(s, 4, std::int64_t{r.context});
  bind(s, 5, std::int64_t{r.stream});
  bind(s, 6, std::int64_t{r.correlation});
  bind(s, 7, r.global_pid);
  bind(s, 8, std::int64_t{r.graph});
  d.step(d.graph_trace_ins);
  ++rows_;
}

void sqlite_writer::drop_if_empty(std::string_view table) {
  auto& d = live();
  std::string const name{table};
  statement q;
  d.prepare(q, ("SELECT EXISTS (SELECT 1 FROM \"" + name + "\")").c_str());
  bool const empty = sqlite3_step(q.get()) == SQLITE_ROW && sqlite3_column_int(q.get(), 0) == 0;
  q.finalize();
  if (empty) {
    d.exec(("DROP TABLE \"" + name + "\"").c_str());
  }
}

void sqlite_writer::memset(nsys_memset_row const& r) {
  auto& d = live();
  sqlite3_stmt* s = d.memset_ins.get();
  bind(s, 1, r.start);
  bind(s, 2, r.end);
  bind(s, 3, std::int64_t{r.device});
  bind(s, 4, std::int64_t{r.context});
  bind(s, 5, std::int64_t{r.stream});
  bind(s, 6, std::int64_t{r.correlation});
  bind(s, 7, r.global_pid);
  bind(s, 8, std::int64_t{r.value});
  bind_u64(s, 9, r.bytes);
  bind(s, 10, std::int64_t{r.mem_kind});
  d.step(d.memset_ins);
  ++rows_;
}

void sqlite_writer::sync(nsys_sync_row const& r) {
  auto& d = live();
  sqlite3_stmt* s = d.sync_ins.get();
  bind(s, 1, r.start);
  bind(s, 2, r.end);
  bind(s, 3, std::int64_t{r.device});
  bind(s, 4, std::int64_t{r.context});
  bind(s, 5, std::int64_t{r.stream});
  bind(s, 6, std::int64_t{r.correlation});
  bind(s, 7, r.global_pid);
  bind(s, 8, std::int64_t{r.sync_type});
  bind(s, 9, std::int64_t{r.event});
  d.step(d.sync_ins);
  ++rows_;
}

void sqlite_writer::api(nsys_api_row const& r) {
  auto& d = live();
  auto const name = intern_required(r.name);
  sqlite3_stmt* s = d.api_ins.get();
  bind(s, 1, r.start);
  bind(s, 2, r.end);
  bind(s, 3, std::int64_t{r.event_class});
  bind(s, 4, r.global_tid);
  bind(s, 5, std::int64_t{r.correlation});
  bind(s, 6, name);
  bind(s, 7, std::int64_t{r.return_value});
  d.step(d.api_ins);
  ++rows_;
}

void sqlite_writer::thread_name(std::int64_t global_tid, std::string_view name) {
  auto& d = live();
  auto const id = intern_required(name);
  bind(d.thread_ins.get(), 1, id);
  bind(d.thread_ins.get(), 2, global_tid);
  d.step(d.thread_ins);
  ++rows_;
}

void sqlite_writer::process(std::uint32_t pid, std::string_view name) {
  auto& d = live();
  bind(d.process_ins.get(), 1, nsys_global_pid(pid));
  bind(d.process_ins.get(), 2, std::int64_t{pid});
  bind_text(d.process_ins.get(), 3, name);
  d.step(d.process_ins);
  ++rows_;
}

void sqlite_writer::nvtx_cuda_stream(std::string_view name, std::uint32_t pid, std::uint32_t device,
                                     std::uint32_t context, std::uint32_t stream) {
  auto& d = live();
  sqlite3_stmt* s = d.stream_ins.get();
  bind_text(s, 1, name);
  bind(s, 2, std::int64_t{device});
  bind(s, 3, std::int64_t{pid});
  bind(s, 4, std::int64_t{device});
  bind(s, 5, std::int64_t{context});
  bind(s, 6, std::int64_t{stream});
  d.step(d.stream_ins);
  ++rows_;
}

void sqlite_writer::capture_meta(std::string_view name, std::string_view value) {
  auto& d = live();
  bind_text(d.capture_ins.get(), 1, name);
  bind_text(d.capture_ins.get(), 2, value);
  d.step(d.capture_ins);
  ++rows_;
}

namespace {
std::string format_time(std::int64_t epoch_ns, bool local) {
  std::time_t const t = static_cast<std::time_t>(epoch_ns / 1'000'000'000);
  std::tm tm{};
  if (local) {
    localtime_r(&t, &tm);
  } else {
    gmtime_r(&t, &tm);
  }
  char buf[32];
  std::size_t const n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return std::string(buf, n);
}
}  // namespace

void sqlite_writer::finish() {
  auto& d = live();
  if (d.finished) {
    return;
  }
  // What nsys's own exports say about their schema, so a reader checking the version accepts
  // the file; the producer fields say who really wrote it.
  std::pair<char const*, std::string> const meta[] = {
      {"EXPORT_PRODUCT_NAME", "nvtxpp-capture"}, {"EXPORT_SCHEMA_VERSION", "3.20.3"},
      {"EXPORT_SCHEMA_VERSION_MAJOR", "3"},      {"EXPORT_SCHEMA_VERSION_MINOR", "20"},
      {"EXPORT_SCHEMA_VERSION_MICRO", "3"},      {"EXPORT_PARAM_OUTPUT_PATH", final_path_},
      {"EXPORT_PARAM_TIME_NORMALIZE", "false"},  {"EXPORT_CONFIG_TIME_SHIFT", "0"},
  };
  for (auto const& [name, value] : meta) {
    bind_text(d.export_ins.get(), 1, name);
    bind_text(d.export_ins.get(), 2, value);
    d.step(d.export_ins);
    ++rows_;
  }
  bind(d.session_ins.get(), 1, session_start_ns_);
  bind_text(d.session_ins.get(), 2, format_time(session_start_ns_, false));
  bind_text(d.session_ins.get(), 3, format_time(session_start_ns_, true));
  d.step(d.session_ins);
  ++rows_;
  d.exec("COMMIT");
  d.finished = true;
  // Closing flushes nothing more (the commit wrote every page), but reports a late I/O error.
  impl_.reset();
}

std::string nsys_short_kernel_name(std::string_view name) {
  // The parameter list: the last top-level '(' ... ')' group at the end of the name.
  std::size_t end = name.size();
  if (end > 0 && name[end - 1] == ')') {
    int depth = 0;
    for (std::size_t i = end; i-- > 0;) {
      char const c = name[i];
      if (c == ')') {
        ++depth;
      } else if (c == '(' && --depth == 0) {
        end = i;
        break;
      }
    }
  }
  name = name.substr(0, end);
  // Template arguments of the function itself.
  if (!name.empty() && name.back() == '>') {
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
      char const c = name[i];
      if (c == '>') {
        ++depth;
      } else if (c == '<' && --depth == 0) {
        name = name.substr(0, i);
        break;
      }
    }
  }
  // Scope and return type: what follows the last top-level "::" or space.
  int depth = 0;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char const c = name[i];
    if (c == '<' || c == '(') {
      ++depth;
    } else if (c == '>' || c == ')') {
      --depth;
    } else if (depth == 0 &&
               (c == ' ' || (c == ':' && i + 1 < name.size() && name[i + 1] == ':'))) {
      begin = c == ' ' ? i + 1 : i + 2;
    }
  }
  return std::string(name.substr(std::min(begin, name.size())));
}

}  // namespace nvtxpp::capture
