// Demo for docs/capture.md "Multi-rank jobs": one rank of a bulk-synchronous solver, annotated
// with nvtxpp, run as 4 ranks by mpirun (no MPI calls: the rank comes from Open MPI's variable).
// Rank 2 computes 40 % longer than the others; the others spend that time in "exchange", as
// they would waiting for it at a halo exchange.
#include <time.h>
#include <cstdlib>
#include <nvtxpp/nvtxpp.hpp>
static void spin_us(int us) {
  timespec a{}, b{};
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}
int main() {
  char const* r = std::getenv("OMPI_COMM_WORLD_RANK");
  int const rank = r != nullptr ? std::atoi(r) : 0;
  nvtxpp::name_current_thread("rank {} main", rank);
  NVTXPP_SCOPE("solve");
  for (int step = 0; step < 4; ++step) {
    {
      NVTXPP_SCOPE("compute");
      spin_us(rank == 2 ? 1400 : 1000);
    }
    {
      NVTXPP_SCOPE("exchange");
      spin_us(rank == 2 ? 100 : 500);
    }
  }
}
