// What nvtxpp-capture's CUPTI source records when (cupti_internal.hpp): the activity kinds,
// switched by the capture window (set_gpu_window) and --cuda-sample's periods and raises
// (set_gpu_sample); at a period's end the drain and the detach, at the next one the attach (their
// lifecycle: cupti_session.hpp); the driver's launch functions; unified memory.
#include "cupti_internal.hpp"

#include "../capture_gate.hpp"
#include "api_calls.hpp"
#include "gpu_sampler.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nvtxpp::capture::cupti {

namespace detail {

/// `NVTXPP_CUDA_API=all` (the launcher's --cuda-api=all): record driver API calls too.
bool driver_api_wanted() noexcept {
  char const* api = std::getenv("NVTXPP_CUDA_API");
  return api != nullptr && std::strcmp(api, "all") == 0;
}

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
  if (g_session.detaches() || g_launches != launches::one_by_one) {
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
  bool subscribed = subscribe();
  CUptiResult registered = g_api.register_callbacks(&buffer_requested, &buffer_completed);
  if (registered == CUPTI_ERROR_NOT_INITIALIZED && g_subscriber != nullptr) {
    // A subscriber CUPTI no longer knows (made while its detach was still under way): a new
    // one, then the buffers again.
    g_subscriber = nullptr;
    subscribed = subscribe();
    registered = g_api.register_callbacks(&buffer_requested, &buffer_completed);
  }
  if (!step("cuptiActivityRegisterCallbacks", registered) ||
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

/// A switched-off session that may detach now: the launch functions off too (they stay on while
/// periods end without a detach), then our thread drains. Caller holds g_window_mutex.
void drain_if(session_state::action what) noexcept {
  if (what == session_state::action::drain) {
    switch_launches(false);
    drain_now(g_session.generation());
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
  drain_if(g_session.allow_detach());  // nothing recorded from the start: detach now
}

/// Holds CUPTI attached while a cuProfilerStart may still open the capture window (the session's
/// hold()). Caller holds g_window_mutex.
void hold_for_profiler_calls() noexcept {
  drain_if(g_session.hold(g_profiler_calls && gate::profiler_start_awaited()));
}

}  // namespace detail

using namespace detail;

void set_gpu_window(bool open) noexcept {
  if (!same_process() && g_pid.load(std::memory_order_acquire) != 0) {
    return;  // a forked child: CUPTI is the parent's
  }
  std::lock_guard<std::mutex> lock{g_window_mutex};
  if (g_kinds_ready) {
    hold_for_profiler_calls();  // (before the switch: the window that closed may be the last)
  }
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

}  // namespace nvtxpp::capture::cupti
