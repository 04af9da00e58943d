// s7_inner_error_bound is a probabilistic first-order error pass, after Higham & Mary, "A new
// approach to probabilistic rounding error analysis" (SIAM J. Sci. Comput. 41(5), 2019).
//
// Why not worst case: the magnitude pass s7_scan uses (a reduction adds K·Σ|a·b|, input errors
// propagate as Σ|b|·e(a)) compounds through this layer's ~10 stages against values that cancel.
// At b=2, L=32, Dm=8, N=4 no gradient element had a bound below 2^-13·|value|; at L=128, Dm=16,
// N=16 dhidden_states' median bound was ~7·|value|: a gradient wrong by tens of percent passed.
//
// Model. Each float32 operation returns op(a, b)·(1 + δ) with |δ| ≤ u = eps32, and each δ has
// mean zero given those before it (Higham–Mary's assumption). To first order a result's error is
// Σ_i c_i·δ_i, a martingale with bounded steps, and Azuma–Hoeffding gives
// P(|Σ c_i·δ_i| ≥ λ·u·σ) ≤ 2·exp(−λ²/2) for every σ ≥ sqrt(Σ c_i²). The pass carries such a σ
// per element (eps32 units) through every stage; the bound is λ·u·σ + FLT_MIN (bound_from_terms,
// λ = kBoundSafety; FLT_MIN admits float32's underflow, which is absolute):
//   * an input rounded to float32: σ = |v|;
//   * a product or sum: the operands' σ times their sensitivities, and the result's rounding, in
//     quadrature: σ(a·b)² = b²·σ(a)² + a²·σ(b)² + (a·b)²;
//   * GELU, GELU', sigmoid: sensitivity·σ(argument) ⊕ their rounding terms (special functions at
//     2 ulp, summed: a special function's error need not be mean-zero);
//   * a reduction Σ_{k<K} p_k, p_k = a_k·b_k (the matrix products and their backward products,
//     the sums over N, Dm and time): Σ_k (b_k²·σ(a_k)² + a_k²·σ(b_k)²) + K·S², the K products'
//     and K − 1 partial sums' roundings, each at most S, where T = Σp and
//       S² = min((Σ|p|)², max(T² + Σp², mean s_k² in index order, mean s_k² in reverse order)).
//     S = Σ|p| bounds every partial sum of every order, giving Higham–Mary's λ·sqrt(K)·u·Σ|p|;
//     alone it ignores that |T| ≈ Σ|p|/sqrt(K) for terms of random sign, and that factor kept
//     the gradients toothless. A partial sum of k of the K terms, in an order unrelated to their
//     values (sequential, chunked, tree, strided lanes), has mean square (k/K)²·T² +
//     k(K−k)/(K(K−1))·(Σp² − T²/K) ≤ T² + Σp²/2; the actual prefix and suffix sums catch
//     arrangements where that fails (a drift, or halves that cancel as mirrored batch entries do).
//     scan_errors applies the same S to the scan's partial states.
//
// Correlations. Quadrature treats the errors of different operands as independent. Where one
// error reaches many addends through weights of random sign (x's error reaches its row's B, C,
// D_tv, bias and u; a state's reaches every output of its row) the sum has the expected square
// the quadrature gives. Two cases along time do not, and the pass treats them apart:
//   * the scan carries each step's error into every later state (the adjoint into every earlier
//     one), and a gradient reduced over time against coefficients of steady sign (dbase_params;
//     the B rows of dx_proj_weight, which multiply g by x²) adds them coherently, ~sqrt(L) beyond
//     the quadrature when A_bar → ±1 (L = 256 broke the bound): the pass follows each step's fresh
//     error through the recurrence exactly (state_/adjoint_coherent_variance), and per element it
//     sums one state's or adjoint's error over all its paths before squaring;
//   * where A is constant in time every step rounds the same A_bar the same way, and the
//     recurrence adds x_{l−1}·δA_bar_l coherently (L = 2048 broke the bound): the A_bar terms are
//     carried both in quadrature and as one shared error, and the larger is taken (scan_errors).
//     This costs teeth where |A_bar| → 1 even when A does vary, as the pass cannot tell.
//
// λ = 8: the model's failure probability per element is ≤ 2·exp(−32) ≈ 2.5e-14, so a campaign
// checking 1e9 elements fails falsely with probability ≲ 3e-5. Hoeffding uses only the range
// |δ| ≤ u; a rounding error spread evenly over [−u, u] has standard deviation u/√3, so for the
// near-Gaussian sum of many roundings λ = 8 is ~14 standard deviations, room for what the model
// idealises (roundings that are not quite random, the independence above). Validation
// (properties/reference/s7_inner_reference_test.cpp): a naive float32 layer in sequential and
// FMA-lane summation, every A regime, up to b=2, L=2048, Dm=32, N=16: max |err|/bound ≈ 0.2,
// median per element ≈ 0.01; offline, 600 more random cases, L up to 4096, and the repository's
// Kokkos s7_inner kernel (sequential and chunked scans): ≤ 0.26.

#include "s7_inner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "error_bound.hpp"
#include "s7_scan.hpp"

namespace scanlab::reference {
namespace {

// A row-major matrix; the layer works on (batch·seqlen, features) rows.
struct Matrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> v;
  Matrix() = default;
  Matrix(std::int64_t r, std::int64_t c) : rows(r), cols(c), v(static_cast<std::size_t>(r * c), 0.0) {}
  double& operator()(std::int64_t r, std::int64_t c) { return v[static_cast<std::size_t>(r * cols + c)]; }
  double operator()(std::int64_t r, std::int64_t c) const { return v[static_cast<std::size_t>(r * cols + c)]; }
};

Matrix as_matrix(const Tensor& t, std::int64_t rows, std::int64_t cols) {
  Matrix m(rows, cols);
  m.v = t.values;
  return m;
}
Tensor as_tensor(const Matrix& m, const Shape& shape) { return Tensor(shape, m.v); }

Matrix transpose(const Matrix& a) {
  Matrix t(a.cols, a.rows);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t c = 0; c < a.cols; ++c) t(c, r) = a(r, c);
  return t;
}
Matrix absolute(Matrix a) {
  for (auto& x : a.v) x = std::fabs(x);
  return a;
}
Matrix& add_scaled(Matrix& into, const Matrix& a, double scale = 1.0) {
  for (std::size_t i = 0; i < into.v.size(); ++i) into.v[i] += scale * a.v[i];
  return into;
}

// a·wᵀ: (M, K)·(I, K)ᵀ → (M, I), as nn.Linear applies a weight.
Matrix matmul_nt(const Matrix& a, const Matrix& w) {
  if (a.cols != w.cols) throw std::logic_error("matmul_nt: inner sizes differ");
  Matrix c(a.rows, w.rows);
  for (std::int64_t m = 0; m < a.rows; ++m)
    for (std::int64_t i = 0; i < w.rows; ++i) {
      double s = 0;
      for (std::int64_t k = 0; k < a.cols; ++k) s += a(m, k) * w(i, k);
      c(m, i) = s;
    }
  return c;
}

