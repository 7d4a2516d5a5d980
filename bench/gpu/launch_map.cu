// The map of what CUPTI costs a launch-bound loop, and what stays after it is switched off
// (docs/performance.md, "What CUPTI costs a launch-bound loop"; issue 52).
//
// One process runs a framework-like step again and again: L launches of an empty kernel (one in
// eight through the driver's cuLaunchKernel, as JIT-compiled kernels are launched), each beside
// two cheap runtime calls (cudaGetDevice, cudaStreamIsCapturing), then a stream sync.
// Between phases it switches CUPTI's features the way nvtxpp-capture does, and for each phase
// prints the median step, its ratio to the phase with no tool, and the extra cost per CUDA call:
//
//   none                     CUDA running, CUPTI never touched
//   <feature> on / off / detached
//                            each feature alone: switched on, then off again (what stays), then
//                            CUPTI detached (cuptiFinalize at a CUDA call's exit, the way the
//                            capture detaches)
//   all on / off / on2 / off2 / detached / attach on / attach off / attach detached
//                            every feature of a full capture, twice, detached, attached again
//   detached+resource        after a detach, a subscriber with the resource callbacks only
//   flight on / off / detached
//                            a full capture plus the API-call callbacks of the flight recorder
//
// `--start=early` switches every feature on before CUDA starts (as the capture does when the
// driver loads it), then off, then detaches: the "off after an early start" phase.
// Features: kernel (CONCURRENT_KERNEL records), runtime (RUNTIME records), driver (the activity
// records of the driver's launch functions alone, cuptiActivityEnableDriverApi), sync
// (SYNCHRONIZATION), memcpy (MEMCPY and MEMSET), resource (a subscriber with the stream, context
// and graph-node resource callbacks), api_calls (a subscriber with the whole runtime and driver
// API domains, each callback writing a per-thread slot as the flight recorder's call table does),
// driver_kind (the whole DRIVER kind less every function that launches no GPU work).
//
// Also printed: each phase's records by kind (kernels, runtime, driver), so a phase that should
// record shows that it did (after a detach and attach too); how long a detach and an attach take;
// and a stream's CUPTI id before a detach and after the attach.
//
//   nvcc -O2 -std=c++17 launch_map.cu -o launch_map -lcupti -lcuda
//   ./launch_map [--launches L] [--steps N] [--start=late|early] [--only FEATURE,...]
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

__global__ void empty_kernel() {}

#define CHECK_CUDA(x)                                                           \
  do {                                                                          \
    cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "launch_map: %s: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                             \
    }                                                                           \
  } while (0)

bool ok(CUptiResult r, char const* what) {
  if (r != CUPTI_SUCCESS) {
    char const* s = nullptr;
    cuptiGetResultString(r, &s);
    std::fprintf(stderr, "launch_map: %s: %s\n", what, s != nullptr ? s : "?");
    return false;
  }
  return true;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Records -----------------------------------------------------------------------------------

constexpr std::size_t buffer_bytes = std::size_t{8} << 20;
std::atomic<unsigned long long> g_kernels{0}, g_runtime{0}, g_driver{0}, g_other{0};
std::atomic<std::uint32_t> g_corr_min{UINT32_MAX}, g_corr_max{0};  ///< kernels' correlation ids

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, buffer_bytes));
  *size = *buffer != nullptr ? buffer_bytes : 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    switch (r->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        g_kernels.fetch_add(1);
        std::uint32_t const c = reinterpret_cast<CUpti_ActivityKernel10 const*>(r)->correlationId;
        g_corr_min.store(std::min(g_corr_min.load(), c));
        g_corr_max.store(std::max(g_corr_max.load(), c));
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
        g_runtime.fetch_add(1);
        break;
      case CUPTI_ACTIVITY_KIND_DRIVER:
        g_driver.fetch_add(1);
        break;
      default:
        g_other.fetch_add(1);
        break;
    }
  }
  std::free(buffer);
}

// Callbacks ---------------------------------------------------------------------------------

