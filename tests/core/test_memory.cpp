// nvtxpp/memory.hpp: heaps, regions, batches, access scopes and the allocator adaptor, asserted
// on what NVTX's memory extension receives (every call's pointers, sizes, names, permissions).
#include <nvtxpp/memory.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <thread>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "counted.hpp"
#include "recording.hpp"

using namespace nvtxpp_test;
using nvtxpp::testing::memory_call;
using nvtxpp::testing::memory_op;

NVTXPP_DEFINE_DOMAIN(pool_domain, "Pools");

// Contracts.
static_assert(!std::is_copy_constructible_v<nvtxpp::heap>);
static_assert(!std::is_copy_assignable_v<nvtxpp::heap>);
static_assert(std::is_nothrow_move_constructible_v<nvtxpp::heap>);
static_assert(std::is_nothrow_move_assignable_v<nvtxpp::heap>);
static_assert(std::is_nothrow_destructible_v<nvtxpp::heap>);
static_assert(std::is_nothrow_constructible_v<nvtxpp::heap, void*, std::size_t>);
static_assert(std::is_nothrow_constructible_v<nvtxpp::heap, void*, std::size_t, char const*>);
static_assert(!std::is_copy_constructible_v<nvtxpp::region>);
static_assert(!std::is_copy_assignable_v<nvtxpp::region>);
static_assert(std::is_nothrow_move_constructible_v<nvtxpp::region>);
static_assert(std::is_nothrow_move_assignable_v<nvtxpp::region>);
static_assert(std::is_nothrow_default_constructible_v<nvtxpp::region>);
static_assert(std::is_nothrow_destructible_v<nvtxpp::region>);
static_assert(!std::is_copy_constructible_v<nvtxpp::region_batch>);
static_assert(std::is_nothrow_move_constructible_v<nvtxpp::region_batch>);
static_assert(!std::is_copy_constructible_v<nvtxpp::access_scope>);
static_assert(!std::is_move_constructible_v<nvtxpp::access_scope>);
static_assert(!std::is_copy_assignable_v<nvtxpp::access_scope>);
static_assert(!std::is_move_assignable_v<nvtxpp::access_scope>);
static_assert(
    std::is_nothrow_constructible_v<nvtxpp::access_scope, nvtxpp::region&, nvtxpp::access>);
static_assert(!std::is_constructible_v<nvtxpp::access_scope, nvtxpp::region&&, nvtxpp::access>);
static_assert(!std::is_constructible_v<nvtxpp::access_scope, nvtxpp::region&, std::uint32_t>);
static_assert(!std::is_constructible_v<nvtxpp::access_scope_in<pool_domain>, nvtxpp::region&,
                                       nvtxpp::access>);
static_assert(noexcept(std::declval<nvtxpp::heap&>().region(nullptr, 1)));
static_assert(noexcept(std::declval<nvtxpp::heap&>().region(nullptr, 1, std::string_view{})));
static_assert(noexcept(std::declval<nvtxpp::region&>().resize(1)));
static_assert((nvtxpp::access::read | nvtxpp::access::write) == nvtxpp::access::read_write);

namespace {

alignas(64) unsigned char g_pool[4096];

std::uint64_t addr(void const* p) { return reinterpret_cast<std::uintptr_t>(p); }
/// An address past the pool (never dereferenced), without the compiler's bounds warning.
void* beyond(std::size_t offset) {
  return reinterpret_cast<void*>(  // NOLINT(performance-no-int-to-ptr): an address only
      reinterpret_cast<std::uintptr_t>(g_pool) + offset);
}

/// The memory calls recorded, in order.
std::vector<memory_call> calls(nvtxpp::testing::recorder const& rec) {
  std::vector<memory_call> out;
  for (auto const& e : only(rec.events(), {event_type::memory})) {
    out.push_back(e.memory);
  }
  return out;
}

std::vector<event> memory_events(nvtxpp::testing::recorder const& rec) {
  return only(rec.events(), {event_type::memory});
}

}  // namespace

