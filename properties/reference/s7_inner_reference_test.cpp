// The s7_inner oracle (the whole S7 layer), checked against lrnnx's own s7_inner_ref (the
// committed goldens) and against central finite differences of its own forward for every weight
// and base_params. Its error bound (a probabilistic model, reference/s7_inner.cpp) is checked
// against a naive float32 re-implementation in two summation orders, and by mutation at a
// realistic size.
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
#include "reference/s7_inner.hpp"

namespace {

using namespace scanlab;
namespace ref = scanlab::reference;

constexpr double kCritical = 0.70710678118654752440;  // |A| = 1/√2, where A_bar = 0

// Where A = x_dbl[A block] + base_params lands: base_params sets the regime, and the A rows of
// x_proj_weight are scaled down (or zeroed) so that the data-dependent part does not wash it out.
enum class ARegime { normal, critical, large, small };
const char* regime_name(ARegime r) {
  switch (r) {
    case ARegime::normal: return "normal";
    case ARegime::critical: return "critical";
    case ARegime::large: return "large";
    case ARegime::small: return "small";
  }
  return "?";
}

struct Config {
  std::int64_t batch, seqlen, dim, dstate;
  bool dout;
  ARegime regime;
  double A_row_scale;  // multiplies x_proj_weight's A rows (0: A = base_params exactly)
};

struct InnerCase {
  S7InnerProblem problem;
  TensorMap inputs;
};

InnerCase random_case(std::mt19937_64& rng, const Config& c) {
  InnerCase ic;
  S7InnerProblem& p = ic.problem;
  p.batch = c.batch; p.seqlen = c.seqlen; p.dim = c.dim; p.dstate = c.dstate; p.with_backward = c.dout;
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double w = 1.0 / std::sqrt(double(c.dim));
  auto fill = [&](const Shape& shape, double scale) {
    Tensor t(shape);
    for (auto& v : t.values) v = scale * normal(rng);
    return t;
  };
  ic.inputs["hidden_states"] = fill({c.batch, c.seqlen, c.dim}, 1.0);
  ic.inputs["in_proj_weight"] = fill({c.dim, c.dim}, w);
  Tensor W_x = fill({p.x_proj_rows(), c.dim}, 0.5 * w);
  for (std::int64_t n = 0; n < c.dstate; ++n)
    for (std::int64_t i = 0; i < c.dim; ++i) W_x.at({p.offset_A() + n, i}) *= c.A_row_scale;
  ic.inputs["x_proj_weight"] = W_x;
  ic.inputs["gate_proj_weight"] = fill({c.dim, c.dim}, w);
  Tensor base({c.dstate});
  for (auto& v : base.values) {
    const double sign = unit(rng) < 0.5 ? -1.0 : 1.0;
    switch (c.regime) {
      case ARegime::normal: v = normal(rng); break;
      case ARegime::critical: v = sign * kCritical * (unit(rng) < 0.5 ? 1.0 : 1.0 + 1e-6 * normal(rng)); break;
      case ARegime::large: v = sign * (5.0 + 45.0 * unit(rng)); break;
      case ARegime::small: v = sign * 0.05 * unit(rng); break;
    }
  }
  ic.inputs["base_params"] = base;
  if (c.dout) ic.inputs["dout"] = fill({c.batch, c.seqlen, c.dim}, 1.0);
  return ic;
}

std::string describe_config(const Config& c) {
  char text[200];
  std::snprintf(text, sizeof text, "b=%lld L=%lld Dm=%lld N=%lld dout=%d A=%s A_rows×%g", (long long)c.batch,
                (long long)c.seqlen, (long long)c.dim, (long long)c.dstate, c.dout, regime_name(c.regime),
                c.A_row_scale);
  return text;
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : t.values) m = std::max(m, std::fabs(v));
  return m;
}

const std::vector<std::string> kWeights = {"hidden_states", "in_proj_weight", "x_proj_weight", "gate_proj_weight",
                                           "base_params"};

