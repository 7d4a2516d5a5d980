/// @file
/// @brief reduce_v1: normalise an array of ones by its sum, unannotated, with pageable host
/// memory. The baseline the annotated versions are compared with (the tutorial's run_v1).
#include <memory>

#include "reduce_common.cuh"

int main(int argc, char** argv) {
  using namespace reduce;
  const options opt = parse_options(argc, argv, "reduce_v1", cli_features{});
  require_gpu("reduce_v1");
  const unsigned blocks = launch_blocks();
  const std::size_t n = opt.array_size;
  const std::size_t bytes = n * sizeof(float);

  // Pageable host memory: every copy is staged through a driver buffer.
  std::unique_ptr<float[]> a(new (std::nothrow) float[n]);
  if (!a) {
    std::fprintf(stderr, "error: cannot allocate %zu bytes of host memory\n", bytes);
    return exit_failed;
  }
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 1.0f;
  }
  std::printf("Old sum: %.3f\n", host_sum(a.get(), n));

  device_buffer<float> dev_a(n, "cudaMalloc(array)");
  device_buffer<float> dev_a_reduce(blocks, "cudaMalloc(partial sums)");
  device_buffer<float> dev_a_sum(1, "cudaMalloc(sum)");
  check(cudaMemcpy(dev_a.get(), a.get(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy(H2D)");

  partial_reduce<<<blocks, THREADS_PER_BLOCK>>>(dev_a.get(), n, dev_a_reduce.get());
  single_thread_sum<<<1, 1>>>(dev_a_reduce.get(), blocks, dev_a_sum.get());
  divide_by<<<blocks, THREADS_PER_BLOCK>>>(dev_a.get(), n, dev_a_sum.get());
  check(cudaGetLastError(), "kernel launch");

  check(cudaMemcpy(a.get(), dev_a.get(), bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(D2H)");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return report_new_sum(host_sum(a.get(), n));
}
