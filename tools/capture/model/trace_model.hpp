/// @file
/// @brief nvtxpp-capture's trace model: what a recording holds (processes, threads, domains,
/// categories, named resources, ranges, marks, GPU activity, CUDA API calls, warnings), delivered
/// as a stream of events to sinks (the JSON writer, the summary, the SQLite writer).
///
/// Nothing is held for the whole trace: the raw recording's `reader`
/// (readers/raw/raw_reader.hpp) decodes one process file at a time and hands each event to
/// every sink as it completes, so a recording of tens of millions of ranges
/// needs memory for the open ranges only (plus whatever a sink chooses to keep).
///
/// Order of delivery, per process file (files in name order):
///   begin_process, on_domain*, on_category*, on_schema*, on_counter*, on_thread*,
///   GPU records (on_kernel, on_memcpy, on_memset, on_sync, on_api, on_gpu_info) in file order,
///   then, with graph_trace::graph, on_graph_launch* (one per CUDA graph launch, by start),
///   NVTX events thread by thread (on_range at the range's end, on_mark, on_counter_sample,
///   on_resource, on_warning), then the ranges still open at the end (unterminated),
///   on_graph_range* (GPU-side instances of ranges in CUDA graph launches), on_gpu_stream*
///   (one per GPU stream that ran activity), end_process.
/// After the last process: finish.
/// A process's GPU records all come before its ranges, so a sink relating the two (GPU
/// projection) keeps the GPU side (few records) and streams the ranges.
///
/// Times are CLOCK_MONOTONIC nanoseconds throughout. string_view members are valid during the
/// call only: a sink copies what it keeps.
#pragma once

#include "../../recording/decode/decode.hpp"
#include "../../recording/format.hpp"
#include "../../recording/gpu_format.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nvtxpp::capture {

/// @brief Thrown by a sink when its output cannot be written (disk full, I/O error): the
/// reader stops and the caller reports the failure.
class output_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief One captured process (one nvtxpp-<pid>.bin file).
struct process_info {
  std::uint32_t pid = 0;
  std::uint32_t ppid = 0;
  std::string command;        ///< command line, arguments separated by spaces ("" if unknown)
  std::string path;           ///< the raw file it was read from
  std::int64_t start_ns = 0;  ///< recording start (the file header's calibration point)
  std::int64_t end_ns = 0;    ///< process end (end_process: last event when not finished)
  bool finished = false;      ///< the process flushed its file at exit (end_process only)
  bool killed = false;        ///< it ended by a signal the recorder saw (end_process only)
  /// The whole track name where the source gives one (merge: rank, host, recorded pid, name),
  /// shown as is; "" to name the process by command and pid.
  std::string title;
};

/// @brief A thread of a process that recorded events or was named.
struct thread_info {
  std::uint32_t pid = 0;
  std::uint64_t tid = 0;  ///< kernel thread id (gettid)
  std::string_view name;  ///< the last name given (nvtxNameOsThread), "" if none
  bool named = false;     ///< a name was given
};

/// @brief A domain of a process (index 0: the global domain, name "").
struct domain_info {
  std::uint32_t pid = 0;
  std::uint32_t index = 0;
  std::string_view name;
};

/// @brief A category name given in a domain (one call per nvtxNameCategory call).
struct category_info {
  std::uint32_t pid = 0;
  std::uint32_t domain = 0;
  std::uint32_t id = 0;
  std::int64_t ns = 0;  ///< when the name was given
  std::string_view name;
};

/// @brief A resource named through NVTX (nvtxNameCudaStream: kind cuda_stream, handle the
/// cudaStream_t's bits; nvtxNameCuStream: cu_stream; ...).
struct resource_info {
  std::uint32_t pid = 0;
  std::uint64_t tid = 0;
  std::int64_t ns = 0;
  recording::resource_kind kind = recording::resource_kind::unknown;
  std::uint64_t handle = 0;
  std::uint32_t domain = 0;
  std::string_view name;
};

/// @brief Range style, as nsys names them.
enum class range_style : std::uint8_t { push_pop = 0, start_end = 1 };

