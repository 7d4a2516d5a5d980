// The floor of CUPTI-based kernel tracing: an injection library that enables CUPTI's activity
// records and does nothing with them but count. What a launch costs under it is what any tool
// built on CUPTI's kernel tracing pays before it does any work of its own (Nsight Systems'
// `-t cuda` and nvtxpp-capture both trace kernels through CUPTI). Used by
// scripts/verify_capture_gpu.sh's launch-cost step:
//
//   CUDA_INJECTION64_PATH=/abs/libcupti_floor.so CUPTI_FLOOR_KINDS=kernel,runtime ./program
//
// CUPTI_FLOOR_KINDS: comma-separated from kernel, runtime, memcpy, memset, sync (default
// kernel), runtime_cb (the runtime API through CUPTI's callback API, below) and runtime_cb_launch
// (the same for the kernel-launch functions only). CUPTI's own
// settings, each left at CUPTI's default when unset: CUPTI_FLOOR_DEVICE_BUFFER_MB or _KB: device
// buffer size per context; CUPTI_FLOOR_DEVICE_BUFFER_PREALLOCATE: device buffers allocated ahead
// (CUPTI's default 3); CUPTI_FLOOR_FLUSH_MS: period of CUPTI's worker thread flush
// (cuptiActivityFlushPeriod). At exit it prints `cupti_floor records=N dropped=D` to stderr. Build:
// g++ -O2 -shared -fPIC -I<cuda>/include cupti_floor.cpp -o libcupti_floor.so
//          -L<cuda>/lib64 -lcupti
#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr std::size_t buffer_bytes = std::size_t{4} << 20;
constexpr int pool = 16;
std::atomic<unsigned char*> g_free[pool];
std::atomic<unsigned long long> g_records{0};
std::atomic<unsigned long long> g_api_calls{0};

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  for (auto& slot : g_free) {
    if (unsigned char* b = slot.exchange(nullptr)) {
      *buffer = b;
      *size = buffer_bytes;
      return;
    }
  }
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, buffer_bytes));
  *size = *buffer != nullptr ? buffer_bytes : 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  unsigned long long n = 0;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    ++n;
  }
  g_records.fetch_add(n);
  for (auto& slot : g_free) {
    unsigned char* empty = nullptr;
    if (slot.compare_exchange_strong(empty, buffer)) {
      return;
    }
  }
  std::free(buffer);
}

void at_exit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  std::fprintf(stderr, "cupti_floor records=%llu dropped=%zu api_calls>=%llu\n", g_records.load(),
               dropped, g_api_calls.load());
}

// runtime_cb: the runtime API traced through CUPTI's callback API instead of activity records:
// each call's correlation id and its two TSC reads go to a per-thread ring (what a tool would
// write to its own per-thread stream), nothing else.
struct api_call {
  std::uint32_t cbid;
  std::uint32_t correlation;
  std::uint64_t start;
  std::uint64_t end;
};
constexpr std::size_t ring_size = 4096;
thread_local api_call t_ring[ring_size];
thread_local std::size_t t_next = 0;

void CUPTIAPI on_api(void*, CUpti_CallbackDomain, CUpti_CallbackId cbid, void const* data) {
  auto const* d = static_cast<CUpti_CallbackData const*>(data);
  if (d->callbackSite == CUPTI_API_ENTER) {
    *d->correlationData = __builtin_ia32_rdtsc();
    return;
  }
  api_call& c = t_ring[t_next++ % ring_size];
  c.cbid = cbid;
  c.correlation = d->correlationId;
  c.start = *d->correlationData;
  c.end = __builtin_ia32_rdtsc();
  if (t_next % ring_size == 0) {
    g_api_calls.fetch_add(ring_size, std::memory_order_relaxed);
  }
}

bool wanted(std::string const& kinds, char const* kind) {
  std::string const padded = "," + kinds + ",";
  return padded.find(std::string{","} + kind + ",") != std::string::npos;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  char const* env = std::getenv("CUPTI_FLOOR_KINDS");
  std::string const kinds = env != nullptr ? env : "kernel";
  auto set = [](CUpti_ActivityAttribute attribute, std::size_t value, char const* what) {
    std::size_t size = sizeof value;
    if (cuptiActivitySetAttribute(attribute, &size, &value) != CUPTI_SUCCESS) {
      std::fprintf(stderr, "cupti_floor: cannot set %s\n", what);
    }
  };
  if (char const* mb = std::getenv("CUPTI_FLOOR_DEVICE_BUFFER_MB")) {
    set(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, std::strtoul(mb, nullptr, 10) << 20U,
        "the device buffer size");
  }
  if (char const* kb = std::getenv("CUPTI_FLOOR_DEVICE_BUFFER_KB")) {
    set(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, std::strtoul(kb, nullptr, 10) << 10U,
        "the device buffer size");
  }
  if (char const* n = std::getenv("CUPTI_FLOOR_DEVICE_BUFFER_PREALLOCATE")) {
    set(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, std::strtoul(n, nullptr, 10),
        "the device buffers allocated ahead");
  }
  if (char const* ms = std::getenv("CUPTI_FLOOR_FLUSH_MS")) {
    if (cuptiActivityFlushPeriod(static_cast<std::uint32_t>(std::strtoul(ms, nullptr, 10))) !=
        CUPTI_SUCCESS) {
      std::fprintf(stderr, "cupti_floor: cannot set the flush period\n");
    }
  }
  if (cuptiActivityRegisterCallbacks(&requested, &completed) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "cupti_floor: cuptiActivityRegisterCallbacks failed\n");
    return 0;
  }
  struct kind_name {
    char const* name;
    CUpti_ActivityKind kind;
  };
  for (auto [name, kind] : {kind_name{"kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
                            kind_name{"runtime", CUPTI_ACTIVITY_KIND_RUNTIME},
                            kind_name{"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY},
                            kind_name{"memset", CUPTI_ACTIVITY_KIND_MEMSET},
                            kind_name{"sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION}}) {
    if (wanted(kinds, name) && cuptiActivityEnable(kind) != CUPTI_SUCCESS) {
      std::fprintf(stderr, "cupti_floor: cannot enable %s\n", name);
    }
  }
  if (wanted(kinds, "runtime_cb")) {
    CUpti_SubscriberHandle subscriber{};
    if (cuptiSubscribe(&subscriber, &on_api, nullptr) != CUPTI_SUCCESS ||
        cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS) {
      std::fprintf(stderr, "cupti_floor: cannot subscribe to the runtime API\n");
    }
  } else if (wanted(kinds, "runtime_cb_launch")) {
    // The same callbacks for the kernel-launch functions alone, not the whole domain.
    CUpti_SubscriberHandle subscriber{};
    bool ok = cuptiSubscribe(&subscriber, &on_api, nullptr) == CUPTI_SUCCESS;
    for (CUpti_CallbackId id : {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
                                CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
                                CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000}) {
      ok = ok &&
           cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id) == CUPTI_SUCCESS;
    }
    if (!ok) {
      std::fprintf(stderr, "cupti_floor: cannot subscribe to the launch functions\n");
    }
  }
  std::atexit(&at_exit);
  return 1;
}
