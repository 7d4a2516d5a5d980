/// @file
/// @brief The event model shared by nvtxpp::testing (in-process recorder) and nvtxpp-capture.
///
/// Every NVTX call a tool receives becomes one `event`. Both front ends decode the same recorded
/// stream into these structs, and `pair_ranges` turns push/pop and start/end events into
/// completed ranges.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace nvtxpp::testing {

/// @brief What kind of NVTX call produced an event.
enum class event_type : std::uint8_t {
  push,              ///< nvtxRangePush*, nvtxDomainRangePushEx
  pop,               ///< nvtxRangePop, nvtxDomainRangePop
  start,             ///< nvtxRangeStart*, nvtxDomainRangeStartEx
  end,               ///< nvtxRangeEnd, nvtxDomainRangeEnd
  mark,              ///< nvtxMark*, nvtxDomainMarkEx
  name_thread,       ///< nvtxNameOsThread*: `handle` is the named thread's id, `message` the name
  name_category,     ///< nvtx[Domain]NameCategory*: `category` and `message`
  name_resource,     ///< CUDA/driver/generic resource naming: `resource`, `handle`, `message`
  domain_create,     ///< nvtxDomainCreate*: `domain` and `message` hold the name
  domain_destroy,    ///< nvtxDomainDestroy
  resource_destroy,  ///< nvtxDomainResourceDestroy: `handle` is the resource identifier
  sync_create,       ///< nvtxDomainSyncUserCreate: `handle` is the sync object, `message` its name
  sync_destroy,      ///< nvtxDomainSyncUserDestroy
  sync_acquire_start,    ///< nvtxDomainSyncUserAcquireStart
  sync_acquire_failed,   ///< nvtxDomainSyncUserAcquireFailed
  sync_acquire_success,  ///< nvtxDomainSyncUserAcquireSuccess
  sync_releasing,        ///< nvtxDomainSyncUserReleasing
  counter_sample,        ///< nvtxCounterSample*, nvtxCounterBatchSubmit (one event per sample):
                         ///< `counter` holds the sample, `message` the counter's name
  memory,  ///< a call of NVTX's memory extension (nvtxMem*): `memory` holds it; `message` the
           ///< heap's name (heap_register)
};

/// @brief Which call of NVTX's memory extension an event_type::memory event is.
enum class memory_op : std::uint8_t {
  heap_register,             ///< nvtxMemHeapRegister: heap, heap_base, heap_bytes, usage, type
  heap_unregister,           ///< nvtxMemHeapUnregister: heap
  heap_reset,                ///< nvtxMemHeapReset: heap
  regions_register,          ///< nvtxMemRegionsRegister: heap, regions (pointer, bytes, handle)
  regions_resize,            ///< nvtxMemRegionsResize: regions (pointer, bytes)
  regions_unregister,        ///< nvtxMemRegionsUnregister: regions (pointer or handle)
  regions_name,              ///< nvtxMemRegionsName: regions (pointer or handle, name)
  permissions_assign,        ///< nvtxMemPermissionsAssign: permissions, regions (ref, flags)
  permissions_create,        ///< nvtxMemPermissionsCreate: permissions (returned), flags
  permissions_destroy,       ///< nvtxMemPermissionsDestroy: permissions
  permissions_reset,         ///< nvtxMemPermissionsReset: permissions
  permissions_bind,          ///< nvtxMemPermissionsBind: permissions, scope, flags
  permissions_unbind,        ///< nvtxMemPermissionsUnbind: scope
  cuda_process_permissions,  ///< nvtxMemCudaGetProcessWidePermissions: permissions (returned)
  cuda_device_permissions,   ///< nvtxMemCudaGetDeviceWidePermissions: device, permissions
  cuda_set_peer_access,      ///< nvtxMemCudaSetPeerAccess: permissions, device, flags
  cuda_mark_initialized,     ///< nvtxMemCudaMarkInitialized: stream, flags (per-thread
                             ///< stream), regions (pointer, bytes)
};

/// @brief One region as a memory call named it.
struct memory_region {
  std::uint64_t pointer = 0;   ///< its address (descriptors, and references by pointer)
  std::uint64_t handle = 0;    ///< references by handle; regions_register: the handle returned
  std::uint64_t bytes = 0;     ///< register, resize, mark_initialized: its size
  std::uint32_t flags = 0;     ///< permissions_assign: NVTX_MEM_PERMISSIONS_REGION_FLAGS_*
  std::uint32_t category = 0;  ///< regions_name: the name's category
  std::string name;            ///< regions_name: the name given
};

