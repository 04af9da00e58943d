// selective_scan and state_space_v1 kernels, forward and backward, one Kokkos source for
// Serial, OpenMP and CUDA. Semantics: kernels/problem/selective_scan.hpp (the oracle's, exactly);
// implementations and every tunable: kernels/selective_scan_config.hpp.
//
// The device-level API (benchmarks call it without host copies):
//   auto tensors   = allocate_selective_scan_tensors<Space>(problem, layout);   // fill the inputs
//   auto workspace = allocate_selective_scan_workspace<Space>(problem, config); // .bytes()
//   selective_scan_forward<Space>(problem, config, tensors, workspace, space);
//   selective_scan_backward<Space>(problem, config, tensors, workspace, space); // after a forward
// Both launch on `space` and return without fencing. The backward reads what the forward left in
// the workspace (the chunk-start states, "chunked"'s decays) and never modifies it, so it can be
// timed alone, repeatedly, after one forward. state_space_v1 is the same call with
// problem = StateSpaceV1Problem::as_selective_scan() and SequenceLayout::batch_seqlen_dim
// (hidden_states → u, dt → delta, gate → z, final_state → last_state).
//
// Structure. Every kernel works on a team of channels (one group, `channels_per_team` of them,
// each thread owning channels_per_team / team_size in turn) and on time either whole
// ("sequential") or one chunk per team ("chunked"). The per-step B and C a team's channels
// share are staged in team scratch once per time tile (with stage_io, the channels' u, dt, act(z)
// and out too, loaded and stored by the whole team along the tensor's contiguous axis); the
// backward stages a chunk's per-step inputs and gradients the same way. Kernel arguments travel
// in one Params
// struct of base pointers and int64 strides (CUTLASS style), which is how state_space_v1's
// time-major tensors run through the same code. Index arithmetic is int64 throughout.
//
// Measured on the H200 beside mamba_ssm in one run (fp32, z + D + delta_bias + softplus; mamba_ssm
// in brackets; reports/results/h200/2026-12-01-s6/final/): "tiled" forward 1.08 ms at
// (8,4096,16,2048) [2.35], 2.04 ms at (2,4096,16,8192) [2.53], 3.08 ms at dstate 64 [8.09];
// forward+backward 6.83 ms [7.72], 13.8 ms [8.00] and 27.9 ms [27.4]. "chunked" (session 3,
// 2026-11-29-s3-speed/final/): forward 5.21 ms at (2,4096,16,8192) [2.65]. Where the time goes
// and what is next: reports/speed-notes.md. "tiled" is described at ForwardTiled and (in
// selective_scan_backward.hpp, the backward half) BackwardTiled.
//
// Backward of "sequential" and "chunked", per chunk (last to first): the forward is recomputed over the chunk from its saved
// start state, one state n at a time (the states are independent given dt), keeping h and
// exp(dt·A) per step in team scratch; the adjoint g of that state then runs backwards over the
// chunk and every gradient term is formed. Terms summed over steps or states (du, ddelta) stay
// per channel; terms summed across channels or time are deterministic:
//   per-step dB, dC (a sum over the group's channels): each thread sums its channels in order,
//     the team sums its threads in a fixed binary tree, and the team's sum is written to dB
//     (one team per group) or to a per-team partial summed over teams in order by a second
//     kernel;
//   dA, dD, ddelta_bias, time-invariant dB and dC (sums over batch and time): a per-channel
//     register sum over the chunk, accumulated per channel in scratch across chunks, written
//     per (b, segment) to a partial and summed over batch and segments in order by a second
//     kernel.
// No floating-point atomics anywhere: with a fixed config the result is bitwise repeatable on
// every backend and independent of the number of threads.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "device_math.hpp"
#include "selective_scan_config.hpp"
#include "sfu.hpp"
#include "streaming.hpp"

namespace scanlab::kernels {

// ---------------------------------------------------------------------------------------------
// Public device-level API
// ---------------------------------------------------------------------------------------------

// Device tensors, flat float32 with the layout's strides (selective_scan_strides). Views of the
// options the problem lacks (and the gradients without a backward) are empty.
template <class Space>
struct SelectiveScanTensors {
  using View = Kokkos::View<float*, typename Space::memory_space>;
  SequenceLayout layout = SequenceLayout::batch_dim_seqlen;
  View u, delta, A, B, C, D, z, delta_bias, initial_state;  // inputs
  View out, last_state;                                    // forward outputs
  View dout, dlast_state;                                  // backward inputs
  View du, ddelta, dA, dB, dC, dD, dz, ddelta_bias, dinitial_state;  // gradients
};

// Allocates (uninitialised) every tensor the problem uses.
template <class Space>
SelectiveScanTensors<Space> allocate_selective_scan_tensors(const SelectiveScanProblem& p, SequenceLayout layout);

template <class Space>
struct SelectiveScanWorkspace {
  Kokkos::View<float*, typename Space::memory_space> buffer;
  SelectiveScanWorkspaceLayout layout;
  std::int64_t bytes() const { return layout.bytes(); }
};

// Allocates the workspace the config needs for the problem (its buffers and their sizes:
// SelectiveScanWorkspaceLayout). A workspace serves every later call with the same problem and
// config.
template <class Space>
SelectiveScanWorkspace<Space> allocate_selective_scan_workspace(const SelectiveScanProblem& p,
                                                                const SelectiveScanConfig& c);

// Forward: out and last_state (and, when p.with_backward, the chunk-start states for the
// backward). Throws std::invalid_argument when the config cannot run the problem.
template <class Space>
void selective_scan_forward(const SelectiveScanProblem& p, const SelectiveScanConfig& c,
                            const SelectiveScanTensors<Space>& t, const SelectiveScanWorkspace<Space>& w,
                            const Space& space = Space());

// Backward from dout (and dlast_state when p.has_dlast_state): every gradient of the problem.
// Needs p.with_backward and a forward run earlier with the same problem, config and workspace.
template <class Space>
void selective_scan_backward(const SelectiveScanProblem& p, const SelectiveScanConfig& c,
                             const SelectiveScanTensors<Space>& t, const SelectiveScanWorkspace<Space>& w,
                             const Space& space = Space());

template <class Space>
constexpr BackendKind backend_kind_of() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same<Space, Kokkos::Cuda>::value) return BackendKind::cuda;
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  if (std::is_same<Space, Kokkos::OpenMP>::value) return BackendKind::openmp;
#endif
  return BackendKind::serial;
}

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------
namespace detail {

using index_t = std::int64_t;

KOKKOS_INLINE_FUNCTION index_t min_index(index_t a, index_t b) { return a < b ? a : b; }

// Everything a kernel reads: dims, options, schedule, base pointers, strides, workspace and
// scratch layouts. Built once on the host, copied to the device by value.
struct Params {
  index_t batch = 0, dim = 0, dstate = 0, seqlen = 0, groups = 1, channels_per_group = 0;
  bool B_per_step = true, C_per_step = true, has_D = false, has_z = false, has_delta_bias = false;
  bool softplus = false, has_initial_state = false, has_dlast_state = false;
  bool save_chunk_states = false;  // "sequential" forward followed by a backward
  bool stage_io = false;
  GateActivation gate = GateActivation::silu;

  // schedule (SelectiveScanConfig)
  index_t channels_per_team = 1, team_size = 1, fwd_tiles = 1, time_tile = 1;
  index_t chunk_len = 1, num_chunks = 1;
  index_t bwd_channels_per_team = 1, bwd_team_size = 1, bwd_tiles = 1, channel_segments = 1;
  index_t time_segments = 1, chunks_per_segment = 1;  // "tiled"'s backward (workspace layout)
  index_t summary_blocks = 1, chunks_per_summary_block = 1;  // its summary pass's blocks of a segment
  index_t fwd_segments = 1, fwd_segment_len = 1;      // "tiled"'s forward likewise (steps a segment)
  int scratch_level = 0;

  SelectiveScanStrides st;
  const float *u = nullptr, *delta = nullptr, *A = nullptr, *B = nullptr, *C = nullptr, *D = nullptr;
  const float *z = nullptr, *delta_bias = nullptr, *initial_state = nullptr;
  const float *dout = nullptr, *dlast_state = nullptr;
  float *out = nullptr, *last_state = nullptr;
  float *du = nullptr, *ddelta = nullptr, *dA = nullptr, *dB = nullptr, *dC = nullptr, *dD = nullptr;
  float *dz = nullptr, *ddelta_bias = nullptr, *dinitial_state = nullptr;

  float *chunk_states = nullptr, *chunk_local = nullptr, *chunk_decay = nullptr;
  float *segment_adjoint = nullptr, *segment_decay = nullptr;
  float *segment_state = nullptr, *segment_state_decay = nullptr;
  float *part_dA = nullptr, *part_dB_channel = nullptr, *part_dC_channel = nullptr;
  float *part_dD = nullptr, *part_ddelta_bias = nullptr, *part_dB_step = nullptr, *part_dC_step = nullptr;

  ForwardScratch fwd_scratch;
  TiledScratch tiled_scratch;
  TiledBackwardScratch tiled_bwd_scratch;
  AdjointScratch adj_scratch;
  BackwardScratch bwd_scratch;

