// A stand-in for libcupti.so.13 (NVTXPP_CUPTI_PATH names it) for tests without a GPU: it
// implements the CUPTI functions the CUPTI source resolves, with CUPTI's contract as documented
// in cupti_activity.h, so the run-time half (buffer hand-out, conversion, flush at exit and on
// signals, dropped counts, fork) runs for real. The test program makes "GPU activity" by calling
// fake_cupti_launch(); the records are real CUDA 13 CUPTI structs, timed with the timestamp
// callback the client registered (CLOCK_REALTIME when none: a test would notice) and carrying
// the system tid only when the client asked for CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM. As real
// CUPTI, it delivers records through the buffer callbacks when flushed.
//
// Detach and attach (cuptiFinalize), as CUPTI 13.0 does them: finalize forgets everything (the
// buffer and timestamp callbacks, the thread id type, the kinds, the subscriber and its
// callbacks); any later call attaches it again. Records still pending at a finalize are lost,
// and a finalize called outside a CUDA call's exit callback is a misuse: both are counted and,
// with FAKE_CUPTI_STATS=1, printed at exit with the attaches and finalizes
// (`fake_cupti: attaches=A finalizes=F lost=L outside_exit=O`). FAKE_CUPTI_NO_DETACH=1: the
// finalize is refused; FAKE_CUPTI_RESET_IDS=1: correlation ids start from 1 again after it. The
// launches raise the runtime (and driver) API callbacks of a
// subscriber that enabled them, so a detach armed at a call's exit happens.
#include <cupti.h>

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace {

std::atomic<CUpti_BuffersCallbackRequestFunc> g_request{nullptr};
std::atomic<CUpti_BuffersCallbackCompleteFunc> g_complete{nullptr};
std::atomic<CUpti_TimestampCallbackFunc> g_timestamp{nullptr};
std::atomic<CUpti_ActivityThreadIdType> g_tid_type{CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT};
// Atomic: the client enables and disables kinds from a thread of its own (--cuda-sample) while
// the program's thread launches.
std::atomic<bool> g_enabled[64] = {};
std::mutex g_mutex;
std::vector<std::vector<unsigned char>> g_pending;  // records not yet delivered

// Attached or detached (cuptiFinalize), and what a stats line says at exit.
std::atomic<bool> g_attached{false};
std::atomic<int> g_attaches{0};
std::atomic<int> g_finalizes{0};
std::atomic<int> g_outside_exit{0};
std::atomic<std::size_t> g_lost{0};
std::atomic<int> g_refused{0};           // finalizes refused (FAKE_CUPTI_NO_DETACH)
std::atomic<int> g_flushes_detached{0};  // flushes with no buffer callbacks registered
thread_local bool t_in_exit = false;     // inside a runtime or driver API exit callback

void print_stats() {
  std::fprintf(stderr,
               "fake_cupti: attaches=%d finalizes=%d lost=%zu outside_exit=%d "
               "flushes_detached=%d\n",
               g_attaches.load(), g_finalizes.load(), g_lost.load(), g_outside_exit.load(),
               g_flushes_detached.load());
}

/// Any call of the client's attaches CUPTI (again, after a finalize).
void attach() {
  if (!g_attached.exchange(true)) {
    if (g_attaches.fetch_add(1) == 0 && std::getenv("FAKE_CUPTI_STATS") != nullptr) {
      std::atexit(&print_stats);
    }
  }
}
bool g_running = false;  // g_pending holds a kernel that has not ended (FAKE_CUPTI_RUNNING)
std::size_t g_dropped = 0;
std::uint32_t g_correlation = 0;

/// FAKE_CUPTI_SKEW_NS: added to every time the fake stamps (a CUPTI whose clock reading sits off
/// the NVTX events'); FAKE_CUPTI_API_NS: how long each launch's API call lasts;
/// FAKE_CUPTI_KERNEL_DELAY_NS: how long after its launch each kernel starts (a queue before it).
std::int64_t env_ns(char const* name) {
  char const* v = std::getenv(name);
  return v != nullptr ? std::strtoll(v, nullptr, 10) : 0;
}

std::uint64_t now() {
  if (g_timestamp != nullptr) {
    static std::int64_t const skew = env_ns("FAKE_CUPTI_SKEW_NS");
    return g_timestamp() + static_cast<std::uint64_t>(skew);
  }
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000U +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

template <class T>
void add(T const& record) {
  auto const* p = reinterpret_cast<unsigned char const*>(&record);
  g_pending.emplace_back(p, p + sizeof record);
}

std::size_t record_size(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
      return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
      return sizeof(CUpti_ActivityUnifiedMemoryCounter3);
    default:
      return 0;
  }
}

}  // namespace

