// nvtxpp/range.hpp: what NVTX receives from scoped and start/end ranges.
#include <nvtxpp/range.hpp>

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <thread>

#include "catch.hpp"
#include "counted.hpp"
#include "recording.hpp"

using namespace nvtxpp_test;

NVTXPP_DEFINE_DOMAIN(range_domain, "Range Domain");

TEST_CASE("a static range pushes its message and colour, then pops") {
  nvtxpp::testing::recorder rec;
  { nvtxpp::scoped_range r{"H2D Memory", nvtxpp::colors::yellow}; }
  auto const ev = annotations(rec);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].type == event_type::push);
  CHECK(ev[0].message == "H2D Memory");
  CHECK(ev[0].domain.empty());
  REQUIRE(ev[0].color.has_value());
  CHECK(*ev[0].color == 0xFFFFFF00u);
  CHECK(ev[0].depth == 0);
  CHECK(ev[1].type == event_type::pop);
  CHECK(ev[1].depth == 0);
  CHECK(ev[1].thread_id == ev[0].thread_id);
}

NVTXPP_DEFINE_DOMAIN(slots_domain, "Slots");
NVTXPP_DEFINE_DOMAIN(buffer_domain, "Buffer");

TEST_CASE("a text array goes as a registered string, with its automatic colour") {
  nvtxpp::testing::recorder rec;
  for (int i = 0; i < 3; ++i) {
    nvtxpp::scoped_range r{"Cached literal", nvtxpp::payload{i}};
  }
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 3);
  for (auto const& p : pushes) {
    CHECK(p.message == "Cached literal");
    CHECK(p.registered);
    CHECK(*p.color == nvtxpp::auto_color("Cached literal").argb());
  }
  CHECK(std::get<std::int32_t>(pushes[2].payload) == 2);
}

TEST_CASE("more text arrays of one length than cache slots: the rest go as plain text") {
  nvtxpp::testing::recorder rec;
  char const* const texts[] = {"text-1", "text-2", "text-3", "text-4", "text-5", "text-6"};
  for (int round = 0; round < 2; ++round) {
    { nvtxpp::scoped_range_in<slots_domain> r{"text-1"}; }
    { nvtxpp::scoped_range_in<slots_domain> r{"text-2"}; }
    { nvtxpp::scoped_range_in<slots_domain> r{"text-3"}; }
    { nvtxpp::scoped_range_in<slots_domain> r{"text-4"}; }
    { nvtxpp::scoped_range_in<slots_domain> r{"text-5"}; }
    { nvtxpp::scoped_range_in<slots_domain> r{"text-6"}; }
  }
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 12);
  std::size_t registered = 0;
  for (std::size_t i = 0; i < pushes.size(); ++i) {
    CHECK(pushes[i].message == texts[i % 6]);
    CHECK(*pushes[i].color == nvtxpp::auto_color(texts[i % 6]).argb());
    registered += pushes[i].registered ? 1u : 0u;
  }
  CHECK(registered == 8);  // 4 slots, each text that took one is registered in both rounds
  CHECK_FALSE(pushes[4].registered);
  CHECK_FALSE(pushes[11].registered);
}

TEST_CASE("a mutable text array whose bytes change sends its current text") {
  nvtxpp::testing::recorder rec;
  char buffer[8] = "abc";
  { nvtxpp::scoped_range_in<buffer_domain> r{buffer}; }
  buffer[0] = 'x';
  { nvtxpp::scoped_range_in<buffer_domain> r{buffer}; }
  buffer[0] = 'a';
  { nvtxpp::scoped_range_in<buffer_domain> r{buffer}; }
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 3);
  CHECK(pushes[0].message == "abc");
  CHECK(pushes[1].message == "xbc");
  CHECK_FALSE(pushes[1].registered);
  CHECK(pushes[2].message == "abc");
  CHECK(*pushes[1].color == nvtxpp::auto_color("xbc").argb());
}

TEST_CASE("attributes are accepted in any order") {
  nvtxpp::testing::recorder rec;
  {
    nvtxpp::scoped_range a{"a", nvtxpp::payload{std::int32_t{-3}}, nvtxpp::colors::red,
                           nvtxpp::category{7}};
  }
  {
    nvtxpp::scoped_range b{"b", nvtxpp::category{7}, nvtxpp::colors::red,
                           nvtxpp::payload{std::int32_t{-3}}};
  }
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 2);
  for (auto const& e : pushes) {
    CHECK(*e.color == 0xFFFF0000u);
    CHECK(e.category == 7u);
    REQUIRE(std::holds_alternative<std::int32_t>(e.payload));
    CHECK(std::get<std::int32_t>(e.payload) == -3);
  }
}

