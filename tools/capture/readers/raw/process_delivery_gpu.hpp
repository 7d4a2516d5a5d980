/// @file
/// @brief The GPU half of delivering a process (process_delivery.cpp): its CUPTI records, moved
/// onto the NVTX events' clock and tied to their launching calls, to the sinks.
#pragma once

#include "../../model/gpu_detail.hpp"
#include "../../model/graph_launches.hpp"
#include "../../model/graph_ranges.hpp"
#include "../../model/launch_index.hpp"
#include "process_delivery_context.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace nvtxpp::capture::detail {

/// Delivers a process's GPU records (kernels, copies, memsets, syncs, API calls, graph node
/// events, info records) and, at the end, the streams they ran on.
class gpu_delivery {
 public:
  gpu_delivery(delivery_context& ctx, graph_trace mode) : ctx_{ctx}, mode_{mode} {}

  /// Aligns the CUPTI clock on the NVTX events' (align_clock), then delivers every GPU record in
  /// file order; then the graph launches folded under graph_trace::graph, and a warning for
  /// the operations that no call of the recording launched.
  void deliver();

  /// The streams the delivered records ran on, named by the threads' name_resource events
  /// (`names`: CUPTI stream id -> name), so delivered after the threads.
  void deliver_streams(std::unordered_map<std::uint32_t, std::string> const& names);

  /// --cuda-sample: the periods with GPU detail, as ranges of the domain nvtxpp-capture
  /// (model/gpu_detail.hpp), a period still open ending at `end_ns`; and how many GPU records
  /// the edge rule left out. Nothing for a process recorded without sampling.
  void deliver_detail_periods(std::int64_t end_ns);

 private:
  std::int64_t align_clock();
  std::vector<rec::gpu_api> api_records(bool& all_driver_calls) const;
  void deliver_offset_info();
  void deliver_record(gpu_record_ref const& g, launch_index const& launches, bool all_driver_calls);

  // One handler per record kind (deliver_record dispatches).
  void on_kernel(gpu_record_ref const& g, launch_index const& launches);
  void on_memcpy(gpu_record_ref const& g, launch_index const& launches);
  void on_memset(gpu_record_ref const& g, launch_index const& launches);
  void on_sync(gpu_record_ref const& g);
  void on_api(gpu_record_ref const& g, launch_index const& launches, bool all_driver_calls);
  void on_graph_node(gpu_record_ref const& g);
  void on_info(gpu_record_ref const& g);
  void warn_for_info(gpu_info const& i);

  void read_detail_periods();
  bool sampled_out(std::uint32_t correlation, launch_index const& launches);
  bool sampled_out(std::int64_t start);
  void deliver_graph_launches();
  void warn_unattributed();

  bool too_short(gpu_record_ref const& g, std::size_t want);
  bool bad_times(gpu_record_ref const& g, std::int64_t start, std::int64_t end);
  std::string_view gpu_string(std::uint32_t id) const;
  std::string_view demangled(std::uint32_t name_id, std::string_view name);
  void note_stream(std::uint32_t device, std::uint32_t context, std::uint32_t stream);
  template <class R>
  void shift(R& r) const noexcept;
  template <class R>
  bool attribute(R& raw, launch_index const& launches, int kind);
  template <class W>
  bool graph_tail(gpu_record_ref const& g, std::size_t body, W& w, graph_ranges::work_kind kind);
  template <class W>
  void deliver_work(gpu_record_ref const& g, W& w, graph_ranges::work_kind kind,
                    void (trace_sink::*to_sink)(W const&));

  delivery_context& ctx_;
  graph_trace mode_;
  std::int64_t offset_ = 0;                    // added to every CUPTI time (align_clock)
  std::string offset_text_;                    // its gpu info record, "" when there are no calls
  std::uint64_t unattributed_[3] = {0, 0, 0};  // kernels, copies, memsets with no launching call
  std::unordered_map<std::uint32_t, std::string> demangled_;  // by the kernel name's string id
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, int> streams_;
  graph_launches launches_;  // graph_trace::graph: node work folded per launch
  // --cuda-sample: the periods, the start of each API call by correlation id (the edge rule
  // keeps work whose launching call started in a period), the records it left out.
  gpu_detail_periods detail_;
  capture_window_spans window_;  // the capture window: calls outside it are not delivered
  std::unordered_map<std::uint32_t, std::int64_t> call_start_;
  std::uint64_t sampled_out_ = 0;
};

}  // namespace nvtxpp::capture::detail
