/// @file
/// @brief Bytes in use per NVTX memory heap over time, from a process's memory calls (NVTX's
/// memory extension), as counter samples: one track per heap ("<heap> bytes in use").
///
/// Calls are collected from every thread, then replayed in time order (regions of one heap may
/// come and go on several threads). A heap's track starts at 0 when it is registered, changes at
/// each region registered, resized or unregistered in it, and drops to 0 at a reset or when the
/// heap is unregistered. Regions are matched by address (by-handle references too: tools hand
/// out the address as the handle of a virtual-address region).
#pragma once

#include <nvtxpp/testing/event.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nvtxpp::capture::detail {

class heap_usage {
 public:
  /// @brief One memory call, as decoded.
  void add(std::int64_t ns, std::uint64_t tid, std::uint32_t domain, std::string heap_name,
           testing::memory_call call);

  /// @brief A change of one heap's bytes in use: the sample to deliver.
  struct sample {
    std::int64_t ns;
    std::uint64_t tid;
    std::uint32_t domain;
    testing::counter_sample const* value;
  };

  /// @brief Replays the calls in time order and calls @p emit for each change.
  void finish(std::function<void(sample const&)> const& emit);

  /// @brief Counter ids of heap tracks start here (above any id NVTX hands out: 2^32 and up
  /// are dynamic counter ids, so these sit at the top of the 64-bit range).
  static constexpr std::uint64_t first_id = 0xFFFF000000000000ULL;

 private:
  struct call {
    std::int64_t ns;
    std::uint64_t tid;
    std::uint32_t domain;
    std::string heap_name;
    testing::memory_call memory;
  };
  class replay;  // the heaps' state while the calls are replayed (heap_usage.cpp)
  std::vector<call> calls_;
};

}  // namespace nvtxpp::capture::detail
