// The GPU half of delivering a process: CUPTI records to the sinks (process_delivery_gpu.hpp).

#include "process_delivery_gpu.hpp"

#include "../../model/kernel_names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

namespace nvtxpp::capture::detail {

namespace {

using call_span = std::pair<std::int64_t, std::int64_t>;  // an API call's start and end

constexpr std::int64_t near_call = 5'000;  // NVTX events this near a call constrain the offset
constexpr std::int64_t no_bound = std::numeric_limits<std::int64_t>::max();

/// What the NVTX events near API calls say of the CUPTI clock's offset (align_clock).
struct offset_bounds {
  std::int64_t lo = -no_bound;  // offset >= lo
  std::int64_t hi = no_bound;   // offset <= hi
  std::size_t count = 0;
};

/// The process's API calls by thread, those whose times deliver() keeps.
std::unordered_map<std::uint64_t, std::vector<call_span>> api_calls_by_thread(
    process_file const& pf) {
  std::unordered_map<std::uint64_t, std::vector<call_span>> calls;
  for (auto const& g : pf.gpu) {
    if (g.kind == rec::gpu_record::api && g.size >= sizeof(rec::gpu_api)) {
      auto const a = rec::load<rec::gpu_api>(g.body);
      if (a.start >= 0 && a.end >= a.start && a.end <= max_ns) {  // as bad_times keeps them
        calls[a.tid].emplace_back(a.start, a.end);
      }
    }
  }
  return calls;
}

/// Bounds the offset by one NVTX event at `x` ns, from each call (sorted by start, none longer
/// than `longest`) that it lies near.
void bound_by_event(std::int64_t x, std::vector<call_span> const& calls, std::int64_t longest,
                    offset_bounds& b) {
  // Calls starting in [x - longest - near_call, x + near_call] may hold x in their window.
  auto c = std::lower_bound(calls.begin(), calls.end(),
                            std::make_pair(x - longest - near_call, no_bound),
                            [](auto const& l, auto const& r) { return l.first < r.first; });
  for (; c != calls.end() && c->first <= x + near_call; ++c) {
    if (x < c->first - near_call || x > c->second + near_call) {
      continue;
    }
    ++b.count;
    if (x - c->first < c->second - x) {
      b.lo = std::max(b.lo, x - c->first);
    } else {
      b.hi = std::min(b.hi, x - c->second);
    }
  }
}

/// Bounds the offset by every NVTX event of one thread (`pieces`) near its API calls (`calls`,
/// sorted here).
void bound_by_thread(std::vector<rec::stream_piece> const& pieces, std::uint64_t tid,
                     rec::clock_map const& clock, std::vector<call_span>& calls, offset_bounds& b) {
  std::sort(calls.begin(), calls.end());
  std::int64_t longest = 0;
  for (auto const& c : calls) {
    longest = std::max(longest, c.second - c.first);
  }
  std::vector<std::string> ignored;
  std::int64_t last = std::numeric_limits<std::int64_t>::min();
  rec::for_each_record(
      pieces, tid,
      [&](rec::raw_event const& r) {
        last = std::max(last, sane_ns(clock.to_ns(r.ticks)));
        bound_by_event(last, calls, longest, b);
      },
      ignored);
}

}  // namespace

void gpu_delivery::deliver() {
  offset_ = align_clock();
  read_detail_periods();
  bool all_driver_calls = true;
  launch_index const launches{api_records(all_driver_calls)};
  deliver_offset_info();
  for (auto const& g : ctx_.pf.gpu) {
    deliver_record(g, launches, all_driver_calls);
  }
  deliver_graph_launches();
  warn_unattributed();
}

void gpu_delivery::deliver_streams(std::unordered_map<std::uint32_t, std::string> const& names) {
  for (auto const& [key, st] : streams_) {
    gpu_stream_info g{ctx_.pid, std::get<0>(key), std::get<1>(key), std::get<2>(key), {}};
    if (auto it = names.find(std::get<2>(key)); it != names.end()) {
      g.name = it->second;
    }
    ctx_.each([&](trace_sink& s) { s.on_gpu_stream(g); });
  }
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
std::int64_t gpu_delivery::align_clock() {
  auto calls = api_calls_by_thread(ctx_.pf);
  if (calls.empty()) {
    return 0;
  }
  offset_bounds b;
  for (auto& [tid, list] : calls) {
    if (auto const it = ctx_.pf.pieces.find(tid); it != ctx_.pf.pieces.end()) {
      bound_by_thread(it->second, tid, ctx_.clock, list, b);
    }
  }
  std::int64_t offset = 0;
  if (b.count == 0 || (b.lo <= 0 && 0 <= b.hi)) {
    offset = 0;
  } else if (b.lo <= b.hi) {
    std::int64_t const margin = std::min<std::int64_t>(50, (b.hi - b.lo) / 2);
    offset = b.lo > 0 ? b.lo + margin : b.hi - margin;
  } else {
    ctx_.warn("clock_align",
              fmt::format("pid {}: an API call overlaps an NVTX event of its thread whatever the "
                          "offset (bounds {} ns and {} ns): GPU records left as CUPTI stamped them",
                          ctx_.pid, b.lo, b.hi));
  }
  offset_text_ = fmt::format("clock_offset_ns={}", offset);
  return offset;
}

/// --cuda-sample's records: the periods' edges, and each API call's start when there are any.
void gpu_delivery::read_detail_periods() {
  for (auto const& g : ctx_.pf.gpu) {
    if (g.kind != rec::gpu_record::info) {
      continue;
    }
    std::string_view const text{reinterpret_cast<char const*>(g.body), g.size};
    auto const eq = text.find('=');
    bool const ok = eq != std::string_view::npos &&
                    (text.substr(0, eq) == "gpu_capture"
                         ? window_.on_edge(text.substr(eq + 1))
                         : detail_.on_info(text.substr(0, eq), text.substr(eq + 1)));
    if (eq != std::string_view::npos && !ok) {
      ctx_.warn("gpu_record", fmt::format("pid {}: malformed info record '{}'", ctx_.pid, text));
    }
  }
  if (!detail_.sampled()) {
    return;
  }
  for (auto const& g : ctx_.pf.gpu) {
    if (g.kind == rec::gpu_record::api && g.size >= sizeof(rec::gpu_api)) {
      auto const a = rec::load<rec::gpu_api>(g.body);
      call_start_.emplace(a.correlation, a.start);
    }
  }
}

/// The edge rule of the sampled mode (docs/leave-it-on-gpu.md): GPU work is kept when the call
/// that launched it is in the recording and started inside a period (CUPTI's clock, before
/// align_clock's shift). Work whose call is not (launched as CUPTI was being switched on, its
/// call started before the period) is left out; migrations, which no call launches, are kept
/// when they started inside a period (the overload below). A record left out is counted.
/// Always false without --cuda-sample.
bool gpu_delivery::sampled_out(std::uint32_t correlation, launch_index const& launches) {
  if (!detail_.sampled()) {
    return false;
  }
  if (std::uint32_t const by = launches.launcher(correlation); by != 0) {
    if (auto const it = call_start_.find(by); it != call_start_.end()) {
      return sampled_out(it->second);
    }
  }
  ++sampled_out_;
  return true;
}

bool gpu_delivery::sampled_out(std::int64_t start) {
  if (!detail_.sampled() || detail_.contains(start)) {
    return false;
  }
  ++sampled_out_;
  return true;
}

void gpu_delivery::deliver_detail_periods(std::int64_t end_ns) {
  if (!detail_.sampled()) {
    return;
  }
  detail_.close(end_ns - offset_);  // the process's end, on CUPTI's clock
  domain_info const d{ctx_.pid, gpu_detail_domain_index, gpu_detail_domain};
  ctx_.each([&](trace_sink& s) { s.on_domain(d); });
  std::uint64_t id = gpu_detail_range_id;
  for (auto const& p : detail_.in_window()) {
    range_info r;
    r.pid = ctx_.pid;
    r.style = range_style::start_end;
    r.tid = ctx_.pid;  // the process's main thread: a start/end range belongs to no stack
    r.end_tid = ctx_.pid;
    r.start_ns = sane_ns(p.start + offset_);
    r.end_ns = std::max(r.start_ns, sane_ns(p.end + offset_));
    r.id = ++id;
    r.name = p.raised ? gpu_detail_raised : gpu_detail_sampled;
    r.attr.domain = gpu_detail_domain_index;
    r.attr.domain_name = gpu_detail_domain;
    ctx_.each([&](trace_sink& s) { s.on_range(r); });
  }
  std::string const left = std::to_string(sampled_out_);
  gpu_info const i{ctx_.pid, "gpu_detail_left_out", left};
  ctx_.each([&](trace_sink& s) { s.on_gpu_info(i); });
  // What CUPTI's switches cost: "<n on>:<median ns>:<n off>:<median ns>".
  auto median = [](std::vector<std::int64_t> v) {
    if (v.empty()) {
      return std::int64_t{0};
    }
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  std::string const cost =
      fmt::format("{}:{}:{}:{}", detail_.switch_on_ns().size(), median(detail_.switch_on_ns()),
                  detail_.switch_off_ns().size(), median(detail_.switch_off_ns()));
  gpu_info const c{ctx_.pid, "gpu_detail_switch_ns", cost};
  ctx_.each([&](trace_sink& s) { s.on_gpu_info(c); });
}

/// The process's API records, for launch_index; and whether the recording lists every driver
/// call (--cuda-api=all, or a recording older than the `driver_api` info record) or only the
/// driver calls that launch GPU work, where the runtime's own (nested) ones are left out.
std::vector<rec::gpu_api> gpu_delivery::api_records(bool& all_driver_calls) const {
  std::vector<rec::gpu_api> calls;
  all_driver_calls = true;
  for (auto const& g : ctx_.pf.gpu) {
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

/// The offset align_clock applied, as a gpu info record (none when there were no API calls).
void gpu_delivery::deliver_offset_info() {
  if (offset_text_.empty()) {
    return;
  }
  std::string_view const text{offset_text_};
  gpu_info const i{ctx_.pid, text.substr(0, text.find('=')), text.substr(text.find('=') + 1)};
  ctx_.each([&](trace_sink& s) { s.on_gpu_info(i); });
}

void gpu_delivery::deliver_record(gpu_record_ref const& g, launch_index const& launches,
                                  bool all_driver_calls) {
  switch (g.kind) {
    case rec::gpu_record::kernel:
      on_kernel(g, launches);
      break;
    case rec::gpu_record::memcpy:
      on_memcpy(g, launches);
      break;
    case rec::gpu_record::memset:
      on_memset(g, launches);
      break;
    case rec::gpu_record::sync:
      on_sync(g);
      break;
    case rec::gpu_record::api:
      on_api(g, launches, all_driver_calls);
      break;
    case rec::gpu_record::graph_node:
      on_graph_node(g);
      break;
    case rec::gpu_record::info:
      on_info(g);
      break;
    default:
      break;
  }
}

void gpu_delivery::on_kernel(gpu_record_ref const& g, launch_index const& launches) {
  if (too_short(g, sizeof(rec::gpu_kernel))) {
    return;
  }
  kernel_info k{ctx_.pid, rec::load<rec::gpu_kernel>(g.body), {}, {}};
  if (bad_times(g, k.raw.start, k.raw.end) || sampled_out(k.raw.correlation, launches)) {
    return;
  }
  shift(k.raw);
  attribute(k.raw, launches, 0);
  k.name = gpu_string(k.raw.name);
  k.demangled = demangled(k.raw.name, k.name);
  deliver_work(g, k, graph_ranges::work_kind::kernel, &trace_sink::on_kernel);
}

void gpu_delivery::on_memcpy(gpu_record_ref const& g, launch_index const& launches) {
  if (too_short(g, sizeof(rec::gpu_memcpy))) {
    return;
  }
  memcpy_info m{ctx_.pid, rec::load<rec::gpu_memcpy>(g.body)};
  if (bad_times(g, m.raw.start, m.raw.end) ||
      (rec::is_migration(m.raw.copy_kind) ? sampled_out(m.raw.start)
                                          : sampled_out(m.raw.correlation, launches))) {
    return;
  }
  shift(m.raw);
  if (rec::is_migration(m.raw.copy_kind)) {
    ++ctx_.totals.migrations;  // no launching call, by nature: not unattributed
  } else {
    attribute(m.raw, launches, 1);
  }
  deliver_work(g, m, graph_ranges::work_kind::memcpy, &trace_sink::on_memcpy);
}

void gpu_delivery::on_memset(gpu_record_ref const& g, launch_index const& launches) {
  if (too_short(g, sizeof(rec::gpu_memset))) {
    return;
  }
  memset_info m{ctx_.pid, rec::load<rec::gpu_memset>(g.body)};
  if (bad_times(g, m.raw.start, m.raw.end) || sampled_out(m.raw.correlation, launches)) {
    return;
  }
  shift(m.raw);
  attribute(m.raw, launches, 2);
  deliver_work(g, m, graph_ranges::work_kind::memset, &trace_sink::on_memset);
}

void gpu_delivery::on_sync(gpu_record_ref const& g) {
  if (too_short(g, sizeof(rec::gpu_sync))) {
    return;
  }
  sync_info m{ctx_.pid, rec::load<rec::gpu_sync>(g.body)};
  if (bad_times(g, m.raw.start, m.raw.end) || sampled_out(m.raw.start)) {
    return;
  }
  shift(m.raw);
  ctx_.each([&](trace_sink& s) { s.on_sync(m); });
}

void gpu_delivery::on_api(gpu_record_ref const& g, launch_index const& launches,
                          bool all_driver_calls) {
  if (too_short(g, sizeof(rec::gpu_api))) {
    return;
  }
  api_info a{ctx_.pid, rec::load<rec::gpu_api>(g.body), {}};
  // A call outside every period or outside the capture window: a driver launch function's (its
  // records are never switched off: gpu_detail.hpp), or one at a switch. Not GPU work, so not
  // counted among the records the edge rule left out.
  if (bad_times(g, a.raw.start, a.raw.end) ||
      (detail_.sampled() && !detail_.contains(a.raw.start)) ||
      (window_.any() && !window_.contains(a.raw.start))) {
    return;
  }
  a.nested = launches.nested(a.raw);
  if (a.nested && !all_driver_calls) {
    return;  // a launch function the runtime called: its call is the runtime's
  }
  shift(a.raw);
  a.name = gpu_string(a.raw.name);
  ctx_.graphs.on_api(a.raw);
  ++ctx_.totals.api_calls;
  ctx_.each([&](trace_sink& s) { s.on_api(a); });
}

void gpu_delivery::on_graph_node(gpu_record_ref const& g) {
  if (!too_short(g, sizeof(rec::gpu_graph_node))) {
    auto const e = rec::load<rec::gpu_graph_node>(g.body);
    ctx_.graphs.on_node_event(e, sane_ns(ctx_.clock.to_ns(e.ticks)));
  }
}

void gpu_delivery::on_info(gpu_record_ref const& g) {
  std::string_view const text{reinterpret_cast<char const*>(g.body), g.size};
  auto const eq = text.find('=');
  gpu_info const i{ctx_.pid, text.substr(0, eq),
                   eq == std::string_view::npos ? std::string_view{} : text.substr(eq + 1)};
  if (i.key == "gpu_detail" || i.key == "gpu_window" || i.key == "gpu_capture" ||
      i.key == "launch_rank") {
    return;  // the periods, delivered as ranges (deliver_detail_periods)
  }
  warn_for_info(i);
  ctx_.each([&](trace_sink& s) { s.on_gpu_info(i); });
}

/// Info records that say GPU activity is missing from the trace, or that a thread of ours could
/// not start in the program, also warn.
void gpu_delivery::warn_for_info(gpu_info const& i) {
  if (i.key == "dropped" && i.value != "0") {
    ctx_.warn("gpu_dropped",
              fmt::format("pid {}: CUPTI dropped {} GPU activity record(s) (buffers full)",
                          ctx_.pid, i.value));
  } else if (i.key == "in_flight" && i.value != "0") {
    ctx_.warn("gpu_in_flight",
              fmt::format("pid {}: {} GPU operation(s) still running at a live dump are in no "
                          "trace (CUPTI hands them out once, without their end)",
                          ctx_.pid, i.value));
  } else if (i.key == "cupti" && i.value.rfind("unavailable", 0) == 0) {
    ctx_.warn("gpu_unavailable",
              fmt::format("pid {}: no GPU activity recorded: CUPTI {}", ctx_.pid, i.value));
  } else if (i.key == "thread") {
    // One of our threads could not start inside the program (its words say what it turned off).
    ctx_.warn("thread_failed", fmt::format("pid {}: {}", ctx_.pid, i.value));
  } else if (i.key == "unified_memory" && i.value.rfind("unavailable", 0) == 0) {
    ctx_.warn(
        "um_unavailable",
        fmt::format("pid {}: unified memory migrations not recorded: CUPTI {}", ctx_.pid, i.value));
  }
}

void gpu_delivery::deliver_graph_launches() {
  launches_.finish([&](graph_launch_info const& l) {
    ++ctx_.totals.graph_launches;
    ctx_.each([&](trace_sink& s) { s.on_graph_launch(l); });
  });
}

void gpu_delivery::warn_unattributed() {
  if (std::uint64_t const n = unattributed_[0] + unattributed_[1] + unattributed_[2]; n != 0) {
    ctx_.warn("gpu_unattributed",
              fmt::format("pid {}: {} GPU operation(s) with no launching CUDA API call in the "
                          "recording ({} kernel(s), {} copy(ies), {} memset(s)): kept in the "
                          "trace, under no NVTX range",
                          ctx_.pid, n, unattributed_[0], unattributed_[1], unattributed_[2]));
  }
}

/// True (with a warning) when the record is shorter than its kind's struct.
bool gpu_delivery::too_short(gpu_record_ref const& g, std::size_t want) {
  if (g.size < want) {
    ctx_.warn("gpu_record", fmt::format("pid {}: GPU record of kind {} too short ({} bytes)",
                                        ctx_.pid, static_cast<unsigned>(g.kind), g.size));
    return true;
  }
  return false;
}

/// True (with a warning) for damaged times. Times are CLOCK_MONOTONIC ns: a negative start or
/// an end before the start is damage, and would make the sinks' durations negative (or
/// overflow).
bool gpu_delivery::bad_times(gpu_record_ref const& g, std::int64_t start, std::int64_t end) {
  if (start < 0 || end < start || end > max_ns) {
    ctx_.warn("gpu_record",
              fmt::format("pid {}: GPU record of kind {} has start {} and end {}: skipped",
                          ctx_.pid, static_cast<unsigned>(g.kind), start, end));
    return true;
  }
  return false;
}

std::string_view gpu_delivery::gpu_string(std::uint32_t id) const {
  auto it = ctx_.pf.gpu_strings.find(id);
  return it == ctx_.pf.gpu_strings.end() ? std::string_view{} : it->second;
}

/// The kernel's name demangled as nsys writes it, or `name` when it is not a mangled name;
/// demangled once per name.
std::string_view gpu_delivery::demangled(std::uint32_t name_id, std::string_view name) {
  auto [it, fresh] = demangled_.try_emplace(name_id);
  if (fresh) {
    it->second = demangle_kernel_name(name);
  }
  return it->second.empty() ? name : std::string_view{it->second};
}

void gpu_delivery::note_stream(std::uint32_t device, std::uint32_t context, std::uint32_t stream) {
  streams_.emplace(std::make_tuple(device, context, stream), 0);
}

/// Moves a CUPTI record's times by the process's alignment offset.
template <class R>
void gpu_delivery::shift(R& r) const noexcept {
  // Saturating and clamped: the times were checked to lie in [0, max_ns], the offset is not.
  auto const moved = [this](std::int64_t t) noexcept {
    std::int64_t out = 0;
    if (__builtin_add_overflow(t, offset_, &out)) {
      out = offset_ > 0 ? max_ns : 0;
    }
    return sane_ns(out);
  };
  r.start = moved(r.start);
  r.end = moved(r.end);
}

/// Ties a GPU operation to its launching call (launch_index::launcher), counting those tied
/// to none. Returns false for those.
template <class R>
bool gpu_delivery::attribute(R& raw, launch_index const& launches, int kind) {
  std::uint32_t const by = launches.launcher(raw.correlation);
  if (by == 0) {
    ++unattributed_[kind];
    ++ctx_.totals.unattributed[kind];
    return false;
  }
  raw.correlation = by;
  return true;
}

/// Graph work: the gpu_graph_tail after the struct (cupti.cpp appends it), if any. Returns
/// true when the work is folded into its launch (graph_trace::graph): not to be delivered.
template <class W>
bool gpu_delivery::graph_tail(gpu_record_ref const& g, std::size_t body, W& w,
                              graph_ranges::work_kind kind) {
  if (g.size < body + sizeof(rec::gpu_graph_tail)) {
    return false;
  }
  auto const t = rec::load<rec::gpu_graph_tail>(g.body + body);
  w.graph_node = t.node;
  w.graph = t.graph;
  if (t.node == 0) {
    return false;
  }
  ctx_.graphs.on_work(kind, t.node, t.graph, w.raw.device, w.raw.context, w.raw.stream,
                      w.raw.correlation, w.raw.start, w.raw.end);
  if (mode_ != graph_trace::graph) {
    return false;
  }
  auto const folded = kind == graph_ranges::work_kind::kernel   ? graph_launches::work::kernel
                      : kind == graph_ranges::work_kind::memcpy ? graph_launches::work::memcpy
                                                                : graph_launches::work::memset;
  launches_.add(ctx_.pid, folded, w.raw.correlation, t.graph, w.raw.device, w.raw.context,
                w.raw.stream, w.raw.start, w.raw.end);
  note_stream(w.raw.device, w.raw.context, w.raw.stream);
  return true;
}

/// A kernel, copy or memset, once checked and attributed: to the sinks as a GPU operation on
/// its stream, unless folded into its graph launch.
template <class W>
void gpu_delivery::deliver_work(gpu_record_ref const& g, W& w, graph_ranges::work_kind kind,
                                void (trace_sink::*to_sink)(W const&)) {
  if (graph_tail(g, sizeof w.raw, w, kind)) {
    return;
  }
  note_stream(w.raw.device, w.raw.context, w.raw.stream);
  ++ctx_.totals.gpu_ops;
  ctx_.each([&](trace_sink& s) { (s.*to_sink)(w); });
}

}  // namespace nvtxpp::capture::detail
