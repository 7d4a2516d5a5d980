// The pure half of the CUPTI source: CUPTI activity records (CUDA 13 layouts) to gpu_format.hpp
// records. No CUPTI call here (names of API functions come through a function pointer), so the
// unit tests drive it with records built in memory.
#include "cupti.hpp"

#include <cupti.h>

#include <cstring>

namespace nvtxpp::capture::cupti {

namespace rec = nvtxpp::recording;

std::uint32_t converter::intern(std::string_view text) {
  auto [it, added] =
      ids_.try_emplace(std::string{text}, static_cast<std::uint32_t>(texts_.size() + 1));
  if (added) {
    texts_.emplace_back(text);
    fresh_.push_back(it->second);
  }
  return it->second;
}

std::uint32_t converter::api_name_id(std::uint32_t domain, std::uint32_t cbid) {
  std::uint64_t const key = (std::uint64_t{domain} << 32) | cbid;
  if (auto it = api_ids_.find(key); it != api_ids_.end()) {
    return it->second;
  }
  char const* name = api_name_ != nullptr ? api_name_(domain, cbid) : nullptr;
  std::uint32_t const id =
      name != nullptr && *name != '\0'
          ? intern(name)  // as CUPTI names it ("cudaMemcpyAsync_v3020"), like nsys's export
          : intern(
                (domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cuda runtime API " : "cuda driver API ") +
                std::to_string(cbid));
  api_ids_.emplace(key, id);
  return id;
}

namespace {

template <class T>
void put(gpu_out& out, rec::gpu_record kind, T const& body) noexcept {
  static_assert(sizeof(T) <= sizeof out.body);
  out.kind = kind;
  out.size = sizeof(T);
  std::memcpy(out.body, &body, sizeof(T));
  out.text.clear();
  out.graph_node = 0;
  out.graph = 0;
}

std::int64_t ns(std::uint64_t t) noexcept { return static_cast<std::int64_t>(t); }

/// A unified memory migration as a gpu_memcpy (gpu_format.hpp); false for other counters.
bool convert_migration(CUpti_ActivityUnifiedMemoryCounter3 const& u, gpu_out& out) noexcept {
  // Transfers only: page faults, thrashing and the like are other counter kinds (not enabled).
  rec::migration_kind kind{};
  switch (u.counterKind) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
      kind = rec::migration_kind::htod;
      break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
      kind = rec::migration_kind::dtoh;
      break;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD:
      kind = rec::migration_kind::dtod;
      break;
    default:
      return false;
  }
  rec::gpu_memcpy g{};
  g.start = ns(u.start);
  g.end = ns(u.end);
  // The GPU end of the transfer: the destination, but the source when data leaves a device.
  g.device = kind == rec::migration_kind::dtoh ? u.srcId : u.dstId;
  g.stream = rec::migration_stream;  // CUPTI documents the record's streamId as invalid
  g.bytes = u.value;
  g.copy_kind = static_cast<std::uint8_t>(kind);
  g.src_kind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  g.dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  g.cause = u.flags;
  put(out, rec::gpu_record::memcpy, g);
  return true;
}

}  // namespace

/// A kernel's record (in flight: not yet).
bool converter::convert_kernel(void const* activity, gpu_out& out) {
  auto const& k = *static_cast<CUpti_ActivityKernel10 const*>(activity);
  if (in_flight(k.start, k.end)) {
    return false;
  }
  rec::gpu_kernel g{};
  g.start = ns(k.start);
  g.end = ns(k.end);
  g.device = k.deviceId;
  g.context = k.contextId;
  g.stream = k.streamId;
  g.correlation = correlation(k.correlationId);
  g.name = intern(k.name != nullptr ? k.name : "<unnamed kernel>");
  g.grid[0] = k.gridX;
  g.grid[1] = k.gridY;
  g.grid[2] = k.gridZ;
  g.block[0] = k.blockX;
  g.block[1] = k.blockY;
  g.block[2] = k.blockZ;
  g.registers_per_thread = k.registersPerThread;
  g.static_shared = k.staticSharedMemory;
  g.dynamic_shared = k.dynamicSharedMemory;
  g.local_per_thread = k.localMemoryPerThread;
  // localMemoryTotal (32 bits) can overflow; CUPTI fills the 64-bit field since Kernel9.
  g.local_total = k.localMemoryTotal_v2 != 0 ? k.localMemoryTotal_v2 : k.localMemoryTotal;
  g.grid_id = static_cast<std::uint64_t>(k.gridId);
  g.shared_executed = k.sharedMemoryExecuted;
  g.launch_type = k.launchType;
  g.cache_config = k.cacheConfig.config.requested;
  put(out, rec::gpu_record::kernel, g);
  out.graph_node = k.graphNodeId;
  out.graph = k.graphId;
  ++gpu_work_;
  return true;
}

/// A copy's record (in flight: not yet).
bool converter::convert_memcpy(void const* activity, gpu_out& out) {
  auto const& m = *static_cast<CUpti_ActivityMemcpy6 const*>(activity);
  if (in_flight(m.start, m.end)) {
    return false;
  }
  rec::gpu_memcpy g{};
  g.start = ns(m.start);
  g.end = ns(m.end);
  g.device = m.deviceId;
  g.context = m.contextId;
  g.stream = m.streamId;
  g.correlation = correlation(m.correlationId);
  g.bytes = m.bytes;
  g.copy_kind = m.copyKind;
  g.src_kind = m.srcKind;
  g.dst_kind = m.dstKind;
  g.flags = m.flags;
  put(out, rec::gpu_record::memcpy, g);
  out.graph_node = m.graphNodeId;
  out.graph = m.graphId;
  ++gpu_work_;
  return true;
}

/// A memset's record (in flight: not yet).
bool converter::convert_memset(void const* activity, gpu_out& out) {
  auto const& m = *static_cast<CUpti_ActivityMemset4 const*>(activity);
  if (in_flight(m.start, m.end)) {
    return false;
  }
  rec::gpu_memset g{};
  g.start = ns(m.start);
  g.end = ns(m.end);
  g.device = m.deviceId;
  g.context = m.contextId;
  g.stream = m.streamId;
  g.correlation = correlation(m.correlationId);
  g.bytes = m.bytes;
  g.value = m.value;
  g.mem_kind = m.memoryKind;
  put(out, rec::gpu_record::memset, g);
  out.graph_node = m.graphNodeId;
  out.graph = m.graphId;
  ++gpu_work_;
  return true;
}

/// A synchronisation's record.
bool converter::convert_sync(void const* activity, gpu_out& out) {
  auto const& s = *static_cast<CUpti_ActivitySynchronization2 const*>(activity);
  rec::gpu_sync g{};
  g.start = ns(s.start);
  g.end = ns(s.end);
  g.context = s.contextId;
  g.stream = s.streamId;
  g.correlation = correlation(s.correlationId);
  g.type = static_cast<std::uint32_t>(s.type);
  g.event = s.cudaEventId;
  put(out, rec::gpu_record::sync, g);
  return true;
}

/// A runtime or driver API call's record.
bool converter::convert_api(void const* activity, bool runtime, gpu_out& out) {
  auto const& a = *static_cast<CUpti_ActivityAPI const*>(activity);
  rec::gpu_api g{};
  g.start = ns(a.start);
  g.end = ns(a.end);
  g.kind =
      static_cast<std::uint32_t>(runtime ? rec::gpu_api_kind::runtime : rec::gpu_api_kind::driver);
  g.cbid = a.cbid;
  g.correlation = correlation(a.correlationId);
  g.pid = a.processId;
  g.tid = a.threadId;
  g.name = api_name_id(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a.cbid);
  g.return_value = static_cast<std::int32_t>(a.returnValue);
  put(out, rec::gpu_record::api, g);
  return true;
}

bool converter::convert(void const* activity, gpu_out& out) {
  CUpti_ActivityKind kind{};
  std::memcpy(&kind, activity, sizeof kind);
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return convert_kernel(activity, out);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return convert_memcpy(activity, out);
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
      if (!convert_migration(*static_cast<CUpti_ActivityUnifiedMemoryCounter3 const*>(activity),
                             out)) {
        return false;
      }
      ++gpu_work_;
      return true;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return convert_memset(activity, out);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return convert_sync(activity, out);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return convert_api(activity, kind == CUPTI_ACTIVITY_KIND_RUNTIME, out);
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      auto const& d = *static_cast<CUpti_ActivityDevice5 const*>(activity);
      out.kind = rec::gpu_record::info;
      out.size = 0;
      out.text = "device=" + std::to_string(d.id) + ":" + (d.name != nullptr ? d.name : "");
      return true;
    }
    default:
      return false;
  }
}

}  // namespace nvtxpp::capture::cupti
