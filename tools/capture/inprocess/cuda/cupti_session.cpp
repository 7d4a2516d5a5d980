// The CUPTI session's lifecycle (cupti_session.hpp): the transitions alone.
#include "cupti_session.hpp"

namespace nvtxpp::capture::cupti {

session_state::action session_state::want(bool on) noexcept {
  switch (phase_) {
    case phase::recording:
      if (on) {
        return action::none;
      }
      if (!detach_allowed_) {
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

session_state::action session_state::allow_detach() noexcept {
  detach_allowed_ = true;
  if (phase_ != phase::switched_off) {
    return action::none;
  }
  phase_ = phase::draining;
  ++generation_;
  return action::drain;
}

session_state::action session_state::drained(std::uint64_t generation) noexcept {
  if (phase_ != phase::draining || generation != generation_) {
    return action::none;
  }
  phase_ = phase::armed;
  return action::arm;
}

session_state::action session_state::api_exit() noexcept {
  return phase_ == phase::armed ? action::finalize : action::none;
}

void session_state::finalized(bool ok) noexcept {
  if (ok) {
    phase_ = phase::detached;
    return;
  }
  detach_allowed_ = false;  // CUPTI refused: switch kinds as before, and never ask again
  phase_ = phase::switched_off;
}

}  // namespace nvtxpp::capture::cupti
