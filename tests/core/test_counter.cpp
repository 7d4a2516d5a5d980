// nvtxpp/counter.hpp: what the NVTX counters extension receives. nvtxpp::testing does not record
// counters yet, so this test is its own (static) NVTX tool: it takes the core push slot (so that
// nvtxpp sees a tool) and the counters module's slots, and keeps what they receive.
// The strong injection pointers are in counter_tool_hooks.cpp (built without NVTX's implementation,
// whose weak ones would clash here).
#include <nvtx3/nvToolsExtCounters.h>
#include <nvtx3/nvToolsExtSemanticsCounters.h>

#include <nvtxpp/counter.hpp>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "catch.hpp"

namespace {

struct registration {
  std::string name, description, unit;
  std::uint64_t schema = 0, scope = 0;
  std::int64_t limit_type = 0;
  nvtxCounterLimit_t min{}, max{};
};
struct sample {
  std::uint64_t id = 0;
  char kind = '?';  // i: Int64, f: Float64, r: raw bytes, n: no value, b: batch
  std::int64_t i = 0;
  double f = 0;
  std::vector<unsigned char> bytes;
  std::uint8_t reason = 0;
};
std::vector<registration> g_regs;
std::vector<sample> g_samples;

std::uint64_t first_id = NVTX_COUNTER_ID_DYNAMIC_START;  // ids this tool gives from

std::uint64_t NVTX_API cb_register(nvtxDomainHandle_t, nvtxCounterAttr_t const* a) {
  registration r;
  r.name = a->name;
  r.description = a->description != nullptr ? a->description : "";
  r.schema = a->schemaId;
  r.scope = a->scopeId;
  if (a->semantics != nullptr && a->semantics->semanticId == NVTX_SEMANTIC_ID_COUNTERS_V1) {
    auto const* s = reinterpret_cast<nvtxSemanticsCounter_t const*>(a->semantics);
    r.unit = s->unit != nullptr ? s->unit : "";
    r.limit_type = s->limitType;
    r.min = s->min;
    r.max = s->max;
  }
  g_regs.push_back(r);
  return first_id + g_regs.size() - 1;
}
void NVTX_API cb_int64(nvtxDomainHandle_t, std::uint64_t id, std::int64_t v) {
  sample s;
  s.id = id;
  s.kind = 'i';
  s.i = v;
  g_samples.push_back(s);
}
void NVTX_API cb_float64(nvtxDomainHandle_t, std::uint64_t id, double v) {
  sample s;
  s.id = id;
  s.kind = 'f';
  s.f = v;
  g_samples.push_back(s);
}
void NVTX_API cb_raw(nvtxDomainHandle_t, std::uint64_t id, void const* v, std::size_t n) {
  sample s;
  s.id = id;
  s.kind = 'r';
  auto const* p = static_cast<unsigned char const*>(v);
  s.bytes.assign(p, p + n);
  g_samples.push_back(s);
}
void NVTX_API cb_no_value(nvtxDomainHandle_t, std::uint64_t id, std::uint8_t reason) {
  sample s;
  s.id = id;
  s.kind = 'n';
  s.reason = reason;
  g_samples.push_back(s);
}
void NVTX_API cb_batch(nvtxDomainHandle_t, nvtxCounterBatch_t const* b) {
  sample s;
  s.id = b->counterId;
  s.kind = 'b';
  auto const* p = static_cast<unsigned char const*>(b->counters);
  s.bytes.assign(p, p + b->countersSize);
  g_samples.push_back(s);
}
int NVTX_API cb_push(nvtxDomainHandle_t, nvtxEventAttributes_t const*) { return 0; }

}  // namespace

