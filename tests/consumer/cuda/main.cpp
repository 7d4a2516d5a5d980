// The C++ file of the consumer: nvtxpp in a .cpp file of the same target as the .cu files.
#include "consumer.hpp"

#include <nvtxpp/nvtxpp.hpp>

#include <cstdio>

namespace consumer {
struct host_side {
  static int run(int step) {
    ANNOTATE_FUNCTION();
    return step;
  }
};
}  // namespace consumer

int cpp_side(int step) {
  nvtxpp::scoped_range r{"cpp step {} std {}", step, CONSUMER_STD, nvtxpp::colors::blue};
  return consumer::host_side::run(step);
}

int main() {
  ANNOTATE_SCOPE("consumer main");
  int devices = 0;
  for (int step = 0; step < 3; ++step) {
    cpp_side(step);
    devices = cuda_side(step);
  }
  std::printf("consumer: C++%d host file, %d GPU(s)\n", CONSUMER_STD, devices);
  return 0;
}
