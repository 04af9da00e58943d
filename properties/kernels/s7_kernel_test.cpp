// The s7 kernels against the float64 oracle, on every backend compiled in (Serial, OpenMP; CUDA in
// the cuda build, which runs these tests on the H200),
// for each implementation and a spread of configs that reach the edges: L = 1, N = 1, H = 1,
// seqlen not a multiple of the chunk, seqlen shorter than one chunk, state/dim groups larger than
// N/H, with and without bias, initial_state and dlast_state, and A_bar = 0 (|A| = 1/√2).
// Also: bitwise repeatability (two runs, and Serial against OpenMP: the result must not depend on
// the thread count), every NaN-poisoned output overwritten, the config registry, and the matrix
// product interface against a naive float64 product. The RapidCheck property families over
// random configs live with the op's properties; this file is the kernels' own unit test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/matmul.hpp"
#include "kernels/s7_config.hpp"
#include "kernels/s7_inner.hpp"
#include "kernels/s7_scan.hpp"
#include "reference/error_bound.hpp"
#include "reference/s7_inner.hpp"
#include "reference/s7_scan.hpp"

namespace {

using namespace scanlab;
using namespace scanlab::kernels;
namespace ref = scanlab::reference;

constexpr double kCritical = 0.70710678118654752440;  // |A| = 1/√2: A_bar = 0

// Every Kokkos space compiled in: Serial and OpenMP here, plus CUDA in the cuda build (where the
// same tests run on the H200).
std::vector<BackendKind> kokkos_backends() { return compiled_kokkos_backends(); }

std::vector<BackendKind> host_backends() {
  std::vector<BackendKind> kinds;
  for (auto k : compiled_kokkos_backends())
    if (k != BackendKind::cuda) kinds.push_back(k);
  return kinds;
}

void fill(Tensor& t, std::mt19937_64& rng, double scale) {
  std::uniform_real_distribution<double> d(-scale, scale);
  for (auto& v : t.values) v = d(rng);
}

bool bitwise_equal(const TensorMap& a, const TensorMap& b, std::string& why) {
  if (a.size() != b.size()) {
    why = "different tensor sets";
    return false;
  }
  for (const auto& [name, t] : a) {
    const Tensor* o = find(b, name);
    if (!o || o->shape != t.shape) {
      why = name + " missing or reshaped";
      return false;
    }
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      const float x = float(t[i]), y = float((*o)[i]);
      if (std::memcmp(&x, &y, sizeof(float)) != 0) {
        why = name + "[" + std::to_string(i) + "]: " + std::to_string(t[i]) + " vs " + std::to_string((*o)[i]);
        return false;
      }
    }
  }
  return true;
}

std::vector<std::string> names_of(const TensorMap& m) {
  std::vector<std::string> n;
  for (const auto& kv : m) n.push_back(kv.first);
  return n;
}

// ------------------------------------------------------------------------------------------
// s7_scan

struct ScanCase {
  std::int64_t batch, dim, dstate, seqlen;
  bool bias, initial, backward, dlast;
  bool critical_A = false;  // every A = ±1/√2 (A_bar = 0), else a mix including some
};

S7ScanProblem problem_of(const ScanCase& c) {
  S7ScanProblem p;
  p.batch = c.batch;
  p.dim = c.dim;
  p.dstate = c.dstate;
  p.seqlen = c.seqlen;
  p.has_bias = c.bias;
  p.has_initial_state = c.initial;
  p.with_backward = c.backward;
  p.has_dlast_state = c.dlast;
  return p;
}

TensorMap scan_inputs(const S7ScanProblem& p, bool critical_A, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  TensorMap in;
  for (const auto& spec : p.tensors()) {
    if (spec.role != TensorRole::input && spec.role != TensorRole::grad_input) continue;
    Tensor t(spec.shape);
    fill(t, rng, 1.0);
    in[spec.name] = std::move(t);
  }
  // A: mostly in (−2, 2) (A_bar from −1 to 0.9), some exactly at ±1/√2, some large.
  std::uniform_int_distribution<int> pick(0, 7);
  for (auto& a : in["A"].values) {
    const int k = critical_A ? 0 : pick(rng);
    if (k == 0)
      a = (a < 0 ? -1 : 1) * kCritical;
    else if (k == 1)
      a = (a < 0 ? -1 : 1) * 20.0;
    else
      a *= 2.0;
  }
  return in;
}

