/// @file
/// @brief The launcher's watcher of the flight recorder's rings (offline side: it reads the
/// rings and definition files, never the program's memory): it follows each process's ring as
/// it fills, keeps every thread's open NVTX push/pop ranges, measures each range that ends
/// against the triggers (flight_triggers.hpp: `RANGE[@DOMAIN]>FACTORx` on the running median of
/// its earlier instances, `>DURATION`), and sees a hang (no range opened or closed anywhere for the
/// timeout while one is open). It decides nothing about dumps: the session asks it what happened.
/// It is also the one live reader of the rings: `nvtxpp-capture top` follows them through it
/// (set_sink: what it reads, delivered as the trace model's records).
#pragma once

#include "../../recording/decode/decode.hpp"
#include "../model/trace_model.hpp"
#include "flight_triggers.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nvtxpp::capture {

/// @brief A trigger firing: what to say, and where the instance that fired ended.
struct watch_firing {
  std::string text;           ///< one line for stderr: the trigger, the instance, why it fired
  std::uint32_t pid = 0;      ///< the process the instance ran in
  std::uint64_t tid = 0;      ///< the thread that began it
  std::int64_t start_ns = 0;  ///< its start and end (CLOCK_MONOTONIC ns, the rings' clock)
  std::int64_t end_ns = 0;
};

/// @brief What the watcher knows of one process it follows (for a live view's header).
struct watched_process {
  std::uint32_t pid = 0;
  std::string command;
  std::int64_t start_ns = 0;       ///< its recording's start (CLOCK_MONOTONIC ns)
  std::int64_t newest_ns = 0;      ///< its newest event read
  std::uint64_t ring_dropped = 0;  ///< records its ring refused (too large)
  std::uint64_t lapped_bytes = 0;  ///< ring bytes overwritten before this watcher read them
  std::uint64_t events = 0;        ///< stream events read
  bool finished = false;           ///< its definitions file holds its end record
};

/// @brief The watcher of one launch's rings.
class flight_watch {
 public:
  /// @param hang_ns 0: no hang watch
  flight_watch(std::string raw_dir, std::vector<watch_trigger> triggers, std::int64_t hang_ns);
  ~flight_watch();
  flight_watch(flight_watch const&) = delete;
  flight_watch& operator=(flight_watch const&) = delete;

  /// @brief Whether it must follow the rings all along (triggers or a hang timeout).
  [[nodiscard]] bool active() const noexcept { return !triggers_.empty() || hang_ns_ > 0; }
  /// @brief Whether it has followed every ring from its start without losing records (so it
  /// knows every open range).
  [[nodiscard]] bool following() const noexcept { return active() && !lost_; }

  /// @brief Reads what the rings and definition files gained since the last call.
  void poll(std::int64_t now_ns);

  /// @brief Trigger firings since the last call, oldest first.
  [[nodiscard]] std::vector<watch_firing> take_fired();
  /// @brief Records that a firing did not dump (`why`), for the closing notes.
  void note_skipped(watch_firing const& fired, std::string const& why);

  /// @brief Counts the hang as reported (by another rank of the job): hang_due() stays false.
  void mark_hang_reported() noexcept { hang_reported_ = true; }

  /// @brief True once per hang: no range opened or closed for the timeout while one is open.
  [[nodiscard]] bool hang_due(std::int64_t now_ns);

  /// @brief Every process's threads with their open ranges, outermost first, and how long each
  /// has been open at `now_ns`. `complete`: the watcher saw every range open (else the text says
  /// that ranges opened before the window are missing).
  [[nodiscard]] std::string stacks_report(std::int64_t now_ns, bool complete) const;

  /// @brief Notes for the end: triggers whose range never occurred, firings skipped.
  [[nodiscard]] std::vector<std::string> closing_notes() const;

  /// @brief A line naming the launch in reports ("rank 3"), or "".
  void set_label(std::string label) { label_ = std::move(label); }

