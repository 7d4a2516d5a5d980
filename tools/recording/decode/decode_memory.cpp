// Decoding of memory records (event_type::memory, NVTX's memory extension): the blob's
// memory_head and regions (format.hpp) into a testing::memory_call.

#include "decode.hpp"

#include <cstring>

namespace nvtxpp::recording {

bool decode_memory_call(raw_event const& r, testing::memory_call& out,
                        std::vector<std::string>& warnings) {
  auto const* p = reinterpret_cast<unsigned char const*>(r.blob.data());
  unsigned char const* const end = p + r.blob.size();
  if (r.blob.size() < sizeof(memory_head)) {
    warnings.push_back("memory record without its call (" + std::to_string(r.blob.size()) +
                       " bytes)");
    return false;
  }
  memory_head h;
  std::memcpy(&h, p, sizeof h);
  p += sizeof h;
  if (h.op > static_cast<std::uint32_t>(testing::memory_op::cuda_mark_initialized)) {
    warnings.push_back("memory record of unknown call " + std::to_string(h.op));
    return false;
  }
  out = testing::memory_call{};
  out.op = static_cast<testing::memory_op>(h.op);
  out.heap = h.heap;
  out.heap_base = h.heap_base;
  out.heap_bytes = h.heap_bytes;
  out.usage = h.usage;
  out.memory_type = h.memory_type;
  out.by_handle = h.by_handle != 0;
  out.region_count = h.count;
  out.permissions = h.permissions;
  out.flags = h.flags;
  out.scope = h.scope;
  out.device = h.device;
  out.stream = h.stream;
  for (std::uint32_t i = 0; i < h.stored; ++i) {
    if (static_cast<std::size_t>(end - p) < memory_element_bytes) {
      warnings.push_back("memory record cut short");
      return false;
    }
    testing::memory_region e;
    e.pointer = load<std::uint64_t>(p);
    e.handle = load<std::uint64_t>(p + 8);
    e.bytes = load<std::uint64_t>(p + 16);
    e.flags = load<std::uint32_t>(p + 24);
    e.category = load<std::uint32_t>(p + 28);
    auto const n = load<std::uint16_t>(p + 32);
    p += memory_element_bytes;
    if (n > max_memory_name || static_cast<std::size_t>(end - p) < n) {
      warnings.push_back("memory record with a cut name");
      return false;
    }
    e.name.assign(reinterpret_cast<char const*>(p), n);
    p += n;
    out.regions.push_back(std::move(e));
  }
  if (out.regions.size() < out.region_count) {
    warnings.push_back(std::string{"memory call "} + testing::to_string(out.op) + " kept " +
                       std::to_string(out.regions.size()) + " of its " +
                       std::to_string(out.region_count) + " regions");
  }
  return true;
}

}  // namespace nvtxpp::recording
