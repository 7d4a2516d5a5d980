// Delivering a process: a read process file's events, in order, to the sinks
// (trace_model_internal.hpp). The process's own records are delivered here; its GPU records by
// gpu_delivery (process_delivery_gpu.hpp), its threads' events by thread_delivery
// (process_delivery_threads.hpp), both through one delivery_context.

#include "process_delivery_context.hpp"
#include "process_delivery_gpu.hpp"
#include "process_delivery_threads.hpp"
#include "trace_model_internal.hpp"

#include <fmt/format.h>

#include <limits>
#include <set>
#include <utility>

namespace nvtxpp::capture::detail {

namespace {

/// The order of delivery (trace_model.hpp): the process and its definitions, its GPU records,
/// its threads' events, then what only the end can close.
class process_reader {
 public:
  process_reader(process_file& pf, std::vector<trace_sink*> const& sinks, read_totals& totals,
                 std::size_t max_warnings, graph_trace graphs)
      : ctx_{pf, sinks, totals, max_warnings}, gpu_{ctx_, graphs}, threads_{ctx_} {}

  void run() {
    end_ns_ = ctx_.pf.finished ? ctx_.pf.finish_ns : std::numeric_limits<std::int64_t>::min();
    begin_process();
    deliver_definitions();
    deliver_thread_infos();
    gpu_.deliver();  // before the ranges: graph_ranges places node work as the ranges stream
    for (auto const& [tid, pieces] : ctx_.pf.pieces) {
      threads_.deliver(tid, pieces);
    }
    threads_.deliver_heap_usage();
    settle_end();
    threads_.close_open(end_ns_);
    gpu_.deliver_detail_periods(end_ns_);
    ctx_.graphs.finish(
        ctx_.pid,
        [&](graph_range_info const& g) { ctx_.each([&](trace_sink& s) { s.on_graph_range(g); }); },
        [&](std::string text) { ctx_.warn("graph_node", std::move(text)); });
    gpu_.deliver_streams(threads_.stream_names());  // last: the threads' events name them
    end_process();
  }

 private:
  void begin_process() {
    info_.pid = ctx_.pid;
    info_.ppid = ctx_.pf.header.ppid;
    info_.command = ctx_.pf.command;
    info_.path = ctx_.pf.path;
    if (!ctx_.pf.rank_label.empty()) {
      // One rank of a launch whose processes share this trace (torchrun's under one capture).
      info_.title = fmt::format("{}: {} (pid {})", ctx_.pf.rank_label,
                                info_.command.empty() ? "process" : info_.command, info_.pid);
    }
    info_.start_ns = ctx_.pf.header.ns0;
    ctx_.each([&](trace_sink& s) { s.begin_process(info_); });
  }

  /// Domains, categories (each naming in time), schemas and counters, and the warnings of the
  /// definition records that could not be read.
  void deliver_definitions() {
    auto const& names = ctx_.pf.names;
    for (std::uint32_t i = 0; i < names.domains.size(); ++i) {
      domain_info const d{ctx_.pid, i, names.domains[i]};
      ctx_.each([&](trace_sink& s) { s.on_domain(d); });
    }
    for (auto const& [key, history] : names.category_names) {
      for (auto const& [ticks, sid] : history) {
        category_info const c{ctx_.pid, key.first, key.second, sane_ns(ctx_.clock.to_ns(ticks)),
                              names.string_at(sid)};
        ctx_.each([&](trace_sink& s) { s.on_category(c); });
      }
    }
    for (auto& w : ctx_.pf.record_warnings) {
      ctx_.warn("malformed", std::move(w));
    }
    for (auto const& [key, sd] : names.schemas) {
      schema_info const si{ctx_.pid, &sd};
      ctx_.each([&](trace_sink& s) { s.on_schema(si); });
    }
    for (auto const& [key, c] : names.counters) {
      counter_info const ci{ctx_.pid, names.domain_at(c.domain), &c};
      ctx_.each([&](trace_sink& s) { s.on_counter(ci); });
    }
  }

  /// Every thread with events or a name, with its latest name.
  void deliver_thread_infos() {
    auto const& names = ctx_.pf.names;
    std::set<std::uint64_t> tids;
    for (auto const& [tid, pieces] : ctx_.pf.pieces) {
      tids.insert(tid);
    }
    for (auto const& [tid, history] : names.thread_names) {
      tids.insert(tid);
    }
    for (auto tid : tids) {
      thread_info t{ctx_.pid, tid, {}, false};
      if (auto it = names.thread_names.find(tid);
          it != names.thread_names.end() && !it->second.empty()) {
        t.name = names.string_at(it->second.back().second);
        t.named = true;
      }
      ctx_.each([&](trace_sink& s) { s.on_thread(t); });
    }
  }

  /// A process that did not flush ends at its last recorded event.
  void settle_end() {
    if (end_ns_ != std::numeric_limits<std::int64_t>::min()) {
      return;
    }
    auto const last = threads_.last_ns();
    end_ns_ = last == std::numeric_limits<std::int64_t>::min() ? ctx_.pf.header.ns0 : last;
    ctx_.warn("process", fmt::format("process {} ended without flushing (killed?); its trace ends "
                                     "at its last recorded event",
                                     ctx_.pid));
  }

  void end_process() {
    info_.end_ns = end_ns_;
    info_.finished = ctx_.pf.finished;
    info_.killed =
        ctx_.pf.finished && ctx_.pf.how == static_cast<std::int32_t>(rec::finish_reason::signal);
    ctx_.each([&](trace_sink& s) { s.end_process(info_); });
    ++ctx_.totals.processes;
  }

  delivery_context ctx_;  // first: the two halves hold it
  gpu_delivery gpu_;
  thread_delivery threads_;
  process_info info_;
  std::int64_t end_ns_ = 0;
};

}  // namespace

void deliver_process(process_file& pf, std::vector<trace_sink*> const& sinks, read_totals& totals,
                     std::size_t max_warnings, graph_trace graphs) {
  process_reader{pf, sinks, totals, max_warnings, graphs}.run();
}

}  // namespace nvtxpp::capture::detail