// ------------------------------------------------------------------------------------------
// A naive float32 s7_inner: the same formulas, every operation in float, matrix products with
// float accumulation. The error bound must cover it in either summation order of its matrix
// products and its reductions over rows: sequential products and sums, or fused multiply-adds in
// 8 interleaved lanes combined pairwise (the shape of a vectorised or warp reduction).
enum class Summation { sequential, lanes_fma };
const char* summation_name(Summation s) { return s == Summation::sequential ? "sequential" : "lanes+fma"; }

template <class F, class G>
float float_dot(std::int64_t K, F a, G b, Summation order) {
  if (order == Summation::sequential) {
    float s = 0.0f;
    for (std::int64_t k = 0; k < K; ++k) s += a(k) * b(k);
    return s;
  }
  float lane[8] = {};
  for (std::int64_t k = 0; k < K; ++k) lane[k % 8] = std::fma(a(k), b(k), lane[k % 8]);
  for (int width = 4; width >= 1; width /= 2)
    for (int j = 0; j < width; ++j) lane[j] += lane[j + width];
  return lane[0];
}

TensorMap naive_float32_s7_inner(const S7InnerProblem& p, const TensorMap& in,
                                 Summation order = Summation::sequential) {
  using V = std::vector<float>;
  const std::int64_t Bn = p.batch, L = p.seqlen, Dm = p.dim, N = p.dstate, R = p.x_proj_rows(), M = Bn * L;
  auto to_float = [&](const std::string& name) {
    V f;
    if (const Tensor* t = find(in, name))
      for (double v : t->values) f.push_back(static_cast<float>(v));
    return f;
  };
  const V hs = to_float("hidden_states"), W_in = to_float("in_proj_weight"), W_x = to_float("x_proj_weight");
  const V W_g = to_float("gate_proj_weight"), base = to_float("base_params"), dout = to_float("dout");
  // c[m, i] = Σ_k a[m, k]·w[i, k]
  auto linear = [order](const V& a, const V& w, std::int64_t rows, std::int64_t K, std::int64_t out) {
    V c(static_cast<std::size_t>(rows * out));
    for (std::int64_t m = 0; m < rows; ++m)
      for (std::int64_t i = 0; i < out; ++i)
        c[m * out + i] = float_dot(
            K, [&](std::int64_t k) { return a[m * K + k]; }, [&](std::int64_t k) { return w[i * K + k]; }, order);
    return c;
  };
  const V x = linear(hs, W_in, M, Dm, Dm);
  const V xd = linear(x, W_x, M, Dm, R);
  auto A_of = [&](std::int64_t m, std::int64_t n) { return xd[m * R + p.offset_A() + n] + base[n]; };
  auto B_of = [&](std::int64_t m, std::int64_t n, std::int64_t h) { return xd[m * R + p.offset_B() + h * N + n]; };
  auto C_of = [&](std::int64_t m, std::int64_t h, std::int64_t n) { return xd[m * R + p.offset_C() + h * N + n]; };
  auto D_of = [&](std::int64_t m, std::int64_t h) { return xd[m * R + p.offset_D() + h]; };
  auto bias_of = [&](std::int64_t m, std::int64_t n) { return xd[m * R + p.offset_bias() + n]; };
  auto abar_of = [](float a) { return 1.0f - 1.0f / (a * a + 0.5f); };

  V state(static_cast<std::size_t>(M * N)), y(static_cast<std::size_t>(M * Dm));
  for (std::int64_t b = 0; b < Bn; ++b) {
    V s(static_cast<std::size_t>(N), 0.0f);
    for (std::int64_t l = 0; l < L; ++l) {
      const std::int64_t m = b * L + l;
      for (std::int64_t n = 0; n < N; ++n) {
        float Bu = 0.0f;
        for (std::int64_t h = 0; h < Dm; ++h) Bu += B_of(m, n, h) * x[m * Dm + h];
        Bu += bias_of(m, n);
        s[n] = abar_of(A_of(m, n)) * s[n] + Bu;
        state[m * N + n] = s[n];
      }
      for (std::int64_t h = 0; h < Dm; ++h) {
        float acc = 0.0f;
        for (std::int64_t n = 0; n < N; ++n) acc += C_of(m, h, n) * s[n];
        y[m * Dm + h] = acc + D_of(m, h) * x[m * Dm + h];
      }
    }
  }
  V gel(y.size()), sg(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) gel[i] = 0.5f * y[i] * (1.0f + std::erf(y[i] * 0.70710678f));
  const V z = linear(gel, W_g, M, Dm, Dm);
  Tensor out({Bn, L, Dm});
  for (std::size_t i = 0; i < y.size(); ++i) {
    sg[i] = 1.0f / (1.0f + std::exp(-z[i]));
    out.values[i] = sg[i] * y[i] + hs[i];
  }
  TensorMap r{{"out", out}};
  if (!p.with_backward) return r;

  V dz(y.size()), dy(y.size()), dxd(static_cast<std::size_t>(M * R), 0.0f);
  for (std::size_t i = 0; i < y.size(); ++i) dz[i] = (dout[i] * y[i]) * (sg[i] * (1.0f - sg[i]));
  V W_g_t(W_g.size());  // dgelu = dz·W_g = linear(dz, W_gᵀ)
  for (std::int64_t i = 0; i < Dm; ++i)
    for (std::int64_t j = 0; j < Dm; ++j) W_g_t[j * Dm + i] = W_g[i * Dm + j];
  const V dgelu = linear(dz, W_g_t, M, Dm, Dm);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const float gp = 0.5f * (1.0f + std::erf(y[i] * 0.70710678f)) + y[i] * (0.39894228f * std::exp(-0.5f * y[i] * y[i]));
    dy[i] = dout[i] * sg[i] + dgelu[i] * gp;
  }
  V du(y.size(), 0.0f);
  for (std::int64_t b = 0; b < Bn; ++b) {
    V carried(static_cast<std::size_t>(N), 0.0f);
    for (std::int64_t l = L - 1; l >= 0; --l) {
      const std::int64_t m = b * L + l;
      for (std::int64_t n = 0; n < N; ++n) {
        float g = 0.0f;
        for (std::int64_t h = 0; h < Dm; ++h) g += C_of(m, h, n) * dy[m * Dm + h];
        g += carried[n];
        const float a = A_of(m, n), r_ = 1.0f / (a * a + 0.5f);
        const float previous = l > 0 ? state[(m - 1) * N + n] : 0.0f;
        dxd[m * R + p.offset_A() + n] = (g * previous) * (2.0f * a * r_ * r_);
        dxd[m * R + p.offset_bias() + n] = g;
        for (std::int64_t h = 0; h < Dm; ++h) {
          dxd[m * R + p.offset_B() + h * N + n] = g * x[m * Dm + h];
          dxd[m * R + p.offset_C() + h * N + n] = dy[m * Dm + h] * state[m * N + n];
          du[m * Dm + h] += B_of(m, n, h) * g;
        }
        carried[n] = abar_of(a) * g;
      }
      for (std::int64_t h = 0; h < Dm; ++h) dxd[m * R + p.offset_D() + h] = dy[m * Dm + h] * x[m * Dm + h];
    }
  }
  V W_x_t(W_x.size()), W_in_t(W_in.size());
  for (std::int64_t rr = 0; rr < R; ++rr)
    for (std::int64_t i = 0; i < Dm; ++i) W_x_t[i * R + rr] = W_x[rr * Dm + i];
  for (std::int64_t i = 0; i < Dm; ++i)
    for (std::int64_t j = 0; j < Dm; ++j) W_in_t[j * Dm + i] = W_in[i * Dm + j];
  V dx = linear(dxd, W_x_t, M, R, Dm);
  for (std::size_t i = 0; i < dx.size(); ++i) dx[i] += du[i] + dy[i] * xd[(i / Dm) * R + p.offset_D() + i % Dm];
  V dhs = linear(dx, W_in_t, M, Dm, Dm);
  for (std::size_t i = 0; i < dhs.size(); ++i) dhs[i] += dout[i];
  // dW[i, j] = Σ_m d[m, i]·a[m, j], accumulated over rows in float.
  auto weight_gradient = [M, order](const V& d, std::int64_t I, const V& a, std::int64_t J) {
    Tensor w({I, J});
    for (std::int64_t i = 0; i < I; ++i)
      for (std::int64_t j = 0; j < J; ++j)
        w.at({i, j}) = float_dot(
            M, [&](std::int64_t m) { return d[m * I + i]; }, [&](std::int64_t m) { return a[m * J + j]; }, order);
    return w;
  };
  Tensor dbase({N});
  for (std::int64_t n = 0; n < N; ++n)
    dbase[n] = float_dot(
        M, [&](std::int64_t m) { return dxd[m * R + p.offset_A() + n]; }, [](std::int64_t) { return 1.0f; }, order);
  r["dhidden_states"] = Tensor({Bn, L, Dm}, std::vector<double>(dhs.begin(), dhs.end()));
  r["din_proj_weight"] = weight_gradient(dx, Dm, hs, Dm);
  r["dx_proj_weight"] = weight_gradient(dxd, R, x, Dm);
  r["dgate_proj_weight"] = weight_gradient(dz, Dm, gel, Dm);
  r["dbase_params"] = dbase;
  return r;
}

