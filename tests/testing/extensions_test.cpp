// nvtxpp::testing records the NVTX extensions: counter samples (through nvtxpp::counter and the
// raw C API) and structured payloads (through NVTX's C payload API: schemas, enums, payloads on
// event attributes and the nvtx*Payload calls). What NVTX delivered is what must come back.
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCounters.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <nvtxpp/counter.hpp>
#include <nvtxpp/nvtxpp.hpp>
#include <nvtxpp/struct_payload.hpp>
#include <nvtxpp/testing/recorder.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "nvtx_c.hpp"

namespace t = nvtxpp::testing;
using t::event_type;

namespace shapes {

enum class phase : std::uint16_t { warmup = 1, steady = 2 };

/// nvtxpp's struct payloads (NVTXPP_PAYLOAD_SCHEMA), decoded by the recorder.
struct step_info {
  std::int8_t i8;
  std::uint64_t u64;
  double d;
  bool flag;
  phase ph;
  char tag[12];
};
NVTXPP_PAYLOAD_SCHEMA(step_info, i8, u64, d, flag, ph, tag);

}  // namespace shapes

namespace {

struct ext_domain {
  static constexpr char const* name = "extensions";
};

std::vector<t::event> of_type(std::vector<t::event> const& ev, event_type type) {
  std::vector<t::event> out;
  std::copy_if(ev.begin(), ev.end(), std::back_inserter(out),
               [&](auto const& e) { return e.type == type; });
  return out;
}

bool has_warning(std::vector<std::string> const& warnings, std::string const& part) {
  return std::any_of(warnings.begin(), warnings.end(),
                     [&](auto const& w) { return w.find(part) != std::string::npos; });
}

t::payload_field const& field(std::vector<t::payload_field> const& fields, std::string const& n) {
  auto it = std::find_if(fields.begin(), fields.end(), [&](auto const& f) { return f.name == n; });
  REQUIRE(it != fields.end());
  return *it;
}

nvtxDomainHandle_t ext_handle() {
  static nvtxDomainHandle_t const h = nvtxDomainCreateA("extensions");
  return h;
}

template <typename T>
void check_counter_type(char const* type_name, T value) {
  static nvtxpp::counter<T> c{type_name};
  t::recorder rec;
  c.sample(value);
  auto const ev = of_type(rec.events(), event_type::counter_sample);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].message == type_name);
  CHECK(ev[0].counter.name == type_name);
  CHECK(ev[0].counter.type_name == type_name);
  CHECK(ev[0].counter.registered);
  CHECK_FALSE(ev[0].counter.no_value);
  CHECK_FALSE(ev[0].counter.batch);
  if constexpr (std::is_floating_point_v<T>) {
    REQUIRE(std::holds_alternative<double>(ev[0].counter.value));
    CHECK(std::get<double>(ev[0].counter.value) == static_cast<double>(value));
  } else if constexpr (std::is_signed_v<T>) {
    REQUIRE(std::holds_alternative<std::int64_t>(ev[0].counter.value));
    CHECK(std::get<std::int64_t>(ev[0].counter.value) == value);
  } else {
    REQUIRE(std::holds_alternative<std::uint64_t>(ev[0].counter.value));
    CHECK(std::get<std::uint64_t>(ev[0].counter.value) == value);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Counters.

TEST_CASE("counter samples of every value type keep name, type and value") {
  check_counter_type<std::int8_t>("i8", -8);
  check_counter_type<std::uint8_t>("u8", 200);
  check_counter_type<std::int16_t>("i16", -30000);
  check_counter_type<std::uint16_t>("u16", 60000);
  check_counter_type<std::int32_t>("i32", -2000000000);
  check_counter_type<std::uint32_t>("u32", 4000000000U);
  check_counter_type<std::int64_t>("i64", -(std::int64_t{1} << 60));  // nvtxCounterSampleInt64
  check_counter_type<std::uint64_t>("u64", ~std::uint64_t{0} - 1);
  check_counter_type<float>("f32", 1.5f);
  check_counter_type<double>("f64", -2.25);  // nvtxCounterSampleFloat64
}

TEST_CASE("counter registration: description, unit, scope, limits and domain are carried") {
  static nvtxpp::counter_in<ext_domain, std::int32_t> c{
      "queue depth", nvtxpp::counter_unit{"requests"}, nvtxpp::counter_description{"waiting"},
      nvtxpp::counter_scope::thread, nvtxpp::counter_limits{0, 64}};
  t::recorder rec;
  c.sample(3);
  c.add(2);
  auto const ev = of_type(rec.events(), event_type::counter_sample);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].domain == "extensions");
  CHECK(ev[0].counter.unit == "requests");
  CHECK(ev[0].counter.description == "waiting");
  CHECK(ev[0].counter.scope == NVTX_SCOPE_CURRENT_SW_THREAD);
  CHECK(ev[0].counter.value_type == NVTX_PAYLOAD_ENTRY_TYPE_INT32);
  CHECK(ev[0].counter.limit_min == t::field_value{std::int64_t{0}});
  CHECK(ev[0].counter.limit_max == t::field_value{std::int64_t{64}});
  CHECK(ev[0].counter.id >= NVTX_COUNTER_ID_DYNAMIC_START);
  CHECK(ev[0].counter.value == t::field_value{std::int64_t{3}});
  CHECK(ev[1].counter.value == t::field_value{std::int64_t{2}});  // the running total
  CHECK(ev[0].time_ns <= ev[1].time_ns);
}

