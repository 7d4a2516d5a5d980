/// @file
/// @brief The injection library's side of the flight recorder (--flight-recorder): the process's
/// events go to a ring (tools/recording/ring.hpp) in a shared mapping of
/// $NVTXPP_CAPTURE_DIR/nvtxpp-<pid>.ring instead of the capture file, so the launcher can read
/// the most recent window at any time, also after the process died (SIGKILL included: the
/// mapping's pages belong to the file). Names and the process's other definitions (bounded by
/// what the program registers) still go to the capture file, which then holds no events.
#pragma once

#include "../common/flight_requests.hpp"

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

namespace nvtxpp::capture::flight {

/// @brief Starts the flight recorder when NVTXPP_FLIGHT_BYTES asks for one (once per process;
/// again in a forked child, with a ring of its own). @return whether events go to a ring
bool start() noexcept;

/// @brief Holds a shared lock on directory `dir` (null or empty: none) for the life of the
/// process, so that the launcher's clean-up of killed runs leaves it alone while in use.
void hold_dir(char const* dir) noexcept;

/// @brief Maps `nvtxpp-<pid><suffix>` (`size` bytes, sparse, zeroed) shared, where the ring
/// goes: in $NVTXPP_FLIGHT_DIR with a link in the capture directory, else in the capture
/// directory. Says why on stderr and returns nullptr when it cannot.
[[nodiscard]] void* map_shared_file(char const* suffix, std::size_t size) noexcept;

/// @brief Whether this process records into a ring.
[[nodiscard]] bool active() noexcept;

/// @brief Takes one capture-file record (`parts[0]` its 8-byte head) when it is an event
/// (stream blocks, clock points, GPU activity): appended to the ring. Async-signal-safe.
/// @return false when the record belongs in the capture file (names, definitions, the end)
bool take_record(std::uint32_t kind, iovec const* parts, int count) noexcept;

/// @brief Takes what a batch of whole records holds for the ring, and writes the rest with
/// `to_file`. Async-signal-safe when `to_file` is.
void take_batch(unsigned char const* data, std::size_t size,
                void (*to_file)(void const* data, std::size_t size) noexcept) noexcept;

/// @brief The launcher's pending flush request (its count), or 0 when it has none; `gpu` tells
/// whether it wants CUPTI's records too, `raise` whether GPU recording is to be raised
/// (flight_requests.hpp; the flags are taken: cleared for the next request).
[[nodiscard]] std::uint64_t pending_request(bool* gpu, bool* raise) noexcept;

/// @brief Says request `n` was answered (every partly filled block is in the ring).
void answer(std::uint64_t n) noexcept;

/// @brief In a forked child: leaves the parent's ring and opens one of its own.
void after_fork_in_child() noexcept;

}  // namespace nvtxpp::capture::flight
