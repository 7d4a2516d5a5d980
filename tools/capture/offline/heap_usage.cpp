#include "heap_usage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace nvtxpp::capture::detail {

void heap_usage::add(std::int64_t ns, std::uint64_t tid, std::uint32_t domain,
                     std::string heap_name, testing::memory_call memory) {
  using testing::memory_op;
  switch (memory.op) {
    case memory_op::heap_register:
    case memory_op::heap_unregister:
    case memory_op::heap_reset:
    case memory_op::regions_register:
    case memory_op::regions_resize:
    case memory_op::regions_unregister:
      calls_.push_back({ns, tid, domain, std::move(heap_name), std::move(memory)});
      break;
    default:
      break;  // names and permissions do not change what is in use
  }
}

void heap_usage::finish(std::function<void(sample const&)> const& emit) {
  using testing::memory_op;
  std::stable_sort(calls_.begin(), calls_.end(),
                   [](call const& a, call const& b) { return a.ns < b.ns; });
  struct heap {
    testing::counter_sample track;
    std::uint32_t domain = 0;
    std::int64_t bytes = 0;
    std::unordered_map<std::uint64_t, std::uint64_t> regions;  // address -> size
  };
  std::unordered_map<std::uint64_t, heap> heaps;                 // by handle
  std::unordered_map<std::uint64_t, std::uint64_t> region_heap;  // address -> heap handle
  std::uint64_t next_id = first_id;
  auto publish = [&](heap& h, call const& c) {
    h.track.value = h.bytes;
    emit(sample{c.ns, c.tid, h.domain, &h.track});
  };
  auto drop_region = [&](std::uint64_t address) -> heap* {
    auto const at = region_heap.find(address);
    if (at == region_heap.end()) {
      return nullptr;
    }
    auto const hit = heaps.find(at->second);
    region_heap.erase(at);
    if (hit == heaps.end()) {
      return nullptr;
    }
    heap& h = hit->second;
    if (auto const r = h.regions.find(address); r != h.regions.end()) {
      h.bytes -= static_cast<std::int64_t>(r->second);
      h.regions.erase(r);
    }
    return &h;
  };
  auto clear = [&](heap& h) {
    for (auto const& [address, bytes] : h.regions) {
      region_heap.erase(address);
    }
    h.regions.clear();
    h.bytes = 0;
  };
  for (call const& c : calls_) {
    auto const& m = c.memory;
    switch (m.op) {
      case memory_op::heap_register: {
        heap& h = heaps[m.heap];
        clear(h);
        h.domain = c.domain;
        h.track = testing::counter_sample{};
        h.track.id = next_id++;
        h.track.name =
            fmt::format("{} bytes in use",
                        c.heap_name.empty() ? fmt::format("heap {:#x}", m.heap_base) : c.heap_name);
        h.track.unit = "B";
        h.track.value_type = 17;  // NVTX_PAYLOAD_ENTRY_TYPE_INT64
        h.track.type_name = "i64";
        publish(h, c);
        break;
      }
      case memory_op::heap_reset:
      case memory_op::heap_unregister: {
        auto const it = heaps.find(m.heap);
        if (it == heaps.end()) {
          break;
        }
        clear(it->second);
        publish(it->second, c);
        if (m.op == memory_op::heap_unregister) {
          heaps.erase(it);
        }
        break;
      }
      case memory_op::regions_register: {
        auto const it = heaps.find(m.heap);
        if (it == heaps.end()) {
          break;  // the process-wide heap, or one registered before the capture
        }
        for (auto const& r : m.regions) {
          drop_region(r.pointer);  // re-registered without an unregister: replaced
          it->second.regions[r.pointer] = r.bytes;
          it->second.bytes += static_cast<std::int64_t>(r.bytes);
          region_heap[r.pointer] = m.heap;
        }
        publish(it->second, c);
        break;
      }
      case memory_op::regions_resize: {
        heap* changed = nullptr;
        for (auto const& r : m.regions) {
          auto const at = region_heap.find(r.pointer);
          if (at == region_heap.end()) {
            continue;
          }
          heap& h = heaps[at->second];
          std::uint64_t& size = h.regions[r.pointer];
          h.bytes += static_cast<std::int64_t>(r.bytes) - static_cast<std::int64_t>(size);
          size = r.bytes;
          changed = &h;
        }
        if (changed != nullptr) {
          publish(*changed, c);
        }
        break;
      }
      case memory_op::regions_unregister: {
        heap* changed = nullptr;
        for (auto const& r : m.regions) {
          if (heap* h = drop_region(m.by_handle ? r.handle : r.pointer)) {
            changed = h;
          }
        }
        if (changed != nullptr) {
          publish(*changed, c);
        }
        break;
      }
      default:
        break;
    }
  }
  calls_.clear();
}

}  // namespace nvtxpp::capture::detail
