// Instrumented program calling an instrumented shared library (check_shared.py).
#include "shared_subject.hpp"

namespace app {
int step(int i) { return ns2::shared_fn(i); }
}  // namespace app

int main() {
  int s = 0;
  for (int i = 0; i < 3; ++i) s += app::step(i);
  return s == 18 ? 0 : 1;  // (0*5+1) + (1*5+1) + (2*5+1)
}