// One reduction Σ_k p_k in the probabilistic model (top of the file): it collects the addends'
// propagated variance and the statistics of their partial sums, and gives σ of the float32 sum.
class Reduction {
 public:
  // An addend p = a·b formed by one rounded product of operands that carry σ(a), σ(b).
  void add_product(double a, double sigma_a, double b, double sigma_b) {
    propagated_ += b * b * sigma_a * sigma_a + a * a * sigma_b * sigma_b;
    add(a * b);
  }
  // An addend formed elsewhere, carrying its own σ (its rounding is already in it).
  void add_term(double v, double sigma_v) {
    propagated_ += sigma_v * sigma_v;
    add(v);
  }
  // Variance from elsewhere (the recurrences' errors over time, state_ and adjoint_coherent_variance).
  void add_variance(double variance) { propagated_ += variance; }
  double value() const { return sum_; }
  // sqrt(Σ propagated² + K·S²), S² the partial-sum scale of the top of the file.
  double sigma() const {
    if (count_ == 0) return std::sqrt(propagated_);
    const double K = double(count_), T = sum_;
    const double exchangeable = T * T + sum_sq_;
    const double forward = prefix_sq_ / K;  // the partial sums s_1 … s_K in index order
    // T − s_k for k = 0 … K−1: the partial sums in reverse index order
    const double backward = (K * T * T - 2 * T * (prefix_sum_ - T) + (prefix_sq_ - T * T)) / K;
    const double scale = std::min(sum_abs_ * sum_abs_, std::max({exchangeable, forward, backward}));
    return std::sqrt(propagated_ + K * scale);
  }

 private:
  void add(double v) {
    ++count_;
    sum_ += v;
    sum_sq_ += v * v;
    sum_abs_ += std::fabs(v);
    prefix_sum_ += sum_;
    prefix_sq_ += sum_ * sum_;
  }
  std::int64_t count_ = 0;
  double propagated_ = 0, sum_ = 0, sum_sq_ = 0, sum_abs_ = 0, prefix_sum_ = 0, prefix_sq_ = 0;
};

// The reductions of a·wᵀ, (M, K)·(I, K)ᵀ → (M, I), given σ(a) and σ(w); row-major (M, I).
std::vector<Reduction> reduce_nt(const Matrix& a, const Matrix& sigma_a, const Matrix& w, const Matrix& sigma_w) {
  if (a.cols != w.cols) throw std::logic_error("reduce_nt: inner sizes differ");
  std::vector<Reduction> r(static_cast<std::size_t>(a.rows * w.rows));
  for (std::int64_t m = 0; m < a.rows; ++m)
    for (std::int64_t i = 0; i < w.rows; ++i) {
      Reduction& into = r[static_cast<std::size_t>(m * w.rows + i)];
      for (std::int64_t k = 0; k < a.cols; ++k) into.add_product(a(m, k), sigma_a(m, k), w(i, k), sigma_w(i, k));
    }
  return r;
}
Matrix sigma_of(const std::vector<Reduction>& r, std::int64_t rows, std::int64_t cols) {
  Matrix s(rows, cols);
  for (std::size_t i = 0; i < r.size(); ++i) s.v[i] = r[i].sigma();
  return s;
}
// σ of a·wᵀ.
Matrix sigma_nt(const Matrix& a, const Matrix& sigma_a, const Matrix& w, const Matrix& sigma_w) {
  return sigma_of(reduce_nt(a, sigma_a, w, sigma_w), a.rows, w.rows);
}

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;

double gelu(double v) { return 0.5 * v * (1.0 + std::erf(v * kInvSqrt2)); }
double normal_pdf(double v) { return kInvSqrt2Pi * std::exp(-0.5 * v * v); }
double gelu_derivative(double v) { return 0.5 * (1.0 + std::erf(v * kInvSqrt2)) + v * normal_pdf(v); }
double gelu_second_derivative(double v) { return normal_pdf(v) * (2.0 - v * v); }
double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// Rounding terms (eps32 units) of evaluating GELU in float32 as 0.5·v·(1 + erf(v·(1/√2))),
// excluding v's own error; summed, not in quadrature (a few terms, and a special function's error
// need not be mean-zero). Special functions are counted at 2 ulp (4·|f|: CUDA's erff and expf).
// The product w = v·(1/√2) and the rounded constant (2·|w|, which erf multiplies by erf'(w)), erf
// (4·|erf|), 1 + erf (|1 + erf|) and the final product (|gelu|). For v ≪ 0 the term 0.5·|v|·4·|erf|
// dominates the tiny result: float32's 1 + erf cancels there, and the bound says the result is noise.
double gelu_rounding(double v) {
  const double w = v * kInvSqrt2, erf_w = std::erf(w);
  const double erf_slope = kTwoOverSqrtPi * std::exp(-w * w);
  return std::fabs(gelu(v)) +
         0.5 * std::fabs(v) * (std::fabs(1.0 + erf_w) + 4 * std::fabs(erf_w) + 2 * erf_slope * std::fabs(w));
}
// Likewise for GELU' = Φ(v) + v·φ(v): Φ as above; φ = c·exp(−v²/2), whose argument carries v²'s
// rounding (relative 1, which exp turns into v²/2 of φ), exp (4), c and the product (2); v·φ (1);
// the sum (|GELU'|).
double gelu_derivative_rounding(double v) {
  const double w = v * kInvSqrt2, erf_w = std::erf(w);
  const double erf_slope = kTwoOverSqrtPi * std::exp(-w * w);
  const double phi = normal_pdf(v);
  return 0.5 * (std::fabs(1.0 + erf_w) + 4 * std::fabs(erf_w) + 2 * erf_slope * std::fabs(w)) +
         std::fabs(v) * phi * (0.5 * v * v + 7.0) + std::fabs(gelu_derivative(v));
}
// sigmoid = 1/(1 + e), e = exp(−z): exp's 2 ulp (4·e, which reaches sigmoid times σ²), the sum
// (|1 + e|·σ² = σ) and the reciprocal (up to 2·σ for a fast one): 4σ(1−σ) + 3σ.
double sigmoid_rounding(double z) {
  const double s = sigmoid(z);
  return 4 * s * (1 - s) + 3 * s;
}

void check_inputs(const S7InnerProblem& p, const TensorMap& tensors) {
  p.validate();
  for (const auto& spec : p.tensors()) {
    if (spec.role != TensorRole::input && spec.role != TensorRole::grad_input) continue;
    const Tensor* t = find(tensors, spec.name);
    if (!t) throw std::invalid_argument("s7_inner: inputs lack '" + spec.name + "'");
    if (t->shape != spec.shape)
      throw std::invalid_argument("s7_inner: input '" + spec.name + "' has shape " + shape_string(t->shape) +
                                  ", expected " + shape_string(spec.shape));
  }
}

