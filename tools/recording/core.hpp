/// @file
/// @brief The recorder core shared by nvtxpp::testing and nvtxpp-capture: NVTX callbacks that
/// append every call to a per-thread stream (format.hpp), and the tables of names they refer to.
///
/// A front end sets its hooks (what to do with a full block, a thread that exits, a new name),
/// then hands NVTX's export-table getter to `attach`.
#pragma once

#include "decode/decode.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace nvtxpp::recording {

/// @brief Usable bytes of one stream block.
inline constexpr std::uint32_t chunk_capacity = 64 * 1024 - 64;

/// @brief One block of a thread's stream. `used` is published with release order after the
/// bytes are written, so a reader that loads it with acquire order may read data[0, used).
struct thread_state;
struct chunk {
  std::atomic<std::uint32_t> used{0};
  std::atomic<chunk*> next{nullptr};
  // Capture front end: a full block handed to the writer thread.
  thread_state* owner = nullptr;  ///< the thread that filled it
  std::uint32_t seq = 0;          ///< its place in the owner's stream (0, 1, 2, ...)
  std::uint32_t start = 0;        ///< bytes already written before it was handed over
  chunk* queued_next = nullptr;   ///< next block in the writer's queue or a free list
  // Capture front end: its list of every block it holds (see block_writer.cpp).
  chunk* listed_prev = nullptr;
  chunk* listed_next = nullptr;
  unsigned char data[chunk_capacity];
};
static_assert(sizeof(chunk) <= 64 * 1024);

/// @brief Depth counters kept per thread (domains beyond this share slots; only the value NVTX
/// returns from push/pop is affected, decoded depths are exact).
inline constexpr std::uint32_t depth_slots = 64;

/// @brief Recording state of one thread. The owner thread alone writes the hot fields.
struct thread_state {
  // Hot: touched on every event by the owner thread.
  chunk* cur = nullptr;
  std::uint32_t used = 0;
  std::uint32_t index = 0;
  std::uint32_t gated_n = 0;  ///< capture windows: entries of `gated` (pops look when not 0)
  std::uint64_t next_range = 0;
  std::int64_t last_ticks = 0;  ///< ticks of the last record in `cur` (0 at a block's start)
  int depth[depth_slots] = {};
  // Cold.
  std::uint64_t tid = 0;
  std::uint32_t pid = 0;
  std::atomic<chunk*> current{nullptr};  ///< `cur`, published for readers
  chunk* head = nullptr;                 ///< testing: first block not yet cleared
  std::uint32_t head_offset = 0;         ///< testing: bytes of `head` already cleared
  std::uint32_t flushed = 0;             ///< capture: bytes of `cur` already written to disk
  std::atomic<bool> flushing{false};     ///< capture: a flush of this thread is in progress
  std::atomic<bool> exited{false};       ///< the thread has exited
  // Capture front end: blocks in flight between this thread and the writer thread.
  std::uint32_t seq = 0;                  ///< sequence number of `cur`
  std::atomic<std::uint32_t> blocks{1};   ///< blocks this thread owns (the writer adds some)
  std::atomic<bool> wants_block{false};   ///< no spare block left: the writer may add one
  chunk* spare = nullptr;                 ///< free blocks (owner only)
  std::uint32_t spares = 0;               ///< how many blocks `spare` holds (owner only)
  std::atomic<chunk*> returned{nullptr};  ///< blocks the writer has written and given back
  thread_state* next = nullptr;           ///< next registered thread (immutable once linked)
  /// Capture windows: push/pop ranges of this thread still open that began while the window was
  /// closed (not recorded: their pops are dropped), or that opened it (their pop closes it).
  struct gated_range {
    std::uint32_t slot;  ///< domain % depth_slots
    int depth;           ///< depth[slot] when pushed
    bool trigger;        ///< the range that opened the window (recorded)
  };
  static constexpr std::uint32_t max_gated = 32;
  gated_range gated[max_gated] = {};
  std::uint32_t gated_lost = 0;  ///< pushes past max_gated (their pops cannot be told apart)
};

/// @brief What a front end does at the moments the core cannot decide alone. Called outside
/// the hot path: a block filled up, a thread exits, a name was defined (under the names lock).
struct hooks {
  /// Must leave `t.cur` with room (t.used reset, or a new block) and publish `t.current`.
  void (*chunk_full)(thread_state& t) noexcept = nullptr;
  /// The block a thread starts with, or nullptr (unset: the core allocates it with new).
  chunk* (*new_chunk)() noexcept = nullptr;
  /// The owner thread is exiting; no event follows from it.
  void (*thread_exit)(thread_state& t) noexcept = nullptr;
  void (*string_defined)(std::uint32_t id, std::string const& text) noexcept = nullptr;
  void (*domain_defined)(std::uint32_t index, std::string const& name) noexcept = nullptr;
  void (*category_named)(std::uint32_t domain, std::uint32_t category, std::int64_t ticks,
                         std::uint32_t string_id) noexcept = nullptr;
  void (*thread_named)(std::uint64_t tid, std::int64_t ticks,
                       std::uint32_t string_id) noexcept = nullptr;
  /// A counter was registered (NVTX counters extension).
  void (*counter_defined)(counter_def const& c) noexcept = nullptr;
  /// A payload schema or enum was registered (NVTX payload extension).
  void (*schema_defined)(schema_def const& s) noexcept = nullptr;
};

/// @brief Installs the front end's hooks; call before `attach`.
void set_hooks(hooks const& h) noexcept;