TEST_CASE("a heap and a named region reach NVTX with their pointers, sizes and names") {
  nvtxpp::testing::recorder rec;
  {
    nvtxpp::heap h{g_pool, sizeof g_pool, "arena {}", 7};
    REQUIRE(h.registered());
    auto r = h.region(g_pool + 64, 128, "buffer {}", 3);
    CHECK(r.registered());
    CHECK(r.data() == g_pool + 64);
    CHECK(r.size() == 128);
    CHECK(r.resize(256));
    CHECK(r.size() == 256);
    r.name("renamed");
  }
  auto const ev = memory_events(rec);
  REQUIRE(ev.size() == 7);
  // heap_register: the heap's range, sub-allocator usage, virtual addresses, its name.
  CHECK(ev[0].memory.op == memory_op::heap_register);
  CHECK(ev[0].message == "arena 7");
  CHECK(ev[0].memory.heap_base == addr(g_pool));
  CHECK(ev[0].memory.heap_bytes == sizeof g_pool);
  CHECK(ev[0].memory.usage == NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR);
  CHECK(ev[0].memory.memory_type == NVTX_MEM_TYPE_VIRTUAL_ADDRESS);
  std::uint64_t const heap = ev[0].memory.heap;
  CHECK(heap == addr(g_pool));
  // regions_register in that heap, then its name.
  auto const& reg = ev[1].memory;
  CHECK(reg.op == memory_op::regions_register);
  CHECK(reg.heap == heap);
  REQUIRE(reg.regions.size() == 1);
  CHECK(reg.regions[0].pointer == addr(g_pool + 64));
  CHECK(reg.regions[0].bytes == 128);
  auto const& name = ev[2].memory;
  CHECK(name.op == memory_op::regions_name);
  CHECK_FALSE(name.by_handle);
  REQUIRE(name.regions.size() == 1);
  CHECK(name.regions[0].pointer == addr(g_pool + 64));
  CHECK(name.regions[0].name == "buffer 3");
  // resize, rename, then unregister (by pointer) and the heap.
  CHECK(ev[3].memory.op == memory_op::regions_resize);
  REQUIRE(ev[3].memory.regions.size() == 1);
  CHECK(ev[3].memory.regions[0].pointer == addr(g_pool + 64));
  CHECK(ev[3].memory.regions[0].bytes == 256);
  CHECK(ev[4].memory.op == memory_op::regions_name);
  CHECK(ev[4].memory.regions.at(0).name == "renamed");
  CHECK(ev[5].memory.op == memory_op::regions_unregister);
  REQUIRE(ev[5].memory.regions.size() == 1);
  CHECK(ev[5].memory.regions[0].pointer == addr(g_pool + 64));
  CHECK(ev[6].memory.op == memory_op::heap_unregister);
  CHECK(ev[6].memory.heap == heap);
  CHECK(rec.warnings().empty());
}

TEST_CASE("plain names are used as they are; unnamed regions make no naming call") {
  nvtxpp::testing::recorder rec;
  {
    nvtxpp::heap h{g_pool, sizeof g_pool};
    auto a = h.region(g_pool, 16, "braces {} kept");
    auto b = h.region(g_pool + 16, 16);
  }
  auto const c = calls(rec);
  REQUIRE(c.size() == 7);
  CHECK(c[0].op == memory_op::heap_register);
  CHECK(c[1].op == memory_op::regions_register);
  CHECK(c[2].op == memory_op::regions_name);
  CHECK(c[2].regions.at(0).name == "braces {} kept");
  CHECK(c[3].op == memory_op::regions_register);
  // Regions end in reverse order of construction, then the heap.
  CHECK(c[4].op == memory_op::regions_unregister);
  CHECK(c[4].regions.at(0).pointer == addr(g_pool + 16));
  CHECK(c[5].op == memory_op::regions_unregister);
  CHECK(c[5].regions.at(0).pointer == addr(g_pool));
  CHECK(c[6].op == memory_op::heap_unregister);
  CHECK(memory_events(rec).front().message.empty());
}

TEST_CASE("memory calls go to the heap's domain") {
  nvtxpp::testing::recorder rec;
  {
    nvtxpp::heap_in<pool_domain> h{g_pool, sizeof g_pool, "pool"};
    auto r = h.region(g_pool, 8);
    nvtxpp::access_scope_in s{r, nvtxpp::access::read};
  }
  auto const ev = memory_events(rec);
  REQUIRE(ev.size() == 6);
  for (auto const& e : ev) {
    CHECK(e.domain == "Pools");
  }
}

