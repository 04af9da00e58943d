#include "s7_scan.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "error_bound.hpp"

namespace scanlab::reference {
namespace {

// C-order offsets of the s7_scan layouts.
struct Layout {
  std::int64_t H, N, L;
  explicit Layout(const S7ScanProblem& p) : H(p.dim), N(p.dstate), L(p.seqlen) {}
  // u, out, dout, du: (b, H, L)
  std::int64_t u(std::int64_t b, std::int64_t h, std::int64_t t) const { return (b * H + h) * L + t; }
  // A, bias, the states x_t and adjoints g_t: (b, N, L)
  std::int64_t a(std::int64_t b, std::int64_t n, std::int64_t t) const { return (b * N + n) * L + t; }
  // B: (b, N, H, L)
  std::int64_t B(std::int64_t b, std::int64_t n, std::int64_t h, std::int64_t t) const {
    return ((b * N + n) * H + h) * L + t;
  }
  // C: (b, H, N, L)
  std::int64_t C(std::int64_t b, std::int64_t h, std::int64_t n, std::int64_t t) const {
    return ((b * H + h) * N + n) * L + t;
  }
  // initial_state, last_state: (b, N)
  std::int64_t s(std::int64_t b, std::int64_t n) const { return b * N + n; }
};

void check_inputs(const S7ScanProblem& p, const TensorMap& tensors, const std::string& what) {
  p.validate();
  for (const auto& spec : p.tensors()) {
    if (spec.role != TensorRole::input && spec.role != TensorRole::grad_input) continue;
    const Tensor* t = find(tensors, spec.name);
    if (!t) throw std::invalid_argument("s7_scan: " + what + " lacks '" + spec.name + "'");
    if (t->shape != spec.shape)
      throw std::invalid_argument("s7_scan: " + what + " '" + spec.name + "' has shape " + shape_string(t->shape) +
                                  ", expected " + shape_string(spec.shape));
  }
}

double a_bar(double A) { return 1.0 - 1.0 / (A * A + 0.5); }
double a_bar_derivative(double A) {  // d A_bar / dA = 2A / (A² + 0.5)²
  const double q = A * A + 0.5;
  return 2.0 * A / (q * q);
}

// x_t for every t, (b, N, L): x_t = A_bar_t ⊙ x_{t−1} + Σ_h B[·,h,t]·u[h,t] + bias_t.
Tensor forward_states(const S7ScanProblem& p, const TensorMap& in) {
  const Layout at(p);
  const Tensor& u = require(in, "u");
  const Tensor& A = require(in, "A");
  const Tensor& B = require(in, "B");
  const Tensor* bias = p.has_bias ? &require(in, "bias") : nullptr;
  const Tensor* initial = p.has_initial_state ? &require(in, "initial_state") : nullptr;
  Tensor x({p.batch, p.dstate, p.seqlen});
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t n = 0; n < p.dstate; ++n) {
      double state = initial ? (*initial)[at.s(b, n)] : 0.0;
      for (std::int64_t t = 0; t < p.seqlen; ++t) {
        double Bu = bias ? (*bias)[at.a(b, n, t)] : 0.0;
        for (std::int64_t h = 0; h < p.dim; ++h) Bu += B[at.B(b, n, h, t)] * u[at.u(b, h, t)];
        state = a_bar(A[at.a(b, n, t)]) * state + Bu;
        x[at.a(b, n, t)] = state;
      }
    }
  return x;
}

// g_t = ∂loss/∂x_t for every t, (b, N, L), by the reverse-time adjoint recurrence
// g_t = Σ_h C[h,·,t]·dout[h,t] + A_bar_{t+1} ⊙ g_{t+1}, started from dlast_state (or 0).
// It only ever multiplies by A_bar, so it stays finite at A_bar = 0 (lrnnx divides by A_bar).
Tensor adjoint_states(const S7ScanProblem& p, const TensorMap& in) {
  const Layout at(p);
  const Tensor& A = require(in, "A");
  const Tensor& C = require(in, "C");
  const Tensor& dout = require(in, "dout");
  const Tensor* dlast = p.has_dlast_state ? &require(in, "dlast_state") : nullptr;
  Tensor g({p.batch, p.dstate, p.seqlen});
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t n = 0; n < p.dstate; ++n) {
      double carried = dlast ? (*dlast)[at.s(b, n)] : 0.0;  // A_bar_{t+1} ⊙ g_{t+1}
      for (std::int64_t t = p.seqlen - 1; t >= 0; --t) {
        double adjoint = carried;
        for (std::int64_t h = 0; h < p.dim; ++h) adjoint += C[at.C(b, h, n, t)] * dout[at.u(b, h, t)];
        g[at.a(b, n, t)] = adjoint;
        carried = a_bar(A[at.a(b, n, t)]) * adjoint;
      }
    }
  return g;
}

}  // namespace

