// Delivering a process: a read process file's events, in order, to the sinks
// (trace_model_internal.hpp).

#include "graph_launches.hpp"
#include "graph_ranges.hpp"
#include "heap_usage.hpp"
#include "launch_index.hpp"
#include "trace_model_internal.hpp"

#include "kernel_names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>
#include <unordered_map>

namespace nvtxpp::capture::detail {

namespace {

using testing::event_type;

/// Demangled form of an Itanium-mangled name ("" when `name` is not one), as nsys writes it.
std::string demangle(std::string_view name) { return demangle_kernel_name(name); }

// ------------------------------------------------------------------------------------------------
// Delivering a process.

struct open_range {
  std::int64_t start_ns = 0;
  std::string name;
  rec::raw_event attrs;  // colour, category, payload (text not kept: see `name`)
  int depth = 0;
  std::uint64_t tid = 0;
};

class process_reader {
 public:
  process_reader(process_file& pf, std::vector<trace_sink*> const& sinks, read_totals& totals,
                 std::size_t max_warnings, graph_trace graphs)
      : pf_{pf}, sinks_{sinks}, totals_{totals}, max_warnings_{max_warnings}, mode_{graphs} {}

  void run() {
    pid_ = pf_.header.pid;
    clock_ = clock_for(pf_);
    info_.pid = pid_;
    info_.ppid = pf_.header.ppid;
    info_.command = pf_.command;
    info_.path = pf_.path;
    info_.start_ns = pf_.header.ns0;
    end_ns_ = pf_.finished ? pf_.finish_ns : std::numeric_limits<std::int64_t>::min();
    each([&](trace_sink& s) { s.begin_process(info_); });
    for (std::uint32_t i = 0; i < pf_.names.domains.size(); ++i) {
      domain_info const d{pid_, i, pf_.names.domains[i]};
      each([&](trace_sink& s) { s.on_domain(d); });
    }
    for (auto const& [key, history] : pf_.names.category_names) {
      for (auto const& [ticks, sid] : history) {
        category_info const c{pid_, key.first, key.second, sane_ns(clock_.to_ns(ticks)),
                              pf_.names.string_at(sid)};
        each([&](trace_sink& s) { s.on_category(c); });
      }
    }
    for (auto& w : pf_.record_warnings) {
      warn("malformed", std::move(w));
    }
    for (auto const& [key, sd] : pf_.names.schemas) {
      schema_info const si{pid_, &sd};
      each([&](trace_sink& s) { s.on_schema(si); });
    }
    for (auto const& [key, c] : pf_.names.counters) {
      counter_info const ci{pid_, pf_.names.domain_at(c.domain), &c};
      each([&](trace_sink& s) { s.on_counter(ci); });
    }
    std::set<std::uint64_t> tids;
    for (auto const& [tid, pieces] : pf_.pieces) {
      tids.insert(tid);
    }
    for (auto const& [tid, history] : pf_.names.thread_names) {
      tids.insert(tid);
    }
    for (auto tid : tids) {
      thread_info t{pid_, tid, {}, false};
      if (auto it = pf_.names.thread_names.find(tid);
          it != pf_.names.thread_names.end() && !it->second.empty()) {
        t.name = pf_.names.string_at(it->second.back().second);
        t.named = true;
      }
      each([&](trace_sink& s) { s.on_thread(t); });
    }
    gpu_offset_ = align_gpu_clock();
    gpu();
    std::vector<open_range> leftovers;
    for (auto const& [tid, pieces] : pf_.pieces) {
      thread(tid, pieces, leftovers);
    }
    heaps_.finish([&](heap_usage::sample const& h) {
      counter_sample_info const c{pid_,   h.tid, h.ns, h.domain, pf_.names.domain_at(h.domain),
                                  h.value};
      ++totals_.counter_samples;
      each([&](trace_sink& s) { s.on_counter_sample(c); });
    });
    if (end_ns_ == std::numeric_limits<std::int64_t>::min()) {
      end_ns_ = last_ns_ == std::numeric_limits<std::int64_t>::min() ? pf_.header.ns0 : last_ns_;
      warn("process", fmt::format("process {} ended without flushing (killed?); its trace ends "
                                  "at its last recorded event",
                                  pid_));
    }
    for (auto& r : leftovers) {
      warn("unterminated",
           fmt::format("pid {} thread {}: range \"{}\" still open at the end (closed there)", pid_,
                       r.tid, r.name));
      deliver_range(r, range_style::push_pop, std::max(end_ns_, r.start_ns), r.tid, 0, true);
    }
    for (auto& [id, r] : starts_) {
      warn("unterminated", fmt::format("pid {}: start/end range \"{}\" never ended (closed at "
                                       "the end)",
                                       pid_, r.name));
      deliver_range(r, range_style::start_end, std::max(end_ns_, r.start_ns), r.tid, id, true);
    }
    for (auto& [id, e] : pending_ends_) {
      warn("unknown_end",
           fmt::format("pid {} thread {}: end of unknown range id {:#x}", pid_, e.second, id));
    }
    graphs_.finish(
        pid_, [&](graph_range_info const& g) { each([&](trace_sink& s) { s.on_graph_range(g); }); },
        [&](std::string text) { warn("graph_node", std::move(text)); });
    for (auto const& [key, st] : streams_) {
      gpu_stream_info g{pid_, std::get<0>(key), std::get<1>(key), std::get<2>(key), {}};
      if (auto it = stream_names_.find(std::get<2>(key)); it != stream_names_.end()) {
        g.name = it->second;
      }
      each([&](trace_sink& s) { s.on_gpu_stream(g); });
    }
    info_.end_ns = end_ns_;
    info_.finished = pf_.finished;
    info_.killed = pf_.finished && pf_.how == static_cast<std::int32_t>(rec::finish_reason::signal);
    each([&](trace_sink& s) { s.end_process(info_); });
    ++totals_.processes;
  }

