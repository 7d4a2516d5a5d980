// nvtxpp/registered_string.hpp: registered once, then passed by handle.
#include <nvtxpp/range.hpp>
#include <nvtxpp/registered_string.hpp>

#include "catch.hpp"
#include "recording.hpp"

using namespace nvtxpp_test;

NVTXPP_DEFINE_DOMAIN(reg_domain, "Registered");

TEST_CASE("a registered string reaches NVTX as a handle, resolved to its text") {
  nvtxpp::testing::recorder rec;
  static nvtxpp::registered_string_in<reg_domain> const name{"Registered Range"};
  { nvtxpp::scoped_range_in<reg_domain> r{name, nvtxpp::colors::teal}; }
  { nvtxpp::scoped_range_in<reg_domain> r{name}; }
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 2);
  CHECK(pushes[0].registered);
  CHECK(pushes[0].message == "Registered Range");
  CHECK(pushes[0].domain == "Registered");
  CHECK(*pushes[0].color == nvtxpp::colors::teal.argb());
  CHECK(*pushes[1].color == nvtxpp::auto_color("Registered Range").argb());
}