void expect_matches_oracle(const S7ScanProblem& p, const TensorMap& in, const TensorMap& got, const std::string& what) {
  const TensorMap expected = ref::s7_scan(p, in);
  const TensorMap bounds = ref::s7_scan_error_bound(p, in);
  EXPECT_EQ(names_of(got), names_of(expected)) << what;
  EXPECT_EQ(names_of(bounds), names_of(expected)) << what;  // every tensor is compared
  const auto comparisons = ref::compare_with_bounds(got, expected, bounds);
  EXPECT_TRUE(ref::all_pass(comparisons)) << what << "\n" << ref::describe(comparisons);
}

// c run by another impl; "scanned" holds a thread's chunk in registers, so its chunk shrinks to fit.
S7ScanConfig with_impl(S7ScanConfig c, const std::string& impl) {
  c.impl = impl;
  if (impl == "scanned") c.chunk_len = std::min(c.chunk_len, kS7WalkBatch);
  return c;
}

std::vector<S7ScanConfig> scan_configs(const S7ScanProblem& p, BackendKind backend) {
  std::vector<S7ScanConfig> configs;
  for (const std::string& impl : s7_scan_implementations()) {
    const bool scanned = impl == "scanned";  // a thread's chunk in registers: chunk_len ≤ kS7WalkBatch
    S7ScanConfig c;
    c.impl = impl;
    c.team_size = 1;
    c.walk_team_size = 1;
    // (items, states, dims, chunk, walk rows, splits)
    const int shapes[][6] = {{1, 1, 1, 1, 1, 1}, {8, 2, 4, 3, 1, 2}, {64, 4, 4, 16, 1, 1},
                             {3, 8, 8, 256, 1, 3}, {5, 8, 2, 7, 1, 1}};
    for (const auto& s : shapes) {
      c.items_per_thread = s[0];
      c.states_per_thread = s[1];
      c.dims_per_thread = s[2];
      c.chunk_len = scanned ? std::min(s[3], kS7WalkBatch) : s[3];
      c.walk_team_size = s[4];
      c.bwd_dim_splits = int(std::min<std::int64_t>(s[5], p.dim));
      c.fwd_dim_splits = int(std::min<std::int64_t>(s[5] == 1 ? 1 : 5 - s[5], p.dim));  // 3 and 2 against 2 and 3
      configs.push_back(c);
    }
    // Teams of several threads share scratch across barriers: run them where the space allows.
    if (s7_max_team_size(backend) >= 2) {
      c.team_size = 2;
      c.items_per_thread = 3;
      c.walk_team_size = 2;
      c.chunk_len = 5;
      c.bwd_dim_splits = 1;
      c.fwd_dim_splits = int(std::min<std::int64_t>(2, p.dim));
      configs.push_back(c);
    }
    // scanned: a team scan over up to 8 chunks, several rounds along the row, idle threads in the last.
    if (scanned && s7_max_team_size(backend) >= 3) {
      c.walk_team_size = std::min(8, s7_max_team_size(backend));
      c.chunk_len = 3;
      configs.push_back(c);
    }
    if (backend == BackendKind::cuda) {  // the GPU's own shapes: whole warps, several warps per walk
      S7ScanConfig g = s7_scan_heuristic_config(p, backend);
      g.impl = impl;
      configs.push_back(g);
      g.team_size = 64;
      g.items_per_thread = 2;
      g.walk_team_size = 32;
      g.chunk_len = 16;
      g.bwd_dim_splits = int(std::min<std::int64_t>(2, p.dim));
      g.fwd_dim_splits = int(std::min<std::int64_t>(4, p.dim));
      configs.push_back(g);
      if (scanned) {  // the scan across warps, and rounds on every row longer than 192 steps
        g.walk_team_size = 64;
        g.chunk_len = 3;
        configs.push_back(g);
      }
    }
  }
  return configs;
}

