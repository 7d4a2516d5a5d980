/// @file
/// @brief The recorder core's binary formats: the per-thread event stream and the capture file.
///
/// Per-thread stream: records packed back to back, no alignment (read and written with memcpy).
/// Small numbers are LEB128 varints (7 bits a byte, low bits first, high bit: more follow; at
/// most 10 bytes; a writer may use more bytes than the value needs):
///   u8 head: bits 0-4 type (event_type), bit 5 `ext`, bits 6-7 message_kind
///   varint tick delta: zigzag(ticks - previous record's ticks); the first record of a block
///                      counts from 0, so every block decodes on its own
///   varint domain index
///   [u8 flags, u8 payload_type (0 none, 1..6 as NVTX)]   when ext (else both 0)
///   [u32 color]      when flags & has_color
///   [u32 category]   when flags & has_category (name_resource: the resource kind)
///   [u64 payload]    when payload_type != 0
///   [u64 id]         when flags & has_id (range id, handle, named thread id)
///   [varint n, n bytes] when message_kind == inline_text (UTF-8, n <= max_message_bytes)
///   [varint string id]  when message_kind == string_id
///   [u32 n, n bytes] when flags & has_blob (n <= max_blob_bytes): structured payloads of the
///                    event (payload_item's, back to back), or a counter sample's value bytes
/// A push of a short text costs 4 + length bytes, a pop 3, where a fixed 16-byte header made
/// them 18 + length and 16: fewer bytes a range is less memory traffic on the hot path (see
/// docs/capture-cost.md, "Recording a range").
///
/// Counter samples (event_type::counter_sample) carry the counter id in `id` and a
/// counter_sample_kind in `category`; Int64/Float64 values in `payload` (payload_type 2/3),
/// value bytes (nvtxCounterSample, one batch element) in the blob.
///
/// Memory calls (event_type::memory, NVTX's memory extension) carry the heap's name as their
/// message (heap_register) and the call in the blob: a memory_head, then `stored` elements of
/// memory_element_bytes each plus the element's name bytes.
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

/// @brief Fixed head of a memory record's blob (see the file comment). Written and read with
/// memcpy; the fields are those of testing::memory_call.
struct memory_head {
  std::uint32_t op = 0;  ///< testing::memory_op
  std::uint32_t memory_type = 0;
  std::uint64_t heap = 0;
  std::uint64_t heap_base = 0;
  std::uint64_t heap_bytes = 0;
  std::uint64_t permissions = 0;
  std::uint64_t stream = 0;
  std::uint64_t count = 0;  ///< regions the call passed
  std::uint32_t usage = 0;
  std::uint32_t flags = 0;
  std::uint32_t scope = 0;
  std::int32_t device = 0;
  std::uint32_t by_handle = 0;
  std::uint32_t stored = 0;  ///< elements that follow (fewer than `count` when cut)
};
static_assert(sizeof(memory_head) == 80);

/// @brief One region of a memory record: u64 pointer, u64 handle, u64 bytes, u32 flags,
/// u32 category, u16 name length; then the name's bytes.
inline constexpr std::uint32_t memory_element_bytes = 8 + 8 + 8 + 4 + 4 + 2;

/// @brief Longest region name a memory record keeps (longer ones are cut).
inline constexpr std::uint32_t max_memory_name = 1024;

/// @brief How a record carries its message.
enum class message_kind : std::uint8_t { none = 0, inline_text = 1, string_id = 2 };

/// @brief Bits of a stream record's head byte.
namespace head {
inline constexpr std::uint8_t type_mask = 0x1F;
inline constexpr std::uint8_t ext = 0x20;
inline constexpr unsigned message_shift = 6;
}  // namespace head

/// @brief Most bytes of a varint (a 64-bit value).
inline constexpr std::uint32_t max_varint_bytes = 10;

/// @brief Most bytes of a record's head byte, tick delta and domain (all a pop has).
inline constexpr std::uint32_t max_bare_head = 1 + max_varint_bytes + 5;

/// @brief Most bytes of a record's fixed part: head, tick delta, domain, flags, payload type,
/// colour, category, payload, id.
inline constexpr std::uint32_t max_record_head = max_bare_head + 2 + 4 + 4 + 8 + 8;

/// @brief Zigzag form of a signed delta (small magnitudes, either sign, stay small).
[[nodiscard]] inline std::uint64_t zigzag(std::int64_t v) noexcept {
  return (static_cast<std::uint64_t>(v) << 1U) ^ static_cast<std::uint64_t>(v >> 63);
}
[[nodiscard]] inline std::int64_t unzigzag(std::uint64_t v) noexcept {
  return static_cast<std::int64_t>((v >> 1U) ^ (~(v & 1U) + 1U));
}

/// @brief Writes `v` as a varint at `p`; returns the byte after it.
inline unsigned char* put_varint(unsigned char* p, std::uint64_t v) noexcept {
  while (v >= 0x80U) {
    *p++ = static_cast<unsigned char>(v | 0x80U);
    v >>= 7U;
  }
  *p++ = static_cast<unsigned char>(v);
  return p;
}

/// @brief Reads a varint at `p` (before `end`); returns the byte after it, or nullptr when it
/// runs past `end` or past max_varint_bytes.
[[nodiscard]] inline unsigned char const* get_varint(unsigned char const* p,
                                                     unsigned char const* end,
                                                     std::uint64_t& v) noexcept {
  // One or two bytes without the loop: most tick deltas and every small domain or length.
  if (end - p >= 2) {
    if (p[0] < 0x80U) {
      v = p[0];
      return p + 1;
    }
    if (p[1] < 0x80U) {
      v = (p[0] & 0x7FU) | (std::uint64_t{p[1]} << 7U);
      return p + 2;
    }
  }
  v = 0;
  for (unsigned shift = 0; shift < 7U * max_varint_bytes && p < end; shift += 7U) {
    unsigned char const b = *p++;
    v |= static_cast<std::uint64_t>(b & 0x7FU) << shift;
    if ((b & 0x80U) == 0) {
      return p;
    }
  }
  return nullptr;
}

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
  chunk = 1,          ///< u64 tid, u32 thread index, u32 block sequence number, u32 offset of
                      ///< the bytes in their block, stream bytes
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
  char magic[8];          ///< "NVTXPPC" and the format's generation digit (file_magic)
  std::uint32_t version;  ///< file_version
  std::uint32_t pid;      ///< process id
  std::uint32_t ppid;     ///< parent process id
  std::uint32_t tsc;      ///< 1 when ticks are TSC cycles, 0 when they are nanoseconds
  std::int64_t ticks0;    ///< calibration point at start: ticks ...
  std::int64_t ns0;       ///< ... and CLOCK_MONOTONIC nanoseconds at the same moment
  double ns_per_tick;     ///< estimated at start (refined from later `clock` records)
};
static_assert(sizeof(file_header) == 48);

/// Generation 2: compact stream records (varints, tick deltas) and chunk offsets. A file of
/// another generation is refused with a message naming both.
inline constexpr char file_magic[8] = {'N', 'V', 'T', 'X', 'P', 'P', 'C', '2'};
inline constexpr std::uint32_t file_version = 2;
/// Bytes of a chunk record's head (tid, thread index, sequence number, offset).
inline constexpr std::uint32_t chunk_head_bytes = 20;

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
