// Tests of nvtxpp::testing::recorder, driven through the raw NVTX C API: what NVTX delivered to
// the injection is what the recorder must report.
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCuda.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <nvtx3/nvToolsExtPayload.h>
#include <nvtx3/nvToolsExtSync.h>

#include <nvtxpp/testing/recorder.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "nvtx_c.hpp"

namespace t = nvtxpp::testing;
using t::event_type;

static_assert(!std::is_copy_constructible_v<t::recorder>);
static_assert(!std::is_copy_assignable_v<t::recorder>);
static_assert(!std::is_move_constructible_v<t::recorder>);
static_assert(noexcept(t::recorder::attached()));

namespace {

using nvtxpp_test::attributes;

std::uint64_t this_tid() { return nvtxpp_test::os_thread_id(); }

bool has_warning(std::vector<std::string> const& warnings, std::string const& part) {
  return std::any_of(warnings.begin(), warnings.end(),
                     [&](auto const& w) { return w.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("push and pop: messages, nesting depth, thread, order, return values") {
  t::recorder rec;
  int const level0 = nvtxRangePushA("outer");
  int const level1 = nvtxRangePushA("inner");
  int const pop1 = nvtxRangePop();
  int const pop0 = nvtxRangePop();
  CHECK(t::recorder::attached());
  CHECK(level0 == 0);
  CHECK(level1 == 1);
  CHECK(pop1 == 1);
  CHECK(pop0 == 0);

  auto const ev = rec.events();
  REQUIRE(ev.size() == 4);
  CHECK(ev[0].type == event_type::push);
  CHECK(ev[0].message == "outer");
  CHECK(ev[0].depth == 0);
  CHECK(ev[1].type == event_type::push);
  CHECK(ev[1].message == "inner");
  CHECK(ev[1].depth == 1);
  CHECK(ev[2].type == event_type::pop);
  CHECK(ev[2].depth == 1);
  CHECK(ev[3].type == event_type::pop);
  CHECK(ev[3].depth == 0);
  for (auto const& e : ev) {
    CHECK(e.domain.empty());
    CHECK(e.thread_id == this_tid());
    CHECK(e.process_id == static_cast<std::uint32_t>(::getpid()));
    CHECK_FALSE(e.registered);
    CHECK_FALSE(e.color.has_value());
    CHECK(e.payload.index() == 0);
    CHECK(e.category == 0);
  }
  for (std::size_t i = 1; i < ev.size(); ++i) {
    CHECK(ev[i - 1].time_ns <= ev[i].time_ns);
  }

  auto const ranges = rec.ranges();
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0].name == "outer");
  CHECK(ranges[0].depth == 0);
  CHECK(ranges[1].name == "inner");
  CHECK(ranges[1].depth == 1);
  CHECK(ranges[0].start_ns <= ranges[1].start_ns);
  CHECK(ranges[1].end_ns <= ranges[0].end_ns);
  CHECK_FALSE(ranges[0].unterminated);
  CHECK(rec.warnings().empty());
}

TEST_CASE("timestamps are CLOCK_MONOTONIC nanoseconds") {
  t::recorder rec;
  timespec a{};
  timespec b{};
  ::clock_gettime(CLOCK_MONOTONIC, &a);
  nvtxMarkA("now");
  ::clock_gettime(CLOCK_MONOTONIC, &b);
  auto const ev = rec.events();
  REQUIRE(ev.size() == 1);
  std::int64_t const lo = a.tv_sec * 1'000'000'000LL + a.tv_nsec;
  std::int64_t const hi = b.tv_sec * 1'000'000'000LL + b.tv_nsec;
  // The tick-to-ns mapping is calibrated; allow 20 us of calibration error.
  CHECK(ev[0].time_ns >= lo - 20'000);
  CHECK(ev[0].time_ns <= hi + 20'000);
}

std::int64_t monotonic_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

TEST_CASE("messages on either side of the one-pass length keep their text") {
  // Short ASCII messages are copied while their end is found; from 64 bytes on they take the
  // general path. Both must give the same events.
  t::recorder rec;
  std::vector<std::string> texts;
  for (std::size_t n : {0, 1, 62, 63, 64, 65, 127, 128, 129, 300}) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) {
      s += static_cast<char>('a' + i % 26);
    }
    texts.push_back(s);
  }
  for (auto const& s : texts) {
    nvtxRangePushA(s.c_str());
    nvtxMarkA(s.c_str());
    nvtxRangePop();
  }
  auto const ev = rec.events();
  REQUIRE(ev.size() == 3 * texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    CHECK(ev[3 * i].type == event_type::push);
    CHECK(ev[3 * i].message == texts[i]);
    CHECK(ev[3 * i + 1].type == event_type::mark);
    CHECK(ev[3 * i + 1].message == texts[i]);
    CHECK(ev[3 * i + 2].type == event_type::pop);
    CHECK_FALSE(ev[3 * i].truncated);
  }
  CHECK(rec.warnings().empty());
}

TEST_CASE("times stay right across many blocks (ticks are deltas within a block)") {
  t::recorder rec;
  // About 17 blocks of 64 KiB (11 bytes a range); every 1000th event is a mark between two
  // clock reads.
  constexpr int n = 100'000;
  std::vector<std::pair<std::int64_t, std::int64_t>> brackets;
  for (int i = 0; i < n; ++i) {
    if (i % 1000 == 0) {
      std::int64_t const lo = monotonic_now();
      nvtxMarkA("timed");
      brackets.emplace_back(lo, monotonic_now());
    } else {
      nvtxRangePushA(i % 2 == 0 ? "even" : "odd");
      nvtxRangePop();
    }
  }
  auto const ev = rec.events();
  REQUIRE(ev.size() == static_cast<std::size_t>(n + n - n / 1000));
  std::size_t timed = 0;
  int misplaced = 0;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (i > 0 && ev[i - 1].time_ns > ev[i].time_ns) {
      ++misplaced;
    }
    if (ev[i].type == event_type::mark) {
      REQUIRE(timed < brackets.size());
      // The tick-to-ns mapping is calibrated; allow 20 us of calibration error.
      if (ev[i].time_ns < brackets[timed].first - 20'000 ||
          ev[i].time_ns > brackets[timed].second + 20'000) {
        ++misplaced;
      }
      ++timed;
    }
  }
  CHECK(timed == brackets.size());
  CHECK(misplaced == 0);
  CHECK(ev.back().type == event_type::pop);
  CHECK(ev[ev.size() - 2].message == "odd");
  CHECK(rec.warnings().empty());
}

TEST_CASE("nvtxDomainIsEnabled is 1 while a recorder is alive, 0 otherwise") {
  nvtxDomainHandle_t const d = nvtxDomainCreateA("enabled-check");
  {
    t::recorder rec;
    CHECK(nvtxDomainIsEnabled(d) == 1);
    CHECK(nvtxDomainIsEnabled(nullptr) == 1);
  }
  CHECK(nvtxDomainIsEnabled(d) == 0);
  CHECK(t::recorder::attached());
}

TEST_CASE("only one recorder at a time; nothing recorded between recorders") {
  {
    t::recorder rec;
    CHECK_THROWS_AS(t::recorder{}, std::logic_error);
  }
  nvtxMarkA("unseen");
  t::recorder rec;
  nvtxMarkA("seen");
  auto const ev = rec.events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].message == "seen");
}