  KOKKOS_INLINE_FUNCTION index_t seq(index_t b, index_t d, index_t t) const {
    return b * st.seq_batch + d * st.seq_dim + t * st.seq_time;
  }
  KOKKOS_INLINE_FUNCTION index_t B_step(index_t b, index_t g, index_t n, index_t t) const {
    return b * st.B_batch + g * st.B_group + n * st.B_state + t * st.B_time;
  }
  KOKKOS_INLINE_FUNCTION index_t C_step(index_t b, index_t g, index_t n, index_t t) const {
    return b * st.C_batch + g * st.C_group + n * st.C_state + t * st.C_time;
  }
  KOKKOS_INLINE_FUNCTION index_t B_fixed(index_t d, index_t n) const { return d * st.B_dim + n * st.B_state; }
  KOKKOS_INLINE_FUNCTION index_t C_fixed(index_t d, index_t n) const { return d * st.C_dim + n * st.C_state; }
  KOKKOS_INLINE_FUNCTION index_t state(index_t b, index_t d, index_t n) const {
    return b * st.state_batch + d * st.state_dim + n * st.state_state;
  }
  // Workspace (B, S, N, D): channels innermost, so a warp's channels touch consecutive words.
  KOKKOS_INLINE_FUNCTION index_t chunk_slot(index_t b, index_t chunk, index_t n, index_t d) const {
    return ((b * num_chunks + chunk) * dstate + n) * dim + d;
  }
  KOKKOS_INLINE_FUNCTION index_t channel_partial(index_t b, index_t segment, index_t n, index_t d) const {
    return ((b * channel_segments + segment) * dstate + n) * dim + d;
  }
  // segment_adjoint, segment_decay (B, P·Q, N, D): summary block `block` of all P·Q (segment·Q + its own).
  KOKKOS_INLINE_FUNCTION index_t summary_slot(index_t b, index_t block, index_t n, index_t d) const {
    return ((b * channel_segments * summary_blocks + block) * dstate + n) * dim + d;
  }
  KOKKOS_INLINE_FUNCTION index_t channel_partial(index_t b, index_t segment, index_t d) const {
    return (b * channel_segments + segment) * dim + d;
  }
  // The forward's per-segment summaries (B, fwd_segments, N, D).
  KOKKOS_INLINE_FUNCTION index_t forward_segment(index_t b, index_t segment, index_t n, index_t d) const {
    return ((b * fwd_segments + segment) * dstate + n) * dim + d;
  }
  // The state where forward segment `segment` starts: the one before the sequence (initial_state,
  // else zero) carried through the earlier segments' summaries, first first.
  KOKKOS_INLINE_FUNCTION float segment_start_state(index_t b, index_t segment, index_t n, index_t d) const {
    float h = has_initial_state ? device_math::load_readonly(initial_state + state(b, d, n)) : 0.0f;
    for (index_t earlier = 0; earlier < segment; ++earlier) {
      const index_t at = forward_segment(b, earlier, n, d);
      h = segment_state_decay[at] * h + segment_state[at];
    }
    return h;
  }
  KOKKOS_INLINE_FUNCTION index_t step_partial(index_t b, index_t g, index_t tile, index_t n, index_t t) const {
    return (((b * groups + g) * bwd_tiles + tile) * dstate + n) * seqlen + t;
  }

  KOKKOS_INLINE_FUNCTION float dt_raw(index_t b, index_t d, index_t t) const {
    return device_math::load_readonly(delta + seq(b, d, t)) +
           (has_delta_bias ? device_math::load_readonly(delta_bias + d) : 0.0f);
  }
};

// dt = softplus(raw) = log1p(exp(raw)), except that raw > 20 keeps raw (mamba_ssm's threshold).
// A literal, not kSoftplusThreshold itself: a host constexpr double is not device code.
#define SCANLAB_SOFTPLUS_THRESHOLD_F32 20.0f
static_assert(double(SCANLAB_SOFTPLUS_THRESHOLD_F32) == kSoftplusThreshold, "softplus threshold mismatch");
KOKKOS_INLINE_FUNCTION float softplus_f32(float raw) {
  return raw > SCANLAB_SOFTPLUS_THRESHOLD_F32 ? raw : device_math::log1p_f32(device_math::exp_f32(raw));
}
KOKKOS_INLINE_FUNCTION float softplus_slope_f32(float raw) {
  return raw > SCANLAB_SOFTPLUS_THRESHOLD_F32 ? 1.0f : device_math::sigmoid_f32(raw);
}

// The gate act(z) and act'(z), in the naive float32 forms the oracle's error bound models; silu's
// σ from `sigmoid` (the library form or the SFU form, Activations below).
struct GateValue {
  float act, slope;
};
template <class Sigmoid>
KOKKOS_INLINE_FUNCTION GateValue gate_with(GateActivation activation, float z, Sigmoid sigmoid) {
  switch (activation) {
    case GateActivation::silu: {
      const float s = sigmoid(z);
      return {z * s, s * (1.0f + z * (1.0f - s))};
    }
    case GateActivation::identity: return {z, 1.0f};
    case GateActivation::gelu_tanh: {
      const float scale = 0.7978845608028654f, cubic = 0.044715f;  // sqrt(2/pi)
      const float th = device_math::tanh_f32(scale * (z + cubic * (z * z * z)));
      const float s = 1.0f + th;
      return {0.5f * z * s, 0.5f * s + 0.5f * z * (1.0f - th * th) * scale * (1.0f + 3.0f * cubic * (z * z))};
    }
    case GateActivation::gelu_erf: {
      const float e = device_math::erf_f32(z * 0.7071067811865476f);
      const float s = 1.0f + e;
      const float pdf = 0.3989422804014327f * device_math::exp_f32(-(0.5f * (z * z)));
      return {0.5f * z * s, 0.5f * s + z * pdf};
    }
  }
  return {z, 1.0f};
}
KOKKOS_INLINE_FUNCTION GateValue gate_f32(GateActivation activation, float z) {
  return gate_with(activation, z, [](float x) { return device_math::sigmoid_f32(x); });
}

// softplus, its slope and the gate in the form the tiled kernels compile (config field
// fast_activations): kSfu false, the library forms above (~45 and ~25 instructions for expf/log1pf
// and the IEEE divide); true, softplus and silu's σ with one MUFU.EX2 each and the rest on the FMA
// pipe (sfu.hpp); the gelus keep their library forms. Compile-time, because a run-time choice
// between the two cost more than it saved (reports/speed-notes.md §10).
// The SFU forms need no threshold test: above 20, e^-raw < 2.1e-9 is below half an ulp of raw
// and of 1, so softplus_sfu_f32(raw) rounds to raw and sigmoid_sfu_f32(raw) to 1 (the Newton
// reciprocal of 1 is exactly 1) bit for bit, the threshold's values (a host test holds them equal).
template <bool kSfu>
struct Activations {
  static KOKKOS_INLINE_FUNCTION float softplus(float raw) {
    if constexpr (kSfu) return softplus_sfu_f32(raw);
    else return softplus_f32(raw);
  }
  static KOKKOS_INLINE_FUNCTION float softplus_slope(float raw) {
    if constexpr (kSfu) return sigmoid_sfu_f32(raw);
    else return softplus_slope_f32(raw);
  }
  // {softplus(raw), softplus_slope(raw)}, the same bits as the two calls
  static KOKKOS_INLINE_FUNCTION SoftplusWithSlope softplus_with_slope(float raw) {
    if constexpr (kSfu) return softplus_with_slope_sfu_f32(raw);
    else return {softplus_f32(raw), softplus_slope_f32(raw)};
  }
  static KOKKOS_INLINE_FUNCTION GateValue gate(GateActivation activation, float z) {
    if constexpr (kSfu) return gate_with(activation, z, [](float x) { return sigmoid_sfu_f32(x); });
    else return gate_f32(activation, z);
  }
};

// Calls f(GateKind<a>()) with the gate activation a as a compile-time constant (its `value`), so
// that a loop inside f carries no per-element switch over it.
template <GateActivation kA>
struct GateKind {
  static constexpr GateActivation value = kA;
};
template <class F>
KOKKOS_INLINE_FUNCTION void with_gate_kind(GateActivation a, const F& f) {
  switch (a) {
    case GateActivation::silu: f(GateKind<GateActivation::silu>()); return;
    case GateActivation::identity: f(GateKind<GateActivation::identity>()); return;
    case GateActivation::gelu_tanh: f(GateKind<GateActivation::gelu_tanh>()); return;
    case GateActivation::gelu_erf: f(GateKind<GateActivation::gelu_erf>()); return;
  }
}

// Per-state arrays of one channel: registers for a compile-time dstate, team scratch (one
// column per thread, stride team size, so a warp's accesses hit distinct banks) otherwise.
template <int kN>
struct StateArray {
  float v[kN];
  KOKKOS_INLINE_FUNCTION StateArray(float*, index_t) {}
  KOKKOS_INLINE_FUNCTION float& operator[](index_t n) { return v[n]; }
};
template <>
struct StateArray<0> {
  float* base;
  index_t stride;
  KOKKOS_INLINE_FUNCTION StateArray(float* b, index_t s) : base(b), stride(s) {}
  KOKKOS_INLINE_FUNCTION float& operator[](index_t n) const { return base[n * stride]; }
};

// The team's scratch as floats; aborts (rather than writing through nullptr) if Kokkos could not
// provide what the launch asked for.
template <class Member, class ScratchView>
KOKKOS_INLINE_FUNCTION float* team_scratch_floats(const Member& team, int level, index_t floats) {
  ScratchView scratch(team.team_scratch(level), floats);
  if (floats > 0 && scratch.data() == nullptr) Kokkos::abort("scanlab selective_scan: team scratch allocation failed");
  return scratch.data();
}

// Address of an array in team scratch plus an offset; nullptr when the layout has no such array.
KOKKOS_INLINE_FUNCTION float* scratch_at(float* base, index_t offset, index_t plus = 0) {
  return offset >= 0 ? base + offset + plus : nullptr;
}

// Which (batch, group, channel tile, chunk) a team works on: chunk fastest, then tile.
struct TeamWork {
  index_t b, g, tile, chunk;
};
KOKKOS_INLINE_FUNCTION TeamWork team_work(index_t rank, index_t chunks, index_t tiles, index_t groups) {
  TeamWork w;
  w.chunk = rank % chunks;
  rank /= chunks;
  w.tile = rank % tiles;
  rank /= tiles;
  w.g = rank % groups;
  w.b = rank / groups;
  return w;
}

// Stages the per-step B (and C) of time steps [t_begin, t_begin + len) for group g into team
// scratch as [n][k] with row stride `row`: consecutive threads read consecutive steps.
template <class Member>
KOKKOS_INLINE_FUNCTION void stage_bc(const Member& team, const Params& p, index_t b, index_t g, index_t t_begin,
                                     index_t len, index_t row, float* stage_B, float* stage_C) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, p.dstate * len), [&](const index_t i) {
    const index_t n = i / len, k = i % len;
    if (stage_B) stage_B[n * row + k] = device_math::load_readonly(p.B + p.B_step(b, g, n, t_begin + k));
    if (stage_C) stage_C[n * row + k] = device_math::load_readonly(p.C + p.C_step(b, g, n, t_begin + k));
  });
}

