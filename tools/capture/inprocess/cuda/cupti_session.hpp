/// @file
/// @brief The lifecycle of nvtxpp-capture's CUPTI session in one small state machine (header only):
/// where a period of GPU detail starts and ends, and what a detach keeps. Pure (no CUPTI call):
/// cupti.cpp asks it what to do at each event, does it, and reports back. Internal to
/// libnvtxpp_inject.so.
///
/// Why a detach: CUPTI's activity kinds, once switched on in a running program, keep costing its
/// CUDA calls after they are switched off again (bench/gpu/launch_map.cu on an H100: a
/// launch-bound step 1.32-1.44x with every kind off, against 0.99-1.01x once CUPTI is detached
/// with cuptiFinalize; docs/performance.md). So a period ends with the kinds off, the GPU work
/// launched inside it drained, CUPTI flushed, then detached at the next CUDA call's exit (where
/// CUPTI's header says cuptiFinalize is safe); the next period attaches it again.
///
///                 want(on)                    want(off)
///     attached ─────────────► recording ─────────────────► draining ──drained()──► armed
///   (at cuInit)                  ▲  ▲                         │ want(on)             │ api_exit()
///                                │  └─────────────────────────┘                      ▼
///                                │   want(on): attach()                        (cuptiFinalize)
///                                └──────────────────────────────────────────── detached
///
/// A detach keeps: the light subscriber (subscribed again right after it: stream creation, so
/// streams made while detached are named; graph node creation, so graphs captured while
/// detached put their replays under their ranges; cuProfilerStart/Stop for
/// --capture-range=cudaProfilerApi; and, with the flight recorder, the calls that wait
/// (synchronisation, blocking copies, allocation), so a hang report still names the call a
/// thread is stuck in); the converter's strings and the info records already written (device
/// and stream names); the unified memory setting (enabled again at the attach).
///
/// Where CUPTI refuses the detach (cuptiFinalize fails) or NVTXPP_CUPTI_DETACH=off, a period
/// ends with the kinds switched off and CUPTI attached (`switched_off`), as before the detach
/// existed; cupti.cpp says so once. So does a period that ends while the session is held
/// (hold(): a cudaProfilerApi window may still open).
#pragma once

#include <cstdint>

namespace nvtxpp::capture::cupti {

class session_state {
 public:
  enum class phase : std::uint8_t {
    unloaded,      ///< CUPTI not loaded (yet, or unavailable)
    recording,     ///< attached, the activity kinds on
    switched_off,  ///< attached, the kinds off (no detach: refused, or turned off)
    draining,      ///< the kinds off; our thread waits for the GPU work launched, then flushes
    armed,         ///< flushed; CUPTI detaches at the next CUDA call's exit
    detached,      ///< cuptiFinalize returned; only the light subscriber remains
    closed,        ///< the final flush ran, or this is a forked child
  };

  /// What cupti.cpp must do now.
  enum class action : std::uint8_t {
    none,
    enable_kinds,   ///< switch the activity kinds on (CUPTI attached)
    disable_kinds,  ///< switch them off, nothing more (no detach)
    drain,          ///< switch them off and have our thread drain (then drained())
    disarm,         ///< the detach is called off: switch the kinds on again
    attach,         ///< attach CUPTI again and switch the kinds on (then attached())
    arm,            ///< enable the exit callbacks that detach (then api_exit())
    finalize,       ///< call cuptiFinalize now, from this CUDA call's exit (then detached())
  };

  /// @brief CUPTI was loaded and its kinds enabled at injection (cuInit).
  void loaded(bool detach_allowed) noexcept {
    phase_ = phase::recording;
    detach_allowed_ = detach_allowed;
  }

  /// @brief Detaching works from now on (our thread that drains runs, CUPTI has cuptiFinalize):
  /// drain at once when nothing is being recorded.
  action allow_detach() noexcept;

