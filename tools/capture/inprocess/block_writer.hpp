/// @file
/// @brief The injection library's event blocks on their way to the capture file: each thread's
/// blocks, the queue of full ones and the writer thread that empties it (block_writer.cpp says
/// how). Internal to libnvtxpp_inject.so; inject.cpp sets the process up around it.
#pragma once

#include "../../recording/core.hpp"
#include "../../recording/format.hpp"

#include <mutex>

namespace nvtxpp::capture::writer {

/// @brief The recorder core's chunk_full hook: hands the thread's full block to the writer
/// thread and goes on in a spare one (writes it itself when there is no writer thread).
void on_chunk_full(recording::thread_state& t) noexcept;

/// @brief The core's thread_exit hook: writes the rest of the thread's block, frees its blocks.
void on_thread_exit(recording::thread_state& t) noexcept;

/// @brief The core's new_chunk hook: a thread's first block, on this library's list of blocks.
[[nodiscard]] recording::chunk* new_first_block() noexcept;

/// @brief Starts this process's writer thread once.
/// @return false when it is not running (yet)
bool ensure_running() noexcept;

/// @brief The process is ending: stops the writer thread, writes every block recorded so far,
/// then the finish record `how`. Call once, after recording was switched off. Async-signal-safe.
void finish(recording::finish_reason how) noexcept;

/// @brief Before fork(): waits (at most 1 s) until a writer thread still starting reaches its
/// loop, where it allocates only under alloc_mutex().
void wait_until_started() noexcept;

/// @brief Held while a block is allocated or freed outside the recording path, and across fork().
[[nodiscard]] std::mutex& alloc_mutex() noexcept;

/// @brief In a forked child: the queue and the writer thread are the parent's; forget them.
void after_fork_in_child() noexcept;

}  // namespace nvtxpp::capture::writer
