/// @file
/// @brief Writes an SQLite database in Nsight Systems' export layout (`nsys export --type
/// sqlite`, schema 3.20.3), so that nsys's own stats reports (`nsys stats --report nvtx_sum,
/// nvtx_gpu_proj_sum, nvtx_kern_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_api_sum
/// file.sqlite`) read it unmodified.
///
/// Only the tables those reports read are created, with nsys's table and column names and
/// types; the ENUM_* tables their columns refer to, with nsys's rows; StringIds holding every
/// interned string. Rows go in through prepared statements inside one transaction, with no
/// journal: the file is complete once finish() returns, and is not a database to trust if the
/// writer fails or is destroyed before (the caller reports that failure).
///
/// Memory stays bounded whatever the row count: SQLite's page cache is capped, and strings are
/// interned (one StringIds row, referenced by id) until `intern_budget_bytes` of memory holds
/// them, after which new texts go inline in NVTX_EVENTS.text, as nsys does for unregistered
/// strings.
#pragma once

#include "../../model/trace_model.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nvtxpp::capture {

/// @brief NVTX_EVENTS.eventType values (ENUM_NSYS_EVENT_TYPE ids).
enum class nsys_event_type : std::int32_t {
  category_name = 33,  ///< NvtxCategory: nvtxDomainNameCategory
  mark = 34,           ///< NvtxMark
  thread_name = 39,    ///< NvtxThread: nvtxNameOsThread
  push_pop = 59,       ///< NvtxPushPopRange
  start_end = 60,      ///< NvtxStartEndRange
  domain_create = 75,  ///< NvtxDomainCreate
};

/// @brief nsys's serialized global thread id: bit 48 set, pid in bits 24..47, tid in 0..23.
[[nodiscard]] constexpr std::int64_t nsys_global_tid(std::uint32_t pid,
                                                     std::uint64_t tid) noexcept {
  return static_cast<std::int64_t>((std::uint64_t{1} << 48) |
                                   ((std::uint64_t{pid} & 0xFFFFFFu) << 24) | (tid & 0xFFFFFFu));
}

/// @brief nsys's serialized global process id: nsys_global_tid with the tid bits clear.
[[nodiscard]] constexpr std::int64_t nsys_global_pid(std::uint32_t pid) noexcept {
  return nsys_global_tid(pid, 0);
}

/// @brief One NVTX_EVENTS row. Empty optionals are written as NULL.
struct nsys_nvtx_row {
  std::int64_t start = 0;
  std::optional<std::int64_t> end;  ///< NULL for marks, names, unterminated ranges
  nsys_event_type type = nsys_event_type::push_pop;
  std::optional<std::int64_t> range_id;  ///< start/end ranges: the nvtxRangeId_t
  std::optional<std::int64_t> category;
  std::optional<std::uint32_t> color;  ///< ARGB
  std::string_view text;               ///< "" writes NULL text and textId
  bool intern_text = true;  ///< false: always inline in `text` (names of domains, categories)
  std::int64_t global_tid = 0;
  std::optional<std::int64_t> end_global_tid;  ///< start/end ended on another thread
  std::int64_t domain_id = 0;
  std::uint8_t payload_type = 0;  ///< 0 none; 1 u64, 2 i64, 3 f64, 4 u32, 5 i32, 6 f32
  std::uint64_t payload_bits = 0;
  /// Structured payload bytes (NVTX payload extension) for binaryData, as a BLOB; empty: NULL.
  std::string_view binary;
};

/// @brief One NVTX_PAYLOAD_SCHEMAS row (a registered payload schema). Zero values and empty
/// texts are written as NULL, as nsys 2025.3 does.
struct nsys_schema_row {
  std::int64_t domain_id = 0;
  std::uint64_t schema_id = 0;
  std::string_view name;
  std::uint64_t type = 0;   ///< NVTX_PAYLOAD_SCHEMA_TYPE_*
  std::uint64_t flags = 0;  ///< NVTX_PAYLOAD_SCHEMA_FLAG_*
  std::uint64_t num_entries = 0;
  std::uint64_t payload_size = 0;  ///< static size (given or computed)
  std::uint64_t align_to = 0;      ///< packAlign
};

