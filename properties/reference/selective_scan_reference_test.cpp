// The selective_scan oracle, checked independently of its own code: against mamba_ssm's
// selective_scan_ref (the committed goldens), against central finite differences of its own
// forward (every input, through last_state too), against closed forms and layout equivalences,
// and at the softplus threshold against the formula. Its float32 error bound is checked against
// a naive float32 re-implementation (written here, sequential loops in float) over the edge
// regimes of DESIGN.md: the bound must hold and must not be uselessly loose; and by mutation:
// a 2^-12 relative error fails, ±2 ulp of float32 passes, NaN never passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cli/io/case_dir.hpp"
#include "reference/error_bound.hpp"
#include "reference/finite_difference.hpp"
#include "reference/selective_scan.hpp"

namespace {

using namespace scanlab;
namespace ref = scanlab::reference;

// ------------------------------------------------------------------------------------------
// Generators: shapes and options drawn at random, values in the regimes DESIGN.md lists.

enum class DeltaRegime { typical, tiny, huge, near_threshold, mixed };
enum class ARegime { typical, near_zero, very_negative, mixed };

// Which values to draw. `edges`: the regimes of DESIGN.md at full strength. `finite_difference`:
// the same regimes, tamed where a central difference cannot resolve them: a gradient tensor
// whose every element is far below the loss's rounding noise (ε64·|loss|/h) cannot be checked
// to 1e-6. So a tiny dt comes without D and initial_state (the whole loss then scales with dt),
// a huge dt with A near zero (else every exp(dt·A) underflows and dA vanishes), and very
// negative A stays within |dt·A| of a few tens; softplus arguments stay ≥ 2h from the kink.
enum class Values { edges, finite_difference, typical };

struct CaseLimits {
  std::int64_t max_batch = 2, max_dim = 4, max_dstate = 4, max_seqlen = 8;
};

struct Case {
  SelectiveScanProblem problem;
  TensorMap inputs;
  std::string label;
};

// Each test draws from a fixed seed, so a run is reproducible; SCANLAB_REFERENCE_SEED=S mixes S
// into every seed to explore other cases (the failure message prints each case's label).
std::uint64_t test_seed(std::uint64_t fixed) {
  const char* env = std::getenv("SCANLAB_REFERENCE_SEED");
  return env ? fixed ^ (std::strtoull(env, nullptr, 10) * 0x9E3779B97F4A7C15ull) : fixed;
}

double uniform(std::mt19937_64& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
double normal(std::mt19937_64& rng, double sd = 1.0) { return std::normal_distribution<double>(0.0, sd)(rng); }
std::int64_t pick(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}
bool coin(std::mt19937_64& rng, double p = 0.5) { return uniform(rng, 0, 1) < p; }

Tensor random_tensor(std::mt19937_64& rng, const Shape& shape, double sd = 1.0) {
  Tensor t(shape);
  for (auto& v : t.values) v = normal(rng, sd);
  return t;
}

// dt before softplus (softplus on) or dt itself (off: kept positive, as dt is).
double draw_delta(std::mt19937_64& rng, DeltaRegime regime, bool softplus, bool fd) {
  switch (regime) {
    case DeltaRegime::typical: return softplus ? normal(rng) - 1.0 : uniform(rng, 0.01, 0.6);
    case DeltaRegime::tiny:
      if (fd) return softplus ? uniform(rng, -7.0, -4.5) : std::pow(10.0, uniform(rng, -3.0, -2.0));
      return softplus ? uniform(rng, -20.0, -8.0) : std::pow(10.0, uniform(rng, -8.0, -3.0));
    case DeltaRegime::huge:
      if (fd) return softplus ? uniform(rng, 20.5, 28.0) : uniform(rng, 5.0, 28.0);
      return softplus ? uniform(rng, 20.5, 60.0) : uniform(rng, 5.0, 60.0);
    case DeltaRegime::near_threshold: return 20.0 + uniform(rng, -0.05, 0.05);  // also a huge dt without softplus
    case DeltaRegime::mixed: {
      static const DeltaRegime regimes[] = {DeltaRegime::typical, DeltaRegime::tiny, DeltaRegime::huge,
                                            DeltaRegime::near_threshold};
      return draw_delta(rng, regimes[pick(rng, 0, 3)], softplus, fd);
    }
  }
  return 0;
}

double draw_A(std::mt19937_64& rng, ARegime regime, bool fd) {
  switch (regime) {
    case ARegime::typical: return -std::exp(normal(rng, 0.7));
    case ARegime::near_zero:
      if (fd) return -std::pow(10.0, uniform(rng, -4.0, -1.5));
      return coin(rng, 0.1) ? 0.0 : -std::pow(10.0, uniform(rng, -7.0, -2.0));
    case ARegime::very_negative: return fd ? -uniform(rng, 5.0, 40.0) : -uniform(rng, 20.0, 300.0);
    case ARegime::mixed: {
      static const ARegime regimes[] = {ARegime::typical, ARegime::near_zero, ARegime::very_negative};
      return draw_A(rng, regimes[pick(rng, 0, 2)], fd);
    }
  }
  return 0;
}

SelectiveScanProblem random_problem(std::mt19937_64& rng, const CaseLimits& limits) {
  SelectiveScanProblem p;
  p.batch = pick(rng, 1, limits.max_batch);
  p.dstate = coin(rng, 0.2) ? 1 : pick(rng, 1, limits.max_dstate);
  p.seqlen = coin(rng, 0.15) ? 1 : pick(rng, 1, limits.max_seqlen);
  p.B_per_step = !coin(rng, 0.25);
  p.C_per_step = !coin(rng, 0.25);
  // groups: D = G·(channels per group); grouped only with a per-step B or C.
  const bool grouped = (p.B_per_step || p.C_per_step) && coin(rng, 0.35);
  p.groups = grouped ? pick(rng, 2, 3) : 1;
  p.dim = p.groups * pick(rng, 1, std::max<std::int64_t>(1, limits.max_dim / p.groups));
  p.has_D = coin(rng);
  p.has_z = coin(rng);
  p.has_delta_bias = coin(rng);
  p.delta_softplus = coin(rng);
  p.has_initial_state = coin(rng);
  p.with_backward = true;
  p.has_dlast_state = coin(rng, 0.7);
  static const GateActivation activations[] = {GateActivation::silu, GateActivation::identity,
                                               GateActivation::gelu_tanh, GateActivation::gelu_erf};
  p.gate_activation = activations[pick(rng, 0, 3)];
  return p;
}

// Inputs for a given problem, with the value regimes drawn. In finite_difference mode the problem
// may lose D and initial_state (see Values).
Case random_inputs(std::mt19937_64& rng, SelectiveScanProblem p, Values values = Values::edges) {
  static const DeltaRegime delta_regimes[] = {DeltaRegime::typical, DeltaRegime::typical, DeltaRegime::tiny,
                                              DeltaRegime::huge, DeltaRegime::near_threshold, DeltaRegime::mixed};
  static const ARegime A_regimes[] = {ARegime::typical, ARegime::typical, ARegime::near_zero,
                                      ARegime::very_negative, ARegime::mixed};
  const bool fd = values == Values::finite_difference;
  DeltaRegime delta_regime = values == Values::typical ? DeltaRegime::typical : delta_regimes[pick(rng, 0, 5)];
  ARegime A_regime = values == Values::typical ? ARegime::typical : A_regimes[pick(rng, 0, 4)];
  if (fd) {
    if (delta_regime == DeltaRegime::near_threshold || delta_regime == DeltaRegime::mixed) delta_regime = DeltaRegime::huge;
    if (delta_regime == DeltaRegime::huge) A_regime = ARegime::near_zero;
    if (delta_regime == DeltaRegime::tiny) p.has_D = p.has_initial_state = false;
  }
  const double gate_scale = values != Values::typical && coin(rng, 0.3) ? 8.0 : 1.0;  // large gates of either sign

  Case c;
  c.problem = p;
  const Shape bdl{p.batch, p.dim, p.seqlen};
  TensorMap& in = c.inputs;
  in["u"] = random_tensor(rng, bdl);
  Tensor delta(bdl);
  for (auto& v : delta.values) v = draw_delta(rng, delta_regime, p.delta_softplus, fd);
  Tensor A(Shape{p.dim, p.dstate});
  for (auto& v : A.values) v = draw_A(rng, A_regime, fd);
  in["A"] = A;
  in["B"] = random_tensor(rng, p.B_shape());
  in["C"] = random_tensor(rng, p.C_shape());
  if (p.has_D) in["D"] = random_tensor(rng, {p.dim});
  if (p.has_z) in["z"] = random_tensor(rng, bdl, gate_scale);
  if (p.has_delta_bias) {
    // delta_bias moves part of dt over; the sum keeps the drawn regime.
    Tensor bias = random_tensor(rng, {p.dim}, 0.05);
    for (std::int64_t i = 0; i < delta.numel(); ++i) delta[i] -= bias[(i / p.seqlen) % p.dim];
    in["delta_bias"] = bias;
  }
  in["delta"] = delta;
  if (p.has_initial_state) in["initial_state"] = random_tensor(rng, {p.batch, p.dim, p.dstate});
  if (p.with_backward) in["dout"] = random_tensor(rng, bdl);
  if (p.has_dlast_state) in["dlast_state"] = random_tensor(rng, {p.batch, p.dim, p.dstate});

  char label[320];
  std::snprintf(label, sizeof label,
                "B=%lld D=%lld N=%lld L=%lld G=%lld B:%s C:%s%s%s%s%s%s%s act=%s delta_regime=%d A_regime=%d gate_scale=%g",
                (long long)p.batch, (long long)p.dim, (long long)p.dstate, (long long)p.seqlen, (long long)p.groups,
                p.B_per_step ? "var" : "tiv", p.C_per_step ? "var" : "tiv", p.has_D ? " D" : "", p.has_z ? " z" : "",
                p.has_delta_bias ? " bias" : "", p.delta_softplus ? " softplus" : "", p.has_initial_state ? " init" : "",
                p.has_dlast_state ? " dlast" : "", to_string(p.gate_activation).c_str(), int(delta_regime), int(A_regime),
                gate_scale);
  c.label = label;
  return c;
}

Case random_case(std::mt19937_64& rng, const CaseLimits& limits) {
  return random_inputs(rng, random_problem(rng, limits));
}

std::vector<std::string> input_names(const SelectiveScanProblem& p) {
  std::vector<std::string> names;
  for (const auto& spec : p.tensors())
    if (spec.role == TensorRole::input) names.push_back(spec.name);
  return names;
}

std::map<std::string, Tensor> cotangents_of(const Case& c) {
  std::map<std::string, Tensor> cot{{"out", c.inputs.at("dout")}};
  if (c.problem.has_dlast_state) cot["last_state"] = c.inputs.at("dlast_state");
  return cot;
}

std::vector<ref::GradientCheck> finite_difference_check(const Case& c, const TensorMap& analytic,
                                                        const std::vector<std::string>& names, std::uint64_t seed) {
  SelectiveScanProblem forward_only = c.problem;
  forward_only.with_backward = false;
  forward_only.has_dlast_state = false;
  ref::FiniteDifferenceOptions options;
  options.tolerance = 1e-6;
  options.max_elements = 64;
  options.seed = seed;
  return ref::check_gradients([forward_only](const TensorMap& in) { return ref::selective_scan(forward_only, in); },
                              c.inputs, cotangents_of(c), analytic, names, options);
}

// Central differences cannot resolve a gradient below their own rounding noise. The float64
// forward computes the loss Σ cot·output to within Σ |cot|·err64(output), where err64 is the
// magnitude pass's first-order bound taken at eps64 instead of eps32 (bound·2^-29), and the
// difference quotient divides that by h ≥ relative_step. A check that misses by no more than this
// is "unresolved" (the whole gradient tensor is below what finite differences can see, e.g. dA
// when every exp(dt·A) is ~1e-6), not failed; the tests count these and require them to be rare.
double finite_difference_noise(const SelectiveScanProblem& p, const TensorMap& inputs) {
  const TensorMap bounds = ref::selective_scan_error_bound(p, inputs);
  double loss_error = 0;
  const Tensor &dout = inputs.at("dout"), &out_bound = bounds.at("out");
  for (std::int64_t i = 0; i < dout.numel(); ++i) loss_error += std::fabs(dout[i]) * out_bound[i];
  if (p.has_dlast_state) {
    const Tensor &dlast = inputs.at("dlast_state"), &last_bound = bounds.at("last_state");
    for (std::int64_t i = 0; i < dlast.numel(); ++i) loss_error += std::fabs(dlast[i]) * last_bound[i];
  }
  return 2 * loss_error * 0x1p-29 / ref::FiniteDifferenceOptions{}.relative_step;
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : t.values) m = std::max(m, std::fabs(v));
  return m;
}

// ------------------------------------------------------------------------------------------
// A naive implementation in scalar type T, written apart from the oracle: straightforward
// sequential loops, the textbook forms of the activations (1 + tanh, 1 + erf, 1 − σ, as float32
// kernels write them), every accumulator in T. With T = float it is the "correct float32
// implementation" the error bound must cover; with T = double a second float64 implementation.

template <typename T>
T naive_sigmoid(T x) { return T(1) / (T(1) + std::exp(-x)); }

template <typename T>
void naive_gate(GateActivation activation, T z, T& act, T& slope) {
  const T half = T(0.5), one = T(1);
  switch (activation) {
    case GateActivation::silu: {
      const T s = naive_sigmoid(z);
      act = z * s;
      slope = s * (one + z * (one - s));
      return;
    }
    case GateActivation::identity: act = z; slope = one; return;
    case GateActivation::gelu_tanh: {
      const T k = T(0.7978845608028654), c = T(0.044715);
      const T th = std::tanh(k * (z + c * z * z * z));
      act = half * z * (one + th);
      slope = half * (one + th) + half * z * (one - th * th) * k * (one + T(3) * c * z * z);
      return;
    }
    case GateActivation::gelu_erf: {
      const T e = std::erf(z * T(0.7071067811865476));
      act = half * z * (one + e);
      slope = half * (one + e) + z * T(0.3989422804014327) * std::exp(-half * z * z);
      return;
    }
  }
}

template <typename T>
TensorMap naive_selective_scan(const SelectiveScanProblem& p, const TensorMap& in) {
  const std::int64_t Bn = p.batch, Dn = p.dim, N = p.dstate, L = p.seqlen, G = p.groups;
  auto load = [&](const char* name) {
    const Tensor& t = in.at(name);
    return std::vector<T>(t.values.begin(), t.values.end());  // the rounding to T happens here
  };
  auto load_if = [&](bool present, const char* name) { return present ? load(name) : std::vector<T>(); };
  const auto u = load("u"), delta = load("delta"), A = load("A"), Bm = load("B"), Cm = load("C");
  const auto Dskip = load_if(p.has_D, "D"), z = load_if(p.has_z, "z"), bias = load_if(p.has_delta_bias, "delta_bias");
  const auto h0 = load_if(p.has_initial_state, "initial_state"), dout = load_if(p.with_backward, "dout");
  const auto dlast = load_if(p.has_dlast_state, "dlast_state");
  auto bc_index = [&](bool per_step, std::int64_t b, std::int64_t d, std::int64_t n, std::int64_t t) {
    return per_step ? ((b * G + d / (Dn / G)) * N + n) * L + t : d * N + n;
  };
  std::vector<T> out(u.size()), last(std::size_t(Bn * Dn * N));
  std::vector<T> du(u.size()), dd(u.size()), dA(A.size()), dB(Bm.size()), dC(Cm.size()), dDs(Dskip.size()),
      dz(z.size()), dbias(bias.size()), dh0(h0.size());
  for (std::int64_t b = 0; b < Bn; ++b)
    for (std::int64_t d = 0; d < Dn; ++d) {
      std::vector<T> hs(static_cast<std::size_t>((L + 1) * N)), dts(static_cast<std::size_t>(L)),
          raws(static_cast<std::size_t>(L)), ys(static_cast<std::size_t>(L));
      for (std::int64_t n = 0; n < N; ++n) hs[n] = p.has_initial_state ? h0[(b * Dn + d) * N + n] : T(0);
      for (std::int64_t t = 0; t < L; ++t) {
        const std::int64_t i = (b * Dn + d) * L + t;
        T raw = delta[i];
        if (p.has_delta_bias) raw = raw + bias[d];
        const T dt = p.delta_softplus && raw <= T(20) ? std::log1p(std::exp(raw)) : raw;
        raws[t] = raw; dts[t] = dt;
        T y = 0;
        for (std::int64_t n = 0; n < N; ++n) {
          const T a = std::exp(dt * A[d * N + n]);
          const T h = a * hs[t * N + n] + dt * Bm[bc_index(p.B_per_step, b, d, n, t)] * u[i];
          hs[(t + 1) * N + n] = h;
          y = y + Cm[bc_index(p.C_per_step, b, d, n, t)] * h;
        }
        if (p.has_D) y = y + Dskip[d] * u[i];
        ys[t] = y;
        T act = 1, slope = 0;
        if (p.has_z) naive_gate(p.gate_activation, z[i], act, slope);
        out[i] = p.has_z ? y * act : y;
      }
      for (std::int64_t n = 0; n < N; ++n) last[(b * Dn + d) * N + n] = hs[L * N + n];
      if (!p.with_backward) continue;
      std::vector<T> g(static_cast<std::size_t>(N));
      for (std::int64_t n = 0; n < N; ++n) g[n] = p.has_dlast_state ? dlast[(b * Dn + d) * N + n] : T(0);
      for (std::int64_t t = L - 1; t >= 0; --t) {
        const std::int64_t i = (b * Dn + d) * L + t;
        T dy = dout[i];
        if (p.has_z) {
          T act, slope;
          naive_gate(p.gate_activation, z[i], act, slope);
          dy = dout[i] * act;
          dz[i] = dout[i] * ys[t] * slope;
        }
        T du_t = p.has_D ? Dskip[d] * dy : T(0), ddt = 0;
        if (p.has_D) dDs[d] = dDs[d] + dy * u[i];
        for (std::int64_t n = 0; n < N; ++n) {
          const std::int64_t ib = bc_index(p.B_per_step, b, d, n, t), ic = bc_index(p.C_per_step, b, d, n, t);
          const T a = std::exp(dts[t] * A[d * N + n]);
          g[n] = g[n] + Cm[ic] * dy;
          dC[ic] = dC[ic] + dy * hs[(t + 1) * N + n];
          dB[ib] = dB[ib] + g[n] * dts[t] * u[i];
          du_t = du_t + g[n] * dts[t] * Bm[ib];
          ddt = ddt + g[n] * (A[d * N + n] * a * hs[t * N + n] + Bm[ib] * u[i]);
          dA[d * N + n] = dA[d * N + n] + g[n] * hs[t * N + n] * a * dts[t];
          g[n] = a * g[n];
        }
        du[i] = du_t;
        dd[i] = p.delta_softplus && raws[t] <= T(20) ? ddt * naive_sigmoid(raws[t]) : ddt;
        if (p.has_delta_bias) dbias[d] = dbias[d] + dd[i];
      }
      if (p.has_initial_state)
        for (std::int64_t n = 0; n < N; ++n) dh0[(b * Dn + d) * N + n] = g[n];
    }
  auto as_tensor = [](const Shape& shape, const std::vector<T>& v) {
    return Tensor(shape, std::vector<double>(v.begin(), v.end()));
  };
  TensorMap r;
  r["out"] = as_tensor(in.at("u").shape, out);
  r["last_state"] = as_tensor({Bn, Dn, N}, last);
  if (p.with_backward) {
    r["du"] = as_tensor(in.at("u").shape, du);
    r["ddelta"] = as_tensor(in.at("delta").shape, dd);
    r["dA"] = as_tensor(in.at("A").shape, dA);
    r["dB"] = as_tensor(in.at("B").shape, dB);
    r["dC"] = as_tensor(in.at("C").shape, dC);
    if (p.has_D) r["dD"] = as_tensor(in.at("D").shape, dDs);
    if (p.has_z) r["dz"] = as_tensor(in.at("z").shape, dz);
    if (p.has_delta_bias) r["ddelta_bias"] = as_tensor(in.at("delta_bias").shape, dbias);
    if (p.has_initial_state) r["dinitial_state"] = as_tensor(in.at("initial_state").shape, dh0);
  }
  return r;
}

// ------------------------------------------------------------------------------------------
// Bound helpers shared by the mutation tests.

double float32_ulp(double v) {
  const float f = std::fabs(static_cast<float>(v));
  return double(std::nextafter(f, std::numeric_limits<float>::infinity())) - double(f);
}

// Every element moved by ±2 ulp of float32 (random signs) must pass; a 2^-12 relative error
// injected into any one element whose bound is below 2^-13 of its value must fail, naming that
// tensor and element. Returns the fraction of elements that qualified for the injection.
double expect_bound_has_teeth(const TensorMap& exact, const TensorMap& bounds, std::mt19937_64& rng,
                              const std::string& context) {
  std::int64_t qualified = 0, total = 0;
  {
    TensorMap noisy = exact;
    for (auto& [name, t] : noisy)
      for (auto& v : t.values) v += (coin(rng) ? 2.0 : -2.0) * float32_ulp(v);
    const auto cmp = ref::compare_with_bounds(noisy, exact, bounds);
    EXPECT_TRUE(ref::all_pass(cmp)) << context << ": ±2 ulp of float32 must pass\n" << ref::describe(cmp);
  }
  for (const auto& [name, bound] : bounds) {
    const Tensor& t = exact.at(name);
    std::vector<std::int64_t> candidates;
    for (std::int64_t i = 0; i < t.numel(); ++i)
      if (t[i] != 0 && bound[i] < 0x1p-13 * std::fabs(t[i])) candidates.push_back(i);
    qualified += std::int64_t(candidates.size());
    total += t.numel();
    std::shuffle(candidates.begin(), candidates.end(), rng);
    if (candidates.size() > 8) candidates.resize(8);
    for (std::int64_t i : candidates) {
      TensorMap mutated = exact;
      mutated.at(name)[i] *= 1 + 0x1p-12;
      const auto cmp = ref::compare_with_bounds(mutated, exact, bounds);
      bool caught = false;
      for (const auto& c : cmp)
        if (c.name == name) caught = !c.pass() && c.worst_index == i;
      EXPECT_TRUE(caught) << context << ": 2^-12 injected into " << name << "[" << i << "] passed\n" << ref::describe(cmp);
    }
  }
  return total ? double(qualified) / double(total) : 0.0;
}

struct RatioStats {
  std::vector<double> per_case_max;  // max err/bound of the tensor in each case
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ==========================================================================================
// Semantics, checked against closed forms and layout equivalences (not against the oracle's code).

// Constant inputs: h_t = a·h_{t-1} + dt·B·u with a = exp(dt·A) has the closed form
// h_t = a^{t+1}·h_{-1} + dt·B·u·(1 − a^{t+1})/(1 − a).
TEST(ReferenceSelectiveScan, ForwardMatchesTheClosedFormOfAConstantRecurrence) {
  SelectiveScanProblem p;
  p.batch = 1; p.dim = 1; p.dstate = 2; p.seqlen = 9; p.has_initial_state = true; p.has_D = true;
  const double dt = 0.3, u = 1.7, A0 = -0.8, A1 = -0.05, B0 = 0.6, B1 = -1.1, C0 = 0.9, C1 = 0.4, D = 0.25,
               h0 = 0.5, h1 = -2.0;
  TensorMap in;
  in["u"] = Tensor({1, 1, 9}, std::vector<double>(9, u));
  in["delta"] = Tensor({1, 1, 9}, std::vector<double>(9, dt));
  in["A"] = Tensor({1, 2}, {A0, A1});
  Tensor B({1, 2, 9}), C({1, 2, 9});
  for (int t = 0; t < 9; ++t) { B.at({0, 0, t}) = B0; B.at({0, 1, t}) = B1; C.at({0, 0, t}) = C0; C.at({0, 1, t}) = C1; }
  in["B"] = B; in["C"] = C;
  in["D"] = Tensor({1}, {D});
  in["initial_state"] = Tensor({1, 1, 2}, {h0, h1});
  const TensorMap r = ref::selective_scan(p, in);
  auto closed = [&](double A, double Bv, double init, int t) {
    const double a = std::exp(dt * A), at = std::pow(a, t + 1);
    return at * init + dt * Bv * u * (1 - at) / (1 - a);
  };
  for (int t = 0; t < 9; ++t) {
    const double y = C0 * closed(A0, B0, h0, t) + C1 * closed(A1, B1, h1, t) + D * u;
    EXPECT_NEAR(r.at("out").at({0, 0, t}), y, 1e-13 * std::fabs(y) + 1e-15) << "t=" << t;
  }
  EXPECT_NEAR(r.at("last_state").at({0, 0, 0}), closed(A0, B0, h0, 8), 1e-14);
  EXPECT_NEAR(r.at("last_state").at({0, 0, 1}), closed(A1, B1, h1, 8), 1e-14);
}

// The gate multiplies the ungated output by act(z), with act from its textbook definition.
TEST(ReferenceSelectiveScan, GateMultipliesByTheActivation) {
  std::mt19937_64 rng(test_seed(7));
  CaseLimits limits;
  for (auto activation : {GateActivation::silu, GateActivation::identity, GateActivation::gelu_tanh, GateActivation::gelu_erf}) {
    Case c = random_case(rng, limits);
    c.problem.has_z = true;
    c.problem.gate_activation = activation;
    c.problem.with_backward = c.problem.has_dlast_state = false;
    c.inputs["z"] = random_tensor(rng, {c.problem.batch, c.problem.dim, c.problem.seqlen}, 3.0);
    const TensorMap gated = ref::selective_scan(c.problem, c.inputs);
    SelectiveScanProblem plain = c.problem;
    plain.has_z = false;
    TensorMap plain_inputs = c.inputs;
    plain_inputs.erase("z");
    const TensorMap ungated = ref::selective_scan(plain, plain_inputs);
    for (std::int64_t i = 0; i < gated.at("out").numel(); ++i) {
      const double zv = c.inputs.at("z")[i];
      double act = 0;
      switch (activation) {
        case GateActivation::silu: act = zv / (1 + std::exp(-zv)); break;
        case GateActivation::identity: act = zv; break;
        case GateActivation::gelu_tanh: act = 0.5 * zv * (1 + std::tanh(std::sqrt(2 / M_PI) * (zv + 0.044715 * zv * zv * zv))); break;
        case GateActivation::gelu_erf: act = 0.5 * zv * (1 + std::erf(zv / std::sqrt(2.0))); break;
      }
      EXPECT_NEAR(gated.at("out")[i], ungated.at("out")[i] * act, 1e-13 * (1 + std::fabs(ungated.at("out")[i] * zv)))
          << to_string(activation) << " z=" << zv;
    }
    EXPECT_EQ(gated.at("last_state").values, ungated.at("last_state").values);
  }
}

// A time-invariant B (D,N) is a per-step B with one group per channel whose entries repeat over
// batch and time; its gradient is the per-step gradient summed over batch and time. Same for C.
TEST(ReferenceSelectiveScan, TimeInvariantEqualsBroadcastPerStepWithAGroupPerChannel) {
  std::mt19937_64 rng(test_seed(11));
  for (int trial = 0; trial < 6; ++trial) {
    CaseLimits limits;
    Case c = random_case(rng, limits);
    SelectiveScanProblem& p = c.problem;
    p.groups = 1; p.B_per_step = trial % 3 != 0; p.C_per_step = trial % 3 == 1;
    if (p.B_per_step && p.C_per_step) p.C_per_step = false;
    c.inputs["B"] = random_tensor(rng, p.B_shape());
    c.inputs["C"] = random_tensor(rng, p.C_shape());
    SelectiveScanProblem q = p;
    q.groups = p.dim; q.B_per_step = q.C_per_step = true;
    TensorMap broadcast = c.inputs;
    for (const char* name : {"B", "C"}) {
      const bool per_step = std::string(name) == "B" ? p.B_per_step : p.C_per_step;
      const Tensor& src = c.inputs.at(name);
      Tensor wide(Shape{p.batch, p.dim, p.dstate, p.seqlen});  // 4-D even when dim (= groups) is 1
      for (std::int64_t b = 0; b < p.batch; ++b)
        for (std::int64_t d = 0; d < p.dim; ++d)
          for (std::int64_t n = 0; n < p.dstate; ++n)
            for (std::int64_t t = 0; t < p.seqlen; ++t)
              wide.at({b, d, n, t}) = per_step ? src.at({b, n, t}) : src.at({d, n});
      broadcast[name] = wide;
    }
    const TensorMap r = ref::selective_scan(p, c.inputs), w = ref::selective_scan(q, broadcast);
    for (const auto& [name, t] : r) {
      if (name == "dB" || name == "dC") continue;
      ASSERT_EQ(t.shape, w.at(name).shape) << name;
      for (std::int64_t i = 0; i < t.numel(); ++i)
        EXPECT_NEAR(t[i], w.at(name)[i], 1e-12 * (1 + max_abs(t))) << name << "[" << i << "] " << c.label;
    }
    for (const char* name : {"dB", "dC"}) {
      const bool per_step = std::string(name) == "dB" ? p.B_per_step : p.C_per_step;
      Tensor summed(r.at(name).shape);
      const Tensor& wide = w.at(name);
      for (std::int64_t b = 0; b < p.batch; ++b)
        for (std::int64_t d = 0; d < p.dim; ++d)
          for (std::int64_t n = 0; n < p.dstate; ++n)
            for (std::int64_t t = 0; t < p.seqlen; ++t)
              (per_step ? summed.at({b, n, t}) : summed.at({d, n})) += wide.at({b, d, n, t});
      for (std::int64_t i = 0; i < summed.numel(); ++i)
        EXPECT_NEAR(r.at(name)[i], summed[i], 1e-12 * (1 + max_abs(summed))) << name << "[" << i << "] " << c.label;
    }
  }
}

// Channel d reads group d/(D/G): changing one group's B or C changes exactly that group's channels.
TEST(ReferenceSelectiveScan, GroupedChannelsReadTheirOwnGroup) {
  std::mt19937_64 rng(test_seed(5));
  SelectiveScanProblem p;
  p.batch = 2; p.dim = 6; p.dstate = 3; p.seqlen = 5; p.groups = 3; p.has_D = true;
  TensorMap in;
  in["u"] = random_tensor(rng, {2, 6, 5});
  in["delta"] = random_tensor(rng, {2, 6, 5}, 0.1);
  for (auto& v : in["delta"].values) v = std::fabs(v) + 0.05;
  in["A"] = random_tensor(rng, {6, 3});
  for (auto& v : in["A"].values) v = -std::fabs(v);
  in["B"] = random_tensor(rng, p.B_shape());
  in["C"] = random_tensor(rng, p.C_shape());
  in["D"] = random_tensor(rng, {6});
  const TensorMap base = ref::selective_scan(p, in);
  for (const char* name : {"B", "C"})
    for (std::int64_t g = 0; g < 3; ++g) {
      TensorMap changed = in;
      for (std::int64_t n = 0; n < 3; ++n)
        for (std::int64_t t = 0; t < 5; ++t) changed[name].at({1, g, n, t}) += 0.5;
      const TensorMap r = ref::selective_scan(p, changed);
      for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t d = 0; d < 6; ++d) {
          bool differs = false;
          for (std::int64_t t = 0; t < 5; ++t) differs = differs || r.at("out").at({b, d, t}) != base.at("out").at({b, d, t});
          EXPECT_EQ(differs, b == 1 && d / 2 == g) << name << " group " << g << " channel " << d << " batch " << b;
        }
    }
}

// dt > 20 keeps dt; below, dt = log1p(exp(dt)). With A = 0, B = C = u = 1, N = L = 1 the scan
// returns dt itself (out = last_state = dt) and ddelta = softplus'(raw)·dout.
TEST(ReferenceSelectiveScan, SoftplusThresholdFollowsTheFormula) {
  for (double raw : {20.0 - 1e-3, 20.0 - 1e-9, 20.0, 20.0 + 1e-9, 20.0 + 1e-3, 19.0, 21.0, -30.0, 0.0}) {
    for (bool split : {false, true}) {  // raw given whole as delta, or as delta + delta_bias
      SelectiveScanProblem p;
      p.delta_softplus = true; p.with_backward = true; p.has_delta_bias = split;
      TensorMap in;
      in["u"] = Tensor({1, 1, 1}, {1.0});
      in["delta"] = Tensor({1, 1, 1}, {split ? raw - 7.5 : raw});
      if (split) in["delta_bias"] = Tensor({1}, {7.5});
      in["A"] = Tensor({1, 1}, {0.0});
      in["B"] = Tensor({1, 1, 1}, {1.0});
      in["C"] = Tensor({1, 1, 1}, {1.0});
      in["dout"] = Tensor({1, 1, 1}, {1.0});
      const TensorMap r = ref::selective_scan(p, in);
      const double x = split ? (raw - 7.5) + 7.5 : raw;
      // From the definition: log(1 + e^x), written as x + log(1 + e^-x) for x > 0 (no overflow),
      // and σ(x) = 1/(1 + e^-x) for its slope.
      const double expected_dt = x > 20 ? x : (x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)));
      const double expected_slope = x > 20 ? 1.0 : 1.0 / (1.0 + std::exp(-x));
      EXPECT_NEAR(r.at("last_state")[0], expected_dt, 4e-16 * std::max(1.0, std::fabs(expected_dt))) << "raw " << raw;
      EXPECT_NEAR(r.at("out")[0], expected_dt, 4e-16 * std::max(1.0, std::fabs(expected_dt))) << "raw " << raw;
      EXPECT_NEAR(r.at("ddelta")[0], expected_slope, 4e-16) << "raw " << raw;
      if (split) {
        EXPECT_NEAR(r.at("ddelta_bias")[0], expected_slope, 4e-16) << "raw " << raw;
      }
    }
  }
  // The kink itself: just above 20, dt is raw exactly; just below it is softplus (≈ raw + 2e-9).
  SelectiveScanProblem p;
  p.delta_softplus = true;
  p.batch = 2;
  TensorMap in;
  in["u"] = Tensor({2, 1, 1}, {1.0, 1.0});
  in["delta"] = Tensor({2, 1, 1}, {std::nextafter(20.0, 21.0), 20.0});
  in["A"] = Tensor({1, 1}, {0.0});
  in["B"] = Tensor({2, 1, 1}, {1.0, 1.0});
  in["C"] = Tensor({2, 1, 1}, {1.0, 1.0});
  const TensorMap r = ref::selective_scan(p, in);
  EXPECT_EQ(r.at("out")[0], std::nextafter(20.0, 21.0));
  EXPECT_GT(r.at("out")[1], 20.0 + 1e-9);  // softplus(20) = 20 + 2.06e-9: 20 itself is below the threshold
}