TEST_CASE("run-time misuse is defined: nothing reaches the tool, nothing crashes") {
  nvtxpp::testing::recorder rec;
  nvtxpp::heap h{g_pool + 1024, 1024, "middle"};
  rec.clear();
  SECTION("regions outside, across the edges of, or beyond their heap are not registered") {
    auto before = h.region(g_pool, 16);
    auto across_start = h.region(g_pool + 1020, 8);
    auto across_end = h.region(g_pool + 2040, 16);
    auto after = h.region(g_pool + 3000, 16, "after {}", 1);
    auto huge = h.region(g_pool + 1024, SIZE_MAX);
    // NOLINTNEXTLINE(performance-no-int-to-ptr): an address at the top, never dereferenced
    auto wrap = h.region(reinterpret_cast<void*>(UINTPTR_MAX - 4), 16);
    for (auto const* r : {&before, &across_start, &across_end, &after, &huge, &wrap}) {
      CHECK_FALSE(r->registered());
      CHECK_FALSE(const_cast<nvtxpp::region*>(r)->resize(4));
    }
    CHECK(after.data() == g_pool + 3000);  // still says what it was given
    CHECK(after.size() == 16);
    auto whole = h.region(g_pool + 1024, 1024);  // exactly the heap: fine
    CHECK(whole.registered());
  }
  SECTION("null and zero-size regions are not registered") {
    auto null = h.region(nullptr, 16);
    auto empty = h.region(g_pool + 1100, 0, "empty");
    CHECK_FALSE(null.registered());
    CHECK_FALSE(empty.registered());
    auto r = h.region(g_pool + 1100, 8);
    CHECK_FALSE(r.resize(0));     // zero bytes: unchanged
    CHECK_FALSE(r.resize(2048));  // past the heap's end: unchanged
    CHECK(r.size() == 8);
    r.reset();
    CHECK_FALSE(r.registered());
    CHECK_FALSE(r.resize(8));
  }
  SECTION("a default region and a moved-from region do nothing") {
    nvtxpp::region none;
    CHECK_FALSE(none.registered());
    auto a = h.region(g_pool + 1024, 8);
    nvtxpp::region b = std::move(a);
    CHECK(b.registered());
    CHECK_FALSE(a.registered());  // NOLINT(bugprone-use-after-move): the moved-from state
  }
  auto const c = calls(rec);
  for (auto const& call : c) {
    // Only regions inside the heap ever reach NVTX.
    for (auto const& r : call.regions) {
      CHECK(r.pointer >= addr(g_pool + 1024));
      CHECK(r.pointer + r.bytes <= addr(g_pool + 2048));
    }
  }
  // Each registered region is unregistered exactly once.
  std::size_t reg = 0;
  std::size_t unreg = 0;
  for (auto const& call : c) {
    reg += call.op == memory_op::regions_register ? call.regions.size() : 0;
    unreg += call.op == memory_op::regions_unregister ? call.regions.size() : 0;
  }
  CHECK(reg >= 1);
  CHECK(reg == unreg);
}

TEST_CASE("a heap over null or zero bytes is not registered, nor are its regions") {
  nvtxpp::testing::recorder rec;
  {
    nvtxpp::heap a{nullptr, 64, "null"};
    nvtxpp::heap b{g_pool, 0, "empty {}", 1};
    CHECK_FALSE(a.registered());
    CHECK_FALSE(b.registered());
    auto r = b.region(g_pool, 8);
    CHECK_FALSE(r.registered());
  }
  CHECK(calls(rec).empty());
}

TEST_CASE("a region that outlives its heap, or its heap's reset, makes no call when it ends") {
  nvtxpp::testing::recorder rec;
  std::vector<memory_call> c;
  SECTION("outlives the heap") {
    nvtxpp::region survivor;
    {
      nvtxpp::heap h{g_pool, sizeof g_pool};
      survivor = h.region(g_pool, 32, "survivor");
      CHECK(survivor.registered());
    }
    CHECK_FALSE(survivor.registered());
    CHECK_FALSE(survivor.resize(16));
    survivor.name("ignored");
    {
      // A new heap at the same address: the old region must not unregister its namesake.
      nvtxpp::heap again{g_pool, sizeof g_pool};
      auto fresh = again.region(g_pool, 32);
      survivor.reset();
      CHECK(fresh.registered());
    }
    c = calls(rec);
    REQUIRE(c.size() == 8);
    CHECK(c[3].op == memory_op::heap_unregister);
    CHECK(c[4].op == memory_op::heap_register);
    CHECK(c[5].op == memory_op::regions_register);
    CHECK(c[6].op == memory_op::regions_unregister);  // `fresh` only
    CHECK(c[7].op == memory_op::heap_unregister);
  }
  SECTION("heap reset") {
    nvtxpp::heap h{g_pool, sizeof g_pool};
    auto a = h.region(g_pool, 32);
    h.reset_regions();
    CHECK_FALSE(a.registered());
    auto b = h.region(g_pool, 32);
    CHECK(b.registered());
    a.reset();
    b.reset();
    c = calls(rec);
    REQUIRE(c.size() == 5);
    CHECK(c[2].op == memory_op::heap_reset);
    CHECK(c[2].heap == addr(g_pool));
    CHECK(c[4].op == memory_op::regions_unregister);
  }
}