const std::vector<ScanCase>& scan_cases() {
  static const std::vector<ScanCase> cases = {
      {1, 1, 1, 1, false, false, true, false},     // L = N = H = 1
      {2, 3, 1, 7, true, true, true, true},        // N = 1
      {1, 1, 5, 19, false, true, true, true},      // H = 1
      {2, 5, 3, 37, true, false, true, false},     // seqlen prime
      {1, 4, 9, 100, true, true, true, true},      // more states than any group
      {3, 2, 2, 64, false, false, false, false},   // forward only
      {2, 3, 4, 5, true, true, true, true},        // seqlen shorter than most chunks
      {1, 2, 3, 40, true, true, true, true, true}, // every A_bar = 0
  };
  return cases;
}

TEST(KernelS7Scan, MatchesOracleForEveryImplementationAndConfig) {
  std::uint64_t seed = 1;
  for (const auto& sc : scan_cases()) {
    const S7ScanProblem p = problem_of(sc);
    const TensorMap in = scan_inputs(p, sc.critical_A, seed++);
    const TensorMap expected = ref::s7_scan(p, in);
    const TensorMap bounds = ref::s7_scan_error_bound(p, in);
    ASSERT_EQ(names_of(bounds), names_of(expected));
    for (auto backend : kokkos_backends())
      for (const auto& config : scan_configs(p, backend)) {
        const std::string what = "b,H,N,L = " + std::to_string(sc.batch) + "," + std::to_string(sc.dim) + "," +
                                 std::to_string(sc.dstate) + "," + std::to_string(sc.seqlen) + " on " +
                                 to_string(backend) + " with " + config.to_json().dump();
        ASSERT_EQ(config.invalid_reason(p, backend), "") << what;
        const TensorMap got = run_s7_scan(p, in, backend, config);
        EXPECT_EQ(names_of(got), names_of(expected)) << what;
        const auto comparisons = ref::compare_with_bounds(got, expected, bounds);
        ASSERT_TRUE(ref::all_pass(comparisons)) << what << "\n" << ref::describe(comparisons);
      }
  }
}

TEST(KernelS7Scan, HeuristicAndCandidateConfigsMatchOracle) {
  const ScanCase sc{2, 6, 5, 300, true, true, true, true};
  const S7ScanProblem p = problem_of(sc);
  const TensorMap in = scan_inputs(p, false, 77);
  for (auto backend : kokkos_backends()) {
    expect_matches_oracle(p, in, run_s7_scan(p, in, backend, s7_scan_heuristic_config(p, backend)),
                          "heuristic on " + to_string(backend));
    const auto candidates = s7_scan_candidate_configs(p, backend);
    EXPECT_GE(candidates.size(), 8u);
    for (std::size_t i = 0; i < candidates.size(); i += 5)
      expect_matches_oracle(p, in, run_s7_scan(p, in, backend, candidates[i]),
                            "candidate " + candidates[i].to_json().dump() + " on " + to_string(backend));
  }
}

// At |A| = 1/√2 the state forgets its past completely (A_bar = 0): x_t = Bu_t, the adjoint is
// Σ_h C·dout alone, and dA = g·x_{t−1}·2A/(A²+½)² stays finite (lrnnx divides by A_bar there).
TEST(KernelS7Scan, BackwardFiniteAndCorrectWhereABarIsZero) {
  const ScanCase sc{2, 3, 4, 33, true, true, true, true, true};
  const S7ScanProblem p = problem_of(sc);
  const TensorMap in = scan_inputs(p, true, 5);
  for (double a : require(in, "A").values) ASSERT_EQ(std::fabs(a), kCritical);
  for (auto backend : kokkos_backends())
    for (const std::string& impl : s7_scan_implementations()) {
      S7ScanConfig c = s7_scan_heuristic_config(p, backend);
      c.impl = impl;
      c.chunk_len = 4;
      const TensorMap got = run_s7_scan(p, in, backend, c);
      for (const auto& [name, t] : got)
        for (double v : t.values) ASSERT_TRUE(std::isfinite(v)) << name << " on " << to_string(backend);
      expect_matches_oracle(p, in, got, impl + " at A_bar = 0 on " + to_string(backend));
      // dA is not trivially zero there: its slope 2A/(A²+½)² = ±√2 is not.
      double largest_dA = 0;
      for (double v : got.at("dA").values) largest_dA = std::max(largest_dA, std::fabs(v));
      EXPECT_GT(largest_dA, 0.01);
    }
}

