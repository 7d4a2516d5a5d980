// The CUPTI session's lifecycle (tools/capture/inprocess/cuda/cupti_session.hpp): where a period
// starts and ends, when CUPTI detaches and attaches, and what a refusal falls back to.
#include "inprocess/cuda/cupti_session.hpp"

#include "catch.hpp"

using nvtxpp::capture::cupti::session_state;
using act = session_state::action;
using phase = session_state::phase;

TEST_CASE("a period ends drained, flushed and detached at a call's exit; the next attaches") {
  session_state s;
  CHECK(s.want(true) == act::none);  // not loaded: nothing to switch
  s.loaded(true);
  CHECK(s.attached_now());
  CHECK(s.want(true) == act::none);
  CHECK(s.api_exit() == act::none);  // nothing armed: calls return as they are
  CHECK(s.want(false) == act::drain);
  CHECK(s.now() == phase::draining);
  CHECK(s.api_exit() == act::none);  // not before the drain
  CHECK(s.drained(s.generation()) == act::arm);
  CHECK(s.now() == phase::armed);
  CHECK(s.api_exit() == act::finalize);
  s.finalized(true);
  CHECK(s.now() == phase::detached);
  CHECK_FALSE(s.attached_now());
  CHECK(s.api_exit() == act::none);
  CHECK(s.want(false) == act::none);
  CHECK(s.want(true) == act::attach);
  s.attached(true);
  CHECK(s.now() == phase::recording);
  CHECK(s.want(false) == act::drain);
}

TEST_CASE("a period that starts again before the detach keeps CUPTI attached") {
  session_state s;
  s.loaded(true);
  CHECK(s.want(false) == act::drain);
  auto const first = s.generation();
  CHECK(s.want(true) == act::enable_kinds);  // during the drain
  CHECK(s.drained(first) == act::none);      // that drain no longer arms
  CHECK(s.now() == phase::recording);
  CHECK(s.want(false) == act::drain);
  CHECK(s.drained(first) == act::none);  // a stale drain never arms a later period's end
  CHECK(s.drained(s.generation()) == act::arm);
  CHECK(s.want(true) == act::disarm);  // armed, no call returned yet
  CHECK(s.now() == phase::recording);
  CHECK(s.api_exit() == act::none);
}

TEST_CASE("a refused detach falls back to switching the kinds, for good") {
  session_state s;
  s.loaded(true);
  CHECK(s.want(false) == act::drain);
  CHECK(s.drained(s.generation()) == act::arm);
  CHECK(s.api_exit() == act::finalize);
  s.finalized(false);
  CHECK(s.now() == phase::switched_off);
  CHECK_FALSE(s.detach_allowed());
  CHECK(s.want(true) == act::enable_kinds);
  CHECK(s.want(false) == act::disable_kinds);
  CHECK(s.want(true) == act::enable_kinds);
}

TEST_CASE("detaching waits until it is allowed; then it starts at once if nothing records") {
  session_state s;
  s.loaded(false);
  CHECK(s.want(false) == act::disable_kinds);
  CHECK(s.now() == phase::switched_off);
  CHECK(s.allow_detach() == act::drain);
  CHECK(s.now() == phase::draining);
  session_state t;
  t.loaded(false);
  CHECK(t.allow_detach() == act::none);  // recording: the period's end will drain
  CHECK(t.want(false) == act::drain);
}

TEST_CASE(
    "held (a cudaProfilerApi window may still open), periods end attached; released, it "
    "detaches") {
  session_state s;
  s.loaded(false);
  CHECK(s.hold(true) == act::none);
  CHECK(s.want(false) == act::disable_kinds);  // before the first window
  CHECK(s.allow_detach() == act::none);        // allowed, but held
  CHECK(s.now() == phase::switched_off);
  CHECK_FALSE(s.detaches());
  CHECK(s.want(true) == act::enable_kinds);  // a window
  CHECK(s.want(false) == act::disable_kinds);
  CHECK(s.api_exit() == act::none);
  CHECK(s.hold(false) == act::drain);  // the last window closed: detach now
  CHECK(s.now() == phase::draining);
  CHECK(s.drained(s.generation()) == act::arm);
  CHECK(s.api_exit() == act::finalize);
  session_state t;  // released while a window records: its end detaches
  t.loaded(true);
  CHECK(t.hold(true) == act::none);
  CHECK(t.hold(false) == act::none);
  CHECK(t.now() == phase::recording);
  CHECK(t.want(false) == act::drain);
}

TEST_CASE("a failed attach stays detached and tries again; closed switches nothing") {
  session_state s;
  s.loaded(true);
  s.want(false);
  s.drained(s.generation());
  s.api_exit();
  s.finalized(true);
  CHECK(s.want(true) == act::attach);
  s.attached(false);
  CHECK(s.now() == phase::detached);
  CHECK(s.want(true) == act::attach);
  s.close();
  CHECK(s.want(true) == act::none);
  CHECK(s.want(false) == act::none);
  CHECK(s.api_exit() == act::none);
}
