/// @file
/// @brief The recorder core's binary formats: the per-thread event stream and the capture file.
///
/// Per-thread stream: records packed back to back, no alignment (read and written with memcpy):
///   u8 type (event_type), u8 flags, u8 payload_type (0 none, 1..6 as NVTX), u8 message_kind,
///   u32 domain index, i64 ticks,
///   [u32 color]      when flags & has_color
///   [u32 category]   when flags & has_category (name_resource: the resource kind)
///   [u64 payload]    when payload_type != 0
///   [u64 id]         when flags & has_id (range id, handle, named thread id)
///   [u16 n, n bytes] when message_kind == inline_text (UTF-8, n <= max_message_bytes)
///   [u32 string id]  when message_kind == string_id
///   [u32 n, n bytes] when flags & has_blob (n <= max_blob_bytes): structured payloads of the
///                    event (payload_item's, back to back), or a counter sample's value bytes
///
/// Counter samples (event_type::counter_sample) carry the counter id in `id` and a
/// counter_sample_kind in `category`; Int64/Float64 values in `payload` (payload_type 2/3),
/// value bytes (nvtxCounterSample, one batch element) in the blob.
///
/// Capture file (one per process): a file_header, then records `u32 kind, u32 size, size bytes`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace nvtxpp::recording {

/// @brief Flags of a stream record.
namespace flag {
inline constexpr std::uint8_t has_color = 1;
inline constexpr std::uint8_t has_category = 2;
inline constexpr std::uint8_t has_id = 4;
inline constexpr std::uint8_t null_message = 8;
inline constexpr std::uint8_t truncated = 16;
inline constexpr std::uint8_t registered = 32;
inline constexpr std::uint8_t has_blob = 64;
}  // namespace flag

/// @brief Most blob bytes one record keeps; the rest of a larger payload is cut (and flagged
/// by the payload_item's stored size being less than its declared size).
inline constexpr std::uint32_t max_blob_bytes = 16 * 1024;

/// @brief Head of one structured payload in a blob: u64 schema id, u64 declared size (as the
/// caller passed it; UINT64_MAX for "tool, find out"), u32 stored size, then the stored bytes.
inline constexpr std::uint32_t payload_item_head = 20;

/// @brief What a counter_sample record holds (in its category field).
enum class counter_sample_kind : std::uint32_t {
  int64 = 1,    ///< nvtxCounterSampleInt64: payload i64
  float64 = 2,  ///< nvtxCounterSampleFloat64: payload f64
  bytes = 3,    ///< nvtxCounterSample: the blob
  batch = 4,    ///< one element of nvtxCounterBatchSubmit: the blob
  no_value = 8  ///< nvtxCounterSampleNoValue: no_value + reason (0..255)
};

/// @brief How a record carries its message.
enum class message_kind : std::uint8_t { none = 0, inline_text = 1, string_id = 2 };

/// @brief Fixed part of every stream record.
struct record_header {
  std::uint8_t type;
  std::uint8_t flags;
  std::uint8_t payload_type;
  std::uint8_t message;
  std::uint32_t domain;
  std::int64_t ticks;
};
static_assert(sizeof(record_header) == 16);

/// @brief Resource kinds of name_resource records (stored in the category field).
enum class resource_kind : std::uint32_t {
  unknown = 0,
  cuda_device,
  cuda_stream,
  cuda_event,
  cu_device,
  cu_context,
  cu_stream,
  cu_event,
  generic_pointer,
  generic_handle,
  os_thread,
  posix_thread,
};

/// @brief Name of a resource kind as the event model spells it.
[[nodiscard]] char const* resource_name(resource_kind kind) noexcept;

/// @brief Record kinds of the capture file (9..15 are gpu_format.hpp's gpu_record kinds).
enum class file_record : std::uint32_t {
  chunk = 1,          ///< u64 tid, u32 thread index, u32 block sequence number, stream bytes
  string_def = 2,     ///< u32 id, text
  domain_def = 3,     ///< u32 index, text
  category_name = 4,  ///< u32 domain, u32 category, i64 ticks, u32 string id
  thread_name = 5,    ///< u64 tid, i64 ticks, u32 string id
  clock = 6,          ///< i64 ticks, i64 ns: a calibration point
  finish = 7,         ///< i64 ticks, i64 ns, i32 how (finish_reason): the process ended
  process = 8,        ///< text: the process's command line, arguments separated by spaces
  counter_def = 32,   ///< a registered counter (decode.hpp encode_counter)
  schema_def = 33,    ///< a registered payload schema or enum (decode.hpp encode_schema)
};

/// @brief How a captured process ended, as recorded in its file.
enum class finish_reason : std::int32_t { exit = 0, signal = 1 };

/// @brief First bytes of a capture file.
struct file_header {
  char magic[8];          ///< "NVTXPPC1"
  std::uint32_t version;  ///< 1
  std::uint32_t pid;      ///< process id
  std::uint32_t ppid;     ///< parent process id
  std::uint32_t tsc;      ///< 1 when ticks are TSC cycles, 0 when they are nanoseconds
  std::int64_t ticks0;    ///< calibration point at start: ticks ...
  std::int64_t ns0;       ///< ... and CLOCK_MONOTONIC nanoseconds at the same moment
  double ns_per_tick;     ///< estimated at start (refined from later `clock` records)
};
static_assert(sizeof(file_header) == 48);

inline constexpr char file_magic[8] = {'N', 'V', 'T', 'X', 'P', 'P', 'C', '1'};

/// @brief Reads a trivially copyable value at `p` (unaligned).
template <class T>
[[nodiscard]] inline T load(unsigned char const* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

/// @brief Writes a trivially copyable value at `p` (unaligned); returns the byte after it.
template <class T>
inline unsigned char* store(unsigned char* p, T const& v) noexcept {
  std::memcpy(p, &v, sizeof(T));
  return p + sizeof(T);
}

}  // namespace nvtxpp::recording