TEST_CASE("counter samples without value keep their reason") {
  static nvtxpp::counter<std::int64_t> c{"no value"};
  t::recorder rec;
  c.sample_no_value(nvtxpp::no_value_reason::zero);
  c.sample_no_value(nvtxpp::no_value_reason::unchanged);
  c.sample_no_value(nvtxpp::no_value_reason::unavailable);
  auto const ev = of_type(rec.events(), event_type::counter_sample);
  REQUIRE(ev.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    REQUIRE(ev[i].counter.no_value);
    CHECK(*ev[i].counter.no_value == i);
    CHECK(ev[i].counter.value.index() == 0);
    CHECK(ev[i].counter.name == "no value");
  }
}

TEST_CASE("a counter batch becomes one sample per value, in order") {
  static nvtxpp::counter<std::uint16_t> c{"batched"};
  t::recorder rec;
  std::array<std::uint16_t, 4> const values{7, 8, 65535, 0};
  c.sample_batch(values);
  auto const ev = of_type(rec.events(), event_type::counter_sample);
  REQUIRE(ev.size() == 4);
  for (std::size_t i = 0; i < values.size(); ++i) {
    CHECK(ev[i].counter.batch);
    CHECK(ev[i].counter.value == t::field_value{std::uint64_t{values[i]}});
  }
  CHECK(rec.warnings().empty());
}

TEST_CASE("counter samples from many threads are all recorded") {
  static nvtxpp::counter<std::int64_t> c{"threads"};
  constexpr int threads = 4;
  constexpr int per_thread = 2000;
  t::recorder rec;
  // Registered first: samples other threads make while one registers it are dropped (counter.hpp).
  c.sample(-1);
  rec.clear();
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k) {
    pool.emplace_back([k] {
      for (int i = 0; i < per_thread; ++i) {
        c.sample(std::int64_t{k} * per_thread + i);
      }
    });
  }
  for (auto& th : pool) {
    th.join();
  }
  auto const ev = of_type(rec.events(), event_type::counter_sample);
  REQUIRE(ev.size() == threads * per_thread);
  std::vector<std::int64_t> seen;
  std::map<std::uint64_t, std::int64_t> last_by_thread;
  for (auto const& e : ev) {
    auto const v = std::get<std::int64_t>(e.counter.value);
    seen.push_back(v);
    auto [it, fresh] = last_by_thread.try_emplace(e.thread_id, v);
    if (!fresh) {
      CHECK(v == it->second + 1);  // each thread's samples in its call order
      it->second = v;
    }
  }
  CHECK(last_by_thread.size() == threads);
  std::sort(seen.begin(), seen.end());
  for (int i = 0; i < threads * per_thread; ++i) {
    REQUIRE(seen[static_cast<std::size_t>(i)] == i);
  }
}