TEST_CASE("a moved heap is unregistered once, by its new owner") {
  nvtxpp::testing::recorder rec;
  {
    nvtxpp::heap a{g_pool, sizeof g_pool};
    nvtxpp::heap b = std::move(a);
    CHECK_FALSE(a.registered());  // NOLINT(bugprone-use-after-move)
    CHECK(b.registered());
    auto r = b.region(g_pool, 8);
    nvtxpp::heap c{g_pool + 8, 8};
    c = std::move(b);  // c's own heap is unregistered now
    CHECK(r.registered());
  }
  auto const c = calls(rec);
  std::size_t heaps = 0;
  for (auto const& call : c) {
    heaps += call.op == memory_op::heap_unregister ? 1U : 0U;
  }
  CHECK(heaps == 2);
}

TEST_CASE("batches register, name and unregister many regions in one call each") {
  nvtxpp::testing::recorder rec;
  {
    nvtxpp::heap h{g_pool, 1024};
    std::vector<nvtxpp::memory_range> ranges{
        {g_pool, 64}, {g_pool + 64, 64}, {g_pool + 2000, 64}, {g_pool + 128, 128}};
    auto b = h.regions(ranges, "tile {}");
    CHECK(b.size() == 3);  // the third is outside the heap
    nvtxpp::memory_range const raw[] = {{g_pool + 512, 8}};
    auto unnamed = h.regions(raw, 1);
    CHECK(unnamed.size() == 1);
  }
  auto const c = calls(rec);
  REQUIRE(c.size() == 7);
  CHECK(c[1].op == memory_op::regions_register);
  REQUIRE(c[1].regions.size() == 3);
  CHECK(c[1].regions[0].pointer == addr(g_pool));
  CHECK(c[1].regions[1].pointer == addr(g_pool + 64));
  CHECK(c[1].regions[2].pointer == addr(g_pool + 128));
  CHECK(c[1].regions[2].bytes == 128);
  CHECK(c[2].op == memory_op::regions_name);
  REQUIRE(c[2].regions.size() == 3);
  CHECK(c[2].regions[0].name == "tile 0");
  CHECK(c[2].regions[1].name == "tile 1");
  CHECK(c[2].regions[2].name == "tile 3");  // named by its index in the input
  CHECK(c[3].op == memory_op::regions_register);
  CHECK(c[4].op == memory_op::regions_unregister);  // `unnamed` ends first
  CHECK(c[4].regions.size() == 1);
  CHECK(c[5].op == memory_op::regions_unregister);
  REQUIRE(c[5].regions.size() == 3);
  CHECK(c[5].regions[2].pointer == addr(g_pool + 128));
  CHECK(c[6].op == memory_op::heap_unregister);
}

TEST_CASE("access scopes set a region's permissions process-wide and reset them at the end") {
  nvtxpp::testing::recorder rec;
  nvtxpp::heap h{g_pool, sizeof g_pool};
  auto r = h.region(g_pool + 256, 64);
  auto outside = h.region(beyond(9000), 64);
  rec.clear();
  {
    nvtxpp::access_scope ro{r, nvtxpp::access::read};
    nvtxpp::access_scope none{outside, nvtxpp::access::none};  // not registered: no call
  }
  { nvtxpp::access_scope rw{r, nvtxpp::access::read | nvtxpp::access::atomic}; }
  auto const c = calls(rec);
  REQUIRE(c.size() == 4);
  CHECK(c[0].op == memory_op::permissions_assign);
  CHECK(c[0].permissions == 0);  // NVTX_MEM_PERMISSIONS_HANDLE_PROCESS_WIDE
  REQUIRE(c[0].regions.size() == 1);
  CHECK(c[0].regions[0].pointer == addr(g_pool + 256));
  CHECK(c[0].regions[0].flags == NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ);
  CHECK(c[1].regions.at(0).flags == NVTX_MEM_PERMISSIONS_REGION_FLAGS_RESET);
  CHECK(c[2].regions.at(0).flags ==
        (NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ | NVTX_MEM_PERMISSIONS_REGION_FLAGS_ATOMIC));
  CHECK(c[3].regions.at(0).flags == NVTX_MEM_PERMISSIONS_REGION_FLAGS_RESET);
}

