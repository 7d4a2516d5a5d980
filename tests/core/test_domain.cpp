// nvtxpp/domain.hpp: domains defined in one line, created once, carried by every event.
#include <nvtxpp/domain.hpp>
#include <nvtxpp/mark.hpp>

#include <type_traits>

#include "catch.hpp"
#include "recording.hpp"

using namespace nvtxpp_test;

NVTXPP_DEFINE_DOMAIN(io_domain, "I/O");
NVTXPP_DEFINE_DOMAIN(compute_domain, "Compute");

TEST_CASE("a domain tag names its domain") {
  STATIC_REQUIRE(nvtxpp::detail::is_domain<io_domain>::value);
  STATIC_REQUIRE(nvtxpp::detail::is_domain<nvtxpp::global_domain>::value);
  STATIC_REQUIRE_FALSE(nvtxpp::detail::is_domain<int>::value);
  STATIC_REQUIRE(std::string_view{io_domain::name} == "I/O");
}

TEST_CASE("events carry their domain; each domain is created once") {
  nvtxpp::testing::recorder rec;
  for (int i = 0; i < 3; ++i) {
    nvtxpp::mark_in<io_domain>("read");
    nvtxpp::mark_in<compute_domain>("step");
    nvtxpp::mark("global");
  }
  auto const marks = only(rec.events(), {event_type::mark});
  REQUIRE(marks.size() == 9);
  CHECK(marks[0].domain == "I/O");
  CHECK(marks[1].domain == "Compute");
  CHECK(marks[2].domain.empty());
  CHECK(nvtxpp::detail::domain_handle<io_domain>() !=
        nvtxpp::detail::domain_handle<compute_domain>());
  CHECK(nvtxpp::detail::domain_handle<io_domain>() == nvtxpp::detail::domain_handle<io_domain>());
}

TEST_CASE("is_enabled reports whether a tool listens") {
  {
    nvtxpp::testing::recorder rec;
    CHECK(nvtxpp::is_enabled<io_domain>());
    CHECK(nvtxpp::is_enabled());
  }
  CHECK_FALSE(nvtxpp::is_enabled<io_domain>());
}
