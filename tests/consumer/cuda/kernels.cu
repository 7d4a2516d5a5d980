// The CUDA file of the consumer: nvtxpp in a .cu file, with kernels (launched only when a GPU is
// there; the matrix runs where there is none, and checks what NVTX received).
#include "consumer.hpp"

#include <nvtxpp/cuda.hpp>
#include <nvtxpp/nvtxpp.hpp>

#include <cuda_runtime.h>

NVTXPP_DEFINE_DOMAIN(consumer_domain, "consumer");

#ifdef CONSUMER_SEPARABLE
__device__ float twice(float x);  // device_helpers.cu
#else
__device__ inline float twice(float x) { return 2.0f * x; }
#endif

__global__ void scale(float* x, int n) {
  int const i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) x[i] = twice(x[i]);
}

// Function names as nvcc's host compiler writes them, which nvcc's own front end does not see
// alike: a member of a class in a named and an anonymous namespace, and a lambda in it.
namespace consumer {
namespace {
struct launcher {
  static int run(int step) {
    ANNOTATE_FUNCTION();
    auto const inner = [step] {
      ANNOTATE_FUNCTION();
      return step;
    };
    return inner();
  }
};
}  // namespace
}  // namespace consumer

int cuda_side(int step) {
  ANNOTATE_FUNCTION(nvtxpp::colors::green);
  consumer::launcher::run(step);
  nvtxpp::scoped_range r{"cu step {} std {}", step, CONSUMER_STD, nvtxpp::colors::orange,
                         nvtxpp::payload{step}};
  nvtxpp::scoped_range_in<consumer_domain> d{"cu in domain"};
  nvtxpp::mark("cu mark {}", step);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return 0;
  cudaStream_t stream{};
  cudaStreamCreate(&stream);
  nvtxpp::name_cuda_stream(stream, "consumer stream {}", step);
  float* x = nullptr;
  cudaMalloc(&x, 256 * sizeof(float));
  scale<<<1, 256, 0, stream>>>(x, 256);
  cudaStreamSynchronize(stream);
  cudaFree(x);
  cudaStreamDestroy(stream);
  return devices;
}
