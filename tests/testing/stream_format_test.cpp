// Unit tests of the recorder's stream format (tools/recording/format.hpp, decode.hpp): records
// built byte by byte go into the decoder, which must read each field back, carry tick deltas
// through a block, start each block from 0, and stop with a reason on damaged bytes.
#include "decode/decode.hpp"
#include "format.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"

namespace rec = nvtxpp::recording;
using nvtxpp::testing::event_type;

namespace {

using bytes = std::vector<unsigned char>;

void put(bytes& b, std::uint64_t v) {
  unsigned char tmp[rec::max_varint_bytes];
  unsigned char* end = rec::put_varint(tmp, v);
  b.insert(b.end(), tmp, end);
}

/// One record without ext fields; `text` inline when not null.
bytes record(event_type type, std::int64_t delta, std::uint32_t domain, char const* text) {
  bytes b;
  auto const kind = text != nullptr ? rec::message_kind::inline_text : rec::message_kind::none;
  b.push_back(static_cast<unsigned char>(
      static_cast<unsigned>(type) | (static_cast<unsigned>(kind) << rec::head::message_shift)));
  put(b, rec::zigzag(delta));
  put(b, domain);
  if (text != nullptr) {
    std::string const s{text};
    put(b, s.size());
    b.insert(b.end(), s.begin(), s.end());
  }
  return b;
}

struct parsed {
  std::vector<rec::raw_event> events;
  std::vector<std::string> warnings;
};

parsed parse(std::vector<rec::stream_piece> const& pieces) {
  parsed p;
  rec::for_each_record(
      pieces, 7, [&](rec::raw_event const& r) { p.events.push_back(r); }, p.warnings);
  return p;
}

}  // namespace

TEST_CASE("varints and zigzag round-trip at their edges") {
  for (std::uint64_t v :
       {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{127}, std::uint64_t{128},
        std::uint64_t{16383}, std::uint64_t{16384}, std::uint64_t{1} << 35U, ~std::uint64_t{0}}) {
    bytes b;
    put(b, v);
    CHECK(b.size() <= rec::max_varint_bytes);
    std::uint64_t back = 1;
    CHECK(rec::get_varint(b.data(), b.data() + b.size(), back) == b.data() + b.size());
    CHECK(back == v);
    // One byte short: no value.
    CHECK(rec::get_varint(b.data(), b.data() + b.size() - 1, back) == nullptr);
  }
  for (std::int64_t v : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1}, std::int64_t{-64},
                         std::int64_t{63}, INT64_MIN, INT64_MAX}) {
    CHECK(rec::unzigzag(rec::zigzag(v)) == v);
  }
  CHECK(rec::zigzag(-1) == 1);
  CHECK(rec::zigzag(63) == 126);  // small either way: one byte
  bytes eleven(11, 0x80);
  std::uint64_t v = 0;
  CHECK(rec::get_varint(eleven.data(), eleven.data() + eleven.size(), v) == nullptr);
}

TEST_CASE("ticks are deltas within a block and restart at each block") {
  bytes a = record(event_type::push, 1'000'000, 0, "outer");
  bytes more = record(event_type::push, 40, 3, "inner");
  a.insert(a.end(), more.begin(), more.end());
  more = record(event_type::pop, -5, 3, nullptr);  // a clock a little behind: negative delta
  a.insert(a.end(), more.begin(), more.end());
  bytes b = record(event_type::pop, 2'000'000, 0, nullptr);
  std::vector<rec::stream_piece> pieces{{a.data(), a.size(), 0, 0, 0},
                                        {b.data(), b.size(), 1, 0, 0}};
  auto const p = parse(pieces);
  REQUIRE(p.events.size() == 4);
  CHECK(p.warnings.empty());
  CHECK(p.events[0].ticks == 1'000'000);
  CHECK(p.events[0].text == "outer");
  CHECK(p.events[1].ticks == 1'000'040);
  CHECK(p.events[1].domain == 3);
  CHECK(p.events[1].text == "inner");
  CHECK(p.events[2].type == event_type::pop);
  CHECK(p.events[2].ticks == 1'000'035);
  CHECK(p.events[3].ticks == 2'000'000);  // block 1 counts from 0 again
}

TEST_CASE("a piece that continues its block keeps the base; a skipped prefix is not shown") {
  bytes a = record(event_type::mark, 500, 0, "cleared");
  std::size_t const cut = a.size();
  bytes more = record(event_type::mark, 25, 0, "shown");
  a.insert(a.end(), more.begin(), more.end());
  // Testing front end: the whole block, its first record cleared.
  auto p = parse({{a.data(), a.size(), 0, 0, static_cast<std::uint32_t>(cut)}});
  REQUIRE(p.events.size() == 1);
  CHECK(p.events[0].text == "shown");
  CHECK(p.events[0].ticks == 525);
  // Capture: the block in two pieces.
  p = parse({{a.data(), cut, 4, 0, 0},
             {a.data() + cut, a.size() - cut, 4, static_cast<std::uint32_t>(cut), 0}});
  REQUIRE(p.events.size() == 2);
  CHECK(p.events[1].ticks == 525);
  // The second piece alone: its base is unknown, so it is skipped and said.
  p = parse({{a.data() + cut, a.size() - cut, 4, static_cast<std::uint32_t>(cut), 0}});
  CHECK(p.events.empty());
  REQUIRE(p.warnings.size() == 1);
  CHECK(p.warnings[0].find("missing") != std::string::npos);
}

