// nvtxpp/color.hpp: constructors, palette, lookup by name, automatic colours; and what NVTX gets.
#include <nvtxpp/color.hpp>
#include <nvtxpp/range.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "catch.hpp"
#include "recording.hpp"

using namespace nvtxpp_test;

TEST_CASE("rgb, argb, hex and raw ARGB values") {
  STATIC_REQUIRE(nvtxpp::rgb(0x12, 0x34, 0x56).argb() == 0xFF123456u);
  STATIC_REQUIRE(nvtxpp::argb(0x80, 0x12, 0x34, 0x56).argb() == 0x80123456u);
  STATIC_REQUIRE(nvtxpp::hex(0x123456).argb() == 0xFF123456u);
  STATIC_REQUIRE(nvtxpp::hex(0xAB123456).argb() == 0xFF123456u);
  STATIC_REQUIRE(nvtxpp::color{0x01020304u}.argb() == 0x01020304u);
}

TEST_CASE("the palette holds the names the Python nvtx package accepts, with its values") {
  STATIC_REQUIRE(nvtxpp::colors::green.argb() == 0xFF008000u);
  STATIC_REQUIRE(nvtxpp::colors::blue.argb() == 0xFF0000FFu);
  STATIC_REQUIRE(nvtxpp::colors::yellow.argb() == 0xFFFFFF00u);
  STATIC_REQUIRE(nvtxpp::colors::purple.argb() == 0xFF800080u);
  STATIC_REQUIRE(nvtxpp::colors::rapids.argb() == 0xFF7400FFu);
  STATIC_REQUIRE(nvtxpp::colors::cyan.argb() == 0xFF00FFFFu);
  STATIC_REQUIRE(nvtxpp::colors::red.argb() == 0xFFFF0000u);
  STATIC_REQUIRE(nvtxpp::colors::white.argb() == 0xFFFFFFFFu);
  STATIC_REQUIRE(nvtxpp::colors::darkgreen.argb() == 0xFF006400u);
  STATIC_REQUIRE(nvtxpp::colors::orange.argb() == 0xFFFFA500u);
  // CSS names beyond those.
  STATIC_REQUIRE(nvtxpp::colors::rebeccapurple.argb() == 0xFF663399u);
  STATIC_REQUIRE(nvtxpp::colors::aliceblue.argb() == 0xFFF0F8FFu);
  STATIC_REQUIRE(nvtxpp::colors::yellowgreen.argb() == 0xFF9ACD32u);
  CHECK(std::size(nvtxpp::detail::named_colors) == 149);
}

TEST_CASE("lookup by name at compile time") {
  constexpr auto c = NVTXPP_COLOR("Orange");
  STATIC_REQUIRE(c == nvtxpp::colors::orange);
  STATIC_REQUIRE(nvtxpp::colors::find("DarkGreen").value() == nvtxpp::colors::darkgreen);
  STATIC_REQUIRE_FALSE(nvtxpp::colors::find("no such colour").has_value());
}

TEST_CASE("lookup by name at run time, with a documented fallback") {
  std::string const name = "SteelBlue";
  CHECK(nvtxpp::colors::from_name(name) == nvtxpp::colors::steelblue);
  CHECK(nvtxpp::colors::from_name("rapids") == nvtxpp::colors::rapids);
  CHECK(nvtxpp::colors::from_name("reddish") == nvtxpp::colors::fallback);
  CHECK(nvtxpp::colors::fallback.argb() == 0xFF808080u);
  CHECK(nvtxpp::colors::from_name("", nvtxpp::colors::red) == nvtxpp::colors::red);
  CHECK(nvtxpp::colors::from_name("re") == nvtxpp::colors::fallback);
  CHECK(nvtxpp::colors::from_name("redd") == nvtxpp::colors::fallback);
  // Every table entry can be found by its own name.
  for (auto const& entry : nvtxpp::detail::named_colors) {
    CHECK(nvtxpp::colors::from_name(entry.name) == nvtxpp::hex(entry.rgb));
  }
}

TEST_CASE("automatic colours are stable, from the palette, and spread over it") {
  // Pinned: a change of hash or palette changes users' timelines and must be deliberate.
  STATIC_REQUIRE(nvtxpp::auto_color("Kernels").argb() == 0xFF2A24B2u);
  STATIC_REQUIRE(nvtxpp::auto_color("Kernels") == nvtxpp::auto_color("Kernels"));
  std::set<std::uint32_t> seen;
  for (int i = 0; i < 8; ++i) seen.insert(nvtxpp::auto_color("Stream " + std::to_string(i)).argb());
  CHECK(seen.size() >= 6);  // eight neighbouring names: few collisions on 16 colours
  std::set<std::uint32_t> palette;
  for (auto c : nvtxpp::detail::auto_palette) palette.insert(0xFF000000u | c);
  CHECK(palette.size() == 16);
  for (auto c : seen) CHECK(palette.count(c) == 1);
}

namespace {
// The hash's definition, byte by byte, as constant evaluation computes it.
constexpr std::uint32_t hash_by_bytes(std::string_view name) {
  constexpr std::uint64_t k = 0xff51afd7ed558ccdull;
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ name.size();
  std::size_t i = 0;
  for (; i < name.size(); i += 8) {
    h = (h ^
         nvtxpp::detail::name_word(name.data() + i, std::min<std::size_t>(8, name.size() - i))) *
        k;
    h ^= h >> 32;
  }
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return static_cast<std::uint32_t>(h);
}
}  // namespace

TEST_CASE("the run-time hash (word loads) equals its byte-by-byte definition at every length") {
  STATIC_REQUIRE(nvtxpp::detail::name_hash("Kernels") == hash_by_bytes("Kernels"));
  std::string name;
  for (int n = 0; n < 80; ++n) {
    std::string const copy = name;  // a fresh buffer, so loads are not aligned by accident
    CHECK(nvtxpp::detail::name_hash(copy) == hash_by_bytes(copy));
    name.push_back(static_cast<char>(n % 3 == 0 ? 0xC3 : 'a' + n % 26));
  }
}

TEST_CASE("NVTX receives the colour a range was given") {
  nvtxpp::testing::recorder rec;
  { nvtxpp::scoped_range r{"c", nvtxpp::argb(0x40, 1, 2, 3)}; }
  CHECK(*only(rec.events(), {event_type::push}).at(0).color == 0x40010203u);
}
