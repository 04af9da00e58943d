// The matrix-product interface on OpenBLAS (host spaces) and cuBLAS (CUDA). kernels/matmul.hpp
// says why these libraries, how precision is pinned and why the results are deterministic.
#include "matmul.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <mutex>
#include <stdexcept>
#include <vector>

#if defined(SCANLAB_HAVE_OPENBLAS)
#include <cblas.h>
#endif
#if defined(SCANLAB_HAVE_CUBLAS) && defined(KOKKOS_ENABLE_CUDA)
#include <cublas_v2.h>
#endif

namespace scanlab::kernels {
namespace {

struct GemmArgs {
  Transpose ta, tb;
  std::int64_t m, n, k, lda, ldb, ldc;
};

// Shape and stride rules of a row-major product, with a message naming the broken one.
void check_args(const GemmArgs& g, const void* A, const void* B, const void* C) {
  const auto fail = [](const std::string& why) { throw std::invalid_argument("gemm: " + why); };
  if (g.m < 0 || g.n < 0 || g.k < 0)
    fail("negative size m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k));
  const std::int64_t a_cols = g.ta == Transpose::no ? g.k : g.m, b_cols = g.tb == Transpose::no ? g.n : g.k;
  if (g.lda < std::max<std::int64_t>(1, a_cols))
    fail("lda " + std::to_string(g.lda) + " < " + std::to_string(a_cols) + " columns of the stored A");
  if (g.ldb < std::max<std::int64_t>(1, b_cols))
    fail("ldb " + std::to_string(g.ldb) + " < " + std::to_string(b_cols) + " columns of the stored B");
  if (g.ldc < std::max<std::int64_t>(1, g.n))
    fail("ldc " + std::to_string(g.ldc) + " < n = " + std::to_string(g.n));
  if (g.m > 0 && g.n > 0 && (C == nullptr || (g.k > 0 && (A == nullptr || B == nullptr))))
    fail("null matrix pointer");
}

#if defined(SCANLAB_HAVE_OPENBLAS)
void host_gemm(const GemmArgs& g, float alpha, const float* A, const float* B, float beta, float* C) {
  for (std::int64_t v : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc})
    if (v > INT_MAX) throw std::invalid_argument("gemm: size or stride " + std::to_string(v) + " exceeds OpenBLAS's int");
  cblas_sgemm(CblasRowMajor, g.ta == Transpose::no ? CblasNoTrans : CblasTrans,
              g.tb == Transpose::no ? CblasNoTrans : CblasTrans, int(g.m), int(g.n), int(g.k), alpha, A, int(g.lda), B,
              int(g.ldb), beta, C, int(g.ldc));
}
#endif

// The portable fallback for host spaces in a binary without OpenBLAS (the cuda build links only
// cuBLAS): row by row, the K reduction in ascending order into a float32 row, then alpha and beta.
// Slow next to a BLAS, deterministic, and only there so that every host space can run every op.
[[maybe_unused]] void portable_host_gemm(const GemmArgs& g, float alpha, const float* A, const float* B, float beta,
                                         float* C) {
  std::vector<float> row(std::size_t(g.n));
  for (std::int64_t i = 0; i < g.m; ++i) {
    std::fill(row.begin(), row.end(), 0.0f);
    for (std::int64_t r = 0; r < g.k; ++r) {
      const float a = g.ta == Transpose::no ? A[i * g.lda + r] : A[r * g.lda + i];
      if (g.tb == Transpose::no) {
        const float* b_row = B + r * g.ldb;
        for (std::int64_t j = 0; j < g.n; ++j) row[std::size_t(j)] += a * b_row[j];
      } else {
        for (std::int64_t j = 0; j < g.n; ++j) row[std::size_t(j)] += a * B[j * g.ldb + r];
      }
    }
    float* c_row = C + i * g.ldc;
    for (std::int64_t j = 0; j < g.n; ++j)  // beta = 0 never reads C (BLAS semantics: C may hold NaN)
      c_row[j] = beta == 0.0f ? alpha * row[std::size_t(j)] : alpha * row[std::size_t(j)] + beta * c_row[j];
  }
}

#if defined(SCANLAB_HAVE_CUBLAS) && defined(KOKKOS_ENABLE_CUDA)
void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS ") + what + " failed: " + cublasGetStatusName(status) + " (" +
                             cublasGetStatusString(status) + ")");
}

// One handle per process, created on first use and never destroyed: destroying it from a static
// destructor would run after Kokkos has finalised CUDA.
cublasHandle_t cublas_handle(GemmMath math) {
  static cublasHandle_t handle = nullptr;
  static std::once_flag once;
  std::call_once(once, [] { check_cublas(cublasCreate(&handle), "cublasCreate"); });
  check_cublas(cublasSetStream(handle, Kokkos::Cuda().cuda_stream()), "cublasSetStream");
  check_cublas(cublasSetMathMode(handle, math == GemmMath::pedantic ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH),
               "cublasSetMathMode");
  return handle;
}

cublasOperation_t op(Transpose t) { return t == Transpose::no ? CUBLAS_OP_N : CUBLAS_OP_T; }
#endif

}  // namespace

