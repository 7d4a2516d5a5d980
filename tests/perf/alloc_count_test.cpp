/// @file
/// @brief No range, mark or formatted name of nvtxpp allocates on the heap, with or without a tool.
///
/// The global operator new and delete of this program are replaced by counting versions. Each
/// kind of annotation runs 100,000 times; the allocations counted around the loop must be zero.
/// The same source is built three ways (one executable each, since NVTX attaches at most one
/// tool per process):
/// - no tool: every annotation takes its "nobody listens" path;
/// - NVTXPP_PERF_NULL_TOOL: a tool that listens and keeps nothing is linked in, so messages are
///   formatted and events emitted: nvtxpp's whole path, without a tool's own storage;
/// - NVTXPP_PERF_RECORDER: nvtxpp::testing's recorder records every event. Its storage grows in
///   blocks of 64 KiB as it fills; those large allocations are counted apart and allowed. Any
///   allocation smaller than kBlockBytes fails the test. A loop of raw NVTX C calls with the same
///   messages runs first, so a failure shows whether the recorder itself allocates per event.
/// Timing plays no part: the test counts.
#include <nvtx3/nvToolsExtPayload.h>
#include <nvtxpp/counter.hpp>
#include <nvtxpp/nvtxpp.hpp>
#include <nvtxpp/struct_payload.hpp>

#if defined(NVTXPP_PERF_RECORDER)
#include <nvtxpp/testing/recorder.hpp>
#endif

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace {
/// Allocations at least this large are a tool's storage blocks (recorder mode only).
constexpr std::size_t kBlockBytes = 16 * 1024;
std::atomic<long> allocations{0};
std::atomic<long> large_allocations{0};

void note(std::size_t n) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (n >= kBlockBytes) large_allocations.fetch_add(1, std::memory_order_relaxed);
}

void* counted_alloc(std::size_t n) {
  note(n);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc{};
}

