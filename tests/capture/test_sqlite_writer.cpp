// nvtxpp-capture's SQLite output (tools/capture/writers/sqlite/sqlite_writer.hpp): a trace driven
// through the sink is checked with SQL of our own against what Nsight Systems' stats reports read:
// the tables and columns by nsys's names, the exact row values, and the joins the reports make.
//
// NVTXPP_TEST_SQLITE_OUT=<file.sqlite> keeps the database of the main case there (to run the
// nsys reports on it by hand).
#include "writers/sqlite/sqlite_sink.hpp"
#include "writers/sqlite/sqlite_writer.hpp"

#include <sqlite3.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "catch.hpp"

// Under AddressSanitizer or ThreadSanitizer the process's memory is the sanitizer's (quarantine,
// shadow, its own allocator): the memory case then checks the rows but not the growth bound.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NVTXPP_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NVTXPP_TEST_SANITIZED 1
#endif
#endif

namespace cap = nvtxpp::capture;
namespace rec = nvtxpp::recording;

namespace {

// The tables and columns the six reports (nvtx_sum, nvtx_gpu_proj_sum, nvtx_kern_sum,
// cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_api_sum) read, by nsys's names (facts from an
// `nsys export --type sqlite`, schema 3.20.3), plus the tables nsys keeps beside them.
std::map<std::string, std::vector<std::string>> const required = {
    {"StringIds", {"id", "value"}},
    {"NVTX_EVENTS", {"start",      "end",         "eventType",  "rangeId",      "category",
                     "color",      "text",        "globalTid",  "endGlobalTid", "textId",
                     "domainId",   "uint64Value", "int64Value", "doubleValue",  "uint32Value",
                     "int32Value", "floatValue",  "jsonTextId", "jsonText",     "binaryData"}},
    {"CUPTI_ACTIVITY_KIND_KERNEL",
     {"start",
      "end",
      "deviceId",
      "contextId",
      "greenContextId",
      "streamId",
      "correlationId",
      "globalPid",
      "demangledName",
      "shortName",
      "mangledName",
      "launchType",
      "cacheConfig",
      "registersPerThread",
      "gridX",
      "gridY",
      "gridZ",
      "blockX",
      "blockY",
      "blockZ",
      "staticSharedMemory",
      "dynamicSharedMemory",
      "localMemoryPerThread",
      "localMemoryTotal",
      "gridId",
      "sharedMemoryExecuted",
      "graphNodeId",
      "sharedMemoryLimitConfig"}},
    {"CUPTI_ACTIVITY_KIND_MEMCPY",
     {"start",           "end",           "deviceId",       "contextId",   "greenContextId",
      "streamId",        "correlationId", "globalPid",      "bytes",       "copyKind",
      "deprecatedSrcId", "srcKind",       "dstKind",        "srcDeviceId", "srcContextId",
      "dstDeviceId",     "dstContextId",  "migrationCause", "graphNodeId", "virtualAddress",
      "copyCount"}},
    {"CUPTI_ACTIVITY_KIND_MEMSET",
     {"start", "end", "deviceId", "contextId", "greenContextId", "streamId", "correlationId",
      "globalPid", "value", "bytes", "graphNodeId", "memKind"}},
    {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
     {"start", "end", "deviceId", "contextId", "greenContextId", "streamId", "correlationId",
      "globalPid", "deprecatedSyncType", "syncType", "eventId", "eventSyncId"}},
    {"CUPTI_ACTIVITY_KIND_RUNTIME",
     {"start", "end", "eventClass", "globalTid", "correlationId", "nameId", "returnValue",
      "callchainId"}},
    {"ENUM_CUDA_MEMCPY_OPER", {"id", "name", "label"}},
    {"ENUM_CUDA_MEM_KIND", {"id", "name", "label"}},
    {"ENUM_NSYS_EVENT_TYPE", {"id", "name", "label"}},
    {"ENUM_NSYS_EVENT_CLASS", {"id", "name", "label"}},
    {"ENUM_CUDA_KERNEL_LAUNCH_TYPE", {"id", "name", "label"}},
    {"ENUM_CUDA_FUNC_CACHE_CONFIG", {"id", "name", "label"}},
    {"ENUM_CUPTI_SYNC_TYPE", {"id", "name", "label"}},
    {"ThreadNames", {"nameId", "priority", "globalTid"}},
    {"PROCESSES", {"globalPid", "pid", "name"}},
    {"TARGET_INFO_SESSION_START_TIME", {"utcEpochNs", "utcTime", "localTime"}},
    {"TARGET_INFO_NVTX_CUDA_STREAM",
     {"name", "hwId", "vmId", "processId", "deviceId", "contextId", "streamId"}},
    {"META_DATA_EXPORT", {"name", "value"}},
    {"META_DATA_CAPTURE", {"name", "value"}},
};

using rows_t = std::vector<std::vector<std::string>>;

// A read-only connection running queries; every value as text, NULL as "NULL".
class db {
 public:
  explicit db(std::string const& path) {
    REQUIRE(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  }
  ~db() { sqlite3_close(db_); }
  db(db const&) = delete;
  db& operator=(db const&) = delete;

  rows_t query(std::string const& sql) const {
    sqlite3_stmt* s = nullptr;
    INFO(sql);
    REQUIRE(sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) == SQLITE_OK);
    rows_t out;
    int rc = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < sqlite3_column_count(s); ++i) {
        auto const* t = sqlite3_column_text(s, i);
        row.emplace_back(t != nullptr ? reinterpret_cast<char const*>(t) : "NULL");
      }
      out.push_back(std::move(row));
    }
    sqlite3_finalize(s);
    REQUIRE(rc == SQLITE_DONE);
    return out;
  }
  std::string scalar(std::string const& sql) const {
    auto const r = query(sql);
    REQUIRE(r.size() == 1);
    REQUIRE(r[0].size() == 1);
    return r[0][0];
  }

 private:
  sqlite3* db_ = nullptr;
};