extern "C" {

CUptiResult cuptiGetVersion(uint32_t* version) {
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult, const char** str) {
  *str = "fake CUPTI error";
  return CUPTI_SUCCESS;
}

/// FAKE_CUPTI_STALE_SUBSCRIBER=1: the first subscriber made after a finalize is one CUPTI no
/// longer knows (its detach still under way): the buffers registered next are refused as not
/// initialised, once, until a new subscriber is made.
std::atomic<bool> g_stale_subscriber{false};

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                           CUpti_BuffersCallbackCompleteFunc complete) {
  if (g_stale_subscriber.load()) {
    return CUPTI_ERROR_NOT_INITIALIZED;
  }
  attach();
  g_request = request;
  g_complete = complete;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) {
  attach();
  g_timestamp = f;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  attach();
  g_tid_type = type;
  return CUPTI_SUCCESS;
}

void driver_kind_enabled();

/// FAKE_CUPTI_UM_NOT_READY=1: the migrations' kind is refused until the first context exists,
/// as the H100's CUPTI 13.0 refuses it inside cuInit (CUPTI_ERROR_NOT_READY).
std::atomic<bool> g_context_ready{false};

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (kind == CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER && !g_context_ready &&
      std::getenv("FAKE_CUPTI_UM_NOT_READY") != nullptr) {
    return CUPTI_ERROR_NOT_READY;
  }
  attach();
  g_enabled[kind & 63] = true;
  if (kind == CUPTI_ACTIVITY_KIND_DRIVER) {
    driver_kind_enabled();  // (defined below) it overrides the functions switched one by one
  }
  return CUPTI_SUCCESS;
}

/// Unified memory counters configured (BYTES_TRANSFER_* kinds enabled). FAKE_CUPTI_NO_UM=1: the
/// answer of a system where CUPTI cannot profile unified memory (MPS, say);
/// FAKE_CUPTI_NO_UM_DTOD=1: of one without peer devices, for the device-to-device counter.
bool g_um_counter[16] = {};

CUptiResult cuptiActivityConfigureUnifiedMemoryCounter(CUpti_ActivityUnifiedMemoryCounterConfig* c,
                                                       uint32_t count) {
  if (std::getenv("FAKE_CUPTI_NO_UM") != nullptr) {
    return CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED;
  }
  for (uint32_t i = 0; i < count; ++i) {  // FAKE_CUPTI_NO_UM_DTOD=1: no peer devices
    if (std::getenv("FAKE_CUPTI_NO_UM_DTOD") != nullptr &&
        c[i].kind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD) {
      return CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES;
    }
  }
  for (uint32_t i = 0; i < count; ++i) {
    g_um_counter[c[i].kind & 15] = c[i].enable != 0;
  }
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  g_enabled[kind & 63] = false;
  return CUPTI_SUCCESS;
}

/// Driver functions enabled one by one (cuptiActivityEnableDriverApi); CUPTI_ACTIVITY_KIND_DRIVER
/// records them all.
std::atomic<bool> g_driver_api[CUPTI_DRIVER_TRACE_CBID_SIZE] = {};
/// As CUPTI 13.0 does (seen on the H200): a driver function switched off one by one is not
/// recorded again when it is switched back on; nor is one switched on one by one once CUDA has
/// started (seen on the H100: bench/gpu/launch_map.cu), after a detach too.
std::atomic<bool> g_driver_api_was_off[CUPTI_DRIVER_TRACE_CBID_SIZE] = {};
std::atomic<bool> g_driver_api_late[CUPTI_DRIVER_TRACE_CBID_SIZE] = {};
/// With the DRIVER kind on: the functions switched off one by one after it (CUPTI's documented
/// way to record all but a few).
std::atomic<bool> g_driver_excluded[CUPTI_DRIVER_TRACE_CBID_SIZE] = {};