TEST_CASE("a sample for an id never registered is kept, flagged and warned about") {
  t::recorder rec;
  nvtxCounterSampleInt64(ext_handle(), 0xABCDEF, 42);
  auto const ev = of_type(rec.events(), event_type::counter_sample);
  REQUIRE(ev.size() == 1);
  CHECK_FALSE(ev[0].counter.registered);
  CHECK(ev[0].counter.id == 0xABCDEF);
  CHECK(ev[0].counter.value == t::field_value{std::int64_t{42}});
  CHECK(has_warning(rec.warnings(), "unregistered counter id"));
}

TEST_CASE("a counter group (schema) sample decodes each entry") {
  struct group {
    std::uint32_t hits;
    double ratio;
  };
  nvtxPayloadSchemaEntry_t entries[] = {{0, NVTX_PAYLOAD_ENTRY_TYPE_UINT32, "hits", nullptr, 0,
                                         offsetof(group, hits), nullptr, nullptr},
                                        {0, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, "ratio", nullptr, 0,
                                         offsetof(group, ratio), nullptr, nullptr}};
  nvtxPayloadSchemaAttr_t sa{};
  sa.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
                 NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                 NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                 NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE;
  sa.name = "cache";
  sa.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
  sa.flags = NVTX_PAYLOAD_SCHEMA_FLAG_COUNTER_GROUP;
  sa.entries = entries;
  sa.numEntries = 2;
  sa.payloadStaticSize = sizeof(group);
  t::recorder rec;
  std::uint64_t const schema = nvtxPayloadSchemaRegister(ext_handle(), &sa);
  CHECK(schema >= NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START);
  nvtxCounterAttr_t ca{};
  ca.structSize = sizeof ca;
  ca.schemaId = schema;
  ca.name = "cache group";
  std::uint64_t const id = nvtxCounterRegister(ext_handle(), &ca);
  group const g{12, 0.75};
  nvtxCounterSample(ext_handle(), id, &g, sizeof g);
  group const batch[2] = {{1, 0.5}, {2, 0.25}};
  nvtxCounterBatch_t b{};
  b.counterId = id;
  b.counters = batch;
  b.countersSize = sizeof batch;
  nvtxCounterBatchSubmit(ext_handle(), &b);
  auto const ev = of_type(rec.events(), event_type::counter_sample);
  REQUIRE(ev.size() == 3);
  CHECK(ev[0].counter.type_name == "cache");
  CHECK(ev[0].counter.value.index() == 0);
  REQUIRE(ev[0].counter.fields.size() == 2);
  CHECK(field(ev[0].counter.fields, "hits").value == t::field_value{std::uint64_t{12}});
  CHECK(field(ev[0].counter.fields, "ratio").value == t::field_value{0.75});
  CHECK(ev[1].counter.batch);
  CHECK(field(ev[1].counter.fields, "hits").value == t::field_value{std::uint64_t{1}});
  CHECK(field(ev[2].counter.fields, "ratio").value == t::field_value{0.25});
  CHECK(rec.warnings().empty());
}

// ---------------------------------------------------------------------------------------------
// Structured payloads.

