// Corpus: cuRAND's host API. A Philox generator fills 16 M floats, uniform then normal, three
// times each, every call in its NVTX range.
#include "corpus_check.hpp"

#include <cuda_runtime.h>
#include <curand.h>
#include <nvtxpp/nvtxpp.hpp>

#include <vector>

int main() {
  std::size_t const count = std::size_t{1} << 24;
  float* data = nullptr;
  CORPUS_CHECK(cudaMalloc(&data, count * sizeof(float)));
  curandGenerator_t gen = nullptr;
  {
    nvtxpp::scoped_range r{"create generator"};
    CORPUS_CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CORPUS_CHECK(curandSetPseudoRandomGeneratorSeed(gen, 1234ULL));
  }
  for (int i = 0; i < 3; ++i) {
    {
      nvtxpp::scoped_range r{"uniform"};
      CORPUS_CHECK(curandGenerateUniform(gen, data, count));
    }
    {
      nvtxpp::scoped_range r{"normal"};
      CORPUS_CHECK(curandGenerateNormal(gen, data, count, 0.0f, 1.0f));
    }
  }
  std::vector<float> host(1024);
  {
    nvtxpp::scoped_range r{"D2H Memory"};
    CORPUS_CHECK(
        cudaMemcpy(host.data(), data, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  }
  double mean = 0;
  for (float v : host) {
    mean += v;
  }
  corpus_expect(mean / static_cast<double>(host.size()) < 0.2 &&
                    mean / static_cast<double>(host.size()) > -0.2,
                "normal samples around 0");
  CORPUS_CHECK(curandDestroyGenerator(gen));
  CORPUS_CHECK(cudaFree(data));
  return 0;
}
