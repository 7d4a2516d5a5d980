/// @file
/// @brief Turns recorded per-thread streams into nvtxpp::testing events (shared by both front
/// ends).
#pragma once

#include <nvtxpp/testing/event.hpp>

#include "../format.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nvtxpp::recording {

struct name_tables;

/// @brief One entry of a registered payload schema (nvtxPayloadSchemaEntry_t, texts copied).
struct schema_entry_def {
  std::uint64_t flags = 0;
  std::uint64_t type = 0;  ///< NVTX_PAYLOAD_ENTRY_TYPE_* or a schema/enum id
  std::string name;
  std::string description;
  std::uint64_t array_or_union = 0;  ///< arrayOrUnionDetail as registered
  std::uint64_t offset = 0;          ///< as registered, or computed (natural alignment)
};

/// @brief One value of a registered enum (nvtxPayloadEnum_t).
struct enum_value_def {
  std::string name;
  std::uint64_t value = 0;
  bool is_flag = false;
};

/// @brief A registered payload schema (nvtxPayloadSchemaRegister) or enum
/// (nvtxPayloadEnumRegister), keyed by (domain, id).
struct schema_def {
  std::uint32_t domain = 0;
  std::uint64_t id = 0;
  bool is_enum = false;
  std::string name;
  std::uint64_t type = 0;         ///< NVTX_PAYLOAD_SCHEMA_TYPE_* (schemas)
  std::uint64_t flags = 0;        ///< NVTX_PAYLOAD_SCHEMA_FLAG_* (schemas)
  std::uint64_t static_size = 0;  ///< payloadStaticSize as given, else computed; enums: size
  std::uint64_t pack_align = 0;   ///< packAlign as given (0: natural alignment)
  std::vector<schema_entry_def> entries;  ///< schemas
  std::vector<enum_value_def> values;     ///< enums
};

/// @brief A registered counter (nvtxCounterRegister), keyed by (domain, id).
struct counter_def {
  std::uint32_t domain = 0;
  std::uint64_t id = 0;
  std::string name;
  std::string description;
  std::string unit;          ///< counter semantics' unit
  std::uint64_t schema = 0;  ///< nvtxCounterAttr_t::schemaId
  std::uint64_t scope = 0;   ///< nvtxCounterAttr_t::scopeId
  std::uint64_t semantic_flags = 0;
  std::int64_t limit_type = 0;  ///< NVTX_COUNTER_LIMIT_*
  std::uint64_t limit_min = 0;  ///< bit patterns of the limits union
  std::uint64_t limit_max = 0;
};

/// @brief Most entries (schema entries, enum values) a registration keeps.
inline constexpr std::size_t max_schema_entries = 1024;

/// @brief Bytes of a counter_def (file record body). Texts are capped at max_message_bytes.
[[nodiscard]] std::string encode_counter(counter_def const& c);
/// @brief Reads a counter_def; false (and `out` unspecified) when the bytes are malformed.
[[nodiscard]] bool decode_counter_def(unsigned char const* p, std::size_t n, counter_def& out);
/// @brief Bytes of a schema_def (file record body).
[[nodiscard]] std::string encode_schema(schema_def const& s);
/// @brief Reads a schema_def; false when the bytes are malformed or exceed the limits.
[[nodiscard]] bool decode_schema_def(unsigned char const* p, std::size_t n, schema_def& out);

/// @brief Size and alignment of a predefined entry type on this platform (0, 0 if unknown).
struct type_layout {
  std::uint32_t size = 0;
  std::uint32_t align = 0;
};
[[nodiscard]] type_layout predefined_layout(std::uint64_t type) noexcept;

/// @brief Bytes and alignment of one entry of `s` (arrays and strings included; registered
/// schemas/enums of the same domain looked up in `names`); {0, 0} when not knowable.
[[nodiscard]] type_layout entry_layout(schema_entry_def const& e, std::uint32_t domain,
                                       name_tables const& names) noexcept;

/// @brief Fills the offsets NVTX leaves to the tool (entries after the first with offset 0:
/// natural alignment, capped by packAlign) and, for static schemas without one, the size.
void resolve_layout(schema_def& s, name_tables const& names) noexcept;