// Visits every (row, k) of `rows` consecutive channels × `len` consecutive steps of a (b, d, t)
// tensor across the team, consecutive iterations on consecutive addresses: k fastest when
// seqlen is contiguous (selective_scan's layout), the row fastest when dim is (state_space_v1's).
// rows·len fits 32 bits (a team's tile), so the index arithmetic is 32-bit: 64-bit division is a
// long software sequence on GPUs.
template <class Member, class F>
KOKKOS_INLINE_FUNCTION void for_each_sequence_element(const Member& team, const Params& p, index_t rows, index_t len,
                                                      const F& f) {
  const bool time_contiguous = p.st.seq_time == 1;
  const unsigned r = unsigned(rows), l = unsigned(len);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, int(r * l)), [&](const int i) {
    const unsigned u = unsigned(i);
    if (time_contiguous) f(index_t(u / l), index_t(u % l));
    else f(index_t(u % r), index_t(u / r));
  });
}

// Sums `rows` rows of `cols` floats (row stride `stride`) into row 0 along a fixed binary tree:
// the same additions in the same order on every run and backend. Two matrices at once (either
// may be nullptr). Ends with a barrier.
template <class Member>
KOKKOS_INLINE_FUNCTION void team_tree_sum_rows(const Member& team, float* m0, float* m1, index_t rows, index_t stride,
                                               index_t cols) {
  for (index_t step = 1; step < rows; step *= 2) {
    const index_t pairs = (rows + 2 * step - 1) / (2 * step);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, pairs * cols), [&](const index_t i) {
      const index_t r = (i / cols) * 2 * step, col = i % cols;
      if (r + step < rows) {
        if (m0) m0[r * stride + col] += m0[(r + step) * stride + col];
        if (m1) m1[r * stride + col] += m1[(r + step) * stride + col];
      }
    });
    team.team_barrier();
  }
}

enum class ForwardMode : int {
  sequential,   // all of time from initial_state (saving chunk-start states if asked)
  chunk_final,  // one chunk from its carried start state ("chunked"'s last pass)
};

// The forward scan. kLocal: "chunked"'s first pass, one chunk from a zero state, writing only
// its end state and decay product Π exp(dt·A) (no outputs; C is not read).
template <class Space, int kN, bool kLocal>
struct ForwardScan {
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using ScratchView = Kokkos::View<float*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  Params p;
  ForwardMode mode;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const bool whole_sequence = !kLocal && mode == ForwardMode::sequential;
    const TeamWork w = team_work(team.league_rank(), whole_sequence ? 1 : p.num_chunks, p.fwd_tiles, p.groups);
    const index_t chunk_begin = whole_sequence ? 0 : w.chunk;
    const index_t chunk_end = whole_sequence ? p.num_chunks : w.chunk + 1;
    float* const base = team_scratch_floats<Member, ScratchView>(team, p.scratch_level, p.fwd_scratch.total);
    const index_t thread = team.team_rank(), T = p.team_size, reps = p.channels_per_team / T;
    const index_t N = kN > 0 ? index_t(kN) : p.dstate;
    // B, C of step k and state n at stage[n·row + k·step]: a shared time tile when per-step,
    // this thread's column (its channel's row, step 0) when time-invariant.
    float* const stage_B = scratch_at(base, p.fwd_scratch.stage_B, p.B_per_step ? 0 : thread);
    float* const stage_C = scratch_at(base, p.fwd_scratch.stage_C, p.C_per_step ? 0 : thread);
    const index_t B_row = p.B_per_step ? p.time_tile : T, B_step = p.B_per_step ? 1 : 0;
    const index_t C_row = p.C_per_step ? p.time_tile : T, C_step = p.C_per_step ? 1 : 0;
    // With stage_io, per-step inputs and output of the rep's channels, one row per thread.
    const bool stage_io = p.stage_io;
    const index_t io_row = p.time_tile + 1;
    float* const io_u = scratch_at(base, p.fwd_scratch.io_u);
    float* const io_dt = scratch_at(base, p.fwd_scratch.io_dt);
    float* const io_gate = kLocal ? nullptr : scratch_at(base, p.fwd_scratch.io_gate);
    float* const io_out = scratch_at(base, p.fwd_scratch.io_out);

    for (index_t rep = 0; rep < reps; ++rep) {
      const index_t channel = w.tile * p.channels_per_team + rep * T + thread;
      const bool active = channel < p.channels_per_group;
      const index_t d = w.g * p.channels_per_group + (active ? channel : 0);
      StateArray<kN> h(scratch_at(base, p.fwd_scratch.state, thread), T);
      StateArray<kN> A(scratch_at(base, p.fwd_scratch.A, thread), T);
      StateArray<kN> decay(scratch_at(base, p.fwd_scratch.decay, thread), T);
      if (active) {
        SCANLAB_UNROLL
        for (index_t n = 0; n < N; ++n) {
          A[n] = device_math::load_readonly(p.A + d * p.dstate + n);
          if (!p.B_per_step) stage_B[n * B_row] = device_math::load_readonly(p.B + p.B_fixed(d, n));
          if (!kLocal && !p.C_per_step) stage_C[n * C_row] = device_math::load_readonly(p.C + p.C_fixed(d, n));
          float h0 = 0.0f;
          if (kLocal) {
            decay[n] = 1.0f;
          } else if (whole_sequence) {
            if (p.has_initial_state) h0 = device_math::load_readonly(p.initial_state + p.state(w.b, d, n));
          } else {
            h0 = p.chunk_states[p.chunk_slot(w.b, w.chunk, n, d)];
          }
          h[n] = h0;
        }
      }
      const float D_d = active && p.has_D ? device_math::load_readonly(p.D + d) : 0.0f;

      for (index_t chunk = chunk_begin; chunk < chunk_end; ++chunk) {
        const index_t t0 = chunk * p.chunk_len, t1 = min_index(t0 + p.chunk_len, p.seqlen);
        if (!kLocal && whole_sequence && p.save_chunk_states && active) {
          SCANLAB_UNROLL
          for (index_t n = 0; n < N; ++n) p.chunk_states[p.chunk_slot(w.b, chunk, n, d)] = h[n];
        }
        for (index_t tile_begin = t0; tile_begin < t1; tile_begin += p.time_tile) {
          const index_t len = min_index(p.time_tile, t1 - tile_begin);
          team.team_barrier();  // the previous tile's stages are read and its outputs stored
          stage_bc(team, p, w.b, w.g, tile_begin, len, p.time_tile, p.B_per_step ? stage_B : nullptr,
                   !kLocal && p.C_per_step ? stage_C : nullptr);
          if (stage_io) for_each_sequence_element(team, p, T, len, [&](const index_t row, const index_t k) {
            const index_t c = w.tile * p.channels_per_team + rep * T + row;
            if (c >= p.channels_per_group) return;
            const index_t dd = w.g * p.channels_per_group + c, t = tile_begin + k, at = p.seq(w.b, dd, t);
            const float raw = p.dt_raw(w.b, dd, t);
            io_dt[row * io_row + k] = p.softplus ? softplus_f32(raw) : raw;
            io_u[row * io_row + k] = device_math::load_readonly(p.u + at);
            if (io_gate) io_gate[row * io_row + k] = gate_f32(p.gate, device_math::load_readonly(p.z + at)).act;
          });
          team.team_barrier();
          if (active) {
            for (index_t k = 0; k < len; ++k) {
              const index_t at = p.seq(w.b, d, tile_begin + k);
              float dt, x;
              if (stage_io) {
                dt = io_dt[thread * io_row + k];
                x = io_u[thread * io_row + k];
              } else {
                const float raw = p.dt_raw(w.b, d, tile_begin + k);
                dt = p.softplus ? softplus_f32(raw) : raw;
                x = device_math::load_readonly(p.u + at);
              }
              float y = 0.0f;
              SCANLAB_UNROLL
              for (index_t n = 0; n < N; ++n) {
                const float a = device_math::exp_f32(dt * A[n]);
                h[n] = a * h[n] + dt * stage_B[n * B_row + k * B_step] * x;
                if (kLocal) decay[n] *= a;
                else y += stage_C[n * C_row + k * C_step] * h[n];
              }
              if (!kLocal) {
                if (p.has_D) y += D_d * x;
                if (stage_io) io_out[thread * io_row + k] = io_gate ? y * io_gate[thread * io_row + k] : y;
                else p.out[at] = p.has_z ? y * gate_f32(p.gate, device_math::load_readonly(p.z + at)).act : y;
              }
            }
          }
          if (!kLocal && stage_io) {
            team.team_barrier();
            for_each_sequence_element(team, p, T, len, [&](const index_t row, const index_t k) {
              const index_t c = w.tile * p.channels_per_team + rep * T + row;
              if (c >= p.channels_per_group) return;
              p.out[p.seq(w.b, w.g * p.channels_per_group + c, tile_begin + k)] = io_out[row * io_row + k];
            });
          }
        }
      }

      if (!active) continue;
      if (kLocal) {
        SCANLAB_UNROLL
        for (index_t n = 0; n < N; ++n) {
          p.chunk_local[p.chunk_slot(w.b, w.chunk, n, d)] = h[n];
          p.chunk_decay[p.chunk_slot(w.b, w.chunk, n, d)] = decay[n];
        }
      } else if (chunk_end == p.num_chunks) {
        SCANLAB_UNROLL
        for (index_t n = 0; n < N; ++n) p.last_state[p.state(w.b, d, n)] = h[n];
      }
    }
  }
};

// A 16-byte aligned address inside a team's scratch (the float4 reads and cp.async need it).
KOKKOS_INLINE_FUNCTION float* align16(float* p) {
  return reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(p) + 15) & ~std::uintptr_t(15));
}
using streaming::load4;
using streaming::store4;

// Up to four (b, d, t) tensors copied from global memory into [row][k] team-scratch tiles (row
// stride `row`, a multiple of 4): rows channels from d0, steps [t0, t0 + len).
struct SequenceTile {
  const float* src[4] = {nullptr, nullptr, nullptr, nullptr};  // tensor i → tile i
  float* dst[4] = {nullptr, nullptr, nullptr, nullptr};
  int count = 0;
  index_t row = 0;
};

