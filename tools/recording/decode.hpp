/// @file
/// @brief Turns recorded per-thread streams into nvtxpp::testing events (shared by both front
/// ends).
#pragma once

#include <nvtxpp/testing/event.hpp>

#include "format.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nvtxpp::recording {

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

/// @brief Maps raw ticks to CLOCK_MONOTONIC nanoseconds (linear, from two calibration points).
struct clock_map {
  std::int64_t ticks0 = 0;
  std::int64_t ns0 = 0;
  double ns_per_tick = 1.0;
  /// @brief Builds the map from two calibration points (identity slope if they coincide).
  static clock_map from(std::int64_t t0, std::int64_t n0, std::int64_t t1,
                        std::int64_t n1) noexcept;
  [[nodiscard]] std::int64_t to_ns(std::int64_t ticks) const noexcept;
};

/// @brief One contiguous run of a thread's stream.
struct stream_piece {
  unsigned char const* data;
  std::size_t size;
  std::uint32_t seq = 0;  ///< capture: sequence number of the block it comes from
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
};

/// @brief Calls `fn(raw_event const&)` for each record of a thread's stream pieces, in order.
/// A malformed record ends its piece with a warning.
template <class F>
void for_each_record(std::vector<stream_piece> const& pieces, std::uint64_t tid, F&& fn,
                     std::vector<std::string>& warnings);

/// @brief Decodes one record at `p` (at most `end`) into `out`; returns the byte after it, or
/// nullptr (with `why` set) when the record is malformed.
unsigned char const* parse_record(unsigned char const* p, unsigned char const* end, raw_event& out,
                                  char const*& why) noexcept;

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
  for (auto const& piece : pieces) {
    unsigned char const* p = piece.data;
    unsigned char const* const end = piece.data + piece.size;
    raw_event r;
    while (p < end) {
      char const* why = nullptr;
      p = parse_record(p, end, r, why);
      if (p == nullptr) {
        warnings.push_back("thread " + std::to_string(tid) + ": malformed record (" + why +
                           "); rest of the block skipped");
        break;
      }
      fn(static_cast<raw_event const&>(r));
    }
  }
}

}  // namespace nvtxpp::recording