void driver_kind_enabled() {
  for (auto& e : g_driver_excluded) {
    e = false;
  }
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  if (cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  attach();
  g_driver_api[cbid] = enable != 0;
  g_driver_excluded[cbid] = enable == 0;
  if (enable == 0) {
    g_driver_api_was_off[cbid] = true;
  } else if (g_context_ready) {
    g_driver_api_late[cbid] = true;
  }
  return CUPTI_SUCCESS;
}

bool driver_recorded(CUpti_CallbackId cbid) {
  if (g_enabled[CUPTI_ACTIVITY_KIND_DRIVER]) {
    return !g_driver_excluded[cbid];
  }
  return g_driver_api[cbid] && !g_driver_api_was_off[cbid] && !g_driver_api_late[cbid];
}

CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  uint8_t* next = buffer;
  if (*record != nullptr) {
    next = reinterpret_cast<uint8_t*>(*record) + record_size((*record)->kind);
  }
  if (next >= buffer + valid) {
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  }
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  std::lock_guard<std::mutex> lock{g_mutex};
  *dropped = g_dropped;
  g_dropped = 0;  // reset by each query, as CUPTI's
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  if (std::getenv("FAKE_CUPTI_FLUSH_HANGS") != nullptr) {
    for (;;) {
      ::pause();  // a flush that never returns (a lock held by the interrupted thread)
    }
  }
  std::unique_lock<std::mutex> lock{g_mutex};
  attach();
  if (g_running && (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == 0) {
    return CUPTI_SUCCESS;  // as CUPTI: a buffer holding an incomplete record is kept whole
  }
  if (g_request == nullptr) {
    g_flushes_detached.fetch_add(1);
    return CUPTI_ERROR_INVALID_OPERATION;  // no buffer callbacks registered
  }
  g_running = false;  // forced: handed out once, the running kernel without its end
  std::vector<std::vector<unsigned char>> records;
  records.swap(g_pending);
  lock.unlock();
  std::size_t i = 0;
  while (i < records.size()) {
    uint8_t* buffer = nullptr;
    size_t size = 0;
    size_t max_records = 0;
    g_request(&buffer, &size, &max_records);
    if (buffer == nullptr || size == 0) {
      std::lock_guard<std::mutex> again{g_mutex};
      g_dropped += records.size() - i;  // no buffer: the rest is dropped, and counted
      return CUPTI_SUCCESS;
    }
    size_t used = 0;
    while (i < records.size() && used + records[i].size() <= size) {
      std::memcpy(buffer + used, records[i].data(), records[i].size());
      used += records[i].size();
      ++i;
    }
    g_complete(nullptr, 0, buffer, size, used);
  }
  return CUPTI_SUCCESS;
}

std::atomic<CUpti_CallbackFunc> g_resource_cb{nullptr};
std::atomic<bool> g_context_created_enabled{false};

/// The program's first CUDA call creates its context (once).
void context_created() {
  if (g_context_ready) {
    return;
  }
  g_context_ready = true;
  if (g_resource_cb != nullptr && g_context_created_enabled) {
    CUpti_ResourceData r{};
    g_resource_cb(nullptr, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &r);
  }
}
std::atomic<bool> g_stream_created_enabled{false};
std::atomic<bool> g_profiler_start_enabled{false};
std::atomic<bool> g_profiler_stop_enabled{false};

std::atomic<int> g_subscribes_since_finalize{0};

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void*) {
  int const n = g_subscribes_since_finalize.fetch_add(1);
  g_stale_subscriber =
      n == 0 && g_finalizes.load() != 0 && std::getenv("FAKE_CUPTI_STALE_SUBSCRIBER") != nullptr;
  attach();
  g_resource_cb = callback;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&g_resource_cb);
  return CUPTI_SUCCESS;
}

std::atomic<bool> g_graph_enabled[CUPTI_CBID_RESOURCE_SIZE] = {};
std::atomic<bool> g_add_child_enabled{false};
/// Runtime and driver functions whose callbacks were enabled one by one.
constexpr std::size_t api_cbid_size =
    std::size_t{CUPTI_DRIVER_TRACE_CBID_SIZE} > std::size_t{CUPTI_RUNTIME_TRACE_CBID_SIZE}
        ? std::size_t{CUPTI_DRIVER_TRACE_CBID_SIZE}
        : std::size_t{CUPTI_RUNTIME_TRACE_CBID_SIZE};
