#include <nvtxpp/testing/event.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <tuple>

namespace nvtxpp::testing {

char const* to_string(event_type type) noexcept {
  switch (type) {
    case event_type::push:
      return "push";
    case event_type::pop:
      return "pop";
    case event_type::start:
      return "start";
    case event_type::end:
      return "end";
    case event_type::mark:
      return "mark";
    case event_type::name_thread:
      return "name_thread";
    case event_type::name_category:
      return "name_category";
    case event_type::name_resource:
      return "name_resource";
    case event_type::domain_create:
      return "domain_create";
    case event_type::domain_destroy:
      return "domain_destroy";
    case event_type::resource_destroy:
      return "resource_destroy";
    case event_type::sync_create:
      return "sync_create";
    case event_type::sync_destroy:
      return "sync_destroy";
    case event_type::sync_acquire_start:
      return "sync_acquire_start";
    case event_type::sync_acquire_failed:
      return "sync_acquire_failed";
    case event_type::sync_acquire_success:
      return "sync_acquire_success";
    case event_type::sync_releasing:
      return "sync_releasing";
    case event_type::counter_sample:
      return "counter_sample";
    case event_type::memory:
      return "memory";
  }
  return "unknown";
}

char const* to_string(memory_op op) noexcept {
  switch (op) {
    case memory_op::heap_register:
      return "heap_register";
    case memory_op::heap_unregister:
      return "heap_unregister";
    case memory_op::heap_reset:
      return "heap_reset";
    case memory_op::regions_register:
      return "regions_register";
    case memory_op::regions_resize:
      return "regions_resize";
    case memory_op::regions_unregister:
      return "regions_unregister";
    case memory_op::regions_name:
      return "regions_name";
    case memory_op::permissions_assign:
      return "permissions_assign";
    case memory_op::permissions_create:
      return "permissions_create";
    case memory_op::permissions_destroy:
      return "permissions_destroy";
    case memory_op::permissions_reset:
      return "permissions_reset";
    case memory_op::permissions_bind:
      return "permissions_bind";
    case memory_op::permissions_unbind:
      return "permissions_unbind";
    case memory_op::cuda_process_permissions:
      return "cuda_process_permissions";
    case memory_op::cuda_device_permissions:
      return "cuda_device_permissions";
    case memory_op::cuda_set_peer_access:
      return "cuda_set_peer_access";
    case memory_op::cuda_mark_initialized:
      return "cuda_mark_initialized";
  }
  return "unknown";
}

namespace {

std::string payload_text(payload_value const& p) {
  char buf[64];
  switch (p.index()) {
    case 1:
      std::snprintf(buf, sizeof buf, "u64:%" PRIu64, std::get<1>(p));
      break;
    case 2:
      std::snprintf(buf, sizeof buf, "i64:%" PRId64, std::get<2>(p));
      break;
    case 3:
      std::snprintf(buf, sizeof buf, "f64:%g", std::get<3>(p));
      break;
    case 4:
      std::snprintf(buf, sizeof buf, "u32:%" PRIu32, std::get<4>(p));
      break;
    case 5:
      std::snprintf(buf, sizeof buf, "i32:%" PRId32, std::get<5>(p));
      break;
    case 6:
      std::snprintf(buf, sizeof buf, "f32:%g", static_cast<double>(std::get<6>(p)));
      break;
    default:
      return {};
  }
  return buf;
}

std::string field_text(field_value const& v) {
  char buf[64];
  switch (v.index()) {
    case 1:
      std::snprintf(buf, sizeof buf, "%" PRId64, std::get<1>(v));
      return buf;
    case 2:
      std::snprintf(buf, sizeof buf, "%" PRIu64, std::get<2>(v));
      return buf;
    case 3:
      std::snprintf(buf, sizeof buf, "%g", std::get<3>(v));
      return buf;
    case 4:
      return "\"" + std::get<4>(v) + "\"";
    default:
      return "?";
  }
}

}  // namespace

std::string to_string(event const& e) {
  std::string s = to_string(e.type);
  s.resize(std::max<std::size_t>(s.size(), 14), ' ');
  if (!e.domain.empty()) {
    s += e.domain + ":";
  }
  if (e.type != event_type::pop) {
    s += "\"" + e.message + "\"";
  }
  char buf[96];
  if (e.type == event_type::push || e.type == event_type::pop) {
    std::snprintf(buf, sizeof buf, " depth=%d", e.depth);
    s += buf;
  }
  if (e.color) {
    std::snprintf(buf, sizeof buf, " color=0x%08" PRIX32, *e.color);
    s += buf;
  }
  if (e.category != 0) {
    s += " category=" + std::to_string(e.category);
    if (!e.category_name.empty()) {
      s += "(" + e.category_name + ")";
    }
  }
  if (e.payload.index() != 0) {
    s += " payload=" + payload_text(e.payload);
  }
  if (e.type == event_type::counter_sample) {
    if (e.counter.no_value) {
      s += " no_value=" + std::to_string(*e.counter.no_value);
    } else if (e.counter.value.index() != 0) {
      s += " value=" + field_text(e.counter.value);
    }
    for (auto const& f : e.counter.fields) {
      s += " " + f.name + "=" + field_text(f.value);
    }
    if (e.counter.batch) {
      s += " batch";
    }
  }
  if (e.type == event_type::memory) {
    auto const& m = e.memory;
    char line[96];
    s += std::string{" "} + to_string(m.op);
    if (m.heap != 0) {
      std::snprintf(line, sizeof line, " heap=0x%" PRIx64, m.heap);
      s += line;
    }
    if (m.heap_bytes != 0) {
      std::snprintf(line, sizeof line, " base=0x%" PRIx64 " bytes=%" PRIu64, m.heap_base,
                    m.heap_bytes);
      s += line;
    }
    if (m.permissions != 0) {
      std::snprintf(line, sizeof line, " permissions=0x%" PRIx64, m.permissions);
      s += line;
    }
    for (auto const& r : m.regions) {
      std::snprintf(line, sizeof line, " {0x%" PRIx64 " %" PRIu64 "B flags=%u", r.pointer, r.bytes,
                    r.flags);
      s += line;
      if (!r.name.empty()) {
        s += " \"" + r.name + "\"";
      }
      s += "}";
    }
  }
  for (auto const& p : e.payloads) {
    s += " payload{" + (p.schema_name.empty() ? std::to_string(p.schema_id) : p.schema_name);
    if (!p.decoded) {
      s += " " + std::to_string(p.bytes.size()) + " bytes undecoded";
    }
    for (auto const& f : p.fields) {
      s += " " + f.name + "=" + (f.enum_name.empty() ? field_text(f.value) : f.enum_name);
    }
    s += "}";
  }
  if (e.range_id != 0) {
    std::snprintf(buf, sizeof buf, " id=0x%" PRIx64, e.range_id);
    s += buf;
  }
  if (!e.resource.empty()) {
    s += " resource=" + e.resource;
  }
  if (e.handle != 0 || e.type == event_type::name_resource) {
    std::snprintf(buf, sizeof buf, " handle=0x%" PRIx64, e.handle);
    s += buf;
  }
  if (e.registered) {
    s += " registered";
  }
  if (e.truncated) {
    s += " truncated";
  }
  s += " thread=" + std::to_string(e.thread_id);
  if (!e.thread_name.empty()) {
    s += "(" + e.thread_name + ")";
  }
  return s;
}

std::vector<completed_range> pair_ranges(std::vector<event> const& events, std::int64_t end_ns,
                                         std::vector<std::string>* warnings) {
  std::vector<completed_range> out;
  auto begin_range = [](event const& e, bool push_pop) {
    completed_range r;
    r.domain = e.domain;
    r.name = e.message;
    r.color = e.color;
    r.category = e.category;
    r.category_name = e.category_name;
    r.payload = e.payload;
    r.payloads = e.payloads;
    r.thread_id = e.thread_id;
    r.end_thread_id = e.thread_id;
    r.thread_name = e.thread_name;
    r.process_id = e.process_id;
    r.start_ns = e.time_ns;
    r.depth = push_pop ? e.depth : 0;
    r.push_pop = push_pop;
    r.range_id = e.range_id;
    return r;
  };
  // (process, thread, domain) -> open pushes, innermost last
  std::map<std::tuple<std::uint32_t, std::uint64_t, std::string>, std::vector<completed_range>>
      stacks;
  // (process, id) -> open start/end range
  std::map<std::pair<std::uint32_t, std::uint64_t>, completed_range> open;
  for (auto const& e : events) {
    switch (e.type) {
      case event_type::push:
        stacks[{e.process_id, e.thread_id, e.domain}].push_back(begin_range(e, true));
        break;
      case event_type::pop: {
        auto& stack = stacks[{e.process_id, e.thread_id, e.domain}];
        if (stack.empty()) {
          // finish_events already reported it (depth -1); report here only for callers that
          // pair events from elsewhere.
          if (warnings && e.depth != -1) {
            warnings->push_back("thread " + std::to_string(e.thread_id) +
                                ": pop without a matching push");
          }
          break;
        }
        completed_range r = std::move(stack.back());
        stack.pop_back();
        r.end_ns = e.time_ns;
        out.push_back(std::move(r));
        break;
      }
      case event_type::start:
        open[{e.process_id, e.range_id}] = begin_range(e, false);
        break;
      case event_type::end: {
        auto it = open.find({e.process_id, e.range_id});
        if (it == open.end()) {
          if (warnings) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "thread %" PRIu64 ": end of unknown range id 0x%" PRIx64,
                          e.thread_id, e.range_id);
            warnings->push_back(buf);
          }
          break;
        }
        completed_range r = std::move(it->second);
        open.erase(it);
        r.end_ns = e.time_ns;
        r.end_thread_id = e.thread_id;
        out.push_back(std::move(r));
        break;
      }
      default:
        break;
    }
  }
  for (auto& [key, stack] : stacks) {
    for (auto& r : stack) {
      r.end_ns = std::max(end_ns, r.start_ns);
      r.unterminated = true;
      if (warnings) {
        warnings->push_back("thread " + std::to_string(r.thread_id) + ": range \"" + r.name +
                            "\" still open at the end (closed there)");
      }
      out.push_back(std::move(r));
    }
  }
  for (auto& [key, r] : open) {
    r.end_ns = std::max(end_ns, r.start_ns);
    r.unterminated = true;
    if (warnings) {
      warnings->push_back("range \"" + r.name + "\" started and never ended (closed at the end)");
    }
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](auto const& a, auto const& b) {
    return std::tie(a.start_ns, a.depth) < std::tie(b.start_ns, b.depth);
  });
  return out;
}

}  // namespace nvtxpp::testing
