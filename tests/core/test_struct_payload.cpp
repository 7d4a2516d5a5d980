// nvtxpp/struct_payload.hpp: what NVTX receives for structured payloads. nvtxpp::testing does not
// record payload schemas, so this test is its own (static) NVTX tool: it takes the core slots
// (events, domains, registered strings) and the payload module's schema registration, and keeps
// what they receive. The strong injection pointers are in struct_payload_tool_hooks.cpp.
#include <nvtxpp/nvtxpp.hpp>
#include <nvtxpp/struct_payload.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"

namespace shapes {

enum class phase : std::uint16_t { warmup = 1, steady = 2 };
enum legacy : int { legacy_a = 7 };

/// Every supported field type.
struct step_info {
  std::int8_t i8;
  std::uint8_t u8;
  std::int16_t i16;
  std::uint16_t u16;
  std::int32_t i32;
  std::uint32_t u32;
  std::int64_t i64;
  std::uint64_t u64;
  float f;
  double d;
  bool flag;
  phase ph;
  legacy old;
  char tag[12];
};
NVTXPP_PAYLOAD_SCHEMA(step_info, i8, u8, i16, u16, i32, u32, i64, u64, f, d, flag, ph, old, tag);

/// Fields named in another order than declared, one left out.
struct chunk {
  std::uint32_t stream;
  std::uint64_t offset;
  std::uint64_t bytes;
  std::uint32_t hidden;
};
NVTXPP_PAYLOAD_SCHEMA(chunk, bytes, stream, offset);

struct refused_info {
  std::int32_t x;
};
NVTXPP_PAYLOAD_SCHEMA(refused_info, x);

struct threaded_info {
  std::uint64_t thread;
  std::uint64_t round;
};
NVTXPP_PAYLOAD_SCHEMA(threaded_info, thread, round);

}  // namespace shapes

namespace {

NVTXPP_DEFINE_DOMAIN(io_domain, "IO");
NVTXPP_DEFINE_DOMAIN(threads_domain, "threads");

struct schema_entry {
  std::uint64_t flags, type, array_length, offset;
  std::string name;
  bool has_description;
};
struct schema_registration {
  nvtxDomainHandle_t domain;
  std::string name;
  std::uint64_t field_mask, type, flags, static_size, id;
  std::vector<schema_entry> entries;
};
struct event {
  char kind;  // p: push, m: mark, s: start
  nvtxDomainHandle_t domain;
  std::string message;
  std::uint32_t color;
  std::int32_t color_type;
  std::int32_t payload_type;
  std::int32_t payload_count;
  std::uint64_t scalar;
  std::uint64_t schema;
  std::size_t size;
  std::vector<unsigned char> bytes;
};

std::mutex g_mutex;
std::vector<schema_registration> g_schemas;
std::vector<event> g_events;
std::deque<std::string> g_strings;  // registered strings and domain names (stable addresses)

constexpr std::uint64_t first_schema_id = NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START;

void record(char kind, nvtxDomainHandle_t d, nvtxEventAttributes_t const* a) {
  event e{};
  e.kind = kind;
  e.domain = d;
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) e.message = a->message.ascii;
  if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
    e.message = reinterpret_cast<char const*>(a->message.registered);
  }
  e.color = a->color;
  e.color_type = a->colorType;
  e.payload_type = a->payloadType;
  e.payload_count = a->reserved0;
  e.scalar = a->payload.ullValue;
  if (a->payloadType == NVTX_PAYLOAD_TYPE_EXT && a->reserved0 == 1) {
    auto const* data = reinterpret_cast<nvtxPayloadData_t const*>(
        static_cast<std::uintptr_t>(a->payload.ullValue));
    e.schema = data->schemaId;
    e.size = data->size;
    auto const* p = static_cast<unsigned char const*>(data->payload);
    e.bytes.assign(p, p + data->size);
  }
  std::lock_guard<std::mutex> lock{g_mutex};
  g_events.push_back(std::move(e));
}