// ==========================================================================================
// Finite differences: every input, including initial_state and through last_state.

TEST(ReferenceSelectiveScan, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(test_seed(2024));
  CaseLimits limits;
  limits.max_dim = 6;
  std::map<std::string, int> coverage;
  int checked = 0, unresolved = 0;
  for (int trial = 0; trial < 48; ++trial) {
    SelectiveScanProblem p = random_problem(rng, limits);
    // Pin the edges into the first cases, then draw freely.
    if (trial == 0) p.seqlen = 1;
    if (trial == 1) p.dstate = 1;
    if (trial < 4) {  // every option on, with each B/C layout
      p.has_D = p.has_z = p.has_delta_bias = p.delta_softplus = p.has_initial_state = p.has_dlast_state = true;
      p.B_per_step = trial != 2;
      p.C_per_step = trial != 3;
      if (!p.B_per_step && !p.C_per_step) p.groups = 1;
      static const GateActivation activations[] = {GateActivation::silu, GateActivation::identity,
                                                   GateActivation::gelu_tanh, GateActivation::gelu_erf};
      p.gate_activation = activations[trial];
    }
    const Case c = random_inputs(rng, p, trial < 4 ? Values::typical : Values::finite_difference);
    p = c.problem;
    SCOPED_TRACE(c.label);
    const TensorMap analytic = ref::selective_scan(p, c.inputs);
    const auto checks = finite_difference_check(c, analytic, input_names(p), 100 + trial);
    const double noise = finite_difference_noise(p, c.inputs);
    for (const auto& check : checks) {
      ++checked;
      if (check.pass) {
        ++coverage["d" + check.input];
      } else if (std::fabs(check.fd - check.analytic) <= noise) {
        ++unresolved;  // the whole tensor lies below the finite-difference noise
      } else {
        ADD_FAILURE() << "d" << check.input << " (noise floor " << noise << ")\n" << ref::describe(checks);
      }
    }
    coverage[p.B_per_step ? (p.groups > 1 ? "B grouped" : "B per-step") : "B time-invariant"]++;
    coverage[p.C_per_step ? (p.groups > 1 ? "C grouped" : "C per-step") : "C time-invariant"]++;
    if (p.has_z) coverage["act " + to_string(p.gate_activation)]++;
    if (p.seqlen == 1) coverage["seqlen 1"]++;
    if (p.dstate == 1) coverage["dstate 1"]++;
    if (p.has_dlast_state) coverage["through last_state"]++;
    if (p.delta_softplus) coverage["softplus"]++;
  }
  for (const char* what : {"du", "dA", "dB", "dC", "ddelta", "dD", "dz", "ddelta_bias", "dinitial_state", "B grouped",
                           "B time-invariant", "C grouped", "C time-invariant", "act silu", "act identity",
                           "act gelu_tanh", "act gelu_erf", "seqlen 1", "dstate 1", "through last_state", "softplus"})
    EXPECT_GT(coverage[what], 0) << "never checked: " << what;
  EXPECT_LE(unresolved, checked / 10) << "too many gradients below the finite-difference noise: the generator lost its teeth";
}

