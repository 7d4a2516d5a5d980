// A file that includes fmt before nvtxpp: in a configuration where fmt needs nvtxpp's settings
// (nvcc -std=c++20 with fmt 9; clang with a g++-built libfmt), nvtxpp's #error must say what to do.
#include <fmt/core.h>
#include <nvtxpp/nvtxpp.hpp>

int main() {
  nvtxpp::scoped_range r{"step {}", 1};
  return 0;
}
