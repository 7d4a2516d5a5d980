// Host code of a CUDA source built with nvtxpp_instrument() (nvcc passes -finstrument-functions
// to its host compiler): cuda_subject.cu.
#pragma once

namespace cu {
int host_prepare(int n);
template <typename T>
T host_sum(T a, T b);
extern template int host_sum<int>(int, int);
}  // namespace cu