/// @brief Attributes common to ranges and marks.
struct event_attributes {
  std::uint32_t domain = 0;      ///< domain index
  std::string_view domain_name;  ///< "" for the global domain
  bool has_color = false;
  std::uint32_t color = 0;         ///< ARGB, valid when has_color
  std::uint32_t category = 0;      ///< 0: none
  std::string_view category_name;  ///< name in force at the event's time, "" if never named
  std::uint8_t payload_type = 0;   ///< 0 none; 1 u64, 2 i64, 3 f64, 4 u32, 5 i32, 6 f32
  std::uint64_t payload_bits = 0;  ///< the payload's bit pattern (payload_type's type)
  bool registered = false;         ///< message was a registered string
  bool truncated = false;          ///< message cut at testing::max_message_bytes
  bool null_message = false;       ///< a null message was passed (name is "(null)")
  /// Structured payloads (NVTX payload extension), decoded by the process's registered
  /// schemas; undecodable ones keep their bytes (and a warning was delivered).
  std::vector<testing::structured_payload> payloads;
};

/// @brief A completed range (push/pop, or start/end possibly across threads).
struct range_info {
  std::uint32_t pid = 0;
  range_style style = range_style::push_pop;
  std::uint64_t tid = 0;      ///< thread that pushed / started it
  std::uint64_t end_tid = 0;  ///< thread that popped / ended it (== tid for push/pop)
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t id = 0;       ///< start/end: the nvtxRangeId_t; push/pop: 0
  int depth = 0;              ///< push/pop: nesting depth in its domain on its thread, from 0
  bool unterminated = false;  ///< still open when the process ended (closed at its end)
  std::string_view name;      ///< message ("" for none)
  event_attributes attr;
};

/// @brief What an instant event is: an nvtxMark, or a synchronisation-object event.
enum class mark_kind : std::uint8_t {
  mark = 0,
  sync_create,
  sync_destroy,
  sync_acquire_start,
  sync_acquire_failed,
  sync_acquire_success,
  sync_releasing,
};

/// @brief Name of a mark kind ("mark", "sync_create", ...).
[[nodiscard]] char const* to_string(mark_kind kind) noexcept;

/// @brief An instant event.
struct mark_info {
  std::uint32_t pid = 0;
  std::uint64_t tid = 0;
  std::int64_t ns = 0;
  mark_kind kind = mark_kind::mark;
  std::uint64_t handle = 0;  ///< sync events: the user sync object
  std::string_view name;     ///< mark: message; sync events: the object's name at creation
  event_attributes attr;
};

/// @brief A kernel execution; `raw` as recorded (times CLOCK_MONOTONIC ns).
struct kernel_info {
  std::uint32_t pid = 0;
  recording::gpu_kernel raw{};
  std::string_view name;         ///< as CUPTI reports it (usually mangled)
  std::string_view demangled;    ///< demangled name, or `name` when it is not a mangled name
  std::uint64_t graph_node = 0;  ///< CUPTI graphNodeId when run by a graph launch, else 0
  std::uint32_t graph = 0;       ///< CUPTI graphId when run by a graph launch, else 0
};

/// @brief How CUDA graph work is delivered (Nsight Systems' `--cuda-graph-trace`). The recording
/// always holds each node's work (graph ranges need it); the mode chooses what sinks see.
enum class graph_trace : std::uint8_t {
  node,   ///< each node's kernel, copy or memset, as without graphs (graph_node set)
  graph,  ///< one on_graph_launch per launch instead: its nodes' work is not delivered
};

/// @brief One CUDA graph launch as a whole (graph_trace::graph; CUPTI's GRAPH_TRACE record):
/// from its first node's start to its last node's end, on the stream where the first ran.
struct graph_launch_info {
  std::uint32_t pid = 0;
  std::uint32_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint32_t correlation = 0;  ///< the launching call's (as its nodes' work carried)
  std::uint32_t graph = 0;        ///< CUPTI graph id of the nodes' work
  std::uint32_t kernels = 0;      ///< its nodes' work, by kind
  std::uint32_t memcpys = 0;
  std::uint32_t memsets = 0;
};

