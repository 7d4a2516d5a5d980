/// @file
/// @brief What the CUPTI source's files share (internal to libnvtxpp_inject.so): the functions
/// resolved from CUPTI, the session's state, and the functions one file calls in another.
///
/// The files, by idea:
/// - cupti.cpp: loading CUPTI at cuInit, the flusher thread, flushes (at exit, on a signal, for a
///   live dump), fork;
/// - cupti_buffers.cpp: the buffers handed to CUPTI and the records written from them;
/// - cupti_callbacks.cpp: the one subscriber and its callbacks (streams, graph nodes, the
///   window's profiler calls, the call each thread is in, the detach's exit);
/// - cupti_switch.cpp: what is recorded when: the kinds, the window and the periods, the detach
///   and the attach (their lifecycle: cupti_session.hpp).
#pragma once

#include "cupti.hpp"
#include "cupti_session.hpp"

#include <cupti.h>

#include <dlfcn.h>
#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace nvtxpp::capture::cupti::detail {

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
inline api_table g_api{};

enum state : int { idle = 0, active = 1, closing = 2, closed = 3 };
inline std::atomic<int> g_state{idle};
inline std::atomic<pid_t> g_pid{0};  ///< the process that loaded CUPTI
inline std::atomic<bool> g_initialized{false};

constexpr std::size_t buffer_bytes = std::size_t{4} << 20;
constexpr int max_buffers = 16;  ///< 64 MiB at most; beyond, CUPTI drops (and counts) records
inline std::atomic<unsigned char*> g_free[max_buffers];
inline std::atomic<unsigned char*>
    g_lent[max_buffers];  ///< buffers CUPTI holds now (reclaimed at a detach)
inline std::atomic<int> g_allocated{0};

inline std::mutex g_mutex;  ///< serialises buffer completion (CUPTI's thread, the flusher)
inline converter* g_converter = nullptr;  ///< never freed: used until the very end of the process
inline std::vector<unsigned char>* g_batch = nullptr;

constexpr std::int64_t signal_wait_ns = 5'000'000'000;  ///< how long a signal waits for the flush
constexpr std::int64_t exit_wait_ns = 30'000'000'000;   ///< how long exit waits for the GPU

inline std::atomic<std::uint32_t> g_flusher_wake{0};   ///< futex word: bumped with every request
inline std::atomic<std::uint32_t> g_flush_request{0};  ///< bumped to request the final flush
inline std::atomic<std::uint32_t> g_flush_done{0};    ///< futex word: the last final request served
inline std::atomic<std::uint32_t> g_live_request{0};  ///< bumped to request a live flush (a dump)
inline std::atomic<std::uint32_t> g_live_done{0};     ///< futex word: the last live request served
inline std::atomic<std::uint64_t> g_drain_request{0};  ///< a period ended: drain number N, then arm
inline std::atomic<std::uint64_t> g_drain_done{0};
inline std::atomic<std::uint32_t> g_light_request{0};  ///< detached: subscribe the light subscriber
inline std::atomic<std::uint32_t> g_light_done{0};
inline std::atomic<bool> g_flusher_running{false};
inline std::atomic<std::uint64_t> g_dropped{0};  ///< records lost so far (CUPTI's count, and ours)

// The capture window (set_gpu_window) and --cuda-sample's periods (set_gpu_sample): the activity
// kinds start_cupti enabled are enabled only while the window is open and a period (or a raise)
// runs. Under g_window_mutex.
inline std::mutex g_window_mutex;
inline bool g_kinds_ready = false;  ///< start_cupti enabled its kinds
inline bool g_kinds_on = true;
inline session_state g_session;  ///< attached, recording, draining, detached... (cupti_session.hpp)
/// Mirrors g_session's `armed` for the API callbacks, which read it on every CUDA call's exit
/// without the lock.
inline std::atomic<bool> g_armed{false};
/// CUPTI's activity API is attached (buffers registered): a live dump may flush it.
inline std::atomic<bool> g_activity{false};
inline std::uint64_t g_detaches = 0;  ///< periods ended with a detach (written at the end)
inline std::uint64_t g_attaches = 0;  ///< ... and attached again
inline std::int64_t g_finalize_ns =
    0;                              ///< the longest cuptiFinalize (a CUDA call's exit waits for it)
inline bool g_said_attach = false;  ///< a failed attach was said (once)
inline bool g_window_on = true;     ///< the capture window is open
inline bool g_sample_on =
    true;                      ///< a sampled period or a raise runs (always, without --cuda-sample)
