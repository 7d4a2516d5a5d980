// The merge on several threads, without SQL: the plan's arithmetic (tools/capture/merge/
// merge_plan.hpp) and the board and workers' contract (merge_stages.hpp) under threads. Runs in
// the release, ASan+UBSan and TSan stages (ctest name capture.merge_stages). Tests wait for
// conditions, never for time.

#include "merge/merge_stages.hpp"

#include "catch.hpp"

#include <stdlib.h>

#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace mg = nvtxpp::capture::merge;

namespace {

/// `n` inputs with nothing to cut.
std::vector<mg::input_extent> inputs(std::size_t n) { return std::vector<mg::input_extent>(n); }

/// NVTXPP_MERGE_PIECE_ROWS for one scope.
struct piece_rows {
  explicit piece_rows(char const* v) { ::setenv("NVTXPP_MERGE_PIECE_ROWS", v, 1); }
  ~piece_rows() { ::unsetenv("NVTXPP_MERGE_PIECE_ROWS"); }
  piece_rows(piece_rows const&) = delete;
  piece_rows& operator=(piece_rows const&) = delete;
};

}  // namespace

TEST_CASE("plan: each input's ids go past the previous inputs'") {
  std::vector<mg::input_extent> in(2);
  in[0].maxima = mg::id_maxima{10, 3, 4, 5, 6};
  in[0].shift_ns = 100;
  in[1].shift_ns = -7;
  mg::merge_plan const plan{in, 2, false};
  mg::offsets const& a = plan.offsets_of(0);
  CHECK(a.shift == 100);
  CHECK((a.correlation | a.domain | a.source | a.type | a.generic_event) == 0);
  mg::offsets const& b = plan.offsets_of(1);
  CHECK(b.shift == -7);
  CHECK(b.correlation == 10);  // ids 0 stay 0, so no gap is needed
  CHECK(b.domain == 3);
  CHECK(b.source == 5);  // ids from 0: one past the maximum
  CHECK(b.type == 6);
  CHECK(b.generic_event == 7);
}

TEST_CASE("plan: as many inputs as threads: each input whole, its per_input unit first") {
  mg::merge_plan const plan{inputs(2), 2, true};
  auto const& u = plan.units();
  REQUIRE(u.size() == 4);
  CHECK((u[0].input == 0 && u[0].per_input));
  CHECK((u[1].input == 0 && !u[1].per_input && u[1].piece == 0));
  CHECK((u[2].input == 1 && u[2].per_input));
  CHECK((u[3].input == 1 && !u[3].per_input && u[3].piece == 0));
  CHECK(plan.ordinal(1) == 0);
  CHECK(plan.ordinal(3) == 1);
  CHECK(plan.slots() == 2);
  CHECK(plan.last_piece(1));
  CHECK_FALSE(plan.last_piece(0));
}

TEST_CASE("plan: an input cut into pieces takes each table's rows once") {
  piece_rows const rows{"10"};
  std::vector<mg::input_extent> in(1);
  in[0].spans = {mg::rowid_span{1, 100}, mg::rowid_span{5, 7}, mg::rowid_span{}};
  for (bool const per_input : {false, true}) {
    mg::merge_plan const plan{in, 4, per_input};
    std::size_t const pieces = per_input ? 3 : 4;  // 4 units of work wanted, a summary among them
    REQUIRE(plan.pieces(0) == pieces);
    REQUIRE(plan.units().size() == pieces + (per_input ? 1 : 0));
    std::int64_t next = 1;
    for (std::size_t u = per_input ? 1 : 0; u < plan.units().size(); ++u) {
      auto const r = plan.ranges(u);
      REQUIRE(r.size() == 3);
      CHECK(r[0].what == mg::row_range::kind::span);
      CHECK(r[0].lo == next);
      CHECK(r[0].hi > r[0].lo);
      next = r[0].hi;
      bool const first = plan.units()[u].piece == 0;
      // Too few rows to cut, and an empty table: the first piece takes them whole.
      CHECK(r[1].what == (first ? mg::row_range::kind::all : mg::row_range::kind::none));
      CHECK(r[2].what == (first ? mg::row_range::kind::all : mg::row_range::kind::none));
      CHECK(plan.last_piece(u) == (u + 1 == plan.units().size()));
    }
    CHECK(next == 101);
  }
}

TEST_CASE("plan: no more slots than units") {
  mg::merge_plan const plan{inputs(1), 8, false};
  CHECK(plan.units().size() == 1);
  CHECK(plan.slots() == 1);
}

TEST_CASE("board: every unit runs once, no piece staged before its slot is free") {
  mg::merge_plan const plan{inputs(40), 3, true};
  mg::stage_board board{plan};
  std::vector<std::atomic<int>> runs(plan.units().size());
  std::atomic<std::size_t> appended{0};  // pieces the writer has appended (set before the board)
  std::atomic<bool> early{false};
  {
    mg::stage_workers workers{
        board, plan.slots(), [&](std::size_t u) {
          if (!plan.units()[u].per_input && plan.ordinal(u) >= appended.load() + plan.slots()) {
            early = true;
          }
          ++runs[u];
        }};
    for (std::size_t u = 0; u < plan.units().size(); ++u) {
      if (plan.units()[u].per_input) {
        continue;
      }
      auto const staged = board.wait(u);
      REQUIRE(staged.ended);
      REQUIRE_FALSE(staged.error);
      appended = plan.ordinal(u) + 1;
      board.appended(u);
    }
    for (std::size_t u = 0; u < plan.units().size(); ++u) {
      CHECK(board.wait(u).ended);
    }
  }
  CHECK_FALSE(early);
  for (auto const& n : runs) {
    CHECK(n.load() == 1);
  }
}

TEST_CASE("board: a unit that throws stops the merge; units not taken never run") {
  // One worker and one slot, so the units run in plan order: input 0's piece is appended, input
  // 1's (unit 1) throws, and nothing after it is taken.
  mg::merge_plan const plan{inputs(4), 1, false};
  mg::stage_board board{plan};
  std::vector<std::atomic<int>> runs(plan.units().size());
  {
    mg::stage_workers workers{board, 1, [&](std::size_t u) {
                                ++runs[u];
                                if (u == 1) {
                                  throw std::runtime_error{"unit 1"};
                                }
                              }};
    REQUIRE(board.wait(0).ended);
    board.appended(0);
    auto const failed = board.wait(1);
    CHECK(failed.ended);
    REQUIRE(failed.error);
    std::string message;  // (CHECK_THROWS_WITH needs Catch2 3's matchers header)
    try {
      std::rethrow_exception(failed.error);
    } catch (std::exception const& e) {
      message = e.what();
    }
    CHECK(message == "unit 1");
    auto const after = board.wait(2);  // returns although no worker will take it
    CHECK_FALSE(after.ended);
    CHECK_FALSE(board.poll(3).ended);
  }
  CHECK(runs[0].load() == 1);
  CHECK(runs[1].load() == 1);
  CHECK(runs[2].load() == 0);
  CHECK(runs[3].load() == 0);
}

TEST_CASE("workers: a writer that throws leaves no thread behind") {
  mg::merge_plan const plan{inputs(64), 4, true};
  mg::stage_board board{plan};
  std::atomic<std::size_t> ran{0};
  try {
    mg::stage_workers workers{board, plan.slots(), [&](std::size_t) { ++ran; }};
    REQUIRE(board.wait(1).ended);
    throw std::runtime_error{"writer"};  // workers now wait for slots the writer never frees
  } catch (std::runtime_error const&) {
  }
  CHECK(ran.load() < plan.units().size());
}
