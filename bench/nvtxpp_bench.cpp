/// @file
/// @brief Cost of one range (push + pop) or event: the NVTX C API, nvtx3.hpp, nvtxpp, and eager
/// formatting, side by side in one run.
///
/// Case names are `group/case`. bench/run.sh runs this binary with no tool and under tools, and
/// prints every case as a ratio to `nvtx3/scoped_range` of the same run. Every loop body ends in
/// benchmark::ClobberMemory(), so NVTX's function-pointer slots are reloaded each iteration, as
/// they are in real code that does work between ranges.
///
/// `nvtxpp_bench --icount=CASE [--n=N]` runs one case N times (default 100000) after a warm-up,
/// with callgrind's collection switched on only around those N iterations: run it under
/// `valgrind --tool=callgrind --collect-atstart=no` for instruction counts, free of timing noise.
#include <nvtxpp/counter.hpp>
#include <nvtxpp/memory.hpp>
#include <nvtxpp/nvtxpp.hpp>
#include <nvtxpp/struct_payload.hpp>

#include <nvtx3/nvToolsExtCounters.h>

#include <nvtx3/nvtx3.hpp>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define NVTXPP_BENCH_HAVE_TSC 1
#else
#define NVTXPP_BENCH_HAVE_TSC 0
#endif

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define NVTXPP_BENCH_TOGGLE_COLLECT() CALLGRIND_TOGGLE_COLLECT
#else
#define NVTXPP_BENCH_TOGGLE_COLLECT() static_cast<void>(0)
#endif

namespace {

// One tag type serves both libraries: each wants `static constexpr char const* name`.
NVTXPP_DEFINE_DOMAIN(bench_domain, "nvtxpp-bench");

struct range_message {
  static constexpr char const* message = "range";
};

constexpr char const* kName = "range";

/// A case for the instruction-count mode: runs its loop body n times.
struct icount_case {
  char const* name;
  void (*run)(long n);
  icount_case const* next;
};
icount_case const* icount_cases = nullptr;

struct icount_registration {
  explicit icount_registration(icount_case* c) noexcept {
    c->next = icount_cases;
    icount_cases = c;
  }
};

// Defines one case: a Google Benchmark function and an n-times loop for instruction counts, both
// with the same body. `i` counts iterations (a long).
#define NVTXPP_BENCH_CASE(id, label, ...)         \
  void id(benchmark::State& state) {              \
    long i = 0;                                   \
    for (auto _ : state) {                        \
      __VA_ARGS__;                                \
      ++i;                                        \
      benchmark::ClobberMemory();                 \
    }                                             \
  }                                               \
  BENCHMARK(id)->Name(label);                     \
  [[gnu::noinline]] void id##_n(long n) {         \
    for (long i = 0; i < n; ++i) {                \
      __VA_ARGS__;                                \
      benchmark::ClobberMemory();                 \
    }                                             \
  }                                               \
  icount_case id##_case{label, &id##_n, nullptr}; \
  icount_registration const id##_registration { &id##_case }

[[gnu::noinline]] void plain_function() { benchmark::ClobberMemory(); }

[[gnu::noinline]] void nvtx3_annotated_function() {
  NVTX3_FUNC_RANGE();
  benchmark::ClobberMemory();
}

[[gnu::noinline]] void nvtxpp_annotated_function() {
  ANNOTATE_FUNCTION();
  benchmark::ClobberMemory();
}

nvtxEventAttributes_t registered_attributes(nvtxStringHandle_t name) noexcept {
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = name;
  attr.colorType = NVTX_COLOR_ARGB;
  attr.color = 0xFFFFFF00u;
  return attr;
}

nvtxDomainHandle_t c_domain() noexcept {
  static nvtxDomainHandle_t const d = nvtxDomainCreateA(bench_domain::name);
  return d;
}

nvtxStringHandle_t c_name() noexcept {
  static nvtxStringHandle_t const s = nvtxDomainRegisterStringA(c_domain(), kName);
  return s;
}

double const kMs = 2.5;

// ---- baselines: the loop alone, and the loop calling an empty non-inlined function ------------
NVTXPP_BENCH_CASE(baseline_empty_loop, "baseline/empty_loop", static_cast<void>(i));
NVTXPP_BENCH_CASE(baseline_noinline_call, "baseline/noinline_call", plain_function());

#if NVTXPP_BENCH_HAVE_TSC
// Two reads of the CPU's time-stamp counter: the clock a recording tool reads at a push and at a
// pop (nvtxpp-capture does), so the floor under any tool's cost per range on this machine.
NVTXPP_BENCH_CASE(baseline_two_tsc_reads, "baseline/two_tsc_reads",
                  benchmark::DoNotOptimize(__rdtsc());
                  benchmark::DoNotOptimize(__rdtsc()));