// A run width known at compile time: the whole 16-byte run (4) or one element (1). Callers' loops
// over a run's steps take it as `auto` and unroll without branches for these.
template <int kW>
struct RunWidth {
  KOKKOS_INLINE_FUNCTION constexpr operator int() const { return kW; }
};

// One thread's walk over a team's (outer, inner) index space in row-major order, its indices
// team_size apart: (outer, inner) advance by a fixed step, so the walk costs one division, not one
// per index (an unsigned division by a run-time value is ~20 instructions: ncu's per-SASS counts of
// the tiled forward, reports/speed-notes.md §9).
struct TeamWalk {
  unsigned outer, inner, outer_step, inner_step, extent;
  template <class Member>
  KOKKOS_INLINE_FUNCTION TeamWalk(const Member& team, unsigned inner_extent)
      : outer(unsigned(team.team_rank()) / inner_extent),
        inner(unsigned(team.team_rank()) % inner_extent),
        outer_step(unsigned(team.team_size()) / inner_extent),
        inner_step(unsigned(team.team_size()) % inner_extent),
        extent(inner_extent) {}
  // The walk's start over inner_extent, copied from `known` when that started over the same extent
  // (a kernel computes its full tile's walks once, so only a shorter last tile divides again).
  template <class Member>
  static KOKKOS_INLINE_FUNCTION TeamWalk start(const Member& team, unsigned inner_extent, const TeamWalk* known) {
    return known != nullptr && known->extent == inner_extent ? *known : TeamWalk(team, inner_extent);
  }
  KOKKOS_INLINE_FUNCTION bool within(unsigned outer_extent) const { return outer < outer_extent; }
  KOKKOS_INLINE_FUNCTION void next() {
    outer += outer_step;
    inner += inner_step;
    if (inner >= extent) {
      inner -= extent;
      ++outer;
    }
  }
};

// Visits a tile of `rows` channels and steps [t0, t0 + len) once in runs: f(row, k, width) covers
// `width` consecutive steps from k of one row. Along seqlen in 16-byte runs (width RunWidth<4>; the
// tail narrower, an int) when every row start and t0 are 16-byte aligned; else element by element
// (RunWidth<1>) along whichever axis is contiguous, so consecutive threads touch consecutive global
// addresses. Tile-local indices are 32-bit: 64-bit division is a long software sequence on GPUs.
// known: the walk's start over a full tile's runs (TeamWalk::start), or nullptr.
template <class Member, class F>
KOKKOS_INLINE_FUNCTION void for_each_tile_run(const Member& team, const Params& p, index_t rows, index_t t0,
                                              index_t len, const F& f, const TeamWalk* known = nullptr) {
  if (p.st.seq_time == 1 && p.seqlen % 4 == 0 && t0 % 4 == 0) {
    for (TeamWalk run = TeamWalk::start(team, unsigned(len + 3) / 4, known); run.within(unsigned(rows)); run.next()) {
      const index_t k = index_t(run.inner) * 4;
      if (k + 4 <= len) f(index_t(run.outer), k, RunWidth<4>());
      else f(index_t(run.outer), k, int(len - k));
    }
  } else {
    for_each_sequence_element(team, p, rows, len,
                              [&](const index_t row, const index_t k) { f(row, k, RunWidth<1>()); });
  }
}

// Moves every run of a tile once per tensor: move(dst, src, width) moves `width` consecutive floats
// along seqlen from the tensor at (b, d0 + row, t0 + k) to the tile at [row][k]. The tensor loop
// has a constant bound so `tile`'s arrays stay in registers.
template <class Member, class Move>
KOKKOS_INLINE_FUNCTION void for_each_tile_piece(const Member& team, const Params& p, const SequenceTile& tile, index_t b,
                                                index_t d0, index_t rows, index_t t0, index_t len, const Move& move,
                                                const TeamWalk* known) {
  const index_t tile_at = p.seq(b, d0, t0);  // 64-bit index arithmetic once per tile, not per run
  for_each_tile_run(team, p, rows, t0, len, [&](const index_t row, const index_t k, const auto width) {
    const index_t at = tile_at + row * p.st.seq_dim + k * p.st.seq_time, slot = row * tile.row + k;
    SCANLAB_UNROLL
    for (int m = 0; m < 4; ++m)
      if (m < tile.count) move(tile.dst[m] + slot, tile.src[m] + at, width);
  }, known);
}

// Issues asynchronous copies of every tensor of `tile` into its scratch tile (without committing).
// known: as for_each_tile_run's.
template <class Member>
KOKKOS_INLINE_FUNCTION void issue_sequence_tile(const Member& team, const Params& p, const SequenceTile& tile,
                                                index_t b, index_t d0, index_t rows, index_t t0, index_t len,
                                                const TeamWalk* known = nullptr) {
  for_each_tile_piece(team, p, tile, b, d0, rows, t0, len, [](float* dst, const float* src, const auto width) {
    if (int(width) == 4) device_math::async_copy_f32x4(dst, src);
    else for (int j = 0; j < int(width); ++j) device_math::async_copy_f32(dst + j, src + j);
  }, known);
}

// Per-step B and C both contiguous along seqlen (selective_scan's (b, g, n, t)), not along the
// states (state_space_v1's (b, t, n)).
KOKKOS_INLINE_FUNCTION bool bc_steps_fastest(const Params& p) { return p.st.B_time == 1 && p.st.C_time == 1; }

// Issues asynchronous copies of per-step B and C of steps [t0, t0 + len) into [n][k] tiles; kK is
// the caller's compile-time chunk. kWithB false: C alone (the backward's summary pass reads no B).
template <int kK, bool kWithB = true, class Member>
KOKKOS_INLINE_FUNCTION void issue_bc_tile(const Member& team, const Params& p, float* Bs, float* Cs, index_t bc_row,
                                          index_t b, index_t g, index_t t0, index_t len) {
  namespace dm = device_math;
  if constexpr (!kWithB) (void)Bs;
  if (bc_steps_fastest(p) && p.seqlen % 4 == 0 && t0 % 4 == 0) {
    if (kK % 4 == 0 && len == kK) {
      // A whole chunk: the quads a state known at compile time (a shift, not a run-time division)
      // and every copy an offset from the chunk's (b, g, 0, t0), not a four-term 64-bit index
      // each (speed-notes §50).
      constexpr unsigned kQuads = unsigned(kK) / 4;
      const float* const B0 = p.B + p.B_step(b, g, 0, t0);
      const float* const C0 = p.C + p.C_step(b, g, 0, t0);
      const unsigned items = unsigned(p.dstate) * kQuads;
      for (unsigned i = unsigned(team.team_rank()); i < items; i += unsigned(team.team_size())) {
        const unsigned n = i / kQuads, k = i % kQuads * 4;
        if constexpr (kWithB) dm::async_copy_f32x4(Bs + n * bc_row + k, B0 + n * p.st.B_state + k);
        dm::async_copy_f32x4(Cs + n * bc_row + k, C0 + n * p.st.C_state + k);
      }
      return;
    }
    const int quads = int(len + 3) / 4;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, int(p.dstate) * quads), [&](const int i) {
      const int n = i / quads, k = (i % quads) * 4;
      const index_t slot = n * bc_row + k, atB = p.B_step(b, g, n, t0 + k), atC = p.C_step(b, g, n, t0 + k);
      if (k + 4 <= len) {
        if constexpr (kWithB) dm::async_copy_f32x4(Bs + slot, p.B + atB);
        dm::async_copy_f32x4(Cs + slot, p.C + atC);
      } else {
        for (index_t j = 0; j < len - k; ++j) {
          if constexpr (kWithB) dm::async_copy_f32(Bs + slot + j, p.B + atB + j);
          dm::async_copy_f32(Cs + slot + j, p.C + atC + j);
        }
      }
    });
  } else {  // states contiguous (state_space_v1's (b, L, N)): n fastest
    const int states = int(p.dstate);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, states * int(len)), [&](const int i) {
      const int n = i % states, k = i / states;
      if constexpr (kWithB) dm::async_copy_f32(Bs + n * bc_row + k, p.B + p.B_step(b, g, n, t0 + k));
      dm::async_copy_f32(Cs + n * bc_row + k, p.C + p.C_step(b, g, n, t0 + k));
    });
  }
}

// Issues asynchronous copies of per-step B and C of steps [t0, t0 + len) into step-major [k][n]
// tiles (step stride bc_step), the tiled forward's layout: a thread reads its consecutive states of
// a step at compile-time offsets from one pointer. The layout transposes B and C, so elements go one
// float at a time: consecutive threads take consecutive steps where seqlen is contiguous (a warp's
// reads coalesce), else consecutive states. The walk's inner extent is bc_steps_inner(p, len);
// known: a walk's start over it (TeamWalk::start), or nullptr.
KOKKOS_INLINE_FUNCTION unsigned bc_steps_inner(const Params& p, index_t len) {
  return bc_steps_fastest(p) ? unsigned(len) : unsigned(p.dstate);
}
template <class Member>
KOKKOS_INLINE_FUNCTION void issue_bc_steps(const Member& team, const Params& p, float* Bs, float* Cs, int bc_step,
                                           index_t b, index_t g, index_t t0, index_t len,
                                           const TeamWalk* known = nullptr) {
  const bool steps_fastest = bc_steps_fastest(p);
  const unsigned states = unsigned(p.dstate), steps = unsigned(len);
  const index_t atB = p.B_step(b, g, 0, t0), atC = p.C_step(b, g, 0, t0);
  for (TeamWalk e = TeamWalk::start(team, bc_steps_inner(p, len), known); e.within(steps_fastest ? states : steps);
       e.next()) {
    const unsigned n = steps_fastest ? e.outer : e.inner, k = steps_fastest ? e.inner : e.outer;
    device_math::async_copy_f32(Bs + k * unsigned(bc_step) + n, p.B + atB + n * p.st.B_state + k * p.st.B_time);
    device_math::async_copy_f32(Cs + k * unsigned(bc_step) + n, p.C + atC + n * p.st.C_state + k * p.st.C_time);
  }
}

