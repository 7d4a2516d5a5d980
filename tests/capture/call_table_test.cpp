// The call table (tools/recording/call_table.hpp) on its own: a reader never returns a torn
// slot while its owner enters and leaves calls as fast as it can, slots are claimed once each,
// and a copy shows the calls outermost first. Runs in the release, ASan+UBSan and TSan stages
// (ctest name capture.call_table). Tests wait for conditions (counts), never for time.

#include "../../tools/recording/call_table.hpp"

#include "catch.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace rec = nvtxpp::recording;

namespace {

/// A zeroed, aligned region holding one table.
struct table {
  std::unique_ptr<std::uint64_t[]> words{new std::uint64_t[rec::call_table_bytes() / 8 + 8]()};
  rec::call_table_header* header = nullptr;
  table() {
    auto addr = reinterpret_cast<std::uintptr_t>(words.get());
    header = rec::make_call_table(reinterpret_cast<void*>((addr + 63) & ~std::uintptr_t{63}));
  }
  [[nodiscard]] std::vector<rec::call_state> read() const {
    return rec::read_call_table(header, rec::call_table_bytes());
  }
};

}  // namespace

TEST_CASE("a copy shows the calls a thread is inside, outermost first") {
  table t;
  rec::call_slot& s = rec::call_slots(t.header)[5];
  s.tid.store(42);
  CHECK(t.read().empty());  // claimed, in no call
  rec::call_enter(s, "cudaStreamSynchronize_v3020", 100, false);
  rec::call_enter(s, "cuStreamSynchronize", 200, false);
  rec::call_enter(s, "cuInternalThing", 300, false);  // deeper than the frames kept
  auto const got = t.read();
  REQUIRE(got.size() == 1);
  CHECK(got[0].tid == 42);
  CHECK(got[0].depth == 3);
  REQUIRE(got[0].frames.size() == 2);
  CHECK(got[0].frames[0].name == "cudaStreamSynchronize_v3020");
  CHECK(got[0].frames[0].start_ticks == 100);
  CHECK(got[0].frames[1].name == "cuStreamSynchronize");
  CHECK(got[0].frames[1].start_ticks == 200);
  rec::call_exit(s);
  rec::call_exit(s);
  rec::call_enter(s, "cuStreamSynchronize", 250, true);  // same name: only the time written
  CHECK(t.read()[0].frames[1].name == "cuStreamSynchronize");
  CHECK(t.read()[0].frames[1].start_ticks == 250);
  rec::call_exit(s);
  rec::call_exit(s);
  CHECK(t.read().empty());
  rec::call_exit(s);  // one exit too many (a call entered before the table): depth stays 0
  CHECK(s.depth.load() == 0);
}

TEST_CASE("a long name is cut, never overruns its frame") {
  table t;
  rec::call_slot& s = rec::call_slots(t.header)[0];
  s.tid.store(7);
  std::string const name(200, 'x');
  rec::call_enter(s, name.c_str(), 1, false);
  auto const got = t.read();
  REQUIRE(got.size() == 1);
  CHECK(got[0].frames[0].name == std::string(rec::call_name_bytes - 1, 'x'));
  CHECK(rec::read_call_table(t.header, rec::call_table_bytes() - 1).empty());  // short region
  CHECK(rec::read_call_table(nullptr, 0).empty());
}

TEST_CASE("readers never see a torn slot while owners enter and leave calls") {
  table t;
  constexpr int writers = 3;
  constexpr std::uint64_t copies_wanted = 20'000;  // copies of a slot taken mid-call
  std::atomic<bool> stop{false};
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      rec::call_slot& s = rec::call_slots(t.header)[w];
      s.tid.store(static_cast<std::uint64_t>(100 + w));
      for (std::uint64_t i = 1; !stop.load(std::memory_order_relaxed); ++i) {
        // Frame 0's name and time go together ("even" with even times), as do frame 1's.
        bool const even = i % 2 == 0;
        auto const ns = static_cast<std::int64_t>(i);
        rec::call_enter(s, even ? "cudaEvenOuterCall" : "cudaOddOuterCallWithALongerName", ns,
                        false);
        rec::call_enter(s, even ? "cuEven" : "cuOdd", ns, false);
        rec::call_exit(s);
        rec::call_exit(s);
      }
      done.fetch_add(1);
    });
  }
  std::uint64_t copies = 0;
  bool torn = false;
  while (copies < copies_wanted) {
    for (auto const& c : t.read()) {
      ++copies;
      if (c.frames.empty() || c.frames.size() != std::min<std::uint32_t>(c.depth, 2)) {
        torn = true;
        continue;
      }
      bool const even = c.frames[0].start_ticks % 2 == 0;
      torn = torn ||
             c.frames[0].name != (even ? "cudaEvenOuterCall" : "cudaOddOuterCallWithALongerName");
      if (c.frames.size() == 2) {
        torn = torn || c.frames[1].start_ticks != c.frames[0].start_ticks ||
               c.frames[1].name != (even ? "cuEven" : "cuOdd");
      }
    }
  }
  stop.store(true);
  for (auto& th : threads) {
    th.join();
  }
  CHECK_FALSE(torn);
  CHECK(done.load() == writers);
  CHECK(t.read().empty());
}