/// @brief One NVTX_PAYLOAD_SCHEMA_ENTRIES row. Zero values and empty texts are written as NULL.
struct nsys_schema_entry_row {
  std::int64_t domain_id = 0;
  std::uint64_t schema_id = 0;
  std::uint64_t index = 0;
  std::uint64_t flags = 0;
  std::uint64_t type = 0;
  std::string_view name;
  std::string_view description;
  std::uint64_t array_or_union = 0;
  std::uint64_t offset = 0;
};

/// @brief One CUPTI_ACTIVITY_KIND_KERNEL row (values already in nsys's enums).
struct nsys_kernel_row {
  std::int64_t start = 0, end = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::int64_t global_pid = 0;
  std::string_view demangled, short_name, mangled;
  std::int32_t launch_type = 0, cache_config = 0;
  std::uint32_t registers_per_thread = 0;
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::int32_t static_shared = 0, dynamic_shared = 0;
  std::uint32_t local_per_thread = 0;
  std::uint64_t local_total = 0, grid_id = 0;
  std::uint32_t shared_executed = 0;
  std::uint64_t graph_node = 0;  ///< CUPTI graphNodeId (0: not graph work; written NULL)
};

/// @brief One NVTXPP_GRAPH_RANGES row (nvtxpp-capture's own table, docs/graphs.md): a range's
/// GPU-side instance in one CUDA graph launch. Times in the export's time base.
struct nvtxpp_graph_range_row {
  std::int64_t start = 0, end = 0;  ///< GPU: first node's start, last node's end
  std::string_view text;            ///< the range's message
  std::uint32_t domain_id = 0;      ///< as NVTX_EVENTS.domainId
  std::int64_t global_tid = 0;      ///< the capture thread, as NVTX_EVENTS.globalTid
  std::int64_t nvtx_start = 0;      ///< the CPU range's NVTX_EVENTS.start
  std::int64_t global_pid = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0, graph = 0;
  std::uint64_t launch = 0;
  std::int32_t depth = 0;
  std::uint32_t kernels = 0, memcpys = 0, memsets = 0;
  std::int64_t busy_ns = 0;
};

/// @brief One CUPTI_ACTIVITY_KIND_MEMCPY row (copy_kind: ENUM_CUDA_MEMCPY_OPER, src/dst:
/// ENUM_CUDA_MEM_KIND).
struct nsys_memcpy_row {
  std::int64_t start = 0, end = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::int64_t global_pid = 0;
  std::uint64_t bytes = 0;
  std::int32_t copy_kind = 0, src_kind = 0, dst_kind = 0;
  /// Unified memory migrations (copy kinds 11 to 13): CUPTI's migration cause; the row then has
  /// no correlationId. Empty for copies.
  std::optional<std::int64_t> migration_cause;
};

/// @brief One CUPTI_ACTIVITY_KIND_GRAPH_TRACE row: a CUDA graph launch as a whole.
struct nsys_graph_trace_row {
  std::int64_t start = 0, end = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0, graph = 0;
  std::int64_t global_pid = 0;
};

/// @brief One CUPTI_ACTIVITY_KIND_MEMSET row (mem_kind: ENUM_CUDA_MEM_KIND).
struct nsys_memset_row {
  std::int64_t start = 0, end = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::int64_t global_pid = 0;
  std::uint32_t value = 0;
  std::uint64_t bytes = 0;
  std::int32_t mem_kind = 0;
};

/// @brief One CUPTI_ACTIVITY_KIND_SYNCHRONIZATION row (sync_type: ENUM_CUPTI_SYNC_TYPE).
struct nsys_sync_row {
  std::int64_t start = 0, end = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::int64_t global_pid = 0;
  std::int32_t sync_type = 0;
  std::uint32_t event = 0;
};

