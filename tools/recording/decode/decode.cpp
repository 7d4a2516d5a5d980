// The decoder (decode.hpp): name tables, the clock map, records, per-thread decoding. The NVTX
// extensions (counters, structured payloads) are in decode_extensions.cpp.

#include "decode.hpp"

#include "../format.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace nvtxpp::recording {

namespace {

std::string const empty_string;

template <class History>
std::string const& name_at(History const& history, std::int64_t ticks, name_tables const& names) {
  std::uint32_t id = 0;
  for (auto const& [when, string_id] : history) {
    if (when > ticks) {
      break;
    }
    id = string_id;
  }
  return names.string_at(id);
}

}  // namespace

char const* resource_name(resource_kind kind) noexcept {
  switch (kind) {
    case resource_kind::cuda_device:
      return "cuda_device";
    case resource_kind::cuda_stream:
      return "cuda_stream";
    case resource_kind::cuda_event:
      return "cuda_event";
    case resource_kind::cu_device:
      return "cu_device";
    case resource_kind::cu_context:
      return "cu_context";
    case resource_kind::cu_stream:
      return "cu_stream";
    case resource_kind::cu_event:
      return "cu_event";
    case resource_kind::generic_pointer:
      return "generic_pointer";
    case resource_kind::generic_handle:
      return "generic_handle";
    case resource_kind::os_thread:
      return "os_thread";
    case resource_kind::posix_thread:
      return "posix_thread";
    case resource_kind::unknown:
      break;
  }
  return "unknown";
}

std::string const& name_tables::string_at(std::uint32_t id) const noexcept {
  return id < strings.size() ? strings[id] : empty_string;
}

std::string const& name_tables::domain_at(std::uint32_t index) const noexcept {
  return index < domains.size() ? domains[index] : empty_string;
}

std::string const& name_tables::category_at(std::uint32_t domain, std::uint32_t category,
                                            std::int64_t ticks) const noexcept {
  auto it = category_names.find({domain, category});
  return it == category_names.end() ? empty_string : name_at(it->second, ticks, *this);
}

std::string const& name_tables::thread_at(std::uint64_t tid, std::int64_t ticks) const noexcept {
  auto it = thread_names.find(tid);
  return it == thread_names.end() ? empty_string : name_at(it->second, ticks, *this);
}

clock_map clock_map::from(std::int64_t t0, std::int64_t n0, std::int64_t t1,
                          std::int64_t n1) noexcept {
  clock_map m;
  m.ticks0 = t0;
  m.ns0 = n0;
  if (t1 != t0 && n1 != n0) {
    m.ns_per_tick = difference(n1, n0) / difference(t1, t0);
  }
  return m;
}

namespace {

testing::payload_value read_payload(std::uint8_t type, std::uint64_t bits) {
  switch (type) {
    case 1:
      return bits;
    case 2:
      return static_cast<std::int64_t>(bits);
    case 3:
      return load<double>(reinterpret_cast<unsigned char const*>(&bits));
    case 4:
      return static_cast<std::uint32_t>(bits);
    case 5:
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(bits));
    case 6: {
      auto u = static_cast<std::uint32_t>(bits);
      return load<float>(reinterpret_cast<unsigned char const*>(&u));
    }
    default:
      return std::monostate{};
  }
}

}  // namespace

testing::payload_value payload_of(raw_event const& r) noexcept {
  return read_payload(r.payload_type, r.payload_bits);
}

void decode_thread(std::vector<stream_piece> const& pieces, std::uint64_t tid, std::uint32_t pid,
                   name_tables const& names, clock_map const& clock,
                   std::vector<testing::event>& out, std::vector<std::string>& warnings) {
  std::int64_t last_ns = INT64_MIN;
  for_each_record(
      pieces, tid,
      [&](raw_event const& r) {
        testing::event e;
        e.type = r.type;
        e.domain = names.domain_at(r.domain);
        e.thread_id = tid;
        e.process_id = pid;
        last_ns = std::max(last_ns, clock.to_ns(r.ticks));
        e.time_ns = last_ns;
        if (r.flags & flag::has_color) {
          e.color = r.color;
        }
        e.payload = payload_of(r);
        if (r.message == message_kind::inline_text) {
          e.message.assign(r.text);
        } else if (r.message == message_kind::string_id) {
          e.message = names.string_at(r.string_id);
        }
        e.registered = (r.flags & flag::registered) != 0;
        e.truncated = (r.flags & flag::truncated) != 0;
        e.null_message = (r.flags & flag::null_message) != 0;
        if (e.null_message) {
          e.message = "(null)";
        }
        std::uint32_t category = r.category;
        switch (e.type) {
          case testing::event_type::start:
          case testing::event_type::end:
            e.range_id = r.id;
            break;
          case testing::event_type::name_resource:
            e.resource = resource_name(static_cast<resource_kind>(category));
            category = 0;
            e.handle = r.id;
            break;
          default:
            e.handle = r.id;
            break;
        }
        e.category = category;
        if (category != 0) {
          e.category_name = names.category_at(r.domain, category, r.ticks);
        }
        e.thread_name = names.thread_at(tid, r.ticks);
        if (e.type == testing::event_type::counter_sample) {
          e.counter = decode_counter_sample(r, names, warnings);
          e.message = e.counter.name;
          e.category = 0;
          e.category_name.clear();
          e.handle = 0;
          e.payload = std::monostate{};
        } else if (e.type == testing::event_type::memory) {
          static_cast<void>(decode_memory_call(r, e.memory, warnings));
          e.handle = 0;
        } else if (!r.blob.empty()) {
          e.payloads = decode_payloads(r.blob, r.domain, names, warnings);
        }
        out.push_back(std::move(e));
      },
      warnings);
}

void finish_events(std::vector<testing::event>& events, std::vector<std::string>& warnings) {
  // In time order, ties in the order decoded: the positions are sorted, then each event moved
  // once (an event is large; a sort of the events themselves moves each one many times).
  std::vector<std::size_t> order(events.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&events](std::size_t a, std::size_t b) {
    return events[a].time_ns < events[b].time_ns;
  });
  std::vector<testing::event> sorted;
  sorted.reserve(events.size());
  for (std::size_t i : order) {
    sorted.push_back(std::move(events[i]));
  }
  events = std::move(sorted);
  // (process, thread, domain) -> depth of open pushes
  std::map<std::tuple<std::uint32_t, std::uint64_t, std::string>, int> depth;
  for (auto& e : events) {
    if (e.null_message) {
      warnings.push_back("thread " + std::to_string(e.thread_id) + ": null message passed to " +
                         testing::to_string(e.type));
    }
    if (e.truncated) {
      warnings.push_back("thread " + std::to_string(e.thread_id) + ": message longer than " +
                         std::to_string(testing::max_message_bytes) + " bytes truncated (" +
                         testing::to_string(e.type) + ")");
    }
    if (e.type == testing::event_type::push) {
      e.depth = depth[{e.process_id, e.thread_id, e.domain}]++;
    } else if (e.type == testing::event_type::pop) {
      int& d = depth[{e.process_id, e.thread_id, e.domain}];
      if (d == 0) {
        e.depth = -1;
        warnings.push_back("thread " + std::to_string(e.thread_id) +
                           ": pop without a matching push in domain \"" + e.domain + "\"");
      } else {
        e.depth = --d;
      }
    }
  }
}

}  // namespace nvtxpp::recording
