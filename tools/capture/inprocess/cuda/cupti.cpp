// The run-time half of nvtxpp-capture's CUPTI source (see cupti.hpp).
//
// Start: the launcher sets CUDA_INJECTION64_PATH to this library (the same absolute path as
// NVTX_INJECTION64_PATH, so the process has one copy); the CUDA driver calls InitializeInjection
// in cuInit. Only then is CUPTI loaded (dlopen: no link-time dependency on CUPTI or CUDA, so
// programs without CUDA and machines without CUPTI never touch it) and activity recording
// enabled, so it sees all CUDA work from the start. CUPTI's headers give types only.
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
// a non-forced flush, recording going on. Both kinds bump one wake word the thread sleeps on.
//
// With the flight recorder, the subscriber also gets every runtime and driver API call
// (api_calls.cpp: the call each thread is inside, for stacks reports); on_resource then ignores
// the driver callbacks it was not asked for.
//
// fork(): the child inherits CUPTI's state but CUDA cannot be used in it (CUDA does not support
// fork after cuInit), and the flusher thread does not exist there. The child stops using CUPTI
// (its buffer callbacks, flushes and at-exit handler do nothing), and its own capture file says
// `info cupti=unavailable:forked child` when the parent had CUPTI loaded.
#include "cupti.hpp"
#include "../capture_gate.hpp"
#include "../inject_internal.hpp"
#include "../our_threads.hpp"
#include "api_calls.hpp"
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
#include <vector>