// Same config twice, Serial against OpenMP (1 against N threads), and the sequential walk
// against itself at another chunk length: bitwise identical, because every sum has a fixed order
// set by the config alone.
TEST(KernelS7Scan, BitwiseRepeatableAndIndependentOfThreadCount) {
  const ScanCase sc{3, 5, 6, 131, true, true, true, true};
  const S7ScanProblem p = problem_of(sc);
  const TensorMap in = scan_inputs(p, false, 11);
  const auto backends = host_backends();
  for (const std::string& impl : s7_scan_implementations()) {
    S7ScanConfig c = s7_scan_heuristic_config(p, backends.front());
    c.impl = impl;
    c.chunk_len = 16;
    c.bwd_dim_splits = 2;
    c.fwd_dim_splits = 3;
    const TensorMap first = run_s7_scan(p, in, backends.front(), c);
    std::string why;
    for (auto backend : backends) {
      const TensorMap again = run_s7_scan(p, in, backend, c);
      EXPECT_TRUE(bitwise_equal(first, again, why)) << impl << " on " << to_string(backend) << ": " << why;
    }
    for (auto backend : kokkos_backends()) {  // each backend against itself, CUDA included
      S7ScanConfig own = with_impl(s7_scan_heuristic_config(p, backend), impl);
      own.bwd_dim_splits = 2;
      own.fwd_dim_splits = 2;
      const TensorMap once = run_s7_scan(p, in, backend, own);
      EXPECT_TRUE(bitwise_equal(once, run_s7_scan(p, in, backend, own), why)) << impl << " repeated on "
                                                                              << to_string(backend) << ": " << why;
    }
    if (impl == "sequential") {
      S7ScanConfig other = c;
      other.chunk_len = 7;
      other.items_per_thread = 5;
      EXPECT_TRUE(bitwise_equal(first, run_s7_scan(p, in, backends.back(), other), why))
          << "sequential walk changed with chunk_len: " << why;
      // scanned with one thread a team has nothing to scan: each round's carry walks its chunk in
      // order, the same operations as the sequential walk.
      other.impl = "scanned";
      other.walk_team_size = 1;
      EXPECT_TRUE(bitwise_equal(first, run_s7_scan(p, in, backends.back(), other), why))
          << "scanned with teams of one differs from sequential: " << why;
    }
  }
}

// The bridges poison every output with NaN before the kernels run; a kernel that skips an element
// leaves a NaN, which compare_with_bounds never passes. Here we check the bridge itself keeps the
// poison visible: a forward-only run must not return gradients, and every returned value is finite.
TEST(KernelS7Scan, EveryPoisonedOutputIsOverwritten) {
  for (const auto& sc : scan_cases()) {
    const S7ScanProblem p = problem_of(sc);
    const TensorMap in = scan_inputs(p, sc.critical_A, 99);
    for (auto backend : kokkos_backends())
      for (const auto& c : scan_configs(p, backend)) {
        const TensorMap got = run_s7_scan(p, in, backend, c);
        for (const auto& [name, t] : got)
          for (std::int64_t i = 0; i < t.numel(); ++i)
            ASSERT_FALSE(std::isnan(t[i])) << name << "[" << i << "] not written, " << c.to_json().dump();
      }
  }
}

TEST(KernelS7Scan, DeviceLevelApiAndWorkspace) {
  const ScanCase sc{2, 3, 5, 50, true, false, true, false};
  const S7ScanProblem p = problem_of(sc);
  for (const std::string& impl : s7_scan_implementations()) {
    S7ScanConfig c = s7_scan_heuristic_config(p, BackendKind::serial);
    c.impl = impl;
    c.chunk_len = 8;
    c.bwd_dim_splits = 2;
    c.fwd_dim_splits = 2;
    auto t = s7_scan_allocate<Kokkos::Serial>(p, c);
    EXPECT_EQ(t.workspace.bytes(), s7_scan_workspace_bytes(p, c)) << impl;
    EXPECT_GT(s7_scan_extra_bytes(p, c, Pass::forward), 0);
    EXPECT_GT(s7_scan_extra_bytes(p, c, Pass::backward), s7_scan_extra_bytes(p, c, Pass::forward));
    // The backward needs the forward's states.
    EXPECT_THROW(s7_scan_backward(p, c, t, Kokkos::Serial()), std::logic_error);
    s7_scan_forward(p, c, t, Kokkos::Serial());
    s7_scan_backward(p, c, t, Kokkos::Serial());
    Kokkos::fence();
    // A workspace for another config is refused.
    S7ScanConfig other = c;
    other.bwd_dim_splits = 3;
    EXPECT_THROW(s7_scan_backward(p, other, t, Kokkos::Serial()), std::invalid_argument);
    other = c;
    other.fwd_dim_splits = 3;
    EXPECT_THROW(s7_scan_forward(p, other, t, Kokkos::Serial()), std::invalid_argument);
  }
}

