// Instrumented through nvcc (tests/instrument/CMakeLists.txt): only host code calls the hooks.
#include "cuda_subject.hpp"

namespace cu {

__global__ void scale(float* x, float k) { x[threadIdx.x] *= k; }

int host_prepare(int n) { return n * 2; }

template <typename T>
T host_sum(T a, T b) {
  return a + b;
}
template int host_sum<int>(int, int);

}  // namespace cu
