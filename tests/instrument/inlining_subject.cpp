// Built with nvtxpp_instrument(... AFTER_INLINING) under clang: the inlined helper makes no
// range. g++ instruments before inlining: the helper is a range of its own.
#include "inlining_subject.hpp"

namespace ns3 {
namespace {
__attribute__((always_inline)) inline int tiny(int x) { return x + 1; }
}  // namespace

int outer(int x) { return tiny(x) * 2; }
}  // namespace ns3