void* counted_aligned_alloc(std::size_t n, std::align_val_t a) {
  note(n);
  std::size_t const align = static_cast<std::size_t>(a);
  std::size_t const size = (n + align - 1) / align * align;
  if (void* p = std::aligned_alloc(align, size == 0 ? align : size)) return p;
  throw std::bad_alloc{};
}
}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, std::nothrow_t const&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, std::nothrow_t const&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t a) { return counted_aligned_alloc(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_aligned_alloc(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

NVTXPP_DEFINE_DOMAIN(perf_domain, "nvtxpp-perf");

constexpr int kIterations = 100000;
int failures = 0;

struct perf_chunk {
  unsigned stream;
  unsigned long long bytes;
};
NVTXPP_PAYLOAD_SCHEMA(perf_chunk, stream, bytes);

[[gnu::noinline]] void annotated_function() { ANNOTATE_FUNCTION(); }
[[gnu::noinline]] void annotated_function_in() {
  ANNOTATE_FUNCTION_IN(perf_domain, nvtxpp::colors::orange, nvtxpp::category{3});
}

struct counts {
  long all;
  long large;
};

/// Allocations made by @p body run kIterations times, after one warm-up round of the same size
/// (first-use work, such as creating a domain or registering a string, is not counted).
template <typename F>
counts count(F&& body) {
  for (int i = 0; i < kIterations; ++i) body(i);
  long const all = allocations.load();
  long const large = large_allocations.load();
  for (int i = 0; i < kIterations; ++i) body(i);
  return {allocations.load() - all, large_allocations.load() - large};
}

#if defined(NVTXPP_PERF_RECORDER)
constexpr bool kAllowBlocks = true;
#else
constexpr bool kAllowBlocks = false;
#endif

template <typename F>
void check(char const* kind, F&& body) {
  counts const n = count(body);
  long const counted = kAllowBlocks ? n.all - n.large : n.all;
  bool const ok = counted == 0;
  std::printf("%-30s %7ld allocations per %d, %ld of them tool blocks  %s\n", kind, n.all,
              kIterations, n.large, ok ? "ok" : "FAILED");
  if (!ok) ++failures;
}

}  // namespace

int main() {
#if defined(NVTXPP_PERF_RECORDER)
  char const* const mode = "recorder";
  nvtxpp::testing::recorder rec;
  // The recorder alone, fed by raw NVTX C calls with unique messages: if this allocates per
  // event, the recorder does, not nvtxpp.
  check("raw NVTX C calls (recorder)", [](int i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "step %d", i);
    nvtxRangePushA(buf);
    nvtxRangePop();
  });
#elif defined(NVTXPP_PERF_NULL_TOOL)
  char const* const mode = "null tool";
#else
  char const* const mode = "no tool";
#endif
  bool const listening = nvtxpp::is_enabled();
  std::printf("mode: %s (a tool listens: %s)\n", mode, listening ? "yes" : "no");
#if defined(NVTXPP_PERF_RECORDER) || defined(NVTXPP_PERF_NULL_TOOL)
  if (!listening) {
    std::printf("FAILED: the tool did not attach, so the formatted paths would not run\n");
    return 1;
  }
#else
  if (listening) {
    std::printf("FAILED: a tool is attached (NVTX_INJECTION64_PATH set?); this run needs none\n");
    return 1;
  }
#endif

  check("static", [](int) { nvtxpp::scoped_range r{"range"}; });
  check("static + attributes", [](int i) {
    nvtxpp::scoped_range r{"range", nvtxpp::colors::yellow, nvtxpp::named_category{2, "io"},
                           nvtxpp::payload{i}};
  });
  check("static + struct payload", [](int i) {
    nvtxpp::scoped_range r{"range", nvtxpp::payload_of(perf_chunk{1, static_cast<unsigned>(i)})};
  });
  check("mark formatted + struct payload", [](int i) {
    nvtxpp::mark_in<perf_domain>("step {}", i, nvtxpp::payload_of(perf_chunk{2, 3}));
  });
  check("static in a domain", [](int) { nvtxpp::scoped_range_in<perf_domain> r{"range"}; });
  check("ANNOTATE_FUNCTION", [](int) { annotated_function(); });
  check("ANNOTATE_FUNCTION_IN + attrs", [](int) { annotated_function_in(); });
  check("formatted, 1 argument", [](int i) { nvtxpp::scoped_range r{"step {}", i}; });
  check("formatted, 3 arguments", [](int i) {
    nvtxpp::scoped_range r{"step {} took {} ms on {}", i, 2.5, "stream", nvtxpp::colors::red};
  });
  check("formatted, truncated", [](int i) { nvtxpp::scoped_range r{"{:>300}", i}; });
  check("ANNOTATE_SCOPE formatted", [](int i) { ANNOTATE_SCOPE("step {}", i); });
  check("mark", [](int) { nvtxpp::mark("range"); });
  check("mark formatted", [](int i) { nvtxpp::mark("step {}", i); });
  check("start/end", [](int) {
    nvtxpp::start_end_range r{"range"};
    r.end();
  });
  check("start/end formatted", [](int i) {
    nvtxpp::start_end_range r{"step {}", i};
    r.end();
  });
  // NVTX extensions: counter samples and structured payloads (registration is not counted:
  // the first round of count() does it).
  static nvtxpp::counter<std::int64_t> samples{"perf counter"};
  static nvtxpp::counter<std::uint16_t> small_samples{"perf counter u16"};
  check("counter sample", [](int i) { samples.sample(i); });
  check("counter sample (bytes)",
        [](int i) { small_samples.sample(static_cast<std::uint16_t>(i)); });
  check("counter batch", [](int i) {
    std::uint16_t const values[4] = {1, 2, 3, static_cast<std::uint16_t>(i)};
    small_samples.sample_batch(values);
  });
  static std::uint64_t const schema = [] {
    nvtxPayloadSchemaEntry_t const entries[] = {
        {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "i", nullptr, 0, 0, nullptr, nullptr},
        {0, NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE, "d", nullptr, 0, 8, nullptr, nullptr}};
    nvtxPayloadSchemaAttr_t a{};
    a.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                  NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES;
    a.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
    a.entries = entries;
    a.numEntries = 2;
    return nvtxPayloadSchemaRegister(nullptr, &a);
  }();
  check("structured payload (push)", [](int i) {
    struct {
      std::int32_t i;
      double d;
    } const v{i, 0.5};
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "payload";
    nvtxPayloadData_t pd{};
    NVTX_PAYLOAD_EVTATTR_SET_DATA(a, &pd, schema, &v, sizeof v)
    nvtxRangePushEx(&a);
    nvtxRangePop();
  });

  if (failures != 0) {
    std::printf("%d kind(s) allocated on the heap\n", failures);
    return 1;
  }
  return 0;
}
