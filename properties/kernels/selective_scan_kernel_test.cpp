// The selective_scan and state_space_v1 kernels against the float64 oracle, plain gtest: every
// compiled host backend (Serial, OpenMP) × both implementations × configs that reach the dstate
// specialisations and the generic path, several teams per group, several threads per team,
// seqlen not a multiple of the chunk, seqlen < chunk, L = 1, N = 1, groups, time-invariant B/C
// and every option. Forward and backward must agree with the oracle within its error bound,
// every output must be written (the bridge poisons them with NaN), and runs must be bitwise
// repeatable — also across Serial and OpenMP, i.e. independent of the number of threads. The
// RapidCheck families (properties/selective_scan_properties.cpp) fuzz the same interface.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/selective_scan_config.hpp"
#include "kernels/sfu.hpp"
#include "reference/error_bound.hpp"
#include "reference/selective_scan.hpp"
#include "reference/state_space_v1.hpp"

namespace scanlab {
namespace {

using kernels::SelectiveScanConfig;

// Every compiled Kokkos backend: Serial and OpenMP here, CUDA too in the cuda build on the H200.
std::vector<BackendKind> kernel_backends() { return compiled_kokkos_backends(); }

Tensor random_tensor(const Shape& shape, double lo, double hi, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(lo, hi);
  Tensor t(shape);
  for (auto& v : t.values) v = dist(rng);
  return t;
}

// Inputs in the regimes that matter: delta across softplus' range (including beyond its
// threshold of 20 when asked), A from near 0 to strongly decaying, gates of either sign; with
// `extreme_activations`, softplus and the gate's sigmoid far into their tails (subnormal dt and
// σ; e^-z would overflow in 1 / (1 + e^-z), which set σ to 0 where silu's z·σ is a normal float).
TensorMap random_inputs(const SelectiveScanProblem& p, std::uint64_t seed, bool softplus_threshold = false,
                        bool extreme_activations = false) {
  std::mt19937_64 rng(seed);
  TensorMap in;
  const Shape bdl{p.batch, p.dim, p.seqlen}, state{p.batch, p.dim, p.dstate};
  in["u"] = random_tensor(bdl, -1.5, 1.5, rng);
  if (softplus_threshold) in["delta"] = random_tensor(bdl, 19.0, 21.0, rng);
  else if (p.delta_softplus && extreme_activations) in["delta"] = random_tensor(bdl, -100.0, 19.0, rng);
  else if (p.delta_softplus) in["delta"] = random_tensor(bdl, -4.0, 1.0, rng);
  else in["delta"] = random_tensor(bdl, 0.001, 0.3, rng);
  in["A"] = random_tensor({p.dim, p.dstate}, -3.0, -0.01, rng);
  if (softplus_threshold) in["A"] = random_tensor({p.dim, p.dstate}, -0.05, -0.001, rng);
  in["B"] = random_tensor(p.B_shape(), -1.0, 1.0, rng);
  in["C"] = random_tensor(p.C_shape(), -1.0, 1.0, rng);
  if (p.has_D) in["D"] = random_tensor({p.dim}, -1.0, 1.0, rng);
  if (p.has_z) in["z"] = random_tensor(bdl, extreme_activations ? -100.0 : -4.0, extreme_activations ? 100.0 : 4.0, rng);
  if (p.has_delta_bias) in["delta_bias"] = random_tensor({p.dim}, -0.5, 0.5, rng);
  if (p.has_initial_state) in["initial_state"] = random_tensor(state, -1.0, 1.0, rng);
  if (p.with_backward) in["dout"] = random_tensor(bdl, -1.0, 1.0, rng);
  if (p.has_dlast_state) in["dlast_state"] = random_tensor(state, -1.0, 1.0, rng);
  return in;
}

struct Case {
  std::string name;
  SelectiveScanProblem p;
  bool softplus_threshold = false;
  bool extreme_activations = false;
};

SelectiveScanProblem problem(std::int64_t batch, std::int64_t dim, std::int64_t dstate, std::int64_t seqlen,
                             std::int64_t groups = 1) {
  SelectiveScanProblem p;
  p.batch = batch; p.dim = dim; p.dstate = dstate; p.seqlen = seqlen; p.groups = groups;
  return p;
}

void all_options(SelectiveScanProblem& p) {
  p.has_D = p.has_z = p.has_delta_bias = p.delta_softplus = p.has_initial_state = true;
  p.with_backward = p.has_dlast_state = true;
}

// dt of channel d from a raw delta value, as the op forms it (delta_bias, then softplus; the inputs
// that use this stay below softplus' threshold of 20).
double dt_of(const SelectiveScanProblem& p, const TensorMap& in, std::int64_t d, double raw) {
  const double x = raw + (p.has_delta_bias ? in.at("delta_bias").at({d}) : 0.0);
  return p.delta_softplus ? std::log1p(std::exp(x)) : x;
}

// A float32 result (held in a double) that is subnormal: nonzero and below FLT_MIN.
bool is_subnormal_f32(double v) {
  v = std::fabs(v);
  return v > 0.0 && v < double(std::numeric_limits<float>::min());
}

std::vector<Case> cases() {
  std::vector<Case> out;
  { Case c{"all_options", problem(2, 6, 4, 37)}; all_options(c.p); out.push_back(c); }
  { Case c{"plain_forward_only", problem(2, 5, 2, 23)}; out.push_back(c); }
  { Case c{"plain_backward_no_dlast", problem(1, 7, 8, 41)}; c.p.with_backward = true; out.push_back(c); }
  { Case c{"groups3_odd_dstate", problem(2, 9, 3, 29, 3)}; all_options(c.p); out.push_back(c); }
  { Case c{"groups2_B_fixed", problem(1, 8, 4, 19, 2)}; all_options(c.p); c.p.B_per_step = false; out.push_back(c); }
  { Case c{"groups2_C_fixed", problem(2, 4, 2, 17, 2)}; all_options(c.p); c.p.C_per_step = false; out.push_back(c); }
  { Case c{"BC_fixed", problem(2, 5, 16, 33)}; all_options(c.p); c.p.B_per_step = c.p.C_per_step = false; out.push_back(c); }
  { Case c{"seqlen1_dstate1", problem(3, 4, 1, 1)}; all_options(c.p); out.push_back(c); }
  { Case c{"dstate1_long", problem(1, 3, 1, 70)}; all_options(c.p); c.p.has_z = false; out.push_back(c); }
  { Case c{"gelu_tanh", problem(1, 4, 2, 13)}; all_options(c.p); c.p.gate_activation = GateActivation::gelu_tanh; out.push_back(c); }
  { Case c{"gelu_erf", problem(1, 4, 2, 13)}; all_options(c.p); c.p.gate_activation = GateActivation::gelu_erf; out.push_back(c); }
  { Case c{"identity_gate", problem(2, 3, 4, 11)}; all_options(c.p); c.p.gate_activation = GateActivation::identity; out.push_back(c); }
  { Case c{"softplus_threshold", problem(1, 4, 2, 16), true}; all_options(c.p); out.push_back(c); }
  { Case c{"activation_tails", problem(2, 4, 4, 24), false, true}; all_options(c.p); out.push_back(c); }
  { Case c{"dstate32", problem(1, 3, 32, 9)}; all_options(c.p); out.push_back(c); }
  { Case c{"many_chunks", problem(1, 2, 4, 173)}; all_options(c.p); out.push_back(c); }
  return out;
}

int static_dstate_of(const SelectiveScanProblem& p) {
  for (int n : kernels::selective_scan_static_dstates())
    if (n == p.dstate) return n;
  return 0;
}

// Configs that reach every path: both impls, the static and the generic dstate path, one and
// several channels per thread, several teams per group (for the forward and, separately, the
// backward), two threads per team where the backend allows it, both scratch levels, chunks
// shorter than seqlen and not dividing it, a chunk longer than seqlen, tiles shorter than a chunk.
std::vector<SelectiveScanConfig> configs_for(const SelectiveScanProblem& p, BackendKind backend) {
  const int spec = static_dstate_of(p);
  const int cpg = int(p.channels_per_group());
  auto make = [&](const char* impl, int dstate_static, int cpt, int ts, int tile, int chunk, int bcpt, int bts,
                  int level) {
    SelectiveScanConfig c;
    c.impl = impl; c.dstate_static = dstate_static; c.channels_per_team = cpt; c.team_size = ts;
    c.time_tile = tile; c.chunk_len = chunk; c.bwd_channels_per_team = bcpt; c.bwd_team_size = bts;
    c.scratch_level = level;
    return c;
  };
  std::vector<SelectiveScanConfig> all{
      make("sequential", spec, 4, 1, 8, 16, 4, 1, 0),
      make("sequential", 0, 3, 1, 5, 7, 2, 1, 1),
      make("sequential", spec, cpg, 1, 64, 1000, cpg, 1, 0),
      make("chunked", spec, 2, 1, 4, 8, 3, 1, 0),
      make("chunked", 0, 5, 1, 3, 5, 1, 1, 0),
      // (a backward team of 4 on CUDA: one thread's 8 channels at level 1 for every one of its
      // 270336 resident teams would be 18.8 GB, past half of a card under 40 GB)
      make("chunked", spec, 1, 1, 16, 1000, 8, backend == BackendKind::cuda ? 4 : 1, 1),
      make("sequential", spec, 4, 2, 6, 9, 4, 2, 0),
      make("chunked", 0, 6, 2, 4, 6, 2, 2, 0),
  };
  // Staged per-step inputs and outputs (stage_io) on every other config.
  for (std::size_t i = 1; i < all.size(); i += 2) all[i].stage_io = 1;
  // "tiled" where it applies: vector and scalar tile paths (tiles of 8; of 6, ending at chunk
  // boundaries of 8), two threads running two forward passes and a backward team of two, one tile
  // longer than the sequence.
  if (spec != 0 && p.B_per_step && p.C_per_step) {
    all.push_back(make("tiled", spec, 4, 1, 8, 16, 1, 1, 0));
    all.push_back(make("tiled", spec, 4, 2, 6, 8, 2, 2, 0));
    all.back().fast_activations = 1;  // the SFU activation forms (forward and backward)
    all.push_back(make("tiled", spec, cpg, 1, 64, 16, 1, 1, 0));
    // A channel's states split over two threads (one channel per pass, two passes; the shares
    // added when the tile is stored) and over four where dstate allows.
    for (int split : {2, 4}) {
      if (spec % split != 0) continue;
      SelectiveScanConfig c = make("tiled", spec, 2, split, 8, 8, 1, 1, 0);
      c.state_split = split;
      all.push_back(c);
      // The backward's likewise (the shares of du, ddt, y added in part order at each chunk's
      // end): one channel per team of two threads (a two-thread host runs it), chunks of 16;
      // two channels per team of eight threads, chunks of 8.
      const int bwd_channels = split == 2 ? 1 : 2;
      c = make("tiled", spec, 1, 1, 8, split == 2 ? 16 : 8, bwd_channels, bwd_channels * split, 0);
      c.bwd_state_split = split;
      c.fast_activations = split == 4 ? 1 : 0;
      all.push_back(c);
    }
    // The forward and the backward in time segments run side by side (each from the state or
    // end adjoint its summary pass gives it): three segments of uneven chunk counts over chunks of
    // 8, and segments of one tile or chunk each with a two-thread split and the SFU forms (more
    // segments asked for than there are), and the forward alone in segments of tiles of 4.
    SelectiveScanConfig segmented = make("tiled", spec, 4, 1, 8, 8, 2, 2, 0);
    segmented.bwd_time_segments = segmented.fwd_time_segments = 3;
    all.push_back(segmented);
    if (spec % 2 == 0) {
      segmented = make("tiled", spec, 2, 2, 8, 8, 1, 2, 0);
      segmented.state_split = segmented.bwd_state_split = 2;
      segmented.fast_activations = 1;
      segmented.bwd_time_segments = segmented.fwd_time_segments = 64;
      all.push_back(segmented);
    }
    segmented = make("tiled", spec, 4, 1, 4, 16, 1, 1, 0);
    segmented.fwd_time_segments = 5;
    all.push_back(segmented);
    // The backward walking 2 or 4 states at once (one thread a channel, chunks of 8): teams of
    // one channel; of four with the SFU forms; in three time segments (the summary pass walks one
    // state at a time beside it). At 2, with the chunk inputs staged too (bwd_stage_inputs):
    // teams of one channel in three segments (their summary pass whole, and in blocks of three
    // and of one chunk), of four whole.
    for (int interleave : {2, 4}) {
      if (spec % interleave != 0) continue;
      SelectiveScanConfig c = make("tiled", spec, 4, 1, 8, 8, 1, 1, 0);
      c.bwd_state_interleave = interleave;
      all.push_back(c);
      if (interleave == 2) {
        c.bwd_stage_inputs = 1;
        c.bwd_time_segments = 3;
        all.push_back(c);
        for (int blocks : {3, 1000}) {
          c.bwd_summary_blocks = blocks;
          all.push_back(c);
        }
      }
      c = make("tiled", spec, 4, 1, 8, 8, 4, 4, 0);
      c.bwd_state_interleave = interleave;
      c.fast_activations = 1;
      all.push_back(c);
      if (interleave == 2) {
        c.bwd_stage_inputs = 1;
        all.push_back(c);
        c.bwd_stage_inputs = 0;
      }
      c.bwd_time_segments = 3;
      all.push_back(c);
    }
    // The forward with each thread's inputs and outputs in registers (direct_io): four passes of
    // one thread; two threads over tiles of 6 (short blocks at every tile's end, chunk starts of 8
    // inside a block) with the SFU forms; one tile longer than the sequence.
    for (SelectiveScanConfig direct : {make("tiled", spec, 4, 1, 8, 16, 1, 1, 0), make("tiled", spec, 4, 2, 6, 8, 2, 2, 0),
                                       make("tiled", spec, cpg, 1, 64, 16, 1, 1, 0)}) {
      direct.direct_io = 1;
      direct.fast_activations = direct.time_tile == 6 ? 1 : 0;
      all.push_back(direct);
    }
    // ... and with two threads per channel (the partners swap dt and shares of y): three passes
    // of one channel over tiles of 6 with the SFU forms, two channels a pass over tiles of 4 (an
    // inactive pair where a group's channels run out); on CUDA teams of whole warps (the shuffle's
    // precondition), 32 channels a pass, so most pairs of a test's small groups are inactive.
    if (spec % 2 == 0) {
      const bool cuda = backend == BackendKind::cuda;
      for (SelectiveScanConfig direct : {make("tiled", spec, cuda ? 64 : 3, cuda ? 64 : 2, 6, 8, 1, 1, 0),
                                         make("tiled", spec, cuda ? 32 : 6, cuda ? 64 : 4, 4, 16, 1, 1, 0)}) {
        direct.direct_io = 1;
        direct.state_split = 2;
        direct.fast_activations = direct.time_tile == 6 ? 1 : 0;
        all.push_back(direct);
      }
    }
    // ... and with the team's rows staged through scratch (direct_io 2): four passes of one thread
    // over tiles of 8 (short tiles and blocks where seqlen is not a multiple of 8, chunk starts of
    // 16); on CUDA one warp of 32 channels over tiles of 32 (most rows inactive in small groups),
    // and in three segments.
    {
      const bool cuda = backend == BackendKind::cuda;
      for (SelectiveScanConfig rows : {make("tiled", spec, 4, 1, 8, 16, 1, 1, 0), make("tiled", spec, cuda ? 32 : 2, cuda ? 32 : 2, 32, 8, 1, 1, 0)}) {
        rows.direct_io = 2;
        all.push_back(rows);
        rows.fwd_time_segments = 3;
        rows.fast_activations = 1;
        all.push_back(rows);
      }
    }
    // ... and in time segments (each walk from the start state its summary pass carries to it):
    // one thread a channel in three segments of uneven tile counts over tiles of 4; two threads a
    // channel with the SFU forms in segments of one tile each (more asked for than there are).
    {
      SelectiveScanConfig direct = make("tiled", spec, 4, 1, 4, 8, 1, 1, 0);
      direct.direct_io = 1;
      direct.fwd_time_segments = 3;
      all.push_back(direct);
      if (spec % 2 == 0) {
        const bool cuda = backend == BackendKind::cuda;
        direct = make("tiled", spec, cuda ? 32 : 2, cuda ? 64 : 4, 8, 8, 1, 1, 0);
        direct.direct_io = 1;
        direct.state_split = 2;
        direct.fast_activations = 1;
        direct.fwd_time_segments = 64;
        all.push_back(direct);
      }
    }
  }
  const auto limits = kernels::selective_scan_backend_limits(backend);
  std::vector<SelectiveScanConfig> valid;
  for (const auto& c : all) {
    if (c.team_size > limits.max_team_size || c.bwd_team_size > limits.max_team_size) continue;
    const std::string why = c.invalid_reason(p, backend);
    EXPECT_EQ(why, "") << c.to_json().dump();
    if (why.empty()) valid.push_back(c);
  }
  return valid;
}

std::set<std::string> keys(const TensorMap& m) {
  std::set<std::string> k;
  for (const auto& [name, t] : m) k.insert(name);
  return k;
}

void expect_all_finite(const TensorMap& got, const std::string& where) {
  for (const auto& [name, t] : got) {
    std::int64_t bad = 0;
    for (double v : t.values) bad += std::isfinite(v) ? 0 : 1;
    EXPECT_EQ(bad, 0) << where << ": " << name << " has " << bad << " elements never written (NaN poison) or non-finite";
  }
}

void expect_bitwise_equal(const TensorMap& a, const TensorMap& b, const std::string& where) {
  ASSERT_EQ(keys(a), keys(b)) << where;
  for (const auto& [name, t] : a) {
    const Tensor& u = b.at(name);
    ASSERT_EQ(t.shape, u.shape) << where << ": " << name;
    // Where and by how much, not only how often: a rounding-sized difference and a stale value
    // point at different causes.
    std::int64_t differ = 0, first = -1;
    double largest = 0.0;
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      if (t[i] == u[i] || (std::isnan(t[i]) && std::isnan(u[i]))) continue;
      if (differ++ == 0) first = i;
      largest = std::max(largest, std::fabs(t[i] - u[i]));
    }
    if (differ == 0) continue;
    char detail[160];
    std::snprintf(detail, sizeof detail, "first at flat index %lld: %.9g (%a) against %.9g (%a); largest |difference| %.3g",
                  static_cast<long long>(first), t[first], t[first], u[first], u[first], largest);
    ADD_FAILURE() << where << ": " << name << " differs in " << differ << " of " << t.numel() << " elements, "
                  << detail;
  }
}

std::string describe(const Case& c, BackendKind backend, const SelectiveScanConfig& config) {
  return c.name + " on " + to_string(backend) + " with " + config.to_json().dump();
}

TEST(KernelSelectiveScan, ForwardAndBackwardMatchOracle) {
  int runs = 0;
  std::set<std::string> impls_seen;
  std::set<int> static_seen, team_sizes_seen, splits_seen, bwd_splits_seen, fast_activations_seen;
  int segmented_backwards = 0, segmented_forwards = 0;  // runs in more than one time segment
  int direct_forwards = 0, split_direct_forwards = 0;  // tiled with direct_io; with two threads a channel
  int segmented_direct_forwards = 0;                    // direct_io in more than one time segment
  int row_staged_forwards = 0;                          // direct_io 2
  std::set<int> interleaves_seen;  // tiled backward's states walked together
  int staged_backwards = 0;        // with its chunk inputs staged (bwd_stage_inputs)
  for (const Case& c : cases()) {
    const TensorMap inputs = random_inputs(c.p, 1234 + runs, c.softplus_threshold, c.extreme_activations);
    const TensorMap expected = reference::selective_scan(c.p, inputs);
    const TensorMap bounds = reference::selective_scan_error_bound(c.p, inputs);
    for (BackendKind backend : kernel_backends()) {
      for (const auto& config : configs_for(c.p, backend)) {
        const std::string where = describe(c, backend, config);
        const TensorMap got = kernels::run_selective_scan(c.p, inputs, backend, config);
        EXPECT_EQ(keys(got), keys(expected)) << where;
        expect_all_finite(got, where);
        const auto comparisons = reference::compare_with_bounds(got, expected, bounds);
        EXPECT_TRUE(reference::all_pass(comparisons)) << where << "\n" << reference::describe(comparisons);
        impls_seen.insert(config.impl);
        static_seen.insert(config.dstate_static);
        team_sizes_seen.insert(config.team_size);
        splits_seen.insert(config.state_split);
        if (c.p.with_backward) bwd_splits_seen.insert(config.bwd_state_split);
        if (c.p.with_backward) interleaves_seen.insert(config.bwd_state_interleave);
        if (c.p.with_backward && config.bwd_stage_inputs == 1) ++staged_backwards;
        fast_activations_seen.insert(config.fast_activations);
        const auto layout = kernels::selective_scan_workspace_layout(c.p, config);
        if (c.p.with_backward && layout.time_segments > 1) ++segmented_backwards;
        if (layout.fwd_segments > 1) ++segmented_forwards;
        if (config.direct_io == 1) ++direct_forwards;
        if (config.direct_io == 1 && config.state_split == 2) ++split_direct_forwards;
        if (config.direct_io == 1 && layout.fwd_segments > 1) ++segmented_direct_forwards;
        if (config.direct_io == 2) ++row_staged_forwards;
        ++runs;
      }
    }
  }
  EXPECT_EQ(impls_seen, (std::set<std::string>{"sequential", "chunked", "tiled"}));
  for (int n : {0, 1, 2, 4, 8, 16, 32}) EXPECT_TRUE(static_seen.count(n)) << "dstate_static " << n << " never ran";
  // Teams of several threads (the fixed-order tree over a team's threads) run wherever a
  // backend offers them: OpenMP with two or more threads, CUDA.
  int widest = 1;
  for (BackendKind backend : kernel_backends())
    widest = std::max(widest, kernels::selective_scan_backend_limits(backend).max_team_size);
  if (widest >= 2) EXPECT_TRUE(team_sizes_seen.count(2)) << "no config with two threads per team ran";
  if (widest >= 2) EXPECT_TRUE(splits_seen.count(2)) << "no tiled config with a channel split over two threads ran";
  if (widest >= 2) EXPECT_TRUE(bwd_splits_seen.count(2)) << "no tiled backward with a channel split over two threads ran";
  EXPECT_EQ(fast_activations_seen, (std::set<int>{0, 1})) << "both activation forms of tiled must run";
  EXPECT_EQ(interleaves_seen, (std::set<int>{1, 2, 4})) << "tiled's backward must walk 1, 2 and 4 states at once";
  EXPECT_GE(staged_backwards, 10) << "tiled's backward with staged chunk inputs must run";
  EXPECT_GE(segmented_backwards, 10) << "tiled's backward in time segments must run";
  EXPECT_GE(segmented_forwards, 10) << "tiled's forward in time segments must run";
  EXPECT_GE(direct_forwards, 10) << "tiled's forward with direct_io must run";
  if (widest >= 2) EXPECT_GE(split_direct_forwards, 5) << "direct_io with two threads per channel must run";
  EXPECT_GE(segmented_direct_forwards, 10) << "direct_io in time segments must run";
  EXPECT_GE(row_staged_forwards, 10) << "direct_io 2 (rows staged through scratch) must run";
  EXPECT_GT(runs, 100);
}

// dstate 64 is the largest specialisation; one small case keeps it covered.
TEST(KernelSelectiveScan, LargestStaticDstateMatchesOracle) {
  SelectiveScanProblem p = problem(1, 2, 64, 6);
  all_options(p);
  const TensorMap inputs = random_inputs(p, 99);
  const TensorMap expected = reference::selective_scan(p, inputs);
  const TensorMap bounds = reference::selective_scan_error_bound(p, inputs);
  for (BackendKind backend : kernel_backends()) {
    for (const char* impl : {"sequential", "chunked", "tiled"}) {
      SelectiveScanConfig config;
      config.impl = impl; config.dstate_static = 64; config.channels_per_team = 2; config.bwd_channels_per_team = 2;
      config.chunk_len = 4; config.time_tile = 3;
      if (config.impl == "tiled") { config.chunk_len = 8; config.bwd_channels_per_team = 1; config.bwd_team_size = 1; }
      const TensorMap got = kernels::run_selective_scan(p, inputs, backend, config);
      const auto comparisons = reference::compare_with_bounds(got, expected, bounds);
      EXPECT_TRUE(reference::all_pass(comparisons)) << impl << "\n" << reference::describe(comparisons);
    }
  }
}

TEST(KernelSelectiveScan, HeuristicAndCandidateConfigsMatchOracle) {
  for (const Case& c : cases()) {
    const TensorMap inputs = random_inputs(c.p, 77, c.softplus_threshold, c.extreme_activations);
    const TensorMap expected = reference::selective_scan(c.p, inputs);
    const TensorMap bounds = reference::selective_scan_error_bound(c.p, inputs);
    for (BackendKind backend : kernel_backends()) {
      const auto heuristic = kernels::selective_scan_heuristic_config(c.p, backend);
      ASSERT_EQ(heuristic.invalid_reason(c.p, backend), "") << c.name;
      const auto candidates = kernels::selective_scan_candidate_configs(c.p, backend);
      ASSERT_FALSE(candidates.empty());
      EXPECT_EQ(candidates.front(), heuristic);
      for (const auto& config : {candidates.front(), candidates.back()}) {
        const TensorMap got = kernels::run_selective_scan(c.p, inputs, backend, config);
        const auto comparisons = reference::compare_with_bounds(got, expected, bounds);
        EXPECT_TRUE(reference::all_pass(comparisons)) << describe(c, backend, config) << "\n"
                                                      << reference::describe(comparisons);
      }
    }
  }
}

// Two runs give the same bits on every backend, and Serial (one thread) gives the same bits as
// OpenMP (all of its threads) for the same config: nothing depends on thread count or timing.
TEST(KernelSelectiveScan, BitwiseRepeatableAndThreadCountIndependent) {
  for (const Case& c : cases()) {
    if (!c.p.with_backward) continue;
    const TensorMap inputs = random_inputs(c.p, 4321);
    for (const char* impl : {"sequential", "chunked", "tiled"}) {
      std::vector<SelectiveScanConfig> configs;
      for (BackendKind backend : kernel_backends())
        for (const auto& config : configs_for(c.p, backend))
          if (config.impl == impl && std::find(configs.begin(), configs.end(), config) == configs.end())
            configs.push_back(config);
      for (const auto& config : configs) {
        TensorMap first;
        for (BackendKind backend : kernel_backends()) {
          if (!config.invalid_reason(c.p, backend).empty()) continue;
          const std::string where = describe(c, backend, config);
          const TensorMap a = kernels::run_selective_scan(c.p, inputs, backend, config);
          const TensorMap b = kernels::run_selective_scan(c.p, inputs, backend, config);
          expect_bitwise_equal(a, b, where + " (two runs)");
          if (backend == BackendKind::cuda) continue;  // other arithmetic (FMA contraction, expf): not bitwise
          if (first.empty()) first = a;
          else expect_bitwise_equal(first, a, where + " (against the first host backend)");
        }
      }
    }
  }
}

// Results do not depend on the schedule beyond rounding: every config agrees with the oracle,
// and configs that only move work between teams give identical forward results.
TEST(KernelSelectiveScan, SequentialForwardIndependentOfTeamShape) {
  SelectiveScanProblem p = problem(2, 12, 4, 50, 2);
  all_options(p);
  const TensorMap inputs = random_inputs(p, 5);
  for (BackendKind backend : kernel_backends()) {
    TensorMap first;
    for (int cpt : {1, 2, 3, 6}) {
      for (int tile : {1, 7, 64}) {
        SelectiveScanConfig config;
        config.dstate_static = 4; config.channels_per_team = cpt; config.time_tile = tile; config.chunk_len = 10;
        config.stage_io = cpt % 2;
        TensorMap got = kernels::run_selective_scan(p, inputs, backend, config);
        TensorMap forward{{"out", got.at("out")}, {"last_state", got.at("last_state")}};
        expect_all_finite(forward, "channels_per_team " + std::to_string(cpt));
        if (first.empty()) first = forward;
        else expect_bitwise_equal(first, forward, "channels_per_team " + std::to_string(cpt));
      }
    }
  }
}

// direct_io moves a channel's inputs and output through registers (1) or its own rows of team
// scratch (2) instead of the team's tiles; the
// arithmetic is the staged forward's with the same state split (one, two or four threads per channel,
// the shares added in part order), so on the host (where no compiler contracts differently
// between the two kernels) every output and gradient is the same bits, including the chunk-start
// states the backward reads. Tiles of 4, 6, 12 and 64 steps put the blocks' ends and chunk starts
// everywhere in a block (of 8 steps: 12 runs a whole block and a short one a tile); in three time segments the summary passes and the carried start states
// must agree too. A second input set per case makes each form's "every decay of this block is
// normal" decision visible in the bits (subnormal_step1 below): a walk that takes its
// flush-to-zero exps where a decay is subnormal differs from the other form there.
TEST(KernelSelectiveScan, DirectIoForwardIsTheStagedForwardBitForBit) {
  int compared = 0, compared_split = 0, compared_segmented = 0;  // all; two threads a channel; in segments
  std::vector<Case> all = cases();
  // dstate 64 in whole 16-byte runs: direct_io's blocks of 4 steps there (8 elsewhere)
  { Case c{"dstate64_vector_io", problem(1, 2, 64, 40)}; all_options(c.p); all.push_back(c); }
  int compared_dstate64 = 0, compared_split4 = 0, compared_rows = 0;  // rows: direct_io 2 staging whole runs
  int compared_rows_whole_tiles = 0, compared_step1 = 0;
  for (const Case& c : all) {
    const int spec = static_dstate_of(c.p);
    if (spec == 0 || !c.p.B_per_step || !c.p.C_per_step || !c.p.has_D) continue;
    TensorMap random_set = random_inputs(c.p, 777, c.softplus_threshold, c.extreme_activations);
    // Step 1 decays every state of every channel into the subnormal range (dt·A·log2 e in [-144,
    // -131]) with u = 0 there (no input term, no D·u), so h and y at step 1 are subnormal where the
    // walk keeps subnormals and 0 where it flushes them, and out at step 1 shows which ran. Step 1
    // lies in the first 8-step block, which is whole (no chunk start inside) in tiles of 8 and more.
    TensorMap subnormal_step1 = random_set;
    const bool step1_applies = c.p.seqlen >= 8;
    if (step1_applies) {
      std::mt19937_64 rng(4343);
      std::uniform_real_distribution<double> rate(91.0, 100.0);
      for (std::int64_t d = 0; d < c.p.dim; ++d) {
        const double dt1 = dt_of(c.p, subnormal_step1, d, 0.5);
        for (std::int64_t b = 0; b < c.p.batch; ++b) {
          subnormal_step1["delta"].at({b, d, 1}) = 0.5;
          subnormal_step1["u"].at({b, d, 1}) = 0.0;
        }
        for (std::int64_t n = 0; n < c.p.dstate; ++n) subnormal_step1["A"].at({d, n}) = -rate(rng) / dt1;
      }
    }
    const auto subnormal_outputs_at_step1 = [&](const TensorMap& out) {
      int count = 0;
      for (std::int64_t b = 0; b < c.p.batch; ++b)
        for (std::int64_t d = 0; d < c.p.dim; ++d) count += is_subnormal_f32(out.at("out").at({b, d, 1}));
      return count;
    };
    for (BackendKind backend : kernel_backends()) {
      if (backend == BackendKind::cuda) continue;
      for (const TensorMap* set : {&random_set, &subnormal_step1}) {
        const bool step1 = set == &subnormal_step1;
        if (step1 && !step1_applies) continue;
        const TensorMap& inputs = *set;
        // tiles of 8 with chunks of 8 and of 32 (the heuristic's) with chunks of 64: whole blocks
        // with no chunk start inside, and the chunk starts on block starts
        for (int tile : {4, 6, 8, 12, 32, 64}) {
          if (step1 && tile < 8) continue;
          for (int split : {1, 2, 4}) {
            if (split > kernels::selective_scan_backend_limits(backend).max_team_size || spec % split != 0) continue;
            for (int segments : {1, 3}) {
              SelectiveScanConfig staged = kernels::selective_scan_heuristic_config(c.p, backend, "tiled");
              staged.time_tile = tile;
              staged.chunk_len = tile == 32 ? 64 : 8;
              staged.state_split = split;
              staged.team_size = split;  // one channel a pass (the host heuristic's teams are one thread)
              staged.fwd_time_segments = segments;
              staged.direct_io = 0;
              if (staged.team_size > kernels::selective_scan_backend_limits(backend).max_team_size) continue;
              if (!staged.invalid_reason(c.p, backend).empty()) continue;
              const TensorMap staged_result = kernels::run_selective_scan(c.p, inputs, backend, staged);
              if (step1) {  // the set does what it is for: out at step 1 subnormal, not 0, on most channels
                ASSERT_GE(subnormal_outputs_at_step1(staged_result), int(c.p.batch * c.p.dim) / 2) << c.name;
                ++compared_step1;
              }
              // direct_io 2 (rows staged through scratch, one thread a channel) as well as 1; where
              // the rows are not whole 16-byte runs (tiles of 6, seqlen not a multiple of 4) it runs as 1
              for (int form : {1, 2}) {
                SelectiveScanConfig direct = staged;
                direct.direct_io = form;
                if (!direct.invalid_reason(c.p, backend).empty()) continue;
                const std::string where = describe(c, backend, direct) + (step1 ? " subnormal_step1" : "");
                expect_bitwise_equal(staged_result, kernels::run_selective_scan(c.p, inputs, backend, direct), where);
                ++compared;
                if (form == 2 && tile % 4 == 0 && c.p.seqlen % 4 == 0) ++compared_rows;
                if (form == 2 && tile % 8 == 0 && tile <= 32 && c.p.seqlen % 4 == 0 && c.p.seqlen >= tile)
                  ++compared_rows_whole_tiles;
                if (c.p.dstate == 64) ++compared_dstate64;
                if (split == 2) ++compared_split;
                if (split == 4) ++compared_split4;
                if (kernels::selective_scan_workspace_layout(c.p, direct).fwd_segments > 1) ++compared_segmented;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GE(compared, 20);
  EXPECT_GE(compared_step1, 20) << "the subnormal_step1 set must be compared";
  EXPECT_GE(compared_dstate64, 2) << "direct_io at dstate 64 (blocks of 4 steps) must be compared";
  EXPECT_GE(compared_rows, 10) << "direct_io 2 staging its rows must be compared";
  EXPECT_GE(compared_rows_whole_tiles, 6) << "direct_io 2's whole tiles of 8 and 32 steps must be compared";
  EXPECT_GE(compared_segmented, 10) << "direct_io in time segments must be compared";
  int widest = 1;
  for (BackendKind backend : kernel_backends())
    widest = std::max(widest, kernels::selective_scan_backend_limits(backend).max_team_size);
  if (widest >= 2) EXPECT_GE(compared_split, 10) << "direct_io with two threads per channel must be compared";
  if (widest >= 4) EXPECT_GE(compared_split4, 10) << "direct_io with four threads per channel must be compared";
}

// The backward walking 2 or 4 states at once interleaves independent chains; each step's du, ddt,
// y still add the states in ascending order and each column sum is the same, so on the host every
// gradient is the same bits as one state at a time (whole sequence and time segments). With its
// chunk inputs staged through scratch (bwd_stage_inputs, at 2) the same values reach the same
// operations: the same bits again.
TEST(KernelSelectiveScan, InterleavedBackwardIsOneStateAtATimeBitForBit) {
  int compared = 0, compared_staged = 0;
  for (const Case& c : cases()) {
    const int spec = static_dstate_of(c.p);
    if (spec < 2 || !c.p.with_backward || !c.p.B_per_step || !c.p.C_per_step) continue;
    const TensorMap inputs = random_inputs(c.p, 555, c.softplus_threshold, c.extreme_activations);
    for (BackendKind backend : kernel_backends()) {
      if (backend == BackendKind::cuda) continue;
      for (int segments : {1, 3}) {
        SelectiveScanConfig one = kernels::selective_scan_heuristic_config(c.p, backend, "tiled");
        one.chunk_len = 8;
        one.bwd_state_split = 1;
        // teams of up to four channels (a thread each) where the host has them
        one.bwd_channels_per_team = one.bwd_team_size =
            std::min(4, kernels::selective_scan_backend_limits(backend).max_team_size);
        one.bwd_time_segments = segments;
        one.bwd_state_interleave = 1;
        const TensorMap expected = kernels::run_selective_scan(c.p, inputs, backend, one);
        for (int interleave : {2, 4}) {
          SelectiveScanConfig together = one;
          together.bwd_state_interleave = interleave;
          if (spec % interleave != 0) continue;
          ASSERT_EQ(together.invalid_reason(c.p, backend), "") << together.to_json().dump();
          expect_bitwise_equal(expected, kernels::run_selective_scan(c.p, inputs, backend, together),
                               describe(c, backend, together));
          ++compared;
          if (interleave != 2) continue;
          together.bwd_stage_inputs = 1;
          ASSERT_EQ(together.invalid_reason(c.p, backend), "") << together.to_json().dump();
          expect_bitwise_equal(expected, kernels::run_selective_scan(c.p, inputs, backend, together),
                               describe(c, backend, together));
          ++compared_staged;
        }
      }
    }
  }
  EXPECT_GE(compared, 20);
  EXPECT_GE(compared_staged, 10);
}

// The backward's form for teams of 32 channels, the heuristic's on the GPU (kRows32: the column sums
// unrolled for 32 rows, each block summed during the next iteration), which the oracle checks of
// wide_teams.sh reached on the host but no bitwise comparison did: it must give the bits of one
// state at a time, staged or not, in chunks whose decays are all normal and in chunks where some
// leave the normal range (the subnormal-keeping exps; speed-notes §69 compiles the two kinds of
// chunk differently). The first 24 steps' dt is tiny on every channel (every decay normal); after
// them a third of the channels decay so fast that most of their decays are subnormal or zero.
// Teams of 32 threads need a backend that offers them: OpenMP with 32 threads (wide_teams.sh runs
// this test so, and fails if it skips). On the GPU the kernel whose state loop is compiled for
// normal chunks (bwd_normal_loop) against the branching one, bit for bit, whole and in segments.
TEST(KernelSelectiveScan, ThirtyTwoRowBackwardIsOneStateAtATimeBitForBit) {
  SelectiveScanProblem p = problem(2, 40, 16, 61);
  all_options(p);
  TensorMap inputs = random_inputs(p, 3232, false, true);
  Tensor& delta = inputs["delta"];
  std::mt19937_64 rng(32);
  std::uniform_real_distribution<double> tiny(-30.0, -20.0), fast(2.0, 19.0);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t d = 0; d < p.dim; ++d)
      for (std::int64_t t = 0; t < p.seqlen; ++t) delta.at({b, d, t}) = t < 24 ? tiny(rng) : fast(rng);
  Tensor& A = inputs["A"];
  for (std::int64_t d = 0; d < p.dim; d += 3)
    for (std::int64_t n = 0; n < p.dstate; ++n) A.at({d, n}) *= 100.0;  // down to -300
  // Both regimes are in the inputs: the first steps' dt is below softplus(-19.5) < 4e-9, so dt·A >
  // -1.2e-6 there (every decay normal), and after them some state decays by exp(dt·A) with dt·A
  // below -200 at every step (dt >= softplus(1.5), the smallest bias being -0.5), far under the
  // normal range (exp(dt·A) < 2^-126 needs dt·A < -87.3).
  double most_negative = 0.0;
  for (std::int64_t d = 0; d < p.dim; ++d)
    for (std::int64_t n = 0; n < p.dstate; ++n)
      most_negative = std::min(most_negative, A.at({d, n}) * std::log1p(std::exp(fast.a() - 0.5)));
  ASSERT_LT(most_negative, -200.0);
  // There a flushed decay only ever meets normal terms, so the two exps give the same bits. In a
  // second set they differ: step 0 decays every state of every channel into the subnormal range
  // (dt·A·log2 e in [-145, -131]) from an initial state of magnitude 0.5-1 with B = 0 at step 0,
  // so h at step 0 is subnormal where the chunk keeps subnormals and 0 where it flushes them, and
  // dC at step 0 (dy·h summed over channels) shows which ran: a chunk that is not normal must not
  // take bwd_normal_loop's copy.
  TensorMap subnormal_start = inputs;
  {
    Tensor& A0 = subnormal_start["A"];
    Tensor& B0 = subnormal_start["B"];
    Tensor& h0 = subnormal_start["initial_state"];
    std::uniform_real_distribution<double> rate(91.0, 100.0), magnitude(0.5, 1.0);
    for (std::int64_t d = 0; d < p.dim; ++d) {
      const double dt0 = dt_of(p, subnormal_start, d, 0.5);
      for (std::int64_t b = 0; b < p.batch; ++b) subnormal_start["delta"].at({b, d, 0}) = 0.5;
      for (std::int64_t n = 0; n < p.dstate; ++n) {
        A0.at({d, n}) = -rate(rng) / dt0;  // dt0·A·log2 e in [-144.3, -131.3]
        for (std::int64_t b = 0; b < p.batch; ++b) h0.at({b, d, n}) = (n % 2 ? -1.0 : 1.0) * magnitude(rng);
      }
    }
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t n = 0; n < p.dstate; ++n) B0.at({b, n, 0}) = 0.0;
  }
  const auto count_subnormal_step0_sums = [&](const TensorMap& out) {
    int sums = 0;
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t n = 0; n < p.dstate; ++n) sums += is_subnormal_f32(out.at("dC").at({b, n, 0}));
    return sums;
  };
  // Teams of 32 channels, one thread a channel, chunks of 8: the 32-row form's shape.
  const auto thirty_two_rows = [&](BackendKind backend, int interleave, int segments) {
    SelectiveScanConfig c = kernels::selective_scan_heuristic_config(p, backend, "tiled");
    c.chunk_len = 8;
    c.bwd_state_split = 1;
    c.bwd_channels_per_team = c.bwd_team_size = 32;
    c.bwd_state_interleave = interleave;
    c.bwd_time_segments = segments;
    return c;
  };
  int compared = 0, expected_comparisons = 0;
  for (BackendKind backend : kernel_backends()) {
    if (backend == BackendKind::cuda) {
      // The kernel for normal chunks must give the branching one's bits, on both sets (bitwise
      // equality with one state at a time is the host's claim; the GPU's forms may contract
      // differently). A wrong vote shows on both: the loop for normal chunks flushes subnormal
      // decays (MUFU.EX2 .ftz; sfu_exp2 on the host flushes too). A mutant whose vote always
      // answers "normal" fails the host half below (session 43; it passed there while the host's
      // exp2 kept subnormals).
      expected_comparisons += 4;
      for (const TensorMap* set : {&inputs, &subnormal_start}) {
        for (int segments : {1, 3}) {
          SelectiveScanConfig branching = thirty_two_rows(backend, 2, segments);
          branching.bwd_stage_inputs = 0;
          branching.bwd_normal_loop = 0;
          SelectiveScanConfig normal_loop = branching;
          normal_loop.bwd_normal_loop = 1;
          ASSERT_EQ(normal_loop.invalid_reason(p, backend), "") << normal_loop.to_json().dump();
          const TensorMap expected = kernels::run_selective_scan(p, *set, backend, branching);
          if (set == &subnormal_start) ASSERT_GE(count_subnormal_step0_sums(expected), int(p.batch * p.dstate) / 2);
          expect_bitwise_equal(expected, kernels::run_selective_scan(p, *set, backend, normal_loop),
                               "cuda" + std::string(set == &inputs ? " " : " subnormal start ") + normal_loop.to_json().dump());
          ++compared;
        }
      }
      continue;
    }
    if (kernels::selective_scan_backend_limits(backend).max_team_size < 32) continue;
    expected_comparisons += 8;
    for (const TensorMap* set : {&inputs, &subnormal_start}) {
      const SelectiveScanConfig one = thirty_two_rows(backend, 1, 1);
      ASSERT_EQ(one.invalid_reason(p, backend), "") << one.to_json().dump();
      const TensorMap expected = kernels::run_selective_scan(p, *set, backend, one);
      // the set does what it is for: dC at step 0 subnormal, not 0
      if (set == &subnormal_start) ASSERT_GE(count_subnormal_step0_sums(expected), int(p.batch * p.dstate) / 2);
      // Two states at once, staged or not, and with the state loop compiled for normal chunks
      // (bwd_normal_loop; on the host each thread takes it where its own chunk is normal, so one
      // team runs both loops side by side); and four.
      struct Form { int interleave, stage, normal_loop; };
      for (const Form form : {Form{2, 0, 0}, Form{2, 1, 0}, Form{2, 0, 1}, Form{4, 0, 0}}) {
        SelectiveScanConfig together = one;
        together.bwd_state_interleave = form.interleave;
        together.bwd_stage_inputs = form.stage;
        together.bwd_normal_loop = form.normal_loop;
        ASSERT_EQ(together.invalid_reason(p, backend), "") << together.to_json().dump();
        expect_bitwise_equal(expected, kernels::run_selective_scan(p, *set, backend, together),
                             to_string(backend) + (set == &inputs ? " " : " subnormal start ") + together.to_json().dump());
        ++compared;
      }
    }
  }
  if (compared == 0) GTEST_SKIP() << "no backend offers teams of 32 threads (OpenMP needs OMP_NUM_THREADS >= 32)";
  EXPECT_EQ(compared, expected_comparisons);
}

// state_space_v1 runs the same kernels through (b, L, D) strides.
TEST(KernelSelectiveScan, StateSpaceV1MatchesOracle) {
  struct V1Case { std::int64_t b, L, D, N; bool gate, init, conv, dfinal; GateActivation act; };
  const std::vector<V1Case> v1_cases{
      {2, 19, 5, 4, true, true, true, true, GateActivation::silu},
      {1, 1, 3, 1, false, false, false, false, GateActivation::silu},
      {2, 33, 4, 8, true, false, false, true, GateActivation::gelu_erf},
      {1, 12, 7, 3, true, true, false, false, GateActivation::gelu_tanh},
      {3, 9, 2, 2, true, true, true, true, GateActivation::identity},
  };
  std::uint64_t seed = 11;
  for (const auto& v : v1_cases) {
    StateSpaceV1Problem p;
    p.batch = v.b; p.seqlen = v.L; p.dim = v.D; p.dstate = v.N;
    p.has_gate = v.gate; p.act_fn = v.act; p.has_initial_state = v.init;
    p.has_conv_state = v.conv; p.d_conv = v.conv ? 4 : 0;
    p.with_backward = true; p.has_dfinal_state = v.dfinal;
    std::mt19937_64 rng(seed++);
    TensorMap in;
    const Shape bld{p.batch, p.seqlen, p.dim}, state{p.batch, p.dim, p.dstate};
    in["hidden_states"] = random_tensor(bld, -1.5, 1.5, rng);
    in["A"] = random_tensor({p.dim, p.dstate}, -3.0, -0.01, rng);
    in["B"] = random_tensor({p.batch, p.seqlen, p.dstate}, -1, 1, rng);
    in["C"] = random_tensor({p.batch, p.seqlen, p.dstate}, -1, 1, rng);
    in["D"] = random_tensor({p.dim}, -1, 1, rng);
    in["dt"] = random_tensor(bld, 0.001, 0.5, rng);
    if (p.has_gate) in["gate"] = random_tensor(bld, -4, 4, rng);
    if (p.has_initial_state) in["initial_state"] = random_tensor(state, -1, 1, rng);
    if (p.has_conv_state) in["conv_state"] = random_tensor({p.batch, p.dim, p.d_conv}, -1, 1, rng);
    in["dout"] = random_tensor(bld, -1, 1, rng);
    if (p.has_dfinal_state) in["dfinal_state"] = random_tensor(state, -1, 1, rng);
    const TensorMap expected = reference::state_space_v1(p, in);
    const TensorMap bounds = reference::state_space_v1_error_bound(p, in);
    const SelectiveScanProblem ss = p.as_selective_scan();
    for (BackendKind backend : kernel_backends()) {
      for (const auto& config : configs_for(ss, backend)) {
        const std::string where = "state_space_v1 b" + std::to_string(v.b) + " L" + std::to_string(v.L) + " on " +
                                  to_string(backend) + " with " + config.to_json().dump();
        const TensorMap got = kernels::run_state_space_v1(p, in, backend, config);
        EXPECT_EQ(keys(got), keys(expected)) << where;
        expect_all_finite(got, where);
        const auto comparisons = reference::compare_with_bounds(got, expected, bounds);
        EXPECT_TRUE(reference::all_pass(comparisons)) << where << "\n" << reference::describe(comparisons);
      }
    }
  }
}

// A forward-only problem needs no backward team shape and no checkpoints.
TEST(KernelSelectiveScan, WorkspaceSizes) {
  SelectiveScanProblem p = problem(2, 8, 4, 100, 2);
  SelectiveScanConfig c;
  c.chunk_len = 10; c.bwd_channels_per_team = 2;
  EXPECT_EQ(kernels::selective_scan_workspace_bytes(p, c), 0);  // sequential forward: nothing
  p.with_backward = true;
  const auto w = kernels::selective_scan_workspace_layout(p, c);
  EXPECT_EQ(w.num_chunks, 10);
  EXPECT_EQ(w.bwd_tiles, 2);
  // chunk states B·S·N·D, dA partial B·N·D, per-step dB and dC partials B·G·T·N·L.
  EXPECT_EQ(w.total_floats, 2 * 10 * 4 * 8 + 2 * 4 * 8 + 2 * (2 * 2 * 2 * 4 * 100));
  c.impl = "chunked";
  const auto wc = kernels::selective_scan_workspace_layout(p, c);
  EXPECT_EQ(wc.total_floats, 3 * (2 * 10 * 4 * 8) + 2 * 10 * 4 * 8 + 2 * (2 * 2 * 2 * 4 * 100));
  EXPECT_GT(kernels::selective_scan_extra_bytes(p, c, Pass::forward), 0);
  // tiled's backward time segments: whole chunks, as even as they go (13 chunks of 8); each
  // segment has its summary (adjoint and decay) and its own dA partial.
  SelectiveScanConfig t;
  t.impl = "tiled"; t.dstate_static = 4; t.chunk_len = 8; t.bwd_channels_per_team = 2; t.bwd_team_size = 2;
  struct Expect { int asked; std::int64_t segments, per_segment; };
  for (const Expect& e : {Expect{1, 1, 13}, Expect{4, 4, 4}, Expect{5, 5, 3}, Expect{6, 5, 3}, Expect{100, 13, 1}}) {
    t.bwd_time_segments = e.asked;
    const auto wt = kernels::selective_scan_workspace_layout(p, t);
    EXPECT_EQ(wt.time_segments, e.segments) << e.asked;
    EXPECT_EQ(wt.chunks_per_segment, e.per_segment) << e.asked;
    EXPECT_EQ(wt.channel_segments, e.segments) << e.asked;
    const std::int64_t P = e.segments, summaries = P > 1 ? 2 * (2 * P * 4 * 8) : 0;
    EXPECT_EQ(wt.total_floats, 2 * 13 * 4 * 8 + summaries + 2 * P * 4 * 8 + 2 * (2 * 2 * 2 * 4 * 100)) << e.asked;
  }
  EXPECT_GT(kernels::selective_scan_extra_bytes(p, t, Pass::backward),
            kernels::selective_scan_extra_bytes(p, [&] { auto one = t; one.bwd_time_segments = 1; return one; }(), Pass::backward));
  // The summary pass in blocks of whole chunks (4 segments of 4, 4, 4 and 1 chunks): 3 asked make
  // blocks of 2, two a segment; 4 and 1000 blocks of 1, four a segment (three of the last empty).
  // Every block has its summary (adjoint and decay); without segments blocks change nothing.
  t.bwd_time_segments = 4;
  for (const Expect& e : {Expect{1, 1, 4}, Expect{3, 2, 2}, Expect{4, 4, 1}, Expect{1000, 4, 1}}) {
    t.bwd_summary_blocks = e.asked;
    const auto wt = kernels::selective_scan_workspace_layout(p, t);
    EXPECT_EQ(wt.time_segments, 4) << e.asked;
    EXPECT_EQ(wt.summary_blocks, e.segments) << e.asked;
    EXPECT_EQ(wt.chunks_per_summary_block, e.per_segment) << e.asked;
    const std::int64_t Q = e.segments;
    EXPECT_EQ(wt.total_floats, 2 * 13 * 4 * 8 + 2 * (2 * 4 * Q * 4 * 8) + 2 * 4 * 4 * 8 + 2 * (2 * 2 * 2 * 4 * 100))
        << e.asked;
  }
  // Each block's summary is written and read back: more blocks, more bytes.
  EXPECT_GT(kernels::selective_scan_extra_bytes(p, t, Pass::backward),
            kernels::selective_scan_extra_bytes(p, [&] { auto one = t; one.bwd_summary_blocks = 1; return one; }(), Pass::backward));
  t.bwd_time_segments = 1;
  EXPECT_EQ(kernels::selective_scan_workspace_layout(p, t).summary_blocks, 1);
  t.bwd_summary_blocks = 1;
  // The forward's: whole tiles (of 12 here), chunks of 8 (a backward follows) and 16-byte runs, so
  // segments of multiples of 24 steps over 100.
  t.bwd_time_segments = 1; t.time_tile = 12;
  struct ExpectFwd { int asked; std::int64_t segments, len; };
  for (const ExpectFwd& e : {ExpectFwd{1, 1, 100}, ExpectFwd{2, 2, 72}, ExpectFwd{3, 3, 48}, ExpectFwd{4, 3, 48}, ExpectFwd{5, 5, 24},
                              ExpectFwd{1000, 5, 24}}) {
    t.fwd_time_segments = e.asked;
    const auto wt = kernels::selective_scan_workspace_layout(p, t);
    EXPECT_EQ(wt.fwd_segments, e.segments) << e.asked;
    EXPECT_EQ(wt.fwd_segment_len, e.len) << e.asked;
    EXPECT_EQ(wt.segment_state >= 0, e.segments > 1) << e.asked;
  }
  SelectiveScanProblem forward_only = p;
  forward_only.with_backward = false;  // no chunks to keep whole: multiples of 12
  t.fwd_time_segments = 1000;
  EXPECT_EQ(kernels::selective_scan_workspace_layout(forward_only, t).fwd_segment_len, 12);
}

TEST(KernelSelectiveScan, InvalidReasonRejectsWhatCannotRun) {
  SelectiveScanProblem p = problem(2, 8, 4, 64);
  p.with_backward = true;
  auto reason = [&](const SelectiveScanConfig& c, BackendKind b = BackendKind::serial) { return c.invalid_reason(p, b); };
  auto contains = [](const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; };
  SelectiveScanConfig ok;
  EXPECT_EQ(reason(ok), "");
  { auto c = ok; c.impl = "parallel"; EXPECT_TRUE(contains(reason(c), "unknown implementation")); }
  { auto c = ok; c.dstate_static = 16; EXPECT_TRUE(contains(reason(c), "does not match")); }
  { auto c = ok; c.dstate_static = 3; EXPECT_TRUE(contains(reason(c), "not a compiled specialisation")); }
  { auto c = ok; c.dstate_static = 4; EXPECT_EQ(reason(c), ""); }
  { auto c = ok; c.channels_per_team = 0; EXPECT_TRUE(contains(reason(c), "must be positive")); }
  { auto c = ok; c.chunk_len = -1; EXPECT_TRUE(contains(reason(c), "chunk_len must be positive")); }
  { auto c = ok; c.channels_per_team = 4; c.team_size = 3; EXPECT_TRUE(contains(reason(c), "does not divide")); }
  { auto c = ok; c.bwd_channels_per_team = 5; c.bwd_team_size = 2; EXPECT_TRUE(contains(reason(c), "does not divide")); }
  { auto c = ok; c.channels_per_team = 4; c.team_size = 2; EXPECT_TRUE(contains(reason(c), "exceeds serial's limit")); }
  { auto c = ok; c.scratch_level = 2; EXPECT_TRUE(contains(reason(c), "scratch_level must be 0 or 1")); }
  { auto c = ok; c.stage_io = 2; EXPECT_TRUE(contains(reason(c), "stage_io must be 0 or 1")); }
  { auto c = ok; c.impl = "tiled"; EXPECT_TRUE(contains(reason(c), "needs dstate_static")); }
  { auto c = ok; c.impl = "tiled"; c.dstate_static = 4; EXPECT_TRUE(contains(reason(c), "chunk_len must be 8 or 16"));
    EXPECT_TRUE(contains(reason(c), "bwd_team_size must equal bwd_channels_per_team x bwd_state_split"));
    c.chunk_len = 16; c.bwd_channels_per_team = 1; EXPECT_EQ(reason(c), "");
    c.scratch_level = 1; EXPECT_TRUE(contains(reason(c), "scratch_level must be 0"));
    c.scratch_level = 0; c.stage_io = 1; EXPECT_TRUE(contains(reason(c), "stage_io must be 0"));
    SelectiveScanProblem fixed_B = p; fixed_B.B_per_step = false;
    c.stage_io = 0; EXPECT_TRUE(contains(c.invalid_reason(fixed_B, BackendKind::serial), "per-step B and C")); }
  { auto c = ok; c.state_split = 3; EXPECT_TRUE(contains(reason(c), "state_split must be 1, 2 or 4")); }
  { auto c = ok; c.state_split = 2; EXPECT_TRUE(contains(reason(c), "must be 1 for sequential")); }
  { auto c = ok; c.impl = "tiled"; c.dstate_static = 4; c.chunk_len = 16; c.bwd_channels_per_team = 1;
    c.state_split = 2; c.channels_per_team = 4; c.team_size = 4;  // two channels per pass, two passes
    EXPECT_EQ(reason(c, BackendKind::cuda), "");
    c.team_size = 3; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "must divide team_size 3"));
    c.team_size = 16; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "must divide channels_per_team 4"));
    c.team_size = 4; c.state_split = 4; c.dstate_static = 2; p.dstate = 2;
    EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "must divide dstate_static 2"));
    p.dstate = 4; }
  { auto c = ok; c.bwd_state_split = 3; EXPECT_TRUE(contains(reason(c), "bwd_state_split must be 1, 2 or 4")); }
  { auto c = ok; c.fast_activations = 2; EXPECT_TRUE(contains(reason(c), "fast_activations must be 0 or 1, got 2")); }
  { auto c = ok; c.fast_activations = 1; EXPECT_TRUE(contains(reason(c), "it must be 0 for sequential")); }
  { auto c = ok; c.bwd_time_segments = 0; EXPECT_TRUE(contains(reason(c), "bwd_time_segments must be at least 1, got 0")); }
  { auto c = ok; c.bwd_time_segments = 2; EXPECT_TRUE(contains(reason(c), "it must be 1 for sequential")); }
  { auto c = ok; c.bwd_summary_blocks = 0; EXPECT_TRUE(contains(reason(c), "bwd_summary_blocks must be at least 1, got 0")); }
  { auto c = ok; c.bwd_summary_blocks = 2; EXPECT_TRUE(contains(reason(c), "summary pass only: it must be 1 for sequential")); }
  { auto c = ok; c.fwd_time_segments = -1; EXPECT_TRUE(contains(reason(c), "fwd_time_segments must be at least 1, got -1")); }
  { auto c = ok; c.fwd_time_segments = 2; EXPECT_TRUE(contains(reason(c), "splits tiled's forward only: it must be 1 for sequential")); }
  { auto c = ok; c.bwd_state_split = 2; EXPECT_TRUE(contains(reason(c), "it must be 1 for sequential")); }
  { auto c = ok; c.impl = "tiled"; c.dstate_static = 4; c.chunk_len = 16;
    c.bwd_state_split = 2; c.bwd_channels_per_team = 2; c.bwd_team_size = 4;  // two threads per channel
    EXPECT_EQ(reason(c, BackendKind::cuda), "");
    c.bwd_team_size = 2; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "bwd_channels_per_team x bwd_state_split"));
    c.bwd_team_size = 8; c.bwd_state_split = 4; c.dstate_static = 2; p.dstate = 2;
    EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "bwd_state_split 4 must divide dstate_static 2"));
    p.dstate = 4; }
  // bwd_state_interleave: 1, 2 or 4, compiled for tiled's backward at split 1 and chunk 8 only,
  // dividing dstate
  { auto c = ok; c.bwd_state_interleave = 3; EXPECT_TRUE(contains(reason(c), "bwd_state_interleave must be 1, 2 or 4, got 3")); }
  { auto c = ok; c.bwd_state_interleave = 2; EXPECT_TRUE(contains(reason(c), "bwd_state_split 1 and chunk_len 8 only")); }
  { auto c = ok; c.impl = "tiled"; c.dstate_static = 4; c.chunk_len = 8; c.bwd_channels_per_team = 1;
    c.bwd_state_interleave = 4; EXPECT_EQ(reason(c, BackendKind::cuda), "");
    c.chunk_len = 16; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "bwd_state_split 1 and chunk_len 8 only"));
    c.chunk_len = 8; c.bwd_state_split = 2; c.bwd_team_size = 2;
    EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "bwd_state_split 1 and chunk_len 8 only"));
    c.bwd_state_split = 1; c.bwd_team_size = 1; c.dstate_static = 2; p.dstate = 2;
    EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "bwd_state_interleave 4 must divide dstate_static 2"));
    p.dstate = 4; }
  // bwd_stage_inputs: 0 or 1, compiled for tiled's backward at interleave 2 only
  { auto c = ok; c.bwd_stage_inputs = 2; EXPECT_TRUE(contains(reason(c), "bwd_stage_inputs must be 0 or 1, got 2")); }
  { auto c = ok; c.impl = "tiled"; c.dstate_static = 4; c.chunk_len = 8; c.bwd_channels_per_team = 1;
    c.bwd_state_interleave = 2; c.bwd_stage_inputs = 1; EXPECT_EQ(reason(c, BackendKind::cuda), "");
    c.bwd_state_interleave = 4; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "bwd_state_interleave 2 only"));
    c.bwd_state_interleave = 1; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "bwd_state_interleave 2 only"));
    c.impl = "sequential"; c.dstate_static = 0; c.bwd_state_interleave = 1;
    EXPECT_TRUE(contains(reason(c), "bwd_state_interleave 2 only")); }
  // bwd_normal_loop: 0 or 1, compiled for tiled's interleaved backward in teams of 32 channels only
  { auto c = ok; c.bwd_normal_loop = 2; EXPECT_TRUE(contains(reason(c), "bwd_normal_loop must be 0 or 1, got 2")); }
  { auto c = ok; c.impl = "tiled"; c.dstate_static = 4; c.chunk_len = 8; c.bwd_channels_per_team = c.bwd_team_size = 32;
    c.bwd_state_interleave = 2; c.bwd_normal_loop = 1; EXPECT_EQ(reason(c, BackendKind::cuda), "");
    c.bwd_stage_inputs = 1; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "bwd_normal_loop is compiled for"));
    c.bwd_stage_inputs = 0; c.bwd_state_interleave = 4;
    EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "bwd_normal_loop is compiled for"));
    c.bwd_state_interleave = 1; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "bwd_normal_loop is compiled for"));
    c.bwd_state_interleave = 2; c.bwd_channels_per_team = c.bwd_team_size = 16;
    EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "teams of 32 channels only"));
    c.bwd_normal_loop = 0; EXPECT_EQ(reason(c, BackendKind::cuda), ""); }
  // direct_io: one, two or four threads a channel, whole warps for two and four on CUDA (their
  // shuffles and warp syncs), steps counted in 32 bits
  { auto c = ok; c.impl = "tiled"; c.dstate_static = 4; c.chunk_len = 16; c.bwd_channels_per_team = 1;
    c.direct_io = 1; c.state_split = 2; c.channels_per_team = 32; c.team_size = 64;
    EXPECT_EQ(reason(c, BackendKind::cuda), "");
    c.channels_per_team = 2; c.team_size = 4; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "team_size must be a multiple of 32, got 4"));
    EXPECT_EQ(reason(c, BackendKind::openmp).find("multiple of 32"), std::string::npos);
    c.state_split = 4; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "team_size must be a multiple of 32, got 4"));
    c.channels_per_team = 16; c.team_size = 64; EXPECT_EQ(reason(c, BackendKind::cuda), "");
    c.state_split = 3; c.team_size = 48; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "needs state_split 1, 2 or 4, got 3"));
    c.state_split = 1; c.channels_per_team = c.team_size = 32; EXPECT_EQ(reason(c, BackendKind::cuda), "");
    c.fwd_time_segments = 2; EXPECT_EQ(reason(c, BackendKind::cuda), "");  // in time segments too
    c.direct_io = 2; EXPECT_EQ(reason(c, BackendKind::cuda), "");  // rows staged: one thread a channel
    { SelectiveScanProblem wide = p; wide.dstate = 64; auto w = c; w.dstate_static = 64;  // not compiled past 32
      for (BackendKind b : {BackendKind::serial, BackendKind::cuda})
        EXPECT_TRUE(contains(w.invalid_reason(wide, b), "direct_io 2 is compiled to dstate_static 32 (beyond it its tiles "
                                                        "pass the 40 KB of team scratch a team gets on cuda), got 64")); }
    c.time_tile = 64; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "direct_io 2 keeps a tile's B and C as rows of 32 steps: it needs time_tile <= 32 (or seqlen <= it), got 64"));
    c.time_tile = 32;
    c.state_split = 2; c.team_size = 64; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "direct_io 2 stages one thread's channel a row: it needs state_split 1, got 2"));
    c.state_split = 1; c.team_size = 32; c.direct_io = 3; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "direct_io must be 0, 1 or 2, got 3"));
    c.direct_io = 2; c.impl = "sequential"; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "direct_io is a form of tiled's forward"));
    c.impl = "tiled"; c.direct_io = 1;
    SelectiveScanProblem long_one = p; long_one.seqlen = std::int64_t(1) << 31; long_one.with_backward = false;
    EXPECT_TRUE(contains(c.invalid_reason(long_one, BackendKind::cuda), "seqlen must be below 2^31")); }
  // Level-1 scratch, every resident team's together, at most half the memory it lives in
  // (KernelBackendLimits): Kokkos allocates it for all the teams CUDA holds at once (132 x 2048
  // threads / team size); fuzzed teams of 1 asked an H100 for 82.56 GB, and the failed
  // allocation left Kokkos 3.4 to segfault. CUDA's limits are nominal (an 80 GB card) on a CPU
  // build and the device's own on a CUDA build, so the sizes below hold on any GPU of 16 GB or more.
  { const auto cuda = kernels::selective_scan_backend_limits(BackendKind::cuda);
    EXPECT_GE(cuda.memory_bytes, std::int64_t(16) << 30);
    EXPECT_EQ(cuda.level1_scratch_total_max_bytes(), cuda.memory_bytes / 2);
    SelectiveScanProblem longer = p; longer.seqlen = 2048;
    auto c = ok; c.impl = "sequential"; c.scratch_level = 1; c.chunk_len = 512; c.time_tile = 64;
    c.bwd_channels_per_team = 128; c.bwd_team_size = 1;
    auto team_bytes_at = [&](int team_size) {
      auto t = c; t.bwd_team_size = team_size;
      return kernels::detail::scratch_request_bytes(kernels::detail::backward_scratch_floats(longer, t));
    };
    const std::int64_t team_bytes = team_bytes_at(1);
    // (all teams' bytes: over 256 GiB with teams of one thread, at most 8 GiB with teams of 128)
    ASSERT_GT(team_bytes * cuda.concurrency, std::int64_t(1) << 38);
    ASSERT_LE(team_bytes_at(128) * (cuda.concurrency / 128), std::int64_t(8) << 30);
    const std::string why = c.invalid_reason(longer, BackendKind::cuda);
    EXPECT_TRUE(contains(why, "the backward's level-1 team scratch is " + std::to_string(team_bytes) + " bytes a team x " +
                              std::to_string(cuda.concurrency) + " resident teams on cuda = ")) << why;
    EXPECT_TRUE(contains(why, "more than the " + std::to_string(cuda.memory_bytes / 2) + " scanlab allows (half of cuda's " +
                              std::to_string(cuda.memory_bytes) + " bytes of memory")) << why;
    EXPECT_FALSE(contains(why, "the forward's level-1")) << why;
    c.bwd_team_size = 128;  // 128 times fewer resident teams
    EXPECT_EQ(c.invalid_reason(longer, BackendKind::cuda), "");
    c.scratch_level = 0;  // level 0 is on chip: its own 40 KB limit, not this one
    EXPECT_TRUE(contains(c.invalid_reason(longer, BackendKind::cuda), "the backward needs"));
    EXPECT_FALSE(contains(c.invalid_reason(longer, BackendKind::cuda), "level-1 team scratch"));
    c.scratch_level = 1; c.bwd_team_size = 1;
    EXPECT_EQ(c.invalid_reason(longer, BackendKind::openmp).find("level-1 team scratch"), std::string::npos)
        << "a host's few threads hold few teams"; }
  // The case session 38 caught crashing (case 62 of `check state_space_v1 --backend cuda --seed
  // 372`, saved under reports/results/h100/2026-12-07-s38/call1/): 82.56 GB asked of an 80 GB H100.
  { SelectiveScanProblem crashed = p; crashed.batch = 1; crashed.seqlen = 167; crashed.dim = 19; crashed.dstate = 3;
    crashed.has_D = crashed.has_z = crashed.with_backward = true;
    auto c = ok; c.impl = "sequential"; c.scratch_level = 1; c.team_size = 32; c.channels_per_team = 32;
    c.time_tile = 32; c.chunk_len = 128; c.bwd_channels_per_team = 64; c.bwd_team_size = 1;
    const std::string why = c.invalid_reason(crashed, BackendKind::cuda);
    EXPECT_TRUE(contains(why, "the backward's level-1 team scratch is 305408 bytes a team x 270336 resident teams on "
                              "cuda = 82562777088 bytes")) << why; }
  EXPECT_TRUE(contains(reason(ok, BackendKind::reference), "does not run Kokkos kernels"));
  // CUDA's limits hold on a CPU build too (nominal), so GPU configs can be checked here.
  { auto c = ok; c.channels_per_team = c.team_size = 512; EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "exceeds cuda's limit")); }
  { auto c = ok; c.chunk_len = 4096; c.bwd_channels_per_team = 64; c.bwd_team_size = 64;
    EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "the backward needs"));
    c.scratch_level = 1;
    EXPECT_EQ(reason(c, BackendKind::cuda), "");
    c.bwd_team_size = 1;  // 270336 resident teams of one thread: 32 GB of level 1, within half of any 64 GB card
    const auto cuda = kernels::selective_scan_backend_limits(BackendKind::cuda);
    if (cuda.memory_bytes >= std::int64_t(64) << 30) EXPECT_EQ(reason(c, BackendKind::cuda), "");
    c.bwd_channels_per_team = 256; c.bwd_team_size = 1;  // 128 GB: past half of any card's memory until 256 GB
    if (cuda.memory_bytes < std::int64_t(256) << 30) EXPECT_TRUE(contains(reason(c, BackendKind::cuda), "level-1 team scratch")); }
  // The backward's team shape only matters with a backward.
  { auto c = ok; c.bwd_channels_per_team = 64; c.bwd_team_size = 64; EXPECT_NE(reason(c, BackendKind::serial), "");
    SelectiveScanProblem forward_only = p; forward_only.with_backward = false;
    EXPECT_EQ(c.invalid_reason(forward_only, BackendKind::serial), ""); }
  // The bridge refuses an invalid config with the reason.
  { auto c = ok; c.dstate_static = 8;
    const TensorMap inputs = random_inputs(p, 1);
    try {
      kernels::run_selective_scan(p, inputs, BackendKind::serial, c);
      ADD_FAILURE() << "an invalid config ran";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), "does not match")) << e.what();
    } }
}