std::string temp_path(char const* name) {
  char const* dir = std::getenv("TMPDIR");
  return std::string(dir != nullptr && *dir != 0 ? dir : "/tmp") + "/nvtxpp-sqlite-" +
         std::to_string(::getpid()) + "-" + name + ".sqlite";
}

constexpr std::uint32_t pid = 4242;
constexpr std::uint64_t main_tid = 4242;
constexpr std::uint64_t worker_tid = 4250;
constexpr std::int64_t t0 = 1'000'000;  // the capture's origin (CLOCK_MONOTONIC ns)
constexpr std::int64_t utc0 = 1'795'426'429'000'000'000;

cap::event_attributes attrs(std::uint32_t domain, char const* domain_name) {
  cap::event_attributes a;
  a.domain = domain;
  a.domain_name = domain_name;
  return a;
}

// A small program's trace: a named worker thread, a domain with a named category, nested
// push/pop ranges, start/end ranges (one across threads, one never ended), a mark with a
// payload, a kernel, a copy, a memset and a sync launched from inside the ranges.
void write_trace(cap::trace_sink& sink) {
  cap::process_info p;
  p.pid = pid;
  p.command = "/opt/app/bin/reduce -s 8";
  p.start_ns = t0 + 100;
  sink.begin_process(p);

  cap::domain_info global;
  global.pid = pid;
  sink.on_domain(global);
  cap::domain_info physics;
  physics.pid = pid;
  physics.index = 1;
  physics.name = "physics";
  sink.on_domain(physics);

  cap::category_info cat;
  cat.pid = pid;
  cat.domain = 1;
  cat.id = 3;
  cat.ns = t0 + 150;
  cat.name = "Memory";
  sink.on_category(cat);

  cap::thread_info main_thread;
  main_thread.pid = pid;
  main_thread.tid = main_tid;
  sink.on_thread(main_thread);  // unnamed: no name rows
  cap::thread_info worker;
  worker.pid = pid;
  worker.tid = worker_tid;
  worker.name = "worker 0";
  worker.named = true;
  sink.on_thread(worker);

  // GPU side (before the ranges, as the model delivers it).
  cap::kernel_info k;
  k.pid = pid;
  k.raw.start = t0 + 2'500;
  k.raw.end = t0 + 3'700;
  k.raw.device = 0;
  k.raw.context = 1;
  k.raw.stream = 13;
  k.raw.correlation = 10;
  k.raw.grid[0] = 1280;
  k.raw.grid[1] = k.raw.grid[2] = 1;
  k.raw.block[0] = 256;
  k.raw.block[1] = k.raw.block[2] = 1;
  k.raw.registers_per_thread = 16;
  k.raw.static_shared = 1024;
  k.raw.grid_id = 77;
  k.raw.launch_type = 0;  // CUPTI regular
  k.raw.cache_config = 1;
  k.name = "_ZN6reduce14partial_reduceEPKfmPf";
  k.demangled = "reduce::partial_reduce(const float *, unsigned long, float *)";
  sink.on_kernel(k);

  cap::memcpy_info mc;
  mc.pid = pid;
  mc.raw.start = t0 + 4'000;
  mc.raw.end = t0 + 6'000;
  mc.raw.context = 1;
  mc.raw.stream = 13;
  mc.raw.correlation = 11;
  mc.raw.bytes = 400'000'000;
  mc.raw.copy_kind = 1;  // HtoD
  mc.raw.src_kind = 2;   // CUPTI pinned
  mc.raw.dst_kind = 3;   // CUPTI device
  sink.on_memcpy(mc);

  cap::memset_info ms;
  ms.pid = pid;
  ms.raw.start = t0 + 2'200;
  ms.raw.end = t0 + 2'300;
  ms.raw.context = 1;
  ms.raw.stream = 7;
  ms.raw.correlation = 12;
  ms.raw.bytes = 5120;
  ms.raw.value = 0;
  ms.raw.mem_kind = 3;  // CUPTI device
  sink.on_memset(ms);

  cap::sync_info sy;
  sy.pid = pid;
  sy.raw.start = t0 + 6'100;
  sy.raw.end = t0 + 6'500;
  sy.raw.context = 1;
  sy.raw.stream = 13;
  sy.raw.correlation = 13;
  sy.raw.type = 3;  // stream synchronize
  sy.raw.event = 0xFFFFFFFFu;
  sink.on_sync(sy);

  auto api = [&](std::int64_t s, std::int64_t e, std::uint32_t corr, char const* name,
                 std::uint64_t tid, rec::gpu_api_kind kind) {
    cap::api_info a;
    a.pid = pid;
    a.raw.start = t0 + s;
    a.raw.end = t0 + e;
    a.raw.kind = static_cast<std::uint32_t>(kind);
    a.raw.correlation = corr;
    a.raw.tid = tid;
    a.name = name;
    sink.on_api(a);
  };
  api(1'800, 1'900, 12, "cudaMemsetAsync", main_tid, rec::gpu_api_kind::runtime);
  api(2'000, 2'100, 10, "cudaLaunchKernel", main_tid, rec::gpu_api_kind::runtime);
  api(2'400, 2'450, 11, "cudaMemcpyAsync", worker_tid, rec::gpu_api_kind::runtime);
  api(6'050, 6'600, 13, "cudaStreamSynchronize", worker_tid, rec::gpu_api_kind::runtime);
  api(500, 520, 9, "cuModuleGetLoadingMode", main_tid, rec::gpu_api_kind::driver);

  // NVTX side.
  cap::range_info inner;
  inner.pid = pid;
  inner.tid = inner.end_tid = main_tid;
  inner.start_ns = t0 + 1'700;
  inner.end_ns = t0 + 2'150;
  inner.depth = 1;
  inner.name = "launch";
  inner.attr = attrs(1, "physics");
  inner.attr.has_color = true;
  inner.attr.color = 0xFF00FF00u;
  inner.attr.category = 3;
  inner.attr.category_name = "Memory";
  inner.attr.registered = true;
  sink.on_range(inner);

  cap::range_info outer = inner;
  outer.start_ns = t0 + 1'500;
  outer.end_ns = t0 + 3'000;
  outer.depth = 0;
  outer.name = "step";
  outer.attr = attrs(0, "");
  sink.on_range(outer);

  cap::range_info copy;  // start/end: started on main, ended on the worker
  copy.pid = pid;
  copy.style = cap::range_style::start_end;
  copy.tid = main_tid;
  copy.end_tid = worker_tid;
  copy.start_ns = t0 + 2'390;
  copy.end_ns = t0 + 6'700;
  copy.id = 7;
  copy.name = "copy";
  copy.attr = attrs(1, "physics");
  sink.on_range(copy);

  cap::range_info upload = copy;  // start/end on one thread
  upload.tid = upload.end_tid = worker_tid;
  upload.start_ns = t0 + 2'380;
  upload.end_ns = t0 + 2'460;
  upload.id = 8;
  upload.name = "upload";
  sink.on_range(upload);

  cap::range_info forever = upload;  // never ended
  forever.id = 9;
  forever.start_ns = t0 + 6'800;
  forever.end_ns = t0 + 7'000;
  forever.unterminated = true;
  forever.name = "forever";
  sink.on_range(forever);

  cap::mark_info m;
  m.pid = pid;
  m.tid = worker_tid;
  m.ns = t0 + 6'650;
  m.name = "checked";
  m.attr = attrs(1, "physics");
  m.attr.payload_type = 5;  // i32
  m.attr.payload_bits = static_cast<std::uint32_t>(-5);
  sink.on_mark(m);

  cap::mark_info sync_obj = m;  // not an nvtxMark: nsys has no row for it
  sync_obj.kind = cap::mark_kind::sync_acquire_start;
  sink.on_mark(sync_obj);

  cap::gpu_stream_info st;
  st.pid = pid;
  st.context = 1;
  st.stream = 13;
  st.name = "copy stream";
  sink.on_gpu_stream(st);
  cap::gpu_stream_info unnamed = st;
  unnamed.stream = 7;
  unnamed.name = "";
  sink.on_gpu_stream(unnamed);

  p.end_ns = t0 + 7'000;
  p.finished = true;
  sink.end_process(p);
  sink.finish();
}

