// The s7_scan oracle, checked three independent ways: against lrnnx's own s7_scan_ref (the
// committed goldens), against central finite differences of its own forward, and against closed
// forms where A_bar = 0. Its error bound is checked against a naive float32 re-implementation over
// the edge regimes (the bound must hold, and not be uselessly loose) and by mutation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cli/io/case_dir.hpp"
#include "reference/error_bound.hpp"
#include "reference/finite_difference.hpp"
#include "reference/s7_scan.hpp"

namespace {

using namespace scanlab;
namespace ref = scanlab::reference;

constexpr double kCritical = 0.70710678118654752440;  // |A| = 1/√2, where A_bar = 0

// ------------------------------------------------------------------------------------------
// Generators: A in the regimes that stress S7 (A_bar = 1 − 1/(A² + 0.5)).
enum class ARegime { normal, critical, large, small, mixed };
const char* regime_name(ARegime r) {
  switch (r) {
    case ARegime::normal: return "normal";
    case ARegime::critical: return "critical";
    case ARegime::large: return "large";
    case ARegime::small: return "small";
    case ARegime::mixed: return "mixed";
  }
  return "?";
}

double draw_A(std::mt19937_64& rng, ARegime regime) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double sign = unit(rng) < 0.5 ? -1.0 : 1.0;
  switch (regime) {
    case ARegime::normal: return std::normal_distribution<double>(0.0, 1.5)(rng);
    case ARegime::critical: {  // A_bar = 0 exactly (as exactly as a double allows) or within 1e-9..1e-2
      if (unit(rng) < 0.25) return sign * kCritical;
      const double delta = std::pow(10.0, -9.0 + 7.0 * unit(rng)) * (unit(rng) < 0.5 ? -1 : 1);
      return sign * kCritical * (1 + delta);
    }
    case ARegime::large: return sign * std::pow(10.0, std::log10(3.0) + (3.0 - std::log10(3.0)) * unit(rng));
    case ARegime::small: return unit(rng) < 0.125 ? 0.0 : sign * 0.1 * unit(rng);  // A_bar → −1
    case ARegime::mixed: {
      static const ARegime pick[] = {ARegime::normal, ARegime::critical, ARegime::large, ARegime::small};
      return draw_A(rng, pick[std::uniform_int_distribution<int>(0, 3)(rng)]);
    }
  }
  return 0;
}

struct Config {
  std::int64_t batch, dim, dstate, seqlen;
  bool bias, initial_state, dout, dlast_state;
  ARegime regime;
};

struct ScanCase {
  S7ScanProblem problem;
  TensorMap inputs;  // inputs and cotangents
};

ScanCase random_case(std::mt19937_64& rng, const Config& c) {
  ScanCase sc;
  S7ScanProblem& p = sc.problem;
  p.batch = c.batch; p.dim = c.dim; p.dstate = c.dstate; p.seqlen = c.seqlen;
  p.has_bias = c.bias; p.has_initial_state = c.initial_state;
  p.with_backward = c.dout; p.has_dlast_state = c.dout && c.dlast_state;
  std::normal_distribution<double> normal(0.0, 1.0);
  for (const auto& spec : p.tensors()) {
    if (spec.role != TensorRole::input && spec.role != TensorRole::grad_input) continue;
    Tensor t(spec.shape);
    for (auto& v : t.values) v = spec.name == "A" ? draw_A(rng, c.regime) : normal(rng);
    sc.inputs[spec.name] = std::move(t);
  }
  return sc;
}

std::string describe_config(const Config& c) {
  char text[200];
  std::snprintf(text, sizeof text, "b=%lld H=%lld N=%lld L=%lld bias=%d init=%d dout=%d dlast=%d A=%s",
                (long long)c.batch, (long long)c.dim, (long long)c.dstate, (long long)c.seqlen, c.bias,
                c.initial_state, c.dout, c.dlast_state, regime_name(c.regime));
  return text;
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : t.values) m = std::max(m, std::fabs(v));
  return m;
}

