// Instrumented by nvtxpp_instrument(instrument_subject ...): see tests/instrument/CMakeLists.txt.
#include "subject.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace ns {

int fn(int x) { return x + 1; }

template <typename T>
T twice(T x) {
  return x + x;
}
template int twice<int>(int);

int widget::measure() const { return size * 2; }

static int file_local(int x) { return x * 3; }

int call_static_and_lambda(int x) {
  auto add = [x](int y) { return x + y; };
  return add(file_local(x));
}

int excluded_helper(int x) { return x - 1; }

int throw_through(int depth) {
  if (depth == 0) {
    throw std::runtime_error("deep");
  }
  return throw_through(depth - 1) + 1;
}

std::string format_answer(int x) { return fmt::format("answer {}", x); }

}  // namespace ns