TEST(KernelS7Scan, ConfigValidationAndJson) {
  S7ScanProblem p;
  p.batch = 2; p.dim = 4; p.dstate = 3; p.seqlen = 10;
  S7ScanConfig c = s7_scan_heuristic_config(p, BackendKind::serial);
  EXPECT_EQ(c.invalid_reason(p, BackendKind::serial), "");
  EXPECT_EQ(S7ScanConfig::from_json(c.to_json()), c);
  EXPECT_EQ(c.to_json().size(), s7_scan_config_fields().size());
  EXPECT_THROW(S7ScanConfig::from_json({{"chunk_length", 4}}), std::invalid_argument);
  EXPECT_THROW(S7ScanConfig::from_json({{"chunk_len", "four"}}), std::invalid_argument);
  EXPECT_EQ(S7ScanConfig::from_json({{"chunk_len", 4}}).chunk_len, 4);

  auto broken = [&](auto mutate) {
    S7ScanConfig b = c;
    mutate(b);
    return b.invalid_reason(p, BackendKind::serial);
  };
  EXPECT_NE(broken([](S7ScanConfig& b) { b.impl = "magic"; }), "");
  EXPECT_NE(broken([](S7ScanConfig& b) { b.states_per_thread = 3; }), "");
  EXPECT_NE(broken([](S7ScanConfig& b) { b.dims_per_thread = 16; }), "");
  EXPECT_NE(broken([](S7ScanConfig& b) { b.chunk_len = 0; }), "");
  EXPECT_NE(broken([](S7ScanConfig& b) { b.bwd_dim_splits = 5; }), "");
  EXPECT_NE(broken([](S7ScanConfig& b) { b.fwd_dim_splits = 0; }), "");
  EXPECT_NE(broken([](S7ScanConfig& b) { b.fwd_dim_splits = 5; }), "");
  EXPECT_NE(broken([](S7ScanConfig& b) { b.team_size = 2; }), "");  // Serial runs teams of one
  EXPECT_NE(broken([](S7ScanConfig& b) { b.chunk_len = 70000; }), "");
  EXPECT_NE(broken([](S7ScanConfig& b) { b.impl = "scanned"; b.chunk_len = kS7WalkBatch + 1; }), "");
  EXPECT_EQ(broken([](S7ScanConfig& b) { b.impl = "scanned"; b.chunk_len = kS7WalkBatch; }), "");
  EXPECT_NE(c.invalid_reason(p, BackendKind::reference), "");
  S7ScanConfig bad = c;
  bad.impl = "magic";
  EXPECT_THROW(run_s7_scan(p, scan_inputs(p, false, 3), BackendKind::serial, bad), std::invalid_argument);

  // `--impl NAME` runs the heuristic with only its impl replaced: valid for every impl.
  for (auto backend : compiled_kokkos_backends())
    for (const std::string& impl : s7_scan_implementations()) {
      S7ScanConfig h = s7_scan_heuristic_config(p, backend);
      h.impl = impl;
      EXPECT_EQ(h.invalid_reason(p, backend), "") << impl << " on " << to_string(backend);
    }

  // A walk team is valid only as large as every walk kernel launches (a finding of `check s7_scan`
  // on the H200: a "scanned" team of 1024 passed validation and the launch refused it).
  for (auto backend : compiled_kokkos_backends()) {
    const int largest = s7_walk_max_team_size(backend);
    ASSERT_GE(largest, 1) << to_string(backend);
    EXPECT_LE(largest, s7_max_team_size(backend)) << to_string(backend);
    S7ScanProblem walk = p;
    walk.seqlen = 3 * largest + 1;  // rounds of the largest team, the last one short
    walk.with_backward = true;
    for (const std::string& impl : s7_scan_implementations()) {
      S7ScanConfig w = with_impl(s7_scan_heuristic_config(walk, backend), impl);
      w.walk_team_size = largest + 1;
      EXPECT_NE(w.invalid_reason(walk, backend), "") << impl << " on " << to_string(backend);
      w.walk_team_size = largest;
      ASSERT_EQ(w.invalid_reason(walk, backend), "") << impl << " on " << to_string(backend);
      const TensorMap in = scan_inputs(walk, false, 21);
      expect_matches_oracle(walk, in, run_s7_scan(walk, in, backend, w),
                            impl + " with the largest walk team on " + to_string(backend));
    }
  }

  // On the GPU a big shape has at least 8 candidates (only checkable where CUDA is compiled in).
  S7ScanProblem big;
  big.batch = 8; big.dim = 256; big.dstate = 64; big.seqlen = 4096;
  for (auto backend : compiled_kokkos_backends()) {
    const auto candidates = s7_scan_candidate_configs(big, backend);
    EXPECT_GE(candidates.size(), 8u) << to_string(backend);
    EXPECT_EQ(candidates.front(), s7_scan_heuristic_config(big, backend));
    for (const auto& cand : candidates) EXPECT_EQ(cand.invalid_reason(big, backend), "");
  }
}

