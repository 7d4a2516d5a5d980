/// @file
/// @brief GPU activity in the capture file: what nvtxpp-capture's CUPTI source (in the injection
/// library) writes and what the merger reads. Each activity is one capture-file record
/// (`u32 kind, u32 size, body`, format.hpp) whose body is one of the fixed structs below, written
/// and read with memcpy (little-endian, the structs' own layout; `static_assert`s pin the sizes).
///
/// Times are CLOCK_MONOTONIC nanoseconds: the CUPTI source gives CUPTI a timestamp callback that
/// reads that clock, so GPU records and NVTX events (whose ticks the merger maps to the same
/// clock) share one timeline. Thread ids are the kernel's (gettid), as in NVTX records.
/// Names (kernels, API functions) are ids of `gpu_string` records of the same file: an id space
/// of its own, separate from NVTX's registered strings.
#pragma once

#include <cstdint>
#include <string_view>

namespace nvtxpp::recording {

/// @brief Capture-file record kinds of GPU activity (continuing format.hpp's file_record).
enum class gpu_record : std::uint32_t {
  kernel = 9,       ///< gpu_kernel
  memcpy = 10,      ///< gpu_memcpy
  memset = 11,      ///< gpu_memset
  sync = 12,        ///< gpu_sync
  api = 13,         ///< gpu_api (CUDA runtime or driver call)
  string = 14,      ///< u32 id, then the text (no terminator)
  info = 15,        ///< text "key=value" (see gpu_info_keys below)
  graph_node = 16,  ///< gpu_graph_node: a CUDA graph node created, cloned or updated
};

/// @brief Appended to a gpu_kernel, gpu_memcpy or gpu_memset body (the record is then this much
/// longer) when the work ran as a node of a CUDA graph launch: CUPTI's graphNodeId (the node of
/// the executable graph) and graphId. Readers that know only the struct ignore the tail.
struct gpu_graph_tail {
  std::uint64_t node;
  std::uint32_t graph;
  std::uint32_t reserved;
};
static_assert(sizeof(gpu_graph_tail) == 16);

/// @brief What a gpu_graph_node record says happened.
enum class graph_event : std::uint32_t {
  created = 1,   ///< `node` was added to `graph` (stream capture or the graph API) on thread
                 ///< `tid` at `ticks`
  cloned = 2,    ///< `node` (of `graph`) is a copy of `original` (of `original_graph`): graph
                 ///< instantiation, cudaGraphClone, a child graph copied into its node
  updated = 3,   ///< `node` of an executable graph now runs the parameters of `original`
                 ///< (cudaGraphExecUpdate, cudaGraphExecChildGraphNodeSetParams)
  child = 4,     ///< `node` is a child-graph node whose embedded graph is `graph`
  starting = 5,  ///< a node of type `node_type` is about to be added to `graph` on thread `tid`
                 ///< (`node` 0): the clones made before that node's `created` on the same
                 ///< thread are its embedded graph (cudaGraphAddChildGraphNode copies the child
                 ///< graph)
  /// thread `tid` entered a driver call that adds a node (cuGraphAddChildGraphNode,
  /// cuGraphAddNode): clones made until its `call_exit` are the embedded graph of the child-graph
  /// node it creates (written only when such clones come)
  call_enter = 6,
  call_exit = 7,  ///< that call returned
};

/// @brief A CUDA graph node event (CUPTI's resource callbacks). `ticks` are the NVTX recorder's
/// clock (format.hpp), read on the calling thread, so the reader orders the event exactly among
/// that thread's NVTX pushes and pops.
struct gpu_graph_node {
  std::int64_t ticks;
  std::uint64_t tid;
  std::uint64_t node;      ///< CUPTI node id (cuptiGetGraphNodeId)
  std::uint64_t original;  ///< cloned/updated: the node it comes from; else 0
  std::uint32_t graph;     ///< CUPTI graph id of `node`'s graph (0: unknown)
  std::uint32_t original_graph;
  std::uint32_t event;      ///< graph_event
  std::uint32_t node_type;  ///< CUgraphNodeType
};
static_assert(sizeof(gpu_graph_node) == 48);

/// @brief A kernel execution (CUPTI_ACTIVITY_KIND_KERNEL / CONCURRENT_KERNEL).
struct gpu_kernel {
  std::int64_t start;
  std::int64_t end;
  std::uint32_t device;
  std::uint32_t context;
  std::uint32_t stream;
  std::uint32_t correlation;
  std::uint32_t name;  ///< gpu_string id of the mangled name (as CUPTI reports it)
  std::int32_t grid[3];
  std::int32_t block[3];
  std::uint32_t registers_per_thread;
  std::int32_t static_shared;   ///< bytes
  std::int32_t dynamic_shared;  ///< bytes
  std::uint32_t local_per_thread;
  std::uint64_t local_total;
  std::uint64_t grid_id;
  std::uint32_t shared_executed;  ///< bytes of shared memory the launch was configured with
  std::uint8_t launch_type;       ///< CUpti_ActivityLaunchType
  std::uint8_t cache_config;      ///< requested cache configuration
  std::uint8_t reserved[2];
};
static_assert(sizeof(gpu_kernel) == 104);

/// @brief A memory copy (CUPTI_ACTIVITY_KIND_MEMCPY), or a unified memory migration
/// (CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER, counters BYTES_TRANSFER_HTOD/DTOH/DTOD): then
/// `copy_kind` is one of the migration kinds below (Nsight Systems' ENUM_CUDA_MEMCPY_OPER ids,
/// past CUPTI's memcpy kinds), `correlation` 0 (no API call launches a migration), `context` 0,
/// `stream` migration_stream, and `cause` CUPTI's CUpti_ActivityUnifiedMemoryMigrationCause.
struct gpu_memcpy {
  std::int64_t start;
  std::int64_t end;
  std::uint32_t device;
  std::uint32_t context;
  std::uint32_t stream;
  std::uint32_t correlation;
  std::uint64_t bytes;
  std::uint8_t copy_kind;  ///< CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, 8 DtoD, ...)
  std::uint8_t src_kind;   ///< CUpti_ActivityMemoryKind
  std::uint8_t dst_kind;
  std::uint8_t flags;   ///< CUpti_ActivityFlag bits (1: async)
  std::uint32_t cause;  ///< migrations: CUpti_ActivityUnifiedMemoryMigrationCause; copies: 0
};
static_assert(sizeof(gpu_memcpy) == 48);

/// @brief gpu_memcpy::copy_kind of unified memory migrations (ENUM_CUDA_MEMCPY_OPER's ids:
/// "Unified Host-to-Device", "Unified Device-to-Host", "Unified Device-to-Device").
enum class migration_kind : std::uint8_t { htod = 11, dtoh = 12, dtod = 13 };

/// @brief Whether a gpu_memcpy is a unified memory migration.
[[nodiscard]] constexpr bool is_migration(std::uint8_t copy_kind) noexcept {
  return copy_kind >= static_cast<std::uint8_t>(migration_kind::htod) &&
         copy_kind <= static_cast<std::uint8_t>(migration_kind::dtod);
}

/// @brief gpu_memcpy::stream of migrations: CUPTI gives no valid stream for them, so they have
/// a track of their own per device ("Unified memory").
inline constexpr std::uint32_t migration_stream = 0xFFFFFFFEu;

/// @brief A memset (CUPTI_ACTIVITY_KIND_MEMSET).
struct gpu_memset {
  std::int64_t start;
  std::int64_t end;
  std::uint32_t device;
  std::uint32_t context;
  std::uint32_t stream;
  std::uint32_t correlation;
  std::uint64_t bytes;
  std::uint32_t value;
  std::uint16_t mem_kind;  ///< CUpti_ActivityMemoryKind
  std::uint16_t reserved;
};
static_assert(sizeof(gpu_memset) == 48);

/// @brief A synchronisation (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION).
struct gpu_sync {
  std::int64_t start;
  std::int64_t end;
  std::uint32_t context;
  std::uint32_t
      stream;  ///< 0xFFFFFFFF when not a stream sync (CUPTI_SYNCHRONIZATION_INVALID_VALUE)
  std::uint32_t correlation;
  std::uint32_t type;  ///< CUpti_ActivitySynchronizationType
  std::uint32_t event;
  std::uint32_t reserved;
};
static_assert(sizeof(gpu_sync) == 40);

/// @brief Which API a gpu_api record is from.
enum class gpu_api_kind : std::uint32_t { runtime = 0, driver = 1 };

/// @brief A CUDA runtime or driver API call (CUPTI_ACTIVITY_KIND_RUNTIME / DRIVER).
struct gpu_api {
  std::int64_t start;
  std::int64_t end;
  std::uint32_t kind;  ///< gpu_api_kind
  std::uint32_t cbid;  ///< CUPTI callback id
  std::uint32_t correlation;
  std::uint32_t pid;
  std::uint64_t tid;   ///< gettid of the calling thread
  std::uint32_t name;  ///< gpu_string id of the function name ("cudaMemcpyAsync")
  std::int32_t return_value;
};
static_assert(sizeof(gpu_api) == 48);

/// @brief Keys of `info` records (values are decimal or text).
///   cupti=loaded|unavailable:<reason>|off  what became of CUPTI in this process
///   dropped=<n>        records CUPTI dropped (buffers full), added up over the process
///   device=<id>:<name> a device that ran activity
///   gpu_work=none      the process ended having seen no GPU activity although CUPTI was loaded
///   unified_memory=on|unavailable:<reason>  whether unified memory migrations are recorded
///   gpu_sample=<on ns>/<period ns>  --cuda-sample: GPU activity is recorded in periods only
///   gpu_detail=on:<ns>:<sample|raise>:<switch ns> | off:<ns>:<switch ns>  a period's edge
///                      (CLOCK_MONOTONIC ns, as CUPTI's records; inprocess/cuda/cupti.cpp)
inline constexpr char gpu_info_keys[] = "cupti dropped device gpu_work unified_memory";

/// @brief A CUDA API function's name without CUPTI's version suffix ("cudaMemcpyAsync_v3020" ->
/// "cudaMemcpyAsync"): how the JSON output shows it. API records keep CUPTI's full name, as
/// Nsight Systems' export does (its reports strip some suffixes themselves).
[[nodiscard]] inline std::string_view strip_version_suffix(std::string_view name) noexcept {
  std::size_t const at = name.rfind("_v");
  if (at == std::string_view::npos || at == 0 || at + 2 == name.size()) {
    return name;
  }
  for (std::size_t i = at + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') {
      return name;
    }
  }
  return name.substr(0, at);
}

}  // namespace nvtxpp::recording