namespace nvtxpp::capture::cupti {

namespace {

namespace rec = nvtxpp::recording;

/// The functions of CUPTI this uses, resolved with dlsym.
struct api_table {
  decltype(&::cuptiGetVersion) get_version;
  decltype(&::cuptiGetResultString) result_string;
  decltype(&::cuptiActivityRegisterCallbacks) register_callbacks;
  decltype(&::cuptiActivityRegisterTimestampCallback) register_timestamp;
  decltype(&::cuptiSetThreadIdType) set_thread_id_type;
  decltype(&::cuptiActivityEnable) enable;
  decltype(&::cuptiActivityDisable) disable;
  decltype(&::cuptiActivityGetNextRecord) next_record;
  decltype(&::cuptiActivityGetNumDroppedRecords) dropped;
  decltype(&::cuptiActivityFlushAll) flush_all;
  decltype(&::cuptiGetCallbackName) callback_name;
  // Optional: stream names (a CUPTI without them records everything else).
  decltype(&::cuptiSubscribe) subscribe;
  decltype(&::cuptiEnableCallback) enable_callback;
  decltype(&::cuptiEnableDomain) enable_domain;  ///< optional: the call each thread is in
  decltype(&::cuptiGetStreamIdEx) stream_id;
  // Optional: activity records for chosen driver functions (CUPTI 12.6 and later).
  decltype(&::cuptiActivityEnableDriverApi) enable_driver_api;
  // Optional: unified memory migrations.
  decltype(&::cuptiActivityConfigureUnifiedMemoryCounter) configure_um;
  // Optional: the detach at the end of a period (without it, periods end with the kinds off).
  decltype(&::cuptiFinalize) finalize;
};
api_table g_api{};

enum state : int { idle = 0, active = 1, closing = 2, closed = 3 };
std::atomic<int> g_state{idle};
std::atomic<pid_t> g_pid{0};  ///< the process that loaded CUPTI
std::atomic<bool> g_initialized{false};

constexpr std::size_t buffer_bytes = std::size_t{4} << 20;
constexpr int max_buffers = 16;  ///< 64 MiB at most; beyond, CUPTI drops (and counts) records
std::atomic<unsigned char*> g_free[max_buffers];
std::atomic<unsigned char*> g_lent[max_buffers];  ///< buffers CUPTI holds now (reclaimed at a detach)
std::atomic<int> g_allocated{0};

std::mutex g_mutex;                ///< serialises buffer completion (CUPTI's thread, the flusher)
converter* g_converter = nullptr;  ///< never freed: used until the very end of the process
std::vector<unsigned char>* g_batch = nullptr;

constexpr std::int64_t signal_wait_ns = 5'000'000'000;  ///< how long a signal waits for the flush
constexpr std::int64_t exit_wait_ns = 30'000'000'000;   ///< how long exit waits for the GPU

std::atomic<std::uint32_t> g_flusher_wake{0};   ///< futex word: bumped with every request
std::atomic<std::uint32_t> g_flush_request{0};  ///< bumped to request the final flush
std::atomic<std::uint32_t> g_flush_done{0};     ///< futex word: the last final request served
std::atomic<std::uint32_t> g_live_request{0};   ///< bumped to request a live flush (a dump)
std::atomic<std::uint32_t> g_live_done{0};      ///< futex word: the last live request served
std::atomic<std::uint64_t> g_drain_request{0};  ///< a period ended: drain number N, then arm
std::atomic<std::uint64_t> g_drain_done{0};
std::atomic<std::uint32_t> g_light_request{0};  ///< detached: subscribe the light subscriber
std::atomic<std::uint32_t> g_light_done{0};
std::atomic<bool> g_flusher_running{false};
std::atomic<std::uint64_t> g_dropped{0};  ///< records lost so far (CUPTI's count, and ours)

// The capture window (set_gpu_window) and --cuda-sample's periods (set_gpu_sample): the activity
// kinds start_cupti enabled are enabled only while the window is open and a period (or a raise)
// runs. Under g_window_mutex.
std::mutex g_window_mutex;
bool g_kinds_ready = false;  ///< start_cupti enabled its kinds
bool g_kinds_on = true;
session_state g_session;  ///< attached, recording, draining, detached... (cupti_session.hpp)
/// Mirrors g_session's `armed` for the API callbacks, which read it on every CUDA call's exit
/// without the lock.
std::atomic<bool> g_armed{false};
/// CUPTI's activity API is attached (buffers registered): a live dump may flush it.
std::atomic<bool> g_activity{false};
std::uint64_t g_detaches = 0;  ///< periods ended with a detach (written at the end)
std::uint64_t g_attaches = 0;  ///< ... and attached again
std::int64_t g_finalize_ns = 0;  ///< the longest cuptiFinalize (a CUDA call's exit waits for it)
bool g_said_attach = false;      ///< a failed attach was said (once)
bool g_window_on = true;       ///< the capture window is open
bool g_sample_on = true;       ///< a sampled period or a raise runs (always, without --cuda-sample)
bool g_raised = false;         ///< ... a raise
bool g_sampling = false;       ///< --cuda-sample: each switch is written as a `gpu_detail` record
bool g_marked_raised = false;  ///< the cause the last `on` record gave
bool g_um_on = false;          ///< unified memory migrations are recorded (start_unified_memory)
CUpti_ActivityKind g_kernel_kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;

// ---------------------------------------------------------------------------------------------

std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// `NVTXPP_CUDA_API=all` (the launcher's --cuda-api=all): record driver API calls too.
bool driver_api_wanted() noexcept {
  char const* api = std::getenv("NVTXPP_CUDA_API");
  return api != nullptr && std::strcmp(api, "all") == 0;
}

/// Driver functions that put work on the GPU (kernels, copies, memsets, graph launches): their
/// activity records are enabled one by one by default, so GPU work launched through the driver
/// API (Numba, cuBLASLt's kernels, modules loaded by hand) has the call that launched it, on its
/// thread, and projects onto that thread's NVTX ranges. Their callback ids (at most
/// `max_launch_cbids`), chosen by name at start; empty when not recorded.
constexpr std::size_t max_launch_cbids = 256;
CUpti_CallbackId g_launch_cbids[max_launch_cbids];
std::size_t g_launch_cbid_count = 0;

/// Whether a driver function's name (CUPTI's, e.g. "cuMemcpyHtoDAsync_v2") launches GPU work.
bool launches_gpu_work(std::string_view name) noexcept {
  auto starts = [&](std::string_view p) { return name.substr(0, p.size()) == p; };
  if (starts("cuLaunchHostFunc")) {
    return false;  // runs on the CPU: no GPU record to tie
  }
  return starts("cuLaunch") || starts("cuMemcpy") || starts("cuMemset") || starts("cuGraphLaunch");
}

/// `NVTXPP_DRIVER_LAUNCHES=off`: no driver launch records (to measure what they cost; see
/// docs/capture-gpu.md, "Which range GPU work belongs to").
bool driver_launches_wanted() noexcept {
  char const* v = std::getenv("NVTXPP_DRIVER_LAUNCHES");
  return v == nullptr || std::strcmp(v, "off") != 0;
}

void enable_launch_cbids(bool on) noexcept {
  for (std::size_t i = 0; i < g_launch_cbid_count; ++i) {
    g_api.enable_driver_api(g_launch_cbids[i], on ? 1 : 0);
  }
}

/// How the driver launch functions' records are on: one by one (as enabled at cuInit), or as the
/// DRIVER kind less every other function. CUPTI 13.0 records a function enabled one by one only
/// when that happens before CUDA starts (bench/gpu/launch_map.cu on an H100: none of 10,750
/// cuLaunchKernel calls recorded when enabled later, nor after a detach and attach), and never
/// again once it was switched off; the DRIVER kind with the others switched off records them at
/// any time, at the same cost.
enum class launches : std::uint8_t { off, one_by_one, as_kind };
launches g_launches = launches::off;

bool is_launch_cbid(CUpti_CallbackId cbid) noexcept {
  for (std::size_t i = 0; i < g_launch_cbid_count; ++i) {
    if (g_launch_cbids[i] == cbid) {
      return true;
    }
  }
  return false;
}

/// Switches the launch functions' records (only in the detaching mode: otherwise they stay as
/// cuInit enabled them, and the readers' edge rule keeps what belongs to a period).
void switch_launches(bool on) noexcept {
  if (g_launch_cbid_count == 0 || driver_api_wanted()) {
    return;  // none, or every driver function recorded with the DRIVER kind (set_kinds)
  }
  if (!on) {
    if (g_launches == launches::one_by_one) {
      enable_launch_cbids(false);
    } else if (g_launches == launches::as_kind) {
      g_api.disable(CUPTI_ACTIVITY_KIND_DRIVER);
    }
    g_launches = launches::off;
    return;
  }
  if (g_launches != launches::off) {
    return;
  }
  // The kind first: enabling it resets the functions switched one by one.
  if (g_api.enable(CUPTI_ACTIVITY_KIND_DRIVER) != CUPTI_SUCCESS) {
    return;
  }
  for (CUpti_CallbackId cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    if (!is_launch_cbid(cbid)) {
      g_api.enable_driver_api(cbid, 0);
    }
  }
  g_launches = launches::as_kind;
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

// Buffers ---------------------------------------------------------------------------------------

/// Notes `b` as held by CUPTI (nullptr: none), or as returned (`lend` false).
void note_lent(unsigned char* b, bool lend) noexcept {
  for (auto& slot : g_lent) {
    unsigned char* expected = lend ? nullptr : b;
    if (slot.compare_exchange_strong(expected, lend ? b : nullptr, std::memory_order_acq_rel)) {
      return;
    }
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;  // as many as fit
  for (auto& slot : g_free) {
    if (unsigned char* b = slot.exchange(nullptr, std::memory_order_acq_rel)) {
      note_lent(b, true);
      *buffer = b;
      *size = buffer_bytes;
      return;
    }
  }
  if (g_allocated.fetch_add(1, std::memory_order_relaxed) < max_buffers) {
    if (void* b = std::aligned_alloc(8, buffer_bytes)) {
      note_lent(static_cast<unsigned char*>(b), true);
      *buffer = static_cast<uint8_t*>(b);
      *size = buffer_bytes;
      return;
    }
  }
  g_allocated.fetch_sub(1, std::memory_order_relaxed);
  // Every buffer is waiting to be written: CUPTI drops records and counts them.
  *buffer = nullptr;
  *size = 0;
}

void release_buffer(unsigned char* b) noexcept {
  for (auto& slot : g_free) {
    unsigned char* empty = nullptr;
    if (slot.compare_exchange_strong(empty, b, std::memory_order_acq_rel)) {
      return;
    }
  }
  std::free(b);  // cannot happen (max_buffers slots), but never leak
  g_allocated.fetch_sub(1, std::memory_order_relaxed);
}

void append_record(std::vector<unsigned char>& batch, std::uint32_t kind, void const* body,
                   std::size_t size, void const* tail = nullptr, std::size_t tail_size = 0) {
  std::uint32_t const head[2] = {kind, static_cast<std::uint32_t>(size + tail_size)};
  auto const* h = reinterpret_cast<unsigned char const*>(head);
  batch.insert(batch.end(), h, h + sizeof head);
  batch.insert(batch.end(), static_cast<unsigned char const*>(body),
               static_cast<unsigned char const*>(body) + size);
  if (tail_size != 0) {
    batch.insert(batch.end(), static_cast<unsigned char const*>(tail),
                 static_cast<unsigned char const*>(tail) + tail_size);
  }
}

/// Writes the batch as it is: whole records, in one write each time (O_APPEND).
void write_batch(std::vector<unsigned char>& batch) noexcept {
  if (!batch.empty()) {
    write_file_bytes(batch.data(), batch.size());
    batch.clear();
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  if (!same_process()) {
    return;  // a forked child: the parent's buffers are not ours to write (or free)
  }
  {
    std::lock_guard<std::mutex> lock{g_mutex};
    std::vector<unsigned char>& batch = *g_batch;
    converter& conv = *g_converter;
    gpu_out out;
    CUpti_Activity* record = nullptr;
    std::uint64_t lost = 0;
    while (g_api.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
      try {
        if (!conv.convert(record, out)) {
          continue;
        }
        for (std::uint32_t id : conv.new_strings()) {
          std::string const& text = conv.text_of(id);
          append_record(batch, static_cast<std::uint32_t>(rec::gpu_record::string), &id, sizeof id,
                        text.data(), text.size());
        }
        conv.clear_new_strings();
        if (out.kind == rec::gpu_record::info) {
          append_record(batch, static_cast<std::uint32_t>(out.kind), out.text.data(),
                        out.text.size());
        } else if (out.graph_node != 0) {  // graph work: the node it ran as
          rec::gpu_graph_tail const tail{out.graph_node, out.graph, 0};
          append_record(batch, static_cast<std::uint32_t>(out.kind), out.body, out.size, &tail,
                        sizeof tail);
        } else {
          append_record(batch, static_cast<std::uint32_t>(out.kind), out.body, out.size);
        }
      } catch (std::bad_alloc const&) {
        ++lost;  // out of memory: this record is lost, and counted
        conv.clear_new_strings();
      }
      if (batch.size() >= (std::size_t{256} << 10)) {
        write_batch(batch);
      }
    }
    write_batch(batch);
    g_dropped.fetch_add(lost, std::memory_order_relaxed);
    collect_dropped();  // written once, at the end (final_flush)
  }
  note_lent(buffer, false);
  release_buffer(buffer);
}

/// After a detach: CUPTI has let go of every buffer; one it still held (an empty one it had
/// asked for) goes back to the pool rather than being lost to it.
void reclaim_lent_buffers() noexcept {
  for (auto& slot : g_lent) {
    if (unsigned char* b = slot.exchange(nullptr, std::memory_order_acq_rel)) {
      release_buffer(b);
    }
  }
}

// The final flush ------------------------------------------------------------------------------

/// Waits for the GPU work of every active primary context (what the CUDA runtime uses), so
/// kernels still running complete and their records carry times. The driver is already loaded
/// (RTLD_NOLOAD): we never load CUDA ourselves.
void synchronize_devices() noexcept {
  void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cuda == nullptr) {
    return;
  }
  using get_count_fn = CUresult (*)(int*);
  using get_fn = CUresult (*)(CUdevice*, int);
  using state_fn = CUresult (*)(CUdevice, unsigned*, int*);
  using retain_fn = CUresult (*)(CUcontext*, CUdevice);
  using release_fn = CUresult (*)(CUdevice);
  using push_fn = CUresult (*)(CUcontext);
  using pop_fn = CUresult (*)(CUcontext*);
  using sync_fn = CUresult (*)();
  auto get_count = reinterpret_cast<get_count_fn>(::dlsym(cuda, "cuDeviceGetCount"));
  auto get = reinterpret_cast<get_fn>(::dlsym(cuda, "cuDeviceGet"));
  auto get_state = reinterpret_cast<state_fn>(::dlsym(cuda, "cuDevicePrimaryCtxGetState"));
  auto retain = reinterpret_cast<retain_fn>(::dlsym(cuda, "cuDevicePrimaryCtxRetain"));
  auto release = reinterpret_cast<release_fn>(::dlsym(cuda, "cuDevicePrimaryCtxRelease_v2"));
  auto push = reinterpret_cast<push_fn>(::dlsym(cuda, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<pop_fn>(::dlsym(cuda, "cuCtxPopCurrent_v2"));
  auto sync = reinterpret_cast<sync_fn>(::dlsym(cuda, "cuCtxSynchronize"));
  // Our thread's calls never break the program's stream capture: in the relaxed mode a call
  // that capture forbids is not refused, and no capture under way is invalidated by it.
  using mode_fn = CUresult (*)(CUstreamCaptureMode*);
  auto exchange_mode =
      reinterpret_cast<mode_fn>(::dlsym(cuda, "cuThreadExchangeStreamCaptureMode"));
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  bool const relaxed = exchange_mode != nullptr && exchange_mode(&mode) == CUDA_SUCCESS;
  int count = 0;
  if (get_count != nullptr && get != nullptr && get_state != nullptr && retain != nullptr &&
      release != nullptr && push != nullptr && pop != nullptr && sync != nullptr &&
      get_count(&count) == CUDA_SUCCESS) {
    for (int i = 0; i < count; ++i) {
      CUdevice dev{};
      unsigned flags = 0;
      int is_active = 0;
      CUcontext ctx = nullptr;
      if (get(&dev, i) != CUDA_SUCCESS || get_state(dev, &flags, &is_active) != CUDA_SUCCESS ||
          is_active == 0 || retain(&ctx, dev) != CUDA_SUCCESS) {
        continue;
      }
      if (push(ctx) == CUDA_SUCCESS) {
        sync();
        CUcontext popped = nullptr;
        pop(&popped);
      }
      release(dev);
    }
  }
  if (relaxed) {
    exchange_mode(&mode);
  }
  ::dlclose(cuda);
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

void drain_then_arm(std::uint64_t generation) noexcept;
void subscribe_light() noexcept;

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

template <class F>
bool resolve(void* lib, char const* name, F& f, std::string& why) {
  f = reinterpret_cast<F>(::dlsym(lib, name));
  if (f == nullptr) {
    why = std::string{"no "} + name + " in CUPTI";
    return false;
  }
  return true;
}

std::atomic<bool> g_api_calls{false};  ///< API callbacks go to api_calls (flight recorder)
bool g_profiler_calls = false;         ///< cuProfilerStart/Stop open and close the window
bool g_graph_calls = false;            ///< graph_nodes follows the driver calls it enabled
bool g_stream_names = false;           ///< stream creation named (cuptiGetStreamIdEx resolved)
/// The one subscriber (CUPTI's callbacks: streams, graph nodes, the window's profiler calls, the
/// calls threads are in, the detach); subscribed again after each detach. Under g_window_mutex.
CUpti_SubscriberHandle g_subscriber = nullptr;

/// CUPTI refused the migrations' activity kind while the driver initialises (CUPTI_ERROR_NOT_READY,
/// seen on the H100 with CUDA 13.0: injection runs inside cuInit): enabled again when the first
/// context is created (on_resource), with the info record written then; the note for it.
std::atomic<bool> g_um_deferred{false};
std::string g_um_note;
void enable_deferred_unified_memory() noexcept;

/// The API functions that wait (synchronisation, blocking copies, allocation and freeing): while
/// CUPTI is detached, the flight recorder's call table follows these alone, so a hang report
/// still names the call a thread is stuck in, at no cost to the launches between them (the whole
/// API domains cost a launch-bound step 1.21-1.35x on the H100: docs/performance.md).
constexpr std::size_t max_wait_cbids = 128;
struct api_function {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
};
api_function g_wait_cbids[max_wait_cbids];
std::size_t g_wait_cbid_count = 0;

/// Whether an API function's name (CUPTI's, e.g. "cudaStreamSynchronize_v3020") waits.
bool waits(std::string_view name) noexcept {
  auto starts = [&](std::string_view p) { return name.substr(0, p.size()) == p; };
  bool const async = name.find("Async") != std::string_view::npos;
  return name.find("Synchronize") != std::string_view::npos ||
         (!async && (starts("cudaMemcpy") || starts("cuMemcpy") || starts("cudaMalloc") ||
                     starts("cuMemAlloc") || starts("cudaFree") || starts("cuMemFree")));
}

void find_wait_cbids() noexcept {
  for (auto [domain, size] :
       {std::pair{CUPTI_CB_DOMAIN_RUNTIME_API, std::uint32_t{CUPTI_RUNTIME_TRACE_CBID_SIZE}},
        std::pair{CUPTI_CB_DOMAIN_DRIVER_API, std::uint32_t{CUPTI_DRIVER_TRACE_CBID_SIZE}}}) {
    for (CUpti_CallbackId cbid = 1; cbid < size && g_wait_cbid_count < max_wait_cbids; ++cbid) {
      char const* name = api_name(static_cast<std::uint32_t>(domain), cbid);
      if (name != nullptr && waits(name)) {
        g_wait_cbids[g_wait_cbid_count++] = {domain, cbid};
      }
    }
  }
}

/// Enables the callbacks the subscriber carries. `attached`: CUPTI's activity API is attached
/// (the flight recorder's call table follows every API call, as the whole domains), else
/// detached (the calls that wait alone). Caller holds g_window_mutex (or is starting CUPTI).
void enable_callbacks(bool attached) noexcept {
  CUpti_SubscriberHandle const sub = g_subscriber;
  if (sub == nullptr) {
    return;
  }
  if (g_api_calls.load(std::memory_order_relaxed)) {
    for (auto domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
      g_api.enable_domain(attached ? 1 : 0, sub, domain);
    }
    if (!attached) {
      for (std::size_t i = 0; i < g_wait_cbid_count; ++i) {
        g_api.enable_callback(1, sub, g_wait_cbids[i].domain, g_wait_cbids[i].cbid);
      }
    }
    api_calls::coverage_changed();  // a call entered before may never be seen to return
  }
  if (g_stream_names) {
    g_api.enable_callback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_CREATED);
  }
  if (g_um_deferred.load(std::memory_order_acquire)) {
    g_api.enable_callback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  }
  if (g_graph_calls) {
    for (CUpti_CallbackId cbid : graph_nodes::callbacks) {
      g_api.enable_callback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, cbid);
    }
    for (CUpti_CallbackId cbid : graph_nodes::driver_callbacks) {
      g_api.enable_callback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    }
  }
  if (g_profiler_calls) {
    g_api.enable_callback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
                          CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
    g_api.enable_callback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
                          CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
  }
}

void CUPTIAPI on_resource(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          void const* data);

/// Subscribes (again) with on_resource. @return false when CUPTI refuses (another subscriber)
bool subscribe() noexcept {
  return g_subscriber != nullptr ||
         (g_api.subscribe != nullptr &&
          g_api.subscribe(&g_subscriber, &on_resource, nullptr) == CUPTI_SUCCESS);
}

void try_detach() noexcept;

/// CUPTI's resource callback: each stream the program creates gets an info record
/// `stream=<handle>:<CUPTI stream id>`, so the trace can give a stream's GPU track the name the
/// program gave its cudaStream_t through NVTX (nvtxNameCudaStream, nvtxpp::name_cuda_stream).
void CUPTIAPI on_resource(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          void const* data) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    // Every API call when the flight recorder tracks them (whole domains are enabled), else
    // only the driver calls enabled one by one below.
    if (g_api_calls.load(std::memory_order_relaxed)) {
      api_calls::on_callback(static_cast<std::uint32_t>(domain), cbid, data);
    }
    // A period ended and CUPTI is flushed: it detaches at this call's exit.
    if (g_armed.load(std::memory_order_acquire) && data != nullptr &&
        static_cast<CUpti_CallbackData const*>(data)->callbackSite == CUPTI_API_EXIT) {
      try_detach();
    }
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
      return;
    }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && data != nullptr &&
      (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart ||
       cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
    if (!g_profiler_calls) {
      return;  // enabled with the whole domain, not asked for
    }
    // cudaProfilerStart/Stop call these. The window opens as Start returns and closes as Stop
    // is entered: the calls' own records fall outside it.
    auto const* cb = static_cast<CUpti_CallbackData const*>(data);
    bool const start = cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
    if (cb->callbackSite == (start ? CUPTI_API_EXIT : CUPTI_API_ENTER)) {
      gate::profiler_api(start);
    }
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && data != nullptr) {
    if (g_graph_calls) {
      for (CUpti_CallbackId wanted : graph_nodes::driver_callbacks) {
        if (cbid == wanted) {
          graph_nodes::on_driver_api(cbid, data);  // calls that add child-graph nodes
        }
      }
    }
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || data == nullptr) {
    return;
  }
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    enable_deferred_unified_memory();
  }
  if (cbid != CUPTI_CBID_RESOURCE_STREAM_CREATED) {
    graph_nodes::on_resource(cbid, data);  // CUDA graph nodes (inprocess/cuda/graph_nodes.cpp)
    return;
  }
  auto const* r = static_cast<CUpti_ResourceData const*>(data);
  std::uint32_t id = 0;
  if (g_api.stream_id(r->context, r->resourceHandle.stream, 0, &id) != CUPTI_SUCCESS) {
    return;
  }
  char text[64];
  int const n = std::snprintf(
      text, sizeof text, "stream=0x%llx:%u",
      static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(r->resourceHandle.stream)),
      id);
  if (n > 0 && static_cast<std::size_t>(n) < sizeof text) {
    write_info(std::string_view{text, static_cast<std::size_t>(n)});
  }
}

/// With the flight recorder: every runtime and driver API call goes to api_calls, so stacks
/// reports name the call a thread is inside. Returns the `api_calls` info record's text.
std::string start_api_calls(void* lib, CUpti_SubscriberHandle subscriber) {
  if (!api_calls::start()) {
    return "api_calls=unavailable:no table (see stderr)";
  }
  std::string why;
  if (!resolve(lib, "cuptiEnableDomain", g_api.enable_domain, why)) {
    return "api_calls=unavailable:" + why;
  }
  for (auto domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    if (CUptiResult const r = g_api.enable_domain(1, subscriber, domain); r != CUPTI_SUCCESS) {
      return "api_calls=unavailable:cuptiEnableDomain: " + result_text(r);
    }
  }
  find_wait_cbids();
  g_api_calls.store(true, std::memory_order_relaxed);
  return "api_calls=on";
}

/// Subscribes to stream creation (and CUDA graph node events) when this CUPTI offers it (one
/// subscriber per process: a program that subscribes itself keeps its subscription, and tracks keep
/// CUPTI's ids).
void start_stream_names(void* lib) {
  std::string why;
  if (!resolve(lib, "cuptiSubscribe", g_api.subscribe, why) ||
      !resolve(lib, "cuptiEnableCallback", g_api.enable_callback, why)) {
    return;
  }
  g_stream_names = resolve(lib, "cuptiGetStreamIdEx", g_api.stream_id, why);
  if (subscribe()) {
    // NVTXPP_GRAPH_NODES=off: no graph node events (to measure what they cost; docs/graphs.md).
    char const* graphs = std::getenv("NVTXPP_GRAPH_NODES");
    g_graph_calls =
        (graphs == nullptr || std::strcmp(graphs, "off") != 0) && graph_nodes::start(lib);
    g_profiler_calls = std::getenv("NVTXPP_CAPTURE_RANGE") != nullptr &&
                       std::strcmp(std::getenv("NVTXPP_CAPTURE_RANGE"), "cudaProfilerApi") == 0;
    enable_callbacks(true);
    if (api_calls::wanted()) {
      write_info(start_api_calls(lib, g_subscriber));
    }
  } else if (api_calls::wanted()) {
    write_info("api_calls=unavailable:cuptiSubscribe failed (another CUPTI subscriber?)");
  }
}

/// Enables the activity records of the driver functions that launch GPU work (unless every
/// driver call is recorded anyway, --cuda-api=all). Returns the `driver_api` info record's text:
/// what the recording holds of the driver API.
std::string start_driver_launches(void* lib) {
  if (driver_api_wanted()) {
    return "driver_api=all";
  }
  if (!driver_launches_wanted()) {
    return "driver_api=off";
  }
  std::string why;
  if (!resolve(lib, "cuptiActivityEnableDriverApi", g_api.enable_driver_api, why)) {
    return "driver_api=unavailable:" + why;
  }
  for (CUpti_CallbackId cbid = 1;
       cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && g_launch_cbid_count < max_launch_cbids; ++cbid) {
    char const* name = api_name(CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    if (name != nullptr && launches_gpu_work(name)) {
      CUptiResult const r = g_api.enable_driver_api(cbid, 1);
      if (r != CUPTI_SUCCESS) {
        enable_launch_cbids(false);
        g_launch_cbid_count = 0;
        return "driver_api=unavailable:cuptiActivityEnableDriverApi: " + result_text(r);
      }
      g_launch_cbids[g_launch_cbid_count++] = cbid;
    }
  }
  return "driver_api=launches:" + std::to_string(g_launch_cbid_count);
}

/// Enables or disables the recorded kinds (caller holds g_window_mutex).
void set_kinds(bool on) noexcept {
  if (!g_kinds_ready || on == g_kinds_on) {
    return;
  }
  g_kinds_on = on;
  // NVTXPP_SAMPLE_PROFILE=1 (a diagnostic): how long each of CUPTI's calls took, as an info
  // record `gpu_switch_profile=on|off:<kind>=<ns>,...`.
  static bool const profile = std::getenv("NVTXPP_SAMPLE_PROFILE") != nullptr;
  char text[256];
  int len =
      profile ? std::snprintf(text, sizeof text, "gpu_switch_profile=%s:", on ? "on" : "off") : 0;
  auto timed = [&](int what, auto&& call) {
    std::int64_t const t = profile ? monotonic_ns() : 0;
    call();
    if (profile && len > 0 && static_cast<std::size_t>(len) < sizeof text - 24) {
      len += std::snprintf(text + len, sizeof text - static_cast<std::size_t>(len), "%d=%lld,",
                           what, static_cast<long long>(monotonic_ns() - t));
    }
  };
  for (auto kind : {g_kernel_kind, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_RUNTIME,
                    CUPTI_ACTIVITY_KIND_DRIVER}) {
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER && !driver_api_wanted()) {
      continue;
    }
    timed(static_cast<int>(kind), [&] { on ? g_api.enable(kind) : g_api.disable(kind); });
  }
  if (g_um_on) {
    timed(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER, [&] {
      on ? g_api.enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)
         : g_api.disable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    });
  }
  // The driver launch functions' records (start_driver_launches): where periods end with a
  // detach, switched with the rest (switch_launches: one by one at first, then as the DRIVER
  // kind, which CUPTI records again after a switch). Otherwise they are not switched: once
  // switched off one by one, CUPTI records them no more when they are switched on again (seen
  // on the H200, CUDA 13.0: no cuLaunchKernel of Numba's, cuBLAS's or cuBLASLt's in any period
  // after the first switch). They stay on, and the readers keep only the calls that started in
  // a period or the capture window (the edge rule, and the `gpu_capture` edges below).
  if (g_session.detach_allowed() || g_launches != launches::one_by_one) {
    timed(CUPTI_ACTIVITY_KIND_DRIVER, [&] { switch_launches(on); });
  }
  if (profile && len > 0 && static_cast<std::size_t>(len) < sizeof text) {
    write_info(std::string_view{text, static_cast<std::size_t>(len)});
  }
}