// ------------------------------------------------------------------------------------------
// s7_inner

S7InnerProblem inner_problem(std::int64_t batch, std::int64_t seqlen, std::int64_t dim, std::int64_t dstate,
                             bool backward) {
  S7InnerProblem p;
  p.batch = batch;
  p.seqlen = seqlen;
  p.dim = dim;
  p.dstate = dstate;
  p.with_backward = backward;
  return p;
}

// Weights scaled like nn.Linear's default (±1/√fan_in) so activations stay O(1); base_params
// near ±1/√2 so that some A land at A_bar ≈ 0.
TensorMap inner_inputs(const S7InnerProblem& p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  TensorMap in;
  for (const auto& spec : p.tensors()) {
    if (spec.role != TensorRole::input && spec.role != TensorRole::grad_input) continue;
    Tensor t(spec.shape);
    const bool weight = spec.name.find("weight") != std::string::npos;
    fill(t, rng, weight ? 1.0 / std::sqrt(double(p.dim)) : 1.0);
    in[spec.name] = std::move(t);
  }
  auto& base = in["base_params"].values;
  for (std::size_t n = 0; n < base.size(); ++n) base[n] = (n % 2 ? -1 : 1) * kCritical + 0.1 * base[n];
  return in;
}

void expect_inner_matches_oracle(const S7InnerProblem& p, const TensorMap& in, const TensorMap& got,
                                 const std::string& what) {
  const TensorMap expected = ref::s7_inner(p, in);
  const TensorMap bounds = ref::s7_inner_error_bound(p, in);
  EXPECT_EQ(names_of(got), names_of(expected)) << what;
  EXPECT_EQ(names_of(bounds), names_of(expected)) << what;  // every tensor is compared
  const auto comparisons = ref::compare_with_bounds(got, expected, bounds);
  EXPECT_TRUE(ref::all_pass(comparisons)) << what << "\n" << ref::describe(comparisons);
}

std::vector<S7InnerConfig> host_inner_configs(const S7InnerProblem& p, BackendKind backend) {
  std::vector<S7InnerConfig> configs;
  for (const std::string& impl : s7_inner_implementations()) {
    S7InnerConfig c = s7_inner_heuristic_config(p, backend);
    c.scan.impl = impl;
    c.scan.chunk_len = 3;
    configs.push_back(c);
    c.elementwise_items_per_thread = 5;
    c.transpose_tile = 3;
    c.reduce_block = 2;
    c.scan.states_per_thread = 8;
    c.scan.dims_per_thread = 2;
    c.scan.bwd_dim_splits = std::min<int>(2, int(p.dim));
    configs.push_back(c);
  }
  return configs;
}

