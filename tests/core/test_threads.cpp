// Ranges on many threads at once: each thread's nesting holds.
#include <nvtxpp/nvtxpp.hpp>

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <utility>
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

namespace {
/// A domain type per round: each has its own literal caches and call site, so every round is a
/// first meeting of the same texts (all named "Race" for NVTX).
template <int Round>
struct race_domain {
  static constexpr char const* name = "Race";
};

template <int Round>
void raced_scope() {
  ANNOTATE_SCOPE_IN(race_domain<Round>, "raced site");
}

/// 8 threads meet the literals of round `Round` first at once: a range's text (a cache of its
/// length), a call site's ("raced site"), and a mark whose text has that site's length (the same
/// cache as the site's fallback used to be).
template <int Round>
void race_round(int threads, int iterations) {
  nvtxpp::testing::recorder rec;
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&ready, threads, iterations] {
      ready.fetch_add(1);
      while (ready.load() < threads) {
      }
      for (int i = 0; i < iterations; ++i) {
        raced_scope<Round>();  // first: the threads leave the barrier into the call site
        nvtxpp::scoped_range_in<race_domain<Round>> r{"raced literal"};
        nvtxpp::mark_in<race_domain<Round>>("raced mark");
      }
    });
  }
  for (auto& th : pool) th.join();
  std::map<std::string, int> count;
  std::map<std::string, int> registered;
  // Per thread and text: whether an event went registered, and a plain one after that.
  std::map<std::pair<std::uint64_t, std::string>, bool> went_registered;
  int plain_after_registered = 0;
  int wrong_colour = 0;
  for (auto const& e : rec.events()) {
    if (e.domain != "Race" || (e.type != event_type::push && e.type != event_type::mark)) continue;
    ++count[e.message];
    registered[e.message] += e.registered ? 1 : 0;
    bool& before = went_registered[{e.thread_id, e.message}];
    plain_after_registered += before && !e.registered ? 1 : 0;
    before = before || e.registered;
    wrong_colour += e.color == nvtxpp::auto_color(e.message).argb() ? 0 : 1;
  }
  CHECK(wrong_colour == 0);
  INFO("round " << Round);
  CHECK(count == std::map<std::string, int>{{"raced literal", threads * iterations},
                                            {"raced site", threads * iterations},
                                            {"raced mark", threads * iterations}});
  // Every text got registered; a thread sends it as plain text only while its registration is
  // under way in another thread (however long a preempted thread takes), never after it saw it.
  for (auto const& [text, n] : registered) {
    INFO("\"" << text << "\": " << n << " of its events registered");
    CHECK(n > 0);
  }
  CHECK(plain_after_registered == 0);
  // Each text took one slot of its length's cache, and the site's text none: the mark is the
  // only text of 11 bytes given to the classes. (Before the cache enrolled one thread at a time,
  // 2 or 3 of the 4 slots were taken here in 2 rounds of 5, and all 4 starved the mark.)
  int taken = 0;
  for (auto const& slot : nvtxpp::detail::literal_cache<race_domain<Round>, 11>::site) {
    taken += slot.vacant() ? 0 : 1;
  }
  CHECK(taken == 1);
}

template <int... Rounds>
void race_rounds(std::integer_sequence<int, Rounds...>, int threads, int iterations) {
  (race_round<Rounds>(threads, iterations), ...);
}
}  // namespace

TEST_CASE("8 threads meeting the same literals first at once: every event has its text") {
  // 32 first meetings: each thread starts a round with the same texts unregistered. (Once, the
  // site's threads that found its registration under way each took a slot of the domain's cache
  // for it, and the mark of that length never got one: 0 of its events registered.)
  race_rounds(std::make_integer_sequence<int, 32>{}, 8, 50);
}
