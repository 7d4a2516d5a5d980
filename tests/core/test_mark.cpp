// nvtxpp/mark.hpp: instant events.
#include <nvtxpp/mark.hpp>

#include "catch.hpp"
#include "recording.hpp"

using namespace nvtxpp_test;

NVTXPP_DEFINE_DOMAIN(mark_domain, "Marks");

TEST_CASE("marks: static, formatted, with attributes, in a domain") {
  nvtxpp::testing::recorder rec;
  nvtxpp::mark("checkpoint");
  nvtxpp::mark("checkpoint {}", 2, nvtxpp::colors::purple, nvtxpp::payload{9u});
  nvtxpp::mark_in<mark_domain>("in domain", nvtxpp::category{4});
  nvtxpp::mark_in<mark_domain>("in domain {}", "too");
  auto const ev = annotations(rec);
  REQUIRE(ev.size() == 4);
  for (auto const& e : ev) CHECK(e.type == event_type::mark);
  CHECK(ev[0].message == "checkpoint");
  CHECK(ev[1].message == "checkpoint 2");
  CHECK(*ev[1].color == nvtxpp::colors::purple.argb());
  CHECK(std::get<std::uint32_t>(ev[1].payload) == 9u);
  CHECK(ev[2].domain == "Marks");
  CHECK(ev[2].category == 4u);
  CHECK(ev[3].message == "in domain too");
}
