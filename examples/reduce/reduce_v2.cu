/// @file
/// @brief reduce_v2: reduce_v1 annotated with nvtxpp, with pinned host memory (the tutorial's
/// run_v2). Four ranges, one line each: `Compilation` (red), `H2D Memory` (yellow), `Kernels`
/// (green) and `D2H Memory` (orange).
#include <nvtxpp/nvtxpp.hpp>

#include <optional>

#include "reduce_common.cuh"

int main(int argc, char** argv) {
  using namespace reduce;
  const options opt = parse_options(argc, argv, "reduce_v2", cli_features{});
  require_gpu("reduce_v2");
  const std::size_t n = opt.array_size;
  const std::size_t bytes = n * sizeof(float);

  {
    nvtxpp::scoped_range range{"Compilation", nvtxpp::colors::red};
    warm_up();
  }
  const unsigned blocks = launch_blocks();  // asked inside warm_up(), so free here

  // Page-locked host memory: the copy engines read and write it directly, no staging copy.
  pinned_buffer<float> a(n, "cudaMallocHost(array)");
  for (std::size_t i = 0; i < n; ++i) {
    a.get()[i] = 1.0f;
  }
  std::printf("Old sum: %.3f\n", host_sum(a.get(), n));

  // As in the tutorial, the device allocations belong to the H2D step; std::optional lets the
  // buffers outlive the range that creates them.
  std::optional<device_buffer<float>> dev_a, dev_a_reduce, dev_a_sum;
  {
    nvtxpp::scoped_range range{"H2D Memory", nvtxpp::colors::yellow};
    dev_a.emplace(n, "cudaMalloc(array)");
    dev_a_reduce.emplace(blocks, "cudaMalloc(partial sums)");
    dev_a_sum.emplace(1, "cudaMalloc(sum)");
    check(cudaMemcpy(dev_a->get(), a.get(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy(H2D)");
  }

  {
    // Launches are asynchronous: on the CPU this range lasts only as long as the launch calls;
    // Nsight Systems projects it onto the GPU to show the kernels it covers.
    nvtxpp::scoped_range range{"Kernels", nvtxpp::colors::green};
    partial_reduce<<<blocks, THREADS_PER_BLOCK>>>(dev_a->get(), n, dev_a_reduce->get());
    single_thread_sum<<<1, 1>>>(dev_a_reduce->get(), blocks, dev_a_sum->get());
    divide_by<<<blocks, THREADS_PER_BLOCK>>>(dev_a->get(), n, dev_a_sum->get());
    check(cudaGetLastError(), "kernel launch");
  }

  {
    // cudaMemcpy waits for the kernels first, so this range also holds the kernels' run time.
    nvtxpp::scoped_range range{"D2H Memory", nvtxpp::colors::orange};
    check(cudaMemcpy(a.get(), dev_a->get(), bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(D2H)");
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return report_new_sum(host_sum(a.get(), n));
}
