// Which API call launched each GPU operation (launch_index.hpp).
#include "launch_index.hpp"

#include <algorithm>

namespace nvtxpp::capture {

namespace rec = nvtxpp::recording;

launch_index::launch_index(std::vector<rec::gpu_api> const& calls) {
  for (auto const& c : calls) {
    if (c.kind == static_cast<std::uint32_t>(rec::gpu_api_kind::runtime)) {
      runtime_[c.tid].push_back({c.start, c.end, c.correlation});
      runtime_ids_.insert(c.correlation);
    }
  }
  for (auto& [tid, list] : runtime_) {
    std::sort(list.begin(), list.end(),
              [](span const& a, span const& b) { return a.start < b.start; });
  }
  for (auto const& c : calls) {
    if (c.kind != static_cast<std::uint32_t>(rec::gpu_api_kind::driver)) {
      continue;
    }
    std::uint32_t id = c.correlation;
    if (runtime_ids_.count(id) == 0) {
      if (span const* outer = enclosing(c.tid, c.start, c.end)) {
        id = outer->correlation;  // the runtime call's own driver call: its work is the call's
      }
    }
    launcher_.try_emplace(c.correlation, id);
  }
}

launch_index::span const* launch_index::enclosing(std::uint64_t tid, std::int64_t start,
                                                  std::int64_t end) const {
  auto const it = runtime_.find(tid);
  if (it == runtime_.end()) {
    return nullptr;
  }
  auto const& list = it->second;
  // Runtime calls of one thread follow one another; the candidate is the last one that starts
  // at or before `start` (a runtime call inside another, from a host callback, is checked too).
  auto at = std::upper_bound(list.begin(), list.end(), start,
                             [](std::int64_t t, span const& s) { return t < s.start; });
  for (int tries = 0; at != list.begin() && tries < 4; ++tries) {
    --at;
    if (at->start <= start && end <= at->end && start < at->end) {
      return &*at;
    }
  }
  return nullptr;
}

bool launch_index::nested(rec::gpu_api const& call) const {
  if (call.kind != static_cast<std::uint32_t>(rec::gpu_api_kind::driver)) {
    return false;
  }
  return runtime_ids_.count(call.correlation) != 0 ||
         enclosing(call.tid, call.start, call.end) != nullptr;
}

std::uint32_t launch_index::launcher(std::uint32_t correlation) const {
  if (correlation == 0) {
    return 0;
  }
  if (runtime_ids_.count(correlation) != 0) {
    return correlation;
  }
  auto const it = launcher_.find(correlation);
  return it == launcher_.end() ? 0 : it->second;
}

}  // namespace nvtxpp::capture