/// @brief Decodes `n` bytes at `p` by schema `s` (fields that fit in the bytes).
[[nodiscard]] std::vector<testing::payload_field> decode_fields(schema_def const& s,
                                                                unsigned char const* p,
                                                                std::size_t n,
                                                                name_tables const& names);

/// @brief Names that streams refer to: interned strings, domains, and the history of category
/// and thread names (ticks at which each name was given).
struct name_tables {
  std::vector<std::string> strings{std::string{}};  ///< string id -> text; id 0 is ""
  std::vector<std::string> domains{std::string{}};  ///< domain index -> name; 0 is global
  /// (domain, category) -> (ticks, string id), in call order
  std::map<std::pair<std::uint32_t, std::uint32_t>,
           std::vector<std::pair<std::int64_t, std::uint32_t>>>
      category_names;
  /// thread id -> (ticks, string id), in call order
  std::map<std::uint64_t, std::vector<std::pair<std::int64_t, std::uint32_t>>> thread_names;
  /// (domain, id) -> registered payload schema or enum
  std::map<std::pair<std::uint32_t, std::uint64_t>, schema_def> schemas;
  /// (domain, id) -> registered counter
  std::map<std::pair<std::uint32_t, std::uint64_t>, counter_def> counters;

  /// @brief The schema or enum `id` of `domain`, or nullptr.
  [[nodiscard]] schema_def const* schema_at(std::uint32_t domain, std::uint64_t id) const noexcept;

  /// @brief Text of a string id; "" for an unknown id.
  [[nodiscard]] std::string const& string_at(std::uint32_t id) const noexcept;
  /// @brief Domain name; "" for an unknown index.
  [[nodiscard]] std::string const& domain_at(std::uint32_t index) const noexcept;
  /// @brief Name given to a category last at or before `ticks`, else "".
  [[nodiscard]] std::string const& category_at(std::uint32_t domain, std::uint32_t category,
                                               std::int64_t ticks) const noexcept;
  /// @brief Name given to a thread last at or before `ticks`, else "".
  [[nodiscard]] std::string const& thread_at(std::uint64_t tid, std::int64_t ticks) const noexcept;
};

/// @brief How long the start-up estimate of the tick rate takes (the first NVTX call waits).
inline constexpr std::int64_t start_estimate_ns = 200'000;
/// @brief A calibration point this far (or farther) from the start point gives the tick rate
/// that decoders use instead of the start-up estimate (a point is good to a few tens of ns:
/// about 1e-5 of a 2 ms baseline).
inline constexpr std::int64_t min_baseline_ns = 2'000'000;