TEST_CASE("an access scope whose region's heap ended first does not reset it") {
  nvtxpp::testing::recorder rec;
  nvtxpp::region r;
  {
    auto h = std::make_unique<nvtxpp::heap>(g_pool, sizeof g_pool);
    r = h->region(g_pool, 8);
    nvtxpp::access_scope s{r, nvtxpp::access::read};
    h.reset();
  }
  auto const c = calls(rec);
  REQUIRE(c.size() == 4);
  CHECK(c[2].op == memory_op::permissions_assign);
  CHECK(c[3].op == memory_op::heap_unregister);
}

namespace {
/// A user's pool allocator: a bump allocator over g_pool.
struct bump_pool {
  std::size_t next = 0;
  int frees = 0;
  void* allocate(std::size_t bytes) {
    void* p = g_pool + next;
    next += bytes;
    return p;
  }
  void deallocate(void*, std::size_t) { ++frees; }
};

/// One with extra arguments (an alignment, as rmm's and std::pmr's take one).
struct aligned_pool {
  float* allocate(std::size_t bytes, std::size_t alignment) {
    static_cast<void>(bytes);
    return reinterpret_cast<float*>(g_pool + alignment);
  }
  void deallocate(float*, std::size_t, std::size_t) noexcept {}
};
}  // namespace

TEST_CASE("the allocator adaptor makes every allocation a region of the pool's heap") {
  nvtxpp::testing::recorder rec;
  bump_pool pool;
  nvtxpp::heap h{g_pool, sizeof g_pool, "bump"};
  nvtxpp::annotated_allocator alloc{pool, h};
  void* a = alloc.allocate(100);
  void* b = alloc.allocate_named("weights", 200);
  alloc.deallocate(a, 100);
  alloc.deallocate(b, 200);
  CHECK(pool.frees == 2);
  CHECK(&alloc.upstream() == &pool);
  aligned_pool ap;
  nvtxpp::annotated_allocator aligned{ap, h};
  float* f = aligned.allocate(16, 256);
  aligned.deallocate(f, 16, 256);
  auto const c = calls(rec);
  REQUIRE(c.size() == 8);
  CHECK(c[1].op == memory_op::regions_register);
  CHECK(c[1].regions.at(0).pointer == addr(g_pool));
  CHECK(c[1].regions.at(0).bytes == 100);
  CHECK(c[2].op == memory_op::regions_register);
  CHECK(c[2].regions.at(0).pointer == addr(g_pool + 100));
  CHECK(c[3].op == memory_op::regions_name);
  CHECK(c[3].regions.at(0).name == "weights");
  CHECK(c[4].op == memory_op::regions_unregister);
  CHECK(c[4].regions.at(0).pointer == addr(g_pool));
  CHECK(c[5].regions.at(0).pointer == addr(g_pool + 100));
  CHECK(c[6].regions.at(0).pointer == addr(g_pool + 256));
  CHECK(c[7].op == memory_op::regions_unregister);
}

TEST_CASE("names are never formatted while no tool listens") {
  counted::formatted = 0;
  {
    // No recorder alive: the tool's heap_register answers "no heap", so nothing follows.
    nvtxpp::heap h{g_pool, sizeof g_pool, "heap {}", counted{}};
    CHECK_FALSE(h.registered());
    auto r = h.region(g_pool, 8, "region {}", counted{});
    CHECK_FALSE(r.registered());
    r.name("again {}", counted{});
    std::vector<nvtxpp::memory_range> ranges{{g_pool, 8}};
    auto b = h.regions(ranges, "tile {}");
    CHECK(b.size() == 0);
  }
  CHECK(counted::formatted == 0);
  {
    nvtxpp::testing::recorder rec;
    nvtxpp::heap h{g_pool, sizeof g_pool, "heap {}", counted{}};
    auto r = h.region(g_pool, 8, "region {}", counted{});
    CHECK(r.registered());
  }
  CHECK(counted::formatted == 2);
}

TEST_CASE("regions of one heap may be made and ended on many threads") {
  nvtxpp::testing::recorder rec;
  nvtxpp::heap h{g_pool, sizeof g_pool};
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&h, t] {
      for (int i = 0; i < 200; ++i) {
        std::size_t const at =
            static_cast<std::size_t>(t) * 1024 + static_cast<std::size_t>(i % 64) * 16;
        auto r = h.region(g_pool + at, 16, "t{} i{}", t, i);
        CHECK(r.registered());
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  std::size_t reg = 0;
  std::size_t unreg = 0;
  for (auto const& call : calls(rec)) {
    reg += call.op == memory_op::regions_register ? 1U : 0U;
    unreg += call.op == memory_op::regions_unregister ? 1U : 0U;
  }
  CHECK(reg == 800);
  CHECK(unreg == 800);
}