std::atomic<bool> g_api_cb[2][api_cbid_size] = {};

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle,
                                CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  attach();
  if ((domain == CUPTI_CB_DOMAIN_DRIVER_API || domain == CUPTI_CB_DOMAIN_RUNTIME_API) &&
      cbid < sizeof g_api_cb[0] / sizeof g_api_cb[0][0]) {
    g_api_cb[domain == CUPTI_CB_DOMAIN_RUNTIME_API][cbid] = enable != 0;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    g_context_created_enabled = enable != 0;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_STREAM_CREATED) {
    g_stream_created_enabled = enable != 0;
  } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid < CUPTI_CBID_RESOURCE_SIZE) {
    g_graph_enabled[cbid] = enable != 0;
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
             cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphAddChildGraphNode) {
    g_add_child_enabled = enable != 0;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart) {
    g_profiler_start_enabled = enable != 0;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) {
    g_profiler_stop_enabled = enable != 0;
  }
  return CUPTI_SUCCESS;
}

std::atomic<bool> g_domain_enabled[CUPTI_CB_DOMAIN_SIZE] = {};

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle,
                              CUpti_CallbackDomain domain) {
  if (domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  attach();
  g_domain_enabled[domain] = enable != 0;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API || domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    for (auto& e : g_api_cb[domain == CUPTI_CB_DOMAIN_RUNTIME_API]) {
      e = enable != 0;  // the whole domain: each function's callback too, as CUPTI's
    }
  }
  return CUPTI_SUCCESS;
}

/// Raises a runtime or driver API callback at `site` on the calling thread, when the subscriber
/// enabled it (the whole domain, or the function). Returns whether it did.
bool api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, char const* name,
                  CUpti_ApiCallbackSite site) {
  bool const runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  CUpti_CallbackFunc const cb = g_resource_cb;
  if (cb == nullptr || cbid >= sizeof g_api_cb[0] / sizeof g_api_cb[0][0] ||
      !g_api_cb[runtime][cbid]) {
    return false;
  }
  CUpti_CallbackData c{};
  c.callbackSite = site;
  c.functionName = name;
  t_in_exit = site == CUPTI_API_EXIT;
  cb(nullptr, domain, cbid, &c);
  t_in_exit = false;
  return true;
}

/// @brief cuptiFinalize: CUPTI detaches, forgetting every setting; records never flushed are
/// lost (and counted).
CUptiResult cuptiFinalize() {
  if (std::getenv("FAKE_CUPTI_NO_DETACH") != nullptr) {
    g_refused.fetch_add(1);
    return CUPTI_ERROR_NOT_SUPPORTED;
  }
  if (!t_in_exit) {
    g_outside_exit.fetch_add(1);
  }
  {
    std::lock_guard<std::mutex> lock{g_mutex};
    g_lost.fetch_add(g_pending.size());
    g_pending.clear();
    g_running = false;
    if (std::getenv("FAKE_CUPTI_RESET_IDS") != nullptr) {
      g_correlation = 0;  // a CUPTI whose correlation ids start again after a detach
    }
  }
  g_request = nullptr;
  g_complete = nullptr;
  g_timestamp = nullptr;
  g_tid_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
  for (auto& e : g_enabled) {
    e = false;
  }
  for (auto& e : g_driver_api) {
    e = false;
  }
  for (auto& d : g_api_cb) {
    for (auto& e : d) {
      e = false;
    }
  }
  for (auto& e : g_domain_enabled) {
    e = false;
  }
  for (auto& e : g_graph_enabled) {
    e = false;
  }
  g_resource_cb = nullptr;
  g_stream_created_enabled = false;
  g_context_created_enabled = false;
  g_add_child_enabled = false;
  g_profiler_start_enabled = false;
  g_profiler_stop_enabled = false;
  g_attached = false;
  g_subscribes_since_finalize = 0;
  g_finalizes.fetch_add(1);
  return CUPTI_SUCCESS;
}

/// @brief Test hook: the calling thread enters (`enter` 1) or leaves a runtime (`domain` 2) or
/// driver (1) API function, as CUDA reports it to a subscriber that enabled the whole domain
/// (cuptiEnableDomain). Returns whether the subscriber was called.
__attribute__((visibility("default"))) int fake_cupti_api(int enter, int domain, uint32_t cbid,
                                                          char const* name) {
  auto const d = static_cast<CUpti_CallbackDomain>(domain);
  if (d != CUPTI_CB_DOMAIN_RUNTIME_API && d != CUPTI_CB_DOMAIN_DRIVER_API) {
    return 0;
  }
  return api_callback(d, cbid, name, enter != 0 ? CUPTI_API_ENTER : CUPTI_API_EXIT) ? 1 : 0;
}