  /// @brief Delivers what poll() reads to `sink` (null: nothing), as the trace model's records:
  /// begin_process (once its header and the definitions then written are read), on_domain,
  /// on_thread, on_range at each range's end (push/pop with its depth in its domain, start/end),
  /// and the GPU records (on_api, on_kernel, on_memcpy, on_memset, on_gpu_info) as they reach
  /// the ring, which may be after the ranges around them. Set before the first poll.
  void set_sink(trace_sink* sink) noexcept { sink_ = sink; }

  /// @brief Calls `fn` with each range open now (as known from what was read; `end_ns` set to
  /// `now_ns`, `unterminated` set), each thread's outermost first.
  void for_each_open(std::int64_t now_ns, void (*fn)(range_info const&, void*), void* ctx) const;

  /// @brief The processes followed so far.
  [[nodiscard]] std::vector<watched_process> processes() const;

 private:
  struct process;
  struct open_range;
  /// An event's name as its record gives it.
  struct event_name {
    recording::message_kind message;
    std::string_view text;
    std::uint32_t string_id;
  };
  /// A start or an end event.
  struct start_end {
    bool start;
    std::uint32_t domain;
    std::uint64_t id;
    event_name name;
  };
  /// A range event `e` at `ns`. (`stack`: thread `tid`'s open push/pop ranges, found once a
  /// chunk.)
  void on_event(process& p, std::uint64_t tid, std::vector<open_range>& stack,
                recording::raw_event const& e, std::int64_t ns);
  /// on_event's part for start/end ranges (`ns`: the event's time).
  void on_start_end(process& p, std::uint64_t tid, start_end const& e, std::int64_t ns);
  /// Delivers a range that `tid` ended (push/pop, or start/end begun by `start_tid`) and
  /// measures it against the triggers. (`r.depth`: a push/pop range's in its domain, -1 for a
  /// start/end range.)
  void range_ended(process& p, std::uint64_t tid, std::uint64_t start_tid, open_range const& r,
                   std::int64_t end_ns);
  /// range_ended for a pop on thread `tid` (in read_chunk, which set popped_'s thread).
  void popped(process& p, std::uint64_t tid, open_range const& r, std::int64_t end_ns);
  /// range_ended's part for the triggers.
  void measure(process const& p, std::uint64_t tid, std::uint64_t start_tid, open_range const& r,
               std::int64_t end_ns);
  /// Names `r` as event `e` does (its text, a registered string, or none).
  static void name_event(process const& p, event_name const& e, open_range& r);
  /// Delivers one GPU ring record (kind, body) to the sink.
  void deliver_gpu(std::uint32_t pid, std::uint32_t kind, unsigned char const* body,
                   std::uint32_t size);
  /// Reads what one process's definitions file and ring gained since the last call.
  void read_process(process& p);
  /// Reads the ring's records past those read: clock points and the threads' stream chunks.
  void read_ring(process& p);
  /// Decodes a chunk's new events (`size` bytes of body: chunk head, then stream) into on_event.
  void read_chunk(process& p, unsigned char const* body, std::uint32_t size);

  std::string raw_dir_;
  trigger_set triggers_;
  std::int64_t hang_ns_;
  std::map<std::uint32_t, std::unique_ptr<process>> processes_;
  std::vector<watch_firing> fired_;
  std::map<std::string, std::uint64_t> skipped_;
  std::int64_t last_activity_ns_ = 0;
  bool hang_reported_ = false;
  bool lost_ = false;
  std::string label_;
  trace_sink* sink_ = nullptr;
  range_info ended_;   ///< what range_ended delivers
  range_info popped_;  ///< what popped delivers
};

/// @brief `nvtxpp-capture stacks FILE...`: groups the ranks of per-rank stacks reports by what
/// their threads are inside, and names the ranks that differ from the rest.
[[nodiscard]] std::string group_stacks(std::vector<std::string> const& paths, bool& ok);

}  // namespace nvtxpp::capture