 private:
  template <class F>
  void each(F&& f) {
    for (auto* s : sinks_) {
      f(*s);
    }
  }

  void warn(char const* kind, std::string text) {
    ++totals_.warning_counts[kind];
    if (totals_.warnings.size() < max_warnings_) {
      totals_.warnings.push_back(text);
    }
    warning_info const w{kind, text};
    each([&](trace_sink& s) { s.on_warning(w); });
  }

  std::string_view gpu_string(std::uint32_t id) {
    auto it = pf_.gpu_strings.find(id);
    return it == pf_.gpu_strings.end() ? std::string_view{} : it->second;
  }

  void note_stream(std::uint32_t device, std::uint32_t context, std::uint32_t stream) {
    streams_.emplace(std::make_tuple(device, context, stream), 0);
  }

  /// Moves a CUPTI record's times by the process's alignment offset.
  template <class R>
  void shift(R& r) const noexcept {
    // Saturating and clamped: the times were checked to lie in [0, max_ns], the offset is not.
    auto const moved = [this](std::int64_t t) noexcept {
      std::int64_t out = 0;
      if (__builtin_add_overflow(t, gpu_offset_, &out)) {
        out = gpu_offset_ > 0 ? max_ns : 0;
      }
      return sane_ns(out);
    };
    r.start = moved(r.start);
    r.end = moved(r.end);
  }

