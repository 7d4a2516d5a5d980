// The flight recorder's options and names (tools/capture/cli/flight_options.hpp), and the
// watcher's running median. The launcher's behaviour end to end is in flight_tests.py.
#include "cli/flight_options.hpp"
#include "offline/flight_watch.hpp"

#include "catch.hpp"

namespace cli = nvtxpp::capture::cli;

TEST_CASE("LIMIT is a size or a duration") {
  CHECK(cli::parse_size("o", "64MB") == 64ULL << 20U);
  CHECK(cli::parse_size("o", "1GB") == 1ULL << 30U);
  CHECK(cli::parse_size("o", "512kib") == 512ULL << 10U);
  CHECK(cli::parse_size("o", "4096B") == 4096);
  CHECK(cli::parse_size("o", "30s") == 0);  // not a size
  CHECK_THROWS_AS(cli::parse_size("o", "abc"), cli::option_error);
  CHECK_THROWS_AS(cli::parse_size("o", "-1MB"), cli::option_error);
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
