// The flight recorder on a GPU (check_flight_gpu.py): GPU work whose records CUPTI still holds
// when a dump is requested, then a thread stuck in cudaStreamSynchronize behind a kernel that
// waits for the host. The program says how far it got through files and waits for the test's
// word, never for a time.
//
//   flight_gpu DIR     (DIR/ready1: the warm-up's kernels are done; waits for DIR/go;
//                       DIR/release lets the waiting kernel finish)
// Exit status: 0; 2 when no GPU is usable.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

namespace {

constexpr int warmup_kernels = 50;

__global__ void add_one(float* x, int n) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    x[i] += 1.0F;
  }
}

/// Runs until the host sets *flag (host-mapped memory).
__global__ void wait_for_host(int const volatile* flag) {
  while (*flag == 0) {
    __nanosleep(10000);
  }
}

bool exists(std::string const& path) { return ::access(path.c_str(), F_OK) == 0; }

void touch(std::string const& path) {
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    std::fclose(f);
  }
}

void wait_file(std::string const& path) {
  while (!exists(path)) {
    timespec const t{0, 2'000'000};
    ::nanosleep(&t, nullptr);  // polling a condition
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: flight_gpu DIR\n");
    return 64;
  }
  std::string const dir = argv[1];
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "flight_gpu: no CUDA device\n");
    return 2;
  }
  constexpr int n = 1 << 16;
  float* x = nullptr;
  int* flag = nullptr;
  cudaStream_t stream{};
  cudaMalloc(&x, n * sizeof(float));
  cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped);
  *flag = 0;
  cudaStreamCreate(&stream);

  nvtxRangePushA("warmup");
  for (int i = 0; i < warmup_kernels; ++i) {
    add_one<<<(n + 255) / 256, 256, 0, stream>>>(x, n);
  }
  cudaStreamSynchronize(stream);
  nvtxRangePop();
  touch(dir + "/ready1");  // the kernels are done; their records may still sit in CUPTI
  wait_file(dir + "/go");

  std::thread releaser{[&] {
    wait_file(dir + "/release");
    *reinterpret_cast<int volatile*>(flag) = 1;
  }};
  nvtxRangePushA("step");
  nvtxRangePushA("wait for GPU");
  int* dflag = nullptr;
  cudaHostGetDevicePointer(reinterpret_cast<void**>(&dflag), flag, 0);
  wait_for_host<<<1, 1, 0, stream>>>(dflag);
  cudaError_t const e = cudaStreamSynchronize(stream);  // stuck until the test says release
  nvtxRangePop();
  nvtxRangePop();
  releaser.join();
  cudaStreamDestroy(stream);
  cudaFreeHost(flag);
  cudaFree(x);
  std::printf("flight_gpu: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