TEST_CASE("damaged records stop their block with a reason") {
  struct damage {
    bytes data;
    char const* why;
    bool then_good = true;  // a good record follows (not when the damage is a cut end)
  };
  bytes over_limit;
  over_limit.push_back(static_cast<unsigned char>(4U | (1U << rec::head::message_shift)));
  put(over_limit, 0);
  put(over_limit, 0);
  put(over_limit, nvtxpp::testing::max_message_bytes + 1);
  bytes big_id;
  big_id.push_back(static_cast<unsigned char>(4U | (2U << rec::head::message_shift)));
  put(big_id, 0);
  put(big_id, 0);
  put(big_id, std::uint64_t{1} << 33U);
  bytes short_text = record(event_type::mark, 1, 0, "abcdef");
  short_text.pop_back();
  bytes bad_type = record(event_type::mark, 1, 0, nullptr);
  bad_type[0] = 31;
  bytes no_ext = record(event_type::mark, 1, 0, nullptr);
  no_ext[0] = static_cast<unsigned char>(no_ext[0] | rec::head::ext);  // flags byte missing
  bytes big_domain = {4};
  put(big_domain, 0);
  put(big_domain, std::uint64_t{1} << 32U);
  for (auto const& d :
       {damage{over_limit, "longer than max_message_bytes"}, damage{big_id, "past 32 bits"},
        damage{short_text, "short text", false}, damage{bad_type, "bad type"},
        damage{no_ext, "short header", false}, damage{big_domain, "bad domain"}}) {
    bytes b = d.data;
    if (d.then_good) {
      bytes after = record(event_type::mark, 1, 0, "after");
      b.insert(b.end(), after.begin(), after.end());
    }
    auto const p = parse({{b.data(), b.size(), 0, 0, 0}});
    CHECK(p.events.empty());
    REQUIRE(p.warnings.size() == 1);
    INFO(p.warnings[0]);
    CHECK(p.warnings[0].find(d.why) != std::string::npos);
  }
}

TEST_CASE("the clock map rounds halves away from zero and saturates on damaged ticks") {
  rec::clock_map m;
  m.ticks0 = 1000;
  m.ns0 = 5'000'000;
  m.ns_per_tick = 0.5;  // a half at every odd tick
  CHECK(m.to_ns(1000) == 5'000'000);
  CHECK(m.to_ns(1001) == 5'000'001);  // +0.5 -> +1
  CHECK(m.to_ns(1003) == 5'000'002);  // +1.5 -> +2
  CHECK(m.to_ns(999) == 4'999'999);   // -0.5 -> -1
  CHECK(m.to_ns(997) == 4'999'998);   // -1.5 -> -2
  m.ns_per_tick = 0.4;
  CHECK(m.to_ns(1001) == 5'000'000);  // +0.4 -> 0
  CHECK(m.to_ns(999) == 5'000'000);   // -0.4 -> 0
  m.ns_per_tick = 0.3;
  CHECK(m.to_ns(1002) == 5'000'001);  // +0.6 -> +1
  CHECK(m.to_ns(998) == 4'999'999);   // -0.6 -> -1
  // Each result is std::llround's, over a spread of fractions.
  m.ns_per_tick = 0.37109375;  // exact in binary: the products are exact too
  for (std::int64_t t = -3000; t <= 3000; ++t) {
    double const d = static_cast<double>(t) * m.ns_per_tick;
    REQUIRE(m.to_ns(m.ticks0 + t) == m.ns0 + std::llround(d));
  }
  // And over the whole range of a real recording's products, rounding bits and all: the
  // integer rounding of [0, 2^52) against the library's, and the far side too.
  std::uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13U;
    x ^= x >> 7U;
    x ^= x << 17U;
    m.ticks0 = static_cast<std::int64_t>(x >> 40U);
    m.ns0 = static_cast<std::int64_t>(x >> 20U) - (std::int64_t{1} << 43U);
    m.ns_per_tick = 0.25 + static_cast<double>(x & 0xFFFFF) / 1048576.0;
    std::int64_t const dt = static_cast<std::int64_t>(x >> (11 + i % 50)) - (i % 3 == 0 ? 1000 : 0);
    double const d = static_cast<double>(dt) * m.ns_per_tick;
    REQUIRE(m.to_ns(m.ticks0 + dt) == m.ns0 + std::llround(d));
  }
  m.ticks0 = 0;
  m.ns0 = 0;
  m.ns_per_tick = 1;
  for (std::int64_t v : {std::int64_t{0}, std::int64_t{1}, (std::int64_t{1} << 52) - 1,
                         std::int64_t{1} << 52, (std::int64_t{1} << 53) + 1, std::int64_t{-1}}) {
    CHECK(m.to_ns(v) == std::llround(static_cast<double>(v)));  // (2^53 + 1 is no double)
  }
  m.ns_per_tick = 0.5;
  CHECK(m.to_ns((std::int64_t{1} << 53) - 1) == std::int64_t{1} << 52);  // 2^52 - 0.5 -> up
  m.ns_per_tick = 1.0 / 1024;
  CHECK(m.to_ns(511) == 0);  // just under a half
  CHECK(m.to_ns(512) == 1);  // a half
  // Damaged ticks saturate, never overflow.
  m.ns_per_tick = 1e6;
  CHECK(m.to_ns(INT64_MAX) > 9'000'000'000'000'000'000);
  CHECK(m.to_ns(INT64_MIN) < -9'000'000'000'000'000'000);
  m.ns0 = INT64_MAX - 10;
  CHECK(m.to_ns(INT64_MAX) == INT64_MAX);
  m.ns0 = INT64_MIN + 10;
  CHECK(m.to_ns(INT64_MIN) == INT64_MIN);
}