/// @brief One call of NVTX's memory extension, as a tool received it (event_type::memory).
struct memory_call {
  memory_op op = memory_op::heap_register;  ///< which call
  std::uint64_t heap = 0;                   ///< the heap handle (returned by heap_register)
  std::uint64_t heap_base = 0;              ///< heap_register: first byte of the heap
  std::uint64_t heap_bytes = 0;             ///< heap_register: its size
  std::uint32_t usage = 0;                  ///< heap_register: NVTX_MEM_HEAP_USAGE_TYPE_*
  std::uint32_t memory_type = 0;            ///< heap_register, regions_*: NVTX_MEM_TYPE_*
  bool by_handle = false;  ///< unregister, name, assign: regions referenced by handle, not pointer
  std::vector<memory_region> regions;  ///< the call's regions, in order
  std::uint64_t region_count = 0;      ///< regions the call passed (more than `regions` when cut)
  std::uint64_t permissions = 0;       ///< permissions handle (0: NVTX's process-wide object)
  std::uint32_t flags = 0;             ///< create, bind, set_peer_access: the call's flags
  std::uint32_t scope = 0;             ///< bind, unbind: NVTX_MEM_PERMISSIONS_BIND_SCOPE_*
  std::int32_t device = 0;             ///< cuda_device_permissions, cuda_set_peer_access
  std::uint64_t stream = 0;            ///< cuda_mark_initialized: the cudaStream_t
};

/// @brief The payload attached to an event: one of NVTX's six scalar types, or none.
///
/// Alternatives in NVTX order: u64, i64, double, u32, i32, float.
using payload_value = std::variant<std::monostate, std::uint64_t, std::int64_t, double,
                                   std::uint32_t, std::int32_t, float>;

/// @brief A value read from a structured payload or a counter sample: signed integers as
/// int64, unsigned ones as uint64, reals as double, character arrays as UTF-8 text (up to the
/// first NUL), anything else undecodable as monostate.
using field_value = std::variant<std::monostate, std::int64_t, std::uint64_t, double, std::string>;

/// @brief One entry of a registered payload schema, with its value in one payload.
struct payload_field {
  std::string name;                   ///< the schema entry's name ("" if none was given)
  std::uint64_t type = 0;             ///< NVTX_PAYLOAD_ENTRY_TYPE_*, or a registered enum/schema id
  std::string type_name;              ///< "i8".."i64", "u8".."u64", "f32", "f64", "char[]",
                                      ///< "enum" (registered enum), "bytes" (raw), ...
  std::uint64_t offset = 0;           ///< byte offset in the payload (as registered or computed)
  std::uint64_t array_length = 0;     ///< fixed-size arrays and strings: their length; else 0
  field_value value;                  ///< the value; monostate for arrays of numbers (see elements)
  std::vector<field_value> elements;  ///< fixed-size arrays of numbers: one value each
  std::string enum_name;  ///< registered enums: the name of `value` ("" if none matches)
};

/// @brief A structured payload (NVTX_PAYLOAD_TYPE_EXT or an nvtx*Payload call) as recorded.
struct structured_payload {
  std::uint64_t schema_id = 0;        ///< nvtxPayloadData_t::schemaId
  std::string schema_name;            ///< the registered schema's name ("" when unknown)
  std::vector<unsigned char> bytes;   ///< the payload bytes recorded (possibly truncated)
  std::vector<payload_field> fields;  ///< decoded by the schema; empty when not `decoded`
  bool decoded = false;  ///< the schema was registered in the event's domain and the recorded
                         ///< size matched it (else `bytes` only, and a warning)
};

/// @brief One counter sample (event_type::counter_sample), with the counter's registration.
struct counter_sample {
  std::uint64_t id = 0;               ///< the counter id the tool gave (or the static id)
  std::string name;                   ///< nvtxCounterAttr_t::name
  std::string description;            ///< "" if none
  std::string unit;                   ///< counter semantics' unit, "" if none
  std::uint64_t scope = 0;            ///< NVTX scope id (NVTX_SCOPE_*), 0 for none
  std::uint64_t value_type = 0;       ///< nvtxCounterAttr_t::schemaId: an entry type or a schema id
  std::string type_name;              ///< "i64", "f64", "u8", ... or the schema's name
  field_value value;                  ///< the value; monostate without one, or for a counter group
  std::vector<payload_field> fields;  ///< a counter group (schema): one value per entry
  std::optional<std::uint8_t> no_value;  ///< nvtxCounterSampleNoValue's reason
  bool batch = false;                    ///< came from nvtxCounterBatchSubmit
  field_value limit_min, limit_max;      ///< semantics' limits, monostate when none
  bool registered = true;  ///< false: sampled with an id never registered (value not decoded)
};