namespace {

enum class color_code : std::uint32_t { red = 1, green = 2, blue = 4 };

struct all_types {
  std::int8_t i8;
  std::int16_t i16;
  std::int32_t i32;
  std::int64_t i64;
  std::uint8_t u8;
  std::uint16_t u16;
  std::uint32_t u32;
  std::uint64_t u64;
  float f;
  double d;
  bool b;
  color_code e;
  char text[16];
};

std::uint64_t color_enum() {
  static std::uint64_t const id = [] {
    nvtxPayloadEnum_t const values[] = {{"red", 1, 0}, {"green", 2, 0}, {"blue", 4, 0}};
    nvtxPayloadEnumAttr_t a{};
    a.fieldMask = NVTX_PAYLOAD_ENUM_ATTR_FIELD_NAME | NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES |
                  NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES | NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE;
    a.name = "color_code";
    a.entries = values;
    a.numEntries = 3;
    a.sizeOfEnum = sizeof(color_code);
    return nvtxPayloadEnumRegister(ext_handle(), &a);
  }();
  return id;
}

/// The all_types schema; `with_offsets` false leaves the offsets to the tool.
std::uint64_t all_types_schema(bool with_offsets) {
  auto e = [&](std::uint64_t type, char const* name, std::size_t offset, std::uint64_t flags = 0,
               std::uint64_t array = 0) {
    return nvtxPayloadSchemaEntry_t{
        flags, type, name, nullptr, array, with_offsets ? offset : 0, nullptr, nullptr};
  };
  nvtxPayloadSchemaEntry_t const entries[] = {
      e(NVTX_PAYLOAD_ENTRY_TYPE_INT8, "i8", offsetof(all_types, i8)),
      e(NVTX_PAYLOAD_ENTRY_TYPE_INT16, "i16", offsetof(all_types, i16)),
      e(NVTX_PAYLOAD_ENTRY_TYPE_INT32, "i32", offsetof(all_types, i32)),
      e(NVTX_PAYLOAD_ENTRY_TYPE_INT64, "i64", offsetof(all_types, i64)),
      e(NVTX_PAYLOAD_ENTRY_TYPE_UINT8, "u8", offsetof(all_types, u8)),
      e(NVTX_PAYLOAD_ENTRY_TYPE_UINT16, "u16", offsetof(all_types, u16)),
      e(NVTX_PAYLOAD_ENTRY_TYPE_UINT32, "u32", offsetof(all_types, u32)),
      e(NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "u64", offsetof(all_types, u64)),
      e(NVTX_PAYLOAD_ENTRY_TYPE_FLOAT, "f", offsetof(all_types, f)),
      e(NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, "d", offsetof(all_types, d)),
      // NVTX has no bool entry type: a bool is one byte, registered as UINT8.
      e(NVTX_PAYLOAD_ENTRY_TYPE_UINT8, "b", offsetof(all_types, b)),
      e(color_enum(), "e", offsetof(all_types, e)),
      e(NVTX_PAYLOAD_ENTRY_TYPE_CHAR, "text", offsetof(all_types, text),
        NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_FIXED_SIZE, 16)};
  nvtxPayloadSchemaAttr_t a{};
  a.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
                NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES;
  a.name = with_offsets ? "all_types" : "all_types_computed";
  a.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
  a.entries = entries;
  a.numEntries = sizeof entries / sizeof entries[0];
  return nvtxPayloadSchemaRegister(ext_handle(), &a);
}

all_types sample_value() {
  all_types v{};
  v.i8 = -100;
  v.i16 = -30000;
  v.i32 = -2000000000;
  v.i64 = -(std::int64_t{1} << 62);
  v.u8 = 250;
  v.u16 = 65000;
  v.u32 = 4000000000U;
  v.u64 = ~std::uint64_t{0};
  v.f = 0.5f;
  v.d = -1e300;
  v.b = true;
  v.e = color_code::blue;
  std::strcpy(v.text, "hello");
  return v;
}

void check_all_types(t::structured_payload const& p, std::string const& schema_name) {
  CHECK(p.decoded);
  CHECK(p.schema_name == schema_name);
  CHECK(p.bytes.size() == sizeof(all_types));
  auto const& f = p.fields;
  REQUIRE(f.size() == 13);
  CHECK(field(f, "i8").value == t::field_value{std::int64_t{-100}});
  CHECK(field(f, "i8").type_name == "i8");
  CHECK(field(f, "i16").value == t::field_value{std::int64_t{-30000}});
  CHECK(field(f, "i32").value == t::field_value{std::int64_t{-2000000000}});
  CHECK(field(f, "i64").value == t::field_value{-(std::int64_t{1} << 62)});
  CHECK(field(f, "i64").type_name == "i64");
  CHECK(field(f, "u8").value == t::field_value{std::uint64_t{250}});
  CHECK(field(f, "u16").value == t::field_value{std::uint64_t{65000}});
  CHECK(field(f, "u32").value == t::field_value{std::uint64_t{4000000000U}});
  CHECK(field(f, "u64").value == t::field_value{~std::uint64_t{0}});
  CHECK(field(f, "u64").type_name == "u64");
  CHECK(field(f, "f").value == t::field_value{0.5});
  CHECK(field(f, "f").type_name == "f32");
  CHECK(field(f, "d").value == t::field_value{-1e300});
  CHECK(field(f, "d").type_name == "f64");
  CHECK(field(f, "b").value == t::field_value{std::uint64_t{1}});
  CHECK(field(f, "e").value == t::field_value{std::uint64_t{4}});
  CHECK(field(f, "e").type_name == "enum");
  CHECK(field(f, "e").enum_name == "blue");
  CHECK(field(f, "text").value == t::field_value{std::string{"hello"}});
  CHECK(field(f, "text").type_name == "char[]");
  CHECK(field(f, "text").array_length == 16);
  // Offsets as the compiler laid the struct out, whether given or computed by the recorder.
  CHECK(field(f, "i16").offset == offsetof(all_types, i16));
  CHECK(field(f, "i64").offset == offsetof(all_types, i64));
  CHECK(field(f, "u8").offset == offsetof(all_types, u8));
  CHECK(field(f, "d").offset == offsetof(all_types, d));
  CHECK(field(f, "e").offset == offsetof(all_types, e));
  CHECK(field(f, "text").offset == offsetof(all_types, text));
}

}  // namespace

