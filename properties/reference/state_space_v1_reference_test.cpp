// The state_space_v1 oracle (a layout adapter onto selective_scan's), checked independently of
// the adapter: against ejkernel's XLA state_space_v1 (the committed goldens), against a naive
// implementation written here directly in ejkernel's time-major layout, and against central
// finite differences of its own forward for every input and every act_fn. Its error bound is
// checked against that naive implementation run in float32, and by mutation.
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
#include "reference/state_space_v1.hpp"

namespace {

using namespace scanlab;
namespace ref = scanlab::reference;

const GateActivation kActivations[] = {GateActivation::silu, GateActivation::identity, GateActivation::gelu_tanh,
                                       GateActivation::gelu_erf};

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

double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : t.values) m = std::max(m, std::fabs(v));
  return m;
}

struct Case {
  StateSpaceV1Problem problem;
  TensorMap inputs;
  std::string label;
};

// dt is already post-softplus: positive. Regimes as DESIGN.md lists them; `fd` keeps them where
// central differences resolve every gradient, i.e. no gradient tensor lies wholly below the
// loss's rounding noise ε64·|loss|/h: a huge dt only with A near zero (else every exp(dt·A)
// underflows and dA vanishes), a tiny dt (≥ 1e-3) without initial_state and with D scaled down
// to dt's size (D is required here), so that the whole loss scales with dt.
Case random_case(std::mt19937_64& rng, std::int64_t max_seqlen, std::int64_t max_dstate, bool fd) {
  Case c;
  StateSpaceV1Problem& p = c.problem;
  p.batch = pick(rng, 1, 2);
  p.seqlen = coin(rng, 0.15) ? 1 : pick(rng, 1, max_seqlen);
  p.dim = pick(rng, 1, 4);
  p.dstate = coin(rng, 0.2) ? 1 : pick(rng, 1, max_dstate);
  p.has_gate = coin(rng, 0.7);
  p.act_fn = kActivations[pick(rng, 0, 3)];
  p.has_initial_state = coin(rng);
  p.has_conv_state = coin(rng, 0.3);
  p.d_conv = pick(rng, 1, 4);
  p.with_backward = true;
  p.has_dfinal_state = coin(rng, 0.7);
  const int dt_regime = int(pick(rng, 0, 3));  // typical, typical, tiny, huge
  int A_regime = int(pick(rng, 0, 3));         // typical, typical, near zero, very negative
  if (dt_regime == 3 && fd) A_regime = 2;
  if (dt_regime == 2 && fd) p.has_initial_state = false;
  const double gate_scale = coin(rng, 0.3) ? 8.0 : 1.0;

  const Shape bld{p.batch, p.seqlen, p.dim}, bln{p.batch, p.seqlen, p.dstate}, state{p.batch, p.dim, p.dstate};
  TensorMap& in = c.inputs;
  in["hidden_states"] = random_tensor(rng, bld);
  Tensor dt(bld);
  for (auto& v : dt.values) {
    switch (dt_regime) {
      case 2: v = fd ? std::pow(10.0, uniform(rng, -3, -2)) : std::pow(10.0, uniform(rng, -9, -3)); break;
      case 3: v = fd ? uniform(rng, 5, 28) : uniform(rng, 5, 60); break;
      default: v = std::log1p(std::exp(normal(rng) - 1.0));
    }
  }
  in["dt"] = dt;
  Tensor A(Shape{p.dim, p.dstate});
  for (auto& v : A.values) {
    switch (A_regime) {
      case 2: v = fd ? -std::pow(10.0, uniform(rng, -4, -1.5)) : (coin(rng, 0.1) ? 0.0 : -std::pow(10.0, uniform(rng, -7, -2))); break;
      case 3: v = fd ? -uniform(rng, 5, 40) : -uniform(rng, 20, 300); break;
      default: v = -std::exp(normal(rng, 0.7));
    }
  }
  in["A"] = A;
  in["B"] = random_tensor(rng, bln);
  in["C"] = random_tensor(rng, bln);
  in["D"] = random_tensor(rng, {p.dim}, fd && dt_regime == 2 ? 1e-3 : 1.0);
  if (p.has_gate) in["gate"] = random_tensor(rng, bld, gate_scale);
  if (p.has_initial_state) in["initial_state"] = random_tensor(rng, state);
  if (p.has_conv_state) in["conv_state"] = random_tensor(rng, {p.batch, p.dim, p.d_conv});
  in["dout"] = random_tensor(rng, bld);
  if (p.has_dfinal_state) in["dfinal_state"] = random_tensor(rng, state);
  char label[256];
  std::snprintf(label, sizeof label, "b=%lld L=%lld D=%lld N=%lld%s%s%s%s dt_regime=%d A_regime=%d gate_scale=%g",
                (long long)p.batch, (long long)p.seqlen, (long long)p.dim, (long long)p.dstate,
                p.has_gate ? (" gate:" + to_string(p.act_fn)).c_str() : "", p.has_initial_state ? " init" : "",
                p.has_conv_state ? " conv" : "", p.has_dfinal_state ? " dfinal" : "", dt_regime, A_regime, gate_scale);
  c.label = label;
  return c;
}