namespace counter_tool {
int NVTX_API init(NvtxGetExportTableFunc_t get) {
  auto const* cbs = static_cast<NvtxExportTableCallbacks const*>(get(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable t = nullptr;
  unsigned n = 0;
  if (cbs == nullptr || cbs->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) == 0) return 0;
  if (NVTX_CBID_CORE2_DomainRangePushEx < n) {
    *t[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&cb_push);
  }
  return 1;
}

int NVTX_API init_extension(nvtxExtModuleInfo_t* info) {
  if (info == nullptr || info->moduleId != NVTX_EXT_COUNTERS_MODULEID) return 1;
  intptr_t* slots = info->segments[0].functionSlots;
  slots[NVTX3EXT_CBID_nvtxCounterRegister] = reinterpret_cast<intptr_t>(&cb_register);
  slots[NVTX3EXT_CBID_nvtxCounterSampleInt64] = reinterpret_cast<intptr_t>(&cb_int64);
  slots[NVTX3EXT_CBID_nvtxCounterSampleFloat64] = reinterpret_cast<intptr_t>(&cb_float64);
  slots[NVTX3EXT_CBID_nvtxCounterSample] = reinterpret_cast<intptr_t>(&cb_raw);
  slots[NVTX3EXT_CBID_nvtxCounterSampleNoValue] = reinterpret_cast<intptr_t>(&cb_no_value);
  slots[NVTX3EXT_CBID_nvtxCounterBatchSubmit] = reinterpret_cast<intptr_t>(&cb_batch);
  return 1;
}

}  // namespace counter_tool

namespace {
NVTXPP_DEFINE_DOMAIN(io_domain, "IO");
}  // namespace

TEST_CASE("counters: registered once, lazily, with their options; samples of each type") {
  static nvtxpp::counter<std::int64_t> bytes{
      "bytes in flight", nvtxpp::counter_unit{"B"}, nvtxpp::counter_limits<std::int64_t>{0, 4096},
      nvtxpp::counter_scope::process, nvtxpp::counter_description{"copies"}};
  static nvtxpp::counter_in<io_domain, double> ratio{"ratio"};
  static nvtxpp::counter<std::uint16_t> chunks{"chunks queued", nvtxpp::counter_scope::thread};
  nvtxRangePushA("wake NVTX");  // NVTX initialises its tool on the first call
  nvtxRangePop();
  CHECK(g_regs.empty());  // nothing registered before the first sample

  bytes.sample(100);
  bytes.sample(-5);
  ratio.sample(0.25);
  ratio.sample_no_value(nvtxpp::no_value_reason::unavailable);
  chunks.sample(7);
  std::array<std::uint16_t, 3> const batch{1, 2, 3};
  chunks.sample_batch(batch);
  {
    nvtxpp::gauge g{bytes, std::int64_t{64}};
    CHECK(bytes.total() == 64);
  }
  CHECK(bytes.total() == 0);

  REQUIRE(g_regs.size() == 3);
  CHECK(g_regs[0].name == "bytes in flight");
  CHECK(g_regs[0].description == "copies");
  CHECK(g_regs[0].unit == "B");
  CHECK(g_regs[0].schema == NVTX_PAYLOAD_ENTRY_TYPE_INT64);
  CHECK(g_regs[0].scope == NVTX_SCOPE_CURRENT_SW_PROCESS);
  CHECK(g_regs[0].limit_type == NVTX_COUNTER_LIMIT_I64);
  CHECK(g_regs[0].min.i64 == 0);
  CHECK(g_regs[0].max.i64 == 4096);
  CHECK(g_regs[1].name == "ratio");
  CHECK(g_regs[1].schema == NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE);
  CHECK(g_regs[1].scope == NVTX_SCOPE_NONE);
  CHECK(g_regs[2].schema == NVTX_PAYLOAD_ENTRY_TYPE_UINT16);
  CHECK(g_regs[2].scope == NVTX_SCOPE_CURRENT_SW_THREAD);

  REQUIRE(g_samples.size() == 8);
  CHECK((g_samples[0].kind == 'i' && g_samples[0].i == 100 && g_samples[0].id == first_id));
  CHECK((g_samples[1].kind == 'i' && g_samples[1].i == -5));
  CHECK((g_samples[2].kind == 'f' && g_samples[2].f == 0.25 && g_samples[2].id == first_id + 1));
  CHECK((g_samples[3].kind == 'n' && g_samples[3].reason == NVTX_COUNTER_SAMPLE_UNAVAILABLE));
  REQUIRE(g_samples[4].kind == 'r');
  std::uint16_t v = 0;
  REQUIRE(g_samples[4].bytes.size() == sizeof v);
  std::memcpy(&v, g_samples[4].bytes.data(), sizeof v);
  CHECK(v == 7);
  REQUIRE(g_samples[5].kind == 'b');
  REQUIRE(g_samples[5].bytes.size() == sizeof batch);
  CHECK(std::memcmp(g_samples[5].bytes.data(), batch.data(), sizeof batch) == 0);
  CHECK((g_samples[6].kind == 'i' && g_samples[6].i == 64));  // the gauge
  CHECK((g_samples[7].kind == 'i' && g_samples[7].i == 0));
}

TEST_CASE("counters: small ids from the tool (Nsight Systems gives 1, 2, ...) are used") {
  static nvtxpp::counter<std::int64_t> one{"one"};
  static nvtxpp::counter_in<io_domain, double> two{"two"};
  first_id = 1;
  g_regs.clear();
  g_samples.clear();
  one.sample(11);
  two.sample(2.5);
  one.sample(12);
  first_id = NVTX_COUNTER_ID_DYNAMIC_START;
  auto const& s = g_samples;
  REQUIRE(s.size() == 3);
  CHECK((s[0].id == 1 && s[0].i == 11));
  CHECK((s[1].id == 2 && s[1].f == 2.5));
  CHECK((s[2].id == 1 && s[2].i == 12));
}