/// @brief Test hook: how many times CUPTI was detached (`finalizes`) or refused to be
/// (`refused`), and whether a subscriber follows stream creation now (`names`: 1), so a program
/// can wait for a detach, and the light subscriber after it, as a condition.
__attribute__((visibility("default"))) void fake_cupti_state(int* finalizes, int* refused,
                                                             int* names) {
  *finalizes = g_finalizes.load();
  *refused = g_refused.load();
  *names = g_resource_cb != nullptr && g_stream_created_enabled ? 1 : 0;
}

/// @brief Test hook: cuProfilerStart (`start` 1) or cuProfilerStop, as the driver reports them
/// to a subscriber that enabled them (the callback at the call's entry and at its exit).
__attribute__((visibility("default"))) void fake_cupti_profiler(int start) {
  CUpti_CallbackId const cbid =
      start != 0 ? CUPTI_DRIVER_TRACE_CBID_cuProfilerStart : CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
  if (g_resource_cb == nullptr ||
      !(start != 0 ? g_profiler_start_enabled : g_profiler_stop_enabled)) {
    return;
  }
  for (auto site : {CUPTI_API_ENTER, CUPTI_API_EXIT}) {
    CUpti_CallbackData d{};
    d.callbackSite = site;
    d.functionName = start != 0 ? "cuProfilerStart" : "cuProfilerStop";
    g_resource_cb(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
  }
}

// CUDA graphs. The fake's handles are their ids: a CUgraphNode handle's bits are its CUPTI node
// id, a CUgraph's its graph id (real CUPTI gives ids of its own to real handles).
CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t* id) {
  *id = static_cast<uint64_t>(reinterpret_cast<std::uintptr_t>(node));
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t* id) {
  *id = static_cast<uint32_t>(reinterpret_cast<std::uintptr_t>(graph));
  return CUPTI_SUCCESS;
}

/// The fake's one stream: handle 0x5000 is CUPTI stream 7 (where its kernels run).
CUptiResult cuptiGetStreamIdEx(CUcontext, CUstream stream, uint8_t, uint32_t* id) {
  if (reinterpret_cast<std::uintptr_t>(stream) != 0x5000) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  *id = 7;
  return CUPTI_SUCCESS;
}

/// Driver functions the fake knows by name (the client picks launch functions by name).
struct driver_name {
  CUpti_CallbackId cbid;
  char const* name;
};
constexpr driver_name driver_names[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx"},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc, "cuLaunchHostFunc"},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2"},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, "cuMemsetD8Async"},
    {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch"},
    {CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData, "cuModuleLoadData"},
    {CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize"},
    {CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, "cuStreamSynchronize"},
};

/// Runtime functions the fake knows by name (capture_app's in_call and detach cases call them).
constexpr driver_name runtime_names[] = {
    {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch_v10000"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, "cudaGetDevice_v3020"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy_v3020"},
    {CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, "cudaStreamSynchronize_v3020"},
};

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    for (auto const& d : driver_names) {
      if (d.cbid == cbid) {
        *name = d.name;
        return CUPTI_SUCCESS;
      }
    }
  }
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    for (auto const& r : runtime_names) {
      if (r.cbid == cbid) {
        *name = r.name;
        return CUPTI_SUCCESS;
      }
    }
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

void launch_locked(int kernels, std::size_t dropped);

/// @brief Test hook: `kernels` launches (a runtime API record and a kernel record each, the
/// kernel running 1 us after the call), one HtoD copy and one memset, each when its kind is
/// enabled. Records CUPTI would drop: `dropped`.
__attribute__((visibility("default"))) void fake_cupti_launch(int kernels, std::size_t dropped) {
  // The launches as one runtime call, whose callbacks come outside the fake's lock (a client may
  // call CUPTI from them: cuptiFinalize at the exit).
  api_callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
               "cudaLaunchKernel", CUPTI_API_ENTER);
  launch_locked(kernels, dropped);
  api_callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
               "cudaLaunchKernel", CUPTI_API_EXIT);
}

