// The one matrix-product interface the kernels use: row-major float32
//   C = alpha·op(A)·op(B) + beta·C,   op(X) = X or Xᵀ,
// served by a well-kept library per backend: OpenBLAS's cblas_sgemm on the host spaces (Serial,
// OpenMP; a portable row-by-row loop where a binary has no OpenBLAS, as the cuda build), cuBLAS on
// CUDA (one handle per process, created on first use, on the stream Kokkos'
// default CUDA instance uses, so products are ordered with the Kokkos kernels around them).
//
// Precision: cuBLAS runs with TF32 forbidden (CUBLAS_DEFAULT_MATH is plain float32 for SGEMM unless
// TF32 is asked for; "pedantic" selects CUBLAS_PEDANTIC_MATH, which also ignores
// NVIDIA_TF32_OVERRIDE), so the float32 error bound of a K-term reduction holds.
// Determinism: both libraries give bitwise identical results on repeated calls with the same
// shapes on the same machine. OpenBLAS splits the output over threads, never the K reduction, so
// its result does not depend on its thread count either; cuBLAS documents bitwise reproducibility
// for a given toolkit and architecture when one stream is used (the case here; no split-K atomics
// are used by SGEMM).
//
// Pointers are device pointers of the backend's memory space. No Kokkos in this header.
#pragma once

#include <cstdint>
#include <string>

#include "backend.hpp"

namespace scanlab::kernels {

enum class Transpose { no, yes };

enum class GemmMath { standard, pedantic };  // cuBLAS math mode; OpenBLAS ignores it

// One product. m×n is C's shape, k the reduction length; lda, ldb, ldc are row strides (≥ the
// number of columns of the stored matrix). Throws std::invalid_argument on a bad shape or stride
// and std::runtime_error naming the cuBLAS status on a library failure. Enqueued asynchronously
// on CUDA, synchronous on the host.
void gemm(BackendKind backend, Transpose trans_a, Transpose trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
          float alpha, const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C,
          std::int64_t ldc, GemmMath math = GemmMath::standard);

// `batch` independent products, the i-th on A + i·stride_a, B + i·stride_b, C + i·stride_c
// (a stride of 0 reuses one operand for every product).
void gemm_strided_batched(BackendKind backend, Transpose trans_a, Transpose trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, float alpha, const float* A, std::int64_t lda,
                          std::int64_t stride_a, const float* B, std::int64_t ldb, std::int64_t stride_b, float beta,
                          float* C, std::int64_t ldc, std::int64_t stride_c, std::int64_t batch,
                          GemmMath math = GemmMath::standard);

// "openblas", "portable" (the fallback loop), "cublas" or "none": what serves the backend here.
std::string gemm_library(BackendKind backend);

}  // namespace scanlab::kernels