TEST_CASE("a formatted range receives the formatted text; attributes may sit between arguments") {
  nvtxpp::testing::recorder rec;
  {
    nvtxpp::scoped_range r{"H2D Memory Stream {}", 3};
    nvtxpp::scoped_range s{"{} and {}", 1, nvtxpp::colors::green, std::string{"two"}};
  }
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 2);
  CHECK(pushes[0].message == "H2D Memory Stream 3");
  CHECK(pushes[1].message == "1 and two");
  CHECK(*pushes[1].color == nvtxpp::colors::green.argb());
  CHECK(pushes[1].depth == 1);
}

TEST_CASE("a message without arguments is used verbatim, braces included") {
  nvtxpp::testing::recorder rec;
  { nvtxpp::scoped_range r{"set {a, b}"}; }
  CHECK(only(rec.events(), {event_type::push}).at(0).message == "set {a, b}");
}

TEST_CASE("text types: std::string, string_view without terminator, wide, null") {
  nvtxpp::testing::recorder rec;
  std::string const s = "from std::string";
  std::string_view const view = std::string_view{"abcdef"}.substr(0, 3);
  char const* null_text = nullptr;
  {
    nvtxpp::scoped_range a{s};
    nvtxpp::scoped_range b{view};
    nvtxpp::scoped_range c{L"wide \u00e9"};
    nvtxpp::scoped_range d{null_text};
  }
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 4);
  CHECK(pushes[0].message == "from std::string");
  CHECK(pushes[1].message == "abc");
  CHECK(pushes[2].message == "wide \xc3\xa9");
  CHECK(pushes[3].message == "(null)");
}

TEST_CASE("a formatted text longer than the buffer is truncated with an ellipsis") {
  nvtxpp::testing::recorder rec;
  std::string const long_arg(1000, 'x');
  { nvtxpp::scoped_range r{"long {}", long_arg}; }
  auto const msg = only(rec.events(), {event_type::push}).at(0).message;
  CHECK(msg.size() == NVTXPP_MESSAGE_BUFFER_SIZE - 1);
  CHECK(msg.substr(0, 6) == "long x");
  CHECK(msg.substr(msg.size() - 3) == "...");
}

TEST_CASE("truncation never splits a UTF-8 character") {
  nvtxpp::testing::recorder rec;
  std::string many_e_acute;
  for (int i = 0; i < 400; ++i) many_e_acute += "\xc3\xa9";
  { nvtxpp::scoped_range r{"x{}", many_e_acute}; }
  auto const msg = only(rec.events(), {event_type::push}).at(0).message;
  REQUIRE(msg.size() > 4);
  CHECK(msg.substr(msg.size() - 3) == "...");
  // "x" then whole two-byte characters: the text before "..." has odd length.
  CHECK((msg.size() - 3) % 2 == 1);
}

TEST_CASE("a bad runtime format string still emits the range, with the raw format text") {
  nvtxpp::testing::recorder rec;
  { nvtxpp::scoped_range r{fmt::runtime("value {:d}"), std::string{"not a number"}}; }
  { nvtxpp::scoped_range r{fmt::runtime("missing {} {}"), 1}; }
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 2);
  CHECK(pushes[0].message == "value {:d}");
  CHECK(pushes[1].message == "missing {} {}");
  CHECK(only(rec.events(), {event_type::pop}).size() == 2);
}

TEST_CASE("an enormous static message reaches NVTX whole") {
  nvtxpp::testing::recorder rec;
  std::string const huge(100000, 'h');
  { nvtxpp::scoped_range r{huge}; }
  auto const push = only(rec.events(), {event_type::push}).at(0);
  // The recorder keeps max_message_bytes of it and says it cut the rest.
  CHECK(push.message == huge.substr(0, nvtxpp::testing::max_message_bytes));
  CHECK(push.truncated);
}

