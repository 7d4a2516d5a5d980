// The job's rank and host as the launcher sees them (launch_meta.hpp).

#include "launch_meta.hpp"

#include "rank_vars.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>

namespace nvtxpp::capture {

std::vector<std::pair<std::string, std::string>> launch_metadata() {
  std::vector<std::pair<std::string, std::string>> rows;
  process_rank const r = find_process_rank([](char const* name) { return std::getenv(name); });
  if (r.rank >= 0) {
    rows.emplace_back(meta_rank, std::to_string(r.rank));
    rows.emplace_back(meta_rank_source, r.variable);
    rows.emplace_back(meta_world_size, std::to_string(r.size));
  }
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') {
    rows.emplace_back(meta_host, host);
  }
  return rows;
}

std::int64_t test_clock_shift_ns() noexcept {
  char const* v = std::getenv("NVTXPP_CAPTURE_TEST_CLOCK_SHIFT_NS");
  if (v == nullptr || *v == '\0') {
    return 0;
  }
  char* end = nullptr;
  errno = 0;
  long long const n = std::strtoll(v, &end, 10);
  return errno != 0 || *end != '\0' ? 0 : static_cast<std::int64_t>(n);
}

std::int64_t utc_of_monotonic(std::int64_t mono_ns) noexcept {
  timespec real{};
  timespec mono{};
  ::clock_gettime(CLOCK_REALTIME, &real);
  ::clock_gettime(CLOCK_MONOTONIC, &mono);
  auto ns = [](timespec const& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; };
  return ns(real) - (ns(mono) - mono_ns) + test_clock_shift_ns();
}

}  // namespace nvtxpp::capture