// Rows m = b·L + l of the (batch·seqlen, ·) matrices, and the scan's layouts.
struct Rows {
  std::int64_t L, Dm, N;
  explicit Rows(const S7InnerProblem& p) : L(p.seqlen), Dm(p.dim), N(p.dstate) {}
  std::int64_t m(std::int64_t b, std::int64_t l) const { return b * L + l; }
  std::int64_t bhl(std::int64_t b, std::int64_t h, std::int64_t l) const { return (b * Dm + h) * L + l; }
  std::int64_t bnl(std::int64_t b, std::int64_t n, std::int64_t l) const { return (b * N + n) * L + l; }
  std::int64_t B(std::int64_t b, std::int64_t n, std::int64_t h, std::int64_t l) const {
    return ((b * N + n) * Dm + h) * L + l;
  }
  std::int64_t C(std::int64_t b, std::int64_t h, std::int64_t n, std::int64_t l) const {
    return ((b * Dm + h) * N + n) * L + l;
  }
};

// The scan's inputs cut out of x (u = xᵀ) and x_dbl = x·W_xᵀ; `add_base` adds base_params to A
// (false when gathering error terms, which add e(base_params) themselves).
TensorMap scan_inputs(const S7InnerProblem& p, const Matrix& x, const Matrix& x_dbl, const Tensor* base_params) {
  const Rows at(p);
  Tensor u({p.batch, p.dim, p.seqlen}), A({p.batch, p.dstate, p.seqlen}), bias(A.shape);
  Tensor B({p.batch, p.dstate, p.dim, p.seqlen}), C({p.batch, p.dim, p.dstate, p.seqlen});
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t l = 0; l < p.seqlen; ++l) {
      const std::int64_t m = at.m(b, l);
      for (std::int64_t h = 0; h < p.dim; ++h) u[at.bhl(b, h, l)] = x(m, h);
      for (std::int64_t n = 0; n < p.dstate; ++n) {
        A[at.bnl(b, n, l)] = x_dbl(m, p.offset_A() + n) + (base_params ? (*base_params)[n] : 0.0);
        bias[at.bnl(b, n, l)] = x_dbl(m, p.offset_bias() + n);
        for (std::int64_t h = 0; h < p.dim; ++h) {
          B[at.B(b, n, h, l)] = x_dbl(m, p.offset_B() + h * p.dstate + n);
          C[at.C(b, h, n, l)] = x_dbl(m, p.offset_C() + h * p.dstate + n);
        }
      }
    }
  return {{"u", u}, {"A", A}, {"B", B}, {"C", C}, {"bias", bias}};
}

// The inverse of scan_inputs for the gradients: (b,·,L) layouts → (b·L, ·) rows.
Matrix rows_from_bhl(const S7InnerProblem& p, const Tensor& t) {
  const Rows at(p);
  Matrix m(p.batch * p.seqlen, p.dim);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t l = 0; l < p.seqlen; ++l)
      for (std::int64_t h = 0; h < p.dim; ++h) m(at.m(b, l), h) = t[at.bhl(b, h, l)];
  return m;
}
Tensor bhl_from_rows(const S7InnerProblem& p, const Matrix& m) {
  const Rows at(p);
  Tensor t({p.batch, p.dim, p.seqlen});
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t l = 0; l < p.seqlen; ++l)
      for (std::int64_t h = 0; h < p.dim; ++h) t[at.bhl(b, h, l)] = m(at.m(b, l), h);
  return t;
}
// d x_dbl from the scan's dA, dB, dC, dbias and dD_tv: the transpose of the split.
Matrix x_dbl_gradient(const S7InnerProblem& p, const TensorMap& scan_grads, const Matrix& dD_tv) {
  const Rows at(p);
  const Tensor& dA = require(scan_grads, "dA");
  const Tensor& dB = require(scan_grads, "dB");
  const Tensor& dC = require(scan_grads, "dC");
  const Tensor& dbias = require(scan_grads, "dbias");
  Matrix d(p.batch * p.seqlen, p.x_proj_rows());
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t l = 0; l < p.seqlen; ++l) {
      const std::int64_t m = at.m(b, l);
      for (std::int64_t n = 0; n < p.dstate; ++n) {
        d(m, p.offset_A() + n) = dA[at.bnl(b, n, l)];
        d(m, p.offset_bias() + n) = dbias[at.bnl(b, n, l)];
        for (std::int64_t h = 0; h < p.dim; ++h) {
          d(m, p.offset_B() + h * p.dstate + n) = dB[at.B(b, n, h, l)];
          d(m, p.offset_C() + h * p.dstate + n) = dC[at.C(b, h, n, l)];
        }
      }
      for (std::int64_t h = 0; h < p.dim; ++h) d(m, p.offset_D() + h) = dD_tv(m, h);
    }
  return d;
}

Matrix D_tv_of(const S7InnerProblem& p, const Matrix& x_dbl) {
  Matrix D(x_dbl.rows, p.dim);
  for (std::int64_t m = 0; m < x_dbl.rows; ++m)
    for (std::int64_t h = 0; h < p.dim; ++h) D(m, h) = x_dbl(m, p.offset_D() + h);
  return D;
}

S7ScanProblem scan_problem(const S7InnerProblem& p, bool with_backward) {
  S7ScanProblem s = p.inner_scan();
  s.with_backward = with_backward;
  return s;
}

// The scan inside the layer (s7_scan's semantics and layouts) with its errors, (b, N, L) unless
// noted. s7_scan_error_terms is the standalone op's worst-case pass; inside the layer its linear
// sums over Dm, N and time were the largest share of every gradient's bound (the scan's output
// alone had σ ≈ 260·|value| at the median for b=2, L=32, Dm=8, N=4), so the layer runs the
// scan's rules in this model instead:
//   A_bar = 1 − r, r = 1/q, q = A·A + 0.5, each operation one rounding; s = dA_bar/dA = 2A·r·r.
//   Bu_l = Σ_h B·u + bias: a reduction over Dm + 1 addends;
//   x_l = A_bar_l·x_{l−1} + Bu_l: δx_l = A_bar_l·δx_{l−1} + x_{l−1}·δA_bar_l + f_l, where the
//       fresh error f_l holds δBu_l and three roundings the size of a partial state, S_l: the
//       product and the sum of a sequential scan, plus the running A_bar product (or a carry's
//       combine) of a chunked or tree-shaped one. As for a reduction's S (top of the file),
//       S_l² = min(M_l², x_l² + V_l): M_l = |A_bar_l|·M_{l−1} + Σ|B·u| + |bias| bounds every
//       partial state any scan order forms, V_l = A_bar_l²·V_{l−1} + Bu_l² is the spread of x_l's
//       addends (Π A_bar)·Bu_j;
//   out = Σ_n C·x_l: a reduction over N;
//   g_l = Σ_h C·dout + A_bar_{l+1}·g_{l+1}: the same in reverse time (δg_l = A_bar_{l+1}·δg_{l+1} +
//       g_{l+1}·δA_bar_{l+1} + h_l, h_l holding the reduction Σ_h C·dout over Dm and three
//       roundings).
// δA_bar is the one error that need not be fresh at every step: where A does not change over time
// (A = base_params, or a row of A that the data barely moves) every step rounds the same A_bar the
// same way, base_params' own rounding is shared by every step, and the recurrence sums
// x_{j−1}·δA_bar_j over its memory coherently, ~sqrt(L) beyond the quadrature when A_bar → ±1
// (L = 2048 with A constant broke the bound). So the A_bar terms are carried both ways, in
// quadrature (Q: independent δA_bar_j) and coherently (C_l = A_bar_l·C_{l−1} + x_{l−1}·σ(A_bar_l):
// one shared δA_bar), and σ(x_l)² takes the larger: max(C², Q) bounds every uniform correlation
// between steps in [0, 1]. The fresh variances and the A_bar terms are kept for the reductions
// over time (state_ and adjoint_coherent_variance).
struct ScanErrors {
  Tensor abar, slope, s_slope;  // A_bar, s = dA_bar/dA, σ(s)
  // x_l, σ(x_l), f_l² (the independent variance step l adds) and x_{l−1}·σ(A_bar_l)
  Tensor state, s_state, fresh_state, abar_state;
  Tensor s_out;  // σ(out), (b, Dm, L)
  // g_l, σ(g_l), h_l² and g_{l+1}·σ(A_bar_{l+1})
  Tensor adjoint, s_adjoint, fresh_adjoint, abar_adjoint;
};

