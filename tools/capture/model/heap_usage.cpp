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

/// The heaps as the replayed calls leave them, and the samples their changes emit.
class heap_usage::replay {
 public:
  explicit replay(std::function<void(sample const&)> const& emit) : emit_{emit} {}

  void apply(call const& c) {
    using testing::memory_op;
    switch (c.memory.op) {
      case memory_op::heap_register:
        register_heap(c);
        break;
      case memory_op::heap_reset:
      case memory_op::heap_unregister:
        reset_heap(c);
        break;
      case memory_op::regions_register:
        register_regions(c);
        break;
      case memory_op::regions_resize:
        resize_regions(c);
        break;
      case memory_op::regions_unregister:
        unregister_regions(c);
        break;
      default:
        break;
    }
  }

 private:
  struct heap {
    testing::counter_sample track;
    std::uint32_t domain = 0;
    std::int64_t bytes = 0;
    std::unordered_map<std::uint64_t, std::uint64_t> regions;  // address -> size
  };

  void publish(heap& h, call const& c) {
    h.track.value = h.bytes;
    emit_(sample{c.ns, c.tid, h.domain, &h.track});
  }

  /// Forgets the region at `address`; its heap (nullptr when none holds it).
  heap* drop_region(std::uint64_t address) {
    auto const at = region_heap_.find(address);
    if (at == region_heap_.end()) {
      return nullptr;
    }
    auto const hit = heaps_.find(at->second);
    region_heap_.erase(at);
    if (hit == heaps_.end()) {
      return nullptr;
    }
    heap& h = hit->second;
    if (auto const r = h.regions.find(address); r != h.regions.end()) {
      h.bytes -= static_cast<std::int64_t>(r->second);
      h.regions.erase(r);
    }
    return &h;
  }

  void clear(heap& h) {
    for (auto const& [address, bytes] : h.regions) {
      region_heap_.erase(address);
    }
    h.regions.clear();
    h.bytes = 0;
  }

  void register_heap(call const& c) {
    auto const& m = c.memory;
    heap& h = heaps_[m.heap];
    clear(h);
    h.domain = c.domain;
    h.track = testing::counter_sample{};
    h.track.id = next_id_++;
    h.track.name =
        fmt::format("{} bytes in use",
                    c.heap_name.empty() ? fmt::format("heap {:#x}", m.heap_base) : c.heap_name);
    h.track.unit = "B";
    h.track.value_type = 17;  // NVTX_PAYLOAD_ENTRY_TYPE_INT64
    h.track.type_name = "i64";
    publish(h, c);
  }

  /// A reset or an unregister: the heap's bytes drop to 0.
  void reset_heap(call const& c) {
    auto const it = heaps_.find(c.memory.heap);
    if (it == heaps_.end()) {
      return;
    }
    clear(it->second);
    publish(it->second, c);
    if (c.memory.op == testing::memory_op::heap_unregister) {
      heaps_.erase(it);
    }
  }

  void register_regions(call const& c) {
    auto const& m = c.memory;
    auto const it = heaps_.find(m.heap);
    if (it == heaps_.end()) {
      return;  // the process-wide heap, or one registered before the capture
    }
    for (auto const& r : m.regions) {
      drop_region(r.pointer);  // re-registered without an unregister: replaced
      it->second.regions[r.pointer] = r.bytes;
      it->second.bytes += static_cast<std::int64_t>(r.bytes);
      region_heap_[r.pointer] = m.heap;
    }
    publish(it->second, c);
  }

  void resize_regions(call const& c) {
    heap* changed = nullptr;
    for (auto const& r : c.memory.regions) {
      auto const at = region_heap_.find(r.pointer);
      if (at == region_heap_.end()) {
        continue;
      }
      heap& h = heaps_[at->second];
      std::uint64_t& size = h.regions[r.pointer];
      h.bytes += static_cast<std::int64_t>(r.bytes) - static_cast<std::int64_t>(size);
      size = r.bytes;
      changed = &h;
    }
    if (changed != nullptr) {
      publish(*changed, c);
    }
  }

  void unregister_regions(call const& c) {
    heap* changed = nullptr;
    for (auto const& r : c.memory.regions) {
      if (heap* h = drop_region(c.memory.by_handle ? r.handle : r.pointer)) {
        changed = h;
      }
    }
    if (changed != nullptr) {
      publish(*changed, c);
    }
  }

  std::function<void(sample const&)> const& emit_;
  std::unordered_map<std::uint64_t, heap> heaps_;                 // by handle
  std::unordered_map<std::uint64_t, std::uint64_t> region_heap_;  // address -> heap handle
  std::uint64_t next_id_ = first_id;
};

void heap_usage::finish(std::function<void(sample const&)> const& emit) {
  std::stable_sort(calls_.begin(), calls_.end(),
                   [](call const& a, call const& b) { return a.ns < b.ns; });
  replay r{emit};
  for (call const& c : calls_) {
    r.apply(c);
  }
  calls_.clear();
}

}  // namespace nvtxpp::capture::detail
