// Corpus: cuDNN. A 3x3 convolution forward (NCHW, FP32, 32 images of 64 channels at 56 x 56 to
// 64 channels) with the algorithm cuDNN's heuristics pick, five times, then a ReLU activation,
// each call in an NVTX range. cuDNN 9 runs precompiled and run-time-compiled engines.
#include "corpus_check.hpp"

#include <cuda_runtime.h>
#include <cudnn.h>
#include <nvtxpp/nvtxpp.hpp>

#include <vector>

int main() {
  int const n = 32, c = 64, h = 56, w = 56, k = 64;
  cudnnHandle_t handle = nullptr;
  CORPUS_CHECK(cudnnCreate(&handle));
  cudnnTensorDescriptor_t x_desc = nullptr, y_desc = nullptr;
  cudnnFilterDescriptor_t f_desc = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t relu = nullptr;
  CORPUS_CHECK(cudnnCreateTensorDescriptor(&x_desc));
  CORPUS_CHECK(cudnnCreateTensorDescriptor(&y_desc));
  CORPUS_CHECK(cudnnCreateFilterDescriptor(&f_desc));
  CORPUS_CHECK(cudnnCreateConvolutionDescriptor(&conv));
  CORPUS_CHECK(cudnnCreateActivationDescriptor(&relu));
  CORPUS_CHECK(cudnnSetTensor4dDescriptor(x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
  CORPUS_CHECK(cudnnSetFilter4dDescriptor(f_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, k, c, 3, 3));
  CORPUS_CHECK(cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                               CUDNN_DATA_FLOAT));
  CORPUS_CHECK(
      cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
  int on = 0, oc = 0, oh = 0, ow = 0;
  CORPUS_CHECK(cudnnGetConvolution2dForwardOutputDim(conv, x_desc, f_desc, &on, &oc, &oh, &ow));
  CORPUS_CHECK(
      cudnnSetTensor4dDescriptor(y_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, oc, oh, ow));
  std::size_t const x_count = static_cast<std::size_t>(n) * c * h * w;
  std::size_t const f_count = static_cast<std::size_t>(k) * c * 9;
  std::size_t const y_count = static_cast<std::size_t>(on) * oc * oh * ow;
  float *x = nullptr, *f = nullptr, *y = nullptr;
  CORPUS_CHECK(cudaMalloc(&x, x_count * sizeof(float)));
  CORPUS_CHECK(cudaMalloc(&f, f_count * sizeof(float)));
  CORPUS_CHECK(cudaMalloc(&y, y_count * sizeof(float)));
  {
    nvtxpp::scoped_range r{"H2D Memory"};
    std::vector<float> ones(x_count, 1.0f);
    CORPUS_CHECK(cudaMemcpy(x, ones.data(), x_count * sizeof(float), cudaMemcpyHostToDevice));
    CORPUS_CHECK(cudaMemcpy(f, ones.data(), f_count * sizeof(float), cudaMemcpyHostToDevice));
  }
  cudnnConvolutionFwdAlgoPerf_t perf[8]{};
  int found = 0;
  CORPUS_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle, x_desc, f_desc, conv, y_desc, 8,
                                                      &found, perf));
  corpus_expect(found > 0, "a convolution algorithm");
  cudnnConvolutionFwdAlgo_t const algo = perf[0].algo;
  std::size_t workspace_bytes = 0;
  CORPUS_CHECK(cudnnGetConvolutionForwardWorkspaceSize(handle, x_desc, f_desc, conv, y_desc, algo,
                                                       &workspace_bytes));
  void* workspace = nullptr;
  CORPUS_CHECK(cudaMalloc(&workspace, workspace_bytes > 0 ? workspace_bytes : 1));
  float const one = 1.0f, zero = 0.0f;
  for (int i = 0; i < 5; ++i) {
    nvtxpp::scoped_range r{"conv forward"};
    CORPUS_CHECK(cudnnConvolutionForward(handle, &one, x_desc, x, f_desc, f, conv, algo, workspace,
                                         workspace_bytes, &zero, y_desc, y));
  }
  {
    nvtxpp::scoped_range r{"relu"};
    CORPUS_CHECK(cudnnActivationForward(handle, relu, &one, y_desc, y, &zero, y_desc, y));
  }
  std::vector<float> out(y_count);
  {
    nvtxpp::scoped_range r{"D2H Memory"};
    CORPUS_CHECK(cudaMemcpy(out.data(), y, y_count * sizeof(float), cudaMemcpyDeviceToHost));
  }
  // An inner pixel sums 3 x 3 x 64 ones; a corner (zero padding) 2 x 2 x 64.
  corpus_expect(out[static_cast<std::size_t>(ow) + 1] == 576.0f && out[0] == 256.0f, "convolution");
  cudnnDestroyActivationDescriptor(relu);
  cudnnDestroyConvolutionDescriptor(conv);
  cudnnDestroyFilterDescriptor(f_desc);
  cudnnDestroyTensorDescriptor(x_desc);
  cudnnDestroyTensorDescriptor(y_desc);
  cudnnDestroy(handle);
  for (void* p : {static_cast<void*>(x), static_cast<void*>(f), static_cast<void*>(y), workspace}) {
    CORPUS_CHECK(cudaFree(p));
  }
  return 0;
}
