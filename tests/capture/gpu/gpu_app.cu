// A CUDA program for nvtxpp-capture's GPU tests: `gpu_app <case> [n]`. Each case does a known
// amount of GPU work; check_gpu.py runs it under nvtxpp-capture and counts what was recorded.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

#define GPU_APP_CHECK(call)                                                              \
  do {                                                                                   \
    cudaError_t const err_ = (call);                                                     \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "gpu_app: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
      std::exit(70);                                                                     \
    }                                                                                    \
  } while (0)

__global__ void tiny(int* p) { p[threadIdx.x] += 1; }

__global__ void spin(long long cycles) {
  long long const t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

// n launches, each inside its own range "launch <i>"; then 4 HtoD and 3 DtoH copies, 2 memsets.
int range_case(int n) {
  int* d = nullptr;
  GPU_APP_CHECK(cudaMalloc(&d, 32 * sizeof(int)));
  GPU_APP_CHECK(cudaMemset(d, 0, 32 * sizeof(int)));
  for (int i = 0; i < n; ++i) {
    std::string const name = "launch " + std::to_string(i);
    nvtxRangePushA(name.c_str());
    tiny<<<1, 32>>>(d);
    nvtxRangePop();
  }
  GPU_APP_CHECK(cudaGetLastError());
  int host[32] = {};
  for (int i = 0; i < 4; ++i) {
    GPU_APP_CHECK(cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice));
  }
  for (int i = 0; i < 3; ++i) {
    GPU_APP_CHECK(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost));
  }
  GPU_APP_CHECK(cudaMemset(d, 1, 32 * sizeof(int)));
  GPU_APP_CHECK(cudaDeviceSynchronize());
  GPU_APP_CHECK(cudaFree(d));
  std::printf("kernels=%d htod=4 dtoh=3 memset=2\n", n);
  return 0;
}

// n tiny kernels back to back: many records, exact count, none dropped.
int many_case(int n) {
  int* d = nullptr;
  GPU_APP_CHECK(cudaMalloc(&d, 32 * sizeof(int)));
  for (int i = 0; i < n; ++i) {
    tiny<<<1, 32>>>(d);
  }
  GPU_APP_CHECK(cudaGetLastError());
  GPU_APP_CHECK(cudaDeviceSynchronize());
  std::printf("kernels=%d\n", n);
  return 0;
}

// n kernels of ~50 ms each queued, then SIGTERM while they run: the records must all arrive.
int sigterm_case(int n) {
  int khz = 0;  // ~50 ms a kernel (100 M cycles when the clock rate is not reported)
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) != cudaSuccess || khz <= 0) {
    khz = 2'000'000;
    (void)cudaGetLastError();  // not this case's failure
  }
  long long const cycles = static_cast<long long>(khz) * 50;
  nvtxRangePushA("queue kernels");
  for (int i = 0; i < n; ++i) {
    spin<<<1, 1>>>(cycles);
  }
  GPU_APP_CHECK(cudaGetLastError());
  nvtxRangePop();
  bool const running = cudaStreamQuery(nullptr) == cudaErrorNotReady;
  std::printf("launched=%d still_running=%d\n", n, running ? 1 : 0);
  std::fflush(stdout);
  nvtxRangePushA("killed here");
  std::raise(SIGTERM);
  return 0;  // not reached
}

// Run with CUDA_VISIBLE_DEVICES="": CUDA fails; NVTX goes on; the exit status is the program's.
int nodevice_case() {
  nvtxRangePushA("before CUDA");
  int count = -1;
  cudaError_t const err = cudaGetDeviceCount(&count);
  nvtxRangePop();
  std::printf("cudaGetDeviceCount: %s, count %d\n", cudaGetErrorString(err), count);
  return err == cudaSuccess && count > 0 ? 1 : 7;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gpu_app range|many|sigterm|nodevice [n]\n");
    return 64;
  }
  int const n = argc > 2 ? std::atoi(argv[2]) : 0;
  std::string const which = argv[1];
  if (which == "range") return range_case(n > 0 ? n : 1000);
  if (which == "many") return many_case(n > 0 ? n : 100000);
  if (which == "sigterm") return sigterm_case(n > 0 ? n : 20);
  if (which == "nodevice") return nodevice_case();
  std::fprintf(stderr, "unknown case %s\n", which.c_str());
  return 64;
}
