// Job-wide dumps on a GPU (check_job_gpu.py): each rank runs steps of GPU work (a "step" range
// around a kernel and a synchronize); one rank's one step runs a kernel of 1 s. The ranks say how
// far they got through files and stop when the test says so, never after a time.
//
//   job_gpu DIR SLOW_RANK SLOW_STEP   (DIR/ready.RANK after 100 steps; ends once DIR/stop exists)
// The rank comes from OMPI_COMM_WORLD_RANK. Exit status: 0; 2 when no GPU is usable.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

__global__ void add_one(float* x, int n) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    x[i] += 1.0F;
  }
}

/// Runs for `ns` of the GPU's global timer.
__global__ void spin(std::uint64_t ns) {
  std::uint64_t start = 0;
  std::uint64_t now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

bool exists(std::string const& path) { return ::access(path.c_str(), F_OK) == 0; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: job_gpu DIR SLOW_RANK SLOW_STEP\n");
    return 64;
  }
  std::string const dir = argv[1];
  int const slow_rank = std::atoi(argv[2]);
  long const slow_step = std::atol(argv[3]);
  char const* r = std::getenv("OMPI_COMM_WORLD_RANK");
  int const rank = r != nullptr ? std::atoi(r) : 0;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "job_gpu: no usable GPU\n");
    return 2;
  }
  int const n = 1 << 20;
  float* x = nullptr;
  cudaMalloc(&x, n * sizeof(float));
  cudaStream_t s{};
  cudaStreamCreate(&s);
  for (long i = 0;; ++i) {
    if (i == 100) {
      if (FILE* f = std::fopen((dir + "/ready." + std::to_string(rank)).c_str(), "w")) {
        std::fclose(f);
      }
    }
    if (i >= 100 && exists(dir + "/stop")) {
      break;
    }
    nvtxRangePushA("step");
    add_one<<<(n + 255) / 256, 256, 0, s>>>(x, n);
    if (rank == slow_rank && i == slow_step) {
      spin<<<1, 1, 0, s>>>(1'000'000'000ULL);
    }
    cudaStreamSynchronize(s);
    nvtxRangePop();
  }
  cudaStreamDestroy(s);
  cudaFree(x);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