TEST_CASE("clear drops earlier events, recording continues") {
  t::recorder rec;
  nvtxMarkA("before");
  REQUIRE(rec.events().size() == 1);
  rec.clear();
  CHECK(rec.events().empty());
  nvtxMarkA("after");
  auto const ev = rec.events();
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].message == "after");
}

TEST_CASE("event attributes: ARGB colour, category, the six payload types") {
  t::recorder rec;
  auto a = attributes("u64");
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF112233U;
  a.category = 7;
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = 0xFFFFFFFFFFFFFFF0ULL;
  nvtxMarkEx(&a);

  a = attributes("i64");
  a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  a.payload.llValue = -1234567890123LL;
  nvtxMarkEx(&a);

  a = attributes("f64");
  a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
  a.payload.dValue = 2.5;
  nvtxMarkEx(&a);

  a = attributes("u32");
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
  a.payload.uiValue = 4000000000U;
  nvtxMarkEx(&a);

  a = attributes("i32");
  a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
  a.payload.iValue = -42;
  nvtxRangePushEx(&a);
  nvtxRangePop();

  a = attributes("f32");
  a.payloadType = NVTX_PAYLOAD_TYPE_FLOAT;
  a.payload.fValue = -0.25F;
  a.colorType = NVTX_COLOR_UNKNOWN;
  a.color = 0xFFFFFFFFU;  // ignored: colour type says "none"
  nvtxRangeEnd(nvtxRangeStartEx(&a));

  auto const ev = rec.events();
  REQUIRE(ev.size() == 8);
  CHECK(ev[0].color == std::optional<std::uint32_t>{0xFF112233U});
  CHECK(ev[0].category == 7);
  CHECK(ev[0].category_name.empty());
  CHECK(std::get<std::uint64_t>(ev[0].payload) == 0xFFFFFFFFFFFFFFF0ULL);
  CHECK(std::get<std::int64_t>(ev[1].payload) == -1234567890123LL);
  CHECK(std::get<double>(ev[2].payload) == 2.5);
  CHECK(std::get<std::uint32_t>(ev[3].payload) == 4000000000U);
  CHECK(ev[4].type == event_type::push);
  CHECK(std::get<std::int32_t>(ev[4].payload) == -42);
  CHECK(ev[5].type == event_type::pop);
  CHECK(ev[5].payload.index() == 0);
  CHECK(ev[6].type == event_type::start);
  CHECK(std::get<float>(ev[6].payload) == -0.25F);
  CHECK_FALSE(ev[6].color.has_value());
  CHECK(ev[6].category == 0);
  CHECK(ev[7].type == event_type::end);
  CHECK(ev[7].range_id == ev[6].range_id);
  CHECK(ev[6].range_id != 0);
  for (int i = 1; i < 6; ++i) {
    CHECK_FALSE(ev[static_cast<std::size_t>(i)].color.has_value());
  }
}