/// The capture window's edge as an info record `gpu_capture=on:<ns>` or `gpu_capture=off:<ns>`
/// (CUPTI's clock): the readers keep the API calls that started while it was open (the driver
/// launch functions' records are never switched off). Caller holds g_window_mutex.
void write_window_edge(bool open, std::int64_t at) noexcept {
  char text[64];
  int const n = std::snprintf(text, sizeof text, "gpu_capture=%s:%lld", open ? "on" : "off",
                              static_cast<long long>(at));
  if (n > 0 && static_cast<std::size_t>(n) < sizeof text) {
    write_info(std::string_view{text, static_cast<std::size_t>(n)});
  }
}

void drain_now(std::uint64_t generation) noexcept;
bool attach_again() noexcept;
CUptiResult configure_migrations(std::uint32_t count) noexcept;

/// Disables the API domains the detach enabled (those the flight recorder follows stay).
void disarm_detach() noexcept {
  g_armed.store(false, std::memory_order_release);
  if (g_subscriber != nullptr && g_api.enable_domain != nullptr &&
      !g_api_calls.load(std::memory_order_relaxed)) {
    for (auto domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
      g_api.enable_domain(0, g_subscriber, domain);
    }
    enable_callbacks(true);  // the functions enabled one by one in those domains, again
  }
}