std::vector<ref::GradientCheck> finite_difference_check(const InnerCase& c, const TensorMap& analytic,
                                                        const std::vector<std::string>& names,
                                                        std::int64_t max_elements, std::uint64_t seed) {
  S7InnerProblem fwd = c.problem;
  fwd.with_backward = false;
  ref::FiniteDifferenceOptions options;
  options.tolerance = 1e-6;
  options.max_elements = max_elements;
  options.seed = seed;
  return ref::check_gradients([fwd](const TensorMap& in) { return ref::s7_inner(fwd, in); }, c.inputs,
                              {{"out", require(c.inputs, "dout")}}, analytic, names, options);
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
// Goldens: lrnnx's s7_inner_ref evaluated in float64 with autograd (scripts/goldens/). They pin
// the layout of x_dbl's blocks (flat index h·N + n inside the B and C blocks).

TEST(ReferenceS7Inner, MatchesLrnnxGoldens) {
  const auto dirs = golden_dirs("s7_inner");
  ASSERT_FALSE(dirs.empty()) << "no golden cases under " SCANLAB_SOURCE_DIR "/reference/goldens/s7_inner";
  for (const auto& dir : dirs) {
    SCOPED_TRACE(dir);
    const io::Case c = io::read_case(dir);
    ASSERT_EQ(c.op, "s7_inner");
    const S7InnerProblem p = S7InnerProblem::from_case(c.tensors, c.options);
    ASSERT_TRUE(p.with_backward) << "a golden without dout checks no gradient";
    const TensorMap got = ref::s7_inner(p, c.tensors);
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
    for (const auto& [name, t] : got) EXPECT_TRUE(expected.count(name)) << "golden lacks '" << name << "'";
  }
}

// ==========================================================================================
// Finite differences of the oracle's own forward, for every weight and base_params.

TEST(ReferenceS7Inner, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(8001);
  const std::vector<Config> configs = {
      {2, 7, 4, 3, true, ARegime::normal, 1.0},
      {1, 1, 3, 1, true, ARegime::normal, 1.0},     // L = 1, N = 1
      {2, 5, 1, 2, true, ARegime::normal, 1.0},     // Dm = 1
      {2, 6, 3, 4, true, ARegime::critical, 0.0},   // A = ±1/√2 (A_bar = 0) or within 1e-6
      {2, 6, 3, 4, true, ARegime::critical, 1e-3},  // A within ~1e-3 of it, data-dependent
      {1, 8, 2, 3, true, ARegime::large, 0.1},      // A_bar → 1
      {1, 8, 2, 3, true, ARegime::small, 0.01},     // A_bar → −1
      {2, 4, 5, 2, true, ARegime::normal, 1.0},
  };
  std::uint64_t seed = 1;
  for (const auto& config : configs) {
    SCOPED_TRACE(describe_config(config));
    const InnerCase c = random_case(rng, config);
    const TensorMap analytic = ref::s7_inner(c.problem, c.inputs);
    for (const auto& name : kWeights) ASSERT_TRUE(analytic.count("d" + name)) << "no d" << name;
    const auto checks = finite_difference_check(c, analytic, kWeights, 40, seed++);
    for (const auto& check : checks) EXPECT_TRUE(check.pass) << ref::describe(checks);
  }
}

// A mutation test per gradient: the finite-difference check must catch a 1e-4 relative error in
// any one element of any gradient.
TEST(ReferenceS7Inner, FiniteDifferenceCheckCatchesAPerturbedGradient) {
  std::mt19937_64 rng(8002);
  const InnerCase c = random_case(rng, {1, 4, 2, 2, true, ARegime::normal, 1.0});
  const TensorMap analytic = ref::s7_inner(c.problem, c.inputs);
  for (const auto& name : kWeights) {
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

// ==========================================================================================
// The error bound (the probabilistic model at the top of reference/s7_inner.cpp).

// |got − expected| / bound for every element; a non-finite got counts as inf.
void append_ratios(const Tensor& got, const Tensor& expected, const Tensor& bound, std::vector<double>& into) {
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    const double diff = std::fabs(got[i] - expected[i]);
    into.push_back(std::isfinite(got[i]) && std::isfinite(diff) ? diff / bound[i]
                                                                : std::numeric_limits<double>::infinity());
  }
}
double quantile(std::vector<double>& v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * double(v.size())))];
}