// Both sides of the softplus threshold through finite differences, each point ≥ 2h from 20.
TEST(ReferenceSelectiveScan, GradientsMatchFiniteDifferencesOnBothSidesOfTheSoftplusThreshold) {
  std::mt19937_64 rng(test_seed(99));
  for (double centre : {19.5, 20.5, 35.0, -6.0}) {
    SelectiveScanProblem p;
    p.batch = 2; p.dim = 3; p.dstate = 2; p.seqlen = 4;
    p.delta_softplus = p.has_delta_bias = p.has_D = p.has_z = p.has_initial_state = p.has_dlast_state = true;
    // A tiny dt (softplus(−6) ≈ 2.5e-3): without D and initial_state the whole loss scales with dt,
    // so central differences resolve it (see Values).
    if (centre < 0) p.has_D = p.has_initial_state = false;
    p.with_backward = true;
    Case c;
    c.problem = p;
    const Shape bdl{2, 3, 4};
    c.inputs["u"] = random_tensor(rng, bdl);
    Tensor delta(bdl);
    for (auto& v : delta.values) v = centre + uniform(rng, -0.4, 0.4) - 0.1;
    c.inputs["delta"] = delta;
    c.inputs["delta_bias"] = Tensor({3}, {0.1, 0.1, 0.1});
    c.inputs["A"] = random_tensor(rng, {3, 2}, 0.02);  // dt ≈ 20: keep exp(dt·A) moderate
    for (auto& v : c.inputs["A"].values) v = -std::fabs(v);
    c.inputs["B"] = random_tensor(rng, p.B_shape());
    c.inputs["C"] = random_tensor(rng, p.C_shape());
    if (p.has_D) c.inputs["D"] = random_tensor(rng, {3});
    c.inputs["z"] = random_tensor(rng, bdl);
    if (p.has_initial_state) c.inputs["initial_state"] = random_tensor(rng, {2, 3, 2});
    c.inputs["dout"] = random_tensor(rng, bdl);
    c.inputs["dlast_state"] = random_tensor(rng, {2, 3, 2});
    const TensorMap analytic = ref::selective_scan(p, c.inputs);
    const auto checks = finite_difference_check(c, analytic, input_names(p), 7);
    for (const auto& check : checks) EXPECT_TRUE(check.pass) << "centre " << centre << "\n" << ref::describe(checks);
  }
}