  /// CUPTI stamps its records from its own reading of the clock, which can sit a few hundred
  /// nanoseconds off the NVTX events' (measured on the GPU machine: API calls starting 40 ns
  /// before the push of the range that made them). One rule holds between the two: a CUDA API
  /// call and an NVTX event of the same thread cannot overlap (the NVTX call happens before or
  /// after the API call, never during it). Each NVTX event near an API call of its thread
  /// bounds the offset: one nearer the call's start must precede it (offset >= event - start),
  /// one nearer its end must follow it (offset <= event - end). The offset applied to every
  /// CUPTI record of the process is 0 when 0 meets all bounds, else the smallest move that meets
  /// them (plus up to 50 ns of margin); bounds that contradict each other (an overlap no offset
  /// removes) are reported and nothing is moved. The result is reported as the gpu info
  /// `clock_offset_ns`.
  std::int64_t align_gpu_clock() {
    std::unordered_map<std::uint64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> calls;
    for (auto const& g : pf_.gpu) {
      if (g.kind == rec::gpu_record::api && g.size >= sizeof(rec::gpu_api)) {
        auto const a = rec::load<rec::gpu_api>(g.body);
        if (a.start >= 0 && a.end >= a.start && a.end <= max_ns) {  // as gpu() keeps them
          calls[a.tid].emplace_back(a.start, a.end);
        }
      }
    }
    if (calls.empty()) {
      return 0;
    }
    constexpr std::int64_t window = 5'000;  // NVTX events this near a call constrain the offset
    constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
    std::int64_t lo = -none;  // offset >= lo
    std::int64_t hi = none;   // offset <= hi
    std::size_t bounds = 0;
    for (auto& entry : calls) {
      auto const tid = entry.first;
      auto& list = entry.second;  // not a structured binding: lambdas below use it (C++17)
      auto const it = pf_.pieces.find(tid);
      if (it == pf_.pieces.end()) {
        continue;
      }
      std::sort(list.begin(), list.end());
      std::int64_t longest = 0;
      for (auto const& c : list) {
        longest = std::max(longest, c.second - c.first);
      }
      std::vector<std::string> ignored;
      std::int64_t last = std::numeric_limits<std::int64_t>::min();
      rec::for_each_record(
          it->second, tid,
          [&](rec::raw_event const& r) {
            last = std::max(last, sane_ns(clock_.to_ns(r.ticks)));
            std::int64_t const x = last;
            // Calls starting in [x - longest - window, x + window] may hold x in their window.
            auto c = std::lower_bound(
                list.begin(), list.end(), std::make_pair(x - longest - window, none),
                [](auto const& a, auto const& b) { return a.first < b.first; });
            for (; c != list.end() && c->first <= x + window; ++c) {
              if (x < c->first - window || x > c->second + window) {
                continue;
              }
              ++bounds;
              if (x - c->first < c->second - x) {
                lo = std::max(lo, x - c->first);
              } else {
                hi = std::min(hi, x - c->second);
              }
            }
          },
          ignored);
    }
    std::int64_t offset = 0;
    if (bounds == 0 || (lo <= 0 && 0 <= hi)) {
      offset = 0;
    } else if (lo <= hi) {
      std::int64_t const margin = std::min<std::int64_t>(50, (hi - lo) / 2);
      offset = lo > 0 ? lo + margin : hi - margin;
    } else {
      warn("clock_align",
           fmt::format("pid {}: an API call overlaps an NVTX event of its thread whatever the "
                       "offset (bounds {} ns and {} ns): GPU records left as CUPTI stamped them",
                       pid_, lo, hi));
    }
    gpu_offset_text_ = fmt::format("clock_offset_ns={}", offset);
    return offset;
  }

  /// Graph work: the gpu_graph_tail after the struct (cupti.cpp appends it), if any. Returns
  /// true when the work is folded into its launch (graph_trace::graph): not to be delivered.
  template <class G, class W>
  bool graph_tail(G const& g, std::size_t body, W& w, graph_ranges::work_kind kind) {
    if (g.size < body + sizeof(rec::gpu_graph_tail)) {
      return false;
    }
    auto const t = rec::load<rec::gpu_graph_tail>(g.body + body);
    w.graph_node = t.node;
    w.graph = t.graph;
    if (t.node == 0) {
      return false;
    }
    graphs_.on_work(kind, t.node, t.graph, w.raw.device, w.raw.context, w.raw.stream,
                    w.raw.correlation, w.raw.start, w.raw.end);
    if (mode_ != graph_trace::graph) {
      return false;
    }
    auto const folded = kind == graph_ranges::work_kind::kernel   ? graph_launches::work::kernel
                        : kind == graph_ranges::work_kind::memcpy ? graph_launches::work::memcpy
                                                                  : graph_launches::work::memset;
    launches_.add(pid_, folded, w.raw.correlation, t.graph, w.raw.device, w.raw.context,
                  w.raw.stream, w.raw.start, w.raw.end);
    note_stream(w.raw.device, w.raw.context, w.raw.stream);
    return true;
  }

  /// The process's API records, for launch_index; and whether the recording lists every driver
  /// call (--cuda-api=all, or a recording older than the `driver_api` info record) or only the
  /// driver calls that launch GPU work, where the runtime's own (nested) ones are left out.
  std::vector<rec::gpu_api> api_records(bool& all_driver_calls) const {
    std::vector<rec::gpu_api> calls;
    all_driver_calls = true;
    for (auto const& g : pf_.gpu) {
      if (g.kind == rec::gpu_record::api && g.size >= sizeof(rec::gpu_api)) {
        calls.push_back(rec::load<rec::gpu_api>(g.body));
      } else if (g.kind == rec::gpu_record::info) {
        std::string_view const text{reinterpret_cast<char const*>(g.body), g.size};
        if (text.rfind("driver_api=", 0) == 0) {
          all_driver_calls = text == "driver_api=all";
        }
      }
    }
    return calls;
  }

