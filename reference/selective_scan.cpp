// The float64 oracle for selective_scan (forward and backward) and its float32 error bound.
//
// Semantics (kernels/problem/selective_scan.hpp), per batch entry b and channel d:
//   dt_t  = delta_t + delta_bias[d], then softplus(dt_t) = log1p(exp(dt_t)) if delta_softplus,
//           except that dt_t > 20 keeps dt_t (kSoftplusThreshold, as mamba_ssm does);
//   a_t,n = exp(dt_t·A[d,n]);
//   h_t,n = a_t,n·h_{t-1},n + dt_t·B_t,n·u_t,     h_{-1} = initial_state or 0;
//   y_t   = Σ_n C_t,n·h_t,n + D[d]·u_t;
//   out_t = y_t·act(z_t) with z, else y_t;        last_state = h_{L-1}.
// B_t,n and C_t,n are B[b,g,n,t] with g = d/(D/G) when per-step, B[d,n] when time-invariant.
#include "selective_scan.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "error_bound.hpp"

namespace scanlab::reference {
namespace {

// Flat C-order offsets. B and C go through one function so that grouped, ungrouped (a 3-D or
// a one-group 4-D tensor: the same memory) and time-invariant layouts share every loop below.
struct Offsets {
  const SelectiveScanProblem& p;
  std::int64_t bdl(std::int64_t b, std::int64_t d, std::int64_t t) const { return (b * p.dim + d) * p.seqlen + t; }
  std::int64_t state(std::int64_t b, std::int64_t d, std::int64_t n) const { return (b * p.dim + d) * p.dstate + n; }
  std::int64_t dn(std::int64_t d, std::int64_t n) const { return d * p.dstate + n; }
  std::int64_t bc(bool per_step, std::int64_t b, std::int64_t d, std::int64_t n, std::int64_t t) const {
    if (!per_step) return dn(d, n);
    return ((b * p.groups + p.group_of_channel(d)) * p.dstate + n) * p.seqlen + t;
  }
};

// Every input and cotangent the problem names must be present with the descriptor's shape; a
// one-group per-step B or C may also come 4-D, (batch, 1, dstate, seqlen): the same memory.
void check_inputs(const SelectiveScanProblem& p, const TensorMap& inputs) {
  for (const auto& spec : p.tensors()) {
    if (spec.role != TensorRole::input && spec.role != TensorRole::grad_input) continue;
    const Tensor& t = require(inputs, spec.name);
    const bool one_group_4d = (spec.name == "B" || spec.name == "C") && spec.shape.size() == 3 &&
                              t.shape == Shape{spec.shape[0], 1, spec.shape[1], spec.shape[2]};
    if (t.shape != spec.shape && !one_group_4d)
      throw std::invalid_argument("selective_scan oracle: tensor '" + spec.name + "' has shape " +
                                  shape_string(t.shape) + ", expected " + shape_string(spec.shape));
  }
}

double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

double softplus(double x) { return x > kSoftplusThreshold ? x : std::log1p(std::exp(x)); }
double softplus_slope(double x) { return x > kSoftplusThreshold ? 1.0 : sigmoid(x); }

// out = y·act(z): the activation and its derivative. The forms are chosen for float64
// accuracy at large |z| (no 1 + erf or 1 + tanh cancellation), which is what makes the oracle
// exact to the last bits there; the float32 bound below models the naive forms kernels use.
struct GateValue {
  double act;    // act(z)
  double slope;  // act'(z)
};

constexpr double kGeluTanhScale = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kGeluTanhCubic = 0.044715;
constexpr double kInvSqrt2Pi = 0.3989422804014327;     // 1/sqrt(2 pi)

GateValue gate(GateActivation activation, double z) {
  switch (activation) {
    case GateActivation::silu: {  // z·σ(z); derivative σ(z)·(1 + z·(1 − σ(z)))
      const double s = sigmoid(z);
      return {z * s, s * (1.0 + z * (1.0 - s))};
    }
    case GateActivation::identity:
      return {z, 1.0};
    case GateActivation::gelu_tanh: {
      // 0.5·z·(1 + tanh(w)) = z·σ(2w), w = sqrt(2/π)(z + 0.044715 z³);
      // derivative σ(2w) + z·2σ(2w)σ(−2w)·sqrt(2/π)(1 + 3·0.044715 z²).
      const double w = kGeluTanhScale * (z + kGeluTanhCubic * z * z * z);
      const double s = sigmoid(2 * w), s_neg = sigmoid(-2 * w);
      return {z * s, s + z * 2 * s * s_neg * kGeluTanhScale * (1 + 3 * kGeluTanhCubic * z * z)};
    }
    case GateActivation::gelu_erf: {
      // 0.5·z·(1 + erf(z/√2)) = 0.5·z·erfc(−z/√2); derivative 0.5·erfc(−z/√2) + z·φ(z).
      const double cdf = 0.5 * std::erfc(-z * M_SQRT1_2);
      return {z * cdf, cdf + z * kInvSqrt2Pi * std::exp(-0.5 * z * z)};
    }
  }
  throw std::logic_error("unknown gate activation");
}

}  // namespace

TensorMap selective_scan(const SelectiveScanProblem& p, const TensorMap& inputs) {
  p.validate();
  check_inputs(p, inputs);
  const Offsets at{p};
  const std::int64_t L = p.seqlen, N = p.dstate;
  const Tensor& u = require(inputs, "u");
  const Tensor& delta = require(inputs, "delta");
  const Tensor& A = require(inputs, "A");
  const Tensor& B = require(inputs, "B");
  const Tensor& C = require(inputs, "C");
  const Tensor* D = p.has_D ? &require(inputs, "D") : nullptr;
  const Tensor* z = p.has_z ? &require(inputs, "z") : nullptr;
  const Tensor* delta_bias = p.has_delta_bias ? &require(inputs, "delta_bias") : nullptr;
  const Tensor* initial_state = p.has_initial_state ? &require(inputs, "initial_state") : nullptr;
  const Tensor* dout = p.with_backward ? &require(inputs, "dout") : nullptr;
  const Tensor* dlast_state = p.has_dlast_state ? &require(inputs, "dlast_state") : nullptr;

  TensorMap result;
  Tensor& out = result["out"] = Tensor(u.shape);
  Tensor& last_state = result["last_state"] = Tensor(Shape{p.batch, p.dim, N});
  // Gradients have their input's shape (dB of a grouped B is (B,G,N,L), of a time-invariant B (D,N)).
  Tensor du, ddelta, dA, dB, dC, dD, dz, ddelta_bias, dinitial_state;
  if (p.with_backward) {
    du = Tensor(u.shape); ddelta = Tensor(delta.shape); dA = Tensor(A.shape);
    dB = Tensor(B.shape); dC = Tensor(C.shape);
    if (D) dD = Tensor(D->shape);
    if (z) dz = Tensor(z->shape);
    if (delta_bias) ddelta_bias = Tensor(delta_bias->shape);
    if (initial_state) dinitial_state = Tensor(initial_state->shape);
  }

  // Per (b, d) the forward keeps what the backward needs: dt's pre-softplus value, dt, y, and
  // every state h_{t-1} (states[t·N + n]; states[0..N) is h_{-1}).
  std::vector<double> dt_raw(L), dt(L), y(L), states((L + 1) * N);
  for (std::int64_t b = 0; b < p.batch; ++b) {
    for (std::int64_t d = 0; d < p.dim; ++d) {
      // ---- forward ----
      for (std::int64_t n = 0; n < N; ++n)
        states[n] = initial_state ? (*initial_state)[at.state(b, d, n)] : 0.0;
      for (std::int64_t t = 0; t < L; ++t) {
        const std::int64_t i = at.bdl(b, d, t);
        dt_raw[t] = delta[i] + (delta_bias ? (*delta_bias)[d] : 0.0);
        dt[t] = p.delta_softplus ? softplus(dt_raw[t]) : dt_raw[t];
        double y_t = 0;
        for (std::int64_t n = 0; n < N; ++n) {
          const double a = std::exp(dt[t] * A[at.dn(d, n)]);
          const double h = a * states[t * N + n] + dt[t] * B[at.bc(p.B_per_step, b, d, n, t)] * u[i];
          states[(t + 1) * N + n] = h;
          y_t += C[at.bc(p.C_per_step, b, d, n, t)] * h;
        }
        if (D) y_t += (*D)[d] * u[i];
        y[t] = y_t;
        out[i] = z ? y_t * gate(p.gate_activation, (*z)[i]).act : y_t;
      }
      for (std::int64_t n = 0; n < N; ++n) last_state[at.state(b, d, n)] = states[L * N + n];
      if (!p.with_backward) continue;

      // ---- backward: the reverse-time adjoint recurrence ----
      // The loss is ℒ = Σ_t dout_t·out_t + Σ_n dlast_state_n·h_{L-1},n. Let dy_t = ∂ℒ/∂y_t =
      // dout_t·act(z_t) (dout_t without z) and g_t,n = ∂ℒ/∂h_t,n, the total derivative through
      // every later step. Since h_{t+1} depends on h_t through a_{t+1}:
      //   g_{L-1} = dlast_state + C_{L-1}·dy_{L-1},   g_t = C_t·dy_t + a_{t+1}·g_{t+1}.
      // Each step's local derivatives of h_t = a_t·h_{t-1} + dt_t·B_t·u_t, with
      // ∂a_t/∂dt_t = A·a_t and ∂a_t/∂A = dt_t·a_t, then give
      //   dA    += g_t·h_{t-1}·a_t·dt_t          dB_t += g_t·dt_t·u_t
      //   ddt_t  = Σ_n g_t·(A·a_t·h_{t-1} + B_t·u_t)
      //   du_t   = Σ_n g_t·dt_t·B_t + D·dy_t     dC_t += dy_t·h_t      dD += dy_t·u_t
      //   dz_t   = dout_t·y_t·act'(z_t)
      //   ddelta_t = ddt_t·softplus'(dt_raw_t) (σ(dt_raw_t), or 1 above 20 or without softplus)
      //   ddelta_bias += ddelta_t                dinitial_state = a_0·g_0 (= ∂ℒ/∂h_{-1}).
      // The loop below keeps g in `adjoint`: on entry to step t it holds a_{t+1}·g_{t+1} (or
      // dlast_state), C_t·dy_t is added, and after the step's gradients it is multiplied by a_t.
      std::vector<double> adjoint(N);
      for (std::int64_t n = 0; n < N; ++n) adjoint[n] = dlast_state ? (*dlast_state)[at.state(b, d, n)] : 0.0;
      for (std::int64_t t = L - 1; t >= 0; --t) {
        const std::int64_t i = at.bdl(b, d, t);
        double dy = (*dout)[i];
        if (z) {
          const GateValue gv = gate(p.gate_activation, (*z)[i]);
          dy = (*dout)[i] * gv.act;
          dz[i] = (*dout)[i] * y[t] * gv.slope;
        }
        double du_t = D ? (*D)[d] * dy : 0.0;
        double ddt_t = 0;
        if (D) dD[d] += dy * u[i];
        for (std::int64_t n = 0; n < N; ++n) {
          const double A_dn = A[at.dn(d, n)];
          const double a = std::exp(dt[t] * A_dn);
          const double h_prev = states[t * N + n], h = states[(t + 1) * N + n];
          const std::int64_t ib = at.bc(p.B_per_step, b, d, n, t), ic = at.bc(p.C_per_step, b, d, n, t);
          const double g = adjoint[n] + C[ic] * dy;  // ∂ℒ/∂h_t,n
          dC[ic] += dy * h;
          dB[ib] += g * dt[t] * u[i];
          du_t += g * dt[t] * B[ib];
          ddt_t += g * (A_dn * a * h_prev + B[ib] * u[i]);
          dA[at.dn(d, n)] += g * h_prev * a * dt[t];
          adjoint[n] = a * g;  // ∂ℒ/∂h_{t-1},n through h_t
        }
        du[i] = du_t;
        ddelta[i] = ddt_t * (p.delta_softplus ? softplus_slope(dt_raw[t]) : 1.0);
        if (delta_bias) ddelta_bias[d] += ddelta[i];
      }
      if (initial_state)
        for (std::int64_t n = 0; n < N; ++n) dinitial_state[at.state(b, d, n)] = adjoint[n];
    }
  }

  if (p.with_backward) {
    result["du"] = std::move(du); result["ddelta"] = std::move(ddelta); result["dA"] = std::move(dA);
    result["dB"] = std::move(dB); result["dC"] = std::move(dC);
    if (D) result["dD"] = std::move(dD);
    if (z) result["dz"] = std::move(dz);
    if (delta_bias) result["ddelta_bias"] = std::move(ddelta_bias);
    if (initial_state) result["dinitial_state"] = std::move(dinitial_state);
  }
  return result;
}


// ============================================================================================
// The float32 error bound: a magnitude pass (DESIGN.md, "Tolerance").
//
// A float32 implementation sees float32-rounded inputs and rounds every operation. To first
// order in eps = 2^-24 its result differs from the exact one by a sum of terms, each a rounding
// (eps·|x| for an input, eps·|result| for an operation) times the result's sensitivity to it.
// The pass below runs the oracle's recurrence again, in float64, carrying for every quantity q:
//   value      the exact value, for the sensitivities (exp(q), σ'(q), ...);
//   magnitude  |q| with every sum replaced by the sum of the |terms|: it bounds every partial
//              result a float32 code may form on the way to q in any order (a chunked scan's
//              partial states, a tree reduction's partial sums), and it is what a sum's rounding
//              costs;
//   error      the first-order bound on |float32 q − exact q|, in units of eps.
// Rules, each result's own rounding counted once:
//   input x        error |x|                                   (x rounded to float32)
//   x·y            error err_x·|y| + |x|·err_y + |x·y|
//   x + y          error err_x + err_y + (|x| + |y|)
//   f(x)           error |f'(x)|·err_x + k·|f(x)|   k roundings: 1 for exp, log1p, tanh, erf;
//                                                   3 for σ(x) = 1/(1 + exp(−x)) (exp, add, divide)
//   Σ of K terms   error Σ err_k + (K − 1)·Σ|term_k|: in any summation order each term passes
//                  through at most K − 1 roundings of partial sums no larger than Σ|term_k|.
// (|x| above is the magnitude.) Every rounding also adds eps·2^-126 = 2^-150, the absolute error
// of gradual underflow, so results that underflow in float32 are covered and no bound is zero.
// A reassociated scan forms one more kind of partial result: a product of decays P = Π a over a
// chunk, tile or segment, applied to a carried state or adjoint (h_t = P·h_s + local). Where P
// underflows, each of its roundings is 2^-150 absolute, and the carry multiplies it by |h_s|,
// which the sequential association never does (its underflow errors are multiplied by decays
// only). So every step of the state and adjoint recurrences also adds 2^-150·peak, peak being the
// largest magnitude a carry into that step can have (the earlier states, the later adjoints); the
// recurrence then carries it through the later decays as P's own errors are.
// The bound is kBoundSafety·eps·error (reference/error_bound.hpp: the constant covers 2-ulp
// special functions, FMA contraction and what first order drops). Checked against a naive
// float32 implementation over the edge regimes (properties/reference/*_reference_test.cpp): the
// largest |error|/bound seen is about 0.12 (with or without FMA contraction), i.e. the
// first-order terms alone are nearly attained in short sequences, and the typical ratio is 0.004
// to 0.03 (long reductions and long decays add their worst cases linearly, errors add like a
// random walk).
//
// What the rules give for this op (per b, d; the sources DESIGN.md names):
//   dt      = softplus(delta + delta_bias): err = σ(raw)·(err_raw + 1) + |dt|   (exp, then log1p)
//   exp's argument dt·A: err_arg = |A|·err_dt + 3·|dt·A| (A's rounding, the product's, and one
//           more for kernels that evaluate exp2 of a log2(e)-scaled A); a = exp(dt·A) turns the
//           argument's absolute error into its own relative error: err_a = a·(err_arg + 1).
//   h_t     = a·h_{t-1} + dt·B·u: err_h,t = a·err_h,t-1 + |h_{t-1}|·err_a + |B·u|·err_dt
//           + 4·|dt·B·u| + ... : rounding errors of the state accumulate through the same
//           decays a as the state itself, so a long sequence with a ≈ 1 grows its bound linearly.
//   y_t     = Σ_n C·h + D·u, a reduction of N (+1) terms; out = y·act(z) adds act's sensitivity
//           |act'(z)|·|z| (z's rounding) and the activation's own roundings (σ for silu; tanh or
//           erf, and 1 + tanh or 1 + erf, whose magnitude 1 + |tanh| makes the cancellation at
//           very negative z visible: there the bound exceeds the value).
//   backward: dy = dout·act(z); g_t = g + C·dy and a·g (the adjoint runs the same decays
//           backwards); each gradient term is a product of those, and the reductions are over
//           N (+1 with D) for du, N for ddt, D/G channels for a per-step dB and dC, and
//           batch·seqlen for dA, dD, ddelta_bias and a time-invariant dB or dC. ddelta = ddt·σ(raw)
//           adds σ's sensitivity σ(1 − σ)·err_raw.
// ============================================================================================
namespace {

constexpr double kUnderflowTerm = 0x1p-126;  // 2^-150 in units of eps32

struct Tracked {
  double value = 0;      // exact
  double magnitude = 0;  // bounds every partial result on the way to the value
  double error = 0;      // first-order |float32 − exact| in units of eps32
};

Tracked exact(double x) { return {x, std::fabs(x), 0.0}; }
Tracked rounded_input(double x) { return {x, std::fabs(x), std::fabs(x) + kUnderflowTerm}; }
bool is_exact_zero(const Tracked& x) { return x.magnitude == 0 && x.error == 0; }

Tracked operator*(const Tracked& x, const Tracked& y) {
  const double m = x.magnitude * y.magnitude;
  return {x.value * y.value, m, x.error * y.magnitude + x.magnitude * y.error + m + kUnderflowTerm};
}

// x_1·x_2·…·x_k in whichever association a kernel takes. First-order terms and relative roundings
// do not depend on it (Σ err_i·Π_{j≠i}|x_j| + (k − 1)·|Π x|), but an underflow does: a partial
// product that underflows carries 2^-150 absolute, and the factors applied after it multiply that
// (((dout·act'(z))·y with dout·act'(z) subnormal and |y| large, where the sequential form charges
// 2^-150·|y| only if y comes last). So each of the k − 1 roundings is charged 2^-150 times the
// largest product of the factors that could follow it.
Tracked product_in_any_order(std::initializer_list<Tracked> factors) {
  double value = 1, magnitude = 1;
  for (const Tracked& x : factors) { value *= x.value; magnitude *= x.magnitude; }
  double error = 0;
  std::vector<double> magnitudes;
  for (const Tracked& x : factors) {
    double others = 1;
    for (const Tracked& y : factors)
      if (&y != &x) others *= y.magnitude;
    error += x.error * others;
    magnitudes.push_back(x.magnitude);
  }
  // The largest product of a proper subset of the factors (those applied after a partial).
  std::sort(magnitudes.begin(), magnitudes.end(), std::greater<>());
  double followers = 1, largest_followers = 1;  // the empty subset: the last rounding itself
  for (std::size_t i = 0; i + 1 < magnitudes.size(); ++i) {
    if (magnitudes[i] <= 1) break;  // a factor below 1 only shrinks what follows
    followers *= magnitudes[i];
    largest_followers = followers;
  }
  // k − 1 roundings, each |Π x| relative; the last one's underflow is 2^-150, the k − 2 partials'
  // 2^-150 times what follows them.
  const double roundings = double(factors.size() > 0 ? factors.size() - 1 : 0);
  const double partials = std::max(roundings - 1, 0.0);
  return {value, magnitude, error + roundings * magnitude + partials * kUnderflowTerm * largest_followers + kUnderflowTerm};
}

Tracked operator+(const Tracked& x, const Tracked& y) {
  if (is_exact_zero(x)) return y;  // 0 + y is y exactly
  if (is_exact_zero(y)) return x;
  const double m = x.magnitude + y.magnitude;
  return {x.value + y.value, m, x.error + y.error + m + kUnderflowTerm};
}

Tracked operator-(const Tracked& x) { return {-x.value, x.magnitude, x.error}; }

// f(x) with f'(x) = slope, computed in float32 with `roundings` roundings of the result.
Tracked apply(const Tracked& x, double f, double slope, double roundings = 1) {
  return {f, std::fabs(f), std::fabs(slope) * x.error + roundings * std::fabs(f) + kUnderflowTerm};
}

Tracked exp_of(const Tracked& x) {
  const double e = std::exp(x.value);
  return apply(x, e, e);
}

Tracked sigmoid_of(const Tracked& x) {
  const double s = sigmoid(x.value);
  return apply(x, s, s * (1 - s), 3);
}

Tracked softplus_of(const Tracked& raw) {
  if (raw.value > kSoftplusThreshold) return raw;
  const Tracked e = exp_of(raw);
  return apply(e, std::log1p(e.value), 1 / (1 + e.value));
}

Tracked softplus_slope_of(const Tracked& raw) {
  return raw.value > kSoftplusThreshold ? exact(1) : sigmoid_of(raw);
}

// A sum of terms in an unknown order (sequential, tree, chunked): see "Σ of K terms" above.
struct Reduction {
  double value = 0, magnitude = 0, error = 0;
  std::int64_t terms = 0;
  void add(const Tracked& x) {
    value += x.value; magnitude += x.magnitude; error += x.error; ++terms;
  }
  Tracked result() const {
    return {value, magnitude, error + double(std::max<std::int64_t>(terms - 1, 0)) * magnitude + kUnderflowTerm};
  }
};

struct TrackedGate {
  Tracked act, slope;
};

// The activation in the naive forms a float32 kernel writes (1 + tanh, 1 + erf, 1 − σ), so their
// cancellations are charged; constants are rounded to float32 like inputs.
TrackedGate gate_of(GateActivation activation, const Tracked& z) {
  const Tracked one = exact(1), half = exact(0.5);
  switch (activation) {
    case GateActivation::silu: {
      const Tracked s = sigmoid_of(z);
      return {z * s, s * (one + z * (one + -s))};
    }
    case GateActivation::identity:
      return {z, exact(1)};
    case GateActivation::gelu_tanh: {
      const Tracked scale = rounded_input(kGeluTanhScale), cubic = rounded_input(kGeluTanhCubic);
      const Tracked w = scale * (z + cubic * (z * z * z));
      const double th = std::tanh(w.value);
      const Tracked tanh_w = apply(w, th, 1 - th * th);
      const Tracked s = one + tanh_w;
      const Tracked dpoly = one + rounded_input(3 * kGeluTanhCubic) * (z * z);
      return {half * z * s, half * s + half * z * (one + -(tanh_w * tanh_w)) * scale * dpoly};
    }
    case GateActivation::gelu_erf: {
      const Tracked w = z * rounded_input(M_SQRT1_2);
      const Tracked erf_w = apply(w, std::erf(w.value), 2 / std::sqrt(M_PI) * std::exp(-w.value * w.value));
      const Tracked s = one + erf_w;
      const Tracked pdf = rounded_input(kInvSqrt2Pi) * exp_of(-(half * (z * z)));
      return {half * z * s, half * s + z * pdf};
    }
  }
  throw std::logic_error("unknown gate activation");
}

Tensor bound_tensor(const Shape& shape, const std::vector<double>& error_terms) {
  Tensor t(shape);
  for (std::int64_t i = 0; i < t.numel(); ++i) t[i] = bound_from_terms(error_terms[std::size_t(i)]);
  return t;
}

Tensor bound_tensor(const Shape& shape, const std::vector<Reduction>& sums) {
  Tensor t(shape);
  for (std::int64_t i = 0; i < t.numel(); ++i) t[i] = bound_from_terms(sums[std::size_t(i)].result().error);
  return t;
}

}  // namespace

TensorMap selective_scan_error_bound(const SelectiveScanProblem& p, const TensorMap& inputs) {
  p.validate();
  check_inputs(p, inputs);
  const Offsets at{p};
  const std::int64_t L = p.seqlen, N = p.dstate;
  const Tensor& u = require(inputs, "u");
  const Tensor& delta = require(inputs, "delta");
  const Tensor& A = require(inputs, "A");
  const Tensor& B = require(inputs, "B");
  const Tensor& C = require(inputs, "C");
  const Tensor* D = p.has_D ? &require(inputs, "D") : nullptr;
  const Tensor* z = p.has_z ? &require(inputs, "z") : nullptr;
  const Tensor* delta_bias = p.has_delta_bias ? &require(inputs, "delta_bias") : nullptr;
  const Tensor* initial_state = p.has_initial_state ? &require(inputs, "initial_state") : nullptr;
  const Tensor* dout = p.with_backward ? &require(inputs, "dout") : nullptr;
  const Tensor* dlast_state = p.has_dlast_state ? &require(inputs, "dlast_state") : nullptr;

  const auto size = [](const Tensor* t) { return t ? std::size_t(t->numel()) : std::size_t(0); };
  std::vector<double> out_err(size(&u)), last_state_err(std::size_t(p.batch * p.dim * N));
  const std::size_t backward_bdl = p.with_backward ? size(&u) : 0;
  std::vector<double> du_err(backward_bdl), ddelta_err(backward_bdl), dz_err(z ? backward_bdl : 0);
  std::vector<double> dinitial_state_err(p.with_backward ? size(initial_state) : 0);
  std::vector<Reduction> dA_sum(p.with_backward ? size(&A) : 0), dB_sum(p.with_backward ? size(&B) : 0),
      dC_sum(p.with_backward ? size(&C) : 0), dD_sum(p.with_backward ? size(D) : 0),
      ddelta_bias_sum(p.with_backward ? size(delta_bias) : 0);

  std::vector<Tracked> dt_raw(L), dt(L), y(L), decay(L * N), states((L + 1) * N), adjoint(N);
  std::vector<double> carry_peak(N);  // the largest carry into a step: see "A reassociated scan" above
  for (std::int64_t b = 0; b < p.batch; ++b) {
    for (std::int64_t d = 0; d < p.dim; ++d) {
      // ---- forward ----
      for (std::int64_t n = 0; n < N; ++n) {
        states[n] = initial_state ? rounded_input((*initial_state)[at.state(b, d, n)]) : exact(0);
        carry_peak[std::size_t(n)] = states[n].magnitude;
      }
      for (std::int64_t t = 0; t < L; ++t) {
        const std::int64_t i = at.bdl(b, d, t);
        const Tracked u_t = rounded_input(u[i]);
        dt_raw[t] = rounded_input(delta[i]);
        if (delta_bias) dt_raw[t] = dt_raw[t] + rounded_input((*delta_bias)[d]);
        dt[t] = p.delta_softplus ? softplus_of(dt_raw[t]) : dt_raw[t];
        Reduction y_sum;
        for (std::int64_t n = 0; n < N; ++n) {
          Tracked argument = dt[t] * rounded_input(A[at.dn(d, n)]);
          argument.error += argument.magnitude;  // exp2 of a log2(e)-scaled argument
          const Tracked a = decay[t * N + n] = exp_of(argument);
          Tracked& h = states[(t + 1) * N + n] =
              a * states[t * N + n] + product_in_any_order({dt[t], rounded_input(B[at.bc(p.B_per_step, b, d, n, t)]), u_t});
          h.error += kUnderflowTerm * carry_peak[std::size_t(n)];
          carry_peak[std::size_t(n)] = std::max(carry_peak[std::size_t(n)], h.magnitude);
          y_sum.add(rounded_input(C[at.bc(p.C_per_step, b, d, n, t)]) * h);
        }
        if (D) y_sum.add(rounded_input((*D)[d]) * u_t);
        y[t] = y_sum.result();
        out_err[std::size_t(i)] = z ? (y[t] * gate_of(p.gate_activation, rounded_input((*z)[i])).act).error : y[t].error;
      }
      for (std::int64_t n = 0; n < N; ++n) last_state_err[std::size_t(at.state(b, d, n))] = states[L * N + n].error;
      if (!p.with_backward) continue;

      // ---- backward: the oracle's adjoint recurrence, term by term ----
      for (std::int64_t n = 0; n < N; ++n) {
        adjoint[n] = dlast_state ? rounded_input((*dlast_state)[at.state(b, d, n)]) : exact(0);
        carry_peak[std::size_t(n)] = adjoint[n].magnitude;
      }
      for (std::int64_t t = L - 1; t >= 0; --t) {
        const std::int64_t i = at.bdl(b, d, t);
        const Tracked u_t = rounded_input(u[i]), dout_t = rounded_input((*dout)[i]);
        Tracked dy = dout_t;
        if (z) {
          const TrackedGate gv = gate_of(p.gate_activation, rounded_input((*z)[i]));
          dy = dout_t * gv.act;
          dz_err[std::size_t(i)] = product_in_any_order({dout_t, y[t], gv.slope}).error;
        }
        Reduction du_sum, ddt_sum;
        if (D) {
          du_sum.add(rounded_input((*D)[d]) * dy);
          dD_sum[std::size_t(d)].add(dy * u_t);
        }
        for (std::int64_t n = 0; n < N; ++n) {
          const Tracked A_dn = rounded_input(A[at.dn(d, n)]);
          const Tracked& a = decay[t * N + n];
          const Tracked& h_prev = states[t * N + n];
          const Tracked& h = states[(t + 1) * N + n];
          const std::int64_t ib = at.bc(p.B_per_step, b, d, n, t), ic = at.bc(p.C_per_step, b, d, n, t);
          const Tracked B_in = rounded_input(B[ib]);
          const Tracked g = adjoint[n] + rounded_input(C[ic]) * dy;
          dC_sum[std::size_t(ic)].add(dy * h);
          dB_sum[std::size_t(ib)].add(product_in_any_order({g, dt[t], u_t}));
          du_sum.add(product_in_any_order({g, dt[t], B_in}));
          ddt_sum.add(g * (product_in_any_order({A_dn, a, h_prev}) + B_in * u_t));
          dA_sum[std::size_t(at.dn(d, n))].add(product_in_any_order({g, h_prev, a, dt[t]}));
          carry_peak[std::size_t(n)] = std::max(carry_peak[std::size_t(n)], g.magnitude);
          adjoint[n] = a * g;
          adjoint[n].error += kUnderflowTerm * carry_peak[std::size_t(n)];
          carry_peak[std::size_t(n)] = std::max(carry_peak[std::size_t(n)], adjoint[n].magnitude);
        }
        du_err[std::size_t(i)] = du_sum.result().error;
        const Tracked ddt = ddt_sum.result();
        const Tracked ddelta = p.delta_softplus ? ddt * softplus_slope_of(dt_raw[t]) : ddt;
        ddelta_err[std::size_t(i)] = ddelta.error;
        if (delta_bias) ddelta_bias_sum[std::size_t(d)].add(ddelta);
      }
      if (initial_state)
        for (std::int64_t n = 0; n < N; ++n) dinitial_state_err[std::size_t(at.state(b, d, n))] = adjoint[n].error;
    }
  }

  TensorMap bounds;
  bounds["out"] = bound_tensor(u.shape, out_err);
  bounds["last_state"] = bound_tensor(Shape{p.batch, p.dim, N}, last_state_err);
  if (p.with_backward) {
    bounds["du"] = bound_tensor(u.shape, du_err);
    bounds["ddelta"] = bound_tensor(delta.shape, ddelta_err);
    bounds["dA"] = bound_tensor(A.shape, dA_sum);
    bounds["dB"] = bound_tensor(B.shape, dB_sum);
    bounds["dC"] = bound_tensor(C.shape, dC_sum);
    if (D) bounds["dD"] = bound_tensor(D->shape, dD_sum);
    if (z) bounds["dz"] = bound_tensor(z->shape, dz_err);
    if (delta_bias) bounds["ddelta_bias"] = bound_tensor(delta_bias->shape, ddelta_bias_sum);
    if (initial_state) bounds["dinitial_state"] = bound_tensor(initial_state->shape, dinitial_state_err);
  }
  return bounds;
}

}  // namespace scanlab::reference