/// Does what the session says for the state wanted (caller holds g_window_mutex).
/// @return false when GPU detail was wanted but CUPTI could not be attached again
bool switch_session(bool want) noexcept {
  using act = session_state::action;
  switch (g_session.want(want)) {
    case act::enable_kinds:
      set_kinds(true);
      break;
    case act::disable_kinds:
      set_kinds(false);
      break;
    case act::drain:
      set_kinds(false);
      drain_now(g_session.generation());
      break;
    case act::disarm:
      disarm_detach();
      set_kinds(true);
      break;
    case act::attach:
      if (!attach_again()) {
        g_session.attached(false);
        return false;
      }
      g_session.attached(true);
      break;
    default:
      break;
  }
  return true;
}

/// The state both switches ask for, applied (caller holds g_window_mutex). With --cuda-sample,
/// every change is an info record `gpu_detail=on:<ns>:<sample|raise>:<switch ns>` or
/// `gpu_detail=off:<ns>:<switch ns>`: <ns> the edge on CUPTI's clock (an `on` once CUPTI records,
/// an `off` before it stops), <switch ns> how long CUPTI took to switch. The readers keep the GPU
/// work whose launching call started between an `on` and the next `off` (docs/leave-it-on-gpu.md).
void apply_gpu_state() noexcept {
  if (!g_kinds_ready) {
    return;
  }
  bool const want = g_window_on && g_sample_on;
  if (want == g_kinds_on) {
    if (want && g_sampling && g_raised != g_marked_raised) {
      g_marked_raised = g_raised;  // a raise inside a period, or a period after a raise
      char text[96];
      int const n =
          std::snprintf(text, sizeof text, "gpu_detail=on:%lld:%s:0",
                        static_cast<long long>(monotonic_ns()), g_raised ? "raise" : "sample");
      write_info(std::string_view{text, static_cast<std::size_t>(n)});
    }
    return;
  }
  std::int64_t const before = monotonic_ns();
  if (!switch_session(want)) {
    return;  // CUPTI could not be attached again: nothing recorded, nothing marked
  }
  std::int64_t const after = monotonic_ns();
  if (!g_sampling) {
    return;
  }
  char text[96];
  int n = 0;
  if (want) {
    g_marked_raised = g_raised;
    n = std::snprintf(text, sizeof text, "gpu_detail=on:%lld:%s:%lld",
                      static_cast<long long>(after), g_raised ? "raise" : "sample",
                      static_cast<long long>(after - before));
  } else {
    n = std::snprintf(text, sizeof text, "gpu_detail=off:%lld:%lld", static_cast<long long>(before),
                      static_cast<long long>(after - before));
  }
  if (n > 0 && static_cast<std::size_t>(n) < sizeof text) {
    write_info(std::string_view{text, static_cast<std::size_t>(n)});
  }
}