std::string main_db_path() {
  char const* keep = std::getenv("NVTXPP_TEST_SQLITE_OUT");
  return keep != nullptr && *keep != 0 ? std::string(keep) : temp_path("main");
}

std::string const gtid_main = std::to_string(cap::nsys_global_tid(pid, main_tid));
std::string const gtid_worker = std::to_string(cap::nsys_global_tid(pid, worker_tid));
std::string const gpid = std::to_string(cap::nsys_global_pid(pid));

}  // namespace

TEST_CASE("sqlite: global ids are nsys's serialization") {
  // 281491351274448 is a globalTid of nsys's export of reduce_v3 (pid = tid = 976).
  STATIC_REQUIRE(cap::nsys_global_tid(976, 976) == 281491351274448);
  STATIC_REQUIRE(cap::nsys_global_pid(1081) == 281493112881152);
  STATIC_REQUIRE((cap::nsys_global_tid(1081, 1082) & 0xFFFFFFFFFF000000) ==
                 cap::nsys_global_pid(1081));
}

TEST_CASE("sqlite: short kernel names as nsys shows them") {
  CHECK(cap::nsys_short_kernel_name(
            "reduce::partial_reduce(const float *, unsigned long, float *)") == "partial_reduce");
  CHECK(cap::nsys_short_kernel_name("void ns::k<int, (int)3>(int *, S<float>)") == "k");
  CHECK(cap::nsys_short_kernel_name("plain") == "plain");
  CHECK(cap::nsys_short_kernel_name("a::b::c<x::y>") == "c");
}

