/// @file
/// @brief The thread half of delivering a process (process_delivery.cpp): each thread's NVTX
/// events, in order, to the sinks as ranges, marks, counter samples and resource names.
#pragma once

#include "../../model/heap_usage.hpp"
#include "process_delivery_context.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nvtxpp::capture::detail {

/// Delivers the threads' events one thread after another. A start/end range may end on a thread
/// read before its start's, and push/pop ranges may be left open: those are held until
/// close_open() at the process's end.
class thread_delivery {
 public:
  explicit thread_delivery(delivery_context& ctx) : ctx_{ctx} {}

  /// Delivers one thread's events (`pieces`), in order.
  void deliver(std::uint64_t tid, std::vector<rec::stream_piece> const& pieces);

  /// The heaps' bytes in use as counter samples, once every thread's memory calls are in.
  void deliver_heap_usage();

  /// Latest event time over the threads delivered (min() when there was none).
  [[nodiscard]] std::int64_t last_ns() const noexcept { return last_ns_; }

  /// Closes the ranges still open at the process's end (`end_ns`), with warnings, and warns of
  /// the ends whose range never started.
  void close_open(std::int64_t end_ns);

  /// CUDA stream names given by name_resource events, by CUPTI stream id.
  [[nodiscard]] std::unordered_map<std::uint32_t, std::string> const& stream_names()
      const noexcept {
    return stream_names_;
  }

 private:
  struct open_range {
    std::int64_t start_ns = 0;
    std::string name;
    rec::raw_event attrs;  // colour, category, payload (text not kept: see `name`)
    int depth = 0;
    std::uint64_t tid = 0;
  };

  /// One thread's state while its events are delivered.
  struct thread_state {
    std::uint64_t tid = 0;
    std::int64_t last = std::numeric_limits<std::int64_t>::min();  // latest event time so far
    std::map<std::uint32_t, std::vector<open_range>> stacks;       // push/pop ranges by domain
  };

  void on_event(rec::raw_event const& r, thread_state& t);
  void warn_flags(rec::raw_event const& r, std::uint64_t tid);
  void on_push(rec::raw_event const& r, thread_state& t);
  void on_pop(rec::raw_event const& r, thread_state& t);
  void on_start(rec::raw_event const& r, thread_state const& t);
  void on_end(rec::raw_event const& r, thread_state const& t);
  void on_counter_sample(rec::raw_event const& r, thread_state const& t);
  void on_memory(rec::raw_event const& r, thread_state const& t);
  void on_name_resource(rec::raw_event const& r, thread_state const& t);

  [[nodiscard]] std::string message_of(rec::raw_event const& r) const;
  event_attributes attributes(rec::raw_event const& a);
  void deliver_range(open_range const& r, range_style style, std::int64_t end_ns,
                     std::uint64_t end_tid, std::uint64_t id, bool unterminated);
  void deliver_mark(rec::raw_event const& r, mark_kind kind, std::string_view name, std::int64_t ns,
                    std::uint64_t tid);

  delivery_context& ctx_;
  std::int64_t last_ns_ = std::numeric_limits<std::int64_t>::min();
  std::vector<open_range> leftovers_;           // push/pop ranges open at their thread's end
  std::map<std::uint64_t, open_range> starts_;  // start/end ranges not ended yet, by id
  // Ends read before their start (on a thread read earlier): time and thread, by id.
  std::map<std::uint64_t, std::pair<std::int64_t, std::uint64_t>> pending_ends_;
  std::unordered_map<std::uint64_t, std::string> sync_names_;
  std::unordered_map<std::uint32_t, std::string> stream_names_;
  heap_usage heaps_;  // NVTX memory heaps' bytes in use (model/heap_usage.hpp)
};

}  // namespace nvtxpp::capture::detail