  /// Ties a GPU operation to its launching call (launch_index::launcher), counting those tied
  /// to none. Returns false for those.
  template <class R>
  bool attribute(R& raw, launch_index const& launches, int kind) {
    std::uint32_t const by = launches.launcher(raw.correlation);
    if (by == 0) {
      ++unattributed_[kind];
      ++totals_.unattributed[kind];
      return false;
    }
    raw.correlation = by;
    return true;
  }

  void gpu() {
    bool all_driver_calls = true;
    launch_index const launches{api_records(all_driver_calls)};
    std::unordered_map<std::uint32_t, std::string> demangled;
    if (!gpu_offset_text_.empty()) {
      std::string_view const text{gpu_offset_text_};
      gpu_info const i{pid_, text.substr(0, text.find('=')), text.substr(text.find('=') + 1)};
      each([&](trace_sink& s) { s.on_gpu_info(i); });
    }
    for (auto const& g : pf_.gpu) {
      auto bad = [&](std::size_t want) {
        if (g.size < want) {
          warn("gpu_record", fmt::format("pid {}: GPU record of kind {} too short ({} bytes)", pid_,
                                         static_cast<unsigned>(g.kind), g.size));
          return true;
        }
        return false;
      };
      // Times are CLOCK_MONOTONIC ns: a negative start or an end before the start is damage,
      // and would make the sinks' durations negative (or overflow).
      auto bad_times = [&](std::int64_t start, std::int64_t end) {
        if (start < 0 || end < start || end > max_ns) {
          warn("gpu_record",
               fmt::format("pid {}: GPU record of kind {} has start {} and end {}: skipped", pid_,
                           static_cast<unsigned>(g.kind), start, end));
          return true;
        }
        return false;
      };
      switch (g.kind) {
        case rec::gpu_record::kernel: {
          if (bad(sizeof(rec::gpu_kernel))) {
            break;
          }
          kernel_info k{pid_, rec::load<rec::gpu_kernel>(g.body), {}, {}};
          if (bad_times(k.raw.start, k.raw.end)) {
            break;
          }
          shift(k.raw);
          attribute(k.raw, launches, 0);
          k.name = gpu_string(k.raw.name);
          auto [it, fresh] = demangled.try_emplace(k.raw.name);
          if (fresh) {
            it->second = demangle(k.name);
          }
          k.demangled = it->second.empty() ? k.name : std::string_view{it->second};
          if (graph_tail(g, sizeof k.raw, k, graph_ranges::work_kind::kernel)) {
            break;
          }
          note_stream(k.raw.device, k.raw.context, k.raw.stream);
          ++totals_.gpu_ops;
          each([&](trace_sink& s) { s.on_kernel(k); });
          break;
        }
        case rec::gpu_record::memcpy: {
          if (bad(sizeof(rec::gpu_memcpy))) {
            break;
          }
          memcpy_info m{pid_, rec::load<rec::gpu_memcpy>(g.body)};
          if (bad_times(m.raw.start, m.raw.end)) {
            break;
          }
          shift(m.raw);
          if (rec::is_migration(m.raw.copy_kind)) {
            ++totals_.migrations;  // no launching call, by nature: not unattributed
          } else {
            attribute(m.raw, launches, 1);
          }
          if (graph_tail(g, sizeof m.raw, m, graph_ranges::work_kind::memcpy)) {
            break;
          }
          note_stream(m.raw.device, m.raw.context, m.raw.stream);
          ++totals_.gpu_ops;
          each([&](trace_sink& s) { s.on_memcpy(m); });
          break;
        }
        case rec::gpu_record::memset: {
          if (bad(sizeof(rec::gpu_memset))) {
            break;
          }
          memset_info m{pid_, rec::load<rec::gpu_memset>(g.body)};
          if (bad_times(m.raw.start, m.raw.end)) {
            break;
          }
          shift(m.raw);
          attribute(m.raw, launches, 2);
          if (graph_tail(g, sizeof m.raw, m, graph_ranges::work_kind::memset)) {
            break;
          }
          note_stream(m.raw.device, m.raw.context, m.raw.stream);
          ++totals_.gpu_ops;
          each([&](trace_sink& s) { s.on_memset(m); });
          break;
        }
        case rec::gpu_record::sync: {
          if (bad(sizeof(rec::gpu_sync))) {
            break;
          }
          sync_info m{pid_, rec::load<rec::gpu_sync>(g.body)};
          if (bad_times(m.raw.start, m.raw.end)) {
            break;
          }
          shift(m.raw);
          each([&](trace_sink& s) { s.on_sync(m); });
          break;
        }
        case rec::gpu_record::api: {
          if (bad(sizeof(rec::gpu_api))) {
            break;
          }
          api_info a{pid_, rec::load<rec::gpu_api>(g.body), {}};
          if (bad_times(a.raw.start, a.raw.end)) {
            break;
          }
          a.nested = launches.nested(a.raw);
          if (a.nested && !all_driver_calls) {
            break;  // a launch function the runtime called: its call is the runtime's
          }
          shift(a.raw);
          a.name = gpu_string(a.raw.name);
          graphs_.on_api(a.raw);
          ++totals_.api_calls;
          each([&](trace_sink& s) { s.on_api(a); });
          break;
        }
        case rec::gpu_record::graph_node: {
          if (!bad(sizeof(rec::gpu_graph_node))) {
            auto const e = rec::load<rec::gpu_graph_node>(g.body);
            graphs_.on_node_event(e, sane_ns(clock_.to_ns(e.ticks)));
          }
          break;
        }
        case rec::gpu_record::info: {
          std::string_view const text{reinterpret_cast<char const*>(g.body), g.size};
          auto const eq = text.find('=');
          gpu_info const i{pid_, text.substr(0, eq),
                           eq == std::string_view::npos ? std::string_view{} : text.substr(eq + 1)};
          if (i.key == "dropped" && i.value != "0") {
            warn("gpu_dropped",
                 fmt::format("pid {}: CUPTI dropped {} GPU activity record(s) (buffers full)", pid_,
                             i.value));
          } else if (i.key == "in_flight" && i.value != "0") {
            warn("gpu_in_flight",
                 fmt::format("pid {}: {} GPU operation(s) still running at a live dump are in no "
                             "trace (CUPTI hands them out once, without their end)",
                             pid_, i.value));
          } else if (i.key == "cupti" && i.value.rfind("unavailable", 0) == 0) {
            warn("gpu_unavailable",
                 fmt::format("pid {}: no GPU activity recorded: CUPTI {}", pid_, i.value));
          } else if (i.key == "unified_memory" && i.value.rfind("unavailable", 0) == 0) {
            warn("um_unavailable",
                 fmt::format("pid {}: unified memory migrations not recorded: CUPTI {}", pid_,
                             i.value));
          }
          each([&](trace_sink& s) { s.on_gpu_info(i); });
          break;
        }
        default:
          break;
      }
    }
    launches_.finish([&](graph_launch_info const& l) {
      ++totals_.graph_launches;
      each([&](trace_sink& s) { s.on_graph_launch(l); });
    });
    if (std::uint64_t const n = unattributed_[0] + unattributed_[1] + unattributed_[2]; n != 0) {
      warn("gpu_unattributed",
           fmt::format("pid {}: {} GPU operation(s) with no launching CUDA API call in the "
                       "recording ({} kernel(s), {} copy(ies), {} memset(s)): kept in the trace, "
                       "under no NVTX range",
                       pid_, n, unattributed_[0], unattributed_[1], unattributed_[2]));
    }
  }