/// @brief Maps raw ticks to CLOCK_MONOTONIC nanoseconds (linear, from two calibration points).
struct clock_map {
  std::int64_t ticks0 = 0;
  std::int64_t ns0 = 0;
  double ns_per_tick = 1.0;
  /// @brief Builds the map from two calibration points (identity slope if they coincide).
  static clock_map from(std::int64_t t0, std::int64_t n0, std::int64_t t1,
                        std::int64_t n1) noexcept;
  /// (Inline: a live reader maps every event it reads.)
  [[nodiscard]] std::int64_t to_ns(std::int64_t ticks) const noexcept {
    // std::llround(d) in place (a library call was a tenth of a live reader's time at two
    // million events a second). For d in [0, 2^52), a real recording's every event after its
    // start, in integers on d's bits (d = m / 2^shift): exact, and without the conversions back
    // and forth, whose latency was most of a live reader's mapping.
    std::int64_t dt = 0;
    std::uint64_t bits = 0;
    if (!__builtin_sub_overflow(ticks, ticks0, &dt)) {
      double const d = static_cast<double>(dt) * ns_per_tick;
      std::memcpy(&bits, &d, sizeof bits);
    } else {
      bits = ~std::uint64_t{0};  // far_to_ns's
    }
    std::uint64_t const biased = bits >> 52U;  // the exponent; >= 2048 when d < 0
    std::int64_t out = 0;
    if (biased >= 1022 && biased < 1075) {  // d in [0.5, 2^52)
      std::uint64_t const m = (bits & ((std::uint64_t{1} << 52U) - 1)) | (std::uint64_t{1} << 52U);
      auto const shift = static_cast<unsigned>(1075 - biased);  // 1..53
      auto const delta =
          static_cast<std::int64_t>((m + (std::uint64_t{1} << (shift - 1))) >> shift);
      if (!__builtin_add_overflow(ns0, delta, &out)) {
        return out;
      }
    } else if (biased < 1022) {  // d in [0, 0.5): 0
      return ns0;
    }
    return far_to_ns(difference(ticks, ticks0) * ns_per_tick);
  }
  /// @brief to_ns of a product d out of [0, 2^52): negative, huge, NaN (damaged recordings
  /// saturate, never overflow).
  [[nodiscard]] std::int64_t far_to_ns(double d) const noexcept {
    constexpr double limit = 9.2e18;  // just inside int64
    if (!(d > -limit)) d = -limit;    // NaN too
    if (d > limit) d = limit;
    // Halves away from zero, exactly: d - trunc(d) is exact for every double.
    auto delta = static_cast<std::int64_t>(d);
    double const frac = d - static_cast<double>(delta);
    delta += static_cast<std::int64_t>(frac >= 0.5) - static_cast<std::int64_t>(frac <= -0.5);
    std::int64_t out = 0;
    if (__builtin_add_overflow(ns0, delta, &out)) {
      return delta > 0 ? INT64_MAX : INT64_MIN;
    }
    return out;
  }
  /// @brief a - b as a double, exact where the integer difference is (any int64 in: damaged
  /// files).
  [[nodiscard]] static double difference(std::int64_t a, std::int64_t b) noexcept {
    std::int64_t d = 0;
    return __builtin_sub_overflow(a, b, &d) ? static_cast<double>(a) - static_cast<double>(b)
                                            : static_cast<double>(d);
  }
};

/// @brief One contiguous run of a thread's stream: bytes [offset, offset + size) of one block.
/// Records count their ticks from the record before them in the block, so a piece decodes
/// only when it starts its block (offset 0) or continues the piece before it.
struct stream_piece {
  unsigned char const* data;
  std::size_t size;
  std::uint32_t seq = 0;     ///< capture: sequence number of the block it comes from
  std::uint32_t offset = 0;  ///< bytes of the block before `data`
  std::uint32_t skip = 0;    ///< leading bytes whose records are read for their time only
};

/// @brief One stream record, undecoded names (string ids, domain indices) left as they are.
struct raw_event {
  testing::event_type type = testing::event_type::mark;
  std::uint8_t flags = 0;          ///< format.hpp `flag` bits
  std::uint32_t domain = 0;        ///< domain index
  std::int64_t ticks = 0;          ///< raw timestamp
  std::uint32_t color = 0;         ///< valid when flags & has_color
  std::uint32_t category = 0;      ///< category id (name_resource: resource_kind)
  std::uint8_t payload_type = 0;   ///< 0 none, 1..6 as NVTX
  std::uint64_t payload_bits = 0;  ///< payload, bit pattern
  std::uint64_t id = 0;            ///< range id or handle
  message_kind message = message_kind::none;
  std::string_view text;        ///< message_kind::inline_text
  std::uint32_t string_id = 0;  ///< message_kind::string_id
  std::string_view blob;        ///< flags & has_blob: payload items or counter value bytes
};

/// @brief Decodes the structured payloads of a record's blob (payload items) by the schemas
/// registered in `domain`. A payload whose schema is unknown, whose size disagrees with the
/// schema's, or that was cut, keeps its bytes undecoded, and a line goes to `warnings`.
[[nodiscard]] std::vector<testing::structured_payload> decode_payloads(
    std::string_view blob, std::uint32_t domain, name_tables const& names,
    std::vector<std::string>& warnings);