std::vector<std::string> input_names(const StateSpaceV1Problem& p) {
  std::vector<std::string> names;
  for (const auto& spec : p.tensors())
    if (spec.role == TensorRole::input) names.push_back(spec.name);
  return names;
}

std::vector<ref::GradientCheck> finite_difference_check(const Case& c, const TensorMap& analytic,
                                                        const std::vector<std::string>& names, std::uint64_t seed) {
  StateSpaceV1Problem forward_only = c.problem;
  forward_only.with_backward = forward_only.has_dfinal_state = false;
  std::map<std::string, Tensor> cotangents{{"out", c.inputs.at("dout")}};
  if (c.problem.has_dfinal_state) cotangents["final_state"] = c.inputs.at("dfinal_state");
  ref::FiniteDifferenceOptions options;
  options.tolerance = 1e-6;
  options.max_elements = 64;
  options.seed = seed;
  return ref::check_gradients([forward_only](const TensorMap& in) { return ref::state_space_v1(forward_only, in); },
                              c.inputs, cotangents, analytic, names, options);
}

// Central differences cannot resolve a gradient below their own rounding noise: the float64
// forward's loss is accurate to Σ |cot|·err64(output), err64 being the magnitude pass's bound at
// eps64 (bound·2^-29), and the difference quotient divides that by h ≥ relative_step. A check that
// misses by no more than this is "unresolved", not failed (selective_scan's test says more).
double finite_difference_noise(const StateSpaceV1Problem& p, const TensorMap& inputs) {
  const TensorMap bounds = ref::state_space_v1_error_bound(p, inputs);
  double loss_error = 0;
  const Tensor &dout = inputs.at("dout"), &out_bound = bounds.at("out");
  for (std::int64_t i = 0; i < dout.numel(); ++i) loss_error += std::fabs(dout[i]) * out_bound[i];
  if (p.has_dfinal_state) {
    const Tensor &dfinal = inputs.at("dfinal_state"), &final_bound = bounds.at("final_state");
    for (std::int64_t i = 0; i < dfinal.numel(); ++i) loss_error += std::fabs(dfinal[i]) * final_bound[i];
  }
  return 2 * loss_error * 0x1p-29 / ref::FiniteDifferenceOptions{}.relative_step;
}

// ------------------------------------------------------------------------------------------
// A naive implementation in ejkernel's own layout (x, dt, gate (b,L,D); B, C (b,L,N)), written
// apart from the oracle and its adapter, in scalar type T; textbook activation forms.

