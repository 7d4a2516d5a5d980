// Built with NVTXPP_DISABLE: every annotation compiles out. Macro arguments are type-checked but
// never evaluated; ctest also checks that this binary holds no NVTX symbol.
#include <nvtxpp/counter.hpp>
#include <nvtxpp/memory.hpp>
#include <nvtxpp/nvtxpp.hpp>
#include <nvtxpp/struct_payload.hpp>

#include "catch.hpp"

#if NVTXPP_ENABLED
#error "this test must be built with NVTXPP_DISABLE"
#endif

NVTXPP_DEFINE_DOMAIN(off_domain, "Off");

namespace app {
struct chunk {
  unsigned stream;
  unsigned long long bytes;
};
NVTXPP_PAYLOAD_SCHEMA(chunk, stream, bytes);  // still checked when compiled out
}  // namespace app

namespace {
int side_effects = 0;
int touch() { return ++side_effects; }
bool touch_bool() { return ++side_effects > 0; }
app::chunk touch_chunk() {
  ++side_effects;
  return {1, 2};
}

void annotated() {
  ANNOTATE_FUNCTION(nvtxpp::payload{touch()});
  ANNOTATE_FUNCTION_IN(off_domain, nvtxpp::payload{touch()});
  ANNOTATE_FUNCTION_IF(touch_bool(), nvtxpp::colors::red);
  ANNOTATE_FUNCTION_IN_IF(off_domain, touch_bool());
  ANNOTATE_SCOPE("step {}", touch());
  ANNOTATE_SCOPE_IN(off_domain, "step {} {}", touch(), touch());
  ANNOTATE_SCOPE_IF(touch_bool(), "x");
  ANNOTATE_SCOPE_IN_IF(off_domain, touch_bool(), "y {}", touch());
  ANNOTATE_MARK("mark {}", touch());
  ANNOTATE_MARK_IN(off_domain, "mark {}", touch(), nvtxpp::colors::blue);
  ANNOTATE_SCOPE("copy", nvtxpp::payload_of(touch_chunk()));
  ANNOTATE_SCOPE_IN(off_domain, "copy {}", touch(), nvtxpp::payload_of(touch_chunk()));
  ANNOTATE_MARK("copied", nvtxpp::payload_of(touch_chunk()));
  ANNOTATE_FUNCTION(nvtxpp::payload_of(touch_chunk()));
  ANNOTATE_FUNCTION(nvtxpp::function_names::signature, nvtxpp::payload{touch()});
  ANNOTATE_FUNCTION_IN_IF(off_domain, touch_bool(), nvtxpp::function_names::bare);
}
}  // namespace

TEST_CASE("compiled out: macro arguments are never evaluated") {
  annotated();
  CHECK(side_effects == 0);
  CHECK_FALSE(nvtxpp::is_enabled());
}

TEST_CASE("compiled out: the classes keep their API and do nothing") {
  nvtxpp::scoped_range r{"x {}", 1, nvtxpp::colors::red};
  nvtxpp::start_end_range s{"y"};
  CHECK_FALSE(s.running());
  s.end();
  nvtxpp::mark("z");
  nvtxpp::name_current_thread("t {}", 2);
  CHECK(nvtxpp::current_thread_id() == 0u);
}

TEST_CASE("compiled out: counters keep their API and running total, and call no NVTX") {
  static nvtxpp::counter<std::int64_t> c{"off", nvtxpp::counter_unit{"B"},
                                         nvtxpp::counter_limits<std::int64_t>{0, 10}};
  c.sample(3);
  c.sample_no_value(nvtxpp::no_value_reason::zero);
  std::int64_t const values[] = {1, 2};
  c.sample_batch(values);
  {
    nvtxpp::gauge g{c, std::int64_t{5}};
    CHECK(c.total() == 5);
  }
  CHECK(c.total() == 0);
}

TEST_CASE("compiled out: struct payloads keep their API and schema, and call no NVTX") {
  STATIC_REQUIRE(nvtxpp::has_payload_schema<app::chunk>);
  STATIC_REQUIRE(nvtxpp::payload_schema<app::chunk>.fields.size() == 2);
  STATIC_REQUIRE(nvtxpp::payload_schema<app::chunk>.fields[1].offset ==
                 offsetof(app::chunk, bytes));
  app::chunk const c{3, 4};
  nvtxpp::scoped_range r{"copy {}", 1, nvtxpp::payload_of(c)};
  nvtxpp::start_end_range s{"copy", nvtxpp::payload_of(c)};
  nvtxpp::mark_in<off_domain>("copied", nvtxpp::payload_of(c));
  CHECK(&nvtxpp::payload_of(c).value() == &c);
  CHECK_FALSE(s.running());
}

TEST_CASE("compiled out: memory annotations keep their API, format nothing, call no NVTX") {
  static unsigned char pool[256];
  nvtxpp::heap h{pool, sizeof pool, "heap {}", touch()};
  CHECK_FALSE(h.registered());
  auto r = h.region(pool, 16, "region {}", touch());
  CHECK_FALSE(r.registered());
  CHECK(r.data() == pool);
  CHECK(r.size() == 16);
  CHECK_FALSE(r.resize(8));
  r.name("n {}", touch());
  nvtxpp::memory_range const ranges[] = {{pool, 8}};
  auto b = h.regions(ranges, 1);
  CHECK(b.size() == 0);
  { nvtxpp::access_scope s{r, nvtxpp::access::read}; }
  struct upstream {
    void* allocate(std::size_t) { return pool; }
    void deallocate(void*, std::size_t) {}
  } up;
  nvtxpp::annotated_allocator a{up, h};
  a.deallocate(a.allocate(8), 8);
  // Format arguments of heap and region names are evaluated (they are function arguments), but
  // never formatted: this counts the calls above, as for any function.
  CHECK(side_effects == 3);
  side_effects = 0;
}
