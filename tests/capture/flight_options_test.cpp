// The flight recorder's options and names (tools/capture/launch/flight_options.hpp), and the
// watcher's running median. The launcher's behaviour end to end is in flight_tests.py.
#include "launch/flight_options.hpp"
#include "common/name_spec.hpp"
#include "flight/flight_watch.hpp"

#include "catch.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cli = nvtxpp::capture::cli;

TEST_CASE("LIMIT is a size or a duration") {
  CHECK(cli::parse_size("o", "64MB") == 64ULL << 20U);
  CHECK(cli::parse_size("o", "1GB") == 1ULL << 30U);
  CHECK(cli::parse_size("o", "512kib") == 512ULL << 10U);
  CHECK(cli::parse_size("o", "4096B") == 4096);
  CHECK(cli::parse_size("o", "30s") == 0);  // not a size
  CHECK_THROWS_AS(cli::parse_size("o", "abc"), cli::option_error);
  CHECK_THROWS_AS(cli::parse_size("o", "-1MB"), cli::option_error);
  CHECK_THROWS_AS(cli::parse_size("o", "30"), cli::option_error);  // no unit
  // A unit of neither kind is said to be one, not taken for a malformed duration.
  CHECK_THROWS_WITH(cli::parse_size("--flight-recorder", "1TB"),
                    "--flight-recorder: unknown size unit 'TB' in '1TB' (a size takes B, KB, MB, "
                    "GB, KiB, MiB, GiB)");
  CHECK_THROWS_WITH(cli::parse_size("o", "2tib"),
                    "o: unknown size unit 'tib' in '2tib' (a size takes B, KB, MB, GB, KiB, MiB, "
                    "GiB)");
  CHECK_THROWS_WITH(cli::parse_size("o", "3d"),
                    "o: unknown unit 'd' in '3d' (a size takes B, KB, MB, GB, KiB, MiB, GiB; a "
                    "duration ns, us, ms, s, m, min, h)");
  CHECK_THROWS_WITH(cli::parse_duration("--hang-timeout", "5d"),
                    "--hang-timeout: unknown duration unit 'd' in '5d' (a duration takes ns, us, "
                    "ms, s, m, min, h)");
  CHECK(cli::parse_duration("o", "30s") == 30'000'000'000);
  CHECK(cli::parse_duration("o", "5m") == 300'000'000'000);
  CHECK(cli::parse_duration("o", "250ms") == 250'000'000);
  CHECK(cli::parse_duration("o", "1.5h") == 5'400'000'000'000);
  CHECK_THROWS_AS(cli::parse_duration("o", "0s"), cli::option_error);
  CHECK_THROWS_AS(cli::parse_duration("o", "30"), cli::option_error);
  CHECK_THROWS_AS(cli::parse_duration("o", "soon"), cli::option_error);

  cli::flight_options f;
  auto none = [] { return std::string{}; };
  CHECK(f.parse("--flight-recorder=5m", none));
  CHECK(f.enabled);
  CHECK(f.keep_ns == 300'000'000'000);
  CHECK(f.ring_bytes == cli::duration_ring_bytes);
  CHECK(f.parse("--flight-recorder=64MB", none));
  CHECK(f.keep_ns == 0);
  CHECK(f.ring_bytes == 64ULL << 20U);
  CHECK_FALSE(f.parse("--flight", none));
  CHECK(f.parse("--trigger-max", [] { return std::string{"3"}; }));
  CHECK(f.trigger_max == 3);
  CHECK_NOTHROW(f.validate());
  cli::flight_options g;
  CHECK(g.parse("--hang-timeout=2s", none));
  CHECK_THROWS_AS(g.validate(), cli::option_error);  // needs --flight-recorder
}

TEST_CASE("triggers") {
  auto t = cli::parse_trigger("step>3x");
  CHECK(t.range == "step");
  CHECK(t.domain.empty());
  CHECK(t.factor == 3.0);
  t = cli::parse_trigger("train step@trainer>250ms");
  CHECK(t.range == "train step");
  CHECK(t.domain == "trainer");
  CHECK(t.bound_ns == 250'000'000);
  t = cli::parse_trigger("a>b>2.5x");  // the last '>' splits
  CHECK(t.range == "a>b");
  CHECK(t.factor == 2.5);
  CHECK(cli::parse_trigger("x@*>1s").domain == "*");
  for (char const* bad : {"step", "step>", ">3x", "step>1x", "step>0.5x", "step>5parsecs", "@d>2x",
                          "step@>2x", "step>3"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(cli::parse_trigger(bad), cli::option_error);
  }
}

TEST_CASE("triggers on patterns: the range, the domain, escapes") {
  auto t = cli::parse_trigger("Train step *>2x");
  CHECK(t.range == "Train step *");
  CHECK(t.domain.empty());
  CHECK(t.factor == 2.0);
  t = cli::parse_trigger("Layer *@*>50ms");  // a pattern on the range and on the domain
  CHECK(t.range == "Layer *");
  CHECK(t.domain == "*");
  CHECK(t.bound_ns == 50'000'000);
  t = cli::parse_trigger("Layer [0-9]@train*>3x");
  CHECK(t.range == "Layer [0-9]");
  CHECK(t.domain == "train*");
  t = cli::parse_trigger("user\\@host>3x");  // an escaped '@' is part of the name
  CHECK(t.range == "user\\@host");
  CHECK(t.domain.empty());
  t = cli::parse_trigger("a\\@b@d>3x");
  CHECK(t.range == "a\\@b");
  CHECK(t.domain == "d");
  // Malformed patterns are refused, naming the trigger and what is wrong.
  for (char const* bad : {"Layer [0-9>2x", "step\\>2x", "x@[z-a]>2x", "[>3x"}) {
    CAPTURE(bad);
    try {
      static_cast<void>(cli::parse_trigger(bad));
      FAIL("accepted");
    } catch (cli::option_error const& e) {
      std::string const what = e.what();
      CHECK(what.find(std::string{"--trigger '"} + bad + "'") == 0);
      CHECK(what.find("pattern '") != std::string::npos);
      CHECK(what.find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("RANGE@DOMAIN and comma lists keep their escapes for the pattern") {
  auto const p = nvtxpp::capture::split_at_domain("a\\@b@c*");
  CHECK(p.range == "a\\@b");
  CHECK(p.domain == "c*");
  CHECK(p.has_domain);
  CHECK_FALSE(nvtxpp::capture::split_at_domain("user\\@host").has_domain);
  CHECK(nvtxpp::capture::split_at_domain("x@").domain.empty());
  CHECK(nvtxpp::capture::split_name_list("keep,de\\,fault,,dr*,\\default") ==
        std::vector<std::string>{"keep", "de\\,fault", "dr*", "\\default"});
}

namespace {

nvtxpp::capture::watch_trigger watch(cli::trigger_spec const& t) {
  return {t.text, t.range, t.domain, t.factor, t.bound_ns};
}

}  // namespace

TEST_CASE("a literal trigger is an exact name") {
  nvtxpp::capture::trigger_set s{
      {watch(cli::parse_trigger("step>3x")), watch(cli::parse_trigger("a\\*b>3x"))}};
  CHECK(s.matching("step") == std::vector<std::uint32_t>{0});
  CHECK(s.matching("step 1").empty());
  CHECK(s.matching("Step").empty());
  CHECK(s.matching("a*b") == std::vector<std::uint32_t>{1});  // an escaped star is a star
  CHECK(s.matching("axb").empty());
  CHECK(s.cached_names() == 0);  // no pattern: nothing is cached
  CHECK(s.domain_matches(0, 0, ""));
  CHECK_FALSE(s.domain_matches(0, 3, "trainer"));
  CHECK(s.never_seen().size() == 2);
  CHECK(s.never_seen()[0].find("range \"step\" never ended") != std::string::npos);
}

TEST_CASE("a pattern trigger keeps one running median over its instances") {
  nvtxpp::capture::trigger_set s{{watch(cli::parse_trigger("Train step *>3x")),
                                  watch(cli::parse_trigger("Train step 7>1s")),
                                  watch(cli::parse_trigger("Layer *@tr*>50ms"))}};
  CHECK(s.matching("Train step 7") == std::vector<std::uint32_t>{0, 1});
  CHECK(s.matching("Train step 12") == std::vector<std::uint32_t>{0});
  CHECK(s.matching("Train step").empty());
  CHECK(s.matching("Layer 3") == std::vector<std::uint32_t>{2});
  CHECK(s.cached_names() == 4);
  CHECK(s.matching("Train step 12") == std::vector<std::uint32_t>{0});  // from the cache
  CHECK(s.cached_names() == 4);
  // The domain: a pattern; the default domain is named "" (tr* does not match it).
  CHECK(s.domain_matches(2, 1, "trainer"));
  CHECK_FALSE(s.domain_matches(2, 1, "model"));
  CHECK_FALSE(s.domain_matches(2, 0, ""));
  CHECK(s.domain_matches(0, 0, ""));
  CHECK_FALSE(s.domain_matches(0, 1, "trainer"));
  // Steps 1..30 of 1 ms, step 31 of 5 ms: one series, so the 31st fires against the median of
  // the 30 before it (no single name has ten instances).
  for (int i = 1; i <= 30; ++i) {
    CHECK(s.measure(0, 1'000'000 + i).empty());
  }
  CHECK(s.median(0).size() == 30);
  std::string const why = s.measure(0, 5'000'000);
  CHECK(why.find("took 5.000 ms") != std::string::npos);
  CHECK(why.find("of its 30 earlier instance(s)") != std::string::npos);
  CHECK(s.fired(0) == 1);
  CHECK(s.seen(0) == 31);
  auto const notes = s.never_seen();
  REQUIRE(notes.size() == 2);
  CHECK(notes[1] ==
        "trigger 'Layer *@tr*>50ms': no range matching 'Layer *' ended in the "
        "program (no instance seen)");
}

TEST_CASE("numbered names that never repeat keep the cache bounded") {
  nvtxpp::capture::trigger_set s{{watch(cli::parse_trigger("step *>3x"))}};
  for (std::size_t i = 0; i < nvtxpp::capture::max_cached_names + 10; ++i) {
    CHECK(s.matching("step " + std::to_string(i)).size() == 1);
  }
  CHECK(s.cached_names() <= nvtxpp::capture::max_cached_names);
  CHECK(s.matching("other").empty());
}

TEST_CASE("dump and stacks names") {
  CHECK(cli::dump_name("out/trace.sqlite", 1) == "out/trace.dump1.sqlite");
  CHECK(cli::dump_name("trace.rank3.json", 12) == "trace.rank3.dump12.json");
  CHECK(cli::dump_name("trace", 2) == "trace.dump2");
  CHECK(cli::dump_name(cli::protect_dump_number("t.%n.json"), 4) == "t.4.json");
  CHECK(cli::protect_dump_number("100%%.%n") == "100%%.\x01");
  CHECK(cli::stacks_name("out/trace.rank3.json") == "out/trace.rank3.stacks.txt");
  CHECK(cli::stacks_name(cli::protect_dump_number("t.%n.json")) == "t..stacks.txt");
  CHECK(cli::stacks_name("dir.d/trace") == "dir.d/trace.stacks.txt");
}

TEST_CASE("the running median keeps the most recent instances") {
  nvtxpp::capture::running_median m;
  CHECK(m.median() == 0);
  for (int i = 1; i <= 5; ++i) {
    m.add(i * 10);
  }
  CHECK(m.median() == 30);
  m.add(1000);
  CHECK(m.median() == 35);
  for (std::size_t i = 0; i < nvtxpp::capture::median_window; ++i) {
    m.add(7);
  }
  CHECK(m.size() == nvtxpp::capture::median_window);
  CHECK(m.median() == 7);  // the early values are out of the window
}