// kCount consecutive floats from a 16-byte aligned address (a scratch row, or a channel's steps in
// global memory): 16-byte reads when kCount is a multiple of 4, else one float at a time.
template <int kCount>
KOKKOS_FORCEINLINE_FUNCTION void load_run(const float* row, float (&v)[kCount]) {
  if constexpr (kCount % 4 == 0) {
    SCANLAB_UNROLL
    for (int q = 0; q < kCount; q += 4) {
      const streaming::Float4 f = load4(row + q);
      v[q] = f.x; v[q + 1] = f.y; v[q + 2] = f.z; v[q + 3] = f.w;
    }
  } else {
    SCANLAB_UNROLL
    for (int j = 0; j < kCount; ++j) v[j] = row[j];
  }
}

// load_run's converse: kCount floats to a 16-byte aligned scratch row.
template <int kCount>
KOKKOS_FORCEINLINE_FUNCTION void store_run(float* row, const float (&v)[kCount]) {
  if constexpr (kCount % 4 == 0) {
    SCANLAB_UNROLL
    for (int q = 0; q < kCount; q += 4) store4(row + q, streaming::Float4{v[q], v[q + 1], v[q + 2], v[q + 3]});
  } else {
    SCANLAB_UNROLL
    for (int j = 0; j < kCount; ++j) row[j] = v[j];
  }
}

// Where a forward thread's walk ends: the summary pass keeps its kM states from first_state and
// their decay products for the segments after it; the walk that ends the sequence (the whole
// sequence, or its last segment) leaves them in last_state.
template <int kM>
KOKKOS_FORCEINLINE_FUNCTION void store_walk_end(const Params& p, bool summary, bool ends_sequence, index_t b,
                                                index_t segment, index_t first_state, index_t d, const float (&h)[kM],
                                                const float (&decay)[kM]) {
  if (summary) {
    SCANLAB_UNROLL
    for (int i = 0; i < kM; ++i) {
      const index_t at = p.forward_segment(b, segment, first_state + i, d);
      p.segment_state[at] = h[i];
      p.segment_state_decay[at] = decay[i];
    }
  } else if (ends_sequence) {
    SCANLAB_UNROLL
    for (int i = 0; i < kM; ++i) p.last_state[p.state(b, d, first_state + i)] = h[i];
  }
}

// The start of kJ state steps: y zeroed, and dt·u once a step, not once a state (the bound takes
// dt·B·u in any association): 5 instructions a state-step (MUFU.EX2, its argument's FMUL, B·dtu,
// the state's FFMA, y's FFMA).
template <int kJ>
KOKKOS_FORCEINLINE_FUNCTION void start_state_steps(const float (&x)[kJ], const float (&dt)[kJ], float (&dtu)[kJ],
                                                   float (&y)[kJ]) {
  SCANLAB_UNROLL
  for (int j = 0; j < kJ; ++j) {
    y[j] = 0.0f;
    dtu[j] = dt[j] * x[j];
  }
}

// kJ consecutive steps of one thread's kM states (registers), the tiled forwards' inner loop: x and
// dt of each step in registers, B and C of step j at Bk + j·kBcStep and Ck + j·kBcStep (step-major
// team tiles; the thread's consecutive states at compile-time offsets, kStateRead-float reads).
// y[j] is the states' share of step j's output (ascending states); kSummary: no C and no y, the
// decays' running products instead. kNormal: every decay of these steps is known to be a normal
// float (exp2_stays_normal), so the flush-to-zero exp2 gives the same bits without the subnormal
// fix-up.
template <int kM, int kJ, int kBcStep, bool kNormal, bool kSummary>
KOKKOS_FORCEINLINE_FUNCTION void state_steps(const float* Bk, const float* Ck, const float (&x)[kJ],
                                             const float (&dt)[kJ], float (&h)[kM], const float (&A2)[kM],
                                             float (&decay)[kM], float (&y)[kJ]) {
  constexpr int kStateRead = kM % 4 == 0 ? 4 : 1;  // states per scratch read
  float dtu[kJ];
  start_state_steps(x, dt, dtu, y);
  SCANLAB_UNROLL
  for (int i0 = 0; i0 < kM; i0 += kStateRead) {
    SCANLAB_UNROLL
    for (int j = 0; j < kJ; ++j) {
      float bn[kStateRead], cn[kStateRead];
      load_run<kStateRead>(Bk + j * kBcStep + i0, bn);
      if (!kSummary) load_run<kStateRead>(Ck + j * kBcStep + i0, cn);
      SCANLAB_UNROLL
      for (int q = 0; q < kStateRead; ++q) {
        const int i = i0 + q;
        const float a = kNormal ? sfu_exp2(dt[j] * A2[i]) : sfu_exp2_subnormal(dt[j] * A2[i]);
        h[i] = a * h[i] + bn[q] * dtu[j];
        if (kSummary) decay[i] *= a;
        else y[j] += cn[q] * h[i];  // states in ascending order for every step
      }
    }
  }
}

// How a tiled kernel covers time: the whole sequence per team (the kernel as it was before time
// segments: their bounds and carries cost registers under the 128 cap, 8-9% at the anchor in
// reports/results/h200/2026-12-02-s10/segments-first/), one time segment per team from its
// carried start, or the summary pass that gives segments their carries.
enum class TimeSegments { whole, walk, summary };

// "tiled"'s forward (selective_scan_config.hpp). Team = (b, g, channel tile); kS threads per
// channel (thread = row·kS + part; part owns the kM consecutive states from part·kM), so a pass
// runs team_size / kS channels, the rows of the tiles, and the team runs channels_per_team of them
// in passes. Per pass, time goes tile by tile; with a backward to follow, the state is saved where
// a chunk starts. Per tile: it lands (barrier), tile i+1's copies are issued, the team turns raw
// delta into dt and z into act(z) in place, once per (channel, step) (barrier), each thread
// writes its share of y for the tile's steps (barrier), and the team adds the kS shares in part
// order, applies the gate and stores the outputs, coalesced.
// Time segments (fwd_time_segments, where the channels alone leave the device idle): a team walks
// one segment of fwd_segment_len steps (whole tiles and chunks) from the state at its start. That
// state comes from a summary pass first (kSummary: the same teams over every segment but the
// last, each state walked from zero over its segment with the decays' product, no y), carried
// from initial_state through the earlier segments' summaries, first first.
template <class Space, int kN, int kS, bool kSfuActivations, TimeSegments kSegments = TimeSegments::whole>
struct ForwardTiled {
  using Act = Activations<kSfuActivations>;
  static constexpr bool kSummary = kSegments == TimeSegments::summary, kSegmented = kSegments != TimeSegments::whole;
  static_assert(kN > 0 && kN % kS == 0, "tiled keeps the states in registers, kN / kS per thread");
  static constexpr int kM = kN / kS;  // states per thread
  // B and C tiles are step-major with this step stride (tiled_forward_bc_step, as the host sizes
  // them): compile-time, so every B and C read of a step block is an immediate offset from one pointer.
  static constexpr int kBcStep = int(tiled_forward_bc_step(kN));
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using ScratchView = Kokkos::View<float*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  Params p;

  // Tiles are whole whether or not a backward follows: the chunk-start states are saved inside a
  // tile (tiles clipped at chunk boundaries of 8 cost as much again per step in per-tile work:
  // 1.84 ms against 1.67 in the H200 tune at (8,4096,16,2048),
  // reports/results/h200/2026-11-29-s3-speed/final/tune/).
  KOKKOS_INLINE_FUNCTION index_t tile_end(index_t t, index_t end) const { return min_index(t + p.time_tile, end); }

  // Steps [k, end) of the tile: one at a time up to a multiple of 4 (the 16-byte scratch reads
  // need it), four at a time, then one at a time.
  // decay: the summary pass's running products of the decays (unused otherwise).
  template <bool kNormal>
  KOKKOS_FORCEINLINE_FUNCTION void run_steps(const float* set, float* out_row, index_t row, int part, index_t k,
                                             index_t end, float (&h)[kM], const float (&A2)[kM], float D_d,
                                             float (&decay)[kM]) const {
    for (; k < end && k % 4 != 0; ++k) steps<1, kNormal>(set, out_row, row, part, k, h, A2, D_d, decay);
    for (; k + 4 <= end; k += 4) steps<4, kNormal>(set, out_row, row, part, k, h, A2, D_d, decay);
    for (; k < end; ++k) steps<1, kNormal>(set, out_row, row, part, k, h, A2, D_d, decay);
  }

  // Each thread's starts of the walks over a full tile (time_tile steps, or seqlen if shorter),
  // computed once per team: only a shorter last tile divides again (TeamWalk::start).
  struct FullTileWalks {
    TeamWalk runs, bc;
  };

  KOKKOS_INLINE_FUNCTION void issue_tile(const Member& team, const FullTileWalks& full, float* set, index_t b,
                                         index_t g, index_t d0, index_t rows, index_t t0, index_t len) const {
    const TileBuffers& s = p.tiled_scratch.in;
    SequenceTile tile;
    tile.row = s.row;
    tile.src[0] = p.u; tile.dst[0] = set + s.u;
    tile.src[1] = p.delta; tile.dst[1] = set + s.dt;
    tile.count = 2;
    if (s.z >= 0 && !kSummary) { tile.src[2] = p.z; tile.dst[2] = set + s.z; tile.count = 3; }  // no y to gate
    issue_sequence_tile(team, p, tile, b, d0, rows, t0, len, &full.runs);
    issue_bc_steps(team, p, set + s.B, set + s.C, kBcStep, b, g, t0, len, &full.bc);
    device_math::async_copy_commit();
  }