TEST_CASE("a structured payload on a push decodes every entry type by its schema") {
  t::recorder rec;
  std::uint64_t const schema = all_types_schema(true);
  all_types const v = sample_value();
  nvtxEventAttributes_t a = nvtxpp_test::attributes("with payload");
  nvtxPayloadData_t pd{};
  NVTX_PAYLOAD_EVTATTR_SET_DATA(a, &pd, schema, &v, sizeof v)
  nvtxDomainRangePushEx(ext_handle(), &a);
  nvtxDomainRangePop(ext_handle());
  auto const ev = rec.events();
  auto const pushes = of_type(ev, event_type::push);
  REQUIRE(pushes.size() == 1);
  CHECK(pushes[0].message == "with payload");
  CHECK(pushes[0].payload.index() == 0);  // no scalar payload
  REQUIRE(pushes[0].payloads.size() == 1);
  CHECK(pushes[0].payloads[0].schema_id == schema);
  check_all_types(pushes[0].payloads[0], "all_types");
  auto const ranges = rec.ranges();
  REQUIRE(ranges.size() == 1);
  REQUIRE(ranges[0].payloads.size() == 1);
  CHECK(ranges[0].payloads[0].decoded);
  CHECK(rec.warnings().empty());
}

TEST_CASE("offsets left to the tool follow natural alignment") {
  t::recorder rec;
  std::uint64_t const schema = all_types_schema(false);
  all_types const v = sample_value();
  nvtxEventAttributes_t a = nvtxpp_test::attributes("computed offsets");
  nvtxPayloadData_t pd{};
  NVTX_PAYLOAD_EVTATTR_SET_DATA(a, &pd, schema, &v, sizeof v)
  nvtxDomainMarkEx(ext_handle(), &a);
  auto const marks = of_type(rec.events(), event_type::mark);
  REQUIRE(marks.size() == 1);
  REQUIRE(marks[0].payloads.size() == 1);
  check_all_types(marks[0].payloads[0], "all_types_computed");
}