// The detach and the attach (cupti_session.hpp) ------------------------------------------------

/// A period ended (the kinds are off): the flusher thread drains it. Caller holds g_window_mutex.
void drain_now(std::uint64_t generation) noexcept {
  g_drain_request.store(generation, std::memory_order_release);
  wake_flusher();
}

/// Enables the API domains whose next exit detaches CUPTI (caller holds g_window_mutex).
/// @return false when there is no subscriber to carry them
bool arm_detach() noexcept {
  if (!subscribe() || g_api.enable_domain == nullptr) {
    return false;
  }
  for (auto domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    g_api.enable_domain(1, g_subscriber, domain);
  }
  g_armed.store(true, std::memory_order_release);
  return true;
}

/// Says once that CUPTI cannot detach in this program: periods end with the kinds off.
void say_no_detach(std::string const& why) noexcept {
  write_info("cupti_detach=unavailable:" + why);
  std::fprintf(stderr,
               "nvtxpp-capture: CUPTI does not detach in this process (%s): GPU detail is "
               "switched off between periods instead, which leaves part of CUPTI's cost on every "
               "CUDA call (docs/leave-it-on-gpu.md)\n",
               why.c_str());
}

/// On the flusher thread, after a period ended (drain number `generation`): the GPU work its
/// launches put on the GPU completes (our thread waits for the devices, in the relaxed capture
/// mode), CUPTI hands out every record, then the detach is armed, unless a period started again
/// meanwhile. Work still running after the wait (a GPU that never idles) comes without its end
/// and is counted (`in_flight`).
void drain_then_arm(std::uint64_t generation) noexcept {
  if (g_state.load(std::memory_order_acquire) != active) {
    return;
  }
  synchronize_devices();
  g_api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock{g_window_mutex};
  if (g_session.drained(generation) == session_state::action::arm && !arm_detach()) {
    g_session.finalized(false);
    say_no_detach("no CUPTI subscriber to detach from a CUDA call's exit");
  }
}

