// What the flight recorder's watcher pays per range end to find the triggers a range belongs
// to (tools/capture/flight/flight_triggers.hpp; docs/leave-it-on.md, "Triggers"): the launcher
// runs this for every range the program ends, so it must not grow with patterns.
//
//   before/*   the matching as flight_watch.cpp did it before patterns (commit cd4397b): every
//              trigger's name compared, the domain's name copied, per range end
//   literal/*  now, exact names: one hash lookup
//   pattern/*  now, a pattern: a hash lookup of the cache; a name seen for the first time is
//              matched and cached (`fresh`: every numbered name new, the worst case)
//
// Each iteration is one range end of a stream like a trainer's: the watched range and an inner
// one ("work", "forward") in turn. The measured instance itself (running median) is the same
// before and after and is left out.
#include "flight/flight_triggers.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace {

namespace cap = nvtxpp::capture;

/// The loop flight_watch::range_ended ran before patterns, without the measuring.
struct before_triggers {
  std::vector<cap::watch_trigger> specs;
  std::size_t hits(std::map<std::uint32_t, std::string> const& domains, std::string const& name,
                   std::uint32_t domain) const {
    auto const d = domains.find(domain);
    std::string const domain_name = d != domains.end() ? d->second : "";
    std::size_t n = 0;
    for (auto const& t : specs) {
      if (t.range != name ||
          !(t.domain == "*" || (t.domain.empty() ? domain == 0 : domain_name == t.domain))) {
        continue;
      }
      ++n;
    }
    return n;
  }
};

/// What range_ended does now before measuring.
std::size_t now_hits(cap::trigger_set& s, std::map<std::uint32_t, std::string> const& domains,
                     std::string const& name, std::uint32_t domain) {
  auto const& hits = s.matching(name);
  if (hits.empty()) {
    return 0;
  }
  auto const d = domains.find(domain);
  std::string_view const domain_name = d != domains.end() ? d->second : std::string_view{};
  std::size_t n = 0;
  for (std::uint32_t i : hits) {
    n += s.domain_matches(i, domain, domain_name) ? 1U : 0U;
  }
  return n;
}

cap::watch_trigger trigger(std::string range, std::string domain = {}) {
  return {range + ">3x", range, std::move(domain), 3.0, 0};
}

std::map<std::uint32_t, std::string> const domains{{1, "trainer"}};

/// "step", "work" in turn.
std::vector<std::string> plain_stream() { return {"step", "work"}; }
/// "Train step K" and "forward" in turn; `distinct` numbered names.
std::vector<std::string> numbered_stream(std::size_t distinct) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < distinct; ++k) {
    out.push_back("Train step " + std::to_string(k));
    out.push_back("forward");
  }
  return out;
}

template <class F>
void run(benchmark::State& state, std::vector<std::string> const& names, F&& f) {
  std::size_t i = 0;
  std::size_t total = 0;
  for (auto _ : state) {
    total += f(names[i]);
    i = i + 1 == names.size() ? 0 : i + 1;
  }
  benchmark::DoNotOptimize(total);
}

void before_literal(benchmark::State& state) {
  before_triggers b{{trigger("step")}};
  run(state, plain_stream(), [&](std::string const& n) { return b.hits(domains, n, 0); });
}
void literal_now(benchmark::State& state) {
  cap::trigger_set s{{trigger("step")}};
  run(state, plain_stream(), [&](std::string const& n) { return now_hits(s, domains, n, 0); });
}
void before_literal_domain(benchmark::State& state) {
  before_triggers b{{trigger("step", "trainer"), trigger("other"), trigger("third", "*")}};
  run(state, plain_stream(), [&](std::string const& n) { return b.hits(domains, n, 1); });
}
void literal_domain_now(benchmark::State& state) {
  cap::trigger_set s{{trigger("step", "trainer"), trigger("other"), trigger("third", "*")}};
  run(state, plain_stream(), [&](std::string const& n) { return now_hits(s, domains, n, 1); });
}
void pattern_repeating(benchmark::State& state) {
  // Numbered names that come back (layers, a bounded step count): cache hits.
  cap::trigger_set s{{trigger("Train step *")}};
  auto const names = numbered_stream(12);
  run(state, names, [&](std::string const& n) { return now_hits(s, domains, n, 0); });
}
void pattern_fresh(benchmark::State& state) {
  // A new step number at every step (200,000 of them, more than the cache keeps).
  cap::trigger_set s{{trigger("Train step *")}};
  auto const names = numbered_stream(200'000);
  run(state, names, [&](std::string const& n) { return now_hits(s, domains, n, 0); });
}

}  // namespace

BENCHMARK(before_literal)->Name("before/literal");
BENCHMARK(literal_now)->Name("literal/literal");
BENCHMARK(before_literal_domain)->Name("before/three_with_domains");
BENCHMARK(literal_domain_now)->Name("literal/three_with_domains");
BENCHMARK(pattern_repeating)->Name("pattern/repeating_names");
BENCHMARK(pattern_fresh)->Name("pattern/fresh_names");
BENCHMARK_MAIN();