  // In place over the landed tile: raw delta → dt = softplus(raw + bias), z → act(z). The gate
  // and softplus choices are made once per tile, outside the element loop (one compiled loop per
  // combination; as per-element branches they cost ~12 instructions an element: speed-notes §16).
  KOKKOS_INLINE_FUNCTION void prepare_tile(const Member& team, const FullTileWalks& full, float* set, index_t d0,
                                           index_t rows, index_t t0, index_t len) const {
    with_gate_kind(p.gate, [&](const auto gate) {
      if (p.softplus) prepare_runs<true>(team, full, set, d0, rows, t0, len, gate);
      else prepare_runs<false>(team, full, set, d0, rows, t0, len, gate);
    });
  }
  template <bool kSoftplus, class Gate>
  KOKKOS_INLINE_FUNCTION void prepare_runs(const Member& team, const FullTileWalks& full, float* set, index_t d0,
                                           index_t rows, index_t t0, index_t len, Gate) const {
    const TileBuffers& s = p.tiled_scratch.in;
    for_each_tile_run(team, p, rows, t0, len, [&](const index_t row, const index_t k, const auto width) {
      const float bias = p.has_delta_bias ? device_math::load_readonly(p.delta_bias + d0 + row) : 0.0f;
      float* const dt = set + s.dt + row * s.row + k;
      float* const z = s.z >= 0 && !kSummary ? set + s.z + row * s.row + k : nullptr;
      SCANLAB_UNROLL
      for (int j = 0; j < int(width); ++j) {
        const float r = dt[j] + bias;
        dt[j] = kSoftplus ? Act::softplus(r) : r;
        if (z) z[j] = Act::gate(Gate::value, z[j]).act;
      }
    }, &full.runs);
  }

  // kJ consecutive steps from k of this thread's channel: inputs from the tile, its kM states in
  // registers (state_steps), its share of y (part 0's with D·u) into its row of the output tile.
  // Force-inlined: a call would keep h and A2 (passed by reference) in local memory.
  template <int kJ, bool kNormal>
  KOKKOS_FORCEINLINE_FUNCTION void steps(const float* set, float* out_row, index_t row, int part, index_t k,
                                         float (&h)[kM], const float (&A2)[kM], float D_d, float (&decay)[kM]) const {
    const TileBuffers& s = p.tiled_scratch.in;
    float x[kJ], dt[kJ], y[kJ];
    load_run<kJ>(set + s.u + row * s.row + k, x);
    load_run<kJ>(set + s.dt + row * s.row + k, dt);
    state_steps<kM, kJ, kBcStep, kNormal, kSummary>(set + s.B + k * kBcStep + part * kM,
                                                    set + s.C + k * kBcStep + part * kM, x, dt, h, A2, decay, y);
    if (kSummary) return;
    if (part == 0) {
      SCANLAB_UNROLL
      for (int j = 0; j < kJ; ++j) y[j] += D_d * x[j];
    }
    if (kJ == 4) store4(out_row + k, streaming::Float4{y[0], y[1 % kJ], y[2 % kJ], y[3 % kJ]});
    else out_row[k] = y[0];
  }

  // out = (Σ shares, in part order) · act(z) for every (channel, step) of the tile, coalesced.
  KOKKOS_INLINE_FUNCTION void store_tile(const Member& team, const FullTileWalks& full, const float* set,
                                         const float* shares, index_t b, index_t d0, index_t rows, index_t t0,
                                         index_t len) const {
    const TileBuffers& s = p.tiled_scratch.in;
    const index_t tile_at = p.seq(b, d0, t0);
    for_each_tile_run(team, p, rows, t0, len, [&](const index_t row, const index_t k, const auto width) {
      const float* const share = shares + row * kS * s.row + k;  // the channel's kS rows
      const float* const act = s.z >= 0 ? set + s.z + row * s.row + k : nullptr;
      float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      SCANLAB_UNROLL
      for (int j = 0; j < 4; ++j) {
        if (j >= int(width)) continue;
        float y = share[j];
        SCANLAB_UNROLL
        for (int q = 1; q < kS; ++q) y += share[q * s.row + j];
        v[j] = act ? y * act[j] : y;
      }
      float* const at = p.out + tile_at + row * p.st.seq_dim + k * p.st.seq_time;  // width > 1 only along contiguous seqlen
      if (int(width) == 4) {
        store4(at, streaming::Float4{v[0], v[1], v[2], v[3]});
      } else {
        SCANLAB_UNROLL
        for (int j = 0; j < 3; ++j)  // a constant bound keeps v in registers (a run-time one put it in local memory)
          if (j < int(width)) at[j] = v[j];
      }
    }, &full.runs);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    namespace dm = device_math;
    const TiledScratch& ts = p.tiled_scratch;
    const TileBuffers& s = ts.in;
    // The team's segment: steps [seg_begin, seg_end); nothing needs the last segment's summary.
    const index_t segments_here = kSegmented ? (kSummary ? p.fwd_segments - 1 : p.fwd_segments) : 1;
    const TeamWork w = team_work(team.league_rank(), segments_here, p.fwd_tiles, p.groups);
    const index_t segment = kSegmented ? w.chunk : 0, seg_begin = kSegmented ? segment * p.fwd_segment_len : 0;
    const index_t seg_end = kSegmented ? min_index(p.seqlen, seg_begin + p.fwd_segment_len) : p.seqlen;
    float* const base = dm::shared_scratch(align16(team_scratch_floats<Member, ScratchView>(team, 0, ts.total)));
    float* const shares = base + ts.out;
    const index_t thread = team.team_rank(), R = p.team_size / kS, passes = p.channels_per_team / R;
    const index_t row = thread / kS;
    const int part = int(thread % kS);
    const index_t first_state = index_t(part) * kM;
    // (the maxima guard the division where a problem has no steps: the tile loop then never runs)
    const index_t full_len = tile_end(seg_begin, seg_end) - seg_begin;
    const unsigned full_runs = unsigned(full_len + 3) / 4, full_bc = bc_steps_inner(p, full_len);
    const FullTileWalks full{TeamWalk(team, full_runs > 0 ? full_runs : 1u), TeamWalk(team, full_bc > 0 ? full_bc : 1u)};
    for (index_t pass = 0; pass < passes; ++pass) {
      const index_t first = w.tile * p.channels_per_team + pass * R;
      const index_t rows = min_index(R, p.channels_per_group - first);
      if (rows <= 0) break;  // the group's last tile: no channels left (uniform across the team)
      const bool active = row < rows;
      const index_t d0 = w.g * p.channels_per_group + first, d = d0 + (active ? row : 0);
      float h[kM], A2[kM], decay[kM];
      SCANLAB_UNROLL
      for (int i = 0; i < kM; ++i) {
        // exp(dt·A) = 2^(dt·A·log2 e): one MUFU.EX2 (the error bound counts the extra rounding)
        // with subnormal results kept (sfu_exp2_subnormal)
        const index_t n = first_state + i;
        A2[i] = dm::load_readonly(p.A + d * p.dstate + n) * 1.4426950408889634f;
        decay[i] = 1.0f;
        h[i] = 0.0f;  // the summary pass starts from zero
        if (kSummary) continue;
        h[i] = p.segment_start_state(w.b, segment, n, d);
      }
      float A2_lo = A2[0], A2_hi = A2[0];  // the range of this thread's decay rates
      SCANLAB_UNROLL
      for (int i = 1; i < kM; ++i) {
        A2_lo = A2[i] < A2_lo ? A2[i] : A2_lo;
        A2_hi = A2[i] > A2_hi ? A2[i] : A2_hi;
      }
      const float D_d = p.has_D ? dm::load_readonly(p.D + d) : 0.0f;
      // the next chunk start, where the state is saved for the backward (segments start at chunk starts)
      index_t next_save = seg_begin;

      issue_tile(team, full, base, w.b, w.g, d0, rows, seg_begin, full_len);
      int buf = 0;
      for (index_t t0 = seg_begin; t0 < seg_end;) {
        const index_t t1 = tile_end(t0, seg_end), len = t1 - t0;
        float* const set = base + buf * s.buffer;
        dm::async_copy_wait<0>();
        team.team_barrier();  // tile t0 has landed; the previous tile is stored (its buffer is free)
        if (t1 < seg_end) issue_tile(team, full, base + (buf ^ 1) * s.buffer, w.b, w.g, d0, rows, t1, tile_end(t1, seg_end) - t1);
        prepare_tile(team, full, set, d0, rows, t0, len);
        team.team_barrier();  // dt and act(z) are in the tile
        if (active) {
          float* const out_row = shares + thread * s.row;
          // The tile's dt range decides whether any decay can leave the normal range (almost never:
          // then the fix-up runs for the whole tile). fmin/fmax: one instruction each (a NaN dt
          // is skipped as the comparisons skipped it; its decay is NaN either way).
          const float* const dt_row = set + s.dt + row * s.row;
          float dt_lo = dt_row[0], dt_hi = dt_row[0];
          index_t k = 0;
          for (; k + 4 <= len; k += 4) {
            const streaming::Float4 q = load4(dt_row + k);
            dt_lo = fminf(fminf(dt_lo, q.x), fminf(fminf(q.y, q.z), q.w));
            dt_hi = fmaxf(fmaxf(dt_hi, q.x), fmaxf(fmaxf(q.y, q.z), q.w));
          }
          for (; k < len; ++k) {
            dt_lo = fminf(dt_lo, dt_row[k]);
            dt_hi = fmaxf(dt_hi, dt_row[k]);
          }
          const bool normal = exp2_stays_normal(dt_lo, dt_hi, A2_lo, A2_hi);
          // Segments of the tile between chunk starts; where a chunk starts, its state is saved
          // for the backward (one division per chunk; a pointer carried across tiles cost
          // registers the dstate-64 kernel spills).
          for (k = 0; k < len;) {
            index_t end = len;
            if (p.save_chunk_states && !kSummary) {
              if (t0 + k == next_save) {
                float* const save = p.chunk_states + p.chunk_slot(w.b, next_save / p.chunk_len, first_state, d);
                SCANLAB_UNROLL
                for (int i = 0; i < kM; ++i) save[i * p.dim] = h[i];
                next_save += p.chunk_len;
              }
              end = min_index(len, next_save - t0);
            }
            if (normal) run_steps<true>(set, out_row, row, part, k, end, h, A2, D_d, decay);
            else run_steps<false>(set, out_row, row, part, k, end, h, A2, D_d, decay);
            k = end;
          }
        }
        team.team_barrier();  // every share of y is written
        if (!kSummary) store_tile(team, full, set, shares, w.b, d0, rows, t0, len);
        t0 = t1;
        buf ^= 1;
      }
      if (active) store_walk_end<kM>(p, kSummary, !kSegmented || seg_end == p.seqlen, w.b, segment, first_state, d, h, decay);
      team.team_barrier();  // the last tile is stored before the next pass refills buffer 0
    }
  }
};