/// A CUDA call returns with the detach armed: CUPTI detaches here, at the exit CUPTI's header
/// names as safe. Never waits for the lock: a switch under way leaves it to the next exit.
void try_detach() noexcept {
  std::unique_lock<std::mutex> lock{g_window_mutex, std::try_to_lock};
  if (!lock.owns_lock() || g_session.api_exit() != session_state::action::finalize) {
    return;
  }
  g_armed.store(false, std::memory_order_release);
  std::int64_t const t = monotonic_ns();
  CUptiResult const r = g_api.finalize();
  std::int64_t const took = monotonic_ns() - t;
  g_session.finalized(r == CUPTI_SUCCESS);
  if (r != CUPTI_SUCCESS) {
    disarm_detach();
    say_no_detach("cuptiFinalize: " + result_text(r));
    return;
  }
  // CUPTI forgot everything: subscriber, callbacks, kinds, buffers.
  g_activity.store(false, std::memory_order_release);
  g_subscriber = nullptr;
  g_launches = launches::off;
  ++g_detaches;
  g_finalize_ns = std::max(g_finalize_ns, took);
  reclaim_lent_buffers();
  if (g_api_calls.load(std::memory_order_relaxed)) {
    api_calls::coverage_changed();
  }
  g_light_request.fetch_add(1, std::memory_order_acq_rel);  // the light subscriber, soon
  wake_flusher();
}

