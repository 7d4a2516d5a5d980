// The run-time half of nvtxpp-capture's CUPTI source (see cupti.hpp).
//
// Start: the launcher sets CUDA_INJECTION64_PATH to this library (the same absolute path as
// NVTX_INJECTION64_PATH, so the process has one copy); the CUDA driver calls InitializeInjection
// in cuInit. Only then is CUPTI loaded (dlopen: no link-time dependency on CUPTI or CUDA, so
// programs without CUDA and machines without CUPTI never touch it) and activity recording
// enabled, so it sees all CUDA work from the start. CUPTI's headers give types only.
//
// The files (cupti_internal.hpp): this one loads CUPTI, runs the flusher thread and the flushes;
// cupti_buffers.cpp the records; cupti_callbacks.cpp the subscriber; cupti_switch.cpp what is
// recorded when (the window, the periods, the detach and the attach: cupti_session.hpp).
//
// Records: CUPTI fills buffers we hand out from a small pool; each completed buffer is converted
// (cupti_convert.cpp) and appended to the capture file. Timestamps come from our callback
// (CLOCK_MONOTONIC ns) and API records carry the system tid, so GPU and NVTX share one timeline
// and one set of thread ids. Buffers full (16 of 4 MiB waiting to be written): CUPTI drops
// records and counts them; we add the counts up and write `info dropped=N` once at the end
// (never silent).
//
// End of the process: an at-exit handler, registered in InitializeInjection (so it runs before
// the handlers the CUDA runtime registered earlier, and before library destructors, when CUPTI
// may already be unloaded), waits for the GPU work of the active primary contexts, then flushes
// CUPTI with CUPTI_ACTIVITY_FLAG_FLUSH_FORCED; inject.cpp's finish record comes after. It runs
// on the flusher thread with a bound (`exit_wait_ns`), so a GPU that never finishes cannot hang
// the program's exit.
//
// Fatal signals: CUPTI's flush is not async-signal-safe (it locks and allocates), so the signal
// handler does not call it. A dedicated flusher thread (started with CUPTI, all signals blocked)
// sleeps on a futex; the handler bumps the request word, wakes it with futex(2) and waits on the
// done word with futex(2) (both async-signal-safe), for at most `signal_wait_ns`. The flusher
// synchronises the devices (so kernels still running complete), flushes CUPTI and writes the
// records; then the handler writes the NVTX blocks and the finish record and lets the signal
// take its course. If the interrupted thread holds a lock the flush needs (it was inside a CUDA
// call), the flusher cannot finish: after the wait the handler writes `info cupti_flush=timeout`
// and goes on, so the GPU records still buffered are lost, but not silently.
//
// The same thread serves the flight recorder's live dumps (flush_live): a second request word,
// a non-forced flush, recording going on; and the detach's two steps that must not run on the
// program's threads: draining a period's GPU work before it, subscribing the light subscriber
// after it. Every kind bumps one wake word the thread sleeps on.
//
// With the flight recorder, the subscriber also gets every runtime and driver API call
// (api_calls.cpp: the call each thread is inside, for stacks reports); on_resource then ignores
// the driver callbacks it was not asked for.
//
// fork(): the child inherits CUPTI's state but CUDA cannot be used in it (CUDA does not support
// fork after cuInit), and the flusher thread does not exist there. The child stops using CUPTI
// (its buffer callbacks, flushes and at-exit handler do nothing), and its own capture file says
// `info cupti=unavailable:forked child` when the parent had CUPTI loaded.
#include "../capture_gate.hpp"
#include "../inject_internal.hpp"
#include "../our_threads.hpp"
#include "api_calls.hpp"
#include "cupti_internal.hpp"
#include "cupti_session.hpp"
#include "gpu_sampler.hpp"
#include "graph_nodes.hpp"

#include <cupti.h>

#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

namespace nvtxpp::capture::cupti {

namespace detail {

namespace rec = nvtxpp::recording;

std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

uint64_t CUPTIAPI timestamp() { return static_cast<uint64_t>(monotonic_ns()); }

long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value,
           timespec const* timeout) noexcept {
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr,
                   0);
}

void write_info(std::string_view text) noexcept {
  iovec part{const_cast<char*>(text.data()), text.size()};
  write_file_record(static_cast<std::uint32_t>(rec::gpu_record::info), &part, 1);
}

