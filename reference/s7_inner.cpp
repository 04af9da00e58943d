#include "s7_inner.hpp"

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

// The term of a·wᵀ (error_bound rule for a reduction of K = a.cols products), given the terms of
// a and w: Σ_k (|w|·e(a) + |a|·e(w)) + K·Σ_k |a·w|.
Matrix matmul_nt_terms(const Matrix& a, const Matrix& e_a, const Matrix& w, const Matrix& e_w) {
  const Matrix abs_a = absolute(a), abs_w = absolute(w);
  Matrix e = matmul_nt(e_a, abs_w);
  add_scaled(e, matmul_nt(abs_a, e_w));
  add_scaled(e, matmul_nt(abs_a, abs_w), double(a.cols));
  return e;
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
// excluding v's own error: the product w = v·(1/√2) and the rounded constant (2·|w|, which erf
// multiplies by erf'(w)), erf itself (1 ulp = 2·|erf|), 1 + erf (|1 + erf|) and the final
// product (|gelu|). For v ≪ 0 the term 0.5·|v|·2·|erf| dominates the tiny result: float32's
// 1 + erf cancels there, and the bound says the result is noise.
double gelu_rounding(double v) {
  const double w = v * kInvSqrt2, erf_w = std::erf(w);
  const double erf_slope = kTwoOverSqrtPi * std::exp(-w * w);
  return std::fabs(gelu(v)) +
         0.5 * std::fabs(v) * (std::fabs(1.0 + erf_w) + 2 * std::fabs(erf_w) + 2 * erf_slope * std::fabs(w));
}
// Likewise for GELU' = Φ(v) + v·φ(v): Φ as above; φ = c·exp(−v²/2), whose argument carries v²'s
// rounding (relative 1, which exp turns into v²/2 of φ), exp (2), c and the product (2); v·φ (1);
// the sum (|GELU'|).
double gelu_derivative_rounding(double v) {
  const double w = v * kInvSqrt2, erf_w = std::erf(w);
  const double erf_slope = kTwoOverSqrtPi * std::exp(-w * w);
  const double phi = normal_pdf(v);
  return 0.5 * (std::fabs(1.0 + erf_w) + 2 * std::fabs(erf_w) + 2 * erf_slope * std::fabs(w)) +
         std::fabs(v) * phi * (0.5 * v * v + 5.0) + std::fabs(gelu_derivative(v));
}
// sigmoid = 1/(1 + e), e = exp(−z): exp's 1 ulp (2·e, which reaches sigmoid times σ²), the sum
// (|1 + e|·σ² = σ) and the reciprocal (up to 2·σ for a fast one): 2σ(1−σ) + 3σ.
double sigmoid_rounding(double z) {
  const double s = sigmoid(z);
  return 2 * s * (1 - s) + 3 * s;
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

// The magnitude pass (rules in reference/s7_scan.cpp: an input rounded to float32 has e = |v|;
// one product or sum adds |result|; a reduction of K products adds Σ sensitivities plus
// K·Σ|products|, the worst order). Per stage:
//   x, x_dbl, z = gelu(y)·W_gateᵀ: reductions of K = Dm;  A = x_dbl + base_params: one sum;
//   the scan: s7_scan_error_terms with the terms of u = xᵀ, A, B, C, bias gathered from x and
//   x_dbl, so the scan's own sensitivities (A_bar to A, the recurrence) carry them;
//   y = scan + D_tv·x: K = 2;  gelu: |gelu'(y)|·e(y) + gelu_rounding;
//   σ = sigmoid(z): σ(1−σ)·e(z) + sigmoid_rounding;  out = σ·y + hs: K = 2.
// Backward: dσ = dout·y; 1−σ (its term is e(σ) + |1−σ|: cancellation as σ → 1 is noise the bound
//   keeps); σ(1−σ) and dz one product each; d gelu = dz·W_gate: K = Dm;
//   gelu' carries |gelu''(y)|·e(y) + gelu_derivative_rounding; dy = dout·σ + dgelu·gelu': K = 2;
//   the scan's backward from dy's terms; dD_tv = dy·x one product;
//   dx = du + dy·D_tv + dx_dbl·W_x: K = R + 2;  dhs = dout + dx·W_in: K = Dm + 1;
//   d W = dᵀ·input over rows: K = batch·seqlen (the reduction over time);
//   dbase_params = Σ_rows dA: K = batch·seqlen.
TensorMap s7_inner_error_bound(const S7InnerProblem& p, const TensorMap& inputs) {
  check_inputs(p, inputs);
  const Rows at(p);
  const std::int64_t M = p.batch * p.seqlen, Dm = p.dim, R = p.x_proj_rows();
  using std::fabs;
  const Matrix hs = as_matrix(require(inputs, "hidden_states"), M, Dm);
  const Matrix W_in = as_matrix(require(inputs, "in_proj_weight"), Dm, Dm);
  const Matrix W_x = as_matrix(require(inputs, "x_proj_weight"), R, Dm);
  const Matrix W_gate = as_matrix(require(inputs, "gate_proj_weight"), Dm, Dm);
  const Tensor& base_params = require(inputs, "base_params");
  // The inputs' own rounding to float32.
  const Matrix e_hs = absolute(hs), e_W_in = absolute(W_in), e_W_x = absolute(W_x), e_W_gate = absolute(W_gate);

  const Matrix x = matmul_nt(hs, W_in), e_x = matmul_nt_terms(hs, e_hs, W_in, e_W_in);
  const Matrix x_dbl = matmul_nt(x, W_x), e_x_dbl = matmul_nt_terms(x, e_x, W_x, e_W_x);
  const Matrix D_tv = D_tv_of(p, x_dbl), e_D_tv = D_tv_of(p, e_x_dbl);
  TensorMap scan_in = scan_inputs(p, x, x_dbl, &base_params);
  TensorMap scan_terms = scan_inputs(p, e_x, e_x_dbl, nullptr);
  {
    const Tensor& A = require(scan_in, "A");
    Tensor& e_A = scan_terms.at("A");
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t n = 0; n < p.dstate; ++n)
        for (std::int64_t l = 0; l < p.seqlen; ++l) {
          const std::int64_t i = at.bnl(b, n, l);
          e_A[i] += fabs(base_params[n]) + fabs(A[i]);
        }
  }
  const Matrix scan_out = rows_from_bhl(p, require(s7_scan(scan_problem(p, false), scan_in), "out"));
  const Matrix e_scan_out =
      rows_from_bhl(p, require(s7_scan_error_terms(scan_problem(p, false), scan_in, scan_terms), "out"));

  Matrix y(M, Dm), e_y(M, Dm), gelu_y(M, Dm), e_gelu_y(M, Dm);
  for (std::int64_t i = 0; i < M * Dm; ++i) {
    y.v[i] = scan_out.v[i] + D_tv.v[i] * x.v[i];
    e_y.v[i] = e_scan_out.v[i] + fabs(x.v[i]) * e_D_tv.v[i] + fabs(D_tv.v[i]) * e_x.v[i] +
               2 * (fabs(scan_out.v[i]) + fabs(D_tv.v[i] * x.v[i]));
    gelu_y.v[i] = gelu(y.v[i]);
    e_gelu_y.v[i] = fabs(gelu_derivative(y.v[i])) * e_y.v[i] + gelu_rounding(y.v[i]);
  }
  const Matrix z = matmul_nt(gelu_y, W_gate), e_z = matmul_nt_terms(gelu_y, e_gelu_y, W_gate, e_W_gate);
  Matrix gate(M, Dm), e_gate(M, Dm), e_out(M, Dm);
  for (std::int64_t i = 0; i < M * Dm; ++i) {
    const double s = sigmoid(z.v[i]);
    gate.v[i] = s;
    e_gate.v[i] = s * (1 - s) * e_z.v[i] + sigmoid_rounding(z.v[i]);
    e_out.v[i] = fabs(y.v[i]) * e_gate.v[i] + s * e_y.v[i] + e_hs.v[i] + 2 * (fabs(s * y.v[i]) + fabs(hs.v[i]));
  }
  TensorMap terms;
  terms["out"] = as_tensor(e_out, {p.batch, p.seqlen, Dm});

  if (p.with_backward) {
    const Matrix dout = as_matrix(require(inputs, "dout"), M, Dm), e_dout = absolute(dout);
    Matrix dz(M, Dm), e_dz(M, Dm);
    for (std::int64_t i = 0; i < M * Dm; ++i) {
      const double s = gate.v[i], one_minus = 1 - s;
      const double dgate = dout.v[i] * y.v[i];
      const double e_dgate = fabs(y.v[i]) * e_dout.v[i] + fabs(dout.v[i]) * e_y.v[i] + fabs(dgate);
      const double e_one_minus = e_gate.v[i] + fabs(one_minus);
      const double slope = s * one_minus;
      const double e_slope = fabs(one_minus) * e_gate.v[i] + s * e_one_minus + fabs(slope);
      dz.v[i] = dgate * slope;
      e_dz.v[i] = fabs(slope) * e_dgate + fabs(dgate) * e_slope + fabs(dz.v[i]);
    }
    const Matrix W_gate_t = transpose(W_gate), e_W_gate_t = transpose(e_W_gate);
    const Matrix dgelu = matmul_nt(dz, W_gate_t), e_dgelu = matmul_nt_terms(dz, e_dz, W_gate_t, e_W_gate_t);
    Matrix dy(M, Dm), e_dy(M, Dm), dD_tv(M, Dm), e_dD_tv(M, Dm);
    for (std::int64_t i = 0; i < M * Dm; ++i) {
      const double slope = gelu_derivative(y.v[i]);
      const double e_slope = fabs(gelu_second_derivative(y.v[i])) * e_y.v[i] + gelu_derivative_rounding(y.v[i]);
      dy.v[i] = dout.v[i] * gate.v[i] + dgelu.v[i] * slope;
      e_dy.v[i] = gate.v[i] * e_dout.v[i] + fabs(dout.v[i]) * e_gate.v[i] + fabs(slope) * e_dgelu.v[i] +
                  fabs(dgelu.v[i]) * e_slope + 2 * (fabs(dout.v[i] * gate.v[i]) + fabs(dgelu.v[i] * slope));
      dD_tv.v[i] = dy.v[i] * x.v[i];
      e_dD_tv.v[i] = fabs(x.v[i]) * e_dy.v[i] + fabs(dy.v[i]) * e_x.v[i] + fabs(dD_tv.v[i]);
    }
    scan_in["dout"] = bhl_from_rows(p, dy);
    scan_terms["dout"] = bhl_from_rows(p, e_dy);
    const TensorMap scan_grads = s7_scan(scan_problem(p, true), scan_in);
    const TensorMap e_scan_grads = s7_scan_error_terms(scan_problem(p, true), scan_in, scan_terms);
    const Matrix dx_dbl = x_dbl_gradient(p, scan_grads, dD_tv);
    const Matrix e_dx_dbl = x_dbl_gradient(p, e_scan_grads, e_dD_tv);

    // dx = du + dy·D_tv + dx_dbl·W_x, a reduction of R + 2 terms.
    const Matrix du = rows_from_bhl(p, require(scan_grads, "du"));
    const Matrix e_du = rows_from_bhl(p, require(e_scan_grads, "du"));
    const Matrix W_x_t = transpose(W_x), e_W_x_t = transpose(e_W_x);
    Matrix dx = matmul_nt(dx_dbl, W_x_t);
    Matrix e_dx = matmul_nt(e_dx_dbl, absolute(W_x_t));
    add_scaled(e_dx, matmul_nt(absolute(dx_dbl), e_W_x_t));
    const Matrix dx_magnitude = matmul_nt(absolute(dx_dbl), absolute(W_x_t));
    for (std::int64_t i = 0; i < M * Dm; ++i) {
      const double skip = dy.v[i] * D_tv.v[i];
      dx.v[i] += du.v[i] + skip;
      e_dx.v[i] += e_du.v[i] + fabs(D_tv.v[i]) * e_dy.v[i] + fabs(dy.v[i]) * e_D_tv.v[i] +
                   double(R + 2) * (dx_magnitude.v[i] + fabs(du.v[i]) + fabs(skip));
    }
    // dhs = dout + dx·W_in, a reduction of Dm + 1 terms.
    const Matrix W_in_t = transpose(W_in), e_W_in_t = transpose(e_W_in);
    Matrix e_dhs = matmul_nt(e_dx, absolute(W_in_t));
    add_scaled(e_dhs, matmul_nt(absolute(dx), e_W_in_t));
    add_scaled(e_dhs, matmul_nt(absolute(dx), absolute(W_in_t)), double(Dm + 1));
    add_scaled(e_dhs, e_dout);
    add_scaled(e_dhs, absolute(dout), double(Dm + 1));

    // Weight gradients: dᵀ·input over all M = batch·seqlen rows.
    const auto weight_terms = [](const Matrix& d, const Matrix& e_d, const Matrix& in, const Matrix& e_in) {
      return matmul_nt_terms(transpose(d), transpose(e_d), transpose(in), transpose(e_in));
    };
    Tensor e_dbase({p.dstate});
    const Tensor& dA = require(scan_grads, "dA");
    const Tensor& e_dA = require(e_scan_grads, "dA");
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t n = 0; n < p.dstate; ++n)
        for (std::int64_t l = 0; l < p.seqlen; ++l)
          e_dbase[n] += e_dA[at.bnl(b, n, l)] + double(M) * fabs(dA[at.bnl(b, n, l)]);
    terms["dhidden_states"] = as_tensor(e_dhs, {p.batch, p.seqlen, Dm});
    terms["din_proj_weight"] = as_tensor(weight_terms(dx, e_dx, hs, e_hs), {Dm, Dm});
    terms["dx_proj_weight"] = as_tensor(weight_terms(dx_dbl, e_dx_dbl, x, e_x), {R, Dm});
    terms["dgate_proj_weight"] = as_tensor(weight_terms(dz, e_dz, gelu_y, e_gelu_y), {Dm, Dm});
    terms["dbase_params"] = std::move(e_dbase);
  }
  // As in s7_scan_error_bound: FLT_MIN admits float32 underflow (flush to zero, denormals).
  for (auto& [name, t] : terms)
    for (auto& v : t.values) v = bound_from_terms(v) + std::numeric_limits<float>::min();
  return terms;
}

}  // namespace scanlab::reference