// Many random cases up to b=2, L=128, Dm=32, N=16 in every A regime, each run through the naive
// float32 layer in both summation orders: no element may exceed its bound, and the worst error
// per tensor must come within 30× of it (the bound has teeth, not only soundness).
TEST(ReferenceS7Inner, ErrorBoundCoversNaiveFloat32AndIsNotLoose) {
  std::mt19937_64 rng(8003);
  std::vector<Config> configs = {
      {2, 128, 32, 16, true, ARegime::normal, 1.0},
      {2, 128, 16, 16, true, ARegime::normal, 1.0},
      {2, 128, 32, 16, true, ARegime::critical, 0.0},  // A = ±1/√2: A_bar = 0
      {1, 128, 32, 8, true, ARegime::critical, 1e-2},
      {2, 128, 16, 16, true, ARegime::large, 0.1},     // A_bar → 1: long memory
      {1, 128, 32, 8, true, ARegime::small, 0.01},     // A_bar → −1
      {2, 1, 9, 5, true, ARegime::normal, 1.0},        // L = 1
      {2, 60, 1, 4, true, ARegime::normal, 1.0},       // Dm = 1
      {2, 60, 7, 1, true, ARegime::normal, 1.0},       // N = 1
      {1, 1, 1, 1, true, ARegime::critical, 0.0},
      {1, 50, 6, 3, false, ARegime::normal, 1.0},      // forward only
      // Long memory, where the scan's errors add up over time: A_bar → 1 with a gradient reduced
      // against the states that produced it (broke a per-element quadrature at L = 256), and A
      // constant in time, so that every step rounds the same A_bar the same way (L = 2048 broke
      // a model that took those roundings as independent).
      {1, 256, 8, 4, true, ARegime::large, 0.05},
      {1, 2048, 8, 4, true, ARegime::large, 0.0},
  };
  std::uniform_int_distribution<int> coin(0, 1);
  const ARegime regimes[] = {ARegime::normal, ARegime::critical, ARegime::large, ARegime::small};
  for (int k = 0; k < 40; ++k) {
    auto pick = [&](std::int64_t hi) {  // log-uniform in [1, hi]
      return std::min<std::int64_t>(
          hi, static_cast<std::int64_t>(std::exp(std::uniform_real_distribution<double>(0, std::log(hi + 1.0))(rng))));
    };
    configs.push_back({1 + coin(rng), pick(128), pick(32), pick(16), true, regimes[k % 4],
                       std::pow(10.0, -3.0 * std::uniform_real_distribution<double>(0, 1)(rng))});
  }
  struct Ratios {
    std::vector<double> case_max, elements;
  };
  std::map<std::string, Ratios> ratios;
  for (const auto& config : configs) {
    const InnerCase c = random_case(rng, config);
    const TensorMap exact = ref::s7_inner(c.problem, c.inputs);
    const TensorMap bound = ref::s7_inner_error_bound(c.problem, c.inputs);
    ASSERT_EQ(bound.size(), exact.size());
    for (const auto& [name, t] : bound) {
      ASSERT_EQ(t.shape, exact.at(name).shape) << name;
      for (double v : t.values) ASSERT_TRUE(std::isfinite(v) && v > 0) << name << " bound " << v;
    }
    for (Summation order : {Summation::sequential, Summation::lanes_fma}) {
      SCOPED_TRACE(describe_config(config) + " " + summation_name(order));
      const TensorMap got = naive_float32_s7_inner(c.problem, c.inputs, order);
      const auto comparisons = ref::compare_with_bounds(got, exact, bound);
      EXPECT_EQ(comparisons.size(), exact.size());
      EXPECT_TRUE(ref::all_pass(comparisons)) << ref::describe(comparisons);
      for (const auto& comparison : comparisons) {
        Ratios& r = ratios[comparison.name];
        r.case_max.push_back(comparison.max_ratio);
        append_ratios(got.at(comparison.name), exact.at(comparison.name), bound.at(comparison.name), r.elements);
      }
    }
  }
  std::printf("  s7_inner naive float32 |err|/bound, %zu cases × 2 summation orders:\n", configs.size());
  std::printf("    %-18s %9s %9s %9s %9s\n", "tensor", "max", "med(max)", "p99 elem", "med elem");
  for (auto& [name, r] : ratios) {
    const double worst = quantile(r.case_max, 1.0), median_max = quantile(r.case_max, 0.5);
    std::printf("    %-18s %9.3g %9.3g %9.3g %9.3g\n", name.c_str(), worst, median_max, quantile(r.elements, 0.99),
                quantile(r.elements, 0.5));
    EXPECT_LE(worst, 1.0) << name;
    EXPECT_GE(worst, 1.0 / 30) << name << ": the bound is far above the worst error seen";
  }
}

