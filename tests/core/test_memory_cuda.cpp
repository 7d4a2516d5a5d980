// nvtxpp/memory_cuda.hpp: permissions for CUDA work, asserted on what NVTX receives. Needs the
// runtime's headers only: no GPU, no CUDA call (the stream below is never given to CUDA).
#include <nvtxpp/memory_cuda.hpp>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "recording.hpp"

using namespace nvtxpp_test;
using nvtxpp::testing::memory_call;
using nvtxpp::testing::memory_op;

static_assert(!std::is_copy_constructible_v<nvtxpp::cuda_access_scope>);
static_assert(!std::is_move_constructible_v<nvtxpp::cuda_access_scope>);
static_assert(!std::is_copy_assignable_v<nvtxpp::cuda_access_scope>);
static_assert(!std::is_move_assignable_v<nvtxpp::cuda_access_scope>);
static_assert(!std::is_copy_constructible_v<nvtxpp::stream_access_scope>);
static_assert(!std::is_move_constructible_v<nvtxpp::stream_access_scope>);
static_assert(!std::is_copy_assignable_v<nvtxpp::stream_access_scope>);
static_assert(!std::is_move_assignable_v<nvtxpp::stream_access_scope>);
static_assert(std::is_nothrow_constructible_v<nvtxpp::stream_access_scope, nvtxpp::region&,
                                              nvtxpp::access, nvtxpp::strictness>);
static_assert(
    !std::is_constructible_v<nvtxpp::stream_access_scope, nvtxpp::region&&, nvtxpp::access>);
static_assert(
    !std::is_constructible_v<nvtxpp::cuda_access_scope, nvtxpp::region&&, nvtxpp::access>);

namespace {
alignas(64) unsigned char g_pool[1024];
std::uint64_t addr(void const* p) { return reinterpret_cast<std::uintptr_t>(p); }
/// An address past the pool (never dereferenced), without the compiler's bounds warning.
void* beyond(std::size_t offset) {
  return reinterpret_cast<void*>(  // NOLINT(performance-no-int-to-ptr): an address only
      reinterpret_cast<std::uintptr_t>(g_pool) + offset);
}
std::vector<memory_call> calls(nvtxpp::testing::recorder const& rec) {
  std::vector<memory_call> out;
  for (auto const& e : only(rec.events(), {event_type::memory})) {
    out.push_back(e.memory);
  }
  return out;
}
}  // namespace

TEST_CASE("a CUDA access scope restricts a region for all GPU work, then resets it") {
  nvtxpp::testing::recorder rec;
  nvtxpp::heap h{g_pool, sizeof g_pool};
  auto r = h.region(g_pool + 64, 64, "weights");
  rec.clear();
  { nvtxpp::cuda_access_scope ro{r, nvtxpp::access::read}; }
  { nvtxpp::cuda_access_scope none{r, nvtxpp::access::none, nvtxpp::cuda_device{1}}; }
  auto const c = calls(rec);
  REQUIRE(c.size() == 6);
  CHECK(c[0].op == memory_op::cuda_process_permissions);
  std::uint64_t const process = c[0].permissions;
  CHECK(process != 0);
  CHECK(c[1].op == memory_op::permissions_assign);
  CHECK(c[1].permissions == process);
  CHECK(c[1].regions.at(0).pointer == addr(g_pool + 64));
  CHECK(c[1].regions.at(0).flags == NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ);
  CHECK(c[2].permissions == process);
  CHECK(c[2].regions.at(0).flags == NVTX_MEM_PERMISSIONS_REGION_FLAGS_RESET);
  CHECK(c[3].op == memory_op::cuda_device_permissions);
  CHECK(c[3].device == 1);
  CHECK(c[4].permissions == c[3].permissions);
  CHECK(c[4].regions.at(0).flags == NVTX_MEM_PERMISSIONS_REGION_FLAGS_NONE);
  CHECK(c[5].regions.at(0).flags == NVTX_MEM_PERMISSIONS_REGION_FLAGS_RESET);
}

TEST_CASE("a stream access scope binds its own permissions to the thread's CUDA work") {
  nvtxpp::testing::recorder rec;
  nvtxpp::heap h{g_pool, sizeof g_pool};
  auto r = h.region(g_pool, 128);
  auto outside = h.region(beyond(4096), 8);
  rec.clear();
  {
    nvtxpp::stream_access_scope s{r, nvtxpp::access::read, nvtxpp::strictness::write};
    nvtxpp::stream_access_scope n{outside, nvtxpp::access::none};  // unregistered: nothing
  }
  auto const c = calls(rec);
  REQUIRE(c.size() == 5);
  CHECK(c[0].op == memory_op::permissions_create);
  CHECK(c[0].flags == NVTX_MEM_PERMISSIONS_CREATE_FLAGS_NONE);
  std::uint64_t const p = c[0].permissions;
  CHECK(c[1].op == memory_op::permissions_assign);
  CHECK(c[1].permissions == p);
  CHECK(c[1].regions.at(0).pointer == addr(g_pool));
  CHECK(c[1].regions.at(0).flags == NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ);
  CHECK(c[2].op == memory_op::permissions_bind);
  CHECK(c[2].permissions == p);
  CHECK(c[2].scope == NVTX_MEM_PERMISSIONS_BIND_SCOPE_CUDA_STREAM);
  CHECK(c[2].flags == NVTX_MEM_PERMISSIONS_BIND_FLAGS_STRICT_WRITE);
  CHECK(c[3].op == memory_op::permissions_unbind);
  CHECK(c[3].scope == NVTX_MEM_PERMISSIONS_BIND_SCOPE_CUDA_STREAM);
  CHECK(c[4].op == memory_op::permissions_destroy);
  CHECK(c[4].permissions == p);
}

TEST_CASE("mark_initialized names the region and the stream") {
  nvtxpp::testing::recorder rec;
  nvtxpp::heap h{g_pool, sizeof g_pool};
  auto r = h.region(g_pool + 8, 24);
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a handle NVTX only passes on
  auto const stream = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x5000});
  nvtxpp::mark_initialized(r, stream);
  auto const c = calls(rec);
  REQUIRE(c.size() == 3);
  CHECK(c[2].op == memory_op::cuda_mark_initialized);
  CHECK(c[2].stream == 0x5000u);
  CHECK(c[2].regions.at(0).pointer == addr(g_pool + 8));
  CHECK(c[2].regions.at(0).bytes == 24);
}