TEST_CASE("sqlite: the trace in nsys's tables, values and joins") {
  std::string const path = main_db_path();
  {
    auto sink = cap::make_sqlite_sink_at(path, {}, t0, utc0);
    write_trace(*sink);
  }
  db d{path};

  SECTION("every table and column the reports read, by nsys's names") {
    for (auto const& [table, columns] : required) {
      auto const have = d.query("SELECT name FROM pragma_table_info('" + table + "')");
      std::vector<std::string> names;
      for (auto const& r : have) names.push_back(r[0]);
      INFO(table);
      CHECK(names == columns);
    }
  }

  SECTION("enum rows are nsys's") {
    CHECK(d.query("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER WHERE id IN (1, 2, 8, 10) "
                  "ORDER BY id") == rows_t{{"1", "Host-to-Device"},
                                           {"2", "Device-to-Host"},
                                           {"8", "Device-to-Device"},
                                           {"10", "Peer-to-Peer"}});
    CHECK(d.scalar("SELECT count(*) FROM ENUM_CUDA_MEMCPY_OPER") == "14");
    CHECK(d.query("SELECT id, name FROM ENUM_NSYS_EVENT_TYPE WHERE id IN (33, 34, 39, 59, 60, 75) "
                  "ORDER BY id") == rows_t{{"33", "NvtxCategory"},
                                           {"34", "NvtxMark"},
                                           {"39", "NvtxThread"},
                                           {"59", "NvtxPushPopRange"},
                                           {"60", "NvtxStartEndRange"},
                                           {"75", "NvtxDomainCreate"}});
    CHECK(d.scalar("SELECT label FROM ENUM_CUDA_MEM_KIND WHERE id = 7") == "Unknown");
    CHECK(d.scalar("SELECT label FROM ENUM_NSYS_EVENT_CLASS WHERE id = 1") == "CUDA driver");
  }

  SECTION("NVTX_EVENTS rows hold the exact values") {
    // Times are ns since the capture's origin t0.
    auto const rows = d.query(
        "SELECT start, end, eventType, rangeId, category, color, coalesce(s.value, e.text), "
        "e.textId IS NOT NULL, globalTid, endGlobalTid, domainId, int32Value "
        "FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON s.id = e.textId ORDER BY start, "
        "eventType");
    rows_t const expected = {
        {"100", "NULL", "39", "NULL", "NULL", "NULL", "worker 0", "0", gtid_worker, "NULL", "0",
         "NULL"},
        {"100", "NULL", "75", "NULL", "NULL", "NULL", "physics", "0", gtid_main, "NULL", "1",
         "NULL"},
        {"150", "NULL", "33", "NULL", "3", "NULL", "Memory", "0", gtid_main, "NULL", "1", "NULL"},
        {"1500", "3000", "59", "NULL", "NULL", "NULL", "step", "1", gtid_main, "NULL", "0", "NULL"},
        {"1700", "2150", "59", "NULL", "3", std::to_string(0xFF00FF00u), "launch", "1", gtid_main,
         "NULL", "1", "NULL"},
        {"2380", "2460", "60", "8", "NULL", "NULL", "upload", "1", gtid_worker, "NULL", "1",
         "NULL"},
        {"2390", "6700", "60", "7", "NULL", "NULL", "copy", "1", gtid_main, gtid_worker, "1",
         "NULL"},
        {"6650", "NULL", "34", "NULL", "NULL", "NULL", "checked", "1", gtid_worker, "NULL", "1",
         "-5"},
        {"6800", "NULL", "60", "9", "NULL", "NULL", "forever", "1", gtid_worker, "NULL", "1",
         "NULL"},
    };
    CHECK(rows == expected);
  }

  SECTION("names, processes, streams, session") {
    CHECK(d.query("SELECT s.value, t.priority, t.globalTid FROM ThreadNames AS t JOIN StringIds "
                  "AS s ON s.id = t.nameId") == rows_t{{"worker 0", "0", gtid_worker}});
    CHECK(d.query("SELECT globalPid, pid, name FROM PROCESSES") ==
          rows_t{{gpid, "4242", "/opt/app/bin/reduce"}});
    CHECK(d.query("SELECT name, processId, deviceId, contextId, streamId FROM "
                  "TARGET_INFO_NVTX_CUDA_STREAM") ==
          rows_t{{"copy stream", "4242", "0", "1", "13"}});
    CHECK(d.scalar("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME") ==
          std::to_string(utc0));
    CHECK(d.scalar("SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'") ==
          "3.20.3");
    // Every string is stored once.
    CHECK(d.scalar("SELECT count(*) - count(DISTINCT value) FROM StringIds") == "0");
  }

  SECTION("GPU rows hold the exact values, in nsys's enums") {
    CHECK(d.query("SELECT start, end, deviceId, contextId, streamId, correlationId, globalPid, "
                  "dn.value, sn.value, mn.value, launchType, cacheConfig, registersPerThread, "
                  "gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, gridId "
                  "FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
                  "JOIN StringIds AS dn ON dn.id = k.demangledName "
                  "JOIN StringIds AS sn ON sn.id = k.shortName "
                  "JOIN StringIds AS mn ON mn.id = k.mangledName") ==
          rows_t{{"2500",
                  "3700",
                  "0",
                  "1",
                  "13",
                  "10",
                  gpid,
                  "reduce::partial_reduce(const float *, unsigned long, float *)",
                  "partial_reduce",
                  "_ZN6reduce14partial_reduceEPKfmPf",
                  "1",
                  "1",
                  "16",
                  "1280",
                  "1",
                  "1",
                  "256",
                  "1",
                  "1",
                  "1024",
                  "77"}});
    CHECK(d.query("SELECT start, end, streamId, correlationId, globalPid, bytes, copyKind, "
                  "srcKind, dstKind, copyCount FROM CUPTI_ACTIVITY_KIND_MEMCPY") ==
          rows_t{{"4000", "6000", "13", "11", gpid, "400000000", "1", "1", "2", "1"}});
    CHECK(d.query("SELECT start, end, streamId, correlationId, value, bytes, memKind FROM "
                  "CUPTI_ACTIVITY_KIND_MEMSET") ==
          rows_t{{"2200", "2300", "7", "12", "0", "5120", "2"}});
    CHECK(d.query("SELECT start, end, deviceId, streamId, correlationId, syncType, eventId FROM "
                  "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") ==
          rows_t{{"6100", "6500", "0", "13", "13", "3", "4294967295"}});
    CHECK(d.query("SELECT start, end, eventClass, globalTid, correlationId, s.value, returnValue "
                  "FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN StringIds AS s ON s.id = r.nameId "
                  "ORDER BY start") ==
          rows_t{{"500", "520", "1", gtid_main, "9", "cuModuleGetLoadingMode", "0"},
                 {"1800", "1900", "0", gtid_main, "12", "cudaMemsetAsync", "0"},
                 {"2000", "2100", "0", gtid_main, "10", "cudaLaunchKernel", "0"},
                 {"2400", "2450", "0", gtid_worker, "11", "cudaMemcpyAsync", "0"},
                 {"6050", "6600", "0", gtid_worker, "13", "cudaStreamSynchronize", "0"}});
  }

  SECTION("the joins the reports make resolve") {
    // nvtx_sum: range name = domain name (creation event of the same process) ':' text.
    CHECK(d.query(R"(
        WITH domains AS (
          SELECT ne.domainId AS id, ne.globalTid AS globalTid, coalesce(s.value, ne.text) AS name
          FROM NVTX_EVENTS AS ne LEFT JOIN StringIds AS s ON ne.textId = s.id
          WHERE ne.eventType = 75 GROUP BY 1, 2)
        SELECT coalesce(d.name, '') || ':' || coalesce(s.value, ne.text, ''),
               CASE ne.eventType WHEN 59 THEN 'PushPop' ELSE 'StartEnd' END
        FROM NVTX_EVENTS AS ne
        LEFT JOIN domains AS d ON ne.domainId = d.id
          AND (ne.globalTid & 0x0000FFFFFF000000) = (d.globalTid & 0x0000FFFFFF000000)
        LEFT JOIN StringIds AS s ON ne.textId = s.id
        WHERE ne.eventType IN (59, 60) ORDER BY ne.start)") ==
          rows_t{{":step", "PushPop"},
                 {"physics:launch", "PushPop"},
                 {"physics:upload", "StartEnd"},
                 {"physics:copy", "StartEnd"},
                 {"physics:forever", "StartEnd"}});
    // nvtx_kern_sum / nvtx_gpu_proj_sum: GPU op -> API call by correlation id and process,
    // API call -> enclosing ranges of its thread (only ranges that ended where they started).
    CHECK(d.query(R"(
        SELECT op.correlationId, (r.globalTid >> 24) & 0x00FFFFFF, r.globalTid & 0x00FFFFFF,
               group_concat(coalesce(s.value, ne.text), '/')
        FROM (SELECT correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL
              UNION ALL SELECT correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY
              UNION ALL SELECT correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET) AS op
        JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON op.correlationId = r.correlationId
          AND op.globalPid = (r.globalTid & 0xFFFFFFFFFF000000)
        LEFT JOIN NVTX_EVENTS AS ne ON ne.eventType IN (59, 60) AND ne.endGlobalTid IS NULL
          AND ne.globalTid = r.globalTid AND ne.start <= r.start AND ne.end >= r.end
        LEFT JOIN StringIds AS s ON s.id = ne.textId
        GROUP BY 1 ORDER BY 1)") == rows_t{{"10", "4242", "4242", "step/launch"},
                                           {"11", "4242", "4250", "upload"},
                                           {"12", "4242", "4242", "step/launch"}});
    // cuda_gpu_mem_time_sum: copy kind label.
    CHECK(d.scalar("SELECT '[CUDA memcpy ' || mos.label || ']' FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                   "AS m JOIN ENUM_CUDA_MEMCPY_OPER AS mos ON mos.id = m.copyKind") ==
          "[CUDA memcpy Host-to-Device]");
    // Every StringIds reference resolves.
    CHECK(d.scalar("SELECT count(*) FROM (SELECT textId AS i FROM NVTX_EVENTS UNION ALL "
                   "SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL SELECT demangledName "
                   "FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT shortName FROM "
                   "CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT nameId FROM ThreadNames) "
                   "WHERE i IS NOT NULL AND i NOT IN (SELECT id FROM StringIds)") == "0");
  }
  if (std::getenv("NVTXPP_TEST_SQLITE_OUT") == nullptr) {
    std::remove(path.c_str());
  }
}

