// The selective_scan kernels' backward half: "tiled"'s BackwardTiled, "sequential"'s and
// "chunked"'s passes, the fixed-order sums of the partials, and selective_scan_backward itself.
// A header of its own so that editing the backward recompiles only the backward units
// (selective_scan_SPACE_backward.cpp): the CUDA forward unit alone takes ~15 minutes on two cores.
// Everything it builds on (Params, the scratch layouts, the launch helpers) is in selective_scan.hpp,
// whose header comment describes the structure.
#pragma once

#include "l1_carveout.hpp"
#include "selective_scan.hpp"

namespace scanlab::kernels {

namespace detail {

// "tiled"'s backward (selective_scan_config.hpp): one team walks a pass of bwd_channels_per_team
// channels, kS threads per channel (thread = part·R + row for R channels; part owns states part,
// part + kS, ...),
// through the chunks from last to first; chunk c-1's B and C copies are in flight while chunk c
// computes. Per chunk, each thread reads its channel's kK steps of u, delta, z, dout straight into
// registers (no scratch tile: 32 bytes a thread are whole sectors, and the scratch they took
// halved the teams per SM) and runs its states one at a time: the chunk's h and exp(dt·A) of
// state n are recomputed from its saved chunk-start state, then its adjoint g walks back over the
// chunk, adding each gradient term to the thread's shares of the step's sums in registers (Σ g·B,
// Σ A·g·exp(dt·A)·h_prev and y, from which the chunk's end forms du and ddt).
// Per-step dB, dC of the iteration's kS states are summed over the team's channels through a
// [part][column][row] block, each part's columns by that part's threads, a column per thread with
// 16-byte reads (blocks alternate by iteration, so one sync per iteration: a warp sync where a
// part is one warp, R = 32, else a team barrier). At the chunk's end part 0 adds the kS shares in
// part order and writes the chunk's du, ddelta, dz straight to memory. dA, dD, ddelta_bias per channel go to
// the partials that ReduceChannelPartials sums in a fixed order.
// Time segments (bwd_time_segments, for problems whose channels alone leave the device idle): a
// team walks only its segment's chunks, starting from the adjoint at the segment's end. That
// adjoint comes from a summary pass first (kSummary: the same teams over segments 1.., each
// state's adjoint walked back from zero over its segment, g ← (g + C·dy)·exp(dt·A) as below, and
// the segment's Π exp(dt·A)), applied to dlast_state from the last segment down; each segment's
// dA, dD, ddelta_bias are partials of their own (segment-major, summed in order).
// An int given at run time or as std::integral_constant (whose own conversion is host-only
// under nvcc: "calling a constexpr __host__ function from a __host__ __device__ function").
KOKKOS_FORCEINLINE_FUNCTION constexpr int int_value(int v) { return v; }
template <int N>
KOKKOS_FORCEINLINE_FUNCTION constexpr int int_value(std::integral_constant<int, N>) { return N; }

// Per-step sums of one chunk (dB or dC, or a team's partial of them) from state 0, step t0.
struct StepSums {
  float* base;
  index_t state_stride, step_stride;
  KOKKOS_INLINE_FUNCTION float& at(index_t n, index_t k) const { return base[n * state_stride + k * step_stride]; }
};

template <class Space, int kK, int kS, bool kSfuActivations, TimeSegments kSegments = TimeSegments::whole, int kI = 1,
          bool kStaged = false, bool kNormalLoop = false>
struct BackwardTiled {
  using Act = Activations<kSfuActivations>;
  static constexpr bool kSummary = kSegments == TimeSegments::summary, kSegmented = kSegments != TimeSegments::whole;
  // bwd_stage_inputs: each thread copies its channel's next chunk of u, delta, dout, z into the
  // buffer's input rows with the chunk's B and C (asynchronously: no register holds them), so a
  // chunk's start waits on no global load and its end re-reads scratch, not L1 (speed-notes §48;
  // §31 measured the same on session 18's backward: 1.05x at the anchor, 1.06x at
  // (2,4096,16,8192), lost where the 8 KB more a team cost teams an SM).
  // The summary pass of a staged walk stages its chunk inputs too (one state at a time, kI 1): its
  // global loads at each chunk's start were 2.8 of its 5.95 cycles an issue (speed-notes §54).
  static_assert(!kStaged || (kS == 1 && (kI > 1 || kSummary)), "staged inputs: one thread a channel, states interleaved");
  // Staged, the walk parks the activations' slopes in the input rows for its chunk end; the summary
  // pass has no chunk end.
  static constexpr bool kParkSlopes = kStaged && !kSummary;
  // bwd_normal_loop: the 32-row state loop compiled for chunks whose decays stay normal (below)
  static_assert(!kNormalLoop || (kI == 2 && !kStaged && !kSummary), "the normal loop: two states at once, unstaged");
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using ScratchView = Kokkos::View<float*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  Params p;

  KOKKOS_INLINE_FUNCTION void issue_chunk(const Member& team, float* base, index_t b, index_t g, index_t chunk,
                                          int buf, index_t d, index_t valid_steps) const {
    const TiledBackwardScratch& s = p.tiled_bwd_scratch;
    float* const set = base + buf * s.bc_buffer;
    const index_t t0 = chunk * p.chunk_len, len = min_index(p.chunk_len, p.seqlen - t0);
    // The summary pass reads C but not B, and dt but not u (no dB, dC, du: speed-notes §55).
    issue_bc_tile<kK, !kSummary>(team, p, set + s.B, set + s.C, s.bc_row, b, g, t0, len);
    if constexpr (kStaged) {
      // this thread's rows (an inactive thread's are zeros: valid_steps 0)
      const index_t at = p.seq(b, d, t0), valid = min_index(len, valid_steps);
      float* const rows = set + s.inputs + team.team_rank() * kK;
      if constexpr (!kSummary) stage_channel_steps(rows, p.u + at, valid);
      stage_channel_steps(rows + s.inputs_tensor, p.delta + at, valid);
      stage_channel_steps(rows + 2 * s.inputs_tensor, p.dout + at, valid);
      if (p.has_z) stage_channel_steps(rows + 3 * s.inputs_tensor, p.z + at, valid);
    } else {
      (void)d;
      (void)valid_steps;
    }
    device_math::async_copy_commit();
    // A short chunk (the last, or every chunk when seqlen < kK): the state loop reads all kK steps
    // unconditionally (16-byte reads, no per-step selects); a step past len adds nothing because
    // its u, dt and dout are zeros, and its B and C are zeroed here so that stale scratch bits
    // (a NaN or inf from an earlier team) cannot turn those zero products into NaN.
    if (len < kK) {
      const int missing = kK - int(len);
      for (int i = team.team_rank(); i < int(p.dstate) * missing; i += team.team_size()) {
        const int at = (i / missing) * int(s.bc_row) + int(len) + i % missing;
        if constexpr (!kSummary) set[s.B + at] = 0.0f;
        set[s.C + at] = 0.0f;
      }
    }
  }

  // bwd_stage_inputs: this thread's channel's states at `chunk`'s start into its column of the
  // states buffer, [n][thread] (4-byte copies; a warp's 32 channels make each state's copies one
  // 128-byte request). Only the thread itself reads its column, after its own wait, so no barrier
  // orders the copy against the column's earlier reads.
  KOKKOS_FORCEINLINE_FUNCTION void issue_chunk_states(float* base, int thread, int T, index_t b, index_t chunk,
                                                      index_t d) const {
    const float* const from = p.chunk_states + p.chunk_slot(b, chunk, 0, d);  // state n at n·dim
    float* const to = base + p.tiled_bwd_scratch.states + thread;
    for (int n = 0; n < int(p.dstate); ++n) device_math::async_copy_f32(to + n * T, from + n * p.dim);
    device_math::async_copy_commit();
  }

  // kK steps of one channel into its input row: 16-byte copies where the steps are contiguous and
  // whole, else one float at a time; the steps from `valid` on are zeros, as load_channel_steps
  // gives them.
  KOKKOS_FORCEINLINE_FUNCTION void stage_channel_steps(float* row, const float* at, index_t valid) const {
    const index_t step = p.st.seq_time;
    if (steps_vectorizable(at, step, valid, kK)) {
      SCANLAB_UNROLL
      for (int q = 0; q < kK; q += 4) device_math::async_copy_f32x4(row + q, at + q);
    } else {
      SCANLAB_UNROLL
      for (int k = 0; k < kK; ++k) {
        if (k < valid) device_math::async_copy_f32(row + k, at + k * step);
        else row[k] = 0.0f;
      }
    }
  }

