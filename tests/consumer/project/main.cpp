// Annotates a little work; prints the version it was built against.
#include <nvtxpp/nvtxpp.hpp>

#include <cstdio>

NVTXPP_DEFINE_DOMAIN(consumer_domain, "Consumer");

#ifdef CONSUMER_EXPECT_FUNCTION_NAMES
static_assert(static_cast<nvtxpp::function_name_style>(NVTXPP_DETAIL_FUNCTION_NAMES) ==
                  nvtxpp::function_name_style::CONSUMER_EXPECT_FUNCTION_NAMES,
              "the CMake option NVTXPP_FUNCTION_NAMES did not reach this file");
#endif

static int work(int n) {
  ANNOTATE_FUNCTION(nvtxpp::colors::green);
  int sum = 0;
  for (int i = 0; i < n; ++i) {
    nvtxpp::scoped_range_in<consumer_domain> r{"item {}", i, nvtxpp::payload{i}};
    sum += i;
  }
  return sum;
}

int main() {
  std::printf("nvtxpp %d.%d.%d consumer: %d\n", NVTXPP_VERSION_MAJOR, NVTXPP_VERSION_MINOR,
              NVTXPP_VERSION_PATCH, work(10));
  return work(10) == 45 ? 0 : 1;
}
