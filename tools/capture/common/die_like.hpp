/// @file
/// @brief Ending the way a child program ended: a launcher (the capture's, top's) whose program
/// died of a signal dies of the same one, so the shell and job schedulers see the same death.
#pragma once

#include <signal.h>

namespace nvtxpp::capture {

/// @brief Raises `sig` with its default action, unblocked. Returns only when that action does not
/// end the process (the caller then exits with 128 + sig).
inline void raise_as_default(int sig) noexcept {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(sig, &dfl, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(sig);
}

}  // namespace nvtxpp::capture