TEST(KernelSelectiveScan, ConfigJsonRoundTripAndErrors) {
  SelectiveScanConfig c;
  c.impl = "chunked"; c.dstate_static = 16; c.channels_per_team = 64; c.team_size = 64; c.time_tile = 16;
  c.chunk_len = 128; c.bwd_channels_per_team = 32; c.bwd_team_size = 32; c.scratch_level = 1; c.stage_io = 1;
  c.fast_activations = 1;
  EXPECT_EQ(SelectiveScanConfig::from_json(c.to_json()), c);
  EXPECT_EQ(SelectiveScanConfig::from_json(nlohmann::json::object()), SelectiveScanConfig());
  EXPECT_EQ(kernels::selective_scan_config_fields().size(), c.to_json().size());
  for (const auto& field : kernels::selective_scan_config_fields())
    EXPECT_TRUE(c.to_json().contains(field.substr(0, field.find(':')))) << field;
  EXPECT_THROW(SelectiveScanConfig::from_json({{"chunk", 4}}), std::invalid_argument);
  EXPECT_THROW(SelectiveScanConfig::from_json({{"chunk_len", "4"}}), std::invalid_argument);
  EXPECT_THROW(SelectiveScanConfig::from_json({{"chunk_len", 4.5}}), std::invalid_argument);
  EXPECT_THROW(SelectiveScanConfig::from_json({{"impl", "fast"}}), std::invalid_argument);
  EXPECT_THROW(SelectiveScanConfig::from_json(nlohmann::json::array()), std::invalid_argument);
  EXPECT_EQ(kernels::selective_scan_implementations(), (std::vector<std::string>{"sequential", "chunked", "tiled"}));
}

