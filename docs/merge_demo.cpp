// Demo for docs/capture-ranks.md "Merge the ranks": one rank of a bulk-synchronous solver,
// annotated with nvtxpp, run as 4 ranks by mpirun (no MPI calls: the rank comes from Open MPI's
// variable). Rank 2 computes 40 % longer than the others; the others spend that time in "exchange",
// as they would waiting for it at a halo exchange. The work is sleeps, so that 4 ranks on 2 cores
// keep their proportions.
#include <chrono>
#include <cstdlib>
#include <nvtxpp/nvtxpp.hpp>
#include <thread>
static void work_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
int main() {
  char const* r = std::getenv("OMPI_COMM_WORLD_RANK");
  int const rank = r != nullptr ? std::atoi(r) : 0;
  nvtxpp::name_current_thread("rank {} main", rank);
  NVTXPP_SCOPE("solve");
  for (int step = 0; step < 4; ++step) {
    {
      NVTXPP_SCOPE("compute");
      work_ms(rank == 2 ? 14 : 10);
    }
    {
      NVTXPP_SCOPE("exchange");
      work_ms(rank == 2 ? 1 : 5);
    }
  }
}