TEST_CASE("marks: ASCII, wide, attributes") {
  t::recorder rec;
  nvtxMarkA("ascii mark");
  nvtxMarkW(L"wide mark");
  auto a = attributes("ex mark");
  nvtxMarkEx(&a);
  auto const ev = rec.events();
  REQUIRE(ev.size() == 3);
  for (auto const& e : ev) {
    CHECK(e.type == event_type::mark);
  }
  CHECK(ev[0].message == "ascii mark");
  CHECK(ev[1].message == "wide mark");
  CHECK(ev[2].message == "ex mark");
}

TEST_CASE("wide strings are converted to UTF-8") {
  t::recorder rec;
  nvtxRangePushW(L"h\u00e9llo \u2713 \U0001D11E");
  nvtxRangePop();
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  a.message.unicode = L"\u00fcber";
  nvtxMarkEx(&a);
  auto const ev = rec.events();
  REQUIRE(ev.size() == 3);
  CHECK(ev[0].message == "h\xC3\xA9llo \xE2\x9C\x93 \xF0\x9D\x84\x9E");
  CHECK(ev[2].message ==
        "\xC3\xBC"
        "ber");
}

TEST_CASE("start/end ranges pair by id, also across threads") {
  t::recorder rec;
  nvtxRangeId_t const id = nvtxRangeStartA("async work");
  nvtxRangeId_t const other = nvtxRangeStartW(L"other");
  std::uint64_t ender = 0;
  std::thread th{[&] {
    ender = this_tid();
    nvtxRangeEnd(id);
  }};
  th.join();
  nvtxRangeEnd(other);
  CHECK(id != 0);
  CHECK(other != id);

  auto const ev = rec.events();
  REQUIRE(ev.size() == 4);
  CHECK(ev[0].type == event_type::start);
  CHECK(ev[0].range_id == id);
  CHECK(ev[1].range_id == other);
  CHECK(ev[2].type == event_type::end);
  CHECK(ev[2].range_id == id);
  CHECK(ev[2].thread_id == ender);
  CHECK(ev[3].range_id == other);

  auto const ranges = rec.ranges();
  REQUIRE(ranges.size() == 2);
  CHECK(ranges[0].name == "async work");
  CHECK_FALSE(ranges[0].push_pop);
  CHECK(ranges[0].thread_id == this_tid());
  CHECK(ranges[0].end_thread_id == ender);
  CHECK(ranges[1].name == "other");
}

