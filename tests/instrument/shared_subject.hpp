// A shared library built with nvtxpp_instrument() (shared_subject.cpp).
#pragma once

namespace ns2 {
int shared_fn(int x);
}  // namespace ns2
