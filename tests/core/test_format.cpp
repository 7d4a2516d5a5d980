// nvtxpp/format.hpp: the formatting machinery, and what NVTX receives from it.
#include <nvtxpp/format.hpp>
#include <nvtxpp/mark.hpp>

#include <string>
#include <type_traits>

#include "catch.hpp"
#include "recording.hpp"

using namespace nvtxpp_test;

TEST_CASE("attributes are not format arguments") {
  STATIC_REQUIRE(nvtxpp::detail::format_arg_count<int, nvtxpp::color, double> == 2);
  STATIC_REQUIRE(nvtxpp::detail::format_arg_count<nvtxpp::payload, nvtxpp::category> == 0);
  STATIC_REQUIRE(
      std::is_same_v<nvtxpp::detail::format_string_for<int, nvtxpp::color const&, char const*>,
                     nvtxpp::detail::checked_format_string<int, char const*>>);
}

TEST_CASE("format_into writes, truncates, and falls back to the raw format text") {
  char buf[16];
  CHECK(std::string{nvtxpp::detail::format_into(buf, sizeof buf, "a{}b", 1)} == "a1b");
  CHECK(std::string{nvtxpp::detail::format_into(buf, sizeof buf, "{}", std::string(40, 'z'))} ==
        std::string(12, 'z') + "...");
  CHECK(std::string{nvtxpp::detail::format_into(buf, sizeof buf, "{:d}", "text")} == "{:d}");
  CHECK(std::string{nvtxpp::detail::format_into(buf, sizeof buf, "exactly15chars!")} ==
        "exactly15chars!");
}

TEST_CASE("formatting supports fmt's specifiers and several argument types") {
  nvtxpp::testing::recorder rec;
  nvtxpp::mark("{:>4}|{:.2f}|{:#x}|{}|{}", 7, 3.14159, 255, "text", std::string{"str"});
  CHECK(only(rec.events(), {event_type::mark}).at(0).message == "   7|3.14|0xff|text|str");
}