// The SFU activation forms' own algorithm (on the host the exp2 is the C library's; on a GPU
// MUFU.EX2 adds its ~2^-22 relative error, which `scanlab check --impl tiled` covers there; the
// rest is the same FMA code on both), over a dense grid of x through the subnormal range: the
// error stays within a few eps32 of eps32·(|f'(x)·x| + |f(x)|), the argument's rounding (the error
// bound charges the same for the input's) plus the result's. Measured on the host build (no FMA:
// mul_add is a multiply and an add) 3.0 for softplus and 2.4 for σ, with FMA 2.7 and 2.1;
// log1p_unit's polynomial one degree lower gives 5.5, one Newton step fewer in σ's reciprocal
// ~200, so 4 separates them.
TEST(KernelSelectiveScan, SfuActivationFormsWithinTheirErrorModel) {
  const double eps = std::ldexp(1.0, -24), underflow = std::ldexp(1.0, -149);
  double worst_softplus = 0, worst_sigmoid = 0;
  for (int i = 0; i <= 2'000'000; ++i) {
    const float x = float(-104.0 + 124.0 * i / 2'000'000.0);
    const double xd = x, sigma = 1.0 / (1.0 + std::exp(-xd)), softplus = std::log1p(std::exp(xd));
    const double softplus_model = eps * (sigma * std::fabs(xd) + softplus) + underflow;
    worst_softplus = std::max(worst_softplus, std::fabs(double(softplus_sfu_f32(x)) - softplus) / softplus_model);
    const double sigmoid_model = eps * (sigma * (1 - sigma) * std::fabs(xd) + sigma) + underflow;
    worst_sigmoid = std::max(worst_sigmoid, std::fabs(double(sigmoid_sfu_f32(x)) - sigma) / sigmoid_model);
  }
  EXPECT_LT(worst_softplus, 4.0);
  EXPECT_LT(worst_sigmoid, 4.0);
  // Edges: infinities, NaN, a subnormal softplus, σ's tails.
  EXPECT_EQ(softplus_sfu_f32(-INFINITY), 0.0f);
  EXPECT_TRUE(std::isnan(softplus_sfu_f32(NAN)));
  EXPECT_GT(softplus_sfu_f32(-100.0f), 0.0f);  // e^-100 is a subnormal float, not flushed
  EXPECT_EQ(sigmoid_sfu_f32(INFINITY), 1.0f);
  EXPECT_EQ(sigmoid_sfu_f32(-INFINITY), 0.0f);
  EXPECT_GT(sigmoid_sfu_f32(-100.0f), 0.0f);
  EXPECT_TRUE(std::isnan(sigmoid_sfu_f32(NAN)));
  // Above mamba_ssm's threshold (20) the forms give the threshold's values bit for bit, so the
  // tiled kernels call them without the test (Activations<true>).
  for (float x = 20.0f; x < 1e30f; x = x < 20.2f ? std::nextafter(x, INFINITY) : x * 1.01f) {  // every float to 20.2
    ASSERT_EQ(softplus_sfu_f32(x), x) << x;
    ASSERT_EQ(sigmoid_sfu_f32(x), 1.0f) << x;
  }
  EXPECT_EQ(softplus_sfu_f32(INFINITY), INFINITY);
  // The pair the staged backward forms at a chunk's start (sharing the MUFU) is each function's own
  // value bit for bit: the chunk's end reads the parked slope instead of calling sigmoid_sfu_f32.
  const auto bits = [](float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
  };
  for (int i = 0; i <= 400'000; ++i) {
    const float x = float(-104.0 + 134.0 * i / 400'000.0);
    const SoftplusWithSlope both = softplus_with_slope_sfu_f32(x);
    ASSERT_EQ(bits(both.value), bits(softplus_sfu_f32(x))) << x;
    ASSERT_EQ(bits(both.slope), bits(sigmoid_sfu_f32(x))) << x;
  }
  EXPECT_TRUE(std::isnan(softplus_with_slope_sfu_f32(NAN).value));  // a NaN's sign bit may differ
  EXPECT_TRUE(std::isnan(softplus_with_slope_sfu_f32(NAN).slope));
}

// The FMA-pipe pieces of the SFU forms on their own: the reciprocal over every float in [1, 2]
// (measured worst |x·r − 1|: 1.78·2^-24 on the host build without FMA, 1.36·2^-24 with it) and
// log1p_unit's relative error over [0, 1] (3.2 and 2.8 eps32).
TEST(KernelSelectiveScan, SfuFormsFmaPiecesAccurate) {
  const double eps = std::ldexp(1.0, -24);
  double worst_reciprocal = 0, worst_log1p = 0;
  for (float x = 1.0f; x <= 2.0f; x = std::nextafter(x, 3.0f))
    worst_reciprocal = std::max(worst_reciprocal, std::fabs(double(reciprocal_1_to_2(x)) * double(x) - 1.0));
  for (int i = 1; i <= 1'000'000; ++i) {
    const float t = float(i / 1e6);
    const double exact = std::log1p(double(t));
    worst_log1p = std::max(worst_log1p, std::fabs(double(log1p_unit(t)) - exact) / exact);
  }
  EXPECT_LT(worst_reciprocal, 2 * eps);
  EXPECT_LT(worst_log1p, 4 * eps);
  EXPECT_EQ(reciprocal_1_to_2(1.0f), 1.0f);
  EXPECT_EQ(reciprocal_1_to_2(2.0f), 0.5f);
  EXPECT_EQ(log1p_unit(0.0f), 0.0f);
  EXPECT_EQ(log1p_unit(1e-40f), 1e-40f);  // a subnormal t: log1p(t) rounds to t
  EXPECT_TRUE(std::isnan(reciprocal_1_to_2(NAN)));
}

// At large dstate the rule's kernels outgrow on-chip scratch and it moves them to level 1: its
// config must fit level 1's cap on CUDA too. Session 38's fixed 8 GiB cap refused its chunked
// configs at dstate 4096 (14-16 GB over the resident teams), which had run on 80 GB cards.
TEST(KernelSelectiveScan, HeuristicFitsLevelOneAtLargeDstate) {
  struct Shape4 { std::int64_t b, d, n, l; };
  int at_level_one = 0;
  for (const auto& s : {Shape4{1, 64, 4096, 1024}, Shape4{1, 8, 4096, 256}, Shape4{2, 256, 4096, 2048},
                        Shape4{1, 16, 2048, 512}, Shape4{4, 1024, 1024, 1024}}) {
    SelectiveScanProblem p = problem(s.b, s.d, s.n, s.l);
    all_options(p);
    const auto h = kernels::selective_scan_heuristic_config(p, BackendKind::cuda);
    EXPECT_EQ(h.invalid_reason(p, BackendKind::cuda), "") << s.b << "x" << s.d << "x" << s.n << "x" << s.l << ": "
                                                           << h.to_json().dump();
    at_level_one += h.scratch_level == 1;
  }
  EXPECT_GE(at_level_one, 3) << "the shapes should reach level 1";
}

// The rule picks "tiled" from 1024 channels (batch·dim; training and inference), else "chunked"; it
// offers at least 8 valid candidates on the H200 shapes (checked against CUDA's nominal limits when CUDA is not compiled in).
TEST(KernelSelectiveScan, HeuristicRuleAndGpuCandidates) {
  struct Shape4 { std::int64_t b, d, n, l; };
  for (const auto& s : {Shape4{8, 4096, 16, 2048}, Shape4{2, 4096, 16, 8192}, Shape4{16, 1536, 16, 1024}, Shape4{8, 2048, 16, 2048},
                        Shape4{4, 5120, 16, 4096},
                        Shape4{8, 4096, 64, 2048}, Shape4{8, 4096, 32, 2048}, Shape4{1, 1024, 16, 4096},
                        Shape4{1, 512, 16, 4096}, Shape4{1, 2048, 16, 8192}}) {
    SelectiveScanProblem p = problem(s.b, s.d, s.n, s.l);
    all_options(p);
    const auto h = kernels::selective_scan_heuristic_config(p, BackendKind::cuda);
    EXPECT_EQ(h.invalid_reason(p, BackendKind::cuda), "") << h.to_json().dump();
    EXPECT_EQ(h.impl, s.b * s.d >= 1024 ? "tiled" : "chunked") << s.b << "x" << s.d;
    EXPECT_EQ(h.dstate_static, int(s.n));
    EXPECT_EQ(h.scratch_level, 0) << h.to_json().dump();
    // the SFU activation forms where they are compiled in (tiled), timed faster on the H200
    EXPECT_EQ(h.fast_activations, h.impl == "tiled" ? 1 : 0) << h.to_json().dump();
    // tiled in time segments (both passes, two threads per channel) where four threads per
    // channel fill less than 3/4 of the threads resident at the 128-register cap (132 SMs x 512
    // on the H200 and in the nominal limits of CPU builds): as many as fill them; the forward at
    // dstate 16 only below 3/8 (at 8192 channels four threads without segments won on an H100)
    if (h.impl == "tiled") {
      const std::int64_t channels = s.b * s.d, resident = 132 * 512;
      const bool segmented = channels <= 16384 && 16 * channels < 3 * resident;
      const bool fwd_segmented = s.n == 16 ? channels <= 16384 && 32 * channels < 3 * resident : segmented;
      if (kernels::selective_scan_backend_limits(BackendKind::cuda).concurrency == 4 * resident) {
        EXPECT_EQ(h.fwd_time_segments, fwd_segmented ? std::min<std::int64_t>(16, resident / (2 * channels)) : 1) << s.b << "x" << s.d;
        if (fwd_segmented) EXPECT_EQ(h.state_split, 2) << s.b << "x" << s.d;
      }
      EXPECT_EQ(h.fwd_time_segments > 1, channels <= (s.n == 16 ? 4096 : 8192)) << h.to_json().dump();
      if (s.b == 2 && s.d == 4096 && s.n == 16) EXPECT_EQ(h.fwd_time_segments, 1);  // as measured (session 44)
      // the backward: one thread per channel walking two states at once from dstate 16 where
      // channels are many (more than 16384), and at dstate 16 where channels are few (16384 or
      // fewer) in time segments filling one wave of 8 warps an SM (the power of two at or
      // below; at most 16); else four threads
      // a channel at 16384 channels at dstate 32 and 64, two in the forward's time segments below
      // (as measured on the H200)
      const bool few = channels <= 16384;
      const bool many_one = !few && s.n >= 16, few_one = few && s.n == 16;
      EXPECT_EQ(h.bwd_state_split, many_one || few_one ? 1 : segmented ? 2 : few ? 4 : 2) << h.to_json().dump();
      EXPECT_EQ(h.bwd_state_interleave, many_one || few_one ? 2 : 1) << h.to_json().dump();
      // its chunk inputs copied into scratch a chunk ahead at dstate 16 (faster on the issue
      // shapes on the H200, in time segments too; not at dstate 32)
      EXPECT_EQ(h.bwd_stage_inputs, (many_one || few_one) && s.n == 16 ? 1 : 0) << h.to_json().dump();
      if (s.b == 8 && s.d == 4096 && s.n == 16) EXPECT_EQ(h.bwd_stage_inputs, 1);  // the anchor
      // the state loop compiled for normal chunks at dstate 32 only (faster there on an H100,
      // slower at 64, no change at 16: speed-notes §69)
      EXPECT_EQ(h.bwd_normal_loop, many_one && s.n == 32 ? 1 : 0) << h.to_json().dump();
      if (kernels::selective_scan_backend_limits(BackendKind::cuda).concurrency == 4 * resident) {
        std::int64_t one_wave = 1;
        while (2 * one_wave <= 8 * 32 * 132 / channels) one_wave *= 2;
        EXPECT_EQ(h.bwd_time_segments, few_one    ? std::min<std::int64_t>(16, one_wave)
                                        : segmented ? std::min<std::int64_t>(16, resident / (2 * channels))
                                                    : 1)
            << h.to_json().dump();
        if (s.b == 2 && s.d == 4096 && s.n == 16) EXPECT_EQ(h.bwd_time_segments, 4);  // the best count measured
        // the summary pass in blocks of 16 whole chunks, at most 8 a segment (measured on an H100)
        const std::int64_t chunks_per_segment = (((s.l + 7) / 8) + h.bwd_time_segments - 1) / h.bwd_time_segments;
        EXPECT_EQ(h.bwd_summary_blocks, h.bwd_time_segments > 1 ? std::clamp<std::int64_t>(chunks_per_segment / 16, 1, 8) : 1)
            << h.to_json().dump();
        if (s.b == 2 && s.d == 4096 && s.n == 16) EXPECT_EQ(h.bwd_summary_blocks, 8);
        if (s.b == 1 && s.d == 1024 && s.n == 16) EXPECT_EQ(h.bwd_summary_blocks, 2);
      }
      // each thread moving its own inputs in registers wherever the forward runs without time
      // segments (dstate 16 to 64 here), and at dstate 16 in time segments, as measured on the
      // H200: four threads a channel (teams of 128) at dstate 16 where four fill the threads
      // resident at the 128-register cap without segments (132 SMs x 512), two where one fills
      // fewer than 7 warps an SM (so wherever segments run), else one; two and four without
      // segments in teams of 64 channels with tiles of 64 steps (faster on an H100), in segments
      // teams of 32 channels and tiles of 32
      EXPECT_EQ(h.direct_io, h.fwd_time_segments == 1 || s.n == 16 ? 1 : 0) << h.to_json().dump();
      if (h.direct_io == 1 && kernels::selective_scan_backend_limits(BackendKind::cuda).concurrency == 4 * resident) {
        const bool four = s.n == 16 && !fwd_segmented && 4 * channels <= resident;
        const bool two = !four && s.n == 16 && channels < 7 * 32 * 132;
        EXPECT_EQ(h.state_split, four ? 4 : two ? 2 : 1) << h.to_json().dump();
        const bool wide = (four || two) && h.fwd_time_segments == 1 && s.d >= 64;
        EXPECT_EQ(h.channels_per_team, wide ? 64 : four || two ? 32 : std::min<std::int64_t>(128, s.d)) << h.to_json().dump();
        EXPECT_EQ(h.team_size, h.channels_per_team * h.state_split) << h.to_json().dump();
        EXPECT_EQ(h.time_tile, wide ? 64 : 32) << h.to_json().dump();
        if (s.b == 8 && s.d == 2048) EXPECT_EQ(h.state_split, 4);  // the one issue shape four fill
        if (s.b == 8 && s.d == 2048) EXPECT_EQ(h.team_size, 256);  // 64 channels, tiles of 64
        if (s.b == 4 && s.d == 5120) EXPECT_EQ(h.team_size, 128);
        if (s.b == 2 && s.d == 4096 && s.n == 16) EXPECT_EQ(h.team_size, 256);  // four threads, 64 channels, no segments
      }
    }
    SelectiveScanProblem inference = p;
    inference.with_backward = inference.has_dlast_state = false;
    const auto hi = kernels::selective_scan_heuristic_config(inference, BackendKind::cuda);
    EXPECT_EQ(hi.invalid_reason(inference, BackendKind::cuda), "");
    EXPECT_EQ(hi.impl, s.b * s.d >= 1024 ? "tiled" : "chunked") << s.b << "x" << s.d;
    EXPECT_EQ(hi.scratch_level, 0) << hi.to_json().dump();
    const auto candidates = kernels::selective_scan_candidate_configs(p, BackendKind::cuda);
    EXPECT_GE(candidates.size(), 8u);
    std::set<std::string> distinct;
    for (const auto& c : candidates) {
      EXPECT_EQ(c.invalid_reason(p, BackendKind::cuda), "");
      distinct.insert(c.to_json().dump());
    }
    EXPECT_EQ(distinct.size(), candidates.size());
    if (h.impl == "tiled") {  // every forward form is offered to tune (direct_io 2 where its tiles fit: to dstate 32)
      std::set<int> forms;
      for (const auto& c : candidates) forms.insert(c.direct_io);
      EXPECT_EQ(forms, s.n <= 32 ? (std::set<int>{0, 1, 2}) : (std::set<int>{0, 1})) << s.b << "x" << s.d << "x" << s.n;
    }
    if (h.impl == "tiled") {  // the other activation form second, where tune's evenly spaced picks always take it
      ASSERT_GE(candidates.size(), 2u);
      auto other = h;
      other.fast_activations = 1 - h.fast_activations;
      EXPECT_EQ(candidates[1], other);
    }
    const auto host = kernels::selective_scan_heuristic_config(p, BackendKind::serial);
    EXPECT_EQ(host.invalid_reason(p, BackendKind::serial), "");
    // --impl NAME: the rule for that implementation runs, with and without a backward.
    for (const auto& impl : kernels::selective_scan_implementations()) {
      for (const SelectiveScanProblem& q : {p, inference}) {
        for (BackendKind backend : {BackendKind::cuda, BackendKind::serial}) {
          const auto c = kernels::selective_scan_heuristic_config(q, backend, impl);
          EXPECT_EQ(c.impl, impl);
          EXPECT_EQ(c.invalid_reason(q, backend), "") << impl << " " << c.to_json().dump();
        }
      }
    }
  }
}

}  // namespace
}  // namespace scanlab