TensorMap s7_scan(const S7ScanProblem& p, const TensorMap& inputs) {
  check_inputs(p, inputs, "inputs");
  const Layout at(p);
  const Tensor& u = require(inputs, "u");
  const Tensor& A = require(inputs, "A");
  const Tensor& B = require(inputs, "B");
  const Tensor& C = require(inputs, "C");
  const Tensor x = forward_states(p, inputs);

  TensorMap result;
  Tensor out({p.batch, p.dim, p.seqlen}), last_state({p.batch, p.dstate});
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t t = 0; t < p.seqlen; ++t)
      for (std::int64_t h = 0; h < p.dim; ++h) {
        double y = 0;
        for (std::int64_t n = 0; n < p.dstate; ++n) y += C[at.C(b, h, n, t)] * x[at.a(b, n, t)];
        out[at.u(b, h, t)] = y;
      }
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t n = 0; n < p.dstate; ++n) last_state[at.s(b, n)] = x[at.a(b, n, p.seqlen - 1)];
  result["out"] = std::move(out);
  result["last_state"] = std::move(last_state);
  if (!p.with_backward) return result;

  const Tensor& dout = require(inputs, "dout");
  const Tensor* initial = p.has_initial_state ? &require(inputs, "initial_state") : nullptr;
  const Tensor g = adjoint_states(p, inputs);
  Tensor du(u.shape), dA(A.shape), dB(B.shape), dC(C.shape), dbias(A.shape), dinitial({p.batch, p.dstate});
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t t = 0; t < p.seqlen; ++t) {
      for (std::int64_t h = 0; h < p.dim; ++h) {
        double du_ht = 0;
        for (std::int64_t n = 0; n < p.dstate; ++n) {
          const double g_nt = g[at.a(b, n, t)];
          dC[at.C(b, h, n, t)] = dout[at.u(b, h, t)] * x[at.a(b, n, t)];
          dB[at.B(b, n, h, t)] = g_nt * u[at.u(b, h, t)];
          du_ht += B[at.B(b, n, h, t)] * g_nt;
        }
        du[at.u(b, h, t)] = du_ht;
      }
      for (std::int64_t n = 0; n < p.dstate; ++n) {
        const double x_previous = t > 0 ? x[at.a(b, n, t - 1)] : (initial ? (*initial)[at.s(b, n)] : 0.0);
        const double g_nt = g[at.a(b, n, t)];
        dbias[at.a(b, n, t)] = g_nt;
        dA[at.a(b, n, t)] = g_nt * x_previous * a_bar_derivative(A[at.a(b, n, t)]);
      }
    }
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t n = 0; n < p.dstate; ++n)
      dinitial[at.s(b, n)] = a_bar(A[at.a(b, n, 0)]) * g[at.a(b, n, 0)];
  result["du"] = std::move(du);
  result["dA"] = std::move(dA);
  result["dB"] = std::move(dB);
  result["dC"] = std::move(dC);
  if (p.has_bias) result["dbias"] = std::move(dbias);
  if (p.has_initial_state) result["dinitial_state"] = std::move(dinitial);
  return result;
}