// Perturbing any one gradient at one element by 1e-4 of its max-abs makes the checker fail.
TEST(ReferenceSelectiveScan, FiniteDifferenceCheckCatchesEveryGradientMutation) {
  std::mt19937_64 rng(test_seed(31));
  for (int layout = 0; layout < 3; ++layout) {  // per-step ungrouped, grouped, time-invariant
    SelectiveScanProblem p;
    p.batch = 2; p.dim = 4; p.dstate = 3; p.seqlen = 5;
    p.groups = layout == 1 ? 2 : 1;
    p.B_per_step = layout != 2; p.C_per_step = true;
    p.delta_softplus = p.has_delta_bias = p.has_D = p.has_z = p.has_initial_state = p.has_dlast_state = true;
    p.with_backward = true;
    Case c;
    c.problem = p;
    const Shape bdl{2, 4, 5};
    c.inputs["u"] = random_tensor(rng, bdl);
    c.inputs["delta"] = random_tensor(rng, bdl);
    c.inputs["delta_bias"] = random_tensor(rng, {4}, 0.3);
    c.inputs["A"] = random_tensor(rng, {4, 3});
    for (auto& v : c.inputs["A"].values) v = -std::exp(v);
    c.inputs["B"] = random_tensor(rng, p.B_shape());
    c.inputs["C"] = random_tensor(rng, p.C_shape());
    c.inputs["D"] = random_tensor(rng, {4});
    c.inputs["z"] = random_tensor(rng, bdl);
    c.inputs["initial_state"] = random_tensor(rng, {2, 4, 3});
    c.inputs["dout"] = random_tensor(rng, bdl);
    c.inputs["dlast_state"] = random_tensor(rng, {2, 4, 3});
    const TensorMap analytic = ref::selective_scan(p, c.inputs);
    const auto names = input_names(p);
    ASSERT_EQ(names.size(), 9u);
    for (const auto& check : finite_difference_check(c, analytic, names, 3)) ASSERT_TRUE(check.pass) << check.input;
    for (const auto& name : names) {
      const Tensor& g = analytic.at("d" + name);
      ASSERT_LE(g.numel(), 64) << "every element must be probed for the mutation to be seen";
      const double scale = max_abs(g);
      ASSERT_GT(scale, 0) << "d" << name;
      for (int k = 0; k < 3; ++k) {
        const std::int64_t i = pick(rng, 0, g.numel() - 1);
        TensorMap mutated = analytic;
        mutated.at("d" + name)[i] += (coin(rng) ? 1e-4 : -1e-4) * scale;
        const auto checks = finite_difference_check(c, mutated, {name}, 3);
        ASSERT_EQ(checks.size(), 1u);
        EXPECT_FALSE(checks[0].pass) << "d" << name << "[" << i << "] perturbed by 1e-4 of max-abs passed: "
                                     << ref::describe(checks);
      }
    }
  }
}