  // Chunk input `tensor` (0 u, 1 delta, 2 dout, 3 z) of this thread's channel: from its staged
  // rows (kStaged; a chunk's buffer's rows of this thread), else from global memory at `at`.
  KOKKOS_FORCEINLINE_FUNCTION void load_input(const float* rows, int tensor, const float* at, index_t valid,
                                              float (&v)[kK]) const {
    if constexpr (kStaged) load_run<kK>(rows + tensor * p.tiled_bwd_scratch.inputs_tensor, v);
    else load_channel_steps<kK>(at, p.st.seq_time, valid, v);
  }

  // A column's sum over `rows` rows (16-byte aligned): four interleaved partial sums of 16-byte
  // reads, then the tail, then (s0 + s1) + (s2 + s3). kRows: rows known at compile time, or 0.
  template <int kRows>
  static KOKKOS_FORCEINLINE_FUNCTION float column_sum(const float* column, int rows) {
    streaming::Float4 acc{0.0f, 0.0f, 0.0f, 0.0f};
    const auto add = [&](const int r) {
      const streaming::Float4 v = load4(column + 4 * r);
      acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
    };
    if constexpr (kRows != 0) {
      static_assert(kRows % 4 == 0, "whole quads");
      SCANLAB_UNROLL
      for (int r = 0; r < kRows / 4; ++r) add(r);
    } else {
      const int quads = rows / 4;
      for (int r = 0; r < quads; ++r) add(r);
      for (int r = 4 * quads; r < rows; ++r) acc.x += column[r];
    }
    return (acc.x + acc.y) + (acc.z + acc.w);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    namespace dm = device_math;
    const TiledBackwardScratch& bs = p.tiled_bwd_scratch;
    // The team's chunks [first_chunk, end_chunk): the walk's, its segment; the summary pass's, one
    // of the summary_blocks blocks of a segment after the first (no summary of segment 0 is needed),
    // numbered among all P·Q. A block of the last, shorter segment can be empty.
    const index_t Q = p.summary_blocks;
    const index_t segments_here = kSegmented ? (kSummary ? (p.time_segments - 1) * Q : p.time_segments) : 1;
    const TeamWork w = team_work(team.league_rank(), segments_here, p.bwd_tiles, p.groups);
    const index_t block = kSummary ? Q + w.chunk : 0;
    const index_t segment = kSummary ? block / Q : kSegmented ? w.chunk : 0;
    const index_t segment_end = kSegmented ? min_index(p.num_chunks, (segment + 1) * p.chunks_per_segment) : p.num_chunks;
    const index_t first_chunk = segment * p.chunks_per_segment + (kSummary ? block % Q * p.chunks_per_summary_block : 0);
    const index_t end_chunk = kSummary ? min_index(segment_end, first_chunk + p.chunks_per_summary_block) : segment_end;
    float* const base = dm::shared_scratch(
        align16(team_scratch_floats<Member, ScratchView>(team, 0, kSummary ? bs.summary_total : bs.total)));
    const int thread = team.team_rank(), T = int(p.bwd_team_size), R = T / kS, M = int(p.dstate) / kS;
    // Part-major: a warp's lanes are 32 channels of one part, so part 0's work at a chunk's end
    // (adding the shares, the per-step gradients) is whole warps, not every other lane.
    const int row = thread % R, part = thread / R;
    const index_t first = w.tile * R, rows = min_index(R, p.channels_per_group - first);
    const index_t d0 = w.g * p.channels_per_group + first;
    const bool active = row < rows;
    const index_t d = d0 + (active ? row : 0);
    float* const adjoint = base + bs.adjoint + thread;  // [i][thread]
    float* const dA_sum = base + bs.dA + thread;         // the summary pass: the segment's decay product
    for (int i = 0; i < M; ++i) {
      const index_t n = part + kS * i;
      float g = 0.0f;  // the summary pass starts from zero
      if (!kSummary && active) {
        g = p.has_dlast_state ? dm::load_readonly(p.dlast_state + p.state(w.b, d, n)) : 0.0f;
        if constexpr (kSegmented) {
          // the summary blocks of the segments after this one, last first (an empty block's: g itself)
          for (index_t later = p.time_segments * Q - 1; later >= (segment + 1) * Q; --later) {
            const index_t at = p.summary_slot(w.b, later, n, d);
            g = p.segment_decay[at] * g + p.segment_adjoint[at];
          }
        }
      }
      adjoint[i * T] = g;
      dA_sum[i * T] = kSummary ? 1.0f : 0.0f;
    }
    // The interleaved state loop's first iteration at 32-row teams reads the other contribution
    // block (and stores nothing): zeros, not whatever an earlier team left, in the team's first
    // chunk. No other form reads a block before writing it.
    if (!kSummary && kI > 1)
      for (index_t q = thread; q < 2 * bs.contrib_block; q += T) base[bs.contrib + q] = 0.0f;
    const float bias = p.has_delta_bias ? dm::load_readonly(p.delta_bias + d) : 0.0f;
    const float D_d = p.has_D ? dm::load_readonly(p.D + d) : 0.0f;
    const float* const A_row = p.A + d * p.dstate;
    // The range of this thread's decay rates (A·log2 e over its states), so that a chunk decides
    // once for all of them whether a decay can leave the normal range (a per-state test kept the
    // chunk's dt range live over the states: under the 128-register cap it was recomputed, 18
    // instructions a state, in the session-9 per-SASS counts; speed-notes §17).
    float A2_lo = 0.0f, A2_hi = 0.0f;
    for (int i = 0; i < M; ++i) {
      const float A2 = dm::load_readonly(A_row + part + kS * i) * 1.4426950408889634f;
      A2_lo = i == 0 || A2 < A2_lo ? A2 : A2_lo;  // once NaN, a bound stays NaN (comparisons are false)
      A2_hi = i == 0 || A2 > A2_hi ? A2 : A2_hi;
      if (A2 != A2) A2_lo = A2_hi = A2;  // a NaN rate: exp2_stays_normal answers false for every chunk
    }
    const index_t step = p.st.seq_time;
    const int bc_row = int(bs.bc_row), P = int(bs.contrib_row);
    float dD_sum = 0.0f, ddelta_bias_sum = 0.0f;

    if (end_chunk > first_chunk) issue_chunk(team, base, w.b, w.g, end_chunk - 1, 0, d, active ? p.chunk_len : 0);
    if constexpr (kParkSlopes) issue_chunk_states(base, thread, T, w.b, end_chunk - 1, d);  // the walk's only
    int buf = 0;
    for (index_t chunk = end_chunk - 1; chunk >= first_chunk; --chunk) {
      const index_t t0 = chunk * p.chunk_len, len = min_index(p.chunk_len, p.seqlen - t0);
      dm::async_copy_wait<0>();
      team.team_barrier();  // this chunk's B, C have landed; every thread is done with the other buffer
      if (chunk > first_chunk) issue_chunk(team, base, w.b, w.g, chunk - 1, buf ^ 1, d, active ? p.chunk_len : 0);
      const float* const Bs = base + buf * bs.bc_buffer + bs.B;
      const float* const Cs = base + buf * bs.bc_buffer + bs.C;
      // this thread's input rows (kStaged), landed with B and C; the delta and z rows then take the
      // activations' slopes, which the chunk's end reads instead of recomputing them
      float* const inputs = kStaged ? base + buf * bs.bc_buffer + bs.inputs + thread * kK : nullptr;
      const index_t at = p.seq(w.b, d, t0);
      const index_t valid = active ? len : 0;  // an inactive thread's steps are zeros: they add nothing
      // Where the column sums go: dB, dC themselves with one team per group, else this team's
      // partials (the 64-bit index of state 0, step t0 once per chunk, not per column).
      const bool direct = p.bwd_tiles == 1;
      const StepSums dB_sums = direct ? StepSums{p.dB + p.B_step(w.b, w.g, 0, t0), p.st.B_state, p.st.B_time}
                                      : StepSums{p.part_dB_step + p.step_partial(w.b, w.g, w.tile, 0, t0), p.seqlen, 1};
      const StepSums dC_sums = direct ? StepSums{p.dC + p.C_step(w.b, w.g, 0, t0), p.st.C_state, p.st.C_time}
                                      : StepSums{p.part_dC_step + p.step_partial(w.b, w.g, w.tile, 0, t0), p.seqlen, 1};

      // The thread's steps; steps past len are zeros and add nothing.
      // Per step: dtx = dt·u (each state's input term and dB contribution share it); du_B = Σ_n g·B
      // and ddt_A = Σ_n A·g·exp(dt·A)·h_prev over the thread's states (du = dt·du_B and
      // ddt = u·du_B + ddt_A once per step at the chunk's end: 13 floating-point instructions a
      // state-step instead of 18, speed-notes §33); y = Σ_n C·h for dz. u itself is read again at
      // the chunk's end, so dtx takes no register more than u did.
      float dt[kK], dtx[kK], dy[kK], du_B[kK], ddt_A[kK], y[kK];
      {
        float x[kK] = {}, raw[kK], gate[kK] = {};
        if constexpr (!kSummary) load_input(inputs, 0, p.u + at, valid, x);  // the summary stages no u
        load_input(inputs, 1, p.delta + at, valid, raw);
        load_input(inputs, 2, p.dout + at, valid, dy);
        if (p.has_z) load_input(inputs, 3, p.z + at, valid, gate);
        // Each activation over the chunk's steps under one branch a chunk, the gate's kind a
        // compile-time constant (a switch and two branches a step cut the steps into basic blocks
        // of their own, so their chains could not overlap: speed-notes §47, as §16 for the forward).
        // A step past the chunk's valid steps selects 0 (its raw delta is 0: nothing overflows).
        SCANLAB_UNROLL
        for (int k = 0; k < kK; ++k) {
          du_B[k] = ddt_A[k] = y[k] = 0.0f;
          dt[k] = raw[k] + bias;
        }
        // Staged, each activation's slope is formed here with its value (softplus and σ share
        // their MUFU) and parked in the row its input came from: only this thread reads its rows,
        // and the next copy into this buffer waits for the next chunk's barrier (speed-notes §50).
        if (p.softplus) {
          if constexpr (kParkSlopes) {
            float slope[kK];
            SCANLAB_UNROLL
            for (int k = 0; k < kK; ++k) {
              const SoftplusWithSlope v = Act::softplus_with_slope(dt[k]);
              dt[k] = v.value;
              slope[k] = v.slope;
            }
            store_run<kK>(inputs + bs.inputs_tensor, slope);
          } else {
            SCANLAB_UNROLL
            for (int k = 0; k < kK; ++k) dt[k] = Act::softplus(dt[k]);
          }
        }
        SCANLAB_UNROLL
        for (int k = 0; k < kK; ++k) {
          dt[k] = k < valid ? dt[k] : 0.0f;
          dtx[k] = dt[k] * x[k];
        }
        if (p.has_z) {
          with_gate_kind(p.gate, [&](const auto kind) {
            if constexpr (kParkSlopes) {
              float slope[kK];
              SCANLAB_UNROLL
              for (int k = 0; k < kK; ++k) {
                const GateValue v = Act::gate(decltype(kind)::value, gate[k]);
                dy[k] *= v.act;
                slope[k] = v.slope;
              }
              store_run<kK>(inputs + 3 * bs.inputs_tensor, slope);
            } else {
              SCANLAB_UNROLL
              for (int k = 0; k < kK; ++k) dy[k] *= Act::gate(decltype(kind)::value, gate[k]).act;
            }
          });
        }
      }
      float dt_lo = dt[0], dt_hi = dt[0];  // steps past len hold 0, which adds the corner 2^0
      SCANLAB_UNROLL
      for (int k = 1; k < kK; ++k) {  // fmin/fmax: one instruction each (a NaN dt is skipped, as before)
        dt_lo = fminf(dt_lo, dt[k]);
        dt_hi = fmaxf(dt_hi, dt[k]);
      }
      // Every decay of the chunk, all states, is normal: the flush-to-zero exp2 gives the same bits
      // without the fix-up. Else every state takes the fix-up (exact either way).
      const bool chunk_normal = exp2_stays_normal(dt_lo, dt_hi, A2_lo, A2_hi);
      if constexpr (kSummary) {
        summarize_chunk(Cs, A_row, part, adjoint, dA_sum, T, M, bc_row, dt, dy, chunk_normal);
        buf ^= 1;
        continue;
      }
      // The chunk-start states and decay rates of the next kI states, loaded one group ahead (their
      // latency hides behind a group's work); staged, the states come from this thread's column,
      // copied during the previous chunk's end phase (or with the first chunk's B and C).
      const float* h_starts = kStaged ? base + bs.states + thread
                                      : p.chunk_states + p.chunk_slot(w.b, chunk, part, d);  // state n at n·dim
      const index_t next_state = kStaged ? index_t(T) : kS * p.dim;                        // n to n + kS
      float A_next[kI], h_next[kI];
      SCANLAB_UNROLL
      for (int j = 0; j < kI; ++j) {
        A_next[j] = dm::load_readonly(A_row + part + kS * j);
        h_next[j] = h_starts[j * next_state];
      }
      // kI states at a time (bwd_state_interleave): their recompute and adjoint chains are
      // independent, so one thread has kI of each in flight. y, du, ddt still add the states in
      // ascending order, so the sums are the same as one state at a time, bit for bit.
      // The state loop with the contribution blocks' row length known at compile time where the
      // team is 32 rows of the interleaved form (Pc = 36): every STS of a contribution is then an
      // immediate offset from one address (the run-time P cost an IMAD or LEA each: ~70 of the
      // 558 instructions of a two-state iteration at the anchor, speed-notes §32).
      auto state_loop = [&](const auto row_length, const auto decays_normal) {
        const int Pc = int_value(row_length);  // a constant after inlining where row_length is one
        const bool normal = int_value(decays_normal) != 0;  // likewise
        // An iteration's block summed over the team's channels, a column per thread: four
        // interleaved partial sums of 16-byte reads, then the tail, then (s0 + s1) + (s2 + s3): an
        // order fixed by the team alone. With 32 rows (the heuristic's teams) the loop is unrolled
        // at compile time (§18); the same additions in the same order either way.
        constexpr bool kRows32 = !std::is_same_v<std::decay_t<decltype(row_length)>, int>;  // R = 32, P = 36
        // (nvcc instantiates the kRows32 form for kI = 1 too, where it is never called)
        constexpr int kColumnsPerThread = kRows32 && kI > 1 ? kI * 2 * kK / 32 : 1;
        const auto store_sum = [&](const int done, const int c, const float sum) {
          const int column_of_state = c % (2 * kK), k = column_of_state % kK;
          const index_t state = part + kS * (done + c / (2 * kK));
          if (k < len) (column_of_state < kK ? dB_sums : dC_sums).at(state, k) = sum;
        };
        const auto block_of = [&](const int iteration) {
          return base + bs.contrib + ((iteration / kI) & 1) * bs.contrib_block;
        };
        // this part's column c of an iteration's block (see `block` below)
        const auto column_of = [&](const int iteration, const int c) {
          return block_of(iteration) + (part * kI * 2 * kK + c) * Pc;
        };
        // Teams of other shapes: the sums of iteration `done` at once, a column at a time.
        const auto sum_and_store = [&](const int done) {
          for (int c = row; c < kI * 2 * kK; c += R)
            store_sum(done, c, R == 32 ? column_sum<32>(column_of(done, c), 32) : column_sum<0>(column_of(done, c), R));
        };
        // kRows32: a thread sums the same columns (row + 32q) every iteration, so where their sums go
        // is set once a chunk and moves kI states an iteration (store_sum's 64-bit index and selects,
        // redone every iteration, were ~25 instructions of one: speed-notes §50).
        // Staged teams only: in the unstaged kernel, which dstate 32 and 64 share, these pointers won
        // 1.045x at dstate 32 and lost 0.935x at 64 (8% fewer instructions, 16% more cycles an issue:
        // reports/results/h100/2026-12-05-s27/), so it keeps the forms indexed by i.
        constexpr bool kWalk = kRows32 && kStaged;
        float* out[kColumnsPerThread];
        index_t out_step[kColumnsPerThread];
        bool out_valid[kColumnsPerThread];
        if constexpr (kWalk) {
          SCANLAB_UNROLL
          for (int q = 0; q < kColumnsPerThread; ++q) {
            const int c = row + 32 * q, column_of_state = c % (2 * kK), k = column_of_state % kK;
            const StepSums& sums = column_of_state < kK ? dB_sums : dC_sums;
            out[q] = &sums.at(part + kS * (c / (2 * kK)), k);
            out_step[q] = kI * kS * sums.state_stride;
            out_valid[q] = k < len;
          }
        }
        // The iteration's block and the other one (block_of(i), block_of(i - kI)), swapped at each
        // iteration's end, and this part's B and C rows of its first state, moved kI states an
        // iteration: each was recomputed from i (the parity, the products) every iteration (§50).
        float* block_now = block_of(0);
        float* block_then = block_of(-kI);
        const float* B_rows = Bs + part * bc_row;
        const float* C_rows = Cs + part * bc_row;
        // 32-row teams: the team is 32·kS threads, so the [i][thread] arrays' and the staged
        // states' strides are compile-time (immediate offsets, not a constant-bank load and a
        // 64-bit multiply an iteration)
        const int Tc = kRows32 ? 32 * kS : T;
        const index_t h_step = kRows32 && kStaged ? index_t(32) : next_state;
        for (int i = 0; i < M; i += kI) {
          float A_n[kI], h_start[kI];
          SCANLAB_UNROLL
          for (int j = 0; j < kI; ++j) {
            A_n[j] = A_next[j];
            h_start[j] = active ? h_next[j] : 0.0f;
          }
          if (i + kI < M) {
            h_starts += kI * h_step;
            SCANLAB_UNROLL
            for (int j = 0; j < kI; ++j) {
              A_next[j] = dm::load_readonly(A_row + part + kS * (i + kI + j));
              h_next[j] = h_starts[j * h_step];
            }
          }
          // this part's columns of the block: j·2kK + k for dB_k of state j, j·2kK + kK + k for dC_k
          float* const block = kWalk ? block_now : block_of(i);
          float h[kI][kK], a[kI][kK], Bk[kI][kK];
          SCANLAB_UNROLL
          for (int j = 0; j < kI; ++j) chunk_decays(dt, A_n[j] * 1.4426950408889634f, normal, a[j]);
          // kRows32: the previous iteration's sums (kColumnsPerThread columns a thread) are read
          // and added here, where nothing of this iteration depends on them, and stored at its end:
          // the sync that ended the previous iteration completed its block, and the reads and adds
          // (pinned here, else the compiler sinks them into the store's branch) share a basic
          // block with the recompute and adjoint, whose chains' latency they can fill (§34). The
          // first iteration reads the other block (zeroed at the team's start, or the last
          // chunk's) and stores nothing.
          float previous[kColumnsPerThread] = {};
          if constexpr (kRows32) {
            SCANLAB_UNROLL
            for (int q = 0; q < kColumnsPerThread; ++q) {
              previous[q] = column_sum<32>(kWalk ? block_then + (part * kI * 2 * kK + row + 32 * q) * Pc
                                                 : column_of(i - kI, row + 32 * q), 32);
              dm::compute_here(previous[q]);
            }
          }
          SCANLAB_UNROLL
          for (int j = 0; j < kI; ++j) {
            load_run<kK>(kWalk ? B_rows + kS * j * bc_row : Bs + (part + kS * (i + j)) * bc_row, Bk[j]);
            float hp = h_start[j];
            SCANLAB_UNROLL
            for (int k = 0; k < kK; ++k) {
              h[j][k] = a[j][k] * hp + Bk[j][k] * dtx[k];
              hp = h[j][k];
            }
          }
          float* const contrib = block + part * (kI * 2 * kK * Pc) + row;
          float g[kI], dA_chunk[kI], Cs_n[kI][kK];
          SCANLAB_UNROLL
          for (int j = 0; j < kI; ++j) {
            g[j] = adjoint[(i + j) * Tc];
            dA_chunk[j] = 0.0f;
            // 16-byte reads (8 scalar ones before: §18)
            load_run<kK>(kWalk ? C_rows + kS * j * bc_row : Cs + (part + kS * (i + j)) * bc_row, Cs_n[j]);
          }
          SCANLAB_UNROLL
          for (int k = kK - 1; k >= 0; --k) {
            SCANLAB_UNROLL
            for (int j = 0; j < kI; ++j) {
              const float Ck = Cs_n[j][k];
              y[k] += Ck * h[j][k];
              g[j] += Ck * dy[k];  // ∂ℒ/∂h_k
              const float h_prev = k > 0 ? h[j][k - 1] : h_start[j];
              // g·exp(dt·A)·h_prev feeds both dA (·dt) and ddt (·A). Every product's factors are
              // among the oracle's for its term (reference/selective_scan.cpp charges a product's
              // underflow for any association, and a sum's roundings for any order).
              const float g_decayed = g[j] * (a[j][k] * h_prev);
              du_B[k] += g[j] * Bk[j][k];
              ddt_A[k] += A_n[j] * g_decayed;
              dA_chunk[j] += g_decayed * dt[k];
              contrib[(j * 2 * kK + k) * Pc] = g[j] * dtx[k];
              contrib[(j * 2 * kK + kK + k) * Pc] = dy[k] * h[j][k];
              g[j] *= a[j][k];  // ∂ℒ/∂h_{k-1} through h_k
            }
          }
          SCANLAB_UNROLL
          for (int j = 0; j < kI; ++j) {
            adjoint[(i + j) * Tc] = g[j];
            dA_sum[(i + j) * Tc] += dA_chunk[j];
          }
          // Every contribution of this part's iteration is in the block. A part's columns are written
          // and summed by its own threads, so where a part is one warp (32 channels a team, part-major
          // ranks) a warp sync orders them and the other parts go on. The blocks alternate by
          // iteration: the next iteration sums this block while it writes the other, and a block
          // is rewritten only after the sync that follows its sums. The chunk's last block is summed
          // after the loop; the next chunk's first writes come after the team barrier that starts it.
          if constexpr (kWalk) {
            if (i > 0) {
              SCANLAB_UNROLL
              for (int q = 0; q < kColumnsPerThread; ++q) {
                if (out_valid[q]) *out[q] = previous[q];
                out[q] += out_step[q];
              }
            }
          } else if constexpr (kRows32) {
            if (i > 0) {
              SCANLAB_UNROLL
              for (int q = 0; q < kColumnsPerThread; ++q) store_sum(i - kI, row + 32 * q, previous[q]);
            }
          } else {
            (void)previous;
          }
          dm::group_barrier(team, R == 32);
          if constexpr (!kRows32) sum_and_store(i);
          if constexpr (kWalk) {
            block_now = block_then;
            block_then = block;
            B_rows += kI * kS * bc_row;
            C_rows += kI * kS * bc_row;
          }
        }
        if constexpr (kWalk) {
          SCANLAB_UNROLL
          for (int q = 0; q < kColumnsPerThread; ++q) {
            const float sum = column_sum<32>(column_of(M - kI, row + 32 * q), 32);
            if (out_valid[q]) *out[q] = sum;
          }
        } else if constexpr (kRows32) {
          sum_and_store(M - kI);
        } else {
          (void)out;
          (void)out_step;
          (void)out_valid;
        }
      };
      // kNormalLoop (bwd_normal_loop 1): the 32-row form compiled with the chunk's decays known
      // normal, so an iteration's exps share its one basic block with the work that can hide them
      // (the previous block's column sums, the B and C reads), not two arms of a branch on
      // chunk_normal, where they issued in runs of eight with nothing beside them (speed-notes
      // §69). A chunk whose decays may leave the normal range on any thread of the part (rare)
      // runs the form of other team shapes (one vote: no warp splits between the forms' syncs):
      // the same sums in the same order, so the same bits. Its own kernel, not a branch in this
      // one: with all three loops in one kernel every shape lost, even where it never ran (§70).
      if constexpr (kNormalLoop) {
        if (R == 32 && P == 36 && dm::group_all(team, chunk_normal))
          state_loop(std::integral_constant<int, 36>(), std::integral_constant<int, 1>());
        else
          state_loop(P, int(chunk_normal));
      } else if constexpr (kI > 1) {
        if (R == 32 && P == 36) state_loop(std::integral_constant<int, 36>(), int(chunk_normal));
        else state_loop(P, int(chunk_normal));
      } else {
        state_loop(P, int(chunk_normal));
      }
      // The next chunk's states, in flight through this chunk's end phase (its wait is the next
      // chunk's, with that chunk's B and C).
      if constexpr (kStaged)
        if (chunk > first_chunk) issue_chunk_states(base, thread, T, w.b, chunk - 1, d);

      // The channel's totals of du_B, ddt_A, y: the kS threads' shares added in part order.
      if (kS > 1) {
        float* const mine = base + bs.shares + thread * bs.shares_row;
        SCANLAB_UNROLL
        for (int q = 0; q < kK / 4; ++q) {
          store4(mine + 4 * q, streaming::Float4{du_B[4 * q], du_B[4 * q + 1], du_B[4 * q + 2], du_B[4 * q + 3]});
          store4(mine + kK + 4 * q, streaming::Float4{ddt_A[4 * q], ddt_A[4 * q + 1], ddt_A[4 * q + 2], ddt_A[4 * q + 3]});
          store4(mine + 2 * kK + 4 * q, streaming::Float4{y[4 * q], y[4 * q + 1], y[4 * q + 2], y[4 * q + 3]});
        }
        team.team_barrier();  // every share is written
        if (part == 0) {
          SCANLAB_UNROLL
          for (int q = 1; q < kS; ++q) {
            const float* const theirs = mine + q * R * bs.shares_row;  // thread row + q·R
            SCANLAB_UNROLL
            for (int k = 0; k < kK; ++k) {
              du_B[k] += theirs[k];
              ddt_A[k] += theirs[kK + k];
              y[k] += theirs[2 * kK + k];
            }
          }
        }
      }

      // The chunk's per-step gradients, straight to memory. u, dout and the activations' inputs
      // (staged: their slopes, parked at the chunk's start) are read again (cached: this thread
      // read them at the chunk's start) rather than held in registers over the states.
      if (active && part == 0) {
        float x[kK], slope[kK], dout[kK] = {}, gate[kK] = {}, out_du[kK], out_ddelta[kK], out_dz[kK] = {};
        load_input(inputs, 0, p.u + at, len, x);
        if (p.has_z) {
          load_input(inputs, 2, p.dout + at, len, dout);
          load_input(inputs, 3, p.z + at, len, gate);  // staged: the gate's slopes
        }
        // As at the chunk's start: each activation's slope under one branch a chunk (§47).
        if (p.softplus) {
          load_input(inputs, 1, p.delta + at, len, slope);  // staged: the slopes, else raw delta
          if constexpr (!kStaged) {
            SCANLAB_UNROLL
            for (int k = 0; k < kK; ++k) slope[k] = Act::softplus_slope(slope[k] + bias);
          }
        } else {
          SCANLAB_UNROLL
          for (int k = 0; k < kK; ++k) slope[k] = 1.0f;  // ddelta = ddt exactly
        }
        SCANLAB_UNROLL
        for (int k = 0; k < kK; ++k) {  // compile-time k: x, dt, du... stay in registers
          const float du = dt[k] * du_B[k], ddt = x[k] * du_B[k] + ddt_A[k];
          const float ddelta = ddt * slope[k];
          out_du[k] = p.has_D ? du + D_d * dy[k] : du;
          out_ddelta[k] = ddelta;
          if (k < len) {
            dD_sum += dy[k] * x[k];
            ddelta_bias_sum += ddelta;
          }
        }
        if (p.has_z) {
          if constexpr (kStaged) {
            SCANLAB_UNROLL
            for (int k = 0; k < kK; ++k) out_dz[k] = dout[k] * gate[k] * (y[k] + D_d * x[k]);
          } else {
            with_gate_kind(p.gate, [&](const auto kind) {
              SCANLAB_UNROLL
              for (int k = 0; k < kK; ++k)
                out_dz[k] = dout[k] * Act::gate(decltype(kind)::value, gate[k]).slope * (y[k] + D_d * x[k]);
            });
          }
        }
        store_channel_steps<kK>(p.du + at, step, len, out_du);
        store_channel_steps<kK>(p.ddelta + at, step, len, out_ddelta);
        if (p.has_z) store_channel_steps<kK>(p.dz + at, step, len, out_dz);
      }
      buf ^= 1;
    }

    if (!active) return;
    for (int i = 0; i < M; ++i) {
      const index_t n = part + kS * i;
      if (kSummary) {
        const index_t at = p.summary_slot(w.b, block, n, d);
        p.segment_adjoint[at] = adjoint[i * T];
        p.segment_decay[at] = dA_sum[i * T];
        continue;
      }
      const index_t at = p.channel_partial(w.b, segment, n, d);
      if (p.has_initial_state && segment == 0) p.dinitial_state[p.state(w.b, d, n)] = adjoint[i * T];
      p.part_dA[at] = dA_sum[i * T];
    }
    if (kSummary || part != 0) return;
    if (p.has_D) p.part_dD[p.channel_partial(w.b, segment, d)] = dD_sum;
    if (p.has_delta_bias) p.part_ddelta_bias[p.channel_partial(w.b, segment, d)] = ddelta_bias_sum;
  }

