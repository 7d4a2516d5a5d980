/// @file
/// @brief The threads the injection library starts inside the profiled program (the block
/// writer, the capture window's timer, the CUPTI flusher, the sampler): started with a stack that
/// holds what the program's libraries put on every thread's stack, and never failing in silence.
/// Internal to libnvtxpp_inject.so.
#pragma once

#include <pthread.h>

#include <cstddef>

namespace nvtxpp::capture {

/// @brief Starts one of our threads: detached, named `name` (what `top` and debuggers show),
/// with `stack_bytes` of stack for the thread itself on top of what glibc takes from every
/// thread's stack (the process's static TLS: cuBLASLt alone carries 92 KiB; its thread
/// descriptor, the guard page). A stack still too small (EINVAL) is retried larger. `main`
/// blocks the signals it must not take. `thread` gets its handle.
/// @return 0 when it runs, else the error of the last attempt (an errno value)
[[nodiscard]] int start_thread(void* (*main)(void*), char const* name, std::size_t stack_bytes,
                               pthread_t* thread = nullptr) noexcept;

/// @brief Before fork(): waits (at most 1 s) until every thread start_thread started has left
/// the C library's and a sanitizer's set-up of a new thread and entered its `main`. That set-up
/// allocates; an allocator that is not fork-safe (AddressSanitizer's is not) would give the
/// child a lock held by a thread the child does not have, and the child would hang at its next
/// allocation or its exit. Bounded: a thread that cannot start (say, while fork runs under the
/// loader's lock) must not hang the program.
void wait_for_starting_threads() noexcept;

/// @brief In a forked child: none of the parent's threads is starting here.
void our_threads_after_fork_in_child() noexcept;

/// @brief Says out loud that one of our threads could not start: the line
/// `nvtxpp-capture: WHAT (ERROR); OUTCOME` on stderr, and an info record `thread=...` with the
/// same words, which the readers turn into a warning (the summary's, merge's). Not
/// async-signal-safe.
/// @param what the option or feature and its thread, e.g. "--cuda-sample: the sampler thread
/// could not start"
/// @param error the errno value start_thread returned
/// @param outcome what the recording does instead, e.g. "GPU detail recorded all the time"
void say_thread_failed(char const* what, int error, char const* outcome) noexcept;

}  // namespace nvtxpp::capture
