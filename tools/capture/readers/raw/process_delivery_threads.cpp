// The thread half of delivering a process: NVTX events to the sinks
// (process_delivery_threads.hpp).

#include "process_delivery_threads.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace nvtxpp::capture::detail {

namespace {

using testing::event_type;

mark_kind sync_kind(event_type t) {
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

}  // namespace

void thread_delivery::deliver(std::uint64_t tid, std::vector<rec::stream_piece> const& pieces) {
  thread_state t;
  t.tid = tid;
  std::vector<std::string> decode_warnings;
  rec::for_each_record(
      pieces, tid, [&](rec::raw_event const& r) { on_event(r, t); }, decode_warnings);
  for (auto& w : decode_warnings) {
    ctx_.warn("malformed", std::move(w));
  }
  for (auto& [domain, stack] : t.stacks) {
    for (auto& o : stack) {
      leftovers_.push_back(std::move(o));
    }
  }
}

void thread_delivery::deliver_heap_usage() {
  heaps_.finish([&](heap_usage::sample const& h) {
    counter_sample_info const c{ctx_.pid, h.tid, h.ns, h.domain, ctx_.pf.names.domain_at(h.domain),
                                h.value};
    ++ctx_.totals.counter_samples;
    ctx_.each([&](trace_sink& s) { s.on_counter_sample(c); });
  });
}

void thread_delivery::close_open(std::int64_t end_ns) {
  for (auto& r : leftovers_) {
    ctx_.warn("unterminated",
              fmt::format("pid {} thread {}: range \"{}\" still open at the end (closed there)",
                          ctx_.pid, r.tid, r.name));
    deliver_range(r, range_style::push_pop, std::max(end_ns, r.start_ns), r.tid, 0, true);
  }
  for (auto& [id, r] : starts_) {
    ctx_.warn("unterminated", fmt::format("pid {}: start/end range \"{}\" never ended (closed at "
                                          "the end)",
                                          ctx_.pid, r.name));
    deliver_range(r, range_style::start_end, std::max(end_ns, r.start_ns), r.tid, id, true);
  }
  for (auto& [id, e] : pending_ends_) {
    ctx_.warn("unknown_end", fmt::format("pid {} thread {}: end of unknown range id {:#x}",
                                         ctx_.pid, e.second, id));
  }
}

void thread_delivery::on_event(rec::raw_event const& r, thread_state& t) {
  t.last = std::max(t.last, sane_ns(ctx_.clock.to_ns(r.ticks)));
  last_ns_ = std::max(last_ns_, t.last);
  warn_flags(r, t.tid);
  switch (r.type) {
    case event_type::push:
      on_push(r, t);
      break;
    case event_type::pop:
      on_pop(r, t);
      break;
    case event_type::start:
      on_start(r, t);
      break;
    case event_type::end:
      on_end(r, t);
      break;
    case event_type::mark:
      deliver_mark(r, mark_kind::mark, message_of(r), t.last, t.tid);
      break;
    case event_type::counter_sample:
      on_counter_sample(r, t);
      break;
    case event_type::memory:
      on_memory(r, t);
      break;
    case event_type::sync_create:
      sync_names_[r.id] = message_of(r);
      [[fallthrough]];
    case event_type::sync_destroy:
    case event_type::sync_acquire_start:
    case event_type::sync_acquire_failed:
    case event_type::sync_acquire_success:
    case event_type::sync_releasing:
      deliver_mark(r, sync_kind(r.type), sync_names_[r.id], t.last, t.tid);
      break;
    case event_type::name_resource:
      on_name_resource(r, t);
      break;
    default:
      break;  // naming and domain events: reflected in names, not drawn
  }
}

/// A null or truncated message warns, whatever the event.
void thread_delivery::warn_flags(rec::raw_event const& r, std::uint64_t tid) {
  if (r.flags & rec::flag::null_message) {
    ctx_.warn("null_message", fmt::format("pid {} thread {}: null message passed to {}", ctx_.pid,
                                          tid, testing::to_string(r.type)));
  }
  if (r.flags & rec::flag::truncated) {
    ctx_.warn("truncated",
              fmt::format("pid {} thread {}: message longer than {} bytes "
                          "truncated ({})",
                          ctx_.pid, tid, testing::max_message_bytes, testing::to_string(r.type)));
  }
}

void thread_delivery::on_push(rec::raw_event const& r, thread_state& t) {
  auto& stack = t.stacks[r.domain];
  open_range o;
  o.start_ns = t.last;
  o.name = message_of(r);
  o.attrs = r;
  o.attrs.text = {};
  o.depth = static_cast<int>(stack.size());
  o.tid = t.tid;
  stack.push_back(std::move(o));
}

void thread_delivery::on_pop(rec::raw_event const& r, thread_state& t) {
  auto& stack = t.stacks[r.domain];
  if (stack.empty()) {
    ctx_.warn("unbalanced_pop", fmt::format("pid {} thread {}: pop without a matching "
                                            "push in domain \"{}\"",
                                            ctx_.pid, t.tid, ctx_.pf.names.domain_at(r.domain)));
    return;
  }
  deliver_range(stack.back(), range_style::push_pop, t.last, t.tid, 0, false);
  stack.pop_back();
}

void thread_delivery::on_start(rec::raw_event const& r, thread_state const& t) {
  open_range o;
  o.start_ns = t.last;
  o.name = message_of(r);
  o.attrs = r;
  o.attrs.text = {};
  o.tid = t.tid;
  if (auto it = pending_ends_.find(r.id); it != pending_ends_.end()) {
    deliver_range(o, range_style::start_end, it->second.first, it->second.second, r.id, false);
    pending_ends_.erase(it);
  } else {
    starts_[r.id] = std::move(o);
  }
}

void thread_delivery::on_end(rec::raw_event const& r, thread_state const& t) {
  if (auto it = starts_.find(r.id); it != starts_.end()) {
    deliver_range(it->second, range_style::start_end, t.last, t.tid, r.id, false);
    starts_.erase(it);
  } else {
    pending_ends_[r.id] = {t.last, t.tid};  // its start may be on a thread not read yet
  }
}

void thread_delivery::on_counter_sample(rec::raw_event const& r, thread_state const& t) {
  std::vector<std::string> problems;
  testing::counter_sample const sample = rec::decode_counter_sample(r, ctx_.pf.names, problems);
  for (auto& w : problems) {
    ctx_.warn("counter", fmt::format("pid {} thread {}: {}", ctx_.pid, t.tid, w));
  }
  counter_sample_info const c{ctx_.pid, t.tid, t.last, r.domain, ctx_.pf.names.domain_at(r.domain),
                              &sample};
  ++ctx_.totals.counter_samples;
  ctx_.each([&](trace_sink& s) { s.on_counter_sample(c); });
}

/// Memory calls are kept for deliver_heap_usage (heaps span threads).
void thread_delivery::on_memory(rec::raw_event const& r, thread_state const& t) {
  std::vector<std::string> problems;
  testing::memory_call call;
  if (rec::decode_memory_call(r, call, problems)) {
    heaps_.add(t.last, t.tid, r.domain, message_of(r), std::move(call));
  }
  for (auto& w : problems) {
    ctx_.warn("memory", fmt::format("pid {} thread {}: {}", ctx_.pid, t.tid, w));
  }
}

/// A named CUDA stream also names its GPU stream (gpu_delivery::deliver_streams).
void thread_delivery::on_name_resource(rec::raw_event const& r, thread_state const& t) {
  std::string const name = message_of(r);
  resource_info const res{ctx_.pid, t.tid,    t.last, static_cast<rec::resource_kind>(r.category),
                          r.id,     r.domain, name};
  if (res.kind == rec::resource_kind::cuda_stream || res.kind == rec::resource_kind::cu_stream) {
    if (auto it = ctx_.pf.stream_ids.find(r.id); it != ctx_.pf.stream_ids.end()) {
      stream_names_[it->second] = name;
    }
  }
  ctx_.each([&](trace_sink& s) { s.on_resource(res); });
}

std::string thread_delivery::message_of(rec::raw_event const& r) const {
  if (r.flags & rec::flag::null_message) {
    return "(null)";
  }
  if (r.message == rec::message_kind::inline_text) {
    return std::string{r.text};
  }
  if (r.message == rec::message_kind::string_id) {
    return ctx_.pf.names.string_at(r.string_id);
  }
  return {};
}

event_attributes thread_delivery::attributes(rec::raw_event const& a) {
  event_attributes e;
  e.domain = a.domain;
  e.domain_name = ctx_.pf.names.domain_at(a.domain);
  e.has_color = (a.flags & rec::flag::has_color) != 0;
  e.color = a.color;
  e.category = a.category;
  if (a.category != 0) {
    e.category_name = ctx_.pf.names.category_at(a.domain, a.category, a.ticks);
  }
  e.payload_type = a.payload_type;
  e.payload_bits = a.payload_bits;
  e.registered = (a.flags & rec::flag::registered) != 0;
  e.truncated = (a.flags & rec::flag::truncated) != 0;
  e.null_message = (a.flags & rec::flag::null_message) != 0;
  if (!a.blob.empty()) {
    std::vector<std::string> problems;
    e.payloads = rec::decode_payloads(a.blob, a.domain, ctx_.pf.names, problems);
    for (auto& w : problems) {
      ctx_.warn("payload", fmt::format("pid {}: {}", ctx_.pid, w));
    }
  }
  return e;
}

void thread_delivery::deliver_range(open_range const& r, range_style style, std::int64_t end_ns,
                                    std::uint64_t end_tid, std::uint64_t id, bool unterminated) {
  range_info info;
  info.pid = ctx_.pid;
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
  ++ctx_.totals.ranges;
  ctx_.graphs.on_range(info);
  ctx_.each([&](trace_sink& s) { s.on_range(info); });
}

void thread_delivery::deliver_mark(rec::raw_event const& r, mark_kind kind, std::string_view name,
                                   std::int64_t ns, std::uint64_t tid) {
  mark_info m;
  m.pid = ctx_.pid;
  m.tid = tid;
  m.ns = ns;
  m.kind = kind;
  m.handle = r.id;
  m.name = name;
  m.attr = attributes(r);
  ++ctx_.totals.marks;
  ctx_.each([&](trace_sink& s) { s.on_mark(m); });
}

}  // namespace nvtxpp::capture::detail