TEST_CASE("the text is formatted only while a tool listens") {
  counted::formatted = 0;
  {
    nvtxpp::testing::recorder rec;
    nvtxpp::scoped_range r{"value {}", counted{}};
  }
  CHECK(counted::formatted == 1);
  // No recorder alive: nvtxDomainIsEnabled says nobody listens.
  REQUIRE_FALSE(nvtxpp::is_enabled());
  { nvtxpp::scoped_range r{"value {}", counted{}}; }
  CHECK(counted::formatted == 1);
}

TEST_CASE("nesting: depths grow with each push and pops come back in reverse") {
  nvtxpp::testing::recorder rec;
  {
    nvtxpp::scoped_range a{"outer"};
    {
      nvtxpp::scoped_range b{"middle"};
      nvtxpp::scoped_range c{"inner"};
    }
  }
  auto const ev = annotations(rec);
  REQUIRE(ev.size() == 6);
  CHECK(ev[0].message == "outer");
  CHECK(ev[0].depth == 0);
  CHECK(ev[1].message == "middle");
  CHECK(ev[1].depth == 1);
  CHECK(ev[2].message == "inner");
  CHECK(ev[2].depth == 2);
  CHECK(ev[3].type == event_type::pop);
  CHECK(ev[3].depth == 2);
  CHECK(ev[4].depth == 1);
  CHECK(ev[5].depth == 0);
  auto const ranges = rec.ranges();
  REQUIRE(ranges.size() == 3);
}

TEST_CASE("ranges in a domain carry the domain's name") {
  nvtxpp::testing::recorder rec;
  { nvtxpp::scoped_range_in<range_domain> r{"in domain {}", 1}; }
  auto const ev = annotations(rec);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].domain == "Range Domain");
  CHECK(ev[0].message == "in domain 1");
  CHECK(ev[1].domain == "Range Domain");
}

TEST_CASE("the conditional form emits nothing when its condition is false") {
  nvtxpp::testing::recorder rec;
  { nvtxpp::scoped_range r{nvtxpp::detail::when{false}, "never"}; }
  { nvtxpp::scoped_range r{nvtxpp::detail::when{true}, "always {}", 1}; }
  auto const ev = annotations(rec);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].message == "always 1");
}

TEST_CASE("automatic colours: derived from the name, switchable, never over an explicit one") {
  nvtxpp::testing::recorder rec;
  { nvtxpp::scoped_range r{"Kernels"}; }
  { nvtxpp::scoped_range r{"Kernels", nvtxpp::colors::orange}; }
  nvtxpp::set_auto_color(false);
  { nvtxpp::scoped_range r{"Kernels"}; }
  nvtxpp::set_auto_color(true);
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 3);
  REQUIRE(pushes[0].color.has_value());
  CHECK(*pushes[0].color == nvtxpp::auto_color("Kernels").argb());
  CHECK(*pushes[1].color == nvtxpp::colors::orange.argb());
  CHECK_FALSE(pushes[2].color.has_value());
}

TEST_CASE("a start/end range ends exactly once, also from another thread") {
  nvtxpp::testing::recorder rec;
  std::uint64_t main_tid = 0;
  {
    nvtxpp::start_end_range r{"load {}", 7, nvtxpp::colors::blue};
    REQUIRE(r.running());
    std::thread t{[moved = std::move(r)]() mutable {
      moved.end();
      moved.end();
    }};
    t.join();
    CHECK_FALSE(r.running());  // NOLINT(bugprone-use-after-move): moved-from state is defined
  }
  {
    nvtxpp::start_end_range a{"first"};
    nvtxpp::start_end_range b{"second"};
    a = std::move(b);  // ends "first", takes over "second"
  }
  auto const ev = annotations(rec);
  REQUIRE(ev.size() == 6);
  CHECK(ev[0].type == event_type::start);
  CHECK(ev[0].message == "load 7");
  main_tid = ev[0].thread_id;
  CHECK(ev[1].type == event_type::end);
  CHECK(ev[1].range_id == ev[0].range_id);
  CHECK(ev[1].thread_id != main_tid);
  CHECK(ev[2].message == "first");
  CHECK(ev[3].message == "second");
  CHECK(ev[4].type == event_type::end);
  CHECK(ev[4].range_id == ev[2].range_id);
  CHECK(ev[5].type == event_type::end);
  CHECK(ev[5].range_id == ev[3].range_id);
}
