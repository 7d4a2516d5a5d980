// nvtxpp/macros.hpp: one-line annotation of functions and scopes.
#include <nvtxpp/macros.hpp>

#include "catch.hpp"
#include "recording.hpp"

using namespace nvtxpp_test;

NVTXPP_DEFINE_DOMAIN(macro_domain, "Macros");

namespace {
void plain_function() { ANNOTATE_FUNCTION(); }
void coloured_function() { ANNOTATE_FUNCTION(nvtxpp::colors::red, nvtxpp::payload{5}); }
void domain_function() { NVTXPP_FUNCTION_IN(macro_domain, nvtxpp::category{2}); }
void conditional_function(bool on) { ANNOTATE_FUNCTION_IF(on, nvtxpp::colors::blue); }
void conditional_domain_function(bool on) { ANNOTATE_FUNCTION_IN_IF(macro_domain, on); }
void two_in_one_scope(int i) {
  ANNOTATE_FUNCTION();
  NVTXPP_FUNCTION();
  ANNOTATE_SCOPE("step {}", i);
  ANNOTATE_SCOPE("step {}", i + 1);
  ANNOTATE_MARK("mark {}", i);
}
}  // namespace

TEST_CASE("ANNOTATE_FUNCTION names the range after the function, as a registered string") {
  nvtxpp::testing::recorder rec;
  plain_function();
  plain_function();
  auto const ev = annotations(rec);
  REQUIRE(ev.size() == 4);
  CHECK(ev[0].type == event_type::push);
  CHECK(ev[0].message == "plain_function");
  CHECK(ev[0].registered);
  CHECK(*ev[0].color == nvtxpp::auto_color("plain_function").argb());
  CHECK(ev[1].type == event_type::pop);
  CHECK(ev[2].message == "plain_function");
}

TEST_CASE("ANNOTATE_FUNCTION takes attributes; the _IN form takes a domain") {
  nvtxpp::testing::recorder rec;
  coloured_function();
  domain_function();
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 2);
  CHECK(pushes[0].message == "coloured_function");
  CHECK(*pushes[0].color == nvtxpp::colors::red.argb());
  CHECK(std::get<std::int32_t>(pushes[0].payload) == 5);
  CHECK(pushes[1].message == "domain_function");
  CHECK(pushes[1].domain == "Macros");
  CHECK(pushes[1].category == 2u);
}

TEST_CASE("the _IF forms annotate only when their condition holds") {
  nvtxpp::testing::recorder rec;
  conditional_function(false);
  conditional_function(true);
  conditional_domain_function(false);
  conditional_domain_function(true);
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 2);
  CHECK(pushes[0].message == "conditional_function");
  CHECK(*pushes[0].color == nvtxpp::colors::blue.argb());
  CHECK(pushes[1].message == "conditional_domain_function");
  CHECK(pushes[1].domain == "Macros");
  CHECK(only(rec.events(), {event_type::pop}).size() == 2);
}

TEST_CASE("several macros share one scope and nest in order") {
  nvtxpp::testing::recorder rec;
  two_in_one_scope(4);
  auto const ev = annotations(rec);
  REQUIRE(ev.size() == 9);
  CHECK(ev[0].message == "two_in_one_scope");
  CHECK(ev[1].message == "two_in_one_scope");
  CHECK(ev[1].depth == 1);
  CHECK(ev[2].message == "step 4");
  CHECK(ev[3].message == "step 5");
  CHECK(ev[3].depth == 3);
  CHECK(ev[4].type == event_type::mark);
  CHECK(ev[4].message == "mark 4");
  for (int i = 5; i < 9; ++i) CHECK(ev[static_cast<std::size_t>(i)].type == event_type::pop);
}

namespace {
void literal_scope() { ANNOTATE_SCOPE("Kernels", nvtxpp::payload{1}); }
void literal_scope_in_domain() { NVTXPP_SCOPE_IN(macro_domain, "Kernels"); }
// A const array whose bytes differ between calls at (most likely) the same address: the call
// site's cache must notice and send the new text.
void changing_array(char first) {
  char const name[4] = {first, 'x', 'y', '\0'};
  ANNOTATE_SCOPE(name);
}
void mutable_array(char first) {
  char name[4] = {first, 'x', 'y', '\0'};
  ANNOTATE_SCOPE(name);
}
}  // namespace

TEST_CASE("ANNOTATE_SCOPE with a literal registers it once per call site") {
  nvtxpp::testing::recorder rec;
  literal_scope();
  literal_scope();
  literal_scope_in_domain();
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 3);
  for (auto const& p : pushes) {
    CHECK(p.message == "Kernels");
    CHECK(p.registered);
    CHECK(*p.color == nvtxpp::auto_color("Kernels").argb());
  }
  CHECK(std::get<std::int32_t>(pushes[1].payload) == 1);
  CHECK(pushes[0].domain.empty());
  CHECK(pushes[2].domain == "Macros");
  CHECK(only(rec.events(), {event_type::pop}).size() == 3);
}

TEST_CASE("ANNOTATE_SCOPE's call-site cache never sends stale text") {
  nvtxpp::testing::recorder rec;
  changing_array('a');
  changing_array('b');
  changing_array('b');
  mutable_array('c');
  mutable_array('d');
  auto const pushes = only(rec.events(), {event_type::push});
  REQUIRE(pushes.size() == 5);
  CHECK(pushes[0].message == "axy");
  CHECK(pushes[1].message == "bxy");
  CHECK(pushes[2].message == "bxy");
  CHECK(pushes[3].message == "cxy");
  CHECK(pushes[4].message == "dxy");
  CHECK(pushes[0].registered);  // the first text this site saw
  for (auto const& p : pushes) CHECK(*p.color == nvtxpp::auto_color(p.message).argb());
}

TEST_CASE("scope macros: domain and condition forms") {
  nvtxpp::testing::recorder rec;
  {
    NVTXPP_SCOPE_IN(macro_domain, "in {}", "domain", nvtxpp::colors::gold);
    ANNOTATE_SCOPE_IF(false, "never");
    ANNOTATE_SCOPE_IN_IF(macro_domain, true, "maybe {}", 1);
    NVTXPP_MARK_IN(macro_domain, "instant");
  }
  auto const ev = annotations(rec);
  REQUIRE(ev.size() == 5);
  CHECK(ev[0].message == "in domain");
  CHECK(ev[0].domain == "Macros");
  CHECK(*ev[0].color == nvtxpp::colors::gold.argb());
  CHECK(ev[1].message == "maybe 1");
  CHECK(ev[2].message == "instant");
  CHECK(ev[2].domain == "Macros");
}