/// @brief A memory copy, or a unified memory migration (recording::is_migration(raw.copy_kind):
/// no launching call, raw.stream recording::migration_stream).
struct memcpy_info {
  std::uint32_t pid = 0;
  recording::gpu_memcpy raw{};
  std::uint64_t graph_node = 0;  ///< as kernel_info
  std::uint32_t graph = 0;
};

/// @brief A memset.
struct memset_info {
  std::uint32_t pid = 0;
  recording::gpu_memset raw{};
  std::uint64_t graph_node = 0;  ///< as kernel_info
  std::uint32_t graph = 0;
};

/// @brief One instance of an NVTX range on the GPU side of one CUDA graph launch: the range was
/// open on the thread that created (captured or added) some of the launch's nodes, and spans the
/// GPU work of those nodes in this launch, from the first's start to the last's end
/// (tools/capture/model/graph_ranges.hpp).
struct graph_range_info {
  std::uint32_t pid = 0;
  std::uint32_t device = 0;  ///< where the range's first node ran
  std::uint32_t context = 0;
  std::uint32_t stream = 0;       ///< CUPTI stream id
  std::int64_t start_ns = 0;      ///< first node's start (GPU)
  std::int64_t end_ns = 0;        ///< last node's end (GPU)
  std::uint32_t correlation = 0;  ///< the graph launch's (its API call's and its work's)
  std::uint32_t graph = 0;        ///< CUPTI graph id of the launch's work
  std::uint64_t launch = 0;       ///< launches with such instances numbered from 1, by start
  int depth = 0;                  ///< 0: outermost of the ranges its nodes were created under
  std::uint32_t kernels = 0;      ///< nodes of each kind under the range in this launch
  std::uint32_t memcpys = 0;
  std::uint32_t memsets = 0;
  std::int64_t busy_ns = 0;  ///< sum of those nodes' durations
  // The capture-time (CPU) range.
  std::uint64_t tid = 0;          ///< the thread it was open on
  std::int64_t cpu_start_ns = 0;  ///< its push
  std::int64_t cpu_end_ns = 0;    ///< its pop
  std::string_view name;
  std::uint32_t domain = 0;
  std::string_view domain_name;  ///< "" for the global domain
  bool has_color = false;
  std::uint32_t color = 0;
};

/// @brief A synchronisation.
struct sync_info {
  std::uint32_t pid = 0;
  recording::gpu_sync raw{};
};

/// @brief A CUDA runtime or driver API call.
struct api_info {
  std::uint32_t pid = 0;  ///< the file's process (raw.pid as recorded may be 0)
  recording::gpu_api raw{};
  std::string_view name;  ///< function name as CUPTI gives it ("cudaLaunchKernel_v7000")
  /// A driver call the CUDA runtime made inside one of its own calls (recorded only with
  /// --cuda-api=all): listed, but GPU work is attributed to the runtime call around it
  /// (model/launch_index.hpp), so a sink relating calls to GPU work skips it.
  bool nested = false;
};

/// @brief An `info` record of the CUPTI source ("key=value", gpu_format.hpp gpu_info_keys).
struct gpu_info {
  std::uint32_t pid = 0;
  std::string_view key;
  std::string_view value;
};

/// @brief A GPU stream that ran activity in a process, with the name the program gave it.
struct gpu_stream_info {
  std::uint32_t pid = 0;
  std::uint32_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;  ///< CUPTI stream id
  std::string_view name;     ///< NVTX name (nvtxNameCudaStream/CuStream) if known, else ""
};

/// @brief A payload schema or enum registered in a process (NVTX payload extension); offsets
/// and static size as resolved at registration.
struct schema_info {
  std::uint32_t pid = 0;
  recording::schema_def const* def = nullptr;
};

/// @brief A counter registered in a process (NVTX counters extension).
struct counter_info {
  std::uint32_t pid = 0;
  std::string_view domain_name;  ///< "" for the global domain
  recording::counter_def const* def = nullptr;
};