ScanErrors scan_errors(const S7InnerProblem& p, const TensorMap& in, const TensorMap& sigma_in, bool with_backward) {
  const Rows at(p);
  using std::fabs;
  using std::sqrt;
  const auto sq = [](double v) { return v * v; };
  const Tensor &u = require(in, "u"), &A = require(in, "A"), &B = require(in, "B"), &C = require(in, "C");
  const Tensor& bias = require(in, "bias");
  const Tensor &s_u = require(sigma_in, "u"), &s_A = require(sigma_in, "A"), &s_B = require(sigma_in, "B");
  const Tensor &s_C = require(sigma_in, "C"), &s_bias = require(sigma_in, "bias");

  ScanErrors e;
  e.abar = e.slope = e.s_slope = e.state = e.s_state = e.fresh_state = e.abar_state = Tensor(A.shape);
  Tensor s_abar(A.shape);
  for (std::int64_t i = 0; i < A.numel(); ++i) {
    const double a = A[i], q = a * a + 0.5, r = 1.0 / q;
    const double s_q_squared = sq(2 * a * s_A[i]) + sq(a * a) + sq(q);
    const double s_r = sqrt(sq(r * r) * s_q_squared + sq(2 * r));  // a reciprocal of up to 1 ulp
    e.abar[i] = 1.0 - r;
    s_abar[i] = sqrt(sq(s_r) + sq(e.abar[i]));
    e.slope[i] = 2 * a * r * r;
    // A reaches s through 2A and through r with opposite signs (2r² − 8A²r³): their
    // quadrature is never below the exact sensitivity.
    e.s_slope[i] = sqrt(sq(2 * r * r * s_A[i]) + sq(4 * a * r * s_r) + 2 * sq(e.slope[i]));
  }

  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t n = 0; n < p.dstate; ++n) {
      double state = 0, magnitude = 0, spread = 0;
      double independent = 0, abar_quadrature = 0, abar_coherent = 0;  // the parts of σ(x)²; C
      for (std::int64_t l = 0; l < p.seqlen; ++l) {
        const std::int64_t i = at.bnl(b, n, l);
        Reduction Bu;
        double Bu_magnitude = fabs(bias[i]);
        for (std::int64_t h = 0; h < p.dim; ++h) {
          const double Bv = B[at.B(b, n, h, l)], uv = u[at.bhl(b, h, l)];
          Bu.add_product(Bv, s_B[at.B(b, n, h, l)], uv, s_u[at.bhl(b, h, l)]);
          Bu_magnitude += fabs(Bv * uv);
        }
        Bu.add_term(bias[i], s_bias[i]);
        const double next = e.abar[i] * state + Bu.value();
        magnitude = fabs(e.abar[i]) * magnitude + Bu_magnitude;
        spread = sq(e.abar[i]) * spread + sq(Bu.value());
        const double partial_squared = std::min(sq(magnitude), sq(next) + spread);
        const double a2 = sq(e.abar[i]);
        e.fresh_state[i] = sq(Bu.sigma()) + 3 * partial_squared;
        e.abar_state[i] = state * s_abar[i];
        independent = a2 * independent + e.fresh_state[i];
        abar_quadrature = a2 * abar_quadrature + sq(e.abar_state[i]);
        abar_coherent = e.abar[i] * abar_coherent + e.abar_state[i];
        state = next;
        e.state[i] = state;
        e.s_state[i] = sqrt(independent + std::max(abar_quadrature, sq(abar_coherent)));
      }
    }
  e.s_out = Tensor(u.shape);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t l = 0; l < p.seqlen; ++l)
      for (std::int64_t h = 0; h < p.dim; ++h) {
        Reduction y;
        for (std::int64_t n = 0; n < p.dstate; ++n)
          y.add_product(C[at.C(b, h, n, l)], s_C[at.C(b, h, n, l)], e.state[at.bnl(b, n, l)],
                        e.s_state[at.bnl(b, n, l)]);
        e.s_out[at.bhl(b, h, l)] = y.sigma();
      }
  if (!with_backward) return e;

  const Tensor &dout = require(in, "dout"), &s_dout = require(sigma_in, "dout");
  e.adjoint = e.s_adjoint = e.fresh_adjoint = e.abar_adjoint = Tensor(A.shape);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t n = 0; n < p.dstate; ++n) {
      // What flows into step l from l+1: A_bar_{l+1}·g_{l+1}, the parts of its σ², the
      // magnitude, the spread, and g_{l+1}·σ(A_bar_{l+1}).
      double carried = 0, carried_magnitude = 0, carried_spread = 0, carried_abar = 0;
      double independent = 0, abar_quadrature = 0, abar_coherent = 0;
      for (std::int64_t l = p.seqlen - 1; l >= 0; --l) {
        const std::int64_t i = at.bnl(b, n, l);
        Reduction Cd;
        double Cd_magnitude = 0;
        for (std::int64_t h = 0; h < p.dim; ++h) {
          const double Cv = C[at.C(b, h, n, l)], dv = dout[at.bhl(b, h, l)];
          Cd.add_product(Cv, s_C[at.C(b, h, n, l)], dv, s_dout[at.bhl(b, h, l)]);
          Cd_magnitude += fabs(Cv * dv);
        }
        const double adjoint = carried + Cd.value();
        const double magnitude = carried_magnitude + Cd_magnitude;
        const double spread = carried_spread + sq(Cd.value());
        const double partial_squared = std::min(sq(magnitude), sq(adjoint) + spread);
        e.fresh_adjoint[i] = sq(Cd.sigma()) + 3 * partial_squared;
        e.abar_adjoint[i] = carried_abar;
        independent += e.fresh_adjoint[i];
        abar_quadrature += sq(carried_abar);
        abar_coherent += carried_abar;
        e.adjoint[i] = adjoint;
        e.s_adjoint[i] = sqrt(independent + std::max(abar_quadrature, sq(abar_coherent)));
        const double a2 = sq(e.abar[i]);
        carried = e.abar[i] * adjoint;
        carried_magnitude = fabs(e.abar[i]) * magnitude;
        carried_spread = a2 * spread;
        carried_abar = adjoint * s_abar[i];
        independent *= a2;
        abar_quadrature *= a2;
        abar_coherent *= e.abar[i];
      }
    }
  return e;
}