  // exp(dt·A) over the chunk's steps for one state (A2 = A·log2 e): the flush-to-zero exp2 where
  // the chunk's decays are all normal (chunk_normal; the same bits), else the subnormal-keeping one.
  static KOKKOS_FORCEINLINE_FUNCTION void chunk_decays(const float (&dt)[kK], float A2, bool normal, float (&a)[kK]) {
    if (normal) {
      SCANLAB_UNROLL
      for (int k = 0; k < kK; ++k) a[k] = sfu_exp2(dt[k] * A2);
    } else {
      SCANLAB_UNROLL
      for (int k = 0; k < kK; ++k) a[k] = sfu_exp2_subnormal(dt[k] * A2);
    }
  }

  // The summary pass's work on one chunk: each of the thread's states walks its adjoint back over
  // the chunk from the running value (g ← (g + C·dy)·exp(dt·A), the main pass's own steps without
  // the gradients) and multiplies its decays into the segment's product. Steps past the chunk's
  // length add nothing: their dt and dy are zero (a decay of 1) and their C was zeroed.
  // Four states at a time: a state's walk is one chain of 2·kK dependent operations, and one state
  // at a time (M is a run-time count, so the loop was not unrolled) left each warp waiting on its
  // own chain. Each state keeps its own operations in its own order, so the bits are the same.
  // Measured (speed-notes §53, an H100): the pass 1.35 → 1.23 ms at (2,4096,16,8192), the backward
  // 1.03-1.07x wherever it runs in segments; most of the pass's time is elsewhere.
  KOKKOS_FORCEINLINE_FUNCTION void summarize_chunk(const float* Cs, const float* A_row, int part, float* adjoint,
                                                   float* decay, int T, int M, int bc_row, const float (&dt)[kK],
                                                   const float (&dy)[kK], bool chunk_normal) const {
    constexpr int kG = 4;
    int i = 0;
    for (; i + kG <= M; i += kG)
      summarize_states<kG>(Cs, A_row, part, adjoint, decay, T, i, bc_row, dt, dy, chunk_normal);
    for (; i < M; ++i) summarize_states<1>(Cs, A_row, part, adjoint, decay, T, i, bc_row, dt, dy, chunk_normal);
  }