/// @brief Decodes a counter_sample record by the counter's registration (unregistered ids
/// give `registered = false` and a warning).
[[nodiscard]] testing::counter_sample decode_counter_sample(raw_event const& r,
                                                            name_tables const& names,
                                                            std::vector<std::string>& warnings);

/// @brief Decodes a memory record (event_type::memory) into @p out. False, with a warning, when
/// its blob is malformed; a call whose regions were cut decodes with a warning.
[[nodiscard]] bool decode_memory_call(raw_event const& r, testing::memory_call& out,
                                      std::vector<std::string>& warnings);

/// @brief Short name of a predefined entry type ("i32", "f64", "char", ...; "" if not one).
[[nodiscard]] char const* entry_type_name(std::uint64_t type) noexcept;

/// @brief Calls `fn(raw_event const&)` for each record of a thread's stream pieces, in order.
/// A malformed record ends its block with a warning; a piece that neither starts its block nor
/// continues the piece before it (a piece lost before it) is skipped with a warning.
template <class F>
void for_each_record(std::vector<stream_piece> const& pieces, std::uint64_t tid, F&& fn,
                     std::vector<std::string>& warnings);

/// @brief Decodes one record at `p` (at most `end`) into `out`; returns the byte after it, or
/// nullptr (with `why` set) when the record is malformed. `last_ticks` holds the previous
/// record's ticks in the block (0 before its first record) and is advanced.
/// @brief The last event type a record may hold.
inline constexpr auto last_event_type = static_cast<std::uint8_t>(testing::event_type::memory);

/// (Inline: a live reader decodes two million records a second.)
inline unsigned char const* parse_record(unsigned char const* p, unsigned char const* end,
                                         raw_event& r, std::int64_t& last_ticks,
                                         char const*& why) noexcept {
  if (p >= end) {
    why = "short header";
    return nullptr;
  }
  std::uint8_t const head_byte = *p++;
  std::uint8_t const type = head_byte & head::type_mask;
  auto const message = static_cast<std::uint8_t>(head_byte >> head::message_shift);
  std::uint64_t delta = 0;
  std::uint64_t domain = 0;
  if ((p = get_varint(p, end, delta)) == nullptr || (p = get_varint(p, end, domain)) == nullptr) {
    why = "short header";
    return nullptr;
  }
  if (domain > UINT32_MAX) {
    why = "bad domain";
    return nullptr;
  }
  struct {
    std::uint8_t flags = 0;
    std::uint8_t payload_type = 0;
  } h;
  bool const ext = (head_byte & head::ext) != 0;
  if (ext) {
    if (end - p < 2) {
      why = "short header";
      return nullptr;
    }
    h.flags = p[0];
    h.payload_type = p[1];
    p += 2;
  }
  if (type > last_event_type || h.payload_type > 6 || message > 2) {
    why = "bad type";
    return nullptr;
  }
  // (Without the ext bytes there are no fields: most pushes and every pop.)
  std::size_t const need =
      !ext ? 0U
           : ((h.flags & flag::has_color) ? 4U : 0U) + ((h.flags & flag::has_category) ? 4U : 0U) +
                 (h.payload_type ? 8U : 0U) + ((h.flags & flag::has_id) ? 8U : 0U);
  if (static_cast<std::size_t>(end - p) < need) {
    why = "short body";
    return nullptr;
  }
  last_ticks = static_cast<std::int64_t>(static_cast<std::uint64_t>(last_ticks) +
                                         static_cast<std::uint64_t>(unzigzag(delta)));
  r.type = static_cast<testing::event_type>(type);
  r.flags = h.flags;
  r.domain = static_cast<std::uint32_t>(domain);
  r.ticks = last_ticks;
  r.color = 0;
  r.category = 0;
  r.payload_type = h.payload_type;
  r.payload_bits = 0;
  r.id = 0;
  r.message = static_cast<message_kind>(message);
  r.text = {};
  r.string_id = 0;
  r.blob = {};
  if (ext) {
    if (h.flags & flag::has_color) {
      r.color = load<std::uint32_t>(p);
      p += 4;
    }
    if (h.flags & flag::has_category) {
      r.category = load<std::uint32_t>(p);
      p += 4;
    }
    if (h.payload_type) {
      r.payload_bits = load<std::uint64_t>(p);
      p += 8;
    }
    if (h.flags & flag::has_id) {
      r.id = load<std::uint64_t>(p);
      p += 8;
    }
  }
  if (r.message == message_kind::inline_text) {
    std::uint64_t n = 0;
    if ((p = get_varint(p, end, n)) == nullptr) {
      why = "short text length";
      return nullptr;
    }
    if (n > testing::max_message_bytes) {
      why = "text longer than max_message_bytes";
      return nullptr;
    }
    if (static_cast<std::uint64_t>(end - p) < n) {
      why = "short text";
      return nullptr;
    }
    r.text = std::string_view{reinterpret_cast<char const*>(p), n};
    p += n;
  } else if (r.message == message_kind::string_id) {
    std::uint64_t id = 0;
    if ((p = get_varint(p, end, id)) == nullptr) {
      why = "short string id";
      return nullptr;
    }
    if (id > UINT32_MAX) {
      why = "string id past 32 bits";
      return nullptr;
    }
    r.string_id = static_cast<std::uint32_t>(id);
  }
  if (ext && (h.flags & flag::has_blob)) {
    if (end - p < 4) {
      why = "short blob length";
      return nullptr;
    }
    auto const n = load<std::uint32_t>(p);
    p += 4;
    if (n > max_blob_bytes || static_cast<std::size_t>(end - p) < n) {
      why = "short blob";
      return nullptr;
    }
    r.blob = std::string_view{reinterpret_cast<char const*>(p), n};
    p += n;
  }
  return p;
}