// ------------------------------------------------------------------------------------------
// A naive float32 s7_scan: the same formulas, sequential, every operation in float. The error
// bound must cover it (it is one of the implementations the bound is for).
TensorMap naive_float32_s7_scan(const S7ScanProblem& p, const TensorMap& in) {
  const std::int64_t Bn = p.batch, H = p.dim, N = p.dstate, L = p.seqlen;
  auto to_float = [&](const std::string& name) {
    std::vector<float> f;
    if (const Tensor* t = find(in, name))
      for (double v : t->values) f.push_back(static_cast<float>(v));
    return f;
  };
  const auto u = to_float("u"), A = to_float("A"), B = to_float("B"), C = to_float("C");
  const auto bias = to_float("bias"), initial = to_float("initial_state");
  const auto dout = to_float("dout"), dlast = to_float("dlast_state");
  auto iu = [&](std::int64_t b, std::int64_t h, std::int64_t t) { return (b * H + h) * L + t; };
  auto ia = [&](std::int64_t b, std::int64_t n, std::int64_t t) { return (b * N + n) * L + t; };
  auto iB = [&](std::int64_t b, std::int64_t n, std::int64_t h, std::int64_t t) { return ((b * N + n) * H + h) * L + t; };
  auto iC = [&](std::int64_t b, std::int64_t h, std::int64_t n, std::int64_t t) { return ((b * H + h) * N + n) * L + t; };
  auto abar_of = [](float a) { return 1.0f - 1.0f / (a * a + 0.5f); };

  std::vector<float> x(static_cast<std::size_t>(Bn * N * L));
  for (std::int64_t b = 0; b < Bn; ++b)
    for (std::int64_t n = 0; n < N; ++n) {
      float state = initial.empty() ? 0.0f : initial[b * N + n];
      for (std::int64_t t = 0; t < L; ++t) {
        float Bu = 0.0f;
        for (std::int64_t h = 0; h < H; ++h) Bu += B[iB(b, n, h, t)] * u[iu(b, h, t)];
        if (!bias.empty()) Bu += bias[ia(b, n, t)];
        state = abar_of(A[ia(b, n, t)]) * state + Bu;
        x[ia(b, n, t)] = state;
      }
    }
  TensorMap r;
  Tensor out({Bn, H, L}), last({Bn, N});
  for (std::int64_t b = 0; b < Bn; ++b)
    for (std::int64_t t = 0; t < L; ++t)
      for (std::int64_t h = 0; h < H; ++h) {
        float y = 0.0f;
        for (std::int64_t n = 0; n < N; ++n) y += C[iC(b, h, n, t)] * x[ia(b, n, t)];
        out[iu(b, h, t)] = y;
      }
  for (std::int64_t b = 0; b < Bn; ++b)
    for (std::int64_t n = 0; n < N; ++n) last[b * N + n] = x[ia(b, n, L - 1)];
  r["out"] = out;
  r["last_state"] = last;
  if (!p.with_backward) return r;

  Tensor du({Bn, H, L}), dA({Bn, N, L}), dB({Bn, N, H, L}), dC({Bn, H, N, L}), dbias({Bn, N, L}), dinit({Bn, N});
  std::vector<float> g(static_cast<std::size_t>(Bn * N * L));
  for (std::int64_t b = 0; b < Bn; ++b)
    for (std::int64_t n = 0; n < N; ++n) {
      float carried = dlast.empty() ? 0.0f : dlast[b * N + n];
      for (std::int64_t t = L - 1; t >= 0; --t) {
        float adjoint = 0.0f;
        for (std::int64_t h = 0; h < H; ++h) adjoint += C[iC(b, h, n, t)] * dout[iu(b, h, t)];
        adjoint += carried;
        g[ia(b, n, t)] = adjoint;
        carried = abar_of(A[ia(b, n, t)]) * adjoint;
      }
      dinit[b * N + n] = carried;
    }
  for (std::int64_t b = 0; b < Bn; ++b)
    for (std::int64_t t = 0; t < L; ++t) {
      for (std::int64_t h = 0; h < H; ++h) {
        float acc = 0.0f;
        for (std::int64_t n = 0; n < N; ++n) {
          dC[iC(b, h, n, t)] = dout[iu(b, h, t)] * x[ia(b, n, t)];
          dB[iB(b, n, h, t)] = g[ia(b, n, t)] * u[iu(b, h, t)];
          acc += B[iB(b, n, h, t)] * g[ia(b, n, t)];
        }
        du[iu(b, h, t)] = acc;
      }
      for (std::int64_t n = 0; n < N; ++n) {
        const float a = A[ia(b, n, t)];
        const float r_ = 1.0f / (a * a + 0.5f);
        const float slope = 2.0f * a * r_ * r_;
        const float previous = t > 0 ? x[ia(b, n, t - 1)] : (initial.empty() ? 0.0f : initial[b * N + n]);
        dA[ia(b, n, t)] = (g[ia(b, n, t)] * previous) * slope;
        dbias[ia(b, n, t)] = g[ia(b, n, t)];
      }
    }
  r["du"] = du; r["dA"] = dA; r["dB"] = dB; r["dC"] = dC;
  if (p.has_bias) r["dbias"] = dbias;
  if (p.has_initial_state) r["dinitial_state"] = dinit;
  return r;
}