void launch_locked(int kernels, std::size_t dropped) {
  context_created();
  if (g_resource_cb != nullptr && g_stream_created_enabled) {  // the program creates its stream
    CUpti_ResourceData r{};
    r.resourceHandle.stream = reinterpret_cast<CUstream>(std::uintptr_t{0x5000});
    g_resource_cb(nullptr, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_CREATED, &r);
  }
  std::lock_guard<std::mutex> lock{g_mutex};
  g_dropped += dropped;
  uint32_t const tid = g_tid_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
                           ? static_cast<uint32_t>(::syscall(SYS_gettid))
                           : 0xFA4Eu;
  for (int i = 0; i < kernels; ++i) {
    uint32_t const corr = ++g_correlation;
    if (g_enabled[CUPTI_ACTIVITY_KIND_RUNTIME]) {
      CUpti_ActivityAPI a{};
      a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
      a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
      a.start = now();
      // The call's duration: the fake spins on the clock as a real call would be busy.
      static std::int64_t const busy = env_ns("FAKE_CUPTI_API_NS");
      while (static_cast<std::int64_t>(now() - a.start) < busy) {
      }
      a.end = now();
      a.processId = static_cast<uint32_t>(::getpid());
      a.threadId = tid;
      a.correlationId = corr;
      add(a);
    }
    if (g_enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] || g_enabled[CUPTI_ACTIVITY_KIND_KERNEL]) {
      CUpti_ActivityKernel10 k{};
      k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      static std::int64_t const delay = env_ns("FAKE_CUPTI_KERNEL_DELAY_NS");
      k.start = now() + 1000 + static_cast<std::uint64_t>(delay);
      k.end = k.start + 5000;
      k.streamId = 7;
      k.correlationId = corr;
      k.name = "_Z4fakePi";
      k.gridX = k.gridY = k.gridZ = 1;
      k.blockX = 32;
      k.blockY = k.blockZ = 1;
      add(k);
    }
  }
  if (g_enabled[CUPTI_ACTIVITY_KIND_MEMCPY]) {
    CUpti_ActivityMemcpy6 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.bytes = 4096;
    m.start = now();
    m.end = m.start + 2000;
    m.correlationId = ++g_correlation;
    add(m);
  }
  if (g_enabled[CUPTI_ACTIVITY_KIND_MEMSET]) {
    CUpti_ActivityMemset4 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.bytes = 128;
    m.start = now();
    m.end = m.start + 1000;
    m.correlationId = ++g_correlation;
    add(m);
  }
  if (std::getenv("FAKE_CUPTI_RUNNING") != nullptr &&
      (g_enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] || g_enabled[CUPTI_ACTIVITY_KIND_KERNEL])) {
    // A GPU that is never idle: a kernel still running, behind the others in the buffer.
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = now() + 1000;
    k.end = 0;  // no end yet
    k.streamId = 7;
    k.correlationId = ++g_correlation;
    k.name = "_Z7runningPi";
    k.gridX = k.gridY = k.gridZ = 1;
    k.blockX = 32;
    k.blockY = k.blockZ = 1;
    add(k);
    g_running = true;
  }
}

namespace {

uint32_t calling_tid() {
  return g_tid_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
             ? static_cast<uint32_t>(::syscall(SYS_gettid))
             : 0xFA4Eu;
}

CUpti_ActivityAPI api_record(CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint32_t corr,
                             uint64_t start, uint64_t end) {
  CUpti_ActivityAPI a{};
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = static_cast<uint32_t>(::getpid());
  a.threadId = calling_tid();
  a.correlationId = corr;
  return a;
}

void kernel_record(uint32_t corr, uint64_t start) {
  if (g_enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] || g_enabled[CUPTI_ACTIVITY_KIND_KERNEL]) {
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = start;
    k.end = start + 3000;
    k.streamId = 7;
    k.correlationId = corr;
    k.name = "_Z10jit_kernelPf";
    k.gridX = k.gridY = k.gridZ = 1;
    k.blockX = 64;
    k.blockY = k.blockZ = 1;
    add(k);
  }
}

}  // namespace