// Where a gradient is nothing but cancellation, the bound must say so: two batch entries with the
// same inputs and opposite cotangents (up to 1e-9) cancel in every weight gradient and in
// dbase_params, which reduce over rows; what is left is far below float32's resolution. (The
// mirrored halves are also the arrangement the exchangeable partial-sum estimate misses; the
// index-order partial sums of the model must catch it.)
TEST(ReferenceS7Inner, ErrorBoundAdmitsCancellationNoise) {
  std::mt19937_64 rng(8006);
  for (const Config& config : {Config{2, 6, 3, 2, true, ARegime::normal, 1.0},
                               Config{2, 128, 16, 8, true, ARegime::normal, 1.0},
                               Config{2, 128, 16, 8, true, ARegime::large, 0.1}}) {
    SCOPED_TRACE(describe_config(config));
    InnerCase c = random_case(rng, config);
    const S7InnerProblem& p = c.problem;
    Tensor &hs = c.inputs.at("hidden_states"), &dout = c.inputs.at("dout");
    for (std::int64_t l = 0; l < p.seqlen; ++l)
      for (std::int64_t h = 0; h < p.dim; ++h) {
        hs.at({1, l, h}) = hs.at({0, l, h});
        dout.at({1, l, h}) = -dout.at({0, l, h}) * (1 + 1e-9);
      }
    const TensorMap exact = ref::s7_inner(p, c.inputs);
    const TensorMap bound = ref::s7_inner_error_bound(p, c.inputs);
    for (const char* name : {"din_proj_weight", "dx_proj_weight", "dgate_proj_weight", "dbase_params"}) {
      SCOPED_TRACE(name);
      const Tensor& t = exact.at(name);
      for (std::int64_t i = 0; i < t.numel(); ++i) EXPECT_GE(bound.at(name)[i], std::fabs(t[i])) << i;
    }
    for (Summation order : {Summation::sequential, Summation::lanes_fma}) {
      const auto comparisons = ref::compare_with_bounds(naive_float32_s7_inner(p, c.inputs, order), exact, bound);
      EXPECT_TRUE(ref::all_pass(comparisons)) << summation_name(order) << "\n" << ref::describe(comparisons);
    }
  }
}

