// Helpers for asserting on what NVTX received, through nvtxpp::testing.
#pragma once

#include <nvtxpp/testing/recorder.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace nvtxpp_test {

using nvtxpp::testing::event;
using nvtxpp::testing::event_type;

/// The events of the given types, in order.
inline std::vector<event> only(std::vector<event> const& all,
                               std::initializer_list<event_type> types) {
  std::vector<event> out;
  for (auto const& e : all) {
    if (std::find(types.begin(), types.end(), e.type) != types.end()) out.push_back(e);
  }
  return out;
}

/// Range and mark events only (push, pop, start, end, mark).
inline std::vector<event> annotations(nvtxpp::testing::recorder const& rec) {
  return only(rec.events(), {event_type::push, event_type::pop, event_type::start, event_type::end,
                             event_type::mark});
}

}  // namespace nvtxpp_test