TEST_CASE("domains: create, push/pop, mark, start/end, destroy; nesting is per domain") {
  t::recorder rec;
  nvtxDomainHandle_t const d = nvtxDomainCreateA("my-domain");
  CHECK(nvtxDomainCreateA("my-domain") == d);  // same name, same handle
  auto a = attributes("in domain");
  CHECK(nvtxDomainRangePushEx(d, &a) == 0);
  nvtxRangePushA("global");  // another domain: its own nesting
  auto b = attributes("nested");
  CHECK(nvtxDomainRangePushEx(d, &b) == 1);
  CHECK(nvtxDomainRangePop(d) == 1);
  nvtxRangePop();
  CHECK(nvtxDomainRangePop(d) == 0);
  auto m = attributes("domain mark");
  nvtxDomainMarkEx(d, &m);
  nvtxRangeId_t const id = nvtxDomainRangeStartEx(d, &a);
  nvtxDomainRangeEnd(d, id);
  nvtxDomainDestroy(d);

  auto const ev = rec.events();
  REQUIRE(ev.size() == 12);
  CHECK(ev[0].type == event_type::domain_create);
  CHECK(ev[0].domain == "my-domain");
  CHECK(ev[0].message == "my-domain");
  CHECK(ev[1].type == event_type::domain_create);
  CHECK(ev[2].type == event_type::push);
  CHECK(ev[2].domain == "my-domain");
  CHECK(ev[2].depth == 0);
  CHECK(ev[3].domain.empty());
  CHECK(ev[3].depth == 0);
  CHECK(ev[4].message == "nested");
  CHECK(ev[4].depth == 1);
  CHECK(ev[5].type == event_type::pop);
  CHECK(ev[5].domain == "my-domain");
  CHECK(ev[5].depth == 1);
  CHECK(ev[6].domain.empty());
  CHECK(ev[6].depth == 0);
  CHECK(ev[7].depth == 0);
  CHECK(ev[8].type == event_type::mark);
  CHECK(ev[8].domain == "my-domain");
  CHECK(ev[9].type == event_type::start);
  CHECK(ev[9].domain == "my-domain");
  CHECK(ev[10].type == event_type::end);
  CHECK(ev[10].range_id == ev[9].range_id);
  CHECK(ev[11].type == event_type::domain_destroy);
  CHECK(ev[11].domain == "my-domain");
  CHECK(nvtxDomainCreateW(L"my-domain") == d);
}

TEST_CASE("registered strings resolve to their text") {
  nvtxDomainHandle_t const d = nvtxDomainCreateA("reg-domain");
  // Registered before the recorder exists: still resolved.
  nvtxStringHandle_t const early = nvtxDomainRegisterStringA(d, "registered early");
  t::recorder rec;
  nvtxStringHandle_t const h = nvtxDomainRegisterStringA(d, "registered");
  CHECK(nvtxDomainRegisterStringA(d, "registered") == h);
  nvtxStringHandle_t const w = nvtxDomainRegisterStringW(d, L"wide \u00e9");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = h;
  nvtxDomainRangePushEx(d, &a);
  nvtxDomainRangePop(d);
  a.message.registered = early;
  nvtxDomainMarkEx(d, &a);
  a.message.registered = w;
  nvtxDomainMarkEx(d, &a);
  auto plain = attributes("registered");
  nvtxDomainMarkEx(d, &plain);

  auto const ev = rec.events();
  REQUIRE(ev.size() == 5);
  CHECK(ev[0].message == "registered");
  CHECK(ev[0].registered);
  CHECK(ev[2].message == "registered early");
  CHECK(ev[2].registered);
  CHECK(ev[3].message == "wide \xC3\xA9");
  CHECK(ev[4].message == "registered");
  CHECK_FALSE(ev[4].registered);
}

TEST_CASE("categories are named per domain; events carry the name given at that time") {
  nvtxDomainHandle_t const d = nvtxDomainCreateA("cat-domain");
  t::recorder rec;
  auto a = attributes("before naming");
  a.category = 3;
  nvtxDomainMarkEx(d, &a);
  nvtxDomainNameCategoryA(d, 3, "IO");
  nvtxNameCategoryW(3, L"global three");
  a.message.ascii = "after naming";
  nvtxDomainMarkEx(d, &a);
  nvtxMarkEx(&a);  // global domain, category 3
  nvtxDomainNameCategoryA(d, 3, "renamed");
  nvtxDomainMarkEx(d, &a);

  auto const ev = rec.events();
  REQUIRE(ev.size() == 7);
  CHECK(ev[0].category == 3);
  CHECK(ev[0].category_name.empty());
  CHECK(ev[1].type == event_type::name_category);
  CHECK(ev[1].domain == "cat-domain");
  CHECK(ev[1].category == 3);
  CHECK(ev[1].message == "IO");
  CHECK(ev[2].type == event_type::name_category);
  CHECK(ev[2].domain.empty());
  CHECK(ev[2].message == "global three");
  CHECK(ev[3].category_name == "IO");
  CHECK(ev[4].domain.empty());
  CHECK(ev[4].category_name == "global three");
  CHECK(ev[6].category_name == "renamed");
}