std::vector<std::string> gradient_names(const S7ScanProblem& p) {
  std::vector<std::string> names;
  for (const auto& spec : p.tensors())
    if (spec.role == TensorRole::input) names.push_back(spec.name);
  return names;
}

S7ScanProblem forward_only(S7ScanProblem p) {
  p.with_backward = false;
  p.has_dlast_state = false;
  return p;
}

std::map<std::string, Tensor> cotangents_of(const ScanCase& c) {
  std::map<std::string, Tensor> cot{{"out", require(c.inputs, "dout")}};
  if (c.problem.has_dlast_state) cot["last_state"] = require(c.inputs, "dlast_state");
  return cot;
}

std::vector<ref::GradientCheck> finite_difference_check(const ScanCase& c, const TensorMap& analytic,
                                                        const std::vector<std::string>& names,
                                                        std::int64_t max_elements, std::uint64_t seed) {
  const S7ScanProblem fwd = forward_only(c.problem);
  const auto forward = [fwd](const TensorMap& in) { return ref::s7_scan(fwd, in); };
  std::vector<ref::GradientCheck> checks;
  for (const auto& name : names) {
    ref::FiniteDifferenceOptions options;
    options.tolerance = 1e-6;
    options.max_elements = max_elements;
    options.seed = seed;
    // The loss is linear in every input but A (each enters the scan once, multiplicatively), so a
    // wide step has no truncation error and cuts the round-off that a narrow one divides by h;
    // that matters for gradients far smaller than the loss, such as dinitial_state at A_bar ≈ 0.
    if (name != "A") options.relative_step = 1e-3;
    const auto one = ref::check_gradients(forward, c.inputs, cotangents_of(c), analytic, {name}, options);
    checks.insert(checks.end(), one.begin(), one.end());
  }
  return checks;
}