/// @brief Fills NVTX's callback tables (modules CORE, CORE2, CUDA, CUDART, SYNC) with the
/// core's callbacks. `get_export_table` is NVTX's NvtxGetExportTableFunc_t.
/// @return 1 on success (NVTX's convention), 0 when NVTX offers no callback table
[[nodiscard]] int attach(void const* (*get_export_table)(std::uint32_t)) noexcept;

/// @brief Extension entry point body: fills the slots of the payload extension (schema and enum
/// registration, the nvtx*Payload event calls, nvtxDomainIsEnabled) and of the counters
/// extension (registration, samples, batches). `module_info` is NVTX's nvtxExtModuleInfo_t*.
/// @return 1
[[nodiscard]] int attach_extension(void* module_info) noexcept;

/// @brief True once `attach` succeeded.
[[nodiscard]] bool attached() noexcept;

/// @brief Switches event recording on or off (naming is tracked either way).
void set_recording(bool on) noexcept;

/// @brief Whether events are being recorded.
[[nodiscard]] bool recording() noexcept;

/// @brief Capture windows (nvtxpp-capture's --capture-range, --delay, ...). While gating is on
/// and the window closed, events are dropped at the cost of the flag test that `recording()`
/// already makes; a range begun inside a window is recorded whole (its end is kept after the
/// window closes), a range begun outside is not recorded at all (its end is dropped inside).
struct window_config {
  std::string trigger_range;   ///< NVTX range whose begin calls trigger_begin ("" none)
  std::string trigger_domain;  ///< its domain: "" the default domain, "*" any domain
  /// Set when the range is a pattern (`Train step *`, the front end's matcher): whether a range
  /// name matches it (trigger_range then holds the pattern's text, never compared). Asked once per
  /// interned text (registered strings: their ids are flagged) and for each inline message
  /// while the window waits for its trigger. Called under the names lock too: it must not
  /// call NVTX.
  bool (*trigger_range_matches)(std::string_view name) noexcept = nullptr;
  /// With a pattern: what every matching name starts with ("" when it starts with a wildcard),
  /// compared first so that most texts are settled without being measured.
  std::string trigger_range_prefix;
  /// Set when the domain is a pattern: whether a domain name matches it ("" the default
  /// domain), asked once per domain.
  bool (*trigger_domain_matches)(std::string_view name) noexcept = nullptr;
  /// The trigger range begins while the window is closed: the front end may open it (the range
  /// is then recorded, and its end calls trigger_end).
  void (*trigger_begin)() noexcept = nullptr;
  void (*trigger_end)() noexcept = nullptr;  ///< the range that opened the window ends
};

/// @brief Turns gating on with `c` (before `attach`); the window starts closed.
void set_window_config(window_config const& c);

/// @brief Whether the trigger range still calls trigger_begin (false once no window can open
/// again: a range named like the trigger then costs what any range outside the window does).
void set_trigger_armed(bool armed) noexcept;

/// @brief Opens or closes the window (any thread; ignored once recording was switched off).
void set_window(bool open) noexcept;

/// @brief NVTX domains to drop entirely: those `named` says yes to (`include` false) or those it
/// says no to (`include` true), asked once per domain as it is created (under the names lock:
/// it must not call NVTX); `default_named`: whether the default domain is among the names. Call
/// before `attach`.
void set_domain_filter(bool (*named)(std::string_view name) noexcept, bool default_named,
                       bool include);

/// @brief Current time in ticks (TSC cycles where invariant, else CLOCK_MONOTONIC ns).
[[nodiscard]] std::int64_t now_ticks() noexcept;

/// @brief CLOCK_MONOTONIC in nanoseconds.
[[nodiscard]] std::int64_t monotonic_ns() noexcept;

/// @brief A calibration point: the tick count and CLOCK_MONOTONIC ns of one instant, read as
/// close together as this machine allows. Of a few tries, the one whose two tick reads around
/// the clock read are nearest wins: a preemption between plain back-to-back reads would put the
/// point off by its whole length (seen: a recorder test 26 us off under load). Async-signal-safe.
struct clock_point {
  std::int64_t ticks = 0;
  std::int64_t ns = 0;
};
[[nodiscard]] clock_point read_clock_point() noexcept;

/// @brief The tick clock: whether it is the TSC, its start point and estimated rate.
struct tick_clock {
  bool tsc = false;
  std::int64_t ticks0 = 0;
  std::int64_t ns0 = 0;
  double ns_per_tick = 1.0;
};

/// @brief Calibrates the tick clock on first use (`start_estimate_ns`) and returns it.
[[nodiscard]] tick_clock const& clock() noexcept;

/// @brief Maps ticks to ns using the start point and a fresh calibration point (waiting, at
/// most once, until one is `min_baseline_ns` from the start).
[[nodiscard]] clock_map current_clock_map() noexcept;

/// @brief First registered thread (most recent first); the list is append-only and may be
/// walked without a lock, also from a signal handler.
[[nodiscard]] thread_state* threads() noexcept;

/// @brief Lock guarding the name tables and the testing front end's block lists.
[[nodiscard]] std::mutex& names_mutex() noexcept;

/// @brief Name tables; read or copy under `names_mutex()`.
[[nodiscard]] name_tables const& names() noexcept;

/// @brief Unlinks threads for which `drop` returns true (testing front end, under
/// `names_mutex()`; never used while a signal handler may walk the list). `drop` must free them.
void remove_threads(bool (*drop)(thread_state& t)) noexcept;

/// @brief In a forked child: forgets the parent's threads (their blocks belong to the parent)
/// so the child starts with fresh buffers.
void forget_threads_after_fork() noexcept;

}  // namespace nvtxpp::recording