/// On the flusher thread, after a detach: the light subscriber (stream names, graph nodes, the
/// window's profiler calls, the calls that wait), unless a period attached CUPTI already.
void subscribe_light() noexcept {
  std::lock_guard<std::mutex> lock{g_window_mutex};
  if (g_session.now() != session_state::phase::detached || g_subscriber != nullptr) {
    return;
  }
  if (subscribe()) {
    enable_callbacks(false);
  }
}

/// A period starts while CUPTI is detached: callbacks, clock and thread ids registered again,
/// the subscriber's callbacks as when attached, the kinds switched on (the driver launch
/// functions as the DRIVER kind), unified memory configured again. Caller holds g_window_mutex.
/// A failure is said once; the next period tries again.
bool attach_again() noexcept {
  std::string why;
  auto step = [&](char const* what, CUptiResult r) {
    if (r != CUPTI_SUCCESS && why.empty()) {
      why = std::string{what} + ": " + result_text(r);
    }
    return r == CUPTI_SUCCESS;
  };
  // The subscriber first (again, if the light one could not subscribe: inside a stream capture,
  // say), then the buffers: either initialises CUPTI again after the detach, and the clock and
  // thread ids are refused before that (CUPTI_ERROR_NOT_INITIALIZED, seen on the H100 in
  // PyTorch's CUDA graphs mode).
  bool const subscribed = subscribe();
  if (!step("cuptiActivityRegisterCallbacks",
            g_api.register_callbacks(&buffer_requested, &buffer_completed)) ||
      !step("cuptiActivityRegisterTimestampCallback", g_api.register_timestamp(&timestamp)) ||
      !step("cuptiSetThreadIdType",
            g_api.set_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM))) {
    if (!g_said_attach) {
      g_said_attach = true;
      write_info("cupti_attach=failed:" + why);
      std::fprintf(stderr,
                   "nvtxpp-capture: CUPTI could not be attached again for a period of GPU "
                   "detail (%s): no GPU detail in that period; each later one tries again "
                   "(said once)\n",
                   why.c_str());
    }
    return false;
  }
  {
    std::lock_guard<std::mutex> records{g_mutex};
    g_converter->attached_again();
  }
  g_activity.store(true, std::memory_order_release);
  if (subscribed || subscribe()) {
    enable_callbacks(true);
  }
  if (g_um_on) {
    if (configure_migrations(3) != CUPTI_SUCCESS) {
      configure_migrations(2);
    }
  }
  g_kinds_on = false;
  set_kinds(true);
  ++g_attaches;
  return true;
}