/// @brief One CUPTI_ACTIVITY_KIND_RUNTIME row (runtime and driver calls alike, as nsys does).
struct nsys_api_row {
  std::int64_t start = 0, end = 0;
  std::int32_t event_class = 0;  ///< ENUM_NSYS_EVENT_CLASS: 0 CUDA runtime, 1 CUDA driver
  std::int64_t global_tid = 0;
  std::uint32_t correlation = 0;
  std::string_view name;
  std::int32_t return_value = 0;
};

/// @brief Writes one database; see the file comment. Every method throws output_error
/// (trace_model.hpp) when SQLite fails (disk full, I/O error); the writer is then unusable.
class sqlite_writer {
 public:
  /// @brief Tuning and test hooks.
  struct options {
    /// @brief Memory for interned strings (text plus ~64 bytes of table per string) before
    /// new texts go inline.
    std::size_t intern_budget_bytes = std::size_t{32} << 20;
    /// @brief SQLite page cache (KiB).
    int cache_kib = 16 * 1024;
    /// @brief Test hook: file writes past this many bytes fail as a full disk would.
    std::uint64_t fail_write_after = UINT64_MAX;
    /// @brief The name the file is recorded under (META_DATA_EXPORT's EXPORT_PARAM_OUTPUT_PATH)
    /// when it is written under a temporary one and renamed; empty: the path written.
    std::string final_path;
  };

  /// @brief Creates (truncates) `path`, creates the tables and the enum rows, opens the
  /// transaction. @throws output_error when the file cannot be created or written.
  sqlite_writer(std::string path, options opts);
  /// @brief As above with default options.
  explicit sqlite_writer(std::string path);
  ~sqlite_writer();
  sqlite_writer(sqlite_writer const&) = delete;
  sqlite_writer& operator=(sqlite_writer const&) = delete;

  /// @brief The StringIds id of `text` (inserted on first use), or nullopt once the intern
  /// budget is spent and `text` is not already interned.
  [[nodiscard]] std::optional<std::int64_t> intern(std::string_view text);