std::vector<std::string> golden_dirs(const std::string& op) {
  const std::filesystem::path root = std::filesystem::path(SCANLAB_SOURCE_DIR) / "reference" / "goldens" / op;
  std::vector<std::string> dirs;
  if (std::filesystem::is_directory(root))
    for (const auto& entry : std::filesystem::directory_iterator(root))
      if (entry.is_directory()) dirs.push_back(entry.path().string());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// ==========================================================================================
// Goldens: lrnnx's s7_scan_ref evaluated in float64 with autograd (scripts/goldens/).

TEST(ReferenceS7Scan, MatchesLrnnxGoldens) {
  const auto dirs = golden_dirs("s7_scan");
  ASSERT_FALSE(dirs.empty()) << "no golden cases under " SCANLAB_SOURCE_DIR "/reference/goldens/s7_scan";
  for (const auto& dir : dirs) {
    SCOPED_TRACE(dir);
    const io::Case c = io::read_case(dir);
    ASSERT_EQ(c.op, "s7_scan");
    const S7ScanProblem p = S7ScanProblem::from_case(c.tensors, c.options);
    ASSERT_TRUE(p.with_backward) << "a golden without dout checks no gradient";
    const TensorMap got = ref::s7_scan(p, c.tensors);
    const TensorMap expected = io::read_tensors(dir + "/expected");
    ASSERT_FALSE(expected.empty());
    for (const auto& [name, e] : expected) {
      const Tensor* g = find(got, name);
      ASSERT_NE(g, nullptr) << "the oracle does not return '" << name << "'";
      ASSERT_EQ(g->shape, e.shape) << name;
      const double scale = max_abs(e);
      double worst = 0;
      for (std::int64_t i = 0; i < e.numel(); ++i) worst = std::max(worst, std::fabs((*g)[i] - e[i]));
      EXPECT_LE(worst, 1e-12 * scale) << name << ": max |oracle − golden| = " << worst << ", max |golden| = " << scale;
      EXPECT_TRUE(std::isfinite(worst)) << name;
    }
    // Every tensor the oracle returns is checked by the golden (lrnnx has no initial_state, so
    // neither has any golden).
    for (const auto& [name, t] : got) EXPECT_TRUE(expected.count(name)) << "golden lacks '" << name << "'";
  }
}

// A hand-evaluated case (H = 1, N = 1, L = 2, with bias and initial state), independent of the
// oracle's loops.
TEST(ReferenceS7Scan, SmallCaseMatchesHandEvaluation) {
  S7ScanProblem p;
  p.has_bias = p.has_initial_state = p.with_backward = p.has_dlast_state = true;
  p.seqlen = 2;
  const double A0 = 0.3, A1 = -2.0, B0 = 1.5, B1 = -0.5, C0 = 2.0, C1 = 0.25, u0 = 0.7, u1 = -1.1;
  const double b0 = 0.1, b1 = -0.2, x0_init = 0.9, d0 = 1.3, d1 = -0.6, dlast = 0.4;
  TensorMap in{{"u", Tensor({1, 1, 2}, {u0, u1})},         {"A", Tensor({1, 1, 2}, {A0, A1})},
               {"B", Tensor({1, 1, 1, 2}, {B0, B1})},       {"C", Tensor({1, 1, 1, 2}, {C0, C1})},
               {"bias", Tensor({1, 1, 2}, {b0, b1})},       {"initial_state", Tensor({1, 1}, {x0_init})},
               {"dout", Tensor({1, 1, 2}, {d0, d1})},       {"dlast_state", Tensor({1, 1}, {dlast})}};
  const double ab0 = 1 - 1 / (A0 * A0 + 0.5), ab1 = 1 - 1 / (A1 * A1 + 0.5);  // 1 − 1/0.59, 1 − 1/4.5
  const double x0 = ab0 * x0_init + B0 * u0 + b0, x1 = ab1 * x0 + B1 * u1 + b1;
  const double g1 = C1 * d1 + dlast, g0 = C0 * d0 + ab1 * g1;
  const auto r = ref::s7_scan(p, in);
  const double tol = 1e-14;
  EXPECT_NEAR(r.at("out")[0], C0 * x0, tol);
  EXPECT_NEAR(r.at("out")[1], C1 * x1, tol);
  EXPECT_NEAR(r.at("last_state")[0], x1, tol);
  EXPECT_NEAR(r.at("dC")[0], d0 * x0, tol);
  EXPECT_NEAR(r.at("dC")[1], d1 * x1, tol);
  EXPECT_NEAR(r.at("dbias")[0], g0, tol);
  EXPECT_NEAR(r.at("dbias")[1], g1, tol);
  EXPECT_NEAR(r.at("dB")[1], g1 * u1, tol);
  EXPECT_NEAR(r.at("du")[0], B0 * g0, tol);
  EXPECT_NEAR(r.at("dA")[0], g0 * x0_init * 2 * A0 / std::pow(A0 * A0 + 0.5, 2), tol);
  EXPECT_NEAR(r.at("dA")[1], g1 * x0 * 2 * A1 / std::pow(A1 * A1 + 0.5, 2), tol);
  EXPECT_NEAR(r.at("dinitial_state")[0], ab0 * g0, tol);
  // Absent options return no gradient of the absent tensors.
  p.has_bias = p.has_initial_state = false;
  in.erase("bias");
  in.erase("initial_state");
  const auto plain = ref::s7_scan(p, in);
  EXPECT_EQ(plain.count("dbias"), 0u);
  EXPECT_EQ(plain.count("dinitial_state"), 0u);
  EXPECT_NEAR(plain.at("out")[0], C0 * B0 * u0, tol);
}

// ==========================================================================================
// Finite differences of the oracle's own forward, for every input, through out and last_state.

const std::vector<Config>& gradient_configs() {
  static const std::vector<Config> configs = {
      {2, 3, 4, 9, true, true, true, true, ARegime::normal},
      {2, 3, 4, 9, false, false, true, true, ARegime::normal},
      {1, 4, 3, 7, true, true, true, false, ARegime::mixed},
      {2, 2, 3, 1, true, true, true, true, ARegime::mixed},     // L = 1
      {2, 5, 1, 8, true, true, true, true, ARegime::mixed},     // N = 1
      {2, 1, 4, 8, true, true, true, true, ARegime::mixed},     // H = 1
      {1, 1, 1, 1, true, true, true, true, ARegime::normal},    // everything 1
      {2, 3, 3, 10, true, true, true, true, ARegime::critical}, // A_bar ≈ 0
      {2, 3, 3, 10, true, true, true, true, ARegime::large},    // A_bar → 1
      {2, 3, 3, 10, true, true, true, true, ARegime::small},    // A_bar → −1
      {1, 6, 5, 13, false, true, true, true, ARegime::mixed},
  };
  return configs;
}

TEST(ReferenceS7Scan, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(7001);
  std::uint64_t seed = 1;
  for (const auto& config : gradient_configs()) {
    SCOPED_TRACE(describe_config(config));
    ScanCase c = random_case(rng, config);
    if (config.regime == ARegime::critical && c.problem.has_initial_state) {
      // With every A_bar_0 ≈ 0, dinitial_state = A_bar_0·g_0 is all but zero and finite differences
      // resolve it only against a gradient of visible size elsewhere: give batch entry 0 one.
      Tensor& A = c.inputs.at("A");
      for (std::int64_t n = 0; n < c.problem.dstate; ++n) A.at({0, n, 0}) = 0.3 + 0.1 * double(n);
    }
    const TensorMap analytic = ref::s7_scan(c.problem, c.inputs);
    const auto names = gradient_names(c.problem);
    for (const auto& name : names) ASSERT_TRUE(analytic.count("d" + name)) << "no d" << name;
    const auto checks = finite_difference_check(c, analytic, names, 48, seed++);
    for (const auto& check : checks) EXPECT_TRUE(check.pass) << ref::describe(checks);
  }
}

// lrnnx's backward divides by A_bar; ours must stay finite and right where A_bar = 0, both at
// A = ±1/√2 as doubles (where A_bar is 0 or a rounding away) and next to it.
TEST(ReferenceS7Scan, BackwardIsFiniteAndCorrectWhereABarIsZero) {
  std::mt19937_64 rng(7002);
  for (const double relative_offset : {0.0, 1e-15, -1e-12, 1e-9, -1e-6}) {
    SCOPED_TRACE("A = ±(1/√2)·(1 + " + std::to_string(relative_offset) + ")");
    ScanCase c = random_case(rng, {2, 3, 4, 6, true, true, true, true, ARegime::normal});
    Tensor& A = c.inputs.at("A");
    for (std::int64_t i = 0; i < A.numel(); ++i) A[i] = (i % 3 == 1 ? -1 : 1) * kCritical * (1 + relative_offset);
    // Batch entry 1 starts from an ordinary A_bar_0, so that dinitial_state has a visible scale
    // for the finite differences; batch entry 0 has A_bar = 0 at every step.
    for (std::int64_t n = 0; n < c.problem.dstate; ++n) A.at({1, n, 0}) = 1.5;
    const TensorMap r = ref::s7_scan(c.problem, c.inputs);
    for (const auto& [name, t] : r)
      for (double v : t.values) ASSERT_TRUE(std::isfinite(v)) << name << " is not finite";
    const auto names = gradient_names(c.problem);
    const auto checks = finite_difference_check(c, r, names, 1000, 11);
    for (const auto& check : checks) EXPECT_TRUE(check.pass) << ref::describe(checks);

    if (relative_offset != 0.0) continue;
    // With every A_bar = 0 (batch entry 0) the scan has no memory: x_t = Bu_t and
    // g_t = Σ_h C·dout (+ dlast_state at the end). Check the gradients against those closed forms.
    const S7ScanProblem& p = c.problem;
    const Tensor &u = c.inputs.at("u"), &B = c.inputs.at("B"), &C = c.inputs.at("C"), &bias = c.inputs.at("bias");
    const Tensor &dout = c.inputs.at("dout"), &dlast = c.inputs.at("dlast_state"), &init = c.inputs.at("initial_state");
    for (std::int64_t b = 0; b < 1; ++b)
      for (std::int64_t n = 0; n < p.dstate; ++n)
        for (std::int64_t t = 0; t < p.seqlen; ++t) {
          auto Bu = [&](std::int64_t s) {
            double v = bias.at({b, n, s});
            for (std::int64_t h = 0; h < p.dim; ++h) v += B.at({b, n, h, s}) * u.at({b, h, s});
            return v;
          };
          double g = t == p.seqlen - 1 ? dlast.at({b, n}) : 0.0;
          for (std::int64_t h = 0; h < p.dim; ++h) g += C.at({b, h, n, t}) * dout.at({b, h, t});
          const double a = A.at({b, n, t});
          const double previous = t > 0 ? Bu(t - 1) : init.at({b, n});
          const double expected_dA = g * previous * 2 * a / std::pow(a * a + 0.5, 2);
          EXPECT_NEAR(r.at("dbias").at({b, n, t}), g, 1e-12 * (1 + std::fabs(g)));
          EXPECT_NEAR(r.at("dA").at({b, n, t}), expected_dA, 1e-12 * (1 + std::fabs(expected_dA)));
          if (t == 0) EXPECT_NEAR(r.at("dinitial_state").at({b, n}), 0.0, 1e-14);
        }
  }
}

// A mutation test per gradient: the finite-difference check must catch a 1e-4 relative error in
// any one element of any gradient.
TEST(ReferenceS7Scan, FiniteDifferenceCheckCatchesAPerturbedGradient) {
  std::mt19937_64 rng(7003);
  for (const Config& config : {Config{2, 3, 2, 5, true, true, true, true, ARegime::mixed},
                               Config{1, 2, 3, 1, true, true, true, true, ARegime::normal}}) {
    SCOPED_TRACE(describe_config(config));
    const ScanCase c = random_case(rng, config);
    const TensorMap analytic = ref::s7_scan(c.problem, c.inputs);
    const auto names = gradient_names(c.problem);
    ASSERT_EQ(names.size(), 6u);  // u A B C bias initial_state
    for (const auto& name : names) {
      SCOPED_TRACE("d" + name);
      const Tensor& g = analytic.at("d" + name);
      const std::int64_t probe = std::uniform_int_distribution<std::int64_t>(0, g.numel() - 1)(rng);
      TensorMap mutated = analytic;
      mutated.at("d" + name)[probe] += 1e-4 * std::max(max_abs(g), 1e-300);
      // All elements are probed (max_elements ≥ numel), so the perturbed one is among them.
      const auto clean = finite_difference_check(c, analytic, {name}, 1 << 20, 3);
      const auto broken = finite_difference_check(c, mutated, {name}, 1 << 20, 3);
      EXPECT_TRUE(clean.at(0).pass) << ref::describe(clean);
      EXPECT_FALSE(broken.at(0).pass) << ref::describe(broken);
    }
  }
}

// ==========================================================================================
// The error bound.

struct RatioStats {
  std::vector<double> per_case_max;
};

// The bound must cover a naive float32 implementation in every regime, and be tight enough to be
// useful: the worst observed error must reach a visible fraction of it.
TEST(ReferenceS7Scan, ErrorBoundCoversNaiveFloat32AndIsNotLoose) {
  std::mt19937_64 rng(7004);
  std::vector<Config> configs = {
      {2, 32, 16, 300, true, true, true, true, ARegime::mixed},
      {1, 32, 16, 300, true, true, true, true, ARegime::large},
      {1, 32, 16, 300, true, true, true, true, ARegime::small},
      {1, 32, 16, 300, true, true, true, true, ARegime::critical},
      {1, 32, 16, 300, false, false, true, false, ARegime::normal},
      {2, 1, 5, 200, true, true, true, true, ARegime::mixed},   // H = 1
      {2, 9, 1, 250, true, true, true, true, ARegime::mixed},   // N = 1
      {2, 17, 7, 1, true, true, true, true, ARegime::mixed},    // L = 1
      {1, 1, 1, 1, true, true, true, true, ARegime::critical},
  };
  std::uniform_int_distribution<int> coin(0, 1);
  const ARegime regimes[] = {ARegime::normal, ARegime::critical, ARegime::large, ARegime::small, ARegime::mixed};
  for (int k = 0; k < 30; ++k) {
    auto pick = [&](std::int64_t hi) {  // log-uniform in [1, hi]
      return static_cast<std::int64_t>(std::exp(std::uniform_real_distribution<double>(0, std::log(hi + 1.0))(rng)));
    };
    configs.push_back({1 + coin(rng), std::min<std::int64_t>(pick(32), 32), std::min<std::int64_t>(pick(16), 16),
                       std::min<std::int64_t>(pick(300), 300), coin(rng) == 1, coin(rng) == 1, true, coin(rng) == 1,
                       regimes[k % 5]});
  }
  std::map<std::string, RatioStats> stats;
  for (const auto& config : configs) {
    SCOPED_TRACE(describe_config(config));
    const ScanCase c = random_case(rng, config);
    const TensorMap exact = ref::s7_scan(c.problem, c.inputs);
    const TensorMap bound = ref::s7_scan_error_bound(c.problem, c.inputs);
    ASSERT_EQ(bound.size(), exact.size());
    for (const auto& [name, t] : bound) {
      ASSERT_EQ(t.shape, exact.at(name).shape) << name;
      for (double v : t.values) ASSERT_TRUE(std::isfinite(v) && v > 0) << name << " bound " << v;
    }
    const auto comparisons = ref::compare_with_bounds(naive_float32_s7_scan(c.problem, c.inputs), exact, bound);
    EXPECT_EQ(comparisons.size(), exact.size());
    EXPECT_TRUE(ref::all_pass(comparisons)) << ref::describe(comparisons);
    for (const auto& comparison : comparisons) stats[comparison.name].per_case_max.push_back(comparison.max_ratio);
  }
  std::printf("  s7_scan naive float32 |err|/bound over %zu cases: tensor, max, median of per-case max\n",
              configs.size());
  for (auto& [name, s] : stats) {
    auto v = s.per_case_max;
    std::sort(v.begin(), v.end());
    std::printf("    %-16s %8.3g %8.3g\n", name.c_str(), v.back(), v[v.size() / 2]);
    EXPECT_LE(v.back(), 1.0) << name;
    // Not uselessly loose: somewhere the float32 error reaches a visible fraction of the bound.
    EXPECT_GE(v.back(), 1e-2) << name << ": the bound is over 100× the worst error seen";
  }
}

// A 2^-12 relative error in one element whose bound is below 2^-13 of its value must fail; ±2
// float32 ulp on every element must pass; a NaN or inf never passes.
TEST(ReferenceS7Scan, ErrorBoundCatchesOneBadElementAndAcceptsUlpNoise) {
  std::mt19937_64 rng(7005);
  const ScanCase c = random_case(rng, {2, 6, 4, 40, true, true, true, true, ARegime::mixed});
  const TensorMap exact = ref::s7_scan(c.problem, c.inputs);
  const TensorMap bound = ref::s7_scan_error_bound(c.problem, c.inputs);

  TensorMap noisy = exact;
  for (auto& [name, t] : noisy)
    for (auto& v : t.values) {
      float f = static_cast<float>(v);
      const float toward = std::uniform_int_distribution<int>(0, 1)(rng) ? INFINITY : -INFINITY;
      f = std::nextafter(std::nextafter(f, toward), toward);
      v = f;
    }
  const auto noisy_comparisons = ref::compare_with_bounds(noisy, exact, bound);
  EXPECT_TRUE(ref::all_pass(noisy_comparisons)) << ref::describe(noisy_comparisons);

  for (const auto& [name, t] : exact) {
    SCOPED_TRACE(name);
    std::vector<std::int64_t> sharp;  // elements where a 2^-12 relative error must show
    for (std::int64_t i = 0; i < t.numel(); ++i)
      if (bound.at(name)[i] < 0x1p-13 * std::fabs(t[i])) sharp.push_back(i);
    // The bound is not so loose that nothing can be checked.
    EXPECT_GE(double(sharp.size()), 0.25 * double(t.numel())) << sharp.size() << " of " << t.numel();
    ASSERT_FALSE(sharp.empty());
    for (std::int64_t i : {sharp.front(), sharp[sharp.size() / 2], sharp.back()}) {
      TensorMap mutated = exact;
      mutated.at(name)[i] *= 1 + 0x1p-12;
      EXPECT_FALSE(ref::all_pass(ref::compare_with_bounds(mutated, exact, bound))) << "element " << i;
    }
    for (double poison : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
      TensorMap mutated = exact;
      mutated.at(name)[t.numel() / 2] = poison;
      EXPECT_FALSE(ref::all_pass(ref::compare_with_bounds(mutated, exact, bound))) << poison;
    }
  }
}

// Where the exact result is (almost) nothing but cancellation, the bound must not claim digits
// float32 cannot deliver: two identical state channels read by C with opposite signs give an
// output that float32 computes as noise; the bound covers |value| there (and the naive result).
TEST(ReferenceS7Scan, ErrorBoundAdmitsCancellationNoise) {
  std::mt19937_64 rng(7006);
  ScanCase c = random_case(rng, {1, 3, 2, 20, true, false, true, false, ARegime::normal});
  const S7ScanProblem& p = c.problem;
  Tensor &A = c.inputs.at("A"), &B = c.inputs.at("B"), &C = c.inputs.at("C"), &bias = c.inputs.at("bias");
  for (std::int64_t t = 0; t < p.seqlen; ++t) {
    A.at({0, 1, t}) = A.at({0, 0, t});
    bias.at({0, 1, t}) = bias.at({0, 0, t}) * (1 + 1e-10);
    for (std::int64_t h = 0; h < p.dim; ++h) {
      B.at({0, 1, h, t}) = B.at({0, 0, h, t}) * (1 + 1e-10);  // x_1 = x_0·(1 + 1e-10)
      C.at({0, h, 1, t}) = -C.at({0, h, 0, t});               // y = C·(x_0 − x_1) ≈ 1e-10·C·x_0
    }
  }
  const TensorMap exact = ref::s7_scan(p, c.inputs);
  const TensorMap bound = ref::s7_scan_error_bound(p, c.inputs);
  const Tensor& out = exact.at("out");
  for (std::int64_t i = 0; i < out.numel(); ++i) EXPECT_GE(bound.at("out")[i], std::fabs(out[i])) << i;
  const auto comparisons = ref::compare_with_bounds(naive_float32_s7_scan(p, c.inputs), exact, bound);
  EXPECT_TRUE(ref::all_pass(comparisons)) << ref::describe(comparisons);
}

}  // namespace