TEST(KernelS7Inner, MatchesOracleForEveryImplementationAndConfig) {
  struct Shape4 {
    std::int64_t batch, seqlen, dim, dstate;
    bool backward;
  };
  const Shape4 shapes[] = {{1, 1, 1, 1, true}, {2, 7, 3, 2, true}, {1, 12, 4, 3, false}, {2, 33, 5, 4, true},
                           {1, 5, 1, 6, true}};
  std::uint64_t seed = 100;
  for (const auto& s : shapes) {
    const S7InnerProblem p = inner_problem(s.batch, s.seqlen, s.dim, s.dstate, s.backward);
    const TensorMap in = inner_inputs(p, seed++);
    for (auto backend : kokkos_backends())
      for (const auto& c : host_inner_configs(p, backend)) {
        const std::string what = "b,L,Dm,N = " + std::to_string(s.batch) + "," + std::to_string(s.seqlen) + "," +
                                 std::to_string(s.dim) + "," + std::to_string(s.dstate) + " on " +
                                 to_string(backend) + " with " + c.to_json().dump();
        ASSERT_EQ(c.invalid_reason(p, backend), "") << what;
        const TensorMap got = run_s7_inner(p, in, backend, c);
        for (const auto& [name, t] : got)
          for (double v : t.values) ASSERT_FALSE(std::isnan(v)) << name << " not written: " << what;
        expect_inner_matches_oracle(p, in, got, what);
      }
  }
}

TEST(KernelS7Inner, BitwiseRepeatableAndIndependentOfThreadCount) {
  const S7InnerProblem p = inner_problem(2, 40, 6, 3, true);
  const TensorMap in = inner_inputs(p, 7);
  const auto backends = host_backends();
  for (const std::string& impl : s7_inner_implementations()) {
    S7InnerConfig c = s7_inner_heuristic_config(p, backends.front());
    c.scan.impl = impl;
    c.scan.chunk_len = 8;
    const TensorMap first = run_s7_inner(p, in, backends.front(), c);
    std::string why;
    for (auto backend : backends)
      EXPECT_TRUE(bitwise_equal(first, run_s7_inner(p, in, backend, c), why))
          << impl << " on " << to_string(backend) << ": " << why;
    for (auto backend : kokkos_backends()) {  // each backend against itself, CUDA included
      S7InnerConfig own = s7_inner_heuristic_config(p, backend);
      own.scan = with_impl(own.scan, impl);
      const TensorMap once = run_s7_inner(p, in, backend, own);
      EXPECT_TRUE(bitwise_equal(once, run_s7_inner(p, in, backend, own), why))
          << impl << " repeated on " << to_string(backend) << ": " << why;
    }
  }
}

TEST(KernelS7Inner, DeviceLevelApiConfigAndWorkspace) {
  const S7InnerProblem p = inner_problem(2, 9, 3, 2, true);
  const S7InnerConfig c = s7_inner_heuristic_config(p, BackendKind::serial);
  EXPECT_EQ(S7InnerConfig::from_json(c.to_json()), c);
  EXPECT_EQ(c.to_json().size(), s7_inner_config_fields().size());
  EXPECT_EQ(c.impl(), c.scan.impl);
  EXPECT_EQ(s7_inner_implementations(), s7_scan_implementations());
  EXPECT_THROW(S7InnerConfig::from_json({{"tile", 4}}), std::invalid_argument);
  EXPECT_EQ(S7InnerConfig::from_json({{"impl", "chunked"}, {"reduce_block", 7}}).scan.impl, "chunked");
  S7InnerConfig bad = c;
  bad.gemm_math = "tf32";
  EXPECT_NE(bad.invalid_reason(p, BackendKind::serial), "");
  bad = c;
  bad.transpose_tile = 200;  // scratch
  EXPECT_NE(bad.invalid_reason(p, BackendKind::serial), "");
  EXPECT_FALSE(s7_inner_candidate_configs(p, BackendKind::serial).empty());

  auto t = s7_inner_allocate<Kokkos::Serial>(p, c);
  EXPECT_EQ(t.workspace.bytes(), s7_inner_workspace_bytes(p, c));
  EXPECT_THROW(s7_inner_backward(p, c, t, Kokkos::Serial()), std::logic_error);
  s7_inner_forward(p, c, t, Kokkos::Serial());
  s7_inner_backward(p, c, t, Kokkos::Serial());
  Kokkos::fence();
}

// ------------------------------------------------------------------------------------------
// The matrix-product interface against a naive float64 product, every transpose combination,
// padded leading dimensions, alpha/beta, a strided batch.

