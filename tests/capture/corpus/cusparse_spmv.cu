// Corpus: cuSPARSE SpMV. y = A x for a tridiagonal CSR matrix of one million rows, ten times,
// each product in an NVTX range.
#include "corpus_check.hpp"

#include <cuda_runtime.h>
#include <cusparse.h>
#include <nvtxpp/nvtxpp.hpp>

#include <vector>

int main() {
  int const rows = 1 << 20;
  std::vector<int> offsets{0};
  std::vector<int> columns;
  std::vector<float> values;
  for (int r = 0; r < rows; ++r) {
    for (int c = r - 1; c <= r + 1; ++c) {
      if (c >= 0 && c < rows) {
        columns.push_back(c);
        values.push_back(1.0f);
      }
    }
    offsets.push_back(static_cast<int>(columns.size()));
  }
  std::vector<float> x(rows, 1.0f), y(rows);
  int *d_offsets = nullptr, *d_columns = nullptr;
  float *d_values = nullptr, *d_x = nullptr, *d_y = nullptr;
  CORPUS_CHECK(cudaMalloc(&d_offsets, offsets.size() * sizeof(int)));
  CORPUS_CHECK(cudaMalloc(&d_columns, columns.size() * sizeof(int)));
  CORPUS_CHECK(cudaMalloc(&d_values, values.size() * sizeof(float)));
  CORPUS_CHECK(cudaMalloc(&d_x, x.size() * sizeof(float)));
  CORPUS_CHECK(cudaMalloc(&d_y, y.size() * sizeof(float)));
  {
    nvtxpp::scoped_range r{"H2D Memory"};
    CORPUS_CHECK(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(int),
                            cudaMemcpyHostToDevice));
    CORPUS_CHECK(cudaMemcpy(d_columns, columns.data(), columns.size() * sizeof(int),
                            cudaMemcpyHostToDevice));
    CORPUS_CHECK(
        cudaMemcpy(d_values, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice));
    CORPUS_CHECK(cudaMemcpy(d_x, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  cusparseHandle_t handle = nullptr;
  CORPUS_CHECK(cusparseCreate(&handle));
  cusparseSpMatDescr_t a = nullptr;
  cusparseDnVecDescr_t vx = nullptr, vy = nullptr;
  CORPUS_CHECK(cusparseCreateCsr(&a, rows, rows, static_cast<int64_t>(columns.size()), d_offsets,
                                 d_columns, d_values, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                 CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CORPUS_CHECK(cusparseCreateDnVec(&vx, rows, d_x, CUDA_R_32F));
  CORPUS_CHECK(cusparseCreateDnVec(&vy, rows, d_y, CUDA_R_32F));
  float const alpha = 1.0f, beta = 0.0f;
  std::size_t buffer_bytes = 0;
  CORPUS_CHECK(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, vx,
                                       &beta, vy, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT,
                                       &buffer_bytes));
  void* buffer = nullptr;
  CORPUS_CHECK(cudaMalloc(&buffer, buffer_bytes > 0 ? buffer_bytes : 1));
  for (int i = 0; i < 10; ++i) {
    nvtxpp::scoped_range r{"spmv"};
    CORPUS_CHECK(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, vx, &beta, vy,
                              CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, buffer));
  }
  {
    nvtxpp::scoped_range r{"D2H Memory"};
    CORPUS_CHECK(cudaMemcpy(y.data(), d_y, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
  }
  corpus_expect(y[0] == 2.0f && y[1] == 3.0f && y[rows - 1] == 2.0f, "spmv");
  cusparseDestroySpMat(a);
  cusparseDestroyDnVec(vx);
  cusparseDestroyDnVec(vy);
  cusparseDestroy(handle);
  for (void* p :
       {static_cast<void*>(d_offsets), static_cast<void*>(d_columns), static_cast<void*>(d_values),
        static_cast<void*>(d_x), static_cast<void*>(d_y), buffer}) {
    CORPUS_CHECK(cudaFree(p));
  }
  return 0;
}