  /// @brief While held (`on`), a period ends with the kinds off and CUPTI attached: no detach.
  /// --capture-range=cudaProfilerApi holds it while a cuProfilerStart may still open the window:
  /// only the subscriber sees that call, and a detach drops the subscriber until our thread
  /// subscribes the light one again, so a start in between would be lost with its window.
  /// Taken at load, before a period ends; released with a period ended, it drains (then
  /// detaches) at once.
  action hold(bool on) noexcept;

  /// @brief The capture window and the sampler together want GPU detail `on` or not.
  action want(bool on) noexcept;

  /// @brief Our thread drained the GPU work of drain number `generation` and flushed CUPTI.
  action drained(std::uint64_t generation) noexcept;

  /// @brief A CUDA call returns (CUPTI's exit callback, on any thread).
  action api_exit() noexcept;

  /// @brief cuptiFinalize returned `ok`; when it failed, detaches stop for good.
  void finalized(bool ok) noexcept;

  /// @brief The attach that want() asked for worked (recording) or failed (detached still).
  void attached(bool ok) noexcept { phase_ = ok ? phase::recording : phase::detached; }

  /// @brief The final flush, or a forked child: nothing is switched after this.
  void close() noexcept { phase_ = phase::closed; }

  [[nodiscard]] phase now() const noexcept { return phase_; }
  [[nodiscard]] std::uint64_t generation() const noexcept { return generation_; }
  [[nodiscard]] bool detach_allowed() const noexcept { return detach_allowed_; }
  /// @brief A period that ends now ends with a detach (allowed, and not held).
  [[nodiscard]] bool detaches() const noexcept { return detach_allowed_ && !held_; }
  /// @brief CUPTI is attached now (its functions may be called without attaching it again).
  [[nodiscard]] bool attached_now() const noexcept {
    return phase_ == phase::recording || phase_ == phase::switched_off ||
           phase_ == phase::draining || phase_ == phase::armed;
  }

 private:
  phase phase_ = phase::unloaded;
  bool detach_allowed_ = false;
  bool held_ = false;
  std::uint64_t generation_ = 0;  ///< bumped by each drain asked for
};

// The transitions.

inline session_state::action session_state::want(bool on) noexcept {
  switch (phase_) {
    case phase::recording:
      if (on) {
        return action::none;
      }
      if (!detaches()) {
        phase_ = phase::switched_off;
        return action::disable_kinds;
      }
      phase_ = phase::draining;
      ++generation_;  // a drain already under way no longer arms
      return action::drain;
    case phase::switched_off:
      if (!on) {
        return action::none;
      }
      phase_ = phase::recording;
      return action::enable_kinds;
    case phase::draining:
      if (!on) {
        return action::none;
      }
      phase_ = phase::recording;  // the drain, when it ends, finds it no longer wanted
      return action::enable_kinds;
    case phase::armed:
      if (!on) {
        return action::none;
      }
      phase_ = phase::recording;
      return action::disarm;
    case phase::detached:
      return on ? action::attach : action::none;
    case phase::unloaded:
    case phase::closed:
      return action::none;
  }
  return action::none;
}

inline session_state::action session_state::hold(bool on) noexcept {
  held_ = on;
  if (!detaches() || phase_ != phase::switched_off) {
    return action::none;
  }
  phase_ = phase::draining;
  ++generation_;
  return action::drain;
}

inline session_state::action session_state::allow_detach() noexcept {
  detach_allowed_ = true;
  if (!detaches() || phase_ != phase::switched_off) {
    return action::none;
  }
  phase_ = phase::draining;
  ++generation_;
  return action::drain;
}

inline session_state::action session_state::drained(std::uint64_t generation) noexcept {
  if (phase_ != phase::draining || generation != generation_) {
    return action::none;
  }
  phase_ = phase::armed;
  return action::arm;
}

inline session_state::action session_state::api_exit() noexcept {
  return phase_ == phase::armed ? action::finalize : action::none;
}

inline void session_state::finalized(bool ok) noexcept {
  if (ok) {
    phase_ = phase::detached;
    return;
  }
  detach_allowed_ = false;  // CUPTI refused: switch kinds as before, and never ask again
  phase_ = phase::switched_off;
}

}  // namespace nvtxpp::capture::cupti
