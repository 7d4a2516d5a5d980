// A program with no NVTX tool at all (no recorder linked): nothing is formatted, nothing breaks.
#include <nvtxpp/memory.hpp>
#include <nvtxpp/nvtxpp.hpp>

#include "catch.hpp"
#include "counted.hpp"

using nvtxpp_test::counted;

NVTXPP_DEFINE_DOMAIN(quiet_domain, "Quiet");

void annotated(int i) {
  ANNOTATE_FUNCTION(nvtxpp::colors::red);
  ANNOTATE_SCOPE("step {} {}", i, counted{});
  ANNOTATE_MARK("mark {}", counted{});
}

TEST_CASE("with no tool, ranges work and no text is ever formatted") {
  CHECK_FALSE(nvtxpp::is_enabled());
  CHECK_FALSE(nvtxpp::is_enabled<quiet_domain>());
  for (int i = 0; i < 1000; ++i) {
    nvtxpp::scoped_range a{"value {}", counted{}};
    nvtxpp::scoped_range_in<quiet_domain> b{"value {}", counted{}, nvtxpp::payload{i}};
    nvtxpp::start_end_range c{"value {}", counted{}};
    nvtxpp::mark("value {}", counted{});
    nvtxpp::name_current_thread("thread {}", counted{});
    annotated(i);
    CHECK_FALSE(c.running());
  }
  CHECK(counted::formatted == 0);
}

TEST_CASE("with no tool, memory annotations register nothing and format nothing") {
  static unsigned char pool[1024];
  counted::formatted = 0;
  for (int i = 0; i < 100; ++i) {
    nvtxpp::heap h{pool, sizeof pool, "heap {}", counted{}};
    CHECK_FALSE(h.registered());
    auto r = h.region(pool, 64, "region {}", counted{});
    CHECK_FALSE(r.registered());
    CHECK(r.data() == pool);
    { nvtxpp::access_scope s{r, nvtxpp::access::none}; }
  }
  CHECK(counted::formatted == 0);
}
