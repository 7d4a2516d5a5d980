// The reader's half of the call table (call_table.hpp): copies each busy slot under its
// sequence lock.

#include "call_table.hpp"

#include <cstring>

namespace nvtxpp::recording {

namespace {

/// Reads of one slot before it is given up as busy (its owner entering and leaving calls as
/// fast as it can; a stuck thread, the case that matters, reads at once).
constexpr int slot_tries = 1000;

bool copy_slot(call_slot const& s, call_state& out) {
  for (int attempt = 0; attempt < slot_tries; ++attempt) {
    std::uint32_t const before = s.seq.load(std::memory_order_acquire);
    if ((before & 1U) != 0) {
      continue;
    }
    out.tid = s.tid.load(std::memory_order_acquire);
    out.depth = s.depth.load(std::memory_order_acquire);
    out.frames.clear();
    std::uint32_t const kept = out.depth < call_frames_kept ? out.depth : call_frames_kept;
    for (std::uint32_t d = 0; d < kept; ++d) {
      call_frame const& f = s.frame[d];
      char text[call_name_bytes + 1] = {};
      for (std::size_t w = 0; w < call_name_bytes / 8; ++w) {
        std::uint64_t const word = f.name[w].load(std::memory_order_acquire);
        for (std::size_t b = 0; b < 8; ++b) {
          text[8 * w + b] = static_cast<char>((word >> (8 * b)) & 0xFFU);
        }
      }
      out.frames.push_back({std::string{text}, f.start_ticks.load(std::memory_order_acquire)});
    }
    if (s.seq.load(std::memory_order_relaxed) == before) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<call_state> read_call_table(void const* region, std::size_t size) {
  std::vector<call_state> out;
  if (region == nullptr || size < sizeof(call_table_header)) {
    return out;
  }
  auto const* h = static_cast<call_table_header const*>(region);
  if (std::memcmp(h->magic, call_table_magic, sizeof h->magic) != 0 ||
      h->slot_bytes != sizeof(call_slot) ||
      size < sizeof(call_table_header) + std::size_t{h->slots} * sizeof(call_slot)) {
    return out;
  }
  auto const* slots = reinterpret_cast<call_slot const*>(h + 1);
  for (std::uint32_t i = 0; i < h->slots; ++i) {
    call_slot const& s = slots[i];
    if (s.tid.load(std::memory_order_acquire) == 0 ||
        s.depth.load(std::memory_order_acquire) == 0) {
      continue;
    }
    call_state c;
    if (copy_slot(s, c) && c.tid != 0 && c.depth != 0) {
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace nvtxpp::recording