int NVTX_API cb_push(nvtxDomainHandle_t d, nvtxEventAttributes_t const* a) {
  record('p', d, a);
  return 0;
}
int NVTX_API cb_pop(nvtxDomainHandle_t) { return 0; }
void NVTX_API cb_mark(nvtxDomainHandle_t d, nvtxEventAttributes_t const* a) { record('m', d, a); }
nvtxRangeId_t NVTX_API cb_start(nvtxDomainHandle_t d, nvtxEventAttributes_t const* a) {
  record('s', d, a);
  return 1;
}
void NVTX_API cb_end(nvtxDomainHandle_t, nvtxRangeId_t) {}
nvtxDomainHandle_t NVTX_API cb_domain(char const* name) {
  std::lock_guard<std::mutex> lock{g_mutex};
  g_strings.emplace_back(name);
  return reinterpret_cast<nvtxDomainHandle_t>(const_cast<char*>(g_strings.back().c_str()));
}
nvtxStringHandle_t NVTX_API cb_string(nvtxDomainHandle_t, char const* text) {
  std::lock_guard<std::mutex> lock{g_mutex};
  g_strings.emplace_back(text);
  return reinterpret_cast<nvtxStringHandle_t>(const_cast<char*>(g_strings.back().c_str()));
}

std::uint64_t NVTX_API cb_schema(nvtxDomainHandle_t d, nvtxPayloadSchemaAttr_t const* a) {
  schema_registration r{};
  r.domain = d;
  r.name = a->name != nullptr ? a->name : "";
  r.field_mask = a->fieldMask;
  r.type = a->type;
  r.flags = a->flags;
  r.static_size = a->payloadStaticSize;
  for (std::size_t i = 0; i < a->numEntries; ++i) {
    auto const& e = a->entries[i];
    r.entries.push_back({e.flags, e.type, e.arrayOrUnionDetail, e.offset,
                         e.name != nullptr ? e.name : "", e.description != nullptr});
  }
  std::lock_guard<std::mutex> lock{g_mutex};
  if (r.name == "refused_info") {
    g_schemas.push_back(r);
    return 0;  // a tool that does not take this schema
  }
  r.id = first_schema_id + g_schemas.size();
  g_schemas.push_back(r);
  return r.id;
}