/// Enables the first `count` of the transfer counters: host to device, device to host, device to
/// device.
CUptiResult configure_migrations(std::uint32_t count) noexcept {
  CUpti_ActivityUnifiedMemoryCounterKind const kinds[3] = {
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD};
  CUpti_ActivityUnifiedMemoryCounterConfig config[3]{};
  for (std::uint32_t i = 0; i < count && i < 3; ++i) {
    config[i].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_ALL_DEVICES;
    config[i].kind = kinds[i];
    config[i].deviceId = 0;
    config[i].enable = 1;
  }
  return g_api.configure_um(config, count);
}

/// Records unified memory migrations (host to device, device to host, device to device), as
/// Nsight Systems does by default with CUDA tracing; `NVTXPP_UNIFIED_MEMORY=off` leaves them
/// out. Returns the `unified_memory` info record's text: on, off, or why CUPTI cannot (no
/// support on this system: MPS, devices without peer access, a CUPTI without the function).
std::string start_unified_memory(void* lib) {
  if (char const* v = std::getenv("NVTXPP_UNIFIED_MEMORY");
      v != nullptr && std::strcmp(v, "off") == 0) {
    return "unified_memory=off";
  }
  if (gpu_sampler::read_plan().on_ns != 0) {
    // Switched at every period, CUPTI's migration counters would cost the switch off 2 s
    // (cuptiActivityDisable(UNIFIED_MEMORY_COUNTER), CUPTI 13.0 on the H200; the other kinds
    // take microseconds): sampled runs leave migrations out (docs/leave-it-on-gpu.md).
    return "unified_memory=off:--cuda-sample";
  }
  std::string why;
  if (!resolve(lib, "cuptiActivityConfigureUnifiedMemoryCounter", g_api.configure_um, why)) {
    return "unified_memory=unavailable:" + why;
  }
  // Device-to-device transfers need peer devices: a CUPTI that refuses that counter still
  // records the other two.
  std::string note;
  CUptiResult r = configure_migrations(3);
  if (r != CUPTI_SUCCESS) {
    note = ":no device-to-device (" + result_text(r) + ")";
    r = configure_migrations(2);
  }
  if (r != CUPTI_SUCCESS) {
    return "unified_memory=unavailable:cuptiActivityConfigureUnifiedMemoryCounter: " +
           result_text(r);
  }
  if (r = g_api.enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER); r == CUPTI_ERROR_NOT_READY) {
    g_um_note = note;
    g_um_deferred.store(true, std::memory_order_release);
    return {};  // the record comes with the first context
  } else if (r != CUPTI_SUCCESS) {
    return "unified_memory=unavailable:cuptiActivityEnable(UNIFIED_MEMORY_COUNTER): " +
           result_text(r);
  }
  g_um_on = true;
  return "unified_memory=on" + note;
}

/// The migrations CUPTI was not ready for at injection, enabled once a context exists; the
/// `unified_memory` info record says how that went.
void enable_deferred_unified_memory() noexcept {
  if (!g_um_deferred.exchange(false, std::memory_order_acq_rel)) {
    return;
  }
  std::lock_guard<std::mutex> lock{g_window_mutex};
  if (!g_activity.load(std::memory_order_acquire)) {
    g_um_on = true;  // detached: configured and enabled at the next attach
    write_info("unified_memory=on" + g_um_note);
    return;
  }
  // The counters' configuration again first: made inside cuInit, it may not have taken.
  if (configure_migrations(3) != CUPTI_SUCCESS) {
    configure_migrations(2);
  }
  CUptiResult const r = g_api.enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  if (r != CUPTI_SUCCESS) {
    write_info(
        "unified_memory=unavailable:cuptiActivityEnable(UNIFIED_MEMORY_COUNTER) at the "
        "first context: " +
        result_text(r));
    return;
  }
  g_um_on = true;
  if (g_kinds_ready && !g_kinds_on) {
    g_api.disable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);  // outside the window or periods
  }
  write_info("unified_memory=on" + g_um_note);
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

/// Periods end with a detach where CUPTI has cuptiFinalize and the flusher thread (which drains)
/// runs, unless NVTXPP_CUPTI_DETACH=off (the kinds switched off instead: to compare their cost).
void allow_detach() noexcept {
  char const* v = std::getenv("NVTXPP_CUPTI_DETACH");
  if ((v != nullptr && std::strcmp(v, "off") == 0) || g_api.finalize == nullptr ||
      g_api.enable_domain == nullptr || !g_flusher_running.load(std::memory_order_acquire)) {
    return;
  }
  std::lock_guard<std::mutex> lock{g_window_mutex};
  if (g_session.allow_detach() == session_state::action::drain) {
    drain_now(g_session.generation());  // nothing recorded from the start: detach now
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

}  // namespace

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

void set_gpu_window(bool open) noexcept {
  if (!same_process() && g_pid.load(std::memory_order_acquire) != 0) {
    return;  // a forked child: CUPTI is the parent's
  }
  std::lock_guard<std::mutex> lock{g_window_mutex};
  if (open == g_window_on) {
    return;
  }
  std::int64_t const before = monotonic_ns();
  g_window_on = open;
  apply_gpu_state();
  if (g_kinds_ready) {
    write_window_edge(open, open ? monotonic_ns() : before);
  }
}

void set_gpu_sample(bool on, bool raised) noexcept {
  if (!same_process()) {
    return;  // a forked child: CUPTI is the parent's
  }
  std::lock_guard<std::mutex> lock{g_window_mutex};  // (after the final flush: a no-op)
  g_sample_on = on;
  g_raised = on && raised;
  apply_gpu_state();
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