// kK consecutive steps of one channel of a (b, d, t) tensor, from `at` with step stride `step`.
// 16-byte accesses where the steps are contiguous, whole and aligned (a thread's 32 bytes are one
// full sector); else one access per step (adjacent channels adjacent when dim is the contiguous
// axis, so a warp's accesses still coalesce). Loads past `len` give 0; stores stop at `len`.
KOKKOS_FORCEINLINE_FUNCTION bool steps_vectorizable(const float* at, index_t step, index_t len, int kK) {
  // kK a multiple of 4: a two-step call would move kK / 4 = 0 vectors and leave its steps
  // unwritten (corpus selective_scan-tiled-split4-two-step-slices)
  return kK % 4 == 0 && step == 1 && len == kK && (reinterpret_cast<std::uintptr_t>(at) & 15) == 0;
}
template <int kK>
KOKKOS_FORCEINLINE_FUNCTION void load_channel_steps(const float* at, index_t step, index_t len, float (&v)[kK]) {
  if (steps_vectorizable(at, step, len, kK)) {
    load_run<kK>(at, v);
  } else {
    SCANLAB_UNROLL
    for (int k = 0; k < kK; ++k) v[k] = k < len ? device_math::load_readonly(at + k * step) : 0.0f;
  }
}
template <int kK>
KOKKOS_FORCEINLINE_FUNCTION void store_channel_steps(float* at, index_t step, index_t len, const float (&v)[kK]) {
  if (steps_vectorizable(at, step, len, kK)) {
    SCANLAB_UNROLL
    for (int q = 0; q < kK / 4; ++q) store4(at + 4 * q, streaming::Float4{v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]});
  } else {
    SCANLAB_UNROLL
    for (int k = 0; k < kK; ++k)
      if (k < len) at[k * step] = v[k];
  }
}

// "chunked"'s carry pass, one (b, n, d) per index: the start state of every chunk from the
// previous chunk's start state, decay and local end state, in chunk order.
template <class Space>
struct CarryStates {
  Params p;
  KOKKOS_INLINE_FUNCTION void operator()(const index_t i) const {
    const index_t d = i % p.dim, n = (i / p.dim) % p.dstate, b = i / (p.dim * p.dstate);
    float h = p.has_initial_state ? p.initial_state[p.state(b, d, n)] : 0.0f;
    for (index_t chunk = 0; chunk < p.num_chunks; ++chunk) {
      const index_t slot = p.chunk_slot(b, chunk, n, d);
      p.chunk_states[slot] = h;
      h = p.chunk_decay[slot] * h + p.chunk_local[slot];
    }
  }
};

// --- host side ---

template <class View>
const float* data_or_null(const View& v) {
  return v.extent(0) > 0 ? v.data() : nullptr;
}
template <class View>
float* mutable_or_null(const View& v) {
  return v.extent(0) > 0 ? v.data() : nullptr;
}

template <class Space>
Params make_params(const SelectiveScanProblem& p, const SelectiveScanConfig& c, const SelectiveScanTensors<Space>& t,
                   const SelectiveScanWorkspace<Space>& w) {
  Params q;
  q.batch = p.batch; q.dim = p.dim; q.dstate = p.dstate; q.seqlen = p.seqlen; q.groups = p.groups;
  q.channels_per_group = p.channels_per_group();
  q.B_per_step = p.B_per_step; q.C_per_step = p.C_per_step; q.has_D = p.has_D; q.has_z = p.has_z;
  q.has_delta_bias = p.has_delta_bias; q.softplus = p.delta_softplus; q.has_initial_state = p.has_initial_state;
  q.has_dlast_state = p.has_dlast_state; q.gate = p.gate_activation;
  q.save_chunk_states = p.with_backward && c.impl != "chunked";
  q.channels_per_team = c.channels_per_team; q.team_size = c.team_size;
  q.fwd_tiles = ceil_div(q.channels_per_group, c.channels_per_team);
  q.time_tile = effective_time_tile(p, c); q.chunk_len = effective_chunk_len(p, c);
  q.stage_io = c.stage_io != 0;
  q.num_chunks = w.layout.num_chunks;
  q.bwd_channels_per_team = c.bwd_channels_per_team; q.bwd_team_size = c.bwd_team_size;
  q.bwd_tiles = w.layout.bwd_tiles; q.channel_segments = w.layout.channel_segments;
  q.time_segments = w.layout.time_segments; q.chunks_per_segment = w.layout.chunks_per_segment;
  q.summary_blocks = w.layout.summary_blocks; q.chunks_per_summary_block = w.layout.chunks_per_summary_block;
  q.fwd_segments = w.layout.fwd_segments; q.fwd_segment_len = w.layout.fwd_segment_len;
  q.scratch_level = c.scratch_level;
  q.st = selective_scan_strides(p, t.layout);
  q.u = data_or_null(t.u); q.delta = data_or_null(t.delta); q.A = data_or_null(t.A);
  q.B = data_or_null(t.B); q.C = data_or_null(t.C); q.D = data_or_null(t.D); q.z = data_or_null(t.z);
  q.delta_bias = data_or_null(t.delta_bias); q.initial_state = data_or_null(t.initial_state);
  q.dout = data_or_null(t.dout); q.dlast_state = data_or_null(t.dlast_state);
  q.out = mutable_or_null(t.out); q.last_state = mutable_or_null(t.last_state);
  q.du = mutable_or_null(t.du); q.ddelta = mutable_or_null(t.ddelta); q.dA = mutable_or_null(t.dA);
  q.dB = mutable_or_null(t.dB); q.dC = mutable_or_null(t.dC); q.dD = mutable_or_null(t.dD);
  q.dz = mutable_or_null(t.dz); q.ddelta_bias = mutable_or_null(t.ddelta_bias);
  q.dinitial_state = mutable_or_null(t.dinitial_state);
  float* ws = w.buffer.extent(0) > 0 ? w.buffer.data() : nullptr;
  auto at = [ws](std::int64_t offset) { return offset >= 0 && ws ? ws + offset : nullptr; };
  const auto& l = w.layout;
  q.chunk_states = at(l.chunk_states); q.chunk_local = at(l.chunk_local); q.chunk_decay = at(l.chunk_decay);
  q.segment_adjoint = at(l.segment_adjoint); q.segment_decay = at(l.segment_decay);
  q.segment_state = at(l.segment_state); q.segment_state_decay = at(l.segment_state_decay);
  q.part_dA = at(l.part_dA); q.part_dB_channel = at(l.part_dB_channel); q.part_dC_channel = at(l.part_dC_channel);
  q.part_dD = at(l.part_dD); q.part_ddelta_bias = at(l.part_ddelta_bias);
  q.part_dB_step = at(l.part_dB_step); q.part_dC_step = at(l.part_dC_step);
  q.fwd_scratch = forward_scratch(p, c);
  q.tiled_scratch = tiled_scratch(p, c);
  q.tiled_bwd_scratch = tiled_backward_scratch(p, c);
  q.adj_scratch = adjoint_scratch(p, c);
  q.bwd_scratch = backward_scratch(p, c);
  return q;
}

template <class Space>
void check_can_run(const SelectiveScanProblem& p, const SelectiveScanConfig& c, const SelectiveScanWorkspace<Space>& w,
                   const char* what) {
  const std::string why = c.invalid_reason(p, backend_kind_of<Space>());
  if (!why.empty()) throw std::invalid_argument(std::string("selective_scan ") + what + ": config cannot run this problem:\n" + why);
  const auto expected = selective_scan_workspace_layout(p, c);
  if (w.layout.total_floats != expected.total_floats || w.buffer.extent(0) < std::size_t(expected.total_floats))
    throw std::invalid_argument(std::string("selective_scan ") + what +
                                ": the workspace was allocated for another problem or config");
}

template <class Space, class... Traits>
Kokkos::TeamPolicy<Space, Traits...> team_policy(const Space& space, index_t league, index_t team_size, int level,
                                                 index_t scratch_floats) {
  return Kokkos::TeamPolicy<Space, Traits...>(space, int(league), int(team_size), 1)
      .set_scratch_size(level, Kokkos::PerTeam(std::size_t(scratch_request_bytes(scratch_floats))));
}

// "tiled"'s forward is built for two teams of up to 256 threads per SM, i.e. at most 128 registers
// a thread: left free, the compiler took 144 at dstate 16 (state_split 2), which let only six teams
// of 64 threads onto an SM (ncu, reports/results/h200/2026-11-30-s4/probe/).
using TiledForwardBounds = Kokkos::LaunchBounds<256, 2>;
// The backward likewise at chunk 8 (128 registers: 16 teams of 32 per SM where scratch allows); a
// chunk of 16 holds twice the per-step registers and keeps the compiler's choice, as do kI > 1
// interleaved states (kI times the per-state registers; one thread a channel, where the grid
// brings at most 8 warps an SM at the issue's shapes).
template <int kK, int kI = 1>
using TiledBackwardBounds = Kokkos::LaunchBounds<256, kK == 8 && kI == 1 ? 2 : 1>;

// Spaces whose teams are one thread (Kokkos::Serial): a state split, several threads per channel,
// can never run there (invalid_reason(): team_size is at most the backend's largest team, and a
// split must divide it), so its kernels are not compiled for them: that was most of the Serial
// unit's compile time (the splits of 2 and 4 are two thirds of the tiled kernels).
template <class Space>
constexpr bool kTeamsOfOneThread = false;
#if defined(KOKKOS_ENABLE_SERIAL)
template <>
constexpr bool kTeamsOfOneThread<Kokkos::Serial> = true;
#endif

// Calls f(std::integral_constant<int, kS>()) with a state split kS of 1, 2 or 4 (invalid_reason()
// allows no other; anything else runs as 1).
template <class Space, class F>
void dispatch_split(int split, F&& f) {
  if constexpr (kTeamsOfOneThread<Space>) {
    if (split > 1)  // invalid_reason() refuses it first; a clear error all the same
      throw std::invalid_argument("selective_scan tiled: a state split of " + std::to_string(split) +
                                  " needs teams of several threads, and this backend runs teams of one");
    f(std::integral_constant<int, 1>());
  } else {
    if (split == 4) f(std::integral_constant<int, 4>());
    else if (split == 2) f(std::integral_constant<int, 2>());
    else f(std::integral_constant<int, 1>());
  }
}