// The variance that the recurrences' errors give a reduction over time, Σ_l c_l·δx_l (or δg_l),
// in one (b, n) channel. A per-element quadrature treats δx_l and δx_{l'} as independent, but
// the recurrence carries one step's error into every later state: δx_l = Σ_{j≤l}
// (Π_{j<i≤l} A_bar_i)·(f_j + x_{j−1}·δA_bar_j). Where c_l keeps its sign over time and A_bar → 1 (a
// gradient reduced against the states or adjoints that produced it, as dbase_params and the B rows
// of dx_proj_weight are) the errors add coherently, ~sqrt(L) beyond the quadrature: L = 256
// broke the bound. Exactly, to first order, Σ_l c_l·δx_l = Σ_j U_j·(f_j + x_{j−1}·δA_bar_j) with
// U_j = c_j + A_bar_{j+1}·U_{j+1}, and Σ_l c_l·δg_l = Σ_j V_j·(h_j + g_{j+1}·δA_bar_{j+1}) with
// V_j = c_j + A_bar_j·V_{j−1}. The fresh f_j, h_j are independent: Σ_j U_j²·f_j²; the A_bar terms
// are taken both ways, as in scan_errors: Σ_j (U_j·x_{j−1}·σ(A_bar_j))² and
// (Σ_j U_j·x_{j−1}·σ(A_bar_j))².
struct TimeVariance {
  double independent = 0, abar_quadrature = 0, abar_coherent = 0;
  TimeVariance& operator+=(const TimeVariance& o) {
    independent += o.independent;
    abar_quadrature += o.abar_quadrature;
    abar_coherent += std::fabs(o.abar_coherent);  // the state's and the adjoint's may share δA_bar
    return *this;
  }
  double total() const { return independent + std::max(abar_quadrature, abar_coherent * abar_coherent); }
};
template <class Coefficient>
TimeVariance state_coherent_variance(const ScanErrors& e, const Rows& at, std::int64_t b, std::int64_t n,
                                     Coefficient c) {
  TimeVariance v;
  double carried = 0;  // A_bar_{l+1}·U_{l+1}
  for (std::int64_t l = at.L - 1; l >= 0; --l) {
    const std::int64_t i = at.bnl(b, n, l);
    const double U = c(l) + carried;
    v.independent += U * U * e.fresh_state[i];
    v.abar_quadrature += U * U * e.abar_state[i] * e.abar_state[i];
    v.abar_coherent += U * e.abar_state[i];
    carried = e.abar[i] * U;
  }
  return v;
}
template <class Coefficient>
TimeVariance adjoint_coherent_variance(const ScanErrors& e, const Rows& at, std::int64_t b, std::int64_t n,
                                       Coefficient c) {
  TimeVariance v;
  double V = 0;
  for (std::int64_t l = 0; l < at.L; ++l) {
    const std::int64_t i = at.bnl(b, n, l);
    V = c(l) + e.abar[i] * V;
    v.independent += V * V * e.fresh_adjoint[i];
    v.abar_quadrature += V * V * e.abar_adjoint[i] * e.abar_adjoint[i];
    v.abar_coherent += V * e.abar_adjoint[i];
  }
  return v;
}

}  // namespace

// Forward, rows m = (b, l):  x = hs·W_inᵀ;  x_dbl = x·W_xᵀ;  y = scan(...) + D_tv ⊙ x;
// gate = sigmoid(gelu(y)·W_gateᵀ);  out = gate ⊙ y + hs.
// Backward, reverse order: d gate = dout ⊙ y, dz = d gate ⊙ σ(1−σ), d gelu = dz·W_gate,
// dy = dout ⊙ gate + d gelu ⊙ gelu'(y); the scan's backward from dy (via s7_scan); dD_tv = dy ⊙ x;
// dx = du + dy ⊙ D_tv + dx_dbl·W_x; dhs = dout + dx·W_in; weight gradients are (dᵀ·input) over all
// rows, dbase_params the sum of dA over rows.
TensorMap s7_inner(const S7InnerProblem& p, const TensorMap& inputs) {
  check_inputs(p, inputs);
  const Rows at(p);
  const std::int64_t M = p.batch * p.seqlen, Dm = p.dim;
  const Matrix hs = as_matrix(require(inputs, "hidden_states"), M, Dm);
  const Matrix W_in = as_matrix(require(inputs, "in_proj_weight"), Dm, Dm);
  const Matrix W_x = as_matrix(require(inputs, "x_proj_weight"), p.x_proj_rows(), Dm);
  const Matrix W_gate = as_matrix(require(inputs, "gate_proj_weight"), Dm, Dm);
  const Tensor& base_params = require(inputs, "base_params");

  const Matrix x = matmul_nt(hs, W_in);
  const Matrix x_dbl = matmul_nt(x, W_x);
  const Matrix D_tv = D_tv_of(p, x_dbl);
  TensorMap scan_in = scan_inputs(p, x, x_dbl, &base_params);
  const Matrix scan_out = rows_from_bhl(p, require(s7_scan(scan_problem(p, false), scan_in), "out"));
  Matrix y(M, Dm), gelu_y(M, Dm);
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t h = 0; h < Dm; ++h) {
      y(m, h) = scan_out(m, h) + D_tv(m, h) * x(m, h);
      gelu_y(m, h) = gelu(y(m, h));
    }
  const Matrix z = matmul_nt(gelu_y, W_gate);
  Matrix gate(M, Dm), out(M, Dm);
  for (std::int64_t i = 0; i < M * Dm; ++i) {
    gate.v[i] = sigmoid(z.v[i]);
    out.v[i] = gate.v[i] * y.v[i] + hs.v[i];
  }
  TensorMap result;
  result["out"] = as_tensor(out, {p.batch, p.seqlen, Dm});
  if (!p.with_backward) return result;

  const Matrix dout = as_matrix(require(inputs, "dout"), M, Dm);
  Matrix dz(M, Dm);
  for (std::int64_t i = 0; i < M * Dm; ++i) dz.v[i] = dout.v[i] * y.v[i] * gate.v[i] * (1 - gate.v[i]);
  const Matrix dgelu = matmul_nt(dz, transpose(W_gate));
  Matrix dy(M, Dm), dD_tv(M, Dm);
  for (std::int64_t i = 0; i < M * Dm; ++i) {
    dy.v[i] = dout.v[i] * gate.v[i] + dgelu.v[i] * gelu_derivative(y.v[i]);
    dD_tv.v[i] = dy.v[i] * x.v[i];
  }
  scan_in["dout"] = bhl_from_rows(p, dy);
  const TensorMap scan_grads = s7_scan(scan_problem(p, true), scan_in);
  const Matrix dx_dbl = x_dbl_gradient(p, scan_grads, dD_tv);
  Matrix dx = rows_from_bhl(p, require(scan_grads, "du"));
  add_scaled(dx, matmul_nt(dx_dbl, transpose(W_x)));
  for (std::int64_t i = 0; i < M * Dm; ++i) dx.v[i] += dy.v[i] * D_tv.v[i];
  Matrix dhs = matmul_nt(dx, transpose(W_in));
  add_scaled(dhs, dout);

  Tensor dbase({p.dstate});
  const Tensor& dA = require(scan_grads, "dA");
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t n = 0; n < p.dstate; ++n)
      for (std::int64_t l = 0; l < p.seqlen; ++l) dbase[n] += dA[at.bnl(b, n, l)];
  result["dhidden_states"] = as_tensor(dhs, {p.batch, p.seqlen, Dm});
  result["din_proj_weight"] = as_tensor(matmul_nt(transpose(dx), transpose(hs)), {Dm, Dm});
  result["dx_proj_weight"] = as_tensor(matmul_nt(transpose(dx_dbl), transpose(x)), {p.x_proj_rows(), Dm});
  result["dgate_proj_weight"] = as_tensor(matmul_nt(transpose(dz), transpose(gelu_y)), {Dm, Dm});
  result["dbase_params"] = std::move(dbase);
  return result;
}