TEST(KernelMatmul, MatchesNaiveProductForEveryTransposeCombination) {
  std::mt19937_64 rng(3);
  const std::int64_t m = 5, n = 7, k = 9, pad = 3, batch = 3;
  for (auto backend : host_backends())
    for (Transpose ta : {Transpose::no, Transpose::yes})
      for (Transpose tb : {Transpose::no, Transpose::yes}) {
        const std::int64_t a_rows = ta == Transpose::no ? m : k, a_cols = ta == Transpose::no ? k : m;
        const std::int64_t b_rows = tb == Transpose::no ? k : n, b_cols = tb == Transpose::no ? n : k;
        const std::int64_t lda = a_cols + pad, ldb = b_cols + pad, ldc = n + pad;
        const std::int64_t sa = a_rows * lda + 1, sb = b_rows * ldb + 2, sc = m * ldc + 3;
        std::uniform_real_distribution<float> d(-1, 1);
        std::vector<float> A(std::size_t(batch * sa)), B(std::size_t(batch * sb)), C(std::size_t(batch * sc));
        for (auto* v : {&A, &B, &C})
          for (auto& x : *v) x = d(rng);
        const std::vector<float> C0 = C;
        const float alpha = 0.75f, beta = -0.5f;
        // Host backends: the device pointers are host pointers.
        gemm_strided_batched(backend, ta, tb, m, n, k, alpha, A.data(), lda, sa, B.data(), ldb, sb, beta, C.data(), ldc,
                             sc, batch);
        for (std::int64_t q = 0; q < batch; ++q)
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
              double sum = 0, magnitude = 0;
              for (std::int64_t r = 0; r < k; ++r) {
                const double a = ta == Transpose::no ? A[q * sa + i * lda + r] : A[q * sa + r * lda + i];
                const double b = tb == Transpose::no ? B[q * sb + r * ldb + j] : B[q * sb + j * ldb + r];
                sum += a * b;
                magnitude += std::fabs(a * b);
              }
              const double expected = alpha * sum + beta * double(C0[q * sc + i * ldc + j]);
              const double bound = 8 * 0x1p-24 * (k + 2) * (std::fabs(alpha) * magnitude + std::fabs(beta * C0[q * sc + i * ldc + j]));
              EXPECT_NEAR(C[q * sc + i * ldc + j], expected, bound)
                  << to_string(backend) << " ta=" << int(ta) << " tb=" << int(tb) << " at " << q << "," << i << "," << j;
            }
        // Padding between rows and between batch entries is never touched.
        for (std::int64_t q = 0; q < batch; ++q)
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = n; j < ldc; ++j) EXPECT_EQ(C[q * sc + i * ldc + j], C0[q * sc + i * ldc + j]);
        // Single product, repeated: bitwise identical.
        std::vector<float> C1 = C0, C2 = C0;
        gemm(backend, ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, C1.data(), ldc);
        gemm(backend, ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, C2.data(), ldc);
        EXPECT_EQ(0, std::memcmp(C1.data(), C2.data(), C1.size() * sizeof(float)));
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j) EXPECT_EQ(C1[i * ldc + j], C[i * ldc + j]);
      }
}

TEST(KernelMatmul, RejectsBadShapes) {
  std::vector<float> x(64, 1.0f);
  const auto backend = host_backends().front();
  EXPECT_THROW(gemm(backend, Transpose::no, Transpose::no, 2, 2, 3, 1, x.data(), 2, x.data(), 2, 0, x.data(), 2),
               std::invalid_argument);  // lda < k
  EXPECT_THROW(gemm(backend, Transpose::no, Transpose::no, 2, 3, 2, 1, x.data(), 2, x.data(), 3, 0, x.data(), 2),
               std::invalid_argument);  // ldc < n
  EXPECT_THROW(gemm(BackendKind::reference, Transpose::no, Transpose::no, 1, 1, 1, 1, x.data(), 1, x.data(), 1, 0,
                    x.data(), 1),
               std::invalid_argument);
#if defined(SCANLAB_HAVE_OPENBLAS)
  EXPECT_EQ(gemm_library(backend), "openblas");
#else
  EXPECT_EQ(gemm_library(backend), "portable");  // the cuda build's host spaces
#endif
}

}  // namespace