/// @brief One counter sample (a batch gives one per value, all at the batch's time).
struct counter_sample_info {
  std::uint32_t pid = 0;
  std::uint64_t tid = 0;
  std::int64_t ns = 0;
  std::uint32_t domain = 0;
  std::string_view domain_name;
  testing::counter_sample const* sample = nullptr;  ///< decoded (name, value or group fields)
};

/// @brief A problem found while reading (kind: a short word such as "unterminated").
struct warning_info {
  std::string_view kind;
  std::string_view text;
};

/// @brief Receives the trace as a stream (see the file comment for the order). Every hook has
/// an empty default, so a sink overrides what it uses. A sink whose output fails throws
/// output_error.
class trace_sink {
 public:
  virtual ~trace_sink() = default;
  virtual void begin_process(process_info const&) {}
  virtual void on_domain(domain_info const&) {}
  virtual void on_category(category_info const&) {}
  virtual void on_thread(thread_info const&) {}
  virtual void on_resource(resource_info const&) {}
  virtual void on_range(range_info const&) {}
  virtual void on_mark(mark_info const&) {}
  virtual void on_schema(schema_info const&) {}
  virtual void on_counter(counter_info const&) {}
  virtual void on_counter_sample(counter_sample_info const&) {}
  virtual void on_kernel(kernel_info const&) {}
  virtual void on_memcpy(memcpy_info const&) {}
  virtual void on_memset(memset_info const&) {}
  virtual void on_sync(sync_info const&) {}
  virtual void on_api(api_info const&) {}
  virtual void on_gpu_info(gpu_info const&) {}
  virtual void on_gpu_stream(gpu_stream_info const&) {}
  /// @brief A range's GPU-side instance in one CUDA graph launch (after the process's ranges,
  /// in start order; see graph_range_info).
  virtual void on_graph_range(graph_range_info const&) {}
  /// @brief A CUDA graph launch as a whole (graph_trace::graph only; see graph_launch_info).
  virtual void on_graph_launch(graph_launch_info const&) {}
  virtual void on_warning(warning_info const&) {}
  /// @brief The process's last event was delivered; `info` now has end_ns, finished, killed.
  virtual void end_process(process_info const&) {}
  /// @brief The whole trace was delivered; flush and close the output (may throw).
  virtual void finish() {}
};

/// @brief What a read delivered, in totals.
struct read_totals {
  std::size_t processes = 0;          ///< process files read
  std::uint64_t ranges = 0;           ///< ranges delivered (incl. unterminated)
  std::uint64_t marks = 0;            ///< instant events delivered
  std::uint64_t counter_samples = 0;  ///< counter samples delivered
  std::uint64_t gpu_ops = 0;          ///< kernels, memcpys, memsets
  std::uint64_t graph_launches = 0;   ///< CUDA graph launches (graph_trace::graph), not in gpu_ops
  std::uint64_t migrations = 0;       ///< unified memory migrations (in gpu_ops too)
  std::uint64_t api_calls = 0;
  /// GPU operations whose launching API call is not in the recording (delivered all the same,
  /// under no NVTX range): kernels, copies, memsets.
  std::uint64_t unattributed[3] = {0, 0, 0};
  std::map<std::string, std::uint64_t> warning_counts;  ///< by kind
  std::vector<std::string> warnings;                    ///< the first few, in order found
};

/// @brief `payload_bits` of type `payload_type` formatted as a JSON number (or a quoted
/// "nan"/"inf"/"-inf"); "null" when there is no payload.
[[nodiscard]] std::string payload_json(std::uint8_t payload_type, std::uint64_t bits);

/// @brief Name of a payload type ("u64", "i64", ..., "" for none).
[[nodiscard]] char const* payload_type_name(std::uint8_t payload_type) noexcept;

/// @brief nsys's name of a memcpy kind ("Host-to-Device", ..., "Unified Host-to-Device" for
/// migrations; "Unknown" otherwise).
[[nodiscard]] char const* memcpy_kind_name(std::uint8_t copy_kind) noexcept;

}  // namespace nvtxpp::capture