// Elements where a 2^-12 relative error must show: bound below 2^-13 of the value.
std::vector<std::int64_t> sharp_elements(const Tensor& exact, const Tensor& bound) {
  std::vector<std::int64_t> sharp;
  for (std::int64_t i = 0; i < exact.numel(); ++i)
    if (bound[i] < 0x1p-13 * std::fabs(exact[i])) sharp.push_back(i);
  return sharp;
}

void print_sharp_shares(const Config& config, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const InnerCase c = random_case(rng, config);
  const TensorMap exact = ref::s7_inner(c.problem, c.inputs);
  const TensorMap bound = ref::s7_inner_error_bound(c.problem, c.inputs);
  std::printf("   ");
  for (const auto& [name, t] : exact)
    std::printf(" %s %.0f%%", name.c_str(),
                100.0 * double(sharp_elements(t, bound.at(name)).size()) / double(t.numel()));
  std::printf("  (%s)\n", describe_config(config).c_str());
}

// At a realistic size, every output and gradient has a good share of elements whose bound is
// below 2^-13 of the value; a 2^-12 relative error in any one of them must fail, ±2 float32 ulp
// on every element must pass, and a NaN or inf never passes.
TEST(ReferenceS7Inner, ErrorBoundCatchesOneBadElementAndAcceptsUlpNoise) {
  const Config realistic = {2, 32, 8, 4, true, ARegime::normal, 1.0};
  std::mt19937_64 rng(8004);
  const InnerCase c = random_case(rng, realistic);
  const TensorMap exact = ref::s7_inner(c.problem, c.inputs);
  const TensorMap bound = ref::s7_inner_error_bound(c.problem, c.inputs);
  ASSERT_EQ(exact.size(), 6u);

  std::printf("  s7_inner %s: elements with bound < 2^-13·|value|\n", describe_config(realistic).c_str());
  for (const auto& [name, t] : exact) {
    SCOPED_TRACE(name);
    const auto sharp = sharp_elements(t, bound.at(name));
    const double share = double(sharp.size()) / double(t.numel());
    std::printf("    %-18s %5.1f%% of %lld\n", name.c_str(), 100 * share, static_cast<long long>(t.numel()));
    EXPECT_GE(share, 0.25);
    TensorMap got{{name, t}};
    const TensorMap expected{{name, t}}, bounds{{name, bound.at(name)}};
    std::int64_t missed = 0;
    for (std::int64_t i : sharp) {
      const double saved = got.at(name)[i];
      got.at(name)[i] = saved * (1 + 0x1p-12);
      if (ref::all_pass(ref::compare_with_bounds(got, expected, bounds))) ++missed;
      got.at(name)[i] = saved;
    }
    EXPECT_EQ(missed, 0) << "of " << sharp.size() << " elements with a 2^-12 relative error";
    for (double poison : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
      got.at(name)[t.numel() / 2] = poison;
      EXPECT_FALSE(ref::all_pass(ref::compare_with_bounds(got, expected, bounds))) << poison;
      got.at(name)[t.numel() / 2] = t[t.numel() / 2];
    }
  }

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

  // For the record: the same share in the other A regimes and at a larger size.
  std::printf("  share with bound < 2^-13·|value| elsewhere:\n");
  print_sharp_shares({2, 32, 8, 4, true, ARegime::critical, 0.0}, 8007);
  print_sharp_shares({2, 32, 8, 4, true, ARegime::large, 0.1}, 8007);
  print_sharp_shares({2, 32, 8, 4, true, ARegime::small, 0.01}, 8007);
  print_sharp_shares({2, 128, 16, 16, true, ARegime::normal, 1.0}, 8007);
  print_sharp_shares({2, 128, 32, 16, true, ARegime::normal, 1.0}, 8007);
}

}  // namespace