std::string gemm_library(BackendKind backend) {
  switch (backend) {
    case BackendKind::serial:
    case BackendKind::openmp:
#if defined(SCANLAB_HAVE_OPENBLAS)
      return "openblas";
#else
      return "portable";
#endif
    case BackendKind::cuda:
#if defined(SCANLAB_HAVE_CUBLAS) && defined(KOKKOS_ENABLE_CUDA)
      return "cublas";
#else
      return "none";
#endif
    default: return "none";
  }
}

void gemm_strided_batched(BackendKind backend, Transpose trans_a, Transpose trans_b, std::int64_t m, std::int64_t n,
                          std::int64_t k, float alpha, const float* A, std::int64_t lda, std::int64_t stride_a,
                          const float* B, std::int64_t ldb, std::int64_t stride_b, float beta, float* C,
                          std::int64_t ldc, std::int64_t stride_c, std::int64_t batch, GemmMath math) {
  const GemmArgs g{trans_a, trans_b, m, n, k, lda, ldb, ldc};
  check_args(g, A, B, C);
  if (batch < 0 || stride_a < 0 || stride_b < 0 || stride_c < 0)
    throw std::invalid_argument("gemm: negative batch count or stride");
  if (batch == 0 || m == 0 || n == 0) return;
  if (stride_c < m * ldc && batch > 1) throw std::invalid_argument("gemm: batched outputs overlap (stride_c < m·ldc)");
  (void)math;
  switch (backend) {
    case BackendKind::serial:
    case BackendKind::openmp:
      // Kokkos host spaces run synchronously; nothing to order against.
      for (std::int64_t i = 0; i < batch; ++i) {
#if defined(SCANLAB_HAVE_OPENBLAS)
        host_gemm(g, alpha, A + i * stride_a, B + i * stride_b, beta, C + i * stride_c);
#else
        portable_host_gemm(g, alpha, A + i * stride_a, B + i * stride_b, beta, C + i * stride_c);
#endif
      }
      return;
#if defined(SCANLAB_HAVE_CUBLAS) && defined(KOKKOS_ENABLE_CUDA)
    case BackendKind::cuda: {
      // Row-major C (m×n) is column-major Cᵀ (n×m) = op(B)ᵀ·op(A)ᵀ, and a row-major operand is the
      // column-major transpose of itself: swap the operands and keep each one's op.
      cublasHandle_t h = cublas_handle(math);
      if (batch == 1)
        check_cublas(cublasSgemm_64(h, op(trans_b), op(trans_a), n, m, k, &alpha, B, ldb, A, lda, &beta, C, ldc),
                     "cublasSgemm_64");
      else
        check_cublas(cublasSgemmStridedBatched_64(h, op(trans_b), op(trans_a), n, m, k, &alpha, B, ldb, stride_b, A,
                                                  lda, stride_a, &beta, C, ldc, stride_c, batch),
                     "cublasSgemmStridedBatched_64");
      return;
    }
#endif
    default: break;
  }
  throw std::invalid_argument("gemm: no matrix-product library for backend " + to_string(backend) +
                              " in this binary");
}

void gemm(BackendKind backend, Transpose trans_a, Transpose trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
          float alpha, const float* A, std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C,
          std::int64_t ldc, GemmMath math) {
  gemm_strided_batched(backend, trans_a, trans_b, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, math);
}

}  // namespace scanlab::kernels
