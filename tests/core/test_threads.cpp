// Ranges on many threads at once: each thread's nesting holds.
#include <nvtxpp/nvtxpp.hpp>

#include <map>
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
