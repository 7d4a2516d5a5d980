/// @file
/// @brief The CUDA API call each thread is inside, shared between the flight recorder's two
/// halves: the injection library writes it from CUPTI's API callbacks into a shared mapping of
/// `nvtxpp-<pid>.calls`, the launcher reads it for its stacks reports (`--hang-timeout`,
/// `nvtxpp-capture stacks PID`). A call's activity record comes only after the call returns, so
/// a thread stuck in `cudaStreamSynchronize` is visible here and nowhere else.
///
/// Contract:
/// - **One writer a slot.** A thread claims a slot on its first CUDA call (a compare-and-swap
///   of its thread id into a free slot) and is the only one to write it until it ends; the
///   writer never waits.
/// - **Readers never see a torn slot.** Each slot is a sequence lock: its count is odd while the
///   owner writes; a reader copies the slot and keeps the copy only when the count was even and
///   unchanged. Every field is an atomic word stored with release and loaded with acquire (no
///   fences: ThreadSanitizer does not model them; on x86 these are plain moves), so a reader that
///   sees a new field also sees the odd count before it, and a reader in another process (or a
///   thread of this one) is well-defined.
/// - **Bounded.** `call_table_slots` slots (threads beyond them are counted in `full`, not
///   tracked); the two outermost calls of a thread are kept (a runtime call and the driver call
///   it makes), deeper ones only counted.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nvtxpp::recording {

inline constexpr char call_table_magic[8] = {'N', 'V', 'X', 'C', 'A', 'L', 'L', '1'};
/// @brief Threads tracked at once.
inline constexpr std::uint32_t call_table_slots = 1024;
/// @brief Calls kept per thread, outermost first.
inline constexpr std::uint32_t call_frames_kept = 2;
/// @brief Bytes of a kept function name (longer names are cut).
inline constexpr std::size_t call_name_bytes = 48;

/// @brief One call a thread is inside.
struct call_frame {
  std::atomic<std::int64_t> start_ticks;  ///< the recording clock (core.hpp now_ticks) at entry
  std::atomic<std::uint64_t> name[call_name_bytes / 8];  ///< the function's name, NUL-padded
};

/// @brief One thread's slot.
struct alignas(64) call_slot {
  std::atomic<std::uint64_t> tid;    ///< the owner's thread id (gettid); 0: free
  std::atomic<std::uint32_t> seq;    ///< odd while the owner writes
  std::atomic<std::uint32_t> depth;  ///< calls the thread is inside now
  call_frame frame[call_frames_kept];
};
static_assert(sizeof(call_slot) == 128);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

/// @brief The table's header, at the start of its region.
struct alignas(64) call_table_header {
  char magic[8];
  std::uint32_t slots;
  std::uint32_t slot_bytes;
  std::atomic<std::uint64_t> full;  ///< threads that found no free slot
};

/// @brief Bytes of a table's region.
[[nodiscard]] constexpr std::size_t call_table_bytes() noexcept {
  return sizeof(call_table_header) + std::size_t{call_table_slots} * sizeof(call_slot);
}

/// @brief The slots that follow `h`.
[[nodiscard]] inline call_slot* call_slots(call_table_header* h) noexcept {
  return reinterpret_cast<call_slot*>(h + 1);
}

/// @brief Formats a zeroed region as an empty table.
inline call_table_header* make_call_table(void* region) noexcept {
  auto* h = new (region) call_table_header{};
  h->slots = call_table_slots;
  h->slot_bytes = sizeof(call_slot);
  for (std::uint32_t i = 0; i < call_table_slots; ++i) {
    new (call_slots(h) + i) call_slot{};
  }
  for (std::size_t i = 0; i < sizeof h->magic; ++i) {
    h->magic[i] = call_table_magic[i];  // last: a reader sees a complete header or none
  }
  return h;
}

/// @brief The owner entered a call (`name`, at `start_ticks`). `same_name`: frame `depth`
/// already holds this name (the owner's cache), so only the time is written.
inline void call_enter(call_slot& s, char const* name, std::int64_t start_ticks,
                       bool same_name) noexcept {
  std::uint32_t const seq = s.seq.load(std::memory_order_relaxed);
  std::uint32_t const d = s.depth.load(std::memory_order_relaxed);
  s.seq.store(seq + 1, std::memory_order_relaxed);
  if (d < call_frames_kept) {
    call_frame& f = s.frame[d];
    f.start_ticks.store(start_ticks, std::memory_order_release);
    if (!same_name) {
      std::size_t n = 0;
      for (auto& word : f.name) {
        std::uint64_t w = 0;
        for (std::size_t b = 0; b < 8; ++b) {
          char const c = (name != nullptr && n < call_name_bytes - 1) ? name[n] : '\0';
          if (c == '\0') {
            name = nullptr;  // the rest is padding
          } else {
            ++n;
          }
          w |= static_cast<std::uint64_t>(static_cast<unsigned char>(c)) << (8 * b);
        }
        word.store(w, std::memory_order_release);
      }
    }
  }
  s.depth.store(d + 1, std::memory_order_release);
  s.seq.store(seq + 2, std::memory_order_release);
}

/// @brief The owner returned from its innermost call.
inline void call_exit(call_slot& s) noexcept {
  std::uint32_t const seq = s.seq.load(std::memory_order_relaxed);
  std::uint32_t const d = s.depth.load(std::memory_order_relaxed);
  s.seq.store(seq + 1, std::memory_order_relaxed);
  s.depth.store(d > 0 ? d - 1 : 0, std::memory_order_release);
  s.seq.store(seq + 2, std::memory_order_release);
}

/// @brief Forgets the calls the slot's thread was inside: their exits will never be seen (the
/// callbacks that follow them changed). Written by the slot's own thread only.
inline void call_reset(call_slot& s) noexcept {
  std::uint32_t const seq = s.seq.load(std::memory_order_relaxed);
  s.seq.store(seq + 1, std::memory_order_relaxed);
  s.depth.store(0, std::memory_order_release);
  s.seq.store(seq + 2, std::memory_order_release);
}

/// @brief What a reader copied of one thread inside a call.
struct call_state {
  std::uint64_t tid = 0;
  std::uint32_t depth = 0;  ///< calls the thread is inside (may exceed the frames kept)
  struct frame {
    std::string name;
    std::int64_t start_ticks = 0;  ///< the process's recording clock: the reader maps it to ns
  };
  std::vector<frame> frames;  ///< outermost first, at most call_frames_kept
};

/// @brief Copies every thread that is inside a call now from a mapped table of `size` bytes.
/// A slot that stayed busy through every retry is left out. Empty when the region is not a
/// complete table.
[[nodiscard]] std::vector<call_state> read_call_table(void const* region, std::size_t size);

}  // namespace nvtxpp::recording
