// Corpus: cuFFT. A batch of 64 complex FFTs of 65,536 points, forward then inverse, four times,
// each direction in its NVTX range.
#include "corpus_check.hpp"

#include <cuda_runtime.h>
#include <cufft.h>
#include <nvtxpp/nvtxpp.hpp>

#include <cmath>
#include <vector>

int main() {
  int const points = 1 << 16, batch = 64;
  std::size_t const count = static_cast<std::size_t>(points) * batch;
  std::vector<cufftComplex> host(count);
  for (std::size_t i = 0; i < count; ++i) {
    host[i] = {static_cast<float>(i % 7), 0.0f};
  }
  cufftComplex* data = nullptr;
  CORPUS_CHECK(cudaMalloc(&data, count * sizeof(cufftComplex)));
  {
    nvtxpp::scoped_range r{"H2D Memory"};
    CORPUS_CHECK(
        cudaMemcpy(data, host.data(), count * sizeof(cufftComplex), cudaMemcpyHostToDevice));
  }
  cufftHandle plan = 0;
  {
    nvtxpp::scoped_range r{"plan"};
    CORPUS_CHECK(cufftPlan1d(&plan, points, CUFFT_C2C, batch));
  }
  for (int i = 0; i < 4; ++i) {
    {
      nvtxpp::scoped_range r{"forward"};
      CORPUS_CHECK(cufftExecC2C(plan, data, data, CUFFT_FORWARD));
    }
    {
      nvtxpp::scoped_range r{"inverse"};
      CORPUS_CHECK(cufftExecC2C(plan, data, data, CUFFT_INVERSE));
    }
  }
  std::vector<cufftComplex> back(count);
  {
    nvtxpp::scoped_range r{"D2H Memory"};
    CORPUS_CHECK(
        cudaMemcpy(back.data(), data, count * sizeof(cufftComplex), cudaMemcpyDeviceToHost));
  }
  // Four unnormalised round trips scale by points^4 = 2^64: compare the scaled values.
  double const scale = std::pow(static_cast<double>(points), 4);
  corpus_expect(std::fabs(back[3].x / scale - 3.0) < 1e-2, "fft round trip");
  CORPUS_CHECK(cufftDestroy(plan));
  CORPUS_CHECK(cudaFree(data));
  return 0;
}