inline bool g_raised = false;  ///< ... a raise
inline bool g_sampling = false;  ///< --cuda-sample: each switch is written as a `gpu_detail` record
inline bool g_marked_raised = false;  ///< the cause the last `on` record gave
inline bool g_um_on = false;  ///< unified memory migrations are recorded (start_unified_memory)
inline CUpti_ActivityKind g_kernel_kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;

// The subscriber's settings (cupti_callbacks.cpp).
inline std::atomic<bool> g_api_calls{false};  ///< API callbacks go to api_calls (flight recorder)
inline bool g_profiler_calls = false;         ///< cuProfilerStart/Stop open and close the window
inline bool g_graph_calls = false;            ///< graph_nodes follows the driver calls it enabled
inline bool g_stream_names = false;  ///< stream creation named (cuptiGetStreamIdEx resolved)

/// The one subscriber (CUPTI's callbacks: streams, graph nodes, the window's profiler calls, the
/// calls threads are in, the detach); subscribed again after each detach. Under g_window_mutex.
inline CUpti_SubscriberHandle g_subscriber = nullptr;

/// CUPTI refused the migrations' activity kind while the driver initialises (CUPTI_ERROR_NOT_READY,
/// seen on the H100 with CUDA 13.0: injection runs inside cuInit): enabled again when the first
/// context is created (on_resource), with the info record written then; the note for it.
inline std::atomic<bool> g_um_deferred{false};
inline std::string g_um_note;

/// Driver functions that put work on the GPU (kernels, copies, memsets, graph launches): their
/// activity records are enabled one by one by default, so GPU work launched through the driver
/// API (Numba, cuBLASLt's kernels, modules loaded by hand) has the call that launched it, on its
/// thread, and projects onto that thread's NVTX ranges. Their callback ids (at most
/// `max_launch_cbids`), chosen by name at start (cupti_switch.cpp); empty when not recorded.
constexpr std::size_t max_launch_cbids = 256;
inline CUpti_CallbackId g_launch_cbids[max_launch_cbids];
inline std::size_t g_launch_cbid_count = 0;

/// How the driver launch functions' records are on: one by one (as enabled at cuInit), or as the
/// DRIVER kind less every other function. CUPTI 13.0 records a function enabled one by one only
/// when that happens before CUDA starts (bench/gpu/launch_map.cu on an H100: none of 10,750
/// cuLaunchKernel calls recorded when enabled later, nor after a detach and attach), and never
/// again once it was switched off; the DRIVER kind with the others switched off records them at
/// any time, at the same cost.
enum class launches : std::uint8_t { off, one_by_one, as_kind };
inline launches g_launches = launches::off;

// cupti.cpp
std::int64_t monotonic_ns() noexcept;
uint64_t CUPTIAPI timestamp();
void write_info(std::string_view text) noexcept;
void write_count_info(char const* key, std::uint64_t n) noexcept;
void collect_dropped() noexcept;
bool same_process() noexcept;
char const* api_name(std::uint32_t domain, std::uint32_t cbid);
std::string result_text(CUptiResult r);
void synchronize_devices() noexcept;
void wake_flusher() noexcept;

/// Resolves `name` from CUPTI (`lib`) into `f`; false (and `why`) when it is missing.
template <class F>
bool resolve(void* lib, char const* name, F& f, std::string& why) {
  f = reinterpret_cast<F>(::dlsym(lib, name));
  if (f == nullptr) {
    why = std::string{"no "} + name + " in CUPTI";
    return false;
  }
  return true;
}

// cupti_buffers.cpp
void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid);
void release_buffer(unsigned char* b) noexcept;
void reclaim_lent_buffers() noexcept;

// cupti_callbacks.cpp
void enable_callbacks(bool attached) noexcept;
bool subscribe() noexcept;
void start_stream_names(void* lib);

// cupti_switch.cpp
bool driver_api_wanted() noexcept;
void enable_launch_cbids(bool on) noexcept;
std::string start_driver_launches(void* lib);
std::string start_unified_memory(void* lib);
void enable_deferred_unified_memory() noexcept;
void set_kinds(bool on) noexcept;
void apply_gpu_state() noexcept;
void write_window_edge(bool open, std::int64_t at) noexcept;
void drain_now(std::uint64_t generation) noexcept;
void drain_then_arm(std::uint64_t generation) noexcept;
void try_detach() noexcept;
void subscribe_light() noexcept;
void allow_detach() noexcept;
void hold_for_profiler_calls() noexcept;

}  // namespace nvtxpp::capture::cupti::detail
