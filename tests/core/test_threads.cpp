// Ranges on many threads at once: each thread's nesting holds.
#include <nvtxpp/nvtxpp.hpp>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "recording.hpp"

using namespace nvtxpp_test;

TEST_CASE("8 threads pushing and popping concurrently keep their own nesting") {
  constexpr int threads = 8;
  constexpr int iterations = 2000;
  nvtxpp::testing::recorder rec;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([t] {
      nvtxpp::name_current_thread("worker {}", t);
      for (int i = 0; i < iterations; ++i) {
        nvtxpp::scoped_range outer{"outer {}", t};
        nvtxpp::scoped_range inner{"inner {} {}", t, i};
      }
    });
  }
  for (auto& th : pool) th.join();

  std::map<std::uint64_t, std::vector<event>> per_thread;
  for (auto const& e : annotations(rec)) per_thread[e.thread_id].push_back(e);
  REQUIRE(per_thread.size() == threads);
  for (auto const& [tid, events] : per_thread) {
    REQUIRE(events.size() == 4u * iterations);
    std::string const worker = events.front().thread_name;
    REQUIRE(worker.rfind("worker ", 0) == 0);
    std::string const t = worker.substr(7);
    for (std::size_t k = 0; k < events.size(); k += 4) {
      auto const i = std::to_string(k / 4);
      CHECK(events[k].type == event_type::push);
      CHECK(events[k].message == "outer " + t);
      CHECK(events[k].depth == 0);
      CHECK(events[k + 1].message == "inner " + t + " " + i);
      CHECK(events[k + 1].depth == 1);
      CHECK(events[k + 2].type == event_type::pop);
      CHECK(events[k + 2].depth == 1);
      CHECK(events[k + 3].type == event_type::pop);
      CHECK(events[k + 3].depth == 0);
    }
  }
  CHECK(rec.warnings().empty());
}

NVTXPP_DEFINE_DOMAIN(race_domain, "Race");

namespace {
void raced_scope() { ANNOTATE_SCOPE_IN(race_domain, "raced site"); }
}  // namespace

TEST_CASE("8 threads meeting the same literals first at once: every event has its text") {
  constexpr int threads = 8;
  constexpr int iterations = 1000;
  nvtxpp::testing::recorder rec;
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&ready] {
      ready.fetch_add(1);
      while (ready.load() < threads) {
      }
      for (int i = 0; i < iterations; ++i) {
        nvtxpp::scoped_range_in<race_domain> r{"raced literal"};
        raced_scope();
        nvtxpp::mark_in<race_domain>("raced mark");
      }
    });
  }
  for (auto& th : pool) th.join();
  std::map<std::string, int> count;
  std::map<std::string, int> registered;
  for (auto const& e : rec.events()) {
    if (e.domain != "Race" || (e.type != event_type::push && e.type != event_type::mark)) continue;
    ++count[e.message];
    registered[e.message] += e.registered ? 1 : 0;
    CHECK(*e.color == nvtxpp::auto_color(e.message).argb());
  }
  CHECK(count == std::map<std::string, int>{{"raced literal", threads * iterations},
                                            {"raced site", threads * iterations},
                                            {"raced mark", threads * iterations}});
  // Only events racing with the first registration may go as plain text.
  for (auto const& [text, n] : registered) {
    INFO("\"" << text << "\": " << n << " of its events registered");
    CHECK(n > threads * iterations - 100);
  }
}