struct call_slot {
  std::uint64_t cbid;
  std::uint64_t depth;
};
thread_local call_slot t_slot;
std::atomic<bool> g_detach_requested{false};
std::atomic<std::int64_t> g_finalize_ns{0};
bool g_api_calls = false;  ///< the API-call callbacks do the flight recorder's work

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          void const* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) {
    return;  // resource callbacks: nothing to do but be called
  }
  auto const* cb = static_cast<CUpti_CallbackData const*>(data);
  if (g_api_calls) {
    if (cb->callbackSite == CUPTI_API_ENTER) {
      t_slot.cbid = cbid;
      ++t_slot.depth;
    } else {
      --t_slot.depth;
    }
  }
  // The detach: at a CUDA call's exit, once, as CUPTI's header recommends.
  if (cb->callbackSite == CUPTI_API_EXIT &&
      g_detach_requested.exchange(false, std::memory_order_acq_rel)) {
    std::int64_t const t = now_ns();
    ok(cuptiFinalize(), "cuptiFinalize");
    g_finalize_ns.store(now_ns() - t);
  }
}

// Features ----------------------------------------------------------------------------------

enum feature : unsigned {
  f_kernel = 1,
  f_runtime = 2,
  f_driver = 4,
  f_sync = 8,
  f_memcpy = 16,
  f_resource = 32,
  f_api_calls = 64,
  f_driver_kind = 128,
};
constexpr unsigned f_capture = f_kernel | f_runtime | f_driver | f_sync | f_memcpy | f_resource;

std::vector<CUpti_CallbackId> launch_cbids() {
  std::vector<CUpti_CallbackId> ids;
  for (CUpti_CallbackId id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id) {
    char const* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) != CUPTI_SUCCESS ||
        name == nullptr) {
      continue;
    }
    std::string const n = name;
    if (n.rfind("cuLaunchHostFunc", 0) == 0) {
      continue;
    }
    if (n.rfind("cuLaunch", 0) == 0 || n.rfind("cuMemcpy", 0) == 0 || n.rfind("cuMemset", 0) == 0 ||
        n.rfind("cuGraphLaunch", 0) == 0) {
      ids.push_back(id);
    }
  }
  return ids;
}

struct session {
  bool attached = false;  ///< callbacks registered since the last detach
  CUpti_SubscriberHandle subscriber = nullptr;
  unsigned on = 0;
};

void attach(session& s) {
  if (!s.attached) {
    ok(cuptiActivityRegisterCallbacks(&requested, &completed), "cuptiActivityRegisterCallbacks");
    s.attached = true;
  }
}

void subscribe(session& s) {
  if (s.subscriber == nullptr) {
    ok(cuptiSubscribe(&s.subscriber, &on_callback, nullptr), "cuptiSubscribe");
  }
}

void switch_features(session& s, unsigned features, bool on) {
  attach(s);
  std::uint32_t const v = on ? 1 : 0;
  auto kind = [&](CUpti_ActivityKind k) {
    ok(on ? cuptiActivityEnable(k) : cuptiActivityDisable(k), "cuptiActivityEnable/Disable");
  };
  if (features & f_kernel) kind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (features & f_runtime) kind(CUPTI_ACTIVITY_KIND_RUNTIME);
  if (features & f_sync) kind(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  if (features & f_memcpy) {
    kind(CUPTI_ACTIVITY_KIND_MEMCPY);
    kind(CUPTI_ACTIVITY_KIND_MEMSET);
  }
  if (features & f_driver) {
    static std::vector<CUpti_CallbackId> const ids = launch_cbids();
    for (CUpti_CallbackId id : ids) {
      ok(cuptiActivityEnableDriverApi(id, static_cast<uint8_t>(v)), "cuptiActivityEnableDriverApi");
    }
  }
  if (features & f_driver_kind) {
    // The whole DRIVER kind, less every function that launches no GPU work: the way to the
    // launch functions' records when CUPTI attaches after CUDA started
    // (cuptiActivityEnableDriverApi alone records nothing then).
    static std::vector<CUpti_CallbackId> const ids = launch_cbids();
    kind(CUPTI_ACTIVITY_KIND_DRIVER);
    if (on) {
      for (CUpti_CallbackId id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id) {
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
          cuptiActivityEnableDriverApi(id, 0);
        }
      }
    }
  }
  if (features & (f_resource | f_api_calls)) {
    subscribe(s);
  }
  if (features & f_resource) {
    for (CUpti_CallbackId id :
         {CUPTI_CBID_RESOURCE_STREAM_CREATED, CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
          CUPTI_CBID_RESOURCE_GRAPHNODE_CREATE_STARTING, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
          CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, CUPTI_CBID_RESOURCE_GRAPH_NODE_UPDATED}) {
      ok(cuptiEnableCallback(v, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE, id), "cuptiEnableCallback");
    }
  }
  if (features & f_api_calls) {
    g_api_calls = on;
    for (auto d : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
      ok(cuptiEnableDomain(v, s.subscriber, d), "cuptiEnableDomain");
    }
  }
  s.on = on ? (s.on | features) : (s.on & ~features);
}