template <typename T>
void naive_act(GateActivation activation, T z, T& act, T& slope) {
  const T half = T(0.5), one = T(1);
  switch (activation) {
    case GateActivation::silu: {
      const T s = one / (one + std::exp(-z));
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
TensorMap naive_state_space_v1(const StateSpaceV1Problem& p, const TensorMap& in) {
  const std::int64_t Bn = p.batch, L = p.seqlen, Dn = p.dim, N = p.dstate;
  auto load = [&](const char* name) {
    const Tensor& t = in.at(name);
    return std::vector<T>(t.values.begin(), t.values.end());
  };
  const auto x = load("hidden_states"), dt = load("dt"), A = load("A"), Bm = load("B"), Cm = load("C"), Dv = load("D");
  const auto gate = p.has_gate ? load("gate") : std::vector<T>();
  const auto h0 = p.has_initial_state ? load("initial_state") : std::vector<T>();
  const auto dout = load("dout");
  const auto dfinal = p.has_dfinal_state ? load("dfinal_state") : std::vector<T>();
  auto xi = [&](std::int64_t b, std::int64_t t, std::int64_t d) { return (b * L + t) * Dn + d; };
  auto bi = [&](std::int64_t b, std::int64_t t, std::int64_t n) { return (b * L + t) * N + n; };
  std::vector<T> out(x.size()), final_state(std::size_t(Bn * Dn * N)), dx(x.size()), ddt(x.size()), dA(A.size()),
      dB(Bm.size()), dC(Cm.size()), dD(Dv.size()), dgate(gate.size()), dh0(h0.size());
  for (std::int64_t b = 0; b < Bn; ++b)
    for (std::int64_t d = 0; d < Dn; ++d) {
      std::vector<T> hs(static_cast<std::size_t>((L + 1) * N)), ys(static_cast<std::size_t>(L));
      for (std::int64_t n = 0; n < N; ++n) hs[n] = p.has_initial_state ? h0[(b * Dn + d) * N + n] : T(0);
      for (std::int64_t t = 0; t < L; ++t) {
        T y = Dv[d] * x[xi(b, t, d)];
        for (std::int64_t n = 0; n < N; ++n) {
          const T a = std::exp(A[d * N + n] * dt[xi(b, t, d)]);
          const T h = a * hs[t * N + n] + dt[xi(b, t, d)] * Bm[bi(b, t, n)] * x[xi(b, t, d)];
          hs[(t + 1) * N + n] = h;
          y = y + h * Cm[bi(b, t, n)];
        }
        ys[t] = y;
        T act = 1, slope = 0;
        if (p.has_gate) naive_act(p.act_fn, gate[xi(b, t, d)], act, slope);
        out[xi(b, t, d)] = p.has_gate ? y * act : y;
      }
      for (std::int64_t n = 0; n < N; ++n) final_state[(b * Dn + d) * N + n] = hs[L * N + n];
      std::vector<T> g(static_cast<std::size_t>(N));
      for (std::int64_t n = 0; n < N; ++n) g[n] = p.has_dfinal_state ? dfinal[(b * Dn + d) * N + n] : T(0);
      for (std::int64_t t = L - 1; t >= 0; --t) {
        const std::int64_t i = xi(b, t, d);
        T dy = dout[i];
        if (p.has_gate) {
          T act, slope;
          naive_act(p.act_fn, gate[i], act, slope);
          dy = dout[i] * act;
          dgate[i] = dout[i] * ys[t] * slope;
        }
        T dx_t = Dv[d] * dy, ddt_t = 0;
        dD[d] = dD[d] + dy * x[i];
        for (std::int64_t n = 0; n < N; ++n) {
          const T a = std::exp(A[d * N + n] * dt[i]);
          g[n] = g[n] + Cm[bi(b, t, n)] * dy;
          dC[bi(b, t, n)] = dC[bi(b, t, n)] + dy * hs[(t + 1) * N + n];
          dB[bi(b, t, n)] = dB[bi(b, t, n)] + g[n] * dt[i] * x[i];
          dx_t = dx_t + g[n] * dt[i] * Bm[bi(b, t, n)];
          ddt_t = ddt_t + g[n] * (A[d * N + n] * a * hs[t * N + n] + Bm[bi(b, t, n)] * x[i]);
          dA[d * N + n] = dA[d * N + n] + g[n] * hs[t * N + n] * a * dt[i];
          g[n] = a * g[n];
        }
        dx[i] = dx_t;
        ddt[i] = ddt_t;
      }
      if (p.has_initial_state)
        for (std::int64_t n = 0; n < N; ++n) dh0[(b * Dn + d) * N + n] = g[n];
    }
  auto as_tensor = [](const Shape& shape, const std::vector<T>& v) {
    return Tensor(shape, std::vector<double>(v.begin(), v.end()));
  };
  TensorMap r;
  r["out"] = as_tensor(in.at("hidden_states").shape, out);
  r["final_state"] = as_tensor({Bn, Dn, N}, final_state);
  if (p.has_conv_state) {
    const Tensor& conv = in.at("conv_state");
    r["conv_state"] = as_tensor(conv.shape, std::vector<T>(conv.values.begin(), conv.values.end()));
    r["dconv_state"] = Tensor(conv.shape);
  }
  r["dhidden_states"] = as_tensor(in.at("hidden_states").shape, dx);
  r["ddt"] = as_tensor(in.at("dt").shape, ddt);
  r["dA"] = as_tensor(in.at("A").shape, dA);
  r["dB"] = as_tensor(in.at("B").shape, dB);
  r["dC"] = as_tensor(in.at("C").shape, dC);
  r["dD"] = as_tensor(in.at("D").shape, dD);
  if (p.has_gate) r["dgate"] = as_tensor(in.at("gate").shape, dgate);
  if (p.has_initial_state) r["dinitial_state"] = as_tensor(in.at("initial_state").shape, dh0);
  return r;
}

double float32_ulp(double v) {
  const float f = std::fabs(static_cast<float>(v));
  return double(std::nextafter(f, std::numeric_limits<float>::infinity())) - double(f);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ==========================================================================================

// Both round in float64, so they agree to the magnitude pass's terms at eps64 (bound·2^-29) each.
TEST(ReferenceStateSpaceV1, AgreesWithANaiveImplementationInEjkernelsLayout) {
  std::mt19937_64 rng(test_seed(21));
  for (int trial = 0; trial < 60; ++trial) {
    const Case c = random_case(rng, 30, 8, false);
    const TensorMap r = ref::state_space_v1(c.problem, c.inputs);
    const TensorMap bounds = ref::state_space_v1_error_bound(c.problem, c.inputs);
    const TensorMap naive = naive_state_space_v1<double>(c.problem, c.inputs);
    ASSERT_EQ(r.size(), naive.size()) << c.label;
    for (const auto& [name, t] : r) {
      ASSERT_TRUE(naive.count(name)) << name;
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

TEST(ReferenceStateSpaceV1, ConvStatePassesThroughWithAZeroGradient) {
  std::mt19937_64 rng(test_seed(4));
  Case c = random_case(rng, 6, 3, false);
  c.problem.has_conv_state = true;
  c.problem.d_conv = 4;
  c.inputs["conv_state"] = random_tensor(rng, {c.problem.batch, c.problem.dim, 4});
  const TensorMap r = ref::state_space_v1(c.problem, c.inputs);
  EXPECT_EQ(r.at("conv_state").shape, c.inputs.at("conv_state").shape);
  EXPECT_EQ(r.at("conv_state").values, c.inputs.at("conv_state").values);
  EXPECT_EQ(r.at("dconv_state").shape, c.inputs.at("conv_state").shape);
  EXPECT_EQ(max_abs(r.at("dconv_state")), 0.0);
  // Without it, neither is returned; without a gate no dgate, without initial_state no dinitial_state.
  StateSpaceV1Problem bare = c.problem;
  bare.has_conv_state = bare.has_gate = bare.has_initial_state = false;
  TensorMap bare_inputs = c.inputs;
  for (const char* name : {"conv_state", "gate", "initial_state"}) bare_inputs.erase(name);
  const TensorMap b = ref::state_space_v1(bare, bare_inputs);
  for (const char* name : {"conv_state", "dconv_state", "dgate", "dinitial_state"}) EXPECT_EQ(b.count(name), 0u) << name;
}

TEST(ReferenceStateSpaceV1, GradientsMatchFiniteDifferencesForEveryActivation) {
  std::mt19937_64 rng(test_seed(505));
  std::map<std::string, int> coverage;
  int checked = 0, unresolved = 0;
  for (int trial = 0; trial < 40; ++trial) {
    Case c = random_case(rng, 8, 4, true);
    StateSpaceV1Problem& p = c.problem;
    if (trial < 8) {  // every act_fn, drawn shapes (trials 0-3) and L = N = 1 (trials 4-7)
      p.has_gate = true;
      p.act_fn = kActivations[trial % 4];
      if (!c.inputs.count("gate")) c.inputs["gate"] = random_tensor(rng, {p.batch, p.seqlen, p.dim});
      if (trial >= 4) p.seqlen = p.dstate = 1;
    }
    if (trial >= 4 && trial < 8) {
      // Rebuild the tensors for L = N = 1 with every optional input present.
      p.has_initial_state = p.has_conv_state = p.has_dfinal_state = true;
      p.d_conv = 3;
      const Shape bld{p.batch, 1, p.dim}, bln{p.batch, 1, 1}, state{p.batch, p.dim, 1};
      TensorMap& in = c.inputs;
      in["hidden_states"] = random_tensor(rng, bld);
      in["dt"] = random_tensor(rng, bld);
      for (auto& v : in["dt"].values) v = std::log1p(std::exp(v));
      in["A"] = random_tensor(rng, {p.dim, 1});
      for (auto& v : in["A"].values) v = -std::exp(v);
      in["B"] = random_tensor(rng, bln);
      in["C"] = random_tensor(rng, bln);
      in["gate"] = random_tensor(rng, bld, 2.0);
      in["initial_state"] = random_tensor(rng, state);
      in["conv_state"] = random_tensor(rng, {p.batch, p.dim, 3});
      in["dout"] = random_tensor(rng, bld);
      in["dfinal_state"] = random_tensor(rng, state);
      c.label += " (pinned L=1 N=1, every input)";
    }
    SCOPED_TRACE(c.label);
    const TensorMap analytic = ref::state_space_v1(p, c.inputs);
    const auto checks = finite_difference_check(c, analytic, input_names(p), 300 + trial);
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
    if (p.has_gate) coverage["act " + to_string(p.act_fn)]++;
    if (p.has_dfinal_state) coverage["through final_state"]++;
    if (p.seqlen == 1) coverage["seqlen 1"]++;
    if (p.dstate == 1) coverage["dstate 1"]++;
  }
  for (const char* what : {"dhidden_states", "dA", "dB", "dC", "dD", "ddt", "dgate", "dinitial_state", "dconv_state",
                           "act silu", "act identity", "act gelu_tanh", "act gelu_erf", "through final_state",
                           "seqlen 1", "dstate 1"})
    EXPECT_GT(coverage[what], 0) << "never checked: " << what;
  EXPECT_LE(unresolved, checked / 10) << "too many gradients below the finite-difference noise: the generator lost its teeth";
}

TEST(ReferenceStateSpaceV1, FiniteDifferenceCheckCatchesEveryGradientMutation) {
  std::mt19937_64 rng(test_seed(606));
  for (auto activation : kActivations) {
    StateSpaceV1Problem p;
    p.batch = 2; p.seqlen = 4; p.dim = 3; p.dstate = 2; p.d_conv = 2;
    p.has_gate = p.has_initial_state = p.has_conv_state = p.with_backward = p.has_dfinal_state = true;
    p.act_fn = activation;
    Case c;
    c.problem = p;
    const Shape bld{2, 4, 3}, bln{2, 4, 2}, state{2, 3, 2};
    c.inputs["hidden_states"] = random_tensor(rng, bld);
    c.inputs["dt"] = random_tensor(rng, bld);
    for (auto& v : c.inputs["dt"].values) v = std::log1p(std::exp(v));
    c.inputs["A"] = random_tensor(rng, {3, 2});
    for (auto& v : c.inputs["A"].values) v = -std::exp(v);
    c.inputs["B"] = random_tensor(rng, bln);
    c.inputs["C"] = random_tensor(rng, bln);
    c.inputs["D"] = random_tensor(rng, {3});
    c.inputs["gate"] = random_tensor(rng, bld);
    c.inputs["initial_state"] = random_tensor(rng, state);
    c.inputs["conv_state"] = random_tensor(rng, {2, 3, 2});
    c.inputs["dout"] = random_tensor(rng, bld);
    c.inputs["dfinal_state"] = random_tensor(rng, state);
    const TensorMap analytic = ref::state_space_v1(p, c.inputs);
    const auto names = input_names(p);
    ASSERT_EQ(names.size(), 9u);
    for (const auto& check : finite_difference_check(c, analytic, names, 5)) ASSERT_TRUE(check.pass) << check.input;
    for (const auto& name : names) {
      const Tensor& g = analytic.at("d" + name);
      ASSERT_LE(g.numel(), 64) << "every element must be probed for the mutation to be seen";
      // dconv_state is all zeros: perturb it by an absolute 1e-4.
      const double scale = name == "conv_state" ? 1.0 : max_abs(g);
      ASSERT_GT(scale, 0) << "d" << name;
      for (int k = 0; k < 3; ++k) {
        const std::int64_t i = pick(rng, 0, g.numel() - 1);
        TensorMap mutated = analytic;
        mutated.at("d" + name)[i] += (coin(rng) ? 1e-4 : -1e-4) * scale;
        const auto checks = finite_difference_check(c, mutated, {name}, 5);
        ASSERT_EQ(checks.size(), 1u);
        EXPECT_FALSE(checks[0].pass) << to_string(activation) << ": d" << name << "[" << i
                                     << "] perturbed by 1e-4 of max-abs passed: " << ref::describe(checks);
      }
    }
  }
}

TEST(ReferenceStateSpaceV1, Float32ImplementationStaysWithinTheBound) {
  std::mt19937_64 rng(test_seed(808));
  std::map<std::string, std::vector<double>> per_case_max;
  int cases = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t max_seqlen = trial % 4 == 0 ? 300 : (trial % 4 == 1 ? 64 : 12);
    const Case c = random_case(rng, max_seqlen, 16, false);
    const TensorMap exact = ref::state_space_v1(c.problem, c.inputs);
    const TensorMap bounds = ref::state_space_v1_error_bound(c.problem, c.inputs);
    ASSERT_EQ(bounds.size(), exact.size());
    const TensorMap f32 = naive_state_space_v1<float>(c.problem, c.inputs);
    const auto cmp = ref::compare_with_bounds(f32, exact, bounds);
    EXPECT_TRUE(ref::all_pass(cmp)) << c.label << "\n" << ref::describe(cmp);
    for (const auto& t : cmp) per_case_max[t.name].push_back(t.max_ratio);
    ++cases;
  }
  std::printf("  state_space_v1: float32 |error| / bound over %d cases (per case max, per tensor)\n", cases);
  std::printf("    %-16s %8s %10s %10s\n", "tensor", "cases", "median", "max");
  for (const auto& [name, ratios] : per_case_max) {
    const double mx = *std::max_element(ratios.begin(), ratios.end());
    std::printf("    %-16s %8zu %10.3g %10.3g\n", name.c_str(), ratios.size(), median(ratios), mx);
    if (name != "dconv_state" && name != "conv_state") {
      EXPECT_GT(mx, 5e-3) << name << ": bound looks far too loose";
    }
  }
}

TEST(ReferenceStateSpaceV1, BoundHasTeethAndToleratesUlpNoise) {
  std::mt19937_64 rng(test_seed(909));
  std::int64_t qualified = 0, total = 0;
  for (int trial = 0; trial < 30; ++trial) {
    Case c = random_case(rng, 20, 6, false);
    const TensorMap exact = ref::state_space_v1(c.problem, c.inputs);
    const TensorMap bounds = ref::state_space_v1_error_bound(c.problem, c.inputs);
    TensorMap noisy = exact;
    for (auto& [name, t] : noisy)
      for (auto& v : t.values) v += (coin(rng) ? 2.0 : -2.0) * float32_ulp(v);
    const auto noise_cmp = ref::compare_with_bounds(noisy, exact, bounds);
    EXPECT_TRUE(ref::all_pass(noise_cmp)) << c.label << ": ±2 ulp must pass\n" << ref::describe(noise_cmp);
    for (const auto& [name, bound] : bounds) {
      const Tensor& t = exact.at(name);
      for (std::int64_t i = 0; i < t.numel(); ++i) {
        ++total;
        if (t[i] == 0 || bound[i] >= 0x1p-13 * std::fabs(t[i])) continue;
        ++qualified;
        if (!coin(rng, 0.2)) continue;  // inject into a sample
        TensorMap mutated = exact;
        mutated.at(name)[i] *= 1 + 0x1p-12;
        bool caught = false;
        for (const auto& cmp : ref::compare_with_bounds(mutated, exact, bounds))
          if (cmp.name == name) caught = !cmp.pass() && cmp.worst_index == i;
        EXPECT_TRUE(caught) << c.label << ": 2^-12 injected into " << name << "[" << i << "] passed";
      }
    }
  }
  EXPECT_GT(double(qualified) / double(total), 0.5);
}

// ==========================================================================================
// Goldens: ejkernel's XLA state_space_v1 in float64, gradients by jax.vjp (scripts/goldens/).

std::filesystem::path goldens_root() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("SCANLAB_SOURCE_DIR")) return fs::path(env) / "reference" / "goldens";
#ifdef SCANLAB_SOURCE_DIR
  if (fs::is_directory(fs::path(SCANLAB_SOURCE_DIR) / "reference" / "goldens"))
    return fs::path(SCANLAB_SOURCE_DIR) / "reference" / "goldens";
#endif
  for (fs::path dir = fs::current_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_directory(dir / "reference" / "goldens")) return dir / "reference" / "goldens";
    if (dir == dir.root_path()) break;
  }
  return {};
}

TEST(ReferenceStateSpaceV1, MatchesEjkernelGoldens) {
  std::vector<std::filesystem::path> dirs;
  const auto root = goldens_root() / "state_space_v1";
  if (!goldens_root().empty() && std::filesystem::is_directory(root))
    for (const auto& entry : std::filesystem::directory_iterator(root))
      if (entry.is_directory()) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  ASSERT_FALSE(dirs.empty()) << "no golden cases under " << root << " (set SCANLAB_SOURCE_DIR to the checkout)";
  double worst = 0;
  std::map<std::string, int> coverage;
  for (const auto& dir : dirs) {
    SCOPED_TRACE(dir.string());
    const io::Case c = io::read_case(dir.string());
    ASSERT_EQ(c.op, "state_space_v1");
    const StateSpaceV1Problem p = StateSpaceV1Problem::from_case(c.tensors, c.options);
    ASSERT_TRUE(p.with_backward) << "a golden without dout checks no gradient";
    const TensorMap got = ref::state_space_v1(p, c.tensors);
    const TensorMap expected = io::read_tensors((dir / "expected").string());
    for (const auto& [name, t] : got) EXPECT_TRUE(expected.count(name)) << name << " is returned but not in the golden";
    for (const auto& [name, e] : expected) {
      ASSERT_TRUE(got.count(name)) << name << " is in the golden but not returned";
      const Tensor& g = got.at(name);
      ASSERT_EQ(g.shape, e.shape) << name;
      const double scale = max_abs(e);
      double err = 0;
      for (std::int64_t i = 0; i < e.numel(); ++i) err = std::max(err, std::fabs(g[i] - e[i]));
      err = scale > 0 ? err / scale : err;
      worst = std::max(worst, err);
      EXPECT_LE(err, 1e-12) << name << ": max |oracle − golden| / max|golden|";
      ++coverage[name];
    }
    if (p.has_gate) coverage["act " + to_string(p.act_fn)]++;
  }
  for (const char* what : {"dgate", "dinitial_state", "dconv_state", "act silu", "act identity", "act gelu_tanh", "act gelu_erf"})
    EXPECT_GT(coverage[what], 0) << "no golden covers " << what;
  std::printf("  state_space_v1: %zu goldens, worst relative difference %.2g\n", dirs.size(), worst);
}

}  // namespace