// ==========================================================================================
// The error bound.

// The naive implementation in float64 is a second implementation of the same semantics. Both
// round in float64, so they agree to the magnitude pass's terms at eps64 (bound·2^-29) each: a
// per-element tolerance that stays meaningful where a value is tiny or pure cancellation.
TEST(ReferenceSelectiveScan, NaiveFloat64ImplementationAgreesWithTheOracle) {
  std::mt19937_64 rng(test_seed(17));
  CaseLimits limits;
  limits.max_seqlen = 40; limits.max_dstate = 8; limits.max_dim = 6;
  for (int trial = 0; trial < 60; ++trial) {
    const Case c = random_case(rng, limits);
    const TensorMap r = ref::selective_scan(c.problem, c.inputs);
    const TensorMap bounds = ref::selective_scan_error_bound(c.problem, c.inputs);
    const TensorMap naive = naive_selective_scan<double>(c.problem, c.inputs);
    ASSERT_EQ(r.size(), naive.size()) << c.label;
    for (const auto& [name, t] : r) {
      ASSERT_EQ(t.shape, naive.at(name).shape) << name;
      double worst = 0;
      std::int64_t worst_index = 0;
      for (std::int64_t i = 0; i < t.numel(); ++i) {
        const double ratio = std::fabs(t[i] - naive.at(name)[i]) / (2 * bounds.at(name)[i] * 0x1p-29);
        if (!(ratio <= worst)) { worst = ratio; worst_index = i; }
      }
      EXPECT_LE(worst, 1.0) << name << "[" << worst_index << "]: oracle " << t[worst_index] << ", naive "
                            << naive.at(name)[worst_index] << "; " << c.label;
    }
  }
}