/// @brief One NVTX call as a tool received it.
struct event {
  event_type type = event_type::mark;  ///< what kind of call
  std::string domain;                  ///< domain name; "" for the global (default) domain
  std::string message;                 ///< UTF-8 text; registered strings resolved; "" if none
  std::optional<std::uint32_t> color;  ///< ARGB when the attributes carried an ARGB colour
  std::uint32_t category = 0;          ///< 0 = none
  std::string category_name;           ///< name of `category` in `domain` at that time, or ""
  payload_value payload;               ///< monostate when none
  std::uint64_t thread_id = 0;         ///< OS thread id (gettid) of the calling thread
  std::string thread_name;             ///< name of the calling thread at that time, or ""
  std::uint64_t range_id = 0;          ///< start/end pairing id; 0 for other events
  int depth = 0;  ///< push: depth on this thread and domain before the push (outermost = 0);
                  ///< pop: depth of the matching push, -1 when there was none
  std::int64_t time_ns = 0;   ///< CLOCK_MONOTONIC nanoseconds
  bool registered = false;    ///< the message was passed as a registered-string handle
  bool truncated = false;     ///< the message was longer than `max_message_bytes` and was cut
  bool null_message = false;  ///< the caller passed a null message; `message` is "(null)"
  std::string resource;       ///< name_resource: "cuda_device", "cuda_stream", "cuda_event",
                              ///< "cu_device", "cu_context", "cu_stream", "cu_event",
                              ///< "generic_pointer", "generic_handle", "os_thread", "posix_thread"
  std::uint64_t handle = 0;   ///< name_resource/name_thread/resource_destroy/sync_*: the object
  std::uint32_t process_id = 0;              ///< OS process id of the recording process
  std::vector<structured_payload> payloads;  ///< structured payloads attached, in call order
  counter_sample counter;                    ///< event_type::counter_sample only
  memory_call memory;                        ///< event_type::memory only
};

/// @brief Longest message text kept, in bytes; longer messages are truncated to this many bytes
/// (at a UTF-8 character boundary) and flagged `truncated`.
inline constexpr std::size_t max_message_bytes = 4096;

/// @brief A push/pop or start/end pair joined into one range.
struct completed_range {
  std::string domain;                  ///< "" for the global domain
  std::string name;                    ///< message of the push/start
  std::optional<std::uint32_t> color;  ///< ARGB colour of the push/start, if any
  std::uint32_t category = 0;          ///< category id of the push/start
  std::string category_name;           ///< its name, or ""
  payload_value payload;               ///< payload of the push/start
  std::uint64_t thread_id = 0;         ///< thread that pushed/started it
  std::uint64_t end_thread_id = 0;     ///< thread that popped/ended it (start/end may differ)
  std::string thread_name;             ///< name of `thread_id` when the range began
  std::uint32_t process_id = 0;        ///< process that recorded it
  std::int64_t start_ns = 0;           ///< begin time (CLOCK_MONOTONIC)
  std::int64_t end_ns = 0;             ///< end time; the end of the recording if `unterminated`
  int depth = 0;                       ///< push/pop nesting depth (0 = outermost); 0 for start/end
  bool push_pop = true;                ///< true: push/pop; false: start/end
  bool unterminated = false;   ///< still open at the end; closed at the recording's end time
  std::uint64_t range_id = 0;  ///< start/end id, 0 for push/pop
  std::vector<structured_payload> payloads;  ///< structured payloads of the push/start
};

/// @brief Pairs push/pop (per thread and domain, innermost first) and start/end (by id) events.
/// @param events events in time order, as `recorder::events()` returns them
/// @param end_ns time at which ranges still open are closed (and marked `unterminated`)
/// @param warnings when not null, receives one line per unbalanced pop or unknown end id
/// @return completed ranges ordered by start time
[[nodiscard]] std::vector<completed_range> pair_ranges(
    std::vector<event> const& events, std::int64_t end_ns,
    std::vector<std::string>* warnings = nullptr);

/// @brief Name of a memory call ("heap_register", ...).
[[nodiscard]] char const* to_string(memory_op op) noexcept;

/// @brief Name of an event type ("push", "name_thread", ...).
[[nodiscard]] char const* to_string(event_type type) noexcept;

/// @brief One readable line describing an event (type, domain, message, attributes, thread).
[[nodiscard]] std::string to_string(event const& e);

}  // namespace nvtxpp::testing