  std::string message_of(rec::raw_event const& r) const {
    if (r.flags & rec::flag::null_message) {
      return "(null)";
    }
    if (r.message == rec::message_kind::inline_text) {
      return std::string{r.text};
    }
    if (r.message == rec::message_kind::string_id) {
      return pf_.names.string_at(r.string_id);
    }
    return {};
  }

  event_attributes attributes(rec::raw_event const& a) {
    event_attributes e;
    e.domain = a.domain;
    e.domain_name = pf_.names.domain_at(a.domain);
    e.has_color = (a.flags & rec::flag::has_color) != 0;
    e.color = a.color;
    e.category = a.category;
    if (a.category != 0) {
      e.category_name = pf_.names.category_at(a.domain, a.category, a.ticks);
    }
    e.payload_type = a.payload_type;
    e.payload_bits = a.payload_bits;
    e.registered = (a.flags & rec::flag::registered) != 0;
    e.truncated = (a.flags & rec::flag::truncated) != 0;
    e.null_message = (a.flags & rec::flag::null_message) != 0;
    if (!a.blob.empty()) {
      std::vector<std::string> problems;
      e.payloads = rec::decode_payloads(a.blob, a.domain, pf_.names, problems);
      for (auto& w : problems) {
        warn("payload", fmt::format("pid {}: {}", pid_, w));
      }
    }
    return e;
  }