// The bound holds for a correct float32 implementation over the edge regimes, and is not
// uselessly loose: DESIGN.md asks for the largest |error|/bound to be reported.
TEST(ReferenceSelectiveScan, Float32ImplementationStaysWithinTheBound) {
  std::mt19937_64 rng(test_seed(4242));
  std::map<std::string, RatioStats> stats;
  int cases = 0;
  for (int trial = 0; trial < 400; ++trial) {
    CaseLimits limits;
    limits.max_dstate = 16;
    limits.max_dim = 4;
    limits.max_seqlen = trial % 5 == 0 ? 300 : (trial % 5 == 1 ? 64 : 12);
    Case c = random_case(rng, limits);
    const TensorMap exact = ref::selective_scan(c.problem, c.inputs);
    const TensorMap bounds = ref::selective_scan_error_bound(c.problem, c.inputs);
    const TensorMap f32 = naive_selective_scan<float>(c.problem, c.inputs);
    ASSERT_EQ(bounds.size(), exact.size());
    const auto cmp = ref::compare_with_bounds(f32, exact, bounds);
    EXPECT_TRUE(ref::all_pass(cmp)) << c.label << "\n" << ref::describe(cmp);
    for (const auto& t : cmp) stats[t.name].per_case_max.push_back(t.max_ratio);
    ++cases;
  }
  std::printf("  selective_scan: float32 |error| / bound over %d cases (per case max, per tensor)\n", cases);
  std::printf("    %-16s %8s %10s %10s\n", "tensor", "cases", "median", "max");
  double overall_max = 0;
  for (const auto& [name, s] : stats) {
    const double mx = *std::max_element(s.per_case_max.begin(), s.per_case_max.end());
    overall_max = std::max(overall_max, mx);
    std::printf("    %-16s %8zu %10.3g %10.3g\n", name.c_str(), s.per_case_max.size(), median(s.per_case_max), mx);
    // Not uselessly loose: somewhere in the sweep the float32 error reaches 1/200 of the bound.
    EXPECT_GT(mx, 5e-3) << name << ": bound looks far too loose";
  }
  EXPECT_LE(overall_max, 1.0);
}