TEST_CASE("sqlite: past the intern budget texts go inline, references stay resolved") {
  std::string const path = temp_path("budget");
  cap::sqlite_writer::options opts;
  opts.intern_budget_bytes = 0;
  {
    auto sink = cap::make_sqlite_sink_at(path, opts, t0, utc0);
    write_trace(*sink);
  }
  db d{path};
  CHECK(d.scalar("SELECT count(*) FROM NVTX_EVENTS WHERE textId IS NOT NULL") == "0");
  CHECK(d.scalar("SELECT group_concat(text, ',') FROM (SELECT text FROM NVTX_EVENTS WHERE "
                 "eventType IN (59, 60) ORDER BY start)") == "step,launch,upload,copy,forever");
  CHECK(d.scalar("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON "
                 "s.id = k.shortName") == "partial_reduce");
  std::remove(path.c_str());
}

TEST_CASE("sqlite: an unwritable path is an output_error when the sink is made") {
  std::string const path = "/nonexistent-dir-nvtxpp/trace.sqlite";
  try {
    auto sink = cap::make_sqlite_sink(path);
    FAIL("no error");
  } catch (cap::output_error const& e) {
    CHECK(std::string(e.what()) == "cannot write '" + path + "': " + std::strerror(ENOENT));
  }
}

