// nvtxpp/format.hpp: the formatting machinery, and what NVTX receives from it.
#include <nvtxpp/format.hpp>
#include <nvtxpp/mark.hpp>
#include <nvtxpp/range.hpp>

#include <fmt/format.h>

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

namespace {

/// A format argument that counts how often fmt formatted it: a field after a huge width is
/// reached only if fmt wrote the whole padding first.
struct format_probe {
  int* formatted;
};

}  // namespace

template <>
struct fmt::formatter<format_probe> : fmt::formatter<int> {
  auto format(format_probe const& p, fmt::format_context& ctx) const -> decltype(ctx.out()) {
    ++*p.formatted;
    return fmt::formatter<int>::format(1, ctx);
  }
};

TEST_CASE("a huge run-time width or precision costs no more than the buffer") {
  // fmt pads a width of up to INT_MAX in time linear in it, even into a fixed-size buffer:
  // nvtxpp stops fmt once the text is well past NVTXPP_MESSAGE_BUFFER_SIZE, so the field after
  // the padding is never formatted (without the stop it would be, after seconds of padding).
  nvtxpp::testing::recorder rec;
  constexpr std::size_t shown = NVTXPP_MESSAGE_BUFFER_SIZE - 4;  // then "..."
  int formatted = 0;
  nvtxpp::mark(fmt::runtime("{:560972020}{}"), 7, format_probe{&formatted});
  nvtxpp::mark(fmt::runtime("{:>{}}{}"), "x", 2'000'000'000, format_probe{&formatted});
  nvtxpp::mark(fmt::runtime("{:0{}}{}"), 5, 1'500'000'000, format_probe{&formatted});
  nvtxpp::mark(fmt::runtime("{:.{}f}{}"), 1.5, 1'000'000'000, format_probe{&formatted});
  { nvtxpp::scoped_range r{fmt::runtime("{:*^999999999}{}"), "mid", format_probe{&formatted}}; }
  CHECK(formatted == 0);
  auto const events = only(rec.events(), {event_type::mark, event_type::push});
  REQUIRE(events.size() == 5);
  CHECK(events[0].message == std::string(shown, ' ') + "...");
  CHECK(events[1].message == std::string(shown, ' ') + "...");
  CHECK(events[2].message == std::string(shown, '0') + "...");
  CHECK(events[3].message == "1.5" + std::string(shown - 3, '0') + "...");
  CHECK(events[4].message == std::string(shown, '*') + "...");
}

TEST_CASE("a text just past the buffer is truncated, and the fields after it are formatted") {
  // Only a text far past the buffer stops fmt; a little overflow is dropped quietly.
  nvtxpp::testing::recorder rec;
  int formatted = 0;
  nvtxpp::mark(fmt::runtime("{:300}{}"), 7, format_probe{&formatted});
  CHECK(formatted == 1);
  CHECK(only(rec.events(), {event_type::mark}).at(0).message ==
        std::string(NVTXPP_MESSAGE_BUFFER_SIZE - 4, ' ') + "...");
}

TEST_CASE("a format error is noticed unless fmt was stopped before reaching it") {
  // The error (a third field for two arguments) comes after the padding: with 300 columns fmt
  // reaches it (the raw format string is sent); with 999999 it was stopped first, at
  // format_stop_length, and the text is the truncated output.
  nvtxpp::testing::recorder rec;
  STATIC_REQUIRE(nvtxpp::detail::format_stop_length(NVTXPP_MESSAGE_BUFFER_SIZE) < 999999);
  nvtxpp::mark(fmt::runtime("{:300}{}{}"), 7, 8);
  nvtxpp::mark(fmt::runtime("{:999999}{}{}"), 7, 8);
  auto const marks = only(rec.events(), {event_type::mark});
  REQUIRE(marks.size() == 2);
  CHECK(marks[0].message == "{:300}{}{}");
  CHECK(marks[1].message == std::string(NVTXPP_MESSAGE_BUFFER_SIZE - 4, ' ') + "...");
}

TEST_CASE("a format error when the output is exactly at the stop length is noticed") {
  // fmt hands its output over in 256-byte pieces and flushes the last piece from a destructor,
  // here while the format error unwinds: stopping fmt there would terminate the program (found
  // by fuzz_format). The error is noticed: the raw format string is sent.
  nvtxpp::testing::recorder rec;
  constexpr auto stop = nvtxpp::detail::format_stop_length(NVTXPP_MESSAGE_BUFFER_SIZE);
  std::string const f = "{:" + std::to_string(stop - 1) + "}{}{}";  // stop - 1 columns, "8", error
  nvtxpp::mark(fmt::runtime(f), 7, 8);
  CHECK(only(rec.events(), {event_type::mark}).at(0).message == f);
}