  // summarize_chunk's work on the thread's states i0 .. i0 + kG - 1, their chains interleaved.
  template <int kG>
  KOKKOS_FORCEINLINE_FUNCTION void summarize_states(const float* Cs, const float* A_row, int part, float* adjoint,
                                                    float* decay, int T, int i0, int bc_row, const float (&dt)[kK],
                                                    const float (&dy)[kK], bool chunk_normal) const {
    float a[kG][kK], Cn[kG][kK], g[kG], product[kG];
    SCANLAB_UNROLL
    for (int j = 0; j < kG; ++j) {
      const int n = part + kS * (i0 + j);
      const float A2 = device_math::load_readonly(A_row + n) * 1.4426950408889634f;
      chunk_decays(dt, A2, chunk_normal, a[j]);
      load_run<kK>(Cs + n * bc_row, Cn[j]);
      g[j] = adjoint[(i0 + j) * T];
      product[j] = decay[(i0 + j) * T];
    }
    SCANLAB_UNROLL
    for (int k = kK - 1; k >= 0; --k) {
      SCANLAB_UNROLL
      for (int j = 0; j < kG; ++j) {
        g[j] += Cn[j][k] * dy[k];
        g[j] *= a[j][k];
        product[j] *= a[j][k];
      }
    }
    SCANLAB_UNROLL
    for (int j = 0; j < kG; ++j) {
      adjoint[(i0 + j) * T] = g[j];
      decay[(i0 + j) * T] = product[j];
    }
  }
};

// "chunked"'s first backward pass: per chunk, the adjoint of the state before the chunk from a
// zero adjoint at its end (g ← (g + C·dy)·exp(dt·A), backwards over the chunk), into chunk_local.
template <class Space, int kN>
struct AdjointLocal {
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using ScratchView = Kokkos::View<float*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  Params p;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const TeamWork w = team_work(team.league_rank(), p.num_chunks, p.bwd_tiles, p.groups);
    float* const base = team_scratch_floats<Member, ScratchView>(team, p.scratch_level, p.adj_scratch.total);
    const index_t thread = team.team_rank(), T = p.bwd_team_size, reps = p.bwd_channels_per_team / T;
    float* const stage_C = scratch_at(base, p.adj_scratch.stage_C, p.C_per_step ? 0 : thread);  // as ForwardScan
    const index_t C_row = p.C_per_step ? p.time_tile : T, C_step = p.C_per_step ? 1 : 0;
    const index_t N = kN > 0 ? index_t(kN) : p.dstate;
    const index_t t0 = w.chunk * p.chunk_len, t1 = min_index(t0 + p.chunk_len, p.seqlen);
    const index_t tiles = (t1 - t0 + p.time_tile - 1) / p.time_tile;

