// The job's rank and host as the launcher sees them (launch_meta.hpp).

#include "launch_meta.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>

namespace nvtxpp::capture {

namespace {

/// The variable's value when it is a non-negative decimal number, else "".
std::string number_var(char const* name) {
  char const* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    return {};
  }
  for (char const* p = v; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') {
      return {};
    }
  }
  return v;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> launch_metadata() {
  std::vector<std::pair<std::string, std::string>> rows;
  // Rank and size variables of Open MPI, PMIx, MPICH/PMI and Slurm, in that order.
  static constexpr char const* vars[][2] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                            {"PMIX_RANK", "PMIX_SIZE"},
                                            {"PMI_RANK", "PMI_SIZE"},
                                            {"SLURM_PROCID", "SLURM_NTASKS"}};
  for (auto const& v : vars) {
    std::string rank = number_var(v[0]);
    if (!rank.empty()) {
      rows.emplace_back(meta_rank, rank);
      rows.emplace_back(meta_rank_source, v[0]);
      if (std::string size = number_var(v[1]); !size.empty()) {
        rows.emplace_back(meta_world_size, size);
      }
      break;
    }
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