// A 2^-12 relative error injected in one element fails; ±2 ulp of float32 everywhere passes.
TEST(ReferenceSelectiveScan, BoundHasTeethAndToleratesUlpNoise) {
  std::mt19937_64 rng(test_seed(77));
  double fraction_sum = 0;
  int cases = 0;
  for (int trial = 0; trial < 40; ++trial) {
    CaseLimits limits;
    limits.max_seqlen = 24; limits.max_dstate = 8;
    const Case c = random_case(rng, limits);
    const TensorMap exact = ref::selective_scan(c.problem, c.inputs);
    const TensorMap bounds = ref::selective_scan_error_bound(c.problem, c.inputs);
    fraction_sum += expect_bound_has_teeth(exact, bounds, rng, c.label);
    ++cases;
  }
  // Most elements are not cancellation noise, so the injection test is not vacuous.
  EXPECT_GT(fraction_sum / cases, 0.5) << "average fraction of elements whose bound is below 2^-13 of the value";
  std::printf("  selective_scan: on average %.0f%% of elements have a bound below 2^-13 of their value\n",
              100 * fraction_sum / cases);
}

TEST(ReferenceSelectiveScan, NonFiniteResultsNeverPass) {
  std::mt19937_64 rng(test_seed(3));
  const Case c = random_case(rng, CaseLimits{});
  const TensorMap exact = ref::selective_scan(c.problem, c.inputs);
  const TensorMap bounds = ref::selective_scan_error_bound(c.problem, c.inputs);
  for (const auto& [name, t] : exact)
    for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
      TensorMap got = exact;
      got.at(name)[t.numel() - 1] = bad;
      EXPECT_FALSE(ref::all_pass(ref::compare_with_bounds(got, exact, bounds))) << name << " with " << bad;
    }
}

