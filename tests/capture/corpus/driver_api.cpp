// Corpus: the CUDA driver API used directly, as JIT compilers and Python libraries do: a kernel
// compiled at run time by NVRTC, loaded with cuModuleLoadData, launched with cuLaunchKernel and
// cuLaunchKernelEx on a stream of its own, with cuMemcpyHtoDAsync, cuMemsetD32Async and
// cuMemcpyDtoHAsync around it. No CUDA runtime call at all.
#include "corpus_check.hpp"

#include <cuda.h>
#include <nvrtc.h>
#include <nvtxpp/nvtxpp.hpp>

#include <string>
#include <vector>

namespace {

char const* const source = R"(
extern "C" __global__ void scale_add(float* y, float const* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

std::string compile(int major, int minor) {
  nvrtcProgram prog = nullptr;
  CORPUS_CHECK(nvrtcCreateProgram(&prog, source, "scale_add.cu", 0, nullptr, nullptr));
  std::string const arch = "--gpu-architecture=compute_" + std::to_string(major * 10 + minor);
  char const* options[] = {arch.c_str()};
  if (nvrtcCompileProgram(prog, 1, options) != NVRTC_SUCCESS) {
    std::size_t log_size = 0;
    nvrtcGetProgramLogSize(prog, &log_size);
    std::string log(log_size, '\0');
    nvrtcGetProgramLog(prog, log.data());
    std::fprintf(stderr, "nvrtc: %s\n", log.c_str());
    std::exit(1);
  }
  std::size_t ptx_size = 0;
  CORPUS_CHECK(nvrtcGetPTXSize(prog, &ptx_size));
  std::string ptx(ptx_size, '\0');
  CORPUS_CHECK(nvrtcGetPTX(prog, ptx.data()));
  CORPUS_CHECK(nvrtcDestroyProgram(&prog));
  return ptx;
}

}  // namespace

int main() {
  CORPUS_CHECK(cuInit(0));
  CUdevice dev = 0;
  CORPUS_CHECK(cuDeviceGet(&dev, 0));
  int major = 0, minor = 0;
  CORPUS_CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CORPUS_CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  CUcontext ctx = nullptr;
  CORPUS_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CORPUS_CHECK(cuCtxSetCurrent(ctx));
  CUmodule module = nullptr;
  CUfunction kernel = nullptr;
  {
    nvtxpp::scoped_range r{"JIT compile and load"};
    std::string const ptx = compile(major, minor);
    CORPUS_CHECK(cuModuleLoadData(&module, ptx.c_str()));
    CORPUS_CHECK(cuModuleGetFunction(&kernel, module, "scale_add"));
  }
  int n = 1 << 22;
  std::size_t const bytes = sizeof(float) * static_cast<std::size_t>(n);
  std::vector<float> host(static_cast<std::size_t>(n), 2.0f), result(host.size());
  CUdeviceptr x = 0, y = 0;
  CORPUS_CHECK(cuMemAlloc(&x, bytes));
  CORPUS_CHECK(cuMemAlloc(&y, bytes));
  CUstream stream = nullptr;
  CORPUS_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  {
    nvtxpp::scoped_range r{"H2D Memory"};
    CORPUS_CHECK(cuMemcpyHtoDAsync(x, host.data(), bytes, stream));
    CORPUS_CHECK(cuMemsetD32Async(y, 0x3f800000u, static_cast<std::size_t>(n), stream));  // 1.0f
  }
  float a = 3.0f;
  void* args[] = {&y, &x, &a, &n};
  unsigned const threads = 256, blocks = (static_cast<unsigned>(n) + threads - 1) / threads;
  for (int i = 0; i < 10; ++i) {
    nvtxpp::scoped_range r{"cuLaunchKernel"};
    CORPUS_CHECK(cuLaunchKernel(kernel, blocks, 1, 1, threads, 1, 1, 0, stream, args, nullptr));
  }
  for (int i = 0; i < 5; ++i) {
    nvtxpp::scoped_range r{"cuLaunchKernelEx"};
    CUlaunchConfig config{};
    config.gridDimX = blocks;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = threads;
    config.blockDimY = config.blockDimZ = 1;
    config.hStream = stream;
    CORPUS_CHECK(cuLaunchKernelEx(&config, kernel, args, nullptr));
  }
  {
    nvtxpp::scoped_range r{"D2H Memory"};
    CORPUS_CHECK(cuMemcpyDtoHAsync(result.data(), y, bytes, stream));
    CORPUS_CHECK(cuStreamSynchronize(stream));
  }
  corpus_expect(result[0] == 1.0f + 15 * 6.0f && result.back() == result[0], "scale_add");
  CORPUS_CHECK(cuStreamDestroy(stream));
  CORPUS_CHECK(cuMemFree(x));
  CORPUS_CHECK(cuMemFree(y));
  CORPUS_CHECK(cuModuleUnload(module));
  CORPUS_CHECK(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
