// A type that counts how often fmt formats it: formatting must happen only while a tool listens.
#pragma once

#include <fmt/format.h>

namespace nvtxpp_test {
struct counted {
  static inline int formatted = 0;
};
}  // namespace nvtxpp_test

template <>
struct fmt::formatter<nvtxpp_test::counted> : fmt::formatter<int> {
  template <typename Ctx>
  auto format(nvtxpp_test::counted const&, Ctx& ctx) const {
    ++nvtxpp_test::counted::formatted;
    return fmt::formatter<int>::format(42, ctx);
  }
};