  void deliver_range(open_range const& r, range_style style, std::int64_t end_ns,
                     std::uint64_t end_tid, std::uint64_t id, bool unterminated) {
    range_info info;
    info.pid = pid_;
    info.style = style;
    info.tid = r.tid;
    info.end_tid = end_tid;
    info.start_ns = r.start_ns;
    info.end_ns = std::max(end_ns, r.start_ns);
    info.id = id;
    info.depth = r.depth;
    info.unterminated = unterminated;
    info.name = r.name;
    info.attr = attributes(r.attrs);
    ++totals_.ranges;
    graphs_.on_range(info);
    each([&](trace_sink& s) { s.on_range(info); });
  }

  void deliver_mark(rec::raw_event const& r, mark_kind kind, std::string_view name, std::int64_t ns,
                    std::uint64_t tid) {
    mark_info m;
    m.pid = pid_;
    m.tid = tid;
    m.ns = ns;
    m.kind = kind;
    m.handle = r.id;
    m.name = name;
    m.attr = attributes(r);
    ++totals_.marks;
    each([&](trace_sink& s) { s.on_mark(m); });
  }

  static mark_kind sync_kind(event_type t) {
    switch (t) {
      case event_type::sync_create:
        return mark_kind::sync_create;
      case event_type::sync_destroy:
        return mark_kind::sync_destroy;
      case event_type::sync_acquire_start:
        return mark_kind::sync_acquire_start;
      case event_type::sync_acquire_failed:
        return mark_kind::sync_acquire_failed;
      case event_type::sync_acquire_success:
        return mark_kind::sync_acquire_success;
      default:
        return mark_kind::sync_releasing;
    }
  }