TEST_CASE("several payloads on one event, and the nvtx*Payload calls") {
  t::recorder rec;
  std::uint64_t const schema = all_types_schema(true);
  all_types const v1 = sample_value();
  all_types v2 = sample_value();
  v2.i32 = 7;
  nvtxPayloadData_t pd[] = {{schema, sizeof v1, &v1}, {schema, sizeof v2, &v2}};
  nvtxEventAttributes_t a = nvtxpp_test::attributes("two payloads");
  NVTX_PAYLOAD_EVTATTR_SET_MULTIPLE(a, pd)
  nvtxDomainMarkEx(ext_handle(), &a);
  nvtxMarkPayload(ext_handle(), pd, 1);
  CHECK(nvtxRangePushPayload(ext_handle(), pd + 1, 1) == 0);
  CHECK(nvtxRangePopPayload(ext_handle(), pd, 1) == 0);
  nvtxRangeId_t const id = nvtxRangeStartPayload(ext_handle(), pd, 1);
  nvtxRangeEndPayload(ext_handle(), id, pd + 1, 1);
  auto const ev = rec.events();
  auto const marks = of_type(ev, event_type::mark);
  REQUIRE(marks.size() == 2);
  REQUIRE(marks[0].payloads.size() == 2);
  CHECK(field(marks[0].payloads[0].fields, "i32").value ==
        t::field_value{std::int64_t{-2000000000}});
  CHECK(field(marks[0].payloads[1].fields, "i32").value == t::field_value{std::int64_t{7}});
  REQUIRE(marks[1].payloads.size() == 1);
  CHECK(marks[1].message.empty());
  CHECK(marks[1].domain == "extensions");
  auto const pushes = of_type(ev, event_type::push);
  REQUIRE(pushes.size() == 1);
  REQUIRE(pushes[0].payloads.size() == 1);
  CHECK(field(pushes[0].payloads[0].fields, "i32").value == t::field_value{std::int64_t{7}});
  auto const pops = of_type(ev, event_type::pop);
  REQUIRE(pops.size() == 1);
  CHECK(pops[0].payloads.size() == 1);
  auto const starts = of_type(ev, event_type::start);
  auto const ends = of_type(ev, event_type::end);
  REQUIRE(starts.size() == 1);
  REQUIRE(ends.size() == 1);
  CHECK(starts[0].range_id == id);
  CHECK(ends[0].range_id == id);
  CHECK(ends[0].payloads.size() == 1);
  CHECK(rec.ranges().size() == 2);
}

TEST_CASE("a payload of unknown schema or wrong size is kept as raw bytes with a warning") {
  t::recorder rec;
  std::uint64_t const schema = all_types_schema(true);
  unsigned char const raw[5] = {1, 2, 3, 4, 5};
  nvtxEventAttributes_t a = nvtxpp_test::attributes("unknown schema");
  nvtxPayloadData_t pd{};
  NVTX_PAYLOAD_EVTATTR_SET_DATA(a, &pd, 0x7777777, raw, sizeof raw)
  nvtxDomainMarkEx(ext_handle(), &a);
  nvtxEventAttributes_t b = nvtxpp_test::attributes("short payload");
  nvtxPayloadData_t pd2{};
  NVTX_PAYLOAD_EVTATTR_SET_DATA(b, &pd2, schema, raw, sizeof raw)
  nvtxDomainMarkEx(ext_handle(), &b);
  auto const marks = of_type(rec.events(), event_type::mark);
  REQUIRE(marks.size() == 2);
  REQUIRE(marks[0].payloads.size() == 1);
  CHECK_FALSE(marks[0].payloads[0].decoded);
  CHECK(marks[0].payloads[0].schema_id == 0x7777777);
  CHECK(marks[0].payloads[0].fields.empty());
  CHECK(marks[0].payloads[0].bytes == std::vector<unsigned char>(raw, raw + 5));
  REQUIRE(marks[1].payloads.size() == 1);
  CHECK_FALSE(marks[1].payloads[0].decoded);
  CHECK(marks[1].payloads[0].schema_name == "all_types");
  CHECK(marks[1].payloads[0].bytes.size() == 5);
  auto const w = rec.warnings();
  CHECK(has_warning(w, "unknown schema 125269879"));
  CHECK(has_warning(w, "has 5 bytes, the schema"));
}