/// Writes `key=<n>`. Async-signal-safe (no allocation, no locale).
void write_count_info(char const* key, std::uint64_t n) noexcept {
  char text[64];
  std::size_t len = 0;
  while (key[len] != '\0' && len < 40) {
    text[len] = key[len];
    ++len;
  }
  text[len++] = '=';
  char digits[24];
  int nd = 0;
  do {
    digits[nd++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  while (nd > 0) {
    text[len++] = digits[--nd];
  }
  write_info(std::string_view{text, len});
}

/// Adds CUPTI's dropped count (reset by each query) to ours.
void collect_dropped() noexcept {
  size_t dropped = 0;
  if (g_api.dropped(nullptr, 0, &dropped) == CUPTI_SUCCESS) {
    g_dropped.fetch_add(dropped, std::memory_order_relaxed);
  }
}

bool same_process() noexcept { return g_pid.load(std::memory_order_acquire) == ::getpid(); }

char const* api_name(std::uint32_t domain, std::uint32_t cbid) {
  char const* name = nullptr;
  if (g_api.callback_name == nullptr ||
      g_api.callback_name(static_cast<CUpti_CallbackDomain>(domain), cbid, &name) !=
          CUPTI_SUCCESS) {
    return nullptr;
  }
  return name;
}

std::string result_text(CUptiResult r) {
  char const* s = nullptr;
  if (g_api.result_string != nullptr && g_api.result_string(r, &s) == CUPTI_SUCCESS &&
      s != nullptr) {
    return s;
  }
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

// The final flush ------------------------------------------------------------------------------

/// The CUDA driver's functions synchronize_devices calls, resolved once, when CUPTI starts (in
/// cuInit: the driver is loaded, RTLD_NOLOAD; we never load CUDA ourselves). Resolving them at
/// each period's end would also leave a failed dlopen's message on our thread in a process
/// without the driver (the test double's), which a forked child's leak check then reports.
struct driver_table {
  CUresult (*get_count)(int*);
  CUresult (*get)(CUdevice*, int);
  CUresult (*get_state)(CUdevice, unsigned*, int*);
  CUresult (*retain)(CUcontext*, CUdevice);
  CUresult (*release)(CUdevice);
  CUresult (*push)(CUcontext);
  CUresult (*pop)(CUcontext*);
  CUresult (*sync)();
  CUresult (*exchange_mode)(CUstreamCaptureMode*);  ///< optional
};
driver_table g_driver{};
bool g_driver_found = false;

void find_driver() noexcept {
  void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cuda == nullptr) {
    return;
  }
  auto get = [&](char const* name, auto& f) {
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(::dlsym(cuda, name));
    return f != nullptr;
  };
  g_driver_found =
      get("cuDeviceGetCount", g_driver.get_count) && get("cuDeviceGet", g_driver.get) &&
      get("cuDevicePrimaryCtxGetState", g_driver.get_state) &&
      get("cuDevicePrimaryCtxRetain", g_driver.retain) &&
      get("cuDevicePrimaryCtxRelease_v2", g_driver.release) &&
      get("cuCtxPushCurrent_v2", g_driver.push) && get("cuCtxPopCurrent_v2", g_driver.pop) &&
      get("cuCtxSynchronize", g_driver.sync);
  get("cuThreadExchangeStreamCaptureMode", g_driver.exchange_mode);
  // (The handle stays open: the driver stays loaded as long as the program uses CUDA.)
}

/// Waits for the GPU work of every active primary context (what the CUDA runtime uses), so
/// kernels still running complete and their records carry times.
void synchronize_devices() noexcept {
  if (!g_driver_found) {
    return;
  }
  driver_table const& d = g_driver;
  // Our thread's calls never break the program's stream capture: in the relaxed mode a call
  // that capture forbids is not refused, and no capture under way is invalidated by it.
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  bool const relaxed = d.exchange_mode != nullptr && d.exchange_mode(&mode) == CUDA_SUCCESS;
  int count = 0;
  if (d.get_count(&count) == CUDA_SUCCESS) {
    for (int i = 0; i < count; ++i) {
      CUdevice dev{};
      unsigned flags = 0;
      int is_active = 0;
      CUcontext ctx = nullptr;
      if (d.get(&dev, i) != CUDA_SUCCESS || d.get_state(dev, &flags, &is_active) != CUDA_SUCCESS ||
          is_active == 0 || d.retain(&ctx, dev) != CUDA_SUCCESS) {
        continue;
      }
      if (d.push(ctx) == CUDA_SUCCESS) {
        d.sync();
        CUcontext popped = nullptr;
        d.pop(&popped);
      }
      d.release(dev);
    }
  }
  if (relaxed) {
    d.exchange_mode(&mode);
  }
}

/// Flushes everything CUPTI holds and writes the process's last GPU info records, once.
void final_flush() noexcept {
  int expected = active;
  if (!g_state.compare_exchange_strong(expected, closing, std::memory_order_acq_rel)) {
    return;
  }
  bool attached = false;
  {
    // No switch after this one (the sampler's thread may still run); a sampled period running
    // ends here, where the program's work stops being recorded.
    std::lock_guard<std::mutex> lock{g_window_mutex};
    if (g_sampling && g_kinds_ready && g_kinds_on) {
      char text[64];
      int const n = std::snprintf(text, sizeof text, "gpu_detail=off:%lld:0",
                                  static_cast<long long>(monotonic_ns()));
      write_info(std::string_view{text, static_cast<std::size_t>(n)});
    }
    g_kinds_ready = false;
    g_armed.store(false, std::memory_order_release);
    attached = g_activity.load(std::memory_order_acquire);
    g_session.close();
    if (g_detaches != 0) {
      char text[128];
      int const n = std::snprintf(text, sizeof text, "cupti_detach=%llu:%llu:%lld",
                                  static_cast<unsigned long long>(g_detaches),
                                  static_cast<unsigned long long>(g_attaches),
                                  static_cast<long long>(g_finalize_ns));
      write_info(std::string_view{text, static_cast<std::size_t>(n)});
    }
  }
  // Detached: CUPTI holds nothing, and is not attached again only to be flushed.
  if (attached) {
    // Our own synchronisation is not the program's: stop recording API calls first.
    g_api.disable(CUPTI_ACTIVITY_KIND_RUNTIME);
    g_api.disable(CUPTI_ACTIVITY_KIND_DRIVER);
    enable_launch_cbids(false);
    synchronize_devices();
    g_api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    collect_dropped();
  }
  if (std::uint64_t const n = g_dropped.load(std::memory_order_relaxed); n != 0) {
    write_count_info("dropped", n);  // one record: the process's total
  }
  {
    std::lock_guard<std::mutex> lock{g_mutex};
    if (g_converter->gpu_work() == 0) {
      write_info("gpu_work=none");
    }
    if (std::uint64_t const n = g_converter->in_flight(); n != 0) {
      write_count_info("in_flight", n);
    }
  }
  g_state.store(closed, std::memory_order_release);
}

/// A dump of the flight recorder's window is due while the program runs: the records of GPU
/// work that has completed go to the ring now, not when CUPTI's buffer fills. Forced: flag 0
/// hands out only buffers whose records are all complete, and a GPU that is never idle (a
/// training loop) always has one running in the current buffer, so a dump would hold none of
/// its work (seen on the H100: 0 kernels in three of four ranks' live dumps). The work still
/// running comes without its end and is skipped (converter::in_flight, counted in the info
/// record `in_flight`); recording goes on.
void live_flush() noexcept {
  if (g_state.load(std::memory_order_acquire) == active &&
      g_activity.load(std::memory_order_acquire)) {
    g_api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
}

/// Wakes the flusher thread for a request just made.
void wake_flusher() noexcept {
  g_flusher_wake.fetch_add(1, std::memory_order_acq_rel);
  futex(&g_flusher_wake, FUTEX_WAKE_PRIVATE, 1, nullptr);
}

void* flusher_main(void*) noexcept {
  sigset_t all;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);  // signals go to the program's threads
  for (;;) {
    std::uint32_t const seen = g_flusher_wake.load(std::memory_order_acquire);
    if (std::uint32_t const request = g_flush_request.load(std::memory_order_acquire);
        request != g_flush_done.load(std::memory_order_acquire)) {
      final_flush();
      g_flush_done.store(request, std::memory_order_release);
      futex(&g_flush_done, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr);
      continue;
    }
    if (std::uint32_t const live = g_live_request.load(std::memory_order_acquire);
        live != g_live_done.load(std::memory_order_acquire)) {
      live_flush();
      g_live_done.store(live, std::memory_order_release);
      futex(&g_live_done, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr);
      continue;
    }
    if (std::uint64_t const drain = g_drain_request.load(std::memory_order_acquire);
        drain != g_drain_done.load(std::memory_order_acquire)) {
      drain_then_arm(drain);
      g_drain_done.store(drain, std::memory_order_release);
      continue;
    }
    if (std::uint32_t const light = g_light_request.load(std::memory_order_acquire);
        light != g_light_done.load(std::memory_order_acquire)) {
      subscribe_light();
      g_light_done.store(light, std::memory_order_release);
      continue;
    }
    futex(&g_flusher_wake, FUTEX_WAIT_PRIVATE, seen, nullptr);
  }
  return nullptr;
}

/// Bumps `request` for the flusher thread and waits up to `wait_ns` for `done` to reach it.
/// Async-signal-safe. False when it did not finish in time (or there is no flusher thread).
bool ask_flusher(std::atomic<std::uint32_t>& request, std::atomic<std::uint32_t>& done,
                 std::int64_t wait_ns) noexcept {
  if (!g_flusher_running.load(std::memory_order_acquire)) {
    return false;
  }
  std::uint32_t const want = request.fetch_add(1, std::memory_order_acq_rel) + 1;
  g_flusher_wake.fetch_add(1, std::memory_order_acq_rel);
  futex(&g_flusher_wake, FUTEX_WAKE_PRIVATE, 1, nullptr);
  std::int64_t const deadline = monotonic_ns() + wait_ns;
  for (;;) {
    std::uint32_t const now_done = done.load(std::memory_order_acquire);
    if (static_cast<std::int32_t>(now_done - want) >= 0) {
      return true;
    }
    std::int64_t const left = deadline - monotonic_ns();
    if (left <= 0) {
      return false;
    }
    timespec const t{static_cast<time_t>(left / 1'000'000'000),
                     static_cast<long>(left % 1'000'000'000)};
    futex(&done, FUTEX_WAIT_PRIVATE, now_done, &t);
  }
}

/// Asks the flusher thread for the final flush and waits up to `wait_ns` for it.
bool request_flush(std::int64_t wait_ns) noexcept {
  return ask_flusher(g_flush_request, g_flush_done, wait_ns);
}

void at_exit() { flush_at_exit(); }

/// The final flush did not finish in time: says so, with the records dropped until then.
/// Async-signal-safe.
void write_timeout() noexcept {
  write_info("cupti_flush=timeout");
  if (std::uint64_t const n = g_dropped.load(std::memory_order_relaxed); n != 0) {
    write_count_info("dropped", n);
  }
}

// Loading --------------------------------------------------------------------------------------

/// dlopen's CUPTI; on failure returns nullptr and sets `why`.
void* open_cupti(std::string& why) {
  if (char const* path = std::getenv("NVTXPP_CUPTI_PATH"); path != nullptr && *path != '\0') {
    void* h = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      char const* e = ::dlerror();
      why = e != nullptr ? e : path;
    }
    return h;  // an explicit path is the only one tried
  }
  std::vector<std::string> candidates = {"libcupti.so.13", "libcupti.so"};
  for (char const* root : {static_cast<char const*>(std::getenv("CUDA_HOME")), "/usr/local/cuda"}) {
    if (root == nullptr || *root == '\0') {
      continue;
    }
    for (char const* dir : {"/lib64/", "/extras/CUPTI/lib64/"}) {
      for (char const* file : {"libcupti.so.13", "libcupti.so"}) {
        candidates.push_back(std::string{root} + dir + file);
      }
    }
  }
  for (std::string const& c : candidates) {
    if (void* h = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      return h;
    }
  }
  why = "libcupti.so.13 not found (set NVTXPP_CUPTI_PATH or CUDA_HOME)";
  return nullptr;
}

/// Loads CUPTI and enables recording; on failure returns the reason.
std::string start_cupti() {
  std::string why;
  void* lib = open_cupti(why);
  if (lib == nullptr) {
    return why;
  }
  if (!resolve(lib, "cuptiGetVersion", g_api.get_version, why) ||
      !resolve(lib, "cuptiGetResultString", g_api.result_string, why) ||
      !resolve(lib, "cuptiActivityRegisterCallbacks", g_api.register_callbacks, why) ||
      !resolve(lib, "cuptiActivityRegisterTimestampCallback", g_api.register_timestamp, why) ||
      !resolve(lib, "cuptiSetThreadIdType", g_api.set_thread_id_type, why) ||
      !resolve(lib, "cuptiActivityEnable", g_api.enable, why) ||
      !resolve(lib, "cuptiActivityDisable", g_api.disable, why) ||
      !resolve(lib, "cuptiActivityGetNextRecord", g_api.next_record, why) ||
      !resolve(lib, "cuptiActivityGetNumDroppedRecords", g_api.dropped, why) ||
      !resolve(lib, "cuptiActivityFlushAll", g_api.flush_all, why) ||
      !resolve(lib, "cuptiGetCallbackName", g_api.callback_name, why)) {
    ::dlclose(lib);
    return why;
  }
  std::uint32_t version = 0;
  if (g_api.get_version(&version) != CUPTI_SUCCESS || version < 130000 || version >= 140000) {
    ::dlclose(lib);
    return "CUPTI API version " + std::to_string(version) +
           ", this build reads the record layouts of CUPTI 13 (CUDA 13)";
  }
  find_driver();
  g_converter = new converter{&api_name};
  g_batch = new std::vector<unsigned char>;
  g_batch->reserve(std::size_t{320} << 10);
  for (int i = 0; i < 2; ++i) {  // two ready buffers; more are allocated when CUPTI needs them
    if (void* b = std::aligned_alloc(8, buffer_bytes)) {
      g_allocated.fetch_add(1, std::memory_order_relaxed);
      release_buffer(static_cast<unsigned char*>(b));
    }
  }
  auto step = [&](char const* what, CUptiResult r) {
    if (r != CUPTI_SUCCESS && why.empty()) {
      why = std::string{what} + ": " + result_text(r);
    }
    return r == CUPTI_SUCCESS;
  };
  g_pid.store(::getpid(), std::memory_order_release);
  if (!step("cuptiActivityRegisterTimestampCallback", g_api.register_timestamp(&timestamp)) ||
      !step("cuptiSetThreadIdType",
            g_api.set_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) ||
      !step("cuptiActivityRegisterCallbacks",
            g_api.register_callbacks(&buffer_requested, &buffer_completed))) {
    return why;
  }
  if (g_api.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
    g_kernel_kind = CUPTI_ACTIVITY_KIND_KERNEL;
    if (!step("cuptiActivityEnable(KERNEL)", g_api.enable(CUPTI_ACTIVITY_KIND_KERNEL))) {
      return why;
    }
  }
  for (auto [kind, what] : {std::pair{CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
                            std::pair{CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
                            std::pair{CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
                            std::pair{CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"},
                            std::pair{CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"}}) {
    // Driver calls only when asked (--cuda-api=all): the runtime makes several per call of its
    // own, and recording them all costs each kernel launch more than Nsight Systems adds.
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER && !driver_api_wanted()) {
      continue;
    }
    if (!step((std::string{"cuptiActivityEnable("} + what + ")").c_str(), g_api.enable(kind))) {
      for (auto k : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_KERNEL,
                     CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                     CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_RUNTIME}) {
        g_api.disable(k);
      }
      return why;
    }
  }
  g_api.enable(CUPTI_ACTIVITY_KIND_DEVICE);  // device names: nice to have
  g_activity.store(true, std::memory_order_release);
  write_info(start_driver_launches(lib));
  if (g_launch_cbid_count != 0) {
    g_launches = launches::one_by_one;
  }
  // Optional: the detach at a period's end; the domains its exit callback needs.
  std::string optional;
  resolve(lib, "cuptiFinalize", g_api.finalize, optional);
  resolve(lib, "cuptiEnableDomain", g_api.enable_domain, optional);
  if (std::string const um = start_unified_memory(lib); !um.empty()) {
    write_info(um);
  }
  start_stream_names(lib);
  gpu_sampler::plan const sample = gpu_sampler::read_plan();
  if (sample.on_ns != 0) {
    write_info("gpu_sample=" + std::to_string(sample.on_ns) + "/" +
               std::to_string(sample.period_ns));
  }
  {
    std::lock_guard<std::mutex> lock{g_window_mutex};
    g_kinds_ready = true;
    g_session.loaded(false);  // detaching waits for the flusher thread (initialize)
    hold_for_profiler_calls();
    g_sampling = sample.on_ns != 0;
    g_window_on = gate::window_open();  // outside the capture window: nothing until it opens
    g_sample_on = !g_sampling;          // the sampler says when its first period runs
    apply_gpu_state();
    if (gate::windowed()) {
      write_window_edge(g_window_on, monotonic_ns());  // the window's state from CUPTI's start
    }
  }
  gpu_sampler::start();
  return {};
}

void start_flusher() noexcept {
  int const error = start_thread(&flusher_main, "nvtxpp-cupti", 256 * 1024);
  if (error == 0) {
    g_flusher_running.store(true, std::memory_order_release);
  } else {
    say_thread_failed("the CUPTI flusher thread could not start", error,
                      "GPU records reach a live dump only once CUPTI's buffer fills, and the "
                      "program's end waits for the GPU with no time limit");
  }
}

int initialize() noexcept {
  if (g_initialized.exchange(true) || !ensure_capture_started()) {
    return 1;
  }
  char const* mode = std::getenv("NVTXPP_CUDA");
  if (mode != nullptr && std::strcmp(mode, "off") == 0) {
    write_info("cupti=off");
    return 1;
  }
  std::string why;
  try {
    why = start_cupti();
  } catch (std::exception const& e) {
    why = e.what();
  }
  if (!why.empty()) {
    for (char& c : why) {
      c = c == '\n' ? ' ' : c;
    }
    write_info("cupti=unavailable:" + why);
    if (mode != nullptr && std::strcmp(mode, "on") == 0) {
      std::fprintf(stderr, "nvtxpp-capture: --cuda=on but CUPTI is unavailable: %s\n", why.c_str());
    }
    return 1;  // the program goes on; its trace is NVTX only
  }
  write_info("cupti=loaded");
  g_state.store(active, std::memory_order_release);
  start_flusher();
  allow_detach();
  std::atexit(&at_exit);
  return 1;
}

}  // namespace detail

using namespace detail;

void flush_at_exit() noexcept {
  if (g_state.load(std::memory_order_acquire) != active || !same_process()) {
    return;
  }
  // Through the flusher when there is one, so a GPU that never finishes cannot hang the exit.
  if (!request_flush(exit_wait_ns) && !g_flusher_running.load(std::memory_order_acquire)) {
    final_flush();
  }
  if (g_state.load(std::memory_order_acquire) != closed) {
    write_timeout();
  }
}

void flush_from_signal(int sig) noexcept {
  if ((sig != SIGTERM && sig != SIGINT && sig != SIGHUP && sig != SIGQUIT) ||
      g_state.load(std::memory_order_acquire) != active || !same_process()) {
    return;
  }
  if (!request_flush(signal_wait_ns)) {
    write_timeout();  // GPU records still in CUPTI's buffers are lost
  }
}

bool flush_live(std::int64_t wait_ns) noexcept {
  if (g_state.load(std::memory_order_acquire) != active || !same_process()) {
    return true;  // nothing held (no CUPTI, or the final flush ran)
  }
  return ask_flusher(g_live_request, g_live_done, wait_ns);
}

void after_fork_in_child() noexcept {
  api_calls::after_fork_in_child();
  g_armed.store(false, std::memory_order_relaxed);  // (no lock: this thread is the only one)
  g_session.close();
  g_drain_request.store(0, std::memory_order_relaxed);
  g_drain_done.store(0, std::memory_order_relaxed);
  g_light_request.store(0, std::memory_order_relaxed);
  g_light_done.store(0, std::memory_order_relaxed);
  if (g_state.exchange(closed, std::memory_order_acq_rel) != idle) {
    write_info("cupti=unavailable:forked child");
  }
  g_flusher_running.store(false, std::memory_order_relaxed);
  g_flusher_wake.store(0, std::memory_order_relaxed);
  g_flush_request.store(0, std::memory_order_relaxed);
  g_flush_done.store(0, std::memory_order_relaxed);
  g_live_request.store(0, std::memory_order_relaxed);
  g_live_done.store(0, std::memory_order_relaxed);
}

}  // namespace nvtxpp::capture::cupti

extern "C" {

/// @brief CUDA driver entry point (CUDA_INJECTION64_PATH): called once in cuInit.
__attribute__((visibility("default"))) int InitializeInjection() {
  return nvtxpp::capture::cupti::initialize();
}
}