// The error pass: the forward and backward again, every quantity v with its σ(v) in eps32 units,
// by the rules at the top of the file. Per stage:
//   x, x_dbl, z = gelu(y)·W_gateᵀ: reductions over Dm;  A = x_dbl + base_params: one sum;
//   the scan: scan_errors, fed the σ of u = xᵀ, A, B, C and bias;
//   y = scan + D_tv·x;  gelu: gelu'(y)·σ(y) ⊕ gelu_rounding;  σ = sigmoid(z): σ(1−σ)·σ(z) ⊕
//   sigmoid_rounding;  out = σ·y + hs.
// Backward: dσ = dout·y; 1−σ (its rounding |1−σ|: the cancellation as σ → 1 is noise the bound
//   keeps); σ(1−σ) and dz one product each; d gelu = dz·W_gate over Dm; gelu' carries
//   gelu''(y)·σ(y) ⊕ gelu_derivative_rounding; dy = dout·σ + dgelu·gelu'; the scan's backward
//   from σ(dy); dx_dbl's blocks dA = (g·x_{l−1})·s, dB = g·u, dC = dy·x_l, dbias = g,
//   dD_tv = dy·x; dx = dx_dbl·W_x + du + dy·D_tv over R + 2 addends, du = Σ_n B·g over N;
//   dhs = dx·W_in + dout over Dm + 1; d W = dᵀ·input over the batch·seqlen rows (time);
//   dbase_params = Σ_rows dA.
// Where the scan's states x_l and adjoints g_l reach a gradient, their errors are taken apart
// from the rest ("local"): per element through their exact sensitivities (one δg_l[n] reaches
// dx[l, i] through the B, bias and A rows of W_x and through du at once), and in the reductions
// over time through state_coherent_variance and adjoint_coherent_variance.
TensorMap s7_inner_error_bound(const S7InnerProblem& p, const TensorMap& inputs) {
  check_inputs(p, inputs);
  const Rows at(p);
  const std::int64_t M = p.batch * p.seqlen, Dm = p.dim, N = p.dstate, R = p.x_proj_rows();
  using std::fabs;
  using std::sqrt;
  const auto sq = [](double v) { return v * v; };
  const Matrix hs = as_matrix(require(inputs, "hidden_states"), M, Dm);
  const Matrix W_in = as_matrix(require(inputs, "in_proj_weight"), Dm, Dm);
  const Matrix W_x = as_matrix(require(inputs, "x_proj_weight"), R, Dm);
  const Matrix W_gate = as_matrix(require(inputs, "gate_proj_weight"), Dm, Dm);
  const Tensor& base_params = require(inputs, "base_params");
  // The inputs' own rounding to float32: one rounding each, σ = |v|.
  const Matrix s_hs = absolute(hs), s_W_in = absolute(W_in), s_W_x = absolute(W_x), s_W_gate = absolute(W_gate);

  const Matrix x = matmul_nt(hs, W_in), s_x = sigma_nt(hs, s_hs, W_in, s_W_in);
  const Matrix x_dbl = matmul_nt(x, W_x), s_x_dbl = sigma_nt(x, s_x, W_x, s_W_x);
  const Matrix D_tv = D_tv_of(p, x_dbl), s_D_tv = D_tv_of(p, s_x_dbl);
  TensorMap scan_in = scan_inputs(p, x, x_dbl, &base_params);
  TensorMap scan_sigma = scan_inputs(p, s_x, s_x_dbl, nullptr);
  {
    const Tensor& A = require(scan_in, "A");
    Tensor& s_A = scan_sigma.at("A");
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t l = 0; l < p.seqlen; ++l) {
          const std::int64_t i = at.bnl(b, n, l);
          s_A[i] = sqrt(sq(s_A[i]) + sq(base_params[n]) + sq(A[i]));
        }
  }
  const Matrix scan_out = rows_from_bhl(p, require(s7_scan(scan_problem(p, false), scan_in), "out"));
  const Matrix s_scan_out = rows_from_bhl(p, scan_errors(p, scan_in, scan_sigma, false).s_out);

  Matrix y(M, Dm), s_y(M, Dm), gelu_y(M, Dm), s_gelu_y(M, Dm);
  for (std::int64_t i = 0; i < M * Dm; ++i) {
    const double skip = D_tv.v[i] * x.v[i];
    y.v[i] = scan_out.v[i] + skip;
    s_y.v[i] = sqrt(sq(s_scan_out.v[i]) + sq(x.v[i] * s_D_tv.v[i]) + sq(D_tv.v[i] * s_x.v[i]) + sq(skip) + sq(y.v[i]));
    gelu_y.v[i] = gelu(y.v[i]);
    s_gelu_y.v[i] = sqrt(sq(gelu_derivative(y.v[i]) * s_y.v[i]) + sq(gelu_rounding(y.v[i])));
  }
  const Matrix z = matmul_nt(gelu_y, W_gate), s_z = sigma_nt(gelu_y, s_gelu_y, W_gate, s_W_gate);
  Matrix gate(M, Dm), s_gate(M, Dm), s_out(M, Dm);
  for (std::int64_t i = 0; i < M * Dm; ++i) {
    const double s = sigmoid(z.v[i]), gated = s * y.v[i];
    gate.v[i] = s;
    s_gate.v[i] = sqrt(sq(s * (1 - s) * s_z.v[i]) + sq(sigmoid_rounding(z.v[i])));
    s_out.v[i] = sqrt(sq(y.v[i] * s_gate.v[i]) + sq(s * s_y.v[i]) + sq(s_hs.v[i]) + sq(gated) + sq(gated + hs.v[i]));
  }
  TensorMap sigma;
  sigma["out"] = as_tensor(s_out, {p.batch, p.seqlen, Dm});

  if (p.with_backward) {
    const Matrix dout = as_matrix(require(inputs, "dout"), M, Dm), s_dout = absolute(dout);
    Matrix dz(M, Dm), s_dz(M, Dm);
    for (std::int64_t i = 0; i < M * Dm; ++i) {
      const double s = gate.v[i], one_minus = 1 - s, slope = s * one_minus;
      const double dgate = dout.v[i] * y.v[i];
      const double s_dgate = sqrt(sq(y.v[i] * s_dout.v[i]) + sq(dout.v[i] * s_y.v[i]) + sq(dgate));
      const double s_one_minus = sqrt(sq(s_gate.v[i]) + sq(one_minus));
      // σ and 1−σ share σ's error, which reaches σ(1−σ) as (1−2σ)·δσ; the quadrature
      // sqrt((1−σ)² + σ²)·σ(σ) is never below it.
      const double s_slope = sqrt(sq(one_minus * s_gate.v[i]) + sq(s * s_one_minus) + sq(slope));
      dz.v[i] = dgate * slope;
      s_dz.v[i] = sqrt(sq(slope * s_dgate) + sq(dgate * s_slope) + sq(dz.v[i]));
    }
    const Matrix W_gate_t = transpose(W_gate), s_W_gate_t = transpose(s_W_gate);
    const Matrix dgelu = matmul_nt(dz, W_gate_t), s_dgelu = sigma_nt(dz, s_dz, W_gate_t, s_W_gate_t);
    Matrix dy(M, Dm), s_dy(M, Dm), dD_tv(M, Dm);
    for (std::int64_t i = 0; i < M * Dm; ++i) {
      const double slope = gelu_derivative(y.v[i]);
      const double s_slope =
          sqrt(sq(gelu_second_derivative(y.v[i]) * s_y.v[i]) + sq(gelu_derivative_rounding(y.v[i])));
      const double passed = dout.v[i] * gate.v[i], through_gelu = dgelu.v[i] * slope;
      dy.v[i] = passed + through_gelu;
      s_dy.v[i] = sqrt(sq(gate.v[i] * s_dout.v[i]) + sq(dout.v[i] * s_gate.v[i]) + sq(slope * s_dgelu.v[i]) +
                       sq(dgelu.v[i] * s_slope) + sq(passed) + sq(through_gelu) + sq(dy.v[i]));
      dD_tv.v[i] = dy.v[i] * x.v[i];
    }
    scan_in["dout"] = bhl_from_rows(p, dy);
    scan_sigma["dout"] = bhl_from_rows(p, s_dy);
    const TensorMap scan_grads = s7_scan(scan_problem(p, true), scan_in);
    const ScanErrors e = scan_errors(p, scan_in, scan_sigma, true);
    const Matrix dx_dbl = x_dbl_gradient(p, scan_grads, dD_tv);
    const Tensor &B = require(scan_in, "B"), &s_B = require(scan_sigma, "B");

    // Per row m = (b, l) and channel n: the state x_l, the adjoint g_l, x_{l−1}, s_l, σ's.
    struct Channel {
      double state, s_state, adjoint, s_adjoint, previous, s_previous, slope, s_slope;
    };
    const auto channel = [&](std::int64_t b, std::int64_t n, std::int64_t l) {
      const std::int64_t i = at.bnl(b, n, l), before = at.bnl(b, n, l - 1);  // before: read only if l > 0
      Channel c{e.state[i], e.s_state[i], e.adjoint[i], e.s_adjoint[i], 0.0, 0.0, e.slope[i], e.s_slope[i]};
      if (l > 0) {
        c.previous = e.state[before];
        c.s_previous = e.s_state[before];
      }
      return c;
    };
    // σ of dx_dbl without the states' and adjoints' errors.
    Matrix local_dx_dbl(M, R);
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t l = 0; l < p.seqlen; ++l) {
        const std::int64_t m = at.m(b, l);
        for (std::int64_t n = 0; n < N; ++n) {
          const Channel c = channel(b, n, l);
          const double gx = c.adjoint * c.previous;
          local_dx_dbl(m, p.offset_A() + n) = sqrt(sq(gx * c.s_slope) + 2 * sq(gx * c.slope));
          local_dx_dbl(m, p.offset_bias() + n) = 0;  // dbias = g, no operation of its own
          for (std::int64_t h = 0; h < Dm; ++h) {
            local_dx_dbl(m, p.offset_B() + h * N + n) = sqrt(sq(c.adjoint * s_x(m, h)) + sq(c.adjoint * x(m, h)));
            local_dx_dbl(m, p.offset_C() + h * N + n) = sqrt(sq(c.state * s_dy(m, h)) + sq(dy(m, h) * c.state));
          }
        }
        for (std::int64_t h = 0; h < Dm; ++h)
          local_dx_dbl(m, p.offset_D() + h) =
              sqrt(sq(x(m, h) * s_dy(m, h)) + sq(dy(m, h) * s_x(m, h)) + sq(dD_tv(m, h)));
      }

    // The sensitivities of dx[m, i] to the adjoint g_l[n] (through the B, bias and A rows of W_x
    // and through du = Σ_n B·g) and to the state x_l[n] (through the C rows), (M, N, Dm).
    std::vector<double> to_adjoint(static_cast<std::size_t>(M * N * Dm)), to_state(to_adjoint.size());
    const auto sensitivity_at = [&](std::int64_t m, std::int64_t n, std::int64_t i) {
      return static_cast<std::size_t>((m * N + n) * Dm + i);
    };
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t l = 0; l < p.seqlen; ++l) {
        const std::int64_t m = at.m(b, l);
        for (std::int64_t n = 0; n < N; ++n) {
          const Channel c = channel(b, n, l);
          for (std::int64_t i = 0; i < Dm; ++i) {
            double via_B = 0, via_C = 0;
            for (std::int64_t h = 0; h < Dm; ++h) {
              via_B += x(m, h) * W_x(p.offset_B() + h * N + n, i);
              via_C += dy(m, h) * W_x(p.offset_C() + h * N + n, i);
            }
            to_adjoint[sensitivity_at(m, n, i)] = via_B + W_x(p.offset_bias() + n, i) +
                                                  c.previous * c.slope * W_x(p.offset_A() + n, i) +
                                                  B[at.B(b, n, i, l)];
            to_state[sensitivity_at(m, n, i)] = via_C;
          }
        }
      }
    // dx = dx_dbl·W_x + du + dy·D_tv: local σ and full σ (local ⊕ the states' and adjoints' errors
    // through their exact sensitivities, x_{l−1} through dA_l's A row).
    const Matrix du = rows_from_bhl(p, require(scan_grads, "du"));
    const Matrix W_x_t = transpose(W_x), s_W_x_t = transpose(s_W_x);
    std::vector<Reduction> dx_sum = reduce_nt(dx_dbl, local_dx_dbl, W_x_t, s_W_x_t);
    Matrix dx(M, Dm), local_dx(M, Dm), s_dx(M, Dm);
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t l = 0; l < p.seqlen; ++l) {
        const std::int64_t m = at.m(b, l);
        for (std::int64_t i = 0; i < Dm; ++i) {
          Reduction du_sum;  // Σ_n B·g with B's errors and its own rounding
          double recurrences = 0;
          for (std::int64_t n = 0; n < N; ++n) {
            const Channel c = channel(b, n, l);
            du_sum.add_product(B[at.B(b, n, i, l)], s_B[at.B(b, n, i, l)], c.adjoint, 0.0);
            recurrences += sq(to_adjoint[sensitivity_at(m, n, i)] * c.s_adjoint) +
                           sq(to_state[sensitivity_at(m, n, i)] * c.s_state) +
                           sq(W_x(p.offset_A() + n, i) * c.adjoint * c.slope * c.s_previous);
          }
          Reduction& sum = dx_sum[static_cast<std::size_t>(m * Dm + i)];
          sum.add_term(du(m, i), du_sum.sigma());
          sum.add_product(dy(m, i), s_dy(m, i), D_tv(m, i), s_D_tv(m, i));
          dx(m, i) = sum.value();
          local_dx(m, i) = sum.sigma();
          s_dx(m, i) = sqrt(sq(local_dx(m, i)) + recurrences);
        }
      }
    // dhs = dx·W_in + dout, one reduction of Dm + 1 addends.
    const Matrix W_in_t = transpose(W_in), s_W_in_t = transpose(s_W_in);
    std::vector<Reduction> dhs_sum = reduce_nt(dx, s_dx, W_in_t, s_W_in_t);
    for (std::int64_t i = 0; i < M * Dm; ++i) dhs_sum[i].add_term(dout.v[i], s_dout.v[i]);

    // Reductions over time (the M = batch·seqlen rows, in row order): the local errors by the
    // reduction rule, the states' and adjoints' by state_ and adjoint_coherent_variance, channel by
    // channel (the channels' A_bar errors are independent; the batch entries' may coincide).
    const auto next_row = [&](std::int64_t b, std::int64_t l, const Matrix& in, std::int64_t j) {
      return l + 1 < p.seqlen ? in(at.m(b, l + 1), j) : 0.0;
    };
    // through dA_{l+1} = g_{l+1}·x_l·s_{l+1}: the sensitivity of row l+1 to x_l
    const auto next_adjoint_slope = [&](std::int64_t b, std::int64_t n, std::int64_t l) {
      return l + 1 < p.seqlen ? e.adjoint[at.bnl(b, n, l + 1)] * e.slope[at.bnl(b, n, l + 1)] : 0.0;
    };
    const auto previous_state_slope = [&](std::int64_t b, std::int64_t n, std::int64_t l) {
      return e.slope[at.bnl(b, n, l)] * (l > 0 ? e.state[at.bnl(b, n, l - 1)] : 0.0);
    };
    std::vector<Reduction> dW_x = reduce_nt(transpose(dx_dbl), transpose(local_dx_dbl), transpose(x), transpose(s_x));
    const auto add_to_dW_x = [&](std::int64_t r, std::int64_t j, const TimeVariance& v) {
      dW_x[static_cast<std::size_t>(r * Dm + j)].add_variance(v.total());
    };
    for (std::int64_t j = 0; j < Dm; ++j)
      for (std::int64_t n = 0; n < N; ++n) {
        TimeVariance via_A, via_bias;
        std::vector<TimeVariance> via_B(static_cast<std::size_t>(Dm)), via_C(via_B.size());
        for (std::int64_t b = 0; b < p.batch; ++b) {
          const auto row = [&](std::int64_t l) { return at.m(b, l); };
          via_A += adjoint_coherent_variance(
              e, at, b, n, [&](std::int64_t l) { return previous_state_slope(b, n, l) * x(row(l), j); });
          via_A += state_coherent_variance(
              e, at, b, n, [&](std::int64_t l) { return next_adjoint_slope(b, n, l) * next_row(b, l, x, j); });
          via_bias += adjoint_coherent_variance(e, at, b, n, [&](std::int64_t l) { return x(row(l), j); });
          for (std::int64_t h = 0; h < Dm; ++h) {
            via_B[h] += adjoint_coherent_variance(
                e, at, b, n, [&](std::int64_t l) { return x(row(l), h) * x(row(l), j); });
            via_C[h] += state_coherent_variance(
                e, at, b, n, [&](std::int64_t l) { return dy(row(l), h) * x(row(l), j); });
          }
        }
        add_to_dW_x(p.offset_A() + n, j, via_A);
        add_to_dW_x(p.offset_bias() + n, j, via_bias);
        for (std::int64_t h = 0; h < Dm; ++h) {
          add_to_dW_x(p.offset_B() + h * N + n, j, via_B[h]);
          add_to_dW_x(p.offset_C() + h * N + n, j, via_C[h]);
        }
      }
    std::vector<Reduction> dW_in = reduce_nt(transpose(dx), transpose(local_dx), transpose(hs), transpose(s_hs));
    for (std::int64_t i = 0; i < Dm; ++i)
      for (std::int64_t j = 0; j < Dm; ++j)
        for (std::int64_t n = 0; n < N; ++n) {
          TimeVariance v;
          for (std::int64_t b = 0; b < p.batch; ++b) {
            const auto row = [&](std::int64_t l) { return at.m(b, l); };
            v += adjoint_coherent_variance(e, at, b, n, [&](std::int64_t l) {
              return to_adjoint[sensitivity_at(row(l), n, i)] * hs(row(l), j);
            });
            v += state_coherent_variance(e, at, b, n, [&](std::int64_t l) {
              return to_state[sensitivity_at(row(l), n, i)] * hs(row(l), j) +
                     W_x(p.offset_A() + n, i) * next_adjoint_slope(b, n, l) * next_row(b, l, hs, j);
            });
          }
          dW_in[static_cast<std::size_t>(i * Dm + j)].add_variance(v.total());
        }
    Tensor s_dbase({N});
    for (std::int64_t n = 0; n < N; ++n) {
      Reduction sum;
      TimeVariance v;
      for (std::int64_t b = 0; b < p.batch; ++b) {
        for (std::int64_t l = 0; l < p.seqlen; ++l) {
          const std::int64_t m = at.m(b, l);
          sum.add_term(dx_dbl(m, p.offset_A() + n), local_dx_dbl(m, p.offset_A() + n));
        }
        v += adjoint_coherent_variance(e, at, b, n, [&](std::int64_t l) { return previous_state_slope(b, n, l); });
        v += state_coherent_variance(e, at, b, n, [&](std::int64_t l) { return next_adjoint_slope(b, n, l); });
      }
      sum.add_variance(v.total());
      s_dbase[n] = sum.sigma();
    }
    sigma["dhidden_states"] = as_tensor(sigma_of(dhs_sum, M, Dm), {p.batch, p.seqlen, Dm});
    sigma["din_proj_weight"] = as_tensor(sigma_of(dW_in, Dm, Dm), {Dm, Dm});
    sigma["dx_proj_weight"] = as_tensor(sigma_of(dW_x, R, Dm), {R, Dm});
    sigma["dgate_proj_weight"] =
        as_tensor(sigma_nt(transpose(dz), transpose(s_dz), transpose(gelu_y), transpose(s_gelu_y)), {Dm, Dm});
    sigma["dbase_params"] = std::move(s_dbase);
  }
  // λ·u·σ, plus FLT_MIN for float32's underflow as in s7_scan_error_bound (flush to zero,
  // denormals: absolute, where every other term is relative).
  for (auto& [name, t] : sigma)
    for (auto& v : t.values) v = bound_from_terms(v) + std::numeric_limits<float>::min();
  return sigma;
}

}  // namespace scanlab::reference