TEST_CASE("a static schema id and a payload without a size") {
  nvtxPayloadSchemaEntry_t const entries[] = {
      {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "x", nullptr, 0, 0, nullptr, nullptr}};
  nvtxPayloadSchemaAttr_t a{};
  a.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID;
  a.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
  a.entries = entries;
  a.numEntries = 1;
  a.schemaId = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5;
  t::recorder rec;
  CHECK(nvtxPayloadSchemaRegister(ext_handle(), &a) == NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5);
  std::int32_t const x = -5;
  nvtxPayloadData_t pd[] = {{NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5, sizeof x, &x},
                            {NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5, SIZE_MAX, &x}};
  nvtxMarkPayload(ext_handle(), pd, 2);
  auto const marks = of_type(rec.events(), event_type::mark);
  REQUIRE(marks.size() == 1);
  REQUIRE(marks[0].payloads.size() == 2);
  CHECK(marks[0].payloads[0].decoded);
  CHECK(marks[0].payloads[0].fields.at(0).value == t::field_value{std::int64_t{-5}});
  CHECK_FALSE(marks[0].payloads[1].decoded);
  CHECK(has_warning(rec.warnings(), "without a size"));
}

TEST_CASE("to_string shows counter values and payload fields") {
  static nvtxpp::counter<std::int64_t> c{"printed"};
  t::recorder rec;
  c.sample(99);
  std::uint64_t const schema = all_types_schema(true);
  all_types const v = sample_value();
  nvtxPayloadData_t pd{schema, sizeof v, &v};
  nvtxMarkPayload(ext_handle(), &pd, 1);
  auto const ev = rec.events();
  REQUIRE(ev.size() == 2);
  CHECK(t::to_string(ev[0]).find("counter_sample") == 0);
  CHECK(t::to_string(ev[0]).find("value=99") != std::string::npos);
  CHECK(t::to_string(ev[1]).find("e=blue") != std::string::npos);
  CHECK(t::to_string(ev[1]).find("text=\"hello\"") != std::string::npos);
}

TEST_CASE("nvtxpp struct payloads (payload_of) decode field by field") {
  t::recorder rec;
  shapes::step_info info{-3, 1234567890123ULL, 2.5, true, shapes::phase::steady, "warm"};
  { nvtxpp::scoped_range r{"step {}", 1, nvtxpp::payload_of(info)}; }
  nvtxpp::mark("marked", nvtxpp::payload_of(info));
  auto const ev = rec.events();
  auto const pushes = of_type(ev, event_type::push);
  REQUIRE(pushes.size() == 1);
  CHECK(pushes[0].message == "step 1");
  REQUIRE(pushes[0].payloads.size() == 1);
  auto const& p = pushes[0].payloads[0];
  CHECK(p.decoded);
  CHECK(p.bytes.size() == sizeof info);
  REQUIRE(p.fields.size() == 6);
  CHECK(field(p.fields, "i8").value == t::field_value{std::int64_t{-3}});
  CHECK(field(p.fields, "u64").value == t::field_value{std::uint64_t{1234567890123ULL}});
  CHECK(field(p.fields, "d").value == t::field_value{2.5});
  CHECK(field(p.fields, "flag").value == t::field_value{std::uint64_t{1}});
  CHECK(field(p.fields, "ph").value == t::field_value{std::uint64_t{2}});
  CHECK(field(p.fields, "tag").value == t::field_value{std::string{"warm"}});
  CHECK(field(p.fields, "tag").type_name == "char[]");
  CHECK(field(p.fields, "d").offset == offsetof(shapes::step_info, d));
  auto const marks = of_type(ev, event_type::mark);
  REQUIRE(marks.size() == 1);
  REQUIRE(marks[0].payloads.size() == 1);
  CHECK(marks[0].payloads[0].decoded);
  CHECK(rec.warnings().empty());
}