// Calls f(std::bool_constant<b>()) with b = (flag != 0).
template <class F>
void dispatch_flag(int flag, F&& f) {
  if (flag != 0) f(std::true_type());
  else f(std::false_type());
}

// "tiled"'s forward with direct_io: defined in selective_scan_direct.hpp, instantiated in the units
// that include it (selective_scan_SPACE_direct.cpp, selective_scan_serial.cpp).
template <class Space>
void forward_direct(const Params& q, const SelectiveScanConfig& c, const Space& space);

template <class Space, int kN>
void forward_for_dstate(const Params& q, const SelectiveScanConfig& c, const Space& space) {
  const index_t teams_per_chunk = q.batch * q.groups * q.fwd_tiles;
  const index_t scratch = q.fwd_scratch.total;
  if (c.impl == "tiled" && c.direct_io != 0) {  // invalid_reason(): state_split 1, 2 or 4
    forward_direct<Space>(q, c, space);
    return;
  }
  if (c.impl == "tiled") {
    if constexpr (kN > 0) {
      auto launch = [&](auto split, auto sfu) {
        constexpr int kS = decltype(split)::value;
        constexpr bool kSfu = decltype(sfu)::value;
        auto policy = [&](index_t league) {
          return team_policy<Space, TiledForwardBounds>(space, league, q.team_size, 0, q.tiled_scratch.total);
        };
        if constexpr (kN % kS == 0) {
          using Seg = TimeSegments;
          if (q.fwd_segments > 1) {  // every segment after the first needs its start state
            Kokkos::parallel_for("scanlab::selective_scan_forward_tiled_segment_summary",
                                 policy(teams_per_chunk * (q.fwd_segments - 1)),
                                 ForwardTiled<Space, kN, kS, kSfu, Seg::summary>{q});
            Kokkos::parallel_for("scanlab::selective_scan_forward_tiled_segments", policy(teams_per_chunk * q.fwd_segments),
                                 ForwardTiled<Space, kN, kS, kSfu, Seg::walk>{q});
          } else {
            Kokkos::parallel_for("scanlab::selective_scan_forward_tiled", policy(teams_per_chunk),
                                 ForwardTiled<Space, kN, kS, kSfu>{q});
          }
        }
      };
      dispatch_split<Space>(c.state_split, [&](auto split) {  // invalid_reason(): a split dividing dstate_static
        dispatch_flag(c.fast_activations, [&](auto sfu) { launch(split, sfu); });
      });
      return;
    }
    throw std::invalid_argument("selective_scan forward: tiled needs dstate_static");  // invalid_reason() says so first
  }
  if (c.impl == "sequential") {
    Kokkos::parallel_for("scanlab::selective_scan_forward_sequential",
                         team_policy(space, teams_per_chunk, q.team_size, q.scratch_level, scratch),
                         ForwardScan<Space, kN, false>{q, ForwardMode::sequential});
    return;
  }
  Kokkos::parallel_for("scanlab::selective_scan_forward_chunk_local",
                       team_policy(space, teams_per_chunk * q.num_chunks, q.team_size, q.scratch_level, scratch),
                       ForwardScan<Space, kN, true>{q, ForwardMode::chunk_final});
  Kokkos::parallel_for("scanlab::selective_scan_forward_carry",
                       Kokkos::RangePolicy<Space, Kokkos::IndexType<index_t>>(space, 0, q.batch * q.dstate * q.dim),
                       CarryStates<Space>{q});
  Kokkos::parallel_for("scanlab::selective_scan_forward_chunk_final",
                       team_policy(space, teams_per_chunk * q.num_chunks, q.team_size, q.scratch_level, scratch),
                       ForwardScan<Space, kN, false>{q, ForwardMode::chunk_final});
}

// Calls f.template operator()<kN>() with the config's compile-time dstate.
template <class F>
void dispatch_dstate(int dstate_static, F&& f) {
  switch (dstate_static) {
    case 1: f(std::integral_constant<int, 1>()); break;
    case 2: f(std::integral_constant<int, 2>()); break;
    case 4: f(std::integral_constant<int, 4>()); break;
    case 8: f(std::integral_constant<int, 8>()); break;
    case 16: f(std::integral_constant<int, 16>()); break;
    case 32: f(std::integral_constant<int, 32>()); break;
    case 64: f(std::integral_constant<int, 64>()); break;
    default: f(std::integral_constant<int, 0>()); break;
  }
}

}  // namespace detail

template <class Space>
SelectiveScanTensors<Space> allocate_selective_scan_tensors(const SelectiveScanProblem& p, SequenceLayout layout) {
  p.validate();
  using View = typename SelectiveScanTensors<Space>::View;
  auto make = [](const char* name, std::int64_t count) {
    return View(Kokkos::view_alloc(std::string("scanlab::selective_scan::") + name, Kokkos::WithoutInitializing),
                std::size_t(count));
  };
  const std::int64_t bdl = p.batch * p.dim * p.seqlen, state = p.batch * p.dim * p.dstate;
  const std::int64_t nB = shape_numel(p.B_shape()), nC = shape_numel(p.C_shape()), dn = p.dim * p.dstate;
  SelectiveScanTensors<Space> t;
  t.layout = layout;
  t.u = make("u", bdl);
  t.delta = make("delta", bdl);
  t.A = make("A", dn);
  t.B = make("B", nB);
  t.C = make("C", nC);
  if (p.has_D) t.D = make("D", p.dim);
  if (p.has_z) t.z = make("z", bdl);
  if (p.has_delta_bias) t.delta_bias = make("delta_bias", p.dim);
  if (p.has_initial_state) t.initial_state = make("initial_state", state);
  t.out = make("out", bdl);
  t.last_state = make("last_state", state);
  if (p.with_backward) {
    t.dout = make("dout", bdl);
    if (p.has_dlast_state) t.dlast_state = make("dlast_state", state);
    t.du = make("du", bdl);
    t.ddelta = make("ddelta", bdl);
    t.dA = make("dA", dn);
    t.dB = make("dB", nB);
    t.dC = make("dC", nC);
    if (p.has_D) t.dD = make("dD", p.dim);
    if (p.has_z) t.dz = make("dz", bdl);
    if (p.has_delta_bias) t.ddelta_bias = make("ddelta_bias", p.dim);
    if (p.has_initial_state) t.dinitial_state = make("dinitial_state", state);
  }
  return t;
}

template <class Space>
SelectiveScanWorkspace<Space> allocate_selective_scan_workspace(const SelectiveScanProblem& p,
                                                                const SelectiveScanConfig& c) {
  SelectiveScanWorkspace<Space> w;
  w.layout = selective_scan_workspace_layout(p, c);
  if (w.layout.total_floats < 0) throw std::invalid_argument("selective_scan workspace would exceed 2^59 floats");
  w.buffer = Kokkos::View<float*, typename Space::memory_space>(
      Kokkos::view_alloc(std::string("scanlab::selective_scan::workspace"), Kokkos::WithoutInitializing),
      std::size_t(w.layout.total_floats));
  return w;
}

template <class Space>
void selective_scan_forward(const SelectiveScanProblem& p, const SelectiveScanConfig& c,
                            const SelectiveScanTensors<Space>& t, const SelectiveScanWorkspace<Space>& w,
                            const Space& space) {
  detail::check_can_run(p, c, w, "forward");
  const detail::Params q = detail::make_params(p, c, t, w);
  detail::dispatch_dstate(c.dstate_static, [&](auto static_dstate) {
    detail::forward_for_dstate<Space, decltype(static_dstate)::value>(q, c, space);
  });
}

// Explicit instantiations live in selective_scan_serial.cpp and selective_scan_SPACE_{forward,backward}.cpp,
// one set per compiled execution space.
// The forward half (with the allocations) and the backward half: each space's two halves are
// separate translation units (selective_scan_SPACE_forward.cpp, _backward.cpp), so a two-core
// build compiles them side by side; the backward half's definitions are in selective_scan_backward.hpp,
// which only the backward units (and Serial's) include.
#define SCANLAB_SELECTIVE_SCAN_INSTANTIATE_FORWARD(EXTERN, SPACE)                                               \
  EXTERN template SelectiveScanTensors<SPACE> allocate_selective_scan_tensors<SPACE>(const SelectiveScanProblem&, \
                                                                                     SequenceLayout);            \
  EXTERN template SelectiveScanWorkspace<SPACE> allocate_selective_scan_workspace<SPACE>(                        \
      const SelectiveScanProblem&, const SelectiveScanConfig&);                                                \
  EXTERN template void selective_scan_forward<SPACE>(const SelectiveScanProblem&, const SelectiveScanConfig&,    \
                                                     const SelectiveScanTensors<SPACE>&,                         \
                                                     const SelectiveScanWorkspace<SPACE>&, const SPACE&);
#define SCANLAB_SELECTIVE_SCAN_INSTANTIATE_BACKWARD(EXTERN, SPACE)                                              \
  EXTERN template void selective_scan_backward<SPACE>(const SelectiveScanProblem&, const SelectiveScanConfig&,   \
                                                      const SelectiveScanTensors<SPACE>&,                        \
                                                      const SelectiveScanWorkspace<SPACE>&, const SPACE&);
#define SCANLAB_SELECTIVE_SCAN_INSTANTIATE(EXTERN, SPACE) \
  SCANLAB_SELECTIVE_SCAN_INSTANTIATE_FORWARD(EXTERN, SPACE) SCANLAB_SELECTIVE_SCAN_INSTANTIATE_BACKWARD(EXTERN, SPACE)

#if defined(KOKKOS_ENABLE_SERIAL)
SCANLAB_SELECTIVE_SCAN_INSTANTIATE(extern, Kokkos::Serial)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
SCANLAB_SELECTIVE_SCAN_INSTANTIATE(extern, Kokkos::OpenMP)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
SCANLAB_SELECTIVE_SCAN_INSTANTIATE(extern, Kokkos::Cuda)
#endif

}  // namespace scanlab::kernels