/// @brief Payload of a record as the event model's variant.
[[nodiscard]] testing::payload_value payload_of(raw_event const& r) noexcept;

/// @brief Decodes the stream of one thread (pieces in call order) and appends its events.
///
/// Times are made non-decreasing within the thread, so a stable sort by time keeps each
/// thread's call order.
/// @param warnings receives one line per malformed record (the rest of the piece is skipped)
void decode_thread(std::vector<stream_piece> const& pieces, std::uint64_t tid, std::uint32_t pid,
                   name_tables const& names, clock_map const& clock,
                   std::vector<testing::event>& out, std::vector<std::string>& warnings);

/// @brief Stable-sorts events by time (events appended thread by thread, so ties keep thread
/// and call order), fills push/pop depths per thread and domain, and appends warnings for
/// unbalanced pops, null and truncated messages.
void finish_events(std::vector<testing::event>& events, std::vector<std::string>& warnings);

template <class F>
void for_each_record(std::vector<stream_piece> const& pieces, std::uint64_t tid, F&& fn,
                     std::vector<std::string>& warnings) {
  std::int64_t last_ticks = 0;
  bool in_block = false;  // the previous piece decoded to its end
  std::uint32_t block = 0;
  std::size_t block_end = 0;  // its end, as an offset in its block
  for (auto const& piece : pieces) {
    if (piece.offset == 0) {
      last_ticks = 0;
    } else if (!in_block || piece.seq != block || piece.offset != block_end) {
      warnings.push_back("thread " + std::to_string(tid) + ": block " + std::to_string(piece.seq) +
                         ": bytes before offset " + std::to_string(piece.offset) +
                         " missing; the rest of the block skipped");
      in_block = false;
      continue;
    }
    block = piece.seq;
    block_end = piece.offset + piece.size;
    in_block = true;
    unsigned char const* p = piece.data;
    unsigned char const* const end = piece.data + piece.size;
    unsigned char const* const shown = piece.data + piece.skip;
    raw_event r;
    while (p < end) {
      char const* why = nullptr;
      bool const show = p >= shown;
      p = parse_record(p, end, r, last_ticks, why);
      if (p == nullptr) {
        warnings.push_back("thread " + std::to_string(tid) + ": malformed record (" + why +
                           "); rest of the block skipped");
        in_block = false;
        break;
      }
      if (show) {
        fn(static_cast<raw_event const&>(r));
      }
    }
  }
}

}  // namespace nvtxpp::recording