TEST_CASE("sqlite: a full disk is an output_error, not a crash") {
  std::string const path = temp_path("full");
  cap::sqlite_writer::options opts;
  opts.fail_write_after = 64 * 1024;
  opts.cache_kib = 1024;  // spill pages to the file early
  bool failed = false;
  try {
    cap::sqlite_writer w{path, opts};
    cap::nsys_nvtx_row r;
    r.text = "a range whose name takes some room in each row";
    r.intern_text = false;
    for (std::int64_t i = 0; i < 200'000; ++i) {
      r.start = i;
      r.end = i + 1;
      w.nvtx_event(r);
    }
    w.finish();
  } catch (cap::output_error const& e) {
    failed = true;
    std::string const what = e.what();
    INFO(what);
    CHECK(what.rfind("error writing '" + path + "': ", 0) == 0);
    CHECK(what.find(std::strerror(ENOSPC)) != std::string::npos);
  }
  CHECK(failed);
  std::remove(path.c_str());
}

TEST_CASE("sqlite: the writer is unusable after finish, with an error") {
  std::string const path = temp_path("closed");
  cap::sqlite_writer w{path};
  w.finish();
  CHECK_THROWS_AS(w.process(1, "x"), cap::output_error);
  std::remove(path.c_str());
}

TEST_CASE("sqlite: a million distinct range names in bounded memory") {
  std::string const path = temp_path("memory");
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  std::uint64_t rows = 0;
  {
    cap::sqlite_writer::options opts;
    opts.intern_budget_bytes = 1 << 20;
    opts.cache_kib = 8 * 1024;
    cap::sqlite_writer w{path, opts};
    cap::nsys_nvtx_row r;
    r.global_tid = cap::nsys_global_tid(pid, main_tid);
    std::string name;
    for (std::int64_t i = 0; i < 1'000'000; ++i) {
      name = "iteration " + std::to_string(i);
      r.text = name;
      r.start = i * 10;
      r.end = i * 10 + 5;
      w.nvtx_event(r);
    }
    w.finish();
    rows = w.rows();
  }
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  // ru_maxrss is KiB; the page cache (8 MiB) and intern budget (1 MiB plus map overhead) bound
  // the growth, whatever the row count.
#ifndef NVTXPP_TEST_SANITIZED
  CHECK(after.ru_maxrss - before.ru_maxrss < 48 * 1024);
#endif
  CHECK(rows >= 1'000'000);
  db d{path};
  CHECK(d.scalar("SELECT count(*) FROM NVTX_EVENTS") == "1000000");
  CHECK(d.scalar("SELECT coalesce(s.value, e.text) FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s "
                 "ON s.id = e.textId WHERE start = 9999990") == "iteration 999999");
  std::remove(path.c_str());
}