  void nvtx_event(nsys_nvtx_row const& row);
  /// @brief An NVTX_PAYLOAD_SCHEMAS row.
  void payload_schema(nsys_schema_row const& row);
  /// @brief An NVTX_PAYLOAD_SCHEMA_ENTRIES row.
  void payload_schema_entry(nsys_schema_entry_row const& row);
  /// @brief Counter samples as Nsight Systems 2025.3 exports them (seen on the GPU machine):
  /// one GENERIC_EVENT_SOURCES row "GenericCounters" (session-ns time source) per process, one
  /// GENERIC_EVENT_TYPES row per counter with one GENERIC_EVENT_TYPE_FIELDS row per value (the
  /// counter's name), one GENERIC_EVENTS row per sample with its values in GENERIC_EVENT_DATA
  /// (intVal, uintVal or doubleVal). `source`/`type` ids are the caller's (unique keys).
  void generic_source(std::int64_t source_id);
  /// @brief A counter's type row and its fields (name, size, ENUM_NSYS_GENERIC_EVENT_FIELD_TYPE
  /// id: 0 signed, 1 unsigned, 2 float, 3 double).
  struct generic_field {
    std::string_view name;
    std::uint32_t size = 8;
    int type = 0;
  };
  void generic_type(std::int64_t type_id, std::int64_t source_id, std::string_view name,
                    generic_field const* fields, std::size_t count);
  /// @brief One sample: its values, field by field (a variant per field: i64, u64 or double).
  struct generic_value {
    int type = 0;  ///< 0 intVal, 1 uintVal, 3 doubleVal
    std::int64_t i = 0;
    std::uint64_t u = 0;
    double d = 0;
  };
  void generic_event(std::int64_t timestamp, std::int64_t type_id, std::int64_t global_tid,
                     generic_value const* values, std::size_t count);
  void kernel(nsys_kernel_row const& row);
  void memcpy(nsys_memcpy_row const& row);
  void memset(nsys_memset_row const& row);
  void sync(nsys_sync_row const& row);
  void api(nsys_api_row const& row);
  /// @brief An NVTXPP_GRAPH_RANGES row (the table is created on the first one, so exports
  /// without CUDA graph work keep Nsight Systems' tables only).
  void graph_range(nvtxpp_graph_range_row const& row);
  /// @brief A CUPTI_ACTIVITY_KIND_GRAPH_TRACE row (the table is created on the first one, as
  /// Nsight Systems' export has it only with `--cuda-graph-trace=graph` and graph launches).
  void graph_trace(nsys_graph_trace_row const& row);
  /// @brief Drops `table` when it holds no row: Nsight Systems' export leaves out the tables it
  /// has nothing for, and its reports skip a file without them (nvtx_kern_sum reads a file
  /// without NVTX_EVENTS as "no NVTX data", not as every kernel under no range).
  void drop_if_empty(std::string_view table);
  /// @brief A ThreadNames row (priority 0, as nsys writes for unknown priority).
  void thread_name(std::int64_t global_tid, std::string_view name);
  /// @brief A PROCESSES row.
  void process(std::uint32_t pid, std::string_view name);
  /// @brief A TARGET_INFO_NVTX_CUDA_STREAM row: a CUDA stream named through NVTX.
  void nvtx_cuda_stream(std::string_view name, std::uint32_t pid, std::uint32_t device,
                        std::uint32_t context, std::uint32_t stream);
  /// @brief A META_DATA_CAPTURE row.
  void capture_meta(std::string_view name, std::string_view value);
  /// @brief Sets TARGET_INFO_SESSION_START_TIME (UTC epoch ns of time 0), written by finish().
  void session_start(std::int64_t utc_epoch_ns) noexcept { session_start_ns_ = utc_epoch_ns; }

  /// @brief Writes META_DATA_EXPORT and the session start, commits and closes the file.
  /// @throws output_error on failure (the file is then incomplete).
  void finish();

  /// @brief Rows inserted so far (all tables, StringIds included).
  [[nodiscard]] std::uint64_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::string const& path() const noexcept { return path_; }

 private:
  struct impl;
  impl& live() const;
  std::optional<std::int64_t> intern(std::string_view text, bool force);
  /// Interned even past the budget: names a column must reference (kernels, API calls).
  std::int64_t intern_required(std::string_view text);
  std::string path_;
  std::string final_path_;           ///< options::final_path, else path_
  std::int64_t generic_events_ = 0;  // GENERIC_EVENTS ids given
  std::unique_ptr<impl> impl_;
  std::uint64_t rows_ = 0;
  std::int64_t session_start_ns_ = 0;
};

/// @brief make_sqlite_sink (sqlite_sink.hpp) with explicit options and time origin: times are
/// written as nanoseconds since `origin_mono_ns` (CLOCK_MONOTONIC), which is `origin_utc_ns`
/// in TARGET_INFO_SESSION_START_TIME. The rank and host rows of META_DATA_CAPTURE are `launch`
/// when given (a trace read back from a file records its own), else this process's
/// launch_metadata(). @throws output_error as make_sqlite_sink.
[[nodiscard]] std::unique_ptr<trace_sink> make_sqlite_sink_at(
    std::string const& path, sqlite_writer::options const& opts, std::int64_t origin_mono_ns,
    std::int64_t origin_utc_ns,
    std::optional<std::vector<std::pair<std::string, std::string>>> launch = std::nullopt);

/// @brief The base name nsys shows for a demangled kernel name (shortName): no return type,
/// scope, template arguments or parameters ("void ns::k<int>(int*)" -> "k").
[[nodiscard]] std::string nsys_short_kernel_name(std::string_view demangled);

}  // namespace nvtxpp::capture