// The magnitude pass. Every quantity v the float32 computation forms carries a term e(v) with
// |v̂ − v| ≤ eps32·e(v) to first order; bound = kBoundSafety·eps32·e (error_bound.hpp). Rules:
//   * an input rounded to float32: e = |v| (from the caller's input_terms);
//   * one product or sum of computed operands: the operands' terms weighted by their
//     sensitivities, plus |result| for the rounding;
//   * a reduction of K products Σ_k a_k·b_k: Σ_k (|b_k|·e(a_k) + |a_k|·e(b_k)) + K·Σ_k |a_k·b_k|,
//     the worst case of any summation order (sequential, chunked, tree), as error_bound.hpp asks.
// Sensitivities use the exact values (a first-order perturbation propagates through the same
// linear map whatever order the kernel evaluates in); only the rounding terms of the time
// recurrence depend on the order, and those use magnitudes run through the recurrence on absolute
// values — M_t = |A_bar_t|·M_{t−1} + Σ_h|B||u| + |bias| — which bound every partial state a
// chunked or tree-shaped scan can form (a chunk-local state, a carry times a product of A_bars).
//
// A_bar = 1 − r, r = 1/q, q = A·A + 0.5:
//   e(A·A) = 2|A|·e(A) + A²,  e(q) = e(A·A) + q,  e(r) = e(q)·r² + r,  e(A_bar) = e(r) + |A_bar|.
//   Through A·A this carries A's own rounding with A_bar's sensitivity |dA_bar/dA|·|A| = 2A²/q².
//   At A_bar = 0 (A² = 1/2) e(A_bar) = 3.5 while A_bar = 0: the bound says A_bar̂ is noise there.
// s = dA_bar/dA = 2A·r·r:  e(s) = 2r²·e(A) + 4|A|·r·e(r) + 3|s|.
// Forward, per (b, n, t), with K_Bu = H (+1 with bias):
//   e(Bu) = Σ_h (|u|·e(B) + |B|·e(u)) + e(bias) + K_Bu·(Σ_h |B·u| + |bias|)
//   e(x_t) = |A_bar_t|·e(x_{t−1}) + e(A_bar_t)·|x_{t−1}| + e(Bu_t) + 2·M_t   (product and sum)
//   e(y[h,t]) = Σ_n (|x_t|·e(C) + |C|·e(x_t)) + N·Σ_n |C·x_t|
// Backward, with G_t = Σ_h|C·dout| + |A_bar_{t+1}|·G_{t+1} (+|dlast_state| at L−1) the magnitude of
// the adjoint g_t:
//   e(g_t) = Σ_h (|dout|·e(C) + |C|·e(dout)) + H·Σ_h |C·dout| + |A_bar_{t+1}|·e(g_{t+1})
//            + e(A_bar_{t+1})·|g_{t+1}| + e(dlast_state) + |A_bar_{t+1}|·G_{t+1} + G_t  (product, sum)
//   dbias = g: e(g);  dC = dout·x: |x|·e(dout) + |dout|·e(x) + |dC|;  dB = g·u likewise;
//   du = Σ_n B·g: Σ_n (|g|·e(B) + |B|·e(g)) + N·Σ_n |B·g|;
//   dA = (g_t·x_{t−1})·s: e(g·x) = |x_{t−1}|·e(g) + |g|·e(x_{t−1}) + |g·x_{t−1}|,
//        e(dA) = |s|·e(g·x) + |g·x|·e(s) + |dA|;
//   dinitial_state = A_bar_0·g_0: |A_bar_0|·e(g_0) + e(A_bar_0)·|g_0| + |dinitial_state|.
// The magnitude pass itself: `input_terms` holds, for every input and cotangent (u, A, B, C,
// bias, initial_state, dout, dlast_state), a per-element first-order error term in units of
// eps32 (|value| for an input only rounded to float32). Returns the same kind of terms, not yet
// scaled by bound_from_terms, for every tensor s7_scan() returns.
static TensorMap s7_scan_error_terms(const S7ScanProblem& p, const TensorMap& inputs, const TensorMap& input_terms) {
  check_inputs(p, inputs, "inputs");
  check_inputs(p, input_terms, "input_terms");
  const Layout at(p);
  const Tensor& u = require(inputs, "u");
  const Tensor& A = require(inputs, "A");
  const Tensor& B = require(inputs, "B");
  const Tensor& C = require(inputs, "C");
  const Tensor* bias = p.has_bias ? &require(inputs, "bias") : nullptr;
  const Tensor* initial = p.has_initial_state ? &require(inputs, "initial_state") : nullptr;
  const Tensor& e_u = require(input_terms, "u");
  const Tensor& e_A = require(input_terms, "A");
  const Tensor& e_B = require(input_terms, "B");
  const Tensor& e_C = require(input_terms, "C");
  const Tensor* e_bias = p.has_bias ? &require(input_terms, "bias") : nullptr;
  const Tensor* e_initial = p.has_initial_state ? &require(input_terms, "initial_state") : nullptr;
  using std::fabs;

  // A_bar, s = dA_bar/dA and their terms, per (b, n, t).
  Tensor abar(A.shape), e_abar(A.shape), slope(A.shape), e_slope(A.shape);
  for (std::int64_t i = 0; i < A.numel(); ++i) {
    const double a = A[i], q = a * a + 0.5, r = 1.0 / q;
    const double e_q = 2 * fabs(a) * e_A[i] + a * a + q;
    const double e_r = e_q * r * r + r;
    abar[i] = 1.0 - r;
    e_abar[i] = e_r + fabs(abar[i]);
    slope[i] = 2 * a * r * r;
    e_slope[i] = 2 * r * r * e_A[i] + 4 * fabs(a) * r * e_r + 3 * fabs(slope[i]);
  }

  // Forward: exact states x, their magnitudes M and terms e(x), per (b, n, t).
  const double K_Bu = double(p.dim) + (p.has_bias ? 1 : 0);
  Tensor x(A.shape), e_x(A.shape);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t n = 0; n < p.dstate; ++n) {
      double state = initial ? (*initial)[at.s(b, n)] : 0.0;
      double magnitude = fabs(state);
      double e_state = e_initial ? (*e_initial)[at.s(b, n)] : 0.0;
      for (std::int64_t t = 0; t < p.seqlen; ++t) {
        const std::int64_t i = at.a(b, n, t);
        double Bu = bias ? (*bias)[i] : 0.0, Bu_magnitude = bias ? fabs((*bias)[i]) : 0.0;
        double e_Bu = e_bias ? (*e_bias)[i] : 0.0;
        for (std::int64_t h = 0; h < p.dim; ++h) {
          const double Bv = B[at.B(b, n, h, t)], uv = u[at.u(b, h, t)];
          Bu += Bv * uv;
          Bu_magnitude += fabs(Bv * uv);
          e_Bu += fabs(uv) * e_B[at.B(b, n, h, t)] + fabs(Bv) * e_u[at.u(b, h, t)];
        }
        e_Bu += K_Bu * Bu_magnitude;
        const double next_magnitude = fabs(abar[i]) * magnitude + Bu_magnitude;
        e_state = fabs(abar[i]) * e_state + e_abar[i] * fabs(state) + e_Bu + 2 * next_magnitude;
        state = abar[i] * state + Bu;
        magnitude = next_magnitude;
        x[i] = state;
        e_x[i] = e_state;
      }
    }

  TensorMap terms;
  Tensor e_out({p.batch, p.dim, p.seqlen}), e_last({p.batch, p.dstate});
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t t = 0; t < p.seqlen; ++t)
      for (std::int64_t h = 0; h < p.dim; ++h) {
        double e = 0, magnitude = 0;
        for (std::int64_t n = 0; n < p.dstate; ++n) {
          const double Cv = C[at.C(b, h, n, t)], xv = x[at.a(b, n, t)];
          e += fabs(xv) * e_C[at.C(b, h, n, t)] + fabs(Cv) * e_x[at.a(b, n, t)];
          magnitude += fabs(Cv * xv);
        }
        e_out[at.u(b, h, t)] = e + double(p.dstate) * magnitude;
      }
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t n = 0; n < p.dstate; ++n) e_last[at.s(b, n)] = e_x[at.a(b, n, p.seqlen - 1)];
  terms["out"] = std::move(e_out);
  terms["last_state"] = std::move(e_last);
  if (!p.with_backward) return terms;

  // Backward: exact adjoints g, their terms e(g), per (b, n, t).
  const Tensor& dout = require(inputs, "dout");
  const Tensor& e_dout = require(input_terms, "dout");
  const Tensor* dlast = p.has_dlast_state ? &require(inputs, "dlast_state") : nullptr;
  const Tensor* e_dlast = p.has_dlast_state ? &require(input_terms, "dlast_state") : nullptr;
  Tensor g(A.shape), e_g(A.shape);
  Tensor e_dinitial({p.batch, p.dstate});
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t n = 0; n < p.dstate; ++n) {
      // What flows into step t from t+1: A_bar_{t+1}·g_{t+1}, its magnitude and its term
      // (which includes the product's rounding).
      double carried = dlast ? (*dlast)[at.s(b, n)] : 0.0;
      double carried_magnitude = fabs(carried);
      double e_carried = e_dlast ? (*e_dlast)[at.s(b, n)] : 0.0;
      for (std::int64_t t = p.seqlen - 1; t >= 0; --t) {
        const std::int64_t i = at.a(b, n, t);
        double adjoint = carried, Cd_magnitude = 0, e_Cd = 0;
        for (std::int64_t h = 0; h < p.dim; ++h) {
          const double Cv = C[at.C(b, h, n, t)], dv = dout[at.u(b, h, t)];
          adjoint += Cv * dv;
          Cd_magnitude += fabs(Cv * dv);
          e_Cd += fabs(dv) * e_C[at.C(b, h, n, t)] + fabs(Cv) * e_dout[at.u(b, h, t)];
        }
        const double magnitude = Cd_magnitude + carried_magnitude;
        g[i] = adjoint;
        e_g[i] = e_Cd + double(p.dim) * Cd_magnitude + e_carried + magnitude;  // + the sum's rounding
        carried = abar[i] * adjoint;
        carried_magnitude = fabs(abar[i]) * magnitude;
        e_carried = fabs(abar[i]) * e_g[i] + e_abar[i] * fabs(adjoint) + carried_magnitude;
      }
      e_dinitial[at.s(b, n)] = e_carried;
    }

  Tensor e_du(u.shape), e_dA(A.shape), e_dB(B.shape), e_dC(C.shape);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t t = 0; t < p.seqlen; ++t) {
      for (std::int64_t h = 0; h < p.dim; ++h) {
        const double uv = u[at.u(b, h, t)], dv = dout[at.u(b, h, t)];
        double e = 0, magnitude = 0;
        for (std::int64_t n = 0; n < p.dstate; ++n) {
          const std::int64_t i = at.a(b, n, t);
          const double Bv = B[at.B(b, n, h, t)];
          e_dC[at.C(b, h, n, t)] = fabs(x[i]) * e_dout[at.u(b, h, t)] + fabs(dv) * e_x[i] + fabs(dv * x[i]);
          e_dB[at.B(b, n, h, t)] = fabs(g[i]) * e_u[at.u(b, h, t)] + fabs(uv) * e_g[i] + fabs(g[i] * uv);
          e += fabs(g[i]) * e_B[at.B(b, n, h, t)] + fabs(Bv) * e_g[i];
          magnitude += fabs(Bv * g[i]);
        }
        e_du[at.u(b, h, t)] = e + double(p.dstate) * magnitude;
      }
      for (std::int64_t n = 0; n < p.dstate; ++n) {
        const std::int64_t i = at.a(b, n, t);
        const double x_previous = t > 0 ? x[at.a(b, n, t - 1)] : (initial ? (*initial)[at.s(b, n)] : 0.0);
        const double e_previous = t > 0 ? e_x[at.a(b, n, t - 1)] : (e_initial ? (*e_initial)[at.s(b, n)] : 0.0);
        const double dabar = g[i] * x_previous;
        const double e_dabar = fabs(x_previous) * e_g[i] + fabs(g[i]) * e_previous + fabs(dabar);
        e_dA[i] = fabs(slope[i]) * e_dabar + fabs(dabar) * e_slope[i] + fabs(dabar * slope[i]);
      }
    }
  terms["du"] = std::move(e_du);
  terms["dA"] = std::move(e_dA);
  terms["dB"] = std::move(e_dB);
  terms["dC"] = std::move(e_dC);
  if (p.has_bias) terms["dbias"] = std::move(e_g);
  if (p.has_initial_state) terms["dinitial_state"] = std::move(e_dinitial);
  return terms;
}

TensorMap s7_scan_error_bound(const S7ScanProblem& p, const TensorMap& inputs) {
  check_inputs(p, inputs, "inputs");
  // Every input (and cotangent) is only rounded to float32 on its way into the kernel.
  TensorMap input_terms;
  for (const auto& spec : p.tensors()) {
    if (spec.role != TensorRole::input && spec.role != TensorRole::grad_input) continue;
    Tensor magnitude = require(inputs, spec.name);
    for (auto& v : magnitude.values) v = std::fabs(v);
    input_terms[spec.name] = std::move(magnitude);
  }
  TensorMap bounds = s7_scan_error_terms(p, inputs, input_terms);
  // The first-order terms are relative; float32's underflow is absolute. FLT_MIN admits a result
  // flushed to zero (or a denormal) where the exact value is below float32's normal range.
  for (auto& [name, t] : bounds)
    for (auto& v : t.values) v = bound_from_terms(v) + std::numeric_limits<float>::min();
  return bounds;
}

}  // namespace scanlab::reference