#endif
// The other clocks a recorder could read, once each (docs/capture-cost.md compares them).
NVTXPP_BENCH_CASE(baseline_clock_monotonic, "baseline/clock_monotonic", timespec ts{};
                  ::clock_gettime(CLOCK_MONOTONIC, &ts); benchmark::DoNotOptimize(ts));
NVTXPP_BENCH_CASE(baseline_clock_monotonic_coarse, "baseline/clock_monotonic_coarse", timespec ts{};
                  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts); benchmark::DoNotOptimize(ts));

// ---- NVTX C API ---------------------------------------------------------------------------------
NVTXPP_BENCH_CASE(c_push_pop, "nvtx_c/push_pop_a", nvtxRangePushA("range"); nvtxRangePop());
NVTXPP_BENCH_CASE(c_domain_push_ex, "nvtx_c/domain_push_ex_registered",
                  nvtxEventAttributes_t const attr = registered_attributes(c_name());
                  nvtxDomainRangePushEx(c_domain(), &attr); nvtxDomainRangePop(c_domain()));

// ---- nvtx3.hpp ----------------------------------------------------------------------------------
NVTXPP_BENCH_CASE(nvtx3_scoped_range, "nvtx3/scoped_range", nvtx3::scoped_range r{"range"});
NVTXPP_BENCH_CASE(nvtx3_scoped_range_long, "nvtx3/scoped_range_44_chars",
                  nvtx3::scoped_range r{"H2D memory copy of the input batch on stream"});
NVTXPP_BENCH_CASE(nvtx3_scoped_range_in_registered, "nvtx3/scoped_range_in_registered",
                  nvtx3::scoped_range_in<bench_domain> r{
                      nvtx3::registered_string_in<bench_domain>::get<range_message>()});
NVTXPP_BENCH_CASE(nvtx3_func_range, "nvtx3/func_range", nvtx3_annotated_function());
NVTXPP_BENCH_CASE(nvtx3_mark, "nvtx3/mark", nvtx3::mark("range"));
NVTXPP_BENCH_CASE(nvtx3_start_end, "nvtx3/start_end",
                  nvtx3::range_handle const h = nvtx3::start_range("range");
                  nvtx3::end_range(h));

// ---- nvtxpp -------------------------------------------------------------------------------------
NVTXPP_BENCH_CASE(nvtxpp_static, "nvtxpp/static", nvtxpp::scoped_range r{"range"});
NVTXPP_BENCH_CASE(nvtxpp_static_long, "nvtxpp/static_44_chars",
                  nvtxpp::scoped_range r{"H2D memory copy of the input batch on stream"});
NVTXPP_BENCH_CASE(nvtxpp_static_attributes, "nvtxpp/static_attributes",
                  nvtxpp::scoped_range r("range", nvtxpp::colors::yellow, nvtxpp::category{1},
                                         nvtxpp::payload{i}));
NVTXPP_BENCH_CASE(nvtxpp_registered_in, "nvtxpp/registered_in",
                  static nvtxpp::registered_string_in<bench_domain> const name{kName};
                  nvtxpp::scoped_range_in<bench_domain> r{name});
NVTXPP_BENCH_CASE(nvtxpp_annotate_scope, "nvtxpp/annotate_scope", ANNOTATE_SCOPE("range"));
NVTXPP_BENCH_CASE(nvtxpp_annotate_function, "nvtxpp/annotate_function",
                  nvtxpp_annotated_function());
NVTXPP_BENCH_CASE(nvtxpp_formatted_1, "nvtxpp/formatted_1", nvtxpp::scoped_range r("step {}", i));
NVTXPP_BENCH_CASE(nvtxpp_formatted_3, "nvtxpp/formatted_3",
                  nvtxpp::scoped_range r("step {} took {} ms on {}", i, kMs, "stream"));
NVTXPP_BENCH_CASE(nvtxpp_mark, "nvtxpp/mark", nvtxpp::mark("range"));
NVTXPP_BENCH_CASE(nvtxpp_start_end, "nvtxpp/start_end", nvtxpp::start_end_range r{"range"};
                  r.end());

// ---- the naive alternative: format eagerly, then an nvtx3 range ---------------------------------
NVTXPP_BENCH_CASE(naive_to_string_1, "naive/to_string_1",
                  nvtx3::scoped_range r{"step " + std::to_string(i)});
NVTXPP_BENCH_CASE(naive_fmt_format_1, "naive/fmt_format_1",
                  nvtx3::scoped_range r{fmt::format("step {}", i)});
NVTXPP_BENCH_CASE(naive_fmt_format_3, "naive/fmt_format_3",
                  nvtx3::scoped_range r{fmt::format("step {} took {} ms on {}", i, kMs, "stream")});