/// @brief Test hook: GPU work as CUDA reports it when it is launched through the driver API.
/// `what` 0: the program's own driver calls, as Numba or cuBLASLt make them: two
/// cuLaunchKernel, one cuMemcpyHtoDAsync_v2 and one cuMemsetD8Async, each with its work
/// (recorded only where the client enabled those driver functions); 1: one cudaLaunchKernel
/// whose own cuLaunchKernel (inside it, same thread) shares its correlation id, as CUPTI 13
/// documents; 2: the same, the inner call with an id of its own that the kernel carries; 3: a
/// kernel whose correlation id no API call has (a launch CUPTI reports no call for).
void driver_locked(int what);

__attribute__((visibility("default"))) void fake_cupti_driver(int what) {
  api_callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel",
               CUPTI_API_ENTER);
  driver_locked(what);
  api_callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel",
               CUPTI_API_EXIT);
}

void driver_locked(int what) {
  std::lock_guard<std::mutex> lock{g_mutex};
  if (what == 0) {
    for (int i = 0; i < 2; ++i) {
      uint32_t const corr = ++g_correlation;
      uint64_t const t = now();
      if (driver_recorded(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)) {
        add(api_record(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, corr, t,
                       t + 400));
      }
      kernel_record(corr, t + 1000);
    }
    uint32_t corr = ++g_correlation;
    uint64_t t = now();
    if (driver_recorded(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2)) {
      add(api_record(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, corr,
                     t, t + 300));
    }
    if (g_enabled[CUPTI_ACTIVITY_KIND_MEMCPY]) {
      CUpti_ActivityMemcpy6 m{};
      m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
      m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
      m.bytes = 1 << 20;
      m.start = t + 1000;
      m.end = t + 9000;
      m.streamId = 7;
      m.correlationId = corr;
      add(m);
    }
    corr = ++g_correlation;
    t = now();
    if (driver_recorded(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async)) {
      add(api_record(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, corr, t,
                     t + 200));
    }
    if (g_enabled[CUPTI_ACTIVITY_KIND_MEMSET]) {
      CUpti_ActivityMemset4 m{};
      m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
      m.bytes = 4096;
      m.start = t + 1000;
      m.end = t + 2000;
      m.streamId = 7;
      m.correlationId = corr;
      add(m);
    }
  } else if (what == 1 || what == 2) {
    uint32_t const outer = ++g_correlation;
    uint32_t const inner = what == 1 ? outer : ++g_correlation;
    uint64_t const t = now();
    // The driver call ends first (CUPTI completes the inner record first).
    if (driver_recorded(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)) {
      add(api_record(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, inner,
                     t + 100, t + 500));
    }
    if (g_enabled[CUPTI_ACTIVITY_KIND_RUNTIME]) {
      add(api_record(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                     outer, t, t + 600));
    }
    kernel_record(inner, t + 1000);
  } else {
    kernel_record(++g_correlation, now() + 1000);
  }
}

/// @brief Test hook: a graph node event, as CUDA raises it on the calling thread. `event`: 0 a
/// node created (stream capture or cudaGraphAdd*Node), 1 cloned from `original` (instantiation,
/// cloning, a child graph copied into its node), 2 updated from `original`
/// (cudaGraphExecUpdate), 3 a node of type `type` about to be created in `graph` (no node yet),
/// 4 and 5 the driver call cuGraphAddChildGraphNode entered and returned (its API callbacks).
__attribute__((visibility("default"))) void fake_cupti_graph_node(int event, uint32_t graph,
                                                                  uint64_t node,
                                                                  uint32_t original_graph,
                                                                  uint64_t original, int type) {
  if (event == 4 || event == 5) {
    if (g_resource_cb != nullptr && g_add_child_enabled) {
      CUpti_CallbackData c{};
      c.callbackSite = event == 4 ? CUPTI_API_ENTER : CUPTI_API_EXIT;
      c.functionName = "cuGraphAddChildGraphNode";
      g_resource_cb(nullptr, CUPTI_CB_DOMAIN_DRIVER_API,
                    CUPTI_DRIVER_TRACE_CBID_cuGraphAddChildGraphNode, &c);
    }
    return;
  }
  CUpti_CallbackId const cbid = event == 0   ? CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED
                                : event == 1 ? CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED
                                : event == 2 ? CUPTI_CBID_RESOURCE_GRAPH_NODE_UPDATED
                                             : CUPTI_CBID_RESOURCE_GRAPHNODE_CREATE_STARTING;
  if (g_resource_cb == nullptr || !g_graph_enabled[cbid]) {
    return;
  }
  CUpti_GraphData g{};
  g.graph = reinterpret_cast<CUgraph>(static_cast<std::uintptr_t>(graph));
  g.node = reinterpret_cast<CUgraphNode>(static_cast<std::uintptr_t>(node));
  g.originalGraph = reinterpret_cast<CUgraph>(static_cast<std::uintptr_t>(original_graph));
  g.originalNode = reinterpret_cast<CUgraphNode>(static_cast<std::uintptr_t>(original));
  g.nodeType = static_cast<CUgraphNodeType>(type);
  CUpti_ResourceData r{};
  r.resourceDescriptor = &g;
  g_resource_cb(nullptr, CUPTI_CB_DOMAIN_RESOURCE, cbid, &r);
}