TEST_CASE("OS thread naming: event, and later events carry the name") {
  t::recorder rec;
  std::uint64_t tid = 0;
  std::thread th{[&] {
    tid = this_tid();
    nvtxMarkA("unnamed yet");
    nvtxNameOsThreadA(static_cast<std::uint32_t>(tid), "worker-1");
    nvtxMarkA("named");
    nvtxNameOsThreadW(static_cast<std::uint32_t>(tid), L"worker-\u00e9");
    nvtxMarkA("renamed");
  }};
  th.join();
  auto const ev = rec.events();
  REQUIRE(ev.size() == 5);
  CHECK(ev[0].thread_name.empty());
  CHECK(ev[1].type == event_type::name_thread);
  CHECK(ev[1].handle == tid);
  CHECK(ev[1].message == "worker-1");
  CHECK(ev[2].thread_name == "worker-1");
  CHECK(ev[4].thread_name == "worker-\xC3\xA9");
  CHECK(ev[4].thread_id == tid);
}

TEST_CASE("CUDA runtime and driver resource naming") {
  t::recorder rec;
  nvtxNameCudaDeviceA(3, "gpu three");
  nvtxNameCudaStreamA(reinterpret_cast<cudaStream_t>(0x1234), "copy stream");
  nvtxNameCudaEventW(reinterpret_cast<cudaEvent_t>(0x5678), L"done");
  nvtxNameCuDeviceA(1, "cu device");
  nvtxNameCuContextA(reinterpret_cast<CUcontext>(0x9A), "ctx");
  nvtxNameCuStreamA(reinterpret_cast<CUstream>(0xBC), "cu stream");
  nvtxNameCuEventA(reinterpret_cast<CUevent>(0xDE), "cu event");
  auto const ev = rec.events();
  REQUIRE(ev.size() == 7);
  struct expected {
    char const* resource;
    std::uint64_t handle;
    char const* name;
  };
  expected const want[] = {{"cuda_device", 3, "gpu three"}, {"cuda_stream", 0x1234, "copy stream"},
                           {"cuda_event", 0x5678, "done"},  {"cu_device", 1, "cu device"},
                           {"cu_context", 0x9A, "ctx"},     {"cu_stream", 0xBC, "cu stream"},
                           {"cu_event", 0xDE, "cu event"}};
  for (std::size_t i = 0; i < 7; ++i) {
    CHECK(ev[i].type == event_type::name_resource);
    CHECK(ev[i].resource == want[i].resource);
    CHECK(ev[i].handle == want[i].handle);
    CHECK(ev[i].message == want[i].name);
  }
}