    for (index_t rep = 0; rep < reps; ++rep) {
      const index_t channel = w.tile * p.bwd_channels_per_team + rep * T + thread;
      const bool active = channel < p.channels_per_group;
      const index_t d = w.g * p.channels_per_group + (active ? channel : 0);
      StateArray<kN> g(scratch_at(base, p.adj_scratch.adjoint, thread), T);
      StateArray<kN> A(scratch_at(base, p.adj_scratch.A, thread), T);
      if (active) {
        SCANLAB_UNROLL
        for (index_t n = 0; n < N; ++n) {
          A[n] = device_math::load_readonly(p.A + d * p.dstate + n);
          if (!p.C_per_step) stage_C[n * C_row] = device_math::load_readonly(p.C + p.C_fixed(d, n));
          g[n] = 0.0f;
        }
      }
      for (index_t tile = tiles - 1; tile >= 0; --tile) {
        const index_t tile_begin = t0 + tile * p.time_tile, len = min_index(p.time_tile, t1 - tile_begin);
        team.team_barrier();
        stage_bc(team, p, w.b, w.g, tile_begin, len, p.time_tile, nullptr, p.C_per_step ? stage_C : nullptr);
        team.team_barrier();
        if (!active) continue;
        for (index_t k = len - 1; k >= 0; --k) {
          const index_t t = tile_begin + k, at = p.seq(w.b, d, t);
          const float raw = p.dt_raw(w.b, d, t);
          const float dt = p.softplus ? softplus_f32(raw) : raw;
          float dy = device_math::load_readonly(p.dout + at);
          if (p.has_z) dy *= gate_f32(p.gate, device_math::load_readonly(p.z + at)).act;
          SCANLAB_UNROLL
          for (index_t n = 0; n < N; ++n) {
            g[n] = (g[n] + stage_C[n * C_row + k * C_step] * dy) * device_math::exp_f32(dt * A[n]);
          }
        }
      }
      if (!active) continue;
      SCANLAB_UNROLL
      for (index_t n = 0; n < N; ++n) p.chunk_local[p.chunk_slot(w.b, w.chunk, n, d)] = g[n];
    }
  }
};

// "chunked"'s reverse carry, one (b, n, d) per index: the adjoint at every chunk's end (from
// dlast_state through the later chunks), overwriting chunk_local's start adjoints in place;
// what is left after chunk 0 is dinitial_state.
template <class Space>
struct CarryAdjoints {
  Params p;
  KOKKOS_INLINE_FUNCTION void operator()(const index_t i) const {
    const index_t d = i % p.dim, n = (i / p.dim) % p.dstate, b = i / (p.dim * p.dstate);
    float g = p.has_dlast_state ? p.dlast_state[p.state(b, d, n)] : 0.0f;
    for (index_t chunk = p.num_chunks - 1; chunk >= 0; --chunk) {
      const index_t slot = p.chunk_slot(b, chunk, n, d);
      const float local = p.chunk_local[slot];
      p.chunk_local[slot] = g;
      g = p.chunk_decay[slot] * g + local;
    }
    if (p.has_initial_state) p.dinitial_state[p.state(b, d, n)] = g;
  }
};

// The chunk backward (see the header comment). kChunked: one chunk per team, its end adjoint
// from CarryAdjoints; otherwise one team walks every chunk from last to first.
template <class Space, bool kChunked>
struct BackwardChunks {
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using ScratchView = Kokkos::View<float*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  Params p;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    namespace dm = device_math;
    const BackwardScratch& s = p.bwd_scratch;
    const TeamWork w = team_work(team.league_rank(), kChunked ? p.num_chunks : 1, p.bwd_tiles, p.groups);
    float* const base = team_scratch_floats<Member, ScratchView>(team, p.scratch_level, s.total);
    const index_t thread = team.team_rank(), T = p.bwd_team_size, CH = p.bwd_channels_per_team, reps = CH / T;
    const index_t CHP = CH + 1;  // row stride of the [k][channel] arrays
    const index_t N = p.dstate, K = p.chunk_len;
    float* const stage_B = scratch_at(base, s.stage_B);
    float* const stage_C = scratch_at(base, s.stage_C);
    float* const contrib_B = scratch_at(base, s.contrib_B);
    float* const contrib_C = scratch_at(base, s.contrib_C);
    float* const my_contrib_B = scratch_at(base, s.contrib_B, thread * K);
    float* const my_contrib_C = scratch_at(base, s.contrib_C, thread * K);

