// nvtxpp/attributes.hpp: payloads of the six NVTX scalar types, categories by id and by name.
#include <nvtxpp/attributes.hpp>
#include <nvtxpp/mark.hpp>
#include <nvtxpp/range.hpp>

#include <cstdint>

#include "catch.hpp"
#include "recording.hpp"

using namespace nvtxpp_test;

NVTXPP_DEFINE_DOMAIN(attr_domain_a, "Attr A");
NVTXPP_DEFINE_DOMAIN(attr_domain_b, "Attr B");

TEST_CASE("payload types follow the argument's type") {
  STATIC_REQUIRE(nvtxpp::payload{std::uint64_t{1}}.type == nvtxpp::payload_type::u64);
  STATIC_REQUIRE(nvtxpp::payload{std::int64_t{1}}.type == nvtxpp::payload_type::i64);
  STATIC_REQUIRE(nvtxpp::payload{1.0}.type == nvtxpp::payload_type::f64);
  STATIC_REQUIRE(nvtxpp::payload{1u}.type == nvtxpp::payload_type::u32);
  STATIC_REQUIRE(nvtxpp::payload{1}.type == nvtxpp::payload_type::i32);
  STATIC_REQUIRE(nvtxpp::payload{1.0f}.type == nvtxpp::payload_type::f32);
  STATIC_REQUIRE(nvtxpp::payload{short{1}}.type == nvtxpp::payload_type::i32);
  STATIC_REQUIRE(nvtxpp::payload{std::size_t{1}}.type == nvtxpp::payload_type::u64);
  STATIC_REQUIRE(nvtxpp::payload{1.0L}.type == nvtxpp::payload_type::f64);
}

TEST_CASE("NVTX receives each of the six payload types with its value") {
  nvtxpp::testing::recorder rec;
  nvtxpp::mark("u64", nvtxpp::payload{std::uint64_t{1} << 40});
  nvtxpp::mark("i64", nvtxpp::payload{-(std::int64_t{5} << 40)});
  nvtxpp::mark("f64", nvtxpp::payload{2.5});
  nvtxpp::mark("u32", nvtxpp::payload{std::uint32_t{4000000000u}});
  nvtxpp::mark("i32", nvtxpp::payload{std::int32_t{-7}});
  nvtxpp::mark("f32", nvtxpp::payload{0.25f});
  nvtxpp::mark("none");
  auto const marks = only(rec.events(), {event_type::mark});
  REQUIRE(marks.size() == 7);
  CHECK(std::get<std::uint64_t>(marks[0].payload) == (std::uint64_t{1} << 40));
  CHECK(std::get<std::int64_t>(marks[1].payload) == (-(std::int64_t{5} << 40)));
  CHECK(std::get<double>(marks[2].payload) == 2.5);
  CHECK(std::get<std::uint32_t>(marks[3].payload) == 4000000000u);
  CHECK(std::get<std::int32_t>(marks[4].payload) == -7);
  CHECK(std::get<float>(marks[5].payload) == 0.25f);
  CHECK(std::holds_alternative<std::monostate>(marks[6].payload));
}

TEST_CASE("a category by id reaches NVTX unnamed") {
  nvtxpp::testing::recorder rec;
  { nvtxpp::scoped_range r{"by id", nvtxpp::category{12}}; }
  auto const push = only(rec.events(), {event_type::push}).at(0);
  CHECK(push.category == 12u);
  CHECK(push.category_name.empty());
}

TEST_CASE("a named category is named once per domain, automatically") {
  nvtxpp::testing::recorder rec;
  constexpr nvtxpp::named_category memory{3, "Memory"};
  for (int i = 0; i < 3; ++i) {
    nvtxpp::scoped_range_in<attr_domain_a> a{"copy {}", i, memory};
    nvtxpp::mark_in<attr_domain_b>("copied", memory);
  }
  auto const all = rec.events();
  auto const names = only(all, {event_type::name_category});
  REQUIRE(names.size() == 2);
  CHECK(names[0].domain == "Attr A");
  CHECK(names[0].category == 3u);
  CHECK(names[0].message == "Memory");
  CHECK(names[1].domain == "Attr B");
  auto const pushes = only(all, {event_type::push});
  REQUIRE(pushes.size() == 3);
  for (auto const& p : pushes) {
    CHECK(p.category == 3u);
    CHECK(p.category_name == "Memory");
  }
}

TEST_CASE("categories with large ids are named on every use") {
  nvtxpp::testing::recorder rec;
  for (int i = 0; i < 2; ++i)
    nvtxpp::mark_in<attr_domain_a>("big", nvtxpp::named_category{5000, "Big"});
  CHECK(only(rec.events(), {event_type::name_category}).size() == 2);
}