/// @brief Test hook: a unified memory migration of `bytes` as CUPTI reports one (a
/// CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER record of `counter` kind, 2 us long, between the
/// host (id 0 as the CPU's) and `device`, no correlation id), when that kind is enabled and its
/// counter configured. `counter` 3 adds a CPU page fault count record (never configured by the
/// client: must not appear).
__attribute__((visibility("default"))) void fake_cupti_migration(int counter, uint64_t bytes,
                                                                 uint32_t device) {
  context_created();
  std::lock_guard<std::mutex> lock{g_mutex};
  auto const kind = static_cast<CUpti_ActivityUnifiedMemoryCounterKind>(counter);
  if (!g_enabled[CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER] || !g_um_counter[counter & 15]) {
    return;
  }
  CUpti_ActivityUnifiedMemoryCounter3 u{};
  u.kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
  u.counterKind = kind;
  u.value = bytes;
  u.start = now();
  u.end = u.start + 2000;
  u.address = 0x7f0000000000;
  bool const to_device = kind != CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH;
  u.srcId = to_device ? 0 : device;
  u.dstId = to_device ? device : 0;
  u.streamId = 0xDEAD;  // documented as invalid
  u.processId = static_cast<uint32_t>(::getpid());
  u.flags = CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER;
  add(u);
}

/// @brief Test hook: one cudaGraphLaunch of executable graph `graph` on CUPTI stream `stream`:
/// its API record, then each node's work (kinds[i]: 0 kernel, 1 copy, 2 memset) one after the
/// other, 1 us each, all with the launch's correlation id, as CUPTI reports graph work.
__attribute__((visibility("default"))) void fake_cupti_graph_launch(uint32_t graph,
                                                                    uint64_t const* nodes,
                                                                    int const* kinds, int n,
                                                                    uint32_t stream) {
  std::lock_guard<std::mutex> lock{g_mutex};
  uint32_t const corr = ++g_correlation;
  if (g_enabled[CUPTI_ACTIVITY_KIND_RUNTIME]) {
    CUpti_ActivityAPI a{};
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000;
    a.start = now();
    a.end = a.start + 500;
    a.processId = static_cast<uint32_t>(::getpid());
    a.threadId = static_cast<uint32_t>(::syscall(SYS_gettid));
    a.correlationId = corr;
    add(a);
  }
  uint64_t t = now() + 1000;
  for (int i = 0; i < n; ++i, t += 1500) {
    if (kinds[i] == 0) {
      CUpti_ActivityKernel10 k{};
      k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      k.start = t;
      k.end = t + 1000;
      k.streamId = stream;
      k.correlationId = corr;
      k.name = "_Z9graph_opv";
      k.gridX = k.gridY = k.gridZ = 1;
      k.blockX = k.blockY = k.blockZ = 1;
      k.graphNodeId = nodes[i];
      k.graphId = graph;
      add(k);
    } else if (kinds[i] == 1) {
      CUpti_ActivityMemcpy6 m{};
      m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
      m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
      m.bytes = 256;
      m.start = t;
      m.end = t + 1000;
      m.streamId = stream;
      m.correlationId = corr;
      m.graphNodeId = nodes[i];
      m.graphId = graph;
      add(m);
    } else {
      CUpti_ActivityMemset4 m{};
      m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
      m.bytes = 64;
      m.start = t;
      m.end = t + 1000;
      m.streamId = stream;
      m.correlationId = corr;
      m.graphNodeId = nodes[i];
      m.graphId = graph;
      add(m);
    }
  }
}

}  // extern "C"