    // Per-channel accumulators and the adjoint entering the last chunk handled.
    for (index_t rep = 0; rep < reps; ++rep) {
      const index_t ch = rep * T + thread, channel = w.tile * CH + ch;
      const bool active = channel < p.channels_per_group;
      const index_t d = w.g * p.channels_per_group + (active ? channel : 0);
      for (index_t n = 0; n < N; ++n) {
        float g = 0.0f;
        if (active && kChunked) g = p.chunk_local[p.chunk_slot(w.b, w.chunk, n, d)];
        if (active && !kChunked && p.has_dlast_state) g = dm::load_readonly(p.dlast_state + p.state(w.b, d, n));
        base[s.adjoint + n * CH + ch] = g;
        base[s.dA + n * CH + ch] = 0.0f;
        if (s.dB >= 0) base[s.dB + n * CH + ch] = 0.0f;
        if (s.dC >= 0) base[s.dC + n * CH + ch] = 0.0f;
      }
      if (s.dD >= 0) base[s.dD + ch] = 0.0f;
      if (s.ddelta_bias >= 0) base[s.ddelta_bias + ch] = 0.0f;
    }

    const index_t first = kChunked ? w.chunk : p.num_chunks - 1;
    const index_t last = kChunked ? w.chunk : 0;
    for (index_t chunk = first; chunk >= last; --chunk) {
      const index_t t0 = chunk * K, len = min_index(K, p.seqlen - t0);
      team.team_barrier();
      stage_bc(team, p, w.b, w.g, t0, len, K, stage_B, stage_C);

      // The chunk's per-step inputs of every channel, loaded by the whole team; inactive
      // channels get zeros, so they add nothing to the team sums.
      for_each_sequence_element(team, p, CH, len, [&](const index_t ch, const index_t k) {
        const index_t channel = w.tile * CH + ch, slot = k * CHP + ch;
        float x = 0.0f, dt = 0.0f, slope = 1.0f, dy = 0.0f, dz_factor = 0.0f;
        if (channel < p.channels_per_group) {
          const index_t d = w.g * p.channels_per_group + channel, t = t0 + k, at = p.seq(w.b, d, t);
          const float raw = p.dt_raw(w.b, d, t);
          if (p.softplus) {
            dt = softplus_f32(raw);
            slope = softplus_slope_f32(raw);
          } else {
            dt = raw;
          }
          x = dm::load_readonly(p.u + at);
          dy = dm::load_readonly(p.dout + at);
          if (p.has_z) {
            const GateValue gate = gate_f32(p.gate, dm::load_readonly(p.z + at));
            dz_factor = dy * gate.slope;  // dz = dout·act'(z)·y
            dy *= gate.act;
          }
        }
        base[s.u + slot] = x;
        base[s.dt + slot] = dt;
        if (s.slope >= 0) base[s.slope + slot] = slope;
        base[s.dy + slot] = dy;
        if (s.dz_factor >= 0) base[s.dz_factor + slot] = dz_factor;
        base[s.du + slot] = 0.0f;
        base[s.ddt + slot] = 0.0f;
        if (s.y >= 0) base[s.y + slot] = 0.0f;
      });
      team.team_barrier();

      for (index_t n = 0; n < N; ++n) {
        for (index_t k = 0; k < len; ++k) {
          if (my_contrib_B) my_contrib_B[k] = 0.0f;
          if (my_contrib_C) my_contrib_C[k] = 0.0f;
        }
        for (index_t rep = 0; rep < reps; ++rep) {
          const index_t ch = rep * T + thread, channel = w.tile * CH + ch;
          if (channel >= p.channels_per_group) continue;
          const index_t d = w.g * p.channels_per_group + channel;
          const float A_n = dm::load_readonly(p.A + d * N + n);
          const float B_fixed = p.B_per_step ? 0.0f : dm::load_readonly(p.B + p.B_fixed(d, n));
          const float C_fixed = p.C_per_step ? 0.0f : dm::load_readonly(p.C + p.C_fixed(d, n));
          const float h_start = p.chunk_states[p.chunk_slot(w.b, chunk, n, d)];
          // Recompute this state over the chunk: h and exp(dt·A) per step.
          float h = h_start;
          for (index_t k = 0; k < len; ++k) {
            const index_t slot = k * CHP + ch;
            const float dt = base[s.dt + slot];
            const float Bk = stage_B ? stage_B[n * K + k] : B_fixed;
            const float a = dm::exp_f32(dt * A_n);
            h = a * h + dt * Bk * base[s.u + slot];
            base[s.h + slot] = h;
            base[s.decay + slot] = a;
            if (s.y >= 0) base[s.y + slot] += (stage_C ? stage_C[n * K + k] : C_fixed) * h;
          }
          // The adjoint of this state, backwards over the chunk.
          float g = base[s.adjoint + n * CH + ch];
          float dA_sum = 0.0f, dB_sum = 0.0f, dC_sum = 0.0f;
          for (index_t k = len - 1; k >= 0; --k) {
            const index_t slot = k * CHP + ch;
            const float Bk = stage_B ? stage_B[n * K + k] : B_fixed;
            const float Ck = stage_C ? stage_C[n * K + k] : C_fixed;
            const float dt = base[s.dt + slot], x = base[s.u + slot], dy = base[s.dy + slot];
            const float a = base[s.decay + slot];
            const float h_prev = k > 0 ? base[s.h + slot - CHP] : h_start;
            g += Ck * dy;  // ∂ℒ/∂h_t
            const float dC_term = dy * base[s.h + slot];
            const float dB_term = g * dt * x;
            if (my_contrib_C) my_contrib_C[k] += dC_term; else dC_sum += dC_term;
            if (my_contrib_B) my_contrib_B[k] += dB_term; else dB_sum += dB_term;
            base[s.du + slot] += g * dt * Bk;
            base[s.ddt + slot] += g * (A_n * a * h_prev + Bk * x);
            dA_sum += g * h_prev * a * dt;
            g *= a;  // ∂ℒ/∂h_{t-1} through h_t
          }
          base[s.adjoint + n * CH + ch] = g;
          base[s.dA + n * CH + ch] += dA_sum;
          if (s.dB >= 0) base[s.dB + n * CH + ch] += dB_sum;
          if (s.dC >= 0) base[s.dC + n * CH + ch] += dC_sum;
        }
        if (contrib_B || contrib_C) {
          team.team_barrier();
          team_tree_sum_rows(team, contrib_B, contrib_C, T, K, len);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, len), [&](const index_t k) {
            const index_t t = t0 + k;
            if (contrib_B) {
              if (p.bwd_tiles == 1) p.dB[p.B_step(w.b, w.g, n, t)] = contrib_B[k];
              else p.part_dB_step[p.step_partial(w.b, w.g, w.tile, n, t)] = contrib_B[k];
            }
            if (contrib_C) {
              if (p.bwd_tiles == 1) p.dC[p.C_step(w.b, w.g, n, t)] = contrib_C[k];
              else p.part_dC_step[p.step_partial(w.b, w.g, w.tile, n, t)] = contrib_C[k];
            }
          });
          team.team_barrier();  // row 0 is read before the next state clears it
        }
      }