TEST_CASE("generic resources and user sync objects") {
  t::recorder rec;
  nvtxDomainHandle_t const d = nvtxDomainCreateA("sync-domain");
  int object = 0;
  nvtxResourceAttributes_t ra{};
  ra.version = NVTX_VERSION;
  ra.size = NVTX_RESOURCE_ATTRIB_STRUCT_SIZE;
  ra.identifierType = NVTX_RESOURCE_TYPE_GENERIC_POINTER;
  ra.identifier.pValue = &object;
  ra.messageType = NVTX_MESSAGE_TYPE_ASCII;
  ra.message.ascii = "my object";
  nvtxResourceHandle_t const res = nvtxDomainResourceCreate(d, &ra);
  nvtxDomainResourceDestroy(res);

  nvtxSyncUserAttributes_t sa{};
  sa.version = NVTX_VERSION;
  sa.size = NVTX_SYNCUSER_ATTRIB_STRUCT_SIZE;
  sa.messageType = NVTX_MESSAGE_TYPE_ASCII;
  sa.message.ascii = "my lock";
  nvtxSyncUser_t const s = nvtxDomainSyncUserCreate(d, &sa);
  nvtxDomainSyncUserAcquireStart(s);
  nvtxDomainSyncUserAcquireFailed(s);
  nvtxDomainSyncUserAcquireStart(s);
  nvtxDomainSyncUserAcquireSuccess(s);
  nvtxDomainSyncUserReleasing(s);
  nvtxDomainSyncUserDestroy(s);

  auto const ev = rec.events();
  REQUIRE(ev.size() == 10);
  CHECK(ev[1].type == event_type::name_resource);
  CHECK(ev[1].resource == "generic_pointer");
  CHECK(ev[1].handle == reinterpret_cast<std::uintptr_t>(&object));
  CHECK(ev[1].message == "my object");
  CHECK(ev[1].domain == "sync-domain");
  CHECK(ev[2].type == event_type::resource_destroy);
  CHECK(ev[2].handle == reinterpret_cast<std::uintptr_t>(&object));
  event_type const sync_order[] = {event_type::sync_create,          event_type::sync_acquire_start,
                                   event_type::sync_acquire_failed,  event_type::sync_acquire_start,
                                   event_type::sync_acquire_success, event_type::sync_releasing,
                                   event_type::sync_destroy};
  for (std::size_t i = 0; i < 7; ++i) {
    CHECK(ev[3 + i].type == sync_order[i]);
    CHECK(ev[3 + i].handle == ev[3].handle);
    CHECK(ev[3 + i].domain == "sync-domain");
  }
  CHECK(ev[3].message == "my lock");
}

TEST_CASE("null messages are recorded as \"(null)\" with a warning") {
  t::recorder rec;
  nvtxRangePushA(nullptr);
  nvtxRangePop();
  nvtxMarkW(nullptr);
  nvtxMarkEx(nullptr);
  nvtxDomainHandle_t const d = nvtxDomainCreateA("null-domain");
  CHECK(nvtxDomainRegisterStringA(d, nullptr) == nullptr);
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = nullptr;
  nvtxDomainMarkEx(d, &a);
  auto const ev = rec.events();
  REQUIRE(ev.size() == 6);
  for (std::size_t i : {0U, 2U, 3U, 5U}) {
    CHECK(ev[i].message == "(null)");
    CHECK(ev[i].null_message);
  }
  auto const w = rec.warnings();
  CHECK(std::count_if(w.begin(), w.end(), [](auto const& s) {
          return s.find("null message") != std::string::npos;
        }) == 4);
}

TEST_CASE("messages longer than max_message_bytes are truncated and flagged") {
  t::recorder rec;
  std::string const huge(10000, 'x');
  nvtxMarkA(huge.c_str());
  std::string utf8(t::max_message_bytes - 1, 'y');
  utf8 += "\xC3\xA9";  // a 2-byte character straddling the limit is dropped whole
  nvtxMarkA(utf8.c_str());
  std::wstring const wide(5000, L'\u00e9');
  nvtxMarkW(wide.c_str());
  std::string const exact(t::max_message_bytes, 'z');
  nvtxMarkA(exact.c_str());
  auto const ev = rec.events();
  REQUIRE(ev.size() == 4);
  CHECK(ev[0].message == std::string(t::max_message_bytes, 'x'));
  CHECK(ev[0].truncated);
  CHECK(ev[1].message == std::string(t::max_message_bytes - 1, 'y'));
  CHECK(ev[1].truncated);
  CHECK(ev[2].message.size() == t::max_message_bytes);
  CHECK(ev[2].truncated);
  CHECK(ev[3].message == exact);
  CHECK_FALSE(ev[3].truncated);
  CHECK(has_warning(rec.warnings(), "truncated"));
}

TEST_CASE("unbalanced pop and unknown end id: recorded, warned, never a crash") {
  t::recorder rec;
  CHECK(nvtxRangePop() < 0);
  nvtxRangeEnd(0xDEADBEEF);
  nvtxRangePushA("left open");
  auto const ev = rec.events();
  REQUIRE(ev.size() == 3);
  CHECK(ev[0].type == event_type::pop);
  CHECK(ev[0].depth == -1);
  CHECK(ev[1].type == event_type::end);
  CHECK(ev[1].range_id == 0xDEADBEEF);
  auto const w = rec.warnings();
  CHECK(has_warning(w, "pop without a matching push"));
  CHECK(has_warning(w, "end of unknown range id 0xdeadbeef"));
  CHECK(has_warning(w, "\"left open\" still open"));
  auto const ranges = rec.ranges();
  REQUIRE(ranges.size() == 1);
  CHECK(ranges[0].unterminated);
  nvtxRangePop();  // leave this thread balanced for the next tests
}