// The loop ----------------------------------------------------------------------------------

int g_launches = 2000;
int g_steps = 40;
cudaStream_t g_stream;
CUfunction g_function = nullptr;  ///< empty_kernel for the driver's cuLaunchKernel
double g_none_ns = 0;

double step_once() {
  std::int64_t const t = now_ns();
  int dev = 0;
  cudaStreamCaptureStatus capturing{};
  for (int i = 0; i < g_launches; ++i) {
    if (i % 8 == 7) {  // one launch in eight through the driver API, as JIT compilers launch
      cuLaunchKernel(g_function, 1, 1, 1, 1, 1, 1, 0, g_stream, nullptr, nullptr);
    } else {
      empty_kernel<<<1, 1, 0, g_stream>>>();
    }
    cudaGetDevice(&dev);
    cudaStreamIsCapturing(g_stream, &capturing);
  }
  cudaStreamSynchronize(g_stream);
  return static_cast<double>(now_ns() - t);
}

/// Runs a phase: warm-up steps, then g_steps timed; prints its median and its records.
double phase(char const* name) {
  for (int i = 0; i < 3; ++i) {
    step_once();
  }
  std::vector<double> t;
  for (int i = 0; i < g_steps; ++i) {
    t.push_back(step_once());
  }
  std::sort(t.begin(), t.end());
  double const median = t[t.size() / 2];
  CHECK_CUDA(cudaDeviceSynchronize());
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  unsigned long long const k = g_kernels.exchange(0), r = g_runtime.exchange(0),
                           d = g_driver.exchange(0);
  g_other.store(0);
  std::uint32_t const cmin = g_corr_min.exchange(UINT32_MAX), cmax = g_corr_max.exchange(0);
  if (g_none_ns == 0) {
    g_none_ns = median;
  }
  double const calls = 3.0 * g_launches + 1;
  std::printf(
      "phase=%-22s median_step_us=%9.1f vs_none=%.3f ns_per_call=%+7.1f "
      "records kernels=%llu runtime=%llu driver=%llu\n",
      name, median / 1e3, median / g_none_ns, (median - g_none_ns) / calls, k, r, d);
  if (k != 0) {
    std::printf("correlation ids of %s: %u..%u\n", name, cmin, cmax);
  }
  std::fflush(stdout);
  return median;
}

/// Everything off, flushed, then CUPTI detached at the next CUDA call's exit (the capture's way).
void detach(session& s) {
  switch_features(s, s.on, false);
  CHECK_CUDA(cudaDeviceSynchronize());
  std::int64_t const t = now_ns();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::int64_t const flushed = now_ns();
  subscribe(s);  // the callback that finalizes
  g_detach_requested.store(true);
  ok(cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "cuptiEnableDomain");
  int dev = 0;
  cudaGetDevice(&dev);  // its exit detaches
  bool const done = !g_detach_requested.load();
  std::printf("detach: flush %.1f us, cuptiFinalize %.1f us at a call's exit%s\n",
              (flushed - t) / 1e3, g_finalize_ns.load() / 1e3, done ? "" : " (NOT DONE)");
  s = session{};
  g_api_calls = false;
}

std::uint32_t stream_id() {
  std::uint32_t id = 0;
  if (!ok(cuptiGetStreamIdEx(nullptr, g_stream, 0, &id), "cuptiGetStreamIdEx")) {
    return 0;
  }
  return id;
}