// Where the exact value is nothing but cancellation, the bound says so (bound ≥ |value|) and a
// float32 result with no correct digits still passes, rightly; the mutation test skips such
// elements. Two cases: y = C0·h0 + C1·h1 with h0 = h1 and C1 = −C0·(1 + 1e-9); and a gelu gate
// at very negative z, where 1 + erf(z/√2) cancels.
TEST(ReferenceSelectiveScan, BoundSaysSoWhereTheValueIsPureCancellation) {
  SelectiveScanProblem p;
  p.batch = 1; p.dim = 1; p.dstate = 2; p.seqlen = 6;
  TensorMap in;
  std::mt19937_64 rng(test_seed(8));
  in["u"] = random_tensor(rng, {1, 1, 6});
  in["delta"] = Tensor({1, 1, 6}, std::vector<double>(6, 0.3));
  in["A"] = Tensor({1, 2}, {-0.5, -0.5});
  Tensor B({1, 2, 6}), C({1, 2, 6});
  for (int t = 0; t < 6; ++t) {
    B.at({0, 0, t}) = B.at({0, 1, t}) = normal(rng);
    C.at({0, 0, t}) = 1.0;
    C.at({0, 1, t}) = -(1.0 + 1e-9);
  }
  in["B"] = B; in["C"] = C;
  const TensorMap exact = ref::selective_scan(p, in);
  const TensorMap bounds = ref::selective_scan_error_bound(p, in);
  const TensorMap f32 = naive_selective_scan<float>(p, in);
  for (int t = 0; t < 6; ++t) {
    const double v = exact.at("out")[t];
    EXPECT_GE(bounds.at("out")[t], std::fabs(v)) << "t=" << t;
    EXPECT_GT(std::fabs(f32.at("out")[t] - v), 0.5 * std::fabs(v)) << "float32 keeps no digit here";
  }
  EXPECT_TRUE(ref::all_pass(ref::compare_with_bounds(f32, exact, bounds)));

  SelectiveScanProblem q;
  q.batch = 1; q.dim = 1; q.dstate = 1; q.seqlen = 3; q.has_z = true; q.gate_activation = GateActivation::gelu_erf;
  TensorMap gin;
  gin["u"] = Tensor({1, 1, 3}, {1.0, 2.0, -1.0});
  gin["delta"] = Tensor({1, 1, 3}, {0.5, 0.5, 0.5});
  gin["A"] = Tensor({1, 1}, {-1.0});
  gin["B"] = Tensor({1, 1, 3}, {1.0, 1.0, 1.0});
  gin["C"] = Tensor({1, 1, 3}, {1.0, 1.0, 1.0});
  gin["z"] = Tensor({1, 1, 3}, {-9.0, -12.0, -10.5});
  const TensorMap gexact = ref::selective_scan(q, gin);
  const TensorMap gbounds = ref::selective_scan_error_bound(q, gin);
  for (int t = 0; t < 3; ++t) EXPECT_GE(gbounds.at("out")[t], std::fabs(gexact.at("out")[t])) << "t=" << t;
  EXPECT_TRUE(ref::all_pass(ref::compare_with_bounds(naive_selective_scan<float>(q, gin), gexact, gbounds)));
}

// ==========================================================================================
// What is returned: out and last_state, and with dout a gradient "d" + name for exactly the
// inputs the case holds, each of its input's shape; the bound has the same names and shapes.

TEST(ReferenceSelectiveScan, ReturnsAGradientForExactlyTheInputsPresent) {
  std::mt19937_64 rng(test_seed(12));
  for (int trial = 0; trial < 40; ++trial) {
    Case c = random_case(rng, CaseLimits{});
    if (trial % 4 == 0) {  // forward only
      c.problem.with_backward = c.problem.has_dlast_state = false;
      c.inputs.erase("dout");
      c.inputs.erase("dlast_state");
    }
    const TensorMap r = ref::selective_scan(c.problem, c.inputs);
    const TensorMap bounds = ref::selective_scan_error_bound(c.problem, c.inputs);
    std::map<std::string, Shape> expected{{"out", c.inputs.at("u").shape},
                                          {"last_state", {c.problem.batch, c.problem.dim, c.problem.dstate}}};
    if (c.problem.with_backward)
      for (const char* name : {"u", "delta", "A", "B", "C", "D", "z", "delta_bias", "initial_state"})
        if (c.inputs.count(name)) expected[std::string("d") + name] = c.inputs.at(name).shape;
    std::map<std::string, Shape> got, bound_shapes;
    for (const auto& [name, t] : r) got[name] = t.shape;
    for (const auto& [name, t] : bounds) bound_shapes[name] = t.shape;
    EXPECT_EQ(got, expected) << c.label;
    EXPECT_EQ(bound_shapes, expected) << c.label;
  }
}

TEST(ReferenceSelectiveScan, RejectsInputsThatDisagreeWithTheProblem) {
  std::mt19937_64 rng(test_seed(13));
  const Case c = random_case(rng, CaseLimits{});
  TensorMap missing = c.inputs;
  missing.erase("B");
  EXPECT_THROW(ref::selective_scan(c.problem, missing), std::invalid_argument);
  TensorMap wrong = c.inputs;
  wrong["delta"] = Tensor({c.problem.batch, c.problem.dim, c.problem.seqlen + 1});
  try {
    ref::selective_scan(c.problem, wrong);
    ADD_FAILURE() << "a delta of the wrong shape was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'delta'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ref::selective_scan_error_bound(c.problem, wrong), std::invalid_argument);
  SelectiveScanProblem invalid = c.problem;
  invalid.groups = invalid.dim + 1;
  EXPECT_THROW(ref::selective_scan(invalid, c.inputs), ProblemError);
}

// ==========================================================================================
// Goldens: mamba_ssm's selective_scan_ref in float64 with autograd (scripts/goldens/).

std::filesystem::path goldens_root() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("SCANLAB_SOURCE_DIR")) return fs::path(env) / "reference" / "goldens";
#ifdef SCANLAB_SOURCE_DIR
  if (fs::is_directory(fs::path(SCANLAB_SOURCE_DIR) / "reference" / "goldens"))
    return fs::path(SCANLAB_SOURCE_DIR) / "reference" / "goldens";
#endif
  // A binary carried elsewhere (the GPU machine) runs from a checkout: look upwards.
  for (fs::path dir = fs::current_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_directory(dir / "reference" / "goldens")) return dir / "reference" / "goldens";
    if (dir == dir.root_path()) break;
  }
  return {};
}

std::vector<std::filesystem::path> golden_cases(const std::string& op) {
  std::vector<std::filesystem::path> dirs;
  const auto root = goldens_root() / op;
  if (!goldens_root().empty() && std::filesystem::is_directory(root))
    for (const auto& entry : std::filesystem::directory_iterator(root))
      if (entry.is_directory()) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

TEST(ReferenceSelectiveScan, MatchesMambaSsmGoldens) {
  const auto dirs = golden_cases("selective_scan");
  ASSERT_FALSE(dirs.empty()) << "no golden cases under " << (goldens_root() / "selective_scan")
                             << " (set SCANLAB_SOURCE_DIR to the checkout)";
  double worst = 0;
  for (const auto& dir : dirs) {
    SCOPED_TRACE(dir.string());
    const io::Case c = io::read_case(dir.string());
    ASSERT_EQ(c.op, "selective_scan");
    const SelectiveScanProblem p = SelectiveScanProblem::from_case(c.tensors, c.options);
    ASSERT_TRUE(p.with_backward) << "a golden without dout checks no gradient";
    const TensorMap got = ref::selective_scan(p, c.tensors);
    const TensorMap expected = io::read_tensors((dir / "expected").string());
    ASSERT_FALSE(expected.empty());
    for (const auto& [name, t] : got) EXPECT_TRUE(expected.count(name)) << name << " is returned but not in the golden";
    for (const auto& [name, e] : expected) {
      ASSERT_TRUE(got.count(name)) << name << " is in the golden but not returned";
      const Tensor& g = got.at(name);
      ASSERT_EQ(g.numel(), e.numel()) << name;
      const double scale = max_abs(e);
      double err = 0;
      for (std::int64_t i = 0; i < e.numel(); ++i) err = std::max(err, std::fabs(g[i] - e[i]));
      err = scale > 0 ? err / scale : err;
      worst = std::max(worst, err);
      EXPECT_LE(err, 1e-12) << name << ": max |oracle − golden| / max|golden|";
    }
  }
  std::printf("  selective_scan: %zu goldens, worst relative difference %.2g\n", dirs.size(), worst);
}

}  // namespace