/// The instruction-count mode: warm the case up, then collect only around n iterations.
int run_icount(char const* name, long n) {
  for (icount_case const* c = icount_cases; c != nullptr; c = c->next) {
    if (std::strcmp(c->name, name) != 0) continue;
    c->run(1000);
    NVTXPP_BENCH_TOGGLE_COLLECT();
    c->run(n);
    NVTXPP_BENCH_TOGGLE_COLLECT();
    return 0;
  }
  std::fprintf(stderr, "nvtxpp_bench: no case named %s\n", name);
  return 2;
}

// Counters: a sample through nvtxpp against the raw C call with a fixed id (which, with no tool,
// NVTX drops after its own slot check).
nvtxpp::counter<std::int64_t> bench_counter{"bench counter"};
NVTXPP_BENCH_CASE(counter_c, "counter/nvtxCounterSampleInt64",
                  nvtxCounterSampleInt64(nullptr, NVTX_COUNTER_ID_DYNAMIC_START, i));
NVTXPP_BENCH_CASE(counter_nvtxpp, "counter/nvtxpp_sample", bench_counter.sample(i));
NVTXPP_BENCH_CASE(counter_gauge, "counter/nvtxpp_gauge",
                  nvtxpp::gauge g(bench_counter, std::int64_t{1}));

// Structured payloads: a static range carrying a struct, against nvtxpp/static (with no tool the
// struct is built and left unread; with one, its schema is registered once, then each event points
// at the struct).
struct bench_chunk {
  std::uint32_t stream;
  std::uint64_t offset;
  std::uint64_t bytes;
};
NVTXPP_PAYLOAD_SCHEMA(bench_chunk, stream, offset, bytes);
NVTXPP_BENCH_CASE(struct_payload_range, "payload/static_with_struct",
                  nvtxpp::scoped_range r("range", nvtxpp::payload_of(bench_chunk{
                                                      1, static_cast<std::uint64_t>(i), 4096})));
NVTXPP_BENCH_CASE(struct_payload_mark, "payload/mark_with_struct",
                  nvtxpp::mark("range", nvtxpp::payload_of(bench_chunk{
                                            1, static_cast<std::uint64_t>(i), 4096})));

// Memory annotations: a heap over a static pool, regions made and ended per iteration (what a
// pool's allocate/deallocate adds), against the raw C registration of one region. With no tool
// the heap is not registered and a region costs one branch.
alignas(64) unsigned char bench_pool[1 << 16];
nvtxpp::heap& bench_heap() {
  static nvtxpp::heap h{bench_pool, sizeof bench_pool, "bench pool"};
  return h;
}
NVTXPP_BENCH_CASE(memory_c_region, "memory/nvtxMemRegionsRegister_unregister",
                  nvtxMemVirtualRangeDesc_t d{64, bench_pool + (i & 1023) * 64};
                  nvtxMemRegionsRegisterBatch_t b{}; b.extCompatID = NVTX_EXT_COMPATID_MEM;
                  b.structSize = sizeof b; b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
                  b.heap = nullptr; b.regionCount = 1; b.regionDescElementSize = sizeof d;
                  b.regionDescElements = &d; nvtxMemRegionsRegister(nullptr, &b);
                  nvtxMemRegionRef_t ref{}; ref.pointer = d.ptr;
                  nvtxMemRegionsUnregisterBatch_t u{}; u.extCompatID = NVTX_EXT_COMPATID_MEM;
                  u.structSize = sizeof u; u.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
                  u.refCount = 1; u.refElementSize = sizeof ref; u.refElements = &ref;
                  nvtxMemRegionsUnregister(nullptr, &u));
NVTXPP_BENCH_CASE(memory_region, "memory/nvtxpp_region",
                  auto r = bench_heap().region(bench_pool + (i & 1023) * 64, 64));
NVTXPP_BENCH_CASE(memory_region_named, "memory/nvtxpp_region_formatted_name",
                  auto r = bench_heap().region(bench_pool + (i & 1023) * 64, 64, "buf {}", i));

}  // namespace

int main(int argc, char** argv) {
  char const* icount = nullptr;
  long n = 100000;
  for (int k = 1; k < argc; ++k) {
    if (std::strncmp(argv[k], "--icount=", 9) == 0) icount = argv[k] + 9;
    if (std::strncmp(argv[k], "--n=", 4) == 0) n = std::atol(argv[k] + 4);
    if (std::strcmp(argv[k], "--list-icount") == 0) {
      for (icount_case const* c = icount_cases; c != nullptr; c = c->next) std::puts(c->name);
      return 0;
    }
  }
  if (icount != nullptr) return run_icount(icount, n);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