      // The chunk's per-step gradients, channel by channel (the per-channel sums in step
      // order), left in scratch: du in du, ddelta in ddt, dz in y.
      for (index_t rep = 0; rep < reps; ++rep) {
        const index_t ch = rep * T + thread, channel = w.tile * CH + ch;
        if (channel >= p.channels_per_group) continue;
        const index_t d = w.g * p.channels_per_group + channel;
        const float D_d = p.has_D ? dm::load_readonly(p.D + d) : 0.0f;
        float dD_sum = 0.0f, ddelta_bias_sum = 0.0f;
        for (index_t k = 0; k < len; ++k) {
          const index_t slot = k * CHP + ch;
          const float x = base[s.u + slot], dy = base[s.dy + slot];
          if (p.has_D) {
            base[s.du + slot] += D_d * dy;
            dD_sum += dy * x;
          }
          if (p.has_z) base[s.y + slot] = base[s.dz_factor + slot] * (base[s.y + slot] + (p.has_D ? D_d * x : 0.0f));
          const float ddelta = base[s.ddt + slot] * (s.slope >= 0 ? base[s.slope + slot] : 1.0f);
          base[s.ddt + slot] = ddelta;
          ddelta_bias_sum += ddelta;
        }
        if (s.dD >= 0) base[s.dD + ch] += dD_sum;
        if (s.ddelta_bias >= 0) base[s.ddelta_bias + ch] += ddelta_bias_sum;
      }
      team.team_barrier();
      for_each_sequence_element(team, p, CH, len, [&](const index_t ch, const index_t k) {
        const index_t channel = w.tile * CH + ch, slot = k * CHP + ch;
        if (channel >= p.channels_per_group) return;
        const index_t at = p.seq(w.b, w.g * p.channels_per_group + channel, t0 + k);
        p.du[at] = base[s.du + slot];
        p.ddelta[at] = base[s.ddt + slot];
        if (p.has_z) p.dz[at] = base[s.y + slot];
      });
    }

    // Per-channel partial sums of this team's segment (all of time, or its chunk).
    const index_t segment = kChunked ? w.chunk : 0;
    for (index_t rep = 0; rep < reps; ++rep) {
      const index_t ch = rep * T + thread, channel = w.tile * CH + ch;
      if (channel >= p.channels_per_group) continue;
      const index_t d = w.g * p.channels_per_group + channel;
      for (index_t n = 0; n < N; ++n) {
        if (!kChunked && p.has_initial_state) p.dinitial_state[p.state(w.b, d, n)] = base[s.adjoint + n * CH + ch];
        p.part_dA[p.channel_partial(w.b, segment, n, d)] = base[s.dA + n * CH + ch];
        if (s.dB >= 0) p.part_dB_channel[p.channel_partial(w.b, segment, n, d)] = base[s.dB + n * CH + ch];
        if (s.dC >= 0) p.part_dC_channel[p.channel_partial(w.b, segment, n, d)] = base[s.dC + n * CH + ch];
      }
      if (s.dD >= 0) p.part_dD[p.channel_partial(w.b, segment, d)] = base[s.dD + ch];
      if (s.ddelta_bias >= 0) p.part_ddelta_bias[p.channel_partial(w.b, segment, d)] = base[s.ddelta_bias + ch];
    }
  }
};

// Sums the per-channel partials over batch, then segment, in that fixed order: index n·D + d
// for (D, N) gradients (dA; time-invariant dB, dC), d for dD and ddelta_bias.
template <class Space>
struct ReduceChannelPartials {
  Params p;
  const float* partial;
  float* result;
  index_t result_dim_stride, result_state_stride;  // result at d·dim_stride + n·state_stride
  bool per_state;                                  // false: (D) partials

  KOKKOS_INLINE_FUNCTION void operator()(const index_t i) const {
    const index_t d = i % p.dim, n = per_state ? i / p.dim : 0;
    float sum = 0.0f;
    for (index_t b = 0; b < p.batch; ++b)
      for (index_t segment = 0; segment < p.channel_segments; ++segment)
        sum += partial[per_state ? p.channel_partial(b, segment, n, d) : p.channel_partial(b, segment, d)];
    result[d * result_dim_stride + n * result_state_stride] = sum;
  }
};

// Sums the per-team partials of per-step dB or dC over the group's teams in order.
template <class Space>
struct ReduceStepPartials {
  Params p;
  const float* partial;
  float* result;
  bool is_B;

  KOKKOS_INLINE_FUNCTION void operator()(const index_t i) const {
    const index_t t = i % p.seqlen;
    index_t r = i / p.seqlen;
    const index_t n = r % p.dstate;
    r /= p.dstate;
    const index_t g = r % p.groups, b = r / p.groups;
    float sum = 0.0f;
    for (index_t tile = 0; tile < p.bwd_tiles; ++tile) sum += partial[p.step_partial(b, g, tile, n, t)];
    result[is_B ? p.B_step(b, g, n, t) : p.C_step(b, g, n, t)] = sum;
  }
};

// --- host side ---