template <typename F>
void set_slot(NvtxFunctionTable t, unsigned n, unsigned id, F* fn) {
  if (id < n) *t[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

std::vector<schema_registration> schemas_named(std::string const& name) {
  std::lock_guard<std::mutex> lock{g_mutex};
  std::vector<schema_registration> out;
  for (auto const& s : g_schemas) {
    if (s.name == name) out.push_back(s);
  }
  return out;
}

std::vector<event> take_events() {
  std::lock_guard<std::mutex> lock{g_mutex};
  std::vector<event> out;
  out.swap(g_events);
  return out;
}

template <typename T>
bool same_bytes(event const& e, T const& value) {
  // The bytes sent, padding included, against the object they were copied from.
  if (e.bytes.size() != sizeof value) return false;
  // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
  return std::memcmp(e.bytes.data(), &value, sizeof value) == 0;
}

}  // namespace

namespace payload_tool {
int NVTX_API init(NvtxGetExportTableFunc_t get) {
  auto const* cbs = static_cast<NvtxExportTableCallbacks const*>(get(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable t = nullptr;
  unsigned n = 0;
  if (cbs == nullptr || cbs->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) == 0) return 0;
  set_slot(t, n, NVTX_CBID_CORE2_DomainRangePushEx, &cb_push);
  set_slot(t, n, NVTX_CBID_CORE2_DomainRangePop, &cb_pop);
  set_slot(t, n, NVTX_CBID_CORE2_DomainMarkEx, &cb_mark);
  set_slot(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, &cb_start);
  set_slot(t, n, NVTX_CBID_CORE2_DomainRangeEnd, &cb_end);
  set_slot(t, n, NVTX_CBID_CORE2_DomainCreateA, &cb_domain);
  set_slot(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, &cb_string);
  return 1;
}

int NVTX_API init_extension(nvtxExtModuleInfo_t* info) {
  if (info == nullptr || info->moduleId != NVTX_EXT_PAYLOAD_MODULEID) return 1;
  intptr_t* slots = info->segments[0].functionSlots;
  slots[NVTX3EXT_CBID_nvtxPayloadSchemaRegister] = reinterpret_cast<intptr_t>(&cb_schema);
  return 1;
}
}  // namespace payload_tool

TEST_CASE("struct payloads: the schema comes from the type, at compile time") {
  using shapes::step_info;
  constexpr auto const& s = nvtxpp::payload_schema<step_info>;
  STATIC_REQUIRE(nvtxpp::has_payload_schema<step_info>);
  STATIC_REQUIRE(!nvtxpp::has_payload_schema<int>);
  STATIC_REQUIRE(s.size == sizeof(step_info));
  STATIC_REQUIRE(s.fields.size() == 14);
  CHECK(std::string{s.name} == "step_info");
  STATIC_REQUIRE(s.fields[0].type == NVTX_PAYLOAD_ENTRY_TYPE_INT8);
  STATIC_REQUIRE(s.fields[7].type == NVTX_PAYLOAD_ENTRY_TYPE_UINT64);
  STATIC_REQUIRE(s.fields[13].offset == offsetof(step_info, tag));
  STATIC_REQUIRE(noexcept(nvtxpp::payload_of(std::declval<step_info const&>())));
}

TEST_CASE("struct payloads: a range's schema is registered once, its bytes go with each event") {
  using shapes::step_info;
  nvtxRangePushA("wake NVTX");  // NVTX initialises its tool on the first call
  nvtxRangePop();
  take_events();
  CHECK(schemas_named("step_info").empty());  // nothing registered before the first use

  step_info info{};
  info.i8 = -8;
  info.u8 = 200;
  info.i16 = -1600;
  info.u16 = 60000;
  info.i32 = -32;
  info.u32 = 4000000000u;
  info.i64 = -64;
  info.u64 = 0xFFFFFFFFFFull << 8;
  info.f = 0.5f;
  info.d = -2.25;
  info.flag = true;
  info.ph = shapes::phase::steady;
  info.old = shapes::legacy_a;
  std::memcpy(info.tag, "layer 3", 8);
  for (int i = 0; i < 2; ++i) {
    info.i32 = i;
    nvtxpp::scoped_range r{"step {}", i, nvtxpp::colors::red, nvtxpp::payload_of(info)};
  }
  { nvtxpp::scoped_range r{"literal step", nvtxpp::payload_of(info), nvtxpp::category{4}}; }

  auto const regs = schemas_named("step_info");
  REQUIRE(regs.size() == 1);
  auto const& reg = regs[0];
  CHECK(reg.domain == nullptr);  // the global domain
  CHECK(reg.type == NVTX_PAYLOAD_SCHEMA_TYPE_STATIC);
  CHECK(reg.flags == NVTX_PAYLOAD_SCHEMA_FLAG_NONE);
  CHECK(reg.static_size == sizeof(step_info));
  CHECK((reg.field_mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME) != 0);
  CHECK((reg.field_mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE) != 0);
  CHECK((reg.field_mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES) != 0);
  CHECK((reg.field_mask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES) != 0);
  struct expected_entry {
    char const* name;
    std::uint64_t type;
    std::size_t offset;
    std::uint64_t array_length;
  };
  expected_entry const want[] = {
      {"i8", NVTX_PAYLOAD_ENTRY_TYPE_INT8, offsetof(step_info, i8), 0},
      {"u8", NVTX_PAYLOAD_ENTRY_TYPE_UINT8, offsetof(step_info, u8), 0},
      {"i16", NVTX_PAYLOAD_ENTRY_TYPE_INT16, offsetof(step_info, i16), 0},
      {"u16", NVTX_PAYLOAD_ENTRY_TYPE_UINT16, offsetof(step_info, u16), 0},
      {"i32", NVTX_PAYLOAD_ENTRY_TYPE_INT32, offsetof(step_info, i32), 0},
      {"u32", NVTX_PAYLOAD_ENTRY_TYPE_UINT32, offsetof(step_info, u32), 0},
      {"i64", NVTX_PAYLOAD_ENTRY_TYPE_INT64, offsetof(step_info, i64), 0},
      {"u64", NVTX_PAYLOAD_ENTRY_TYPE_UINT64, offsetof(step_info, u64), 0},
      {"f", NVTX_PAYLOAD_ENTRY_TYPE_FLOAT, offsetof(step_info, f), 0},
      {"d", NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, offsetof(step_info, d), 0},
      {"flag", NVTX_PAYLOAD_ENTRY_TYPE_UINT8, offsetof(step_info, flag), 0},
      {"ph", NVTX_PAYLOAD_ENTRY_TYPE_UINT16, offsetof(step_info, ph), 0},
      {"old", NVTX_PAYLOAD_ENTRY_TYPE_INT32, offsetof(step_info, old), 0},
      {"tag", NVTX_PAYLOAD_ENTRY_TYPE_CSTRING, offsetof(step_info, tag), 12},
  };
  REQUIRE(reg.entries.size() == std::size(want));
  for (std::size_t i = 0; i < std::size(want); ++i) {
    INFO("entry " << i);
    CHECK(reg.entries[i].name == want[i].name);
    CHECK(reg.entries[i].type == want[i].type);
    CHECK(reg.entries[i].offset == want[i].offset);
    CHECK(reg.entries[i].array_length == want[i].array_length);
    CHECK(reg.entries[i].flags == 0);
    CHECK_FALSE(reg.entries[i].has_description);
  }

  auto const events = take_events();
  REQUIRE(events.size() == 3);
  for (int i = 0; i < 2; ++i) {
    auto const& e = events[static_cast<std::size_t>(i)];
    CHECK(e.kind == 'p');
    CHECK(e.message == "step " + std::to_string(i));
    CHECK(e.color_type == NVTX_COLOR_ARGB);
    CHECK(e.color == nvtxpp::colors::red.argb());
    CHECK(e.payload_type == NVTX_PAYLOAD_TYPE_EXT);
    CHECK(e.payload_count == 1);
    CHECK(e.schema == reg.id);
    CHECK(e.size == sizeof(step_info));
    step_info sent;
    std::memcpy(&sent, &info, sizeof sent);  // padding included
    sent.i32 = i;
    CHECK(same_bytes(e, sent));
  }
  CHECK(events[2].message == "literal step");  // a registered string: message unaffected
  CHECK(events[2].schema == reg.id);
  CHECK(same_bytes(events[2], info));
}

TEST_CASE("struct payloads: marks, start/end ranges and macros; once per domain and type") {
  using shapes::chunk;
  chunk const c{3, 4096, 1 << 20, 99};
  nvtxpp::mark("copied {}", 1, nvtxpp::payload_of(c));
  nvtxpp::mark_in<io_domain>("copied", nvtxpp::payload_of(c));
  { nvtxpp::start_end_range_in<io_domain> r{"copy", nvtxpp::payload_of(chunk{1, 2, 3, 4})}; }
  {
    NVTXPP_SCOPE_IN(io_domain, "scope", nvtxpp::payload_of(c), nvtxpp::colors::blue);
    NVTXPP_FUNCTION(nvtxpp::payload_of(c));
  }

  auto const regs = schemas_named("chunk");
  REQUIRE(regs.size() == 2);  // the global domain, then IO
  CHECK(regs[0].domain == nullptr);
  REQUIRE(regs[1].domain != nullptr);
  CHECK(std::string{reinterpret_cast<char const*>(regs[1].domain)} == "IO");
  for (auto const& reg : regs) {
    CHECK(reg.static_size == sizeof(chunk));
    REQUIRE(reg.entries.size() == 3);  // `hidden` is not named
    CHECK(reg.entries[0].name == "bytes");
    CHECK(reg.entries[0].offset == offsetof(chunk, bytes));
    CHECK(reg.entries[0].type == NVTX_PAYLOAD_ENTRY_TYPE_UINT64);
    CHECK(reg.entries[1].name == "stream");
    CHECK(reg.entries[1].offset == offsetof(chunk, stream));
    CHECK(reg.entries[1].type == NVTX_PAYLOAD_ENTRY_TYPE_UINT32);
    CHECK(reg.entries[2].name == "offset");
    CHECK(reg.entries[2].offset == offsetof(chunk, offset));
  }
  CHECK(regs[0].id != regs[1].id);

  auto const events = take_events();
  REQUIRE(events.size() == 5);
  CHECK((events[0].kind == 'm' && events[0].message == "copied 1"));
  CHECK((events[0].schema == regs[0].id && same_bytes(events[0], c)));
  CHECK((events[1].kind == 'm' && events[1].message == "copied"));
  CHECK((events[1].schema == regs[1].id && same_bytes(events[1], c)));
  CHECK((events[2].kind == 's' && events[2].message == "copy"));
  CHECK(events[2].schema == regs[1].id);
  REQUIRE(events[2].bytes.size() == sizeof(chunk));
  chunk got{};  // field by field: the temporary's padding bytes are unspecified
  std::memcpy(&got, events[2].bytes.data(), sizeof got);
  CHECK((got.stream == 1 && got.offset == 2 && got.bytes == 3 && got.hidden == 4));
  CHECK((events[3].kind == 'p' && events[3].message == "scope"));
  CHECK(events[3].color == nvtxpp::colors::blue.argb());
  CHECK((events[3].schema == regs[1].id && same_bytes(events[3], c)));
  CHECK((events[4].kind == 'p' && !events[4].message.empty()));  // the function's name
  CHECK((events[4].schema == regs[0].id && same_bytes(events[4], c)));
}

TEST_CASE("struct payloads: a schema the tool refuses is asked for once; events go without it") {
  shapes::refused_info const r{5};
  nvtxpp::mark("a", nvtxpp::payload_of(r), nvtxpp::colors::green);
  nvtxpp::mark("b", nvtxpp::payload_of(r));
  CHECK(schemas_named("refused_info").size() == 1);
  auto const events = take_events();
  REQUIRE(events.size() == 2);
  for (auto const& e : events) {
    CHECK(e.payload_type != NVTX_PAYLOAD_TYPE_EXT);
    CHECK(e.bytes.empty());
  }
  CHECK(events[0].color == nvtxpp::colors::green.argb());
  CHECK(events[1].message == "b");
}

TEST_CASE("struct payloads: 8 threads at once register the schema once") {
  using shapes::threaded_info;
  constexpr unsigned threads = 8;
  constexpr unsigned rounds = 50;
  // NVTX initialises its tool table without atomics: do it (and create the domain) before the
  // threads, so that only the schema's registration races.
  REQUIRE(nvtxpp::is_enabled<threads_domain>());
  std::atomic<unsigned> ready{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([t, &ready] {
      ready.fetch_add(1);
      while (ready.load() < threads) {
      }  // all start together
      for (unsigned i = 0; i < rounds; ++i) {
        nvtxpp::mark_in<threads_domain>("tick", nvtxpp::payload_of(threaded_info{t, i}));
      }
    });
  }
  for (auto& th : pool) th.join();
  nvtxpp::mark_in<threads_domain>("after", nvtxpp::payload_of(threaded_info{threads, 0}));

  auto const regs = schemas_named("threaded_info");
  REQUIRE(regs.size() == 1);
  auto const events = take_events();
  REQUIRE(events.size() == threads * rounds + 1);
  std::size_t with_payload = 0;
  for (auto const& e : events) {
    CHECK(e.message == (&e == &events.back() ? "after" : "tick"));
    if (e.payload_type != NVTX_PAYLOAD_TYPE_EXT) continue;  // made while another registered
    ++with_payload;
    CHECK(e.schema == regs[0].id);
    REQUIRE(e.bytes.size() == sizeof(threaded_info));
    threaded_info got{};
    std::memcpy(&got, e.bytes.data(), sizeof got);
    CHECK(got.thread <= threads);
    CHECK(got.round < rounds);
  }
  CHECK(with_payload >= 1);  // at least the registering thread's own event
  CHECK(events.back().schema == regs[0].id);
  CHECK(same_bytes(events.back(), threaded_info{threads, 0}));
}

TEST_CASE("struct payloads: the scalar payload still works beside them") {
  nvtxpp::mark("scalar", nvtxpp::payload{std::uint64_t{42}});
  auto const events = take_events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].payload_type == NVTX_PAYLOAD_TYPE_UNSIGNED_INT64);
  CHECK(events[0].scalar == 42);
}