TEST_CASE("8 threads pushing and popping concurrently keep per-thread nesting") {
  constexpr int threads = 8;
  constexpr int iterations = 3000;  // ~50k events per thread: several blocks each
  t::recorder rec;
  std::vector<std::thread> pool;
  std::vector<std::uint64_t> tids(threads);
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([i, &tids] {
      tids[static_cast<std::size_t>(i)] = this_tid();
      std::string const name = "thread " + std::to_string(i);
      for (int k = 0; k < iterations; ++k) {
        nvtxRangePushA(name.c_str());
        nvtxRangePushA("level 1");
        nvtxRangePushA("level 2");
        nvtxRangePop();
        nvtxRangePop();
        nvtxMarkA("between");
        nvtxRangePushA("level 1b");
        nvtxRangePop();
        nvtxRangePop();
      }
    });
  }
  for (auto& th : pool) {
    th.join();
  }
  auto const ev = rec.events();
  CHECK(ev.size() == static_cast<std::size_t>(threads) * iterations * 9);
  std::map<std::uint64_t, std::vector<t::event const*>> by_thread;
  for (auto const& e : ev) {
    by_thread[e.thread_id].push_back(&e);
  }
  REQUIRE(by_thread.size() == static_cast<std::size_t>(threads));
  for (int i = 0; i < threads; ++i) {
    auto const& mine = by_thread[tids[static_cast<std::size_t>(i)]];
    REQUIRE(mine.size() == static_cast<std::size_t>(iterations) * 9);
    std::string const name = "thread " + std::to_string(i);
    // Expected per iteration: (type, message, depth)
    struct step {
      event_type type;
      char const* message;
      int depth;
    };
    step const want[] = {{event_type::push, nullptr, 0},    {event_type::push, "level 1", 1},
                         {event_type::push, "level 2", 2},  {event_type::pop, "", 2},
                         {event_type::pop, "", 1},          {event_type::mark, "between", 0},
                         {event_type::push, "level 1b", 1}, {event_type::pop, "", 1},
                         {event_type::pop, "", 0}};
    bool all_match = true;
    for (std::size_t k = 0; k < mine.size(); ++k) {
      auto const& w = want[k % 9];
      auto const& e = *mine[k];
      std::string const msg = w.message == nullptr ? name : w.message;
      bool const ok = e.type == w.type && e.message == msg &&
                      (e.type == event_type::mark || e.depth == w.depth);
      if (!ok) {
        all_match = false;
        INFO("thread " << i << " event " << k << ": " << t::to_string(e));
        CHECK(ok);
        break;
      }
    }
    CHECK(all_match);
  }
  CHECK(rec.warnings().empty());
}

TEST_CASE("events of threads that exited survive; clear() releases them") {
  t::recorder rec;
  for (int i = 0; i < 3; ++i) {
    std::thread{[i] {
      nvtxRangePushA(("short-lived " + std::to_string(i)).c_str());
      nvtxRangePop();
    }}.join();
  }
  auto ev = rec.events();
  REQUIRE(ev.size() == 6);
  CHECK(ev[0].message == "short-lived 0");
  CHECK(ev[4].message == "short-lived 2");
  CHECK(ev[0].thread_id != ev[2].thread_id);
  rec.clear();
  CHECK(rec.events().empty());
}

TEST_CASE("to_string describes an event on one line") {
  t::recorder rec;
  auto a = attributes("step");
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF00FF00U;
  a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
  a.payload.iValue = 5;
  nvtxRangePushEx(&a);
  nvtxRangePop();
  auto const ev = rec.events();
  REQUIRE(ev.size() == 2);
  std::string const line = t::to_string(ev[0]);
  CHECK(line.find("push") == 0);
  CHECK(line.find("\"step\"") != std::string::npos);
  CHECK(line.find("color=0xFF00FF00") != std::string::npos);
  CHECK(line.find("payload=i32:5") != std::string::npos);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(std::string{t::to_string(event_type::name_resource)} == "name_resource");
}