  void thread(std::uint64_t tid, std::vector<rec::stream_piece> const& pieces,
              std::vector<open_range>& leftovers) {
    std::map<std::uint32_t, std::vector<open_range>> stacks;  // by domain
    std::int64_t last = std::numeric_limits<std::int64_t>::min();
    std::vector<std::string> decode_warnings;
    rec::for_each_record(
        pieces, tid,
        [&](rec::raw_event const& r) {
          last = std::max(last, sane_ns(clock_.to_ns(r.ticks)));
          last_ns_ = std::max(last_ns_, last);
          if (r.flags & rec::flag::null_message) {
            warn("null_message", fmt::format("pid {} thread {}: null message passed to {}", pid_,
                                             tid, testing::to_string(r.type)));
          }
          if (r.flags & rec::flag::truncated) {
            warn("truncated",
                 fmt::format("pid {} thread {}: message longer than {} bytes "
                             "truncated ({})",
                             pid_, tid, testing::max_message_bytes, testing::to_string(r.type)));
          }
          switch (r.type) {
            case event_type::push: {
              auto& stack = stacks[r.domain];
              open_range o;
              o.start_ns = last;
              o.name = message_of(r);
              o.attrs = r;
              o.attrs.text = {};
              o.depth = static_cast<int>(stack.size());
              o.tid = tid;
              stack.push_back(std::move(o));
              break;
            }
            case event_type::pop: {
              auto& stack = stacks[r.domain];
              if (stack.empty()) {
                warn("unbalanced_pop", fmt::format("pid {} thread {}: pop without a matching "
                                                   "push in domain \"{}\"",
                                                   pid_, tid, pf_.names.domain_at(r.domain)));
                break;
              }
              deliver_range(stack.back(), range_style::push_pop, last, tid, 0, false);
              stack.pop_back();
              break;
            }
            case event_type::start: {
              open_range o;
              o.start_ns = last;
              o.name = message_of(r);
              o.attrs = r;
              o.attrs.text = {};
              o.tid = tid;
              if (auto it = pending_ends_.find(r.id); it != pending_ends_.end()) {
                deliver_range(o, range_style::start_end, it->second.first, it->second.second, r.id,
                              false);
                pending_ends_.erase(it);
              } else {
                starts_[r.id] = std::move(o);
              }
              break;
            }
            case event_type::end: {
              if (auto it = starts_.find(r.id); it != starts_.end()) {
                deliver_range(it->second, range_style::start_end, last, tid, r.id, false);
                starts_.erase(it);
              } else {
                pending_ends_[r.id] = {last, tid};  // its start may be on a thread not read yet
              }
              break;
            }
            case event_type::mark:
              deliver_mark(r, mark_kind::mark, message_of(r), last, tid);
              break;
            case event_type::counter_sample: {
              std::vector<std::string> problems;
              testing::counter_sample const sample =
                  rec::decode_counter_sample(r, pf_.names, problems);
              for (auto& w : problems) {
                warn("counter", fmt::format("pid {} thread {}: {}", pid_, tid, w));
              }
              counter_sample_info const c{
                  pid_, tid, last, r.domain, pf_.names.domain_at(r.domain), &sample};
              ++totals_.counter_samples;
              each([&](trace_sink& s) { s.on_counter_sample(c); });
              break;
            }
            case event_type::memory: {
              std::vector<std::string> problems;
              testing::memory_call call;
              if (rec::decode_memory_call(r, call, problems)) {
                heaps_.add(last, tid, r.domain, message_of(r), std::move(call));
              }
              for (auto& w : problems) {
                warn("memory", fmt::format("pid {} thread {}: {}", pid_, tid, w));
              }
              break;
            }
            case event_type::sync_create:
              sync_names_[r.id] = message_of(r);
              [[fallthrough]];
            case event_type::sync_destroy:
            case event_type::sync_acquire_start:
            case event_type::sync_acquire_failed:
            case event_type::sync_acquire_success:
            case event_type::sync_releasing:
              deliver_mark(r, sync_kind(r.type), sync_names_[r.id], last, tid);
              break;
            case event_type::name_resource: {
              std::string const name = message_of(r);
              resource_info const res{
                  pid_, tid,      last, static_cast<rec::resource_kind>(r.category),
                  r.id, r.domain, name};
              if (res.kind == rec::resource_kind::cuda_stream ||
                  res.kind == rec::resource_kind::cu_stream) {
                if (auto it = pf_.stream_ids.find(r.id); it != pf_.stream_ids.end()) {
                  stream_names_[it->second] = name;
                }
              }
              each([&](trace_sink& s) { s.on_resource(res); });
              break;
            }
            default:
              break;  // naming and domain events: reflected in names, not drawn
          }
        },
        decode_warnings);
    for (auto& w : decode_warnings) {
      warn("malformed", std::move(w));
    }
    for (auto& [domain, stack] : stacks) {
      for (auto& o : stack) {
        leftovers.push_back(std::move(o));
      }
    }
  }

  process_file& pf_;
  std::vector<trace_sink*> const& sinks_;
  read_totals& totals_;
  std::size_t max_warnings_;
  process_info info_;
  std::uint32_t pid_ = 0;
  rec::clock_map clock_;
  std::int64_t gpu_offset_ = 0;                // added to every CUPTI time (align_gpu_clock)
  std::uint64_t unattributed_[3] = {0, 0, 0};  // kernels, copies, memsets with no launching call
  std::string gpu_offset_text_;  // its gpu info record, "" when there are no API calls
  std::int64_t end_ns_ = 0;
  std::int64_t last_ns_ = std::numeric_limits<std::int64_t>::min();
  std::map<std::uint64_t, open_range> starts_;
  std::map<std::uint64_t, std::pair<std::int64_t, std::uint64_t>> pending_ends_;
  std::unordered_map<std::uint64_t, std::string> sync_names_;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, int> streams_;
  std::unordered_map<std::uint32_t, std::string> stream_names_;
  graph_ranges graphs_;  // CUDA graph work under capture-time ranges (offline/graph_ranges.hpp)
  graph_trace mode_;
  graph_launches launches_;  // graph_trace::graph: node work folded per launch
  heap_usage heaps_;         // NVTX memory heaps' bytes in use (offline/heap_usage.hpp)
};

}  // namespace

void deliver_process(process_file& pf, std::vector<trace_sink*> const& sinks, read_totals& totals,
                     std::size_t max_warnings, graph_trace graphs) {
  process_reader{pf, sinks, totals, max_warnings, graphs}.run();
}

}  // namespace nvtxpp::capture::detail