template <class Space, int kN>
void adjoint_local_for_dstate(const Params& q, const Space& space) {
  Kokkos::parallel_for("scanlab::selective_scan_backward_adjoint_local",
                       team_policy(space, q.batch * q.groups * q.bwd_tiles * q.num_chunks, q.bwd_team_size,
                                   q.scratch_level, q.adj_scratch.total),
                       AdjointLocal<Space, kN>{q});
}

}  // namespace detail

template <class Space>
void selective_scan_backward(const SelectiveScanProblem& p, const SelectiveScanConfig& c,
                             const SelectiveScanTensors<Space>& t, const SelectiveScanWorkspace<Space>& w,
                             const Space& space) {
  using detail::index_t;
  if (!p.with_backward) throw std::invalid_argument("selective_scan backward: the problem has no dout (with_backward is false)");
  detail::check_can_run(p, c, w, "backward");
  const detail::Params q = detail::make_params(p, c, t, w);
  using Range = Kokkos::RangePolicy<Space, Kokkos::IndexType<index_t>>;
  const index_t teams = q.batch * q.groups * q.bwd_tiles;
  if (c.impl == "tiled") {
    auto launch = [&](auto chunk, auto split, auto sfu, auto interleave, auto staged, auto normal_loop) {
      constexpr int kK = decltype(chunk)::value, kS = decltype(split)::value, kI = decltype(interleave)::value;
      constexpr bool kSfu = decltype(sfu)::value, kStaged = decltype(staged)::value;
      constexpr bool kNormalLoop = decltype(normal_loop)::value;
      // scratch: the walk's whole layout, or the summary pass's prefix of it (summary_total)
      auto policy = [&](index_t league, std::int64_t scratch) {
        return detail::team_policy<Space, detail::TiledBackwardBounds<kK, kI>>(space, league, q.bwd_team_size, 0, scratch);
      };
      using Seg = detail::TimeSegments;
      // The interleaved forms (8 warps an SM at their bound) re-read a chunk's delta, z and dout
      // at its end: they ask for the carve-out their teams need and leave the rest to L1 (at the
      // anchor 3.73 against 4.16 ms with Kokkos' own: reports/speed-notes.md §30).
      constexpr bool fit = kI > 1;
      auto walk = [&](const char* label, index_t league, auto functor) {
        using Functor = decltype(functor);
        using Bounds = detail::TiledBackwardBounds<kK, kI>;
        if (fit) detail::fit_l1_carveout<Functor, Bounds, Space>(label, q.bwd_team_size, q.tiled_bwd_scratch.total, 8, false);
        Kokkos::parallel_for(label, policy(league, q.tiled_bwd_scratch.total), functor);
        if (fit) detail::fit_l1_carveout<Functor, Bounds, Space>(label, q.bwd_team_size, q.tiled_bwd_scratch.total, 8, true);
      };
      if (q.time_segments > 1) {  // every segment after the first needs its end adjoint
        // The summary pass walks no gradients: one state at a time whatever the interleave (its
        // scratch is laid out for it all the same); behind a staged walk its chunk inputs are staged a
        // chunk ahead as the walk's are.
        // Its teams ask for their prefix of the walk's scratch only (summary_total).
        Kokkos::parallel_for("scanlab::selective_scan_backward_tiled_segment_summary",
                             policy(teams * (q.time_segments - 1) * q.summary_blocks, q.tiled_bwd_scratch.summary_total),
                             detail::BackwardTiled<Space, kK, kS, kSfu, Seg::summary, 1, kStaged>{q});
        walk("scanlab::selective_scan_backward_tiled_segments", teams * q.time_segments,
             detail::BackwardTiled<Space, kK, kS, kSfu, Seg::walk, kI, kStaged, kNormalLoop>{q});
      } else {
        walk("scanlab::selective_scan_backward_tiled", teams,
             detail::BackwardTiled<Space, kK, kS, kSfu, Seg::whole, kI, kStaged, kNormalLoop>{q});
      }
    };
    auto with_split = [&](auto chunk) {
      detail::dispatch_split<Space>(c.bwd_state_split, [&](auto split) {
        detail::dispatch_flag(c.fast_activations, [&](auto sfu) {
          // Interleaved states only with one thread a channel at chunk 8 (invalid_reason()): the
          // only place they pay, and each form is another set of kernels to compile.
          constexpr bool kCanInterleave = decltype(split)::value == 1 && decltype(chunk)::value == 8;
          using Staged = std::true_type;
          using Direct = std::false_type;
          using NormalLoop = std::true_type;
          using Branching = std::false_type;
          if constexpr (kCanInterleave) {
            if (c.bwd_state_interleave == 4)
              return launch(chunk, split, sfu, std::integral_constant<int, 4>(), Direct(), Branching());
            if (c.bwd_state_interleave == 2 && c.bwd_stage_inputs == 1)  // staged inputs at 2 only (invalid_reason())
              return launch(chunk, split, sfu, std::integral_constant<int, 2>(), Staged(), Branching());
            if (c.bwd_state_interleave == 2 && c.bwd_normal_loop == 1)  // likewise unstaged at 2 only
              return launch(chunk, split, sfu, std::integral_constant<int, 2>(), Direct(), NormalLoop());
            if (c.bwd_state_interleave == 2)
              return launch(chunk, split, sfu, std::integral_constant<int, 2>(), Direct(), Branching());
          }
          launch(chunk, split, sfu, std::integral_constant<int, 1>(), Direct(), Branching());
        });
      });
    };
    if (c.chunk_len == 8) with_split(std::integral_constant<int, 8>());
    else with_split(std::integral_constant<int, 16>());  // invalid_reason() allows 8 and 16 only
  } else if (c.impl == "sequential") {
    Kokkos::parallel_for("scanlab::selective_scan_backward_sequential",
                         detail::team_policy(space, teams, q.bwd_team_size, q.scratch_level, q.bwd_scratch.total),
                         detail::BackwardChunks<Space, false>{q});
  } else {
    detail::dispatch_dstate(c.dstate_static, [&](auto static_dstate) {
      detail::adjoint_local_for_dstate<Space, decltype(static_dstate)::value>(q, space);
    });
    Kokkos::parallel_for("scanlab::selective_scan_backward_carry", Range(space, 0, q.batch * q.dstate * q.dim),
                         detail::CarryAdjoints<Space>{q});
    Kokkos::parallel_for("scanlab::selective_scan_backward_chunks",
                         detail::team_policy(space, teams * q.num_chunks, q.bwd_team_size, q.scratch_level,
                                             q.bwd_scratch.total),
                         detail::BackwardChunks<Space, true>{q});
  }
  // Fixed-order sums of the partials.
  const index_t DN = q.dim * q.dstate;
  Kokkos::parallel_for("scanlab::selective_scan_backward_reduce_dA", Range(space, 0, DN),
                       detail::ReduceChannelPartials<Space>{q, q.part_dA, q.dA, q.dstate, 1, true});
  if (!p.B_per_step)
    Kokkos::parallel_for("scanlab::selective_scan_backward_reduce_dB", Range(space, 0, DN),
                         detail::ReduceChannelPartials<Space>{q, q.part_dB_channel, q.dB, q.st.B_dim, q.st.B_state, true});
  if (!p.C_per_step)
    Kokkos::parallel_for("scanlab::selective_scan_backward_reduce_dC", Range(space, 0, DN),
                         detail::ReduceChannelPartials<Space>{q, q.part_dC_channel, q.dC, q.st.C_dim, q.st.C_state, true});
  if (p.has_D)
    Kokkos::parallel_for("scanlab::selective_scan_backward_reduce_dD", Range(space, 0, q.dim),
                         detail::ReduceChannelPartials<Space>{q, q.part_dD, q.dD, 1, 0, false});
  if (p.has_delta_bias)
    Kokkos::parallel_for("scanlab::selective_scan_backward_reduce_ddelta_bias", Range(space, 0, q.dim),
                         detail::ReduceChannelPartials<Space>{q, q.part_ddelta_bias, q.ddelta_bias, 1, 0, false});
  const index_t steps = q.batch * q.groups * q.dstate * q.seqlen;
  if (q.part_dB_step)
    Kokkos::parallel_for("scanlab::selective_scan_backward_reduce_step_dB", Range(space, 0, steps),
                         detail::ReduceStepPartials<Space>{q, q.part_dB_step, q.dB, true});
  if (q.part_dC_step)
    Kokkos::parallel_for("scanlab::selective_scan_backward_reduce_step_dC", Range(space, 0, steps),
                         detail::ReduceStepPartials<Space>{q, q.part_dC_step, q.dC, false});
}

}  // namespace scanlab::kernels