void feature_alone(session& s, char const* name, unsigned f) {
  std::string const n = name;
  switch_features(s, f, true);
  phase((n + " on").c_str());
  switch_features(s, f, false);
  phase((n + " off").c_str());
  detach(s);
  phase((n + " detached").c_str());
}

}  // namespace

int main(int argc, char** argv) {
  bool early = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    if (a == "--launches" && i + 1 < argc) {
      g_launches = std::atoi(argv[++i]);
    } else if (a == "--steps" && i + 1 < argc) {
      g_steps = std::atoi(argv[++i]);
    } else if (a == "--start=early") {
      early = true;
    } else if (a == "--start=late") {
      early = false;
    } else if (a == "--only" && i + 1 < argc) {
      only = std::string{","} + argv[++i] + ",";
    } else {
      std::fprintf(stderr,
                   "usage: launch_map [--launches L] [--steps N] [--start=late|early] "
                   "[--only all,kernel,runtime,driver,sync,memcpy,resource,api_calls,flight]\n");
      return 2;
    }
  }
  auto want = [&](char const* f) {
    return only.empty() || only.find(std::string{","} + f + ",") != std::string::npos;
  };
  session s;
  if (early) {
    switch_features(s, f_capture, true);  // before CUDA starts
  }
  CHECK_CUDA(cudaFree(nullptr));
  CHECK_CUDA(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&g_function),
                                 reinterpret_cast<void const*>(&empty_kernel)));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device=\"%s\" launches=%d steps=%d calls_a_step=%d start=%s\n", prop.name,
              g_launches, g_steps, 3 * g_launches + 1, early ? "early" : "late");
  if (early) {
    phase("all on (early)");  // (its ratio is against itself: no phase without a tool yet)
    double const on = g_none_ns;
    g_none_ns = 0;
    switch_features(s, f_capture, false);
    double const off = phase("all off (early)");
    detach(s);
    double const detached = phase("all detached (early)");
    std::printf("early: on/detached=%.3f off/detached=%.3f\n", on / detached, off / detached);
    // Attached again after an early start: which way still records the driver's launches.
    switch_features(s, f_capture, true);
    phase("attach on (after early)");
    switch_features(s, f_driver, false);
    switch_features(s, f_driver_kind, true);
    phase("attach on, driver kind");
    switch_features(s, f_capture | f_driver_kind, false);
    detach(s);
    phase("attach detached (early)");
    return 0;
  }
  phase("none");
  struct one {
    char const* name;
    unsigned f;
  };
  for (one const f :
       {one{"kernel", f_kernel}, one{"runtime", f_runtime}, one{"driver", f_driver},
        one{"driver_kind", f_driver_kind}, one{"sync", f_sync}, one{"memcpy", f_memcpy},
        one{"resource", f_resource}, one{"api_calls", f_api_calls}}) {
    if (want(f.name)) {
      feature_alone(s, f.name, f.f);
    }
  }
  if (want("all")) {
    switch_features(s, f_capture, true);
    phase("all on");
    std::uint32_t const id_before = stream_id();
    switch_features(s, f_capture, false);
    phase("all off");
    switch_features(s, f_capture, true);
    phase("all on2");
    switch_features(s, f_capture, false);
    phase("all off2");
    detach(s);
    phase("all detached");
    std::int64_t const t = now_ns();
    switch_features(s, f_capture, true);
    std::printf("attach: %.1f us (callbacks registered, every feature enabled)\n",
                (now_ns() - t) / 1e3);
    std::uint32_t const id_after = stream_id();
    std::printf("stream id: %u before the detach, %u after the attach%s\n", id_before, id_after,
                id_before == id_after ? " (same)" : " (CHANGED)");
    phase("attach on");
    switch_features(s, f_driver, false);
    switch_features(s, f_driver_kind, true);
    phase("attach on, driver kind");
    switch_features(s, f_capture | f_driver_kind, false);
    phase("attach off");
    detach(s);
    phase("attach detached");
    switch_features(s, f_resource, true);
    phase("detached+resource");
    detach(s);
    phase("none again");
  }
  if (want("flight")) {
    feature_alone(s, "flight", f_capture | f_api_calls);
  }
  return 0;
}
