// "tiled"'s forward with direct_io (selective_scan_config.hpp): ForwardDirect and its launch. A
// header of its own, included only by the units that instantiate forward_direct
// (selective_scan_SPACE_direct.cpp, and Serial's unit), so that editing it recompiles those alone:
// the CUDA forward unit takes ~15 minutes on two cores, this one a few.
//
// kS threads per channel (1 or 2; thread = row·kS + part, part owning the kM consecutive states
// from part·kM, as in the staged forward), the states in registers. Only the
// per-step B and C pass through team scratch (double-buffered step-major tiles shared by the
// team's channels, filled one tile ahead, one barrier a tile). Each thread reads its channel's
// inputs straight into registers in blocks of 8 steps, 32 bytes a channel and tensor (4 steps at
// dstate 64; the next block's loads in flight while this one computes) and writes its outputs
// the same way: no input or output tile and no pass over scratch per element (the staged
// forward spends ~60% of its instructions there: reports/speed-notes.md §9, §16, §22).
//
// Time segments (fwd_time_segments, where the channels alone leave the device idle) as in the
// staged forward: a summary pass (each segment but the last walked from a zero state, with the
// decays' product and no output: no z is read) and then every segment walked from the start
// state carried to it through the earlier summaries (Params::segment_start_state). The summaries
// are the staged forward's bits, so the outputs stay bitwise the staged forward's in segments too.
//
// With two threads a channel (twice the warps of one, speed-notes §28-§29) the per-step work is
// split, not repeated: part q owns steps [4q, 4q + 4) of each block (of 8; [2q, 2q + 2) of 4). It
// loads u, raw delta and z of those steps only (the partners' 16-byte reads are the two halves
// of one sector), turns them into dt and act(z), and the partners swap their four dt and u values
// (swap_with_partner: one warp shuffle a value on CUDA); both then run every step of the block
// over their own states;
// each sends its share of y for the partner's four steps and receives the partner's share of its
// own, adds the shares in part order (part 0's with D·u, as the staged forward) and gates and
// stores its four steps. The results are bitwise the staged forward's with
// the same split (a kernel test holds them so).
//
// direct_io 2 (kStagedRows; one thread a channel, rows of whole 16-byte runs): a thread reading its
// own row 32 bytes a request kept the L1 data pipe ~86% busy at the anchor while the DRAM ran at
// 55% (speed-notes §59). So the team copies its channels' rows of u and raw delta into the tile's
// buffer with B and C, consecutive threads along a row (a warp's copies are whole lines), rows
// swizzled in 16-byte pieces (staged_at) so that both the copies and a thread's reads
// of its row are conflict-free; each thread walks its row there and writes y + D·u over the delta
// it has read; after a team barrier the team stores the tile along the rows, gated by z read as
// the tile began (z is never staged: at 32 steps and one warp a team the buffers take 26 KB, inside
// Kokkos 3.4's 40 KB of team scratch with 8 teams an SM). B and C go into [n][k] rows, 16 bytes a
// copy (step-major tiles took 4-byte copies), and the walk reads a state's 4 steps at once
// (state_steps_by_state). In a full tile of 32 steps a thread's pieces are fixed for the pass
// (StagedPass). Same arithmetic as 1.
//
// Leanness (speed-notes §29: the SASS of session 12's kernel spent ~90 of ~700 instructions a
// block on 64-bit index arithmetic and run-time alignment tests of its loads): where seqlen is
// contiguous, a multiple of 4 and every tile starts at a multiple of 4 (kVec, decided once on the
// host), a block's loads are two 16-byte accesses a tensor (one with two threads) from a 32-bit
// step offset; elsewhere (state_space_v1's time-major layout) one access a step, still
// coalesced across the warp's channels. The exp2 range test that picks the flush-to-zero exp2 is
// one product a block (exp2_products_stay_normal).
#pragma once

#include "l1_carveout.hpp"
#include "selective_scan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace scanlab::kernels {
namespace detail {

// streaming::store4 to global memory as one 16-byte store on CUDA, whatever the compiler makes of
// the address arithmetic (direct_io 2's tile store through pointer-stepped offsets compiled to four
// 4-byte stores a piece: 4x the STG instructions in ncu, speed-notes §62); the plain store elsewhere.
KOKKOS_FORCEINLINE_FUNCTION void store4_global(float* p, const streaming::Float4& v) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
#else
  streaming::store4(p, v);
#endif
}

// direct_io 2's inner loop: state_steps (selective_scan.hpp) with B and C as [n][kRow] rows, Bn
// and Cn at the thread's first state and the block's first step: a state's kJ steps are one
// 16-byte read (the same address across the warp: a broadcast) instead of 4 states of a step. The
// same products and sums in the same order (each h[i] over its steps in order, each y[j] over the
// states ascending), so the same results.
template <int kM, int kJ, int kRow, bool kNormal, bool kSummary>
KOKKOS_FORCEINLINE_FUNCTION void state_steps_by_state(const float* Bn, const float* Cn, const float (&x)[kJ],
                                                      const float (&dt)[kJ], float (&h)[kM], const float (&A2)[kM],
                                                      float (&decay)[kM], float (&y)[kJ]) {
  float dtu[kJ];
  start_state_steps(x, dt, dtu, y);
  SCANLAB_UNROLL
  for (int i = 0; i < kM; ++i) {
    float bn[kJ], cn[kJ];
    load_run<kJ>(Bn + i * kRow, bn);
    if (!kSummary) load_run<kJ>(Cn + i * kRow, cn);
    SCANLAB_UNROLL
    for (int j = 0; j < kJ; ++j) {
      const float a = kNormal ? sfu_exp2(dt[j] * A2[i]) : sfu_exp2_subnormal(dt[j] * A2[i]);
      h[i] = a * h[i] + bn[j] * dtu[j];
      if (kSummary) decay[i] *= a;
      else y[j] += cn[j] * h[i];
    }
  }
}

template <class Space, int kN, int kS, bool kSfuActivations, bool kVec, TimeSegments kSegments = TimeSegments::whole,
          bool kStagedRows = false>
struct ForwardDirect {
  using Act = Activations<kSfuActivations>;
  static constexpr bool kSummary = kSegments == TimeSegments::summary, kSegmented = kSegments != TimeSegments::whole;
  static_assert(kS == 1 || kS == 2 || kS == 4, "direct_io runs one, two or four threads per channel");
  static_assert(!kStagedRows || (kS == 1 && kVec), "direct_io 2 stages whole 16-byte runs, a thread's channel a row");
  static_assert(kN % kS == 0, "the states split evenly between a channel's threads");
  static constexpr int kM = kN / kS;    // states per thread
  // Steps a block: 32 bytes a channel and tensor, a whole sector, requested at once (blocks of 4
  // used half a sector a block and read the other half a block later: 1.07-1.21x slower at
  // dstate 16, speed-notes §39). At dstate 64 blocks of 4 still: there the 8-step block's
  // registers spill more (a 72-byte stack, was 40) and its forward took 1.90 ms against 1.65.
  static constexpr int kBlock = kN >= 64 && kS < 4 ? 4 : 8;
  static constexpr int kOwn = kBlock / kS;  // steps of a block this thread loads, prepares, gates and stores
  // Four threads a channel exchange through team scratch (kExchangeRow floats a thread: its two
  // dt and two u, then its y shares of the block's 8 steps; tiled_scratch reserves the same
  // direct_exchange_floats); two swap by warp shuffles.
  static constexpr int kExchangeRow = int(direct_exchange_floats(kS));
  static_assert(kS != 4 || (kOwn == 2 && kExchangeRow == 2 * kOwn + kBlock), "four: two dt, two u, a block's y shares");
  static constexpr int kBcStep = int(tiled_forward_bc_step(kN));
  // Floats between consecutive steps' B (and C) in the tile: step-major [k][n] tiles, or direct_io
  // 2's [n][k] rows (16-byte copies where B and C are contiguous in time, as the rows' copies).
  static constexpr int kStepStride = kStagedRows ? 1 : kBcStep;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using ScratchView = Kokkos::View<float*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  Params p;

  // One thread's view of its channel: row base pointers (64-bit arithmetic once a pass) and the
  // step stride. With kVec a step offset is the 32-bit step itself; otherwise step · stride in 64
  // bits (state_space_v1's time-major stride is dim).
  struct Row {
    const float *u, *delta, *z;
    float* out;
    index_t step;  // 1 where kVec
  };
  // A block's inputs as loaded: u, raw delta and z of this thread's kOwn steps.
  struct Block {
    float x[kOwn], raw[kOwn], z[kOwn];
  };

  // kOwn floats from `at` in 16-byte reads (one 8-byte read where a thread owns 2 steps), L2
  // fetching the row's 128-byte line (a thread reads its row 32 bytes a block).
  static KOKKOS_FORCEINLINE_FUNCTION void load_own(const float* at, float (&v)[kOwn]) {
    if constexpr (kOwn == 2) {
      const streaming::Float2 f = device_math::load2_row_readonly(at);
      v[0] = f.x; v[1] = f.y;
    } else {
      static_assert(kOwn % 4 == 0, "whole 16-byte runs");
      SCANLAB_UNROLL
      for (int q = 0; q < kOwn / 4; ++q) {
        const streaming::Float4 f = device_math::load4_row_readonly(at + 4 * q);
        v[4 * q] = f.x; v[4 * q + 1] = f.y; v[4 * q + 2] = f.z; v[4 * q + 3] = f.w;
      }
    }
  }

  // kOwn floats to `at`, the same accesses as load_own.
  static KOKKOS_FORCEINLINE_FUNCTION void store_own(float* at, const float (&v)[kOwn]) {
    if constexpr (kOwn == 2) {
      streaming::store2(at, streaming::Float2{v[0], v[1]});
    } else {
      SCANLAB_UNROLL
      for (int q = 0; q < kOwn / 4; ++q) store4(at + 4 * q, streaming::Float4{v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]});
    }
  }

  // Loads this thread's steps of the block at step t (n of its kBlock steps exist; a missing step
  // loads zeros). own: the first of this thread's kOwn steps. With two threads a channel the
  // partners' 16-byte reads are the two halves of one sector, in one warp request.
  KOKKOS_FORCEINLINE_FUNCTION void load_block(const Row& r, int t, int n, int own, Block& b) const {
    namespace dm = device_math;
    if (kVec && n == kBlock) {  // 16-byte aligned: t and every row start are multiples of 4
      load_own(r.u + t + own, b.x);
      load_own(r.delta + t + own, b.raw);
      if (p.has_z && !kSummary) load_own(r.z + t + own, b.z);  // the summary pass has no y to gate
      return;
    }
    SCANLAB_UNROLL
    for (int i = 0; i < kOwn; ++i) {
      const bool here = own + i < n;
      const index_t at = index_t(t + own + i) * r.step;
      b.x[i] = here ? dm::load_readonly(r.u + at) : 0.0f;
      b.raw[i] = here ? dm::load_readonly(r.delta + at) : 0.0f;
      b.z[i] = here && p.has_z && !kSummary ? dm::load_readonly(r.z + at) : 0.0f;
    }
  }

  // raw delta → dt = softplus(raw + bias), z → act(z), for this thread's steps; one branch a block
  // on the problem's flags (silu, the common gate, without the switch over the others: silu_gate
  // is decided once, a switch a block cost 8 instructions).
  KOKKOS_FORCEINLINE_FUNCTION void prepare(Block& b, float bias, bool silu_gate) const {
    SCANLAB_UNROLL
    for (int i = 0; i < kOwn; ++i) b.raw[i] += bias;
    if (p.softplus) {
      SCANLAB_UNROLL
      for (int i = 0; i < kOwn; ++i) b.raw[i] = Act::softplus(b.raw[i]);
    }
    if constexpr (kStagedRows) return;  // the gate is applied as the team stores the tile's outputs
    if (p.has_z && !kSummary) gate_in_place(b.z, silu_gate);
  }

  // z → act(z) for kCount values (silu_gate: the problem's gate is silu, decided once).
  template <int kCount>
  KOKKOS_FORCEINLINE_FUNCTION void gate_in_place(float (&z)[kCount], bool silu_gate) const {
    if (silu_gate) {
      SCANLAB_UNROLL
      for (int i = 0; i < kCount; ++i) z[i] = Act::gate(GateActivation::silu, z[i]).act;
    } else {
      with_gate_kind(p.gate, [&](const auto gate) {
        SCANLAB_UNROLL
        for (int i = 0; i < kCount; ++i) z[i] = Act::gate(decltype(gate)::value, z[i]).act;
      });
    }
  }

  // dt and u of all kBlock steps of the block: this thread's kOwn and, with two threads a channel,
  // the partner's (one swap of kOwn dt and kOwn u; selects, not an index by part, keep the arrays
  // in registers).
  KOKKOS_FORCEINLINE_FUNCTION void block_steps(const Member& team, float* swap_slots, int part, const Block& b,
                                               float (&dt)[kBlock], float (&x)[kBlock]) const {
    if constexpr (kS == 1) {
      SCANLAB_UNROLL
      for (int j = 0; j < kBlock; ++j) {
        dt[j] = b.raw[j];
        x[j] = b.x[j];
      }
    } else if constexpr (kS == 4) {
      // through scratch: each thread's two dt and two u (one 16-byte write), one warp sync, the
      // channel's four rows (four 16-byte reads); finish's sync orders the next block's writes
      // after every read
      const int thread = team.team_rank();
      store4(swap_slots + thread * kExchangeRow, streaming::Float4{b.raw[0], b.raw[1], b.x[0], b.x[1]});
      device_math::group_barrier(team, true);
      const float* const channel = swap_slots + (thread - part) * kExchangeRow;
      SCANLAB_UNROLL
      for (int q = 0; q < kS; ++q) {
        const streaming::Float4 f = load4(channel + q * kExchangeRow);
        dt[2 * q] = f.x; dt[2 * q + 1] = f.y;
        x[2 * q] = f.z; x[2 * q + 1] = f.w;
      }
      // the summary pass has no finish: its sync here, before the next block's writes
      if constexpr (kSummary) device_math::group_barrier(team, true);
    } else {
      float theirs[2 * kOwn];
      SCANLAB_UNROLL
      for (int i = 0; i < kOwn; ++i) {
        theirs[i] = b.raw[i];
        theirs[kOwn + i] = b.x[i];
      }
      device_math::swap_with_partner(team, theirs, swap_slots);
      const bool first = part == 0;
      SCANLAB_UNROLL
      for (int i = 0; i < kOwn; ++i) {
        dt[i] = first ? b.raw[i] : theirs[i];
        dt[kOwn + i] = first ? theirs[i] : b.raw[i];
        x[i] = first ? b.x[i] : theirs[kOwn + i];
        x[kOwn + i] = first ? theirs[kOwn + i] : b.x[i];
      }
    }
  }

  // This thread's kOwn outputs from the states' shares y of the block's kBlock steps: part 0's
  // share carries D·u; with two threads the shares are added in part order (share 0 + share 1:
  // the same sum on both threads, as the staged forward adds them), then gated.
  KOKKOS_FORCEINLINE_FUNCTION void finish(const Member& team, float* swap_slots, int part, const Block& b,
                                          const float (&x)[kBlock], float D_d, float (&y)[kBlock],
                                          float (&v)[kOwn]) const {
    if (part == 0) {
      SCANLAB_UNROLL
      for (int j = 0; j < kBlock; ++j) y[j] += D_d * x[j];
    }
    if constexpr (kS == 1) {
      SCANLAB_UNROLL
      for (int j = 0; j < kBlock; ++j) v[j] = y[j];
    } else if constexpr (kS == 4) {
      // every share of the block through scratch, one warp sync, then this thread's two steps'
      // shares added in part order ((s0 + s1) + s2) + s3, as the staged forward adds them
      const int thread = team.team_rank();
      float* const mine = swap_slots + thread * kExchangeRow + 2 * kOwn;
      store4(mine, streaming::Float4{y[0], y[1], y[2], y[3]});
      store4(mine + 4, streaming::Float4{y[4], y[5], y[6], y[7]});
      device_math::group_barrier(team, true);
      const float* const channel = swap_slots + (thread - part) * kExchangeRow + 2 * kOwn + part * kOwn;
      streaming::Float2 sum = streaming::load2(channel);
      SCANLAB_UNROLL
      for (int q = 1; q < kS; ++q) {
        const streaming::Float2 share = streaming::load2(channel + q * kExchangeRow);
        sum.x += share.x;
        sum.y += share.y;
      }
      v[0] = sum.x;
      v[1] = sum.y;
    } else {
      const bool first = part == 0;
      float theirs[kOwn];  // the partner's steps
      SCANLAB_UNROLL
      for (int i = 0; i < kOwn; ++i) theirs[i] = first ? y[kOwn + i] : y[i];
      device_math::swap_with_partner(team, theirs, swap_slots);
      // share 0 + share 1 either way: a + b and b + a are the same float
      SCANLAB_UNROLL
      for (int i = 0; i < kOwn; ++i) v[i] = (first ? y[i] : y[kOwn + i]) + theirs[i];
    }
    if (p.has_z && !kStagedRows) {
      SCANLAB_UNROLL
      for (int i = 0; i < kOwn; ++i) v[i] *= b.z[i];
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION void store(const Row& r, int t, int n, int own, const float (&v)[kOwn]) const {
    if (kVec && n == kBlock) {
      store_own(r.out + t + own, v);
      return;
    }
    SCANLAB_UNROLL
    for (int i = 0; i < kOwn; ++i)
      if (own + i < n) r.out[index_t(t + own + i) * r.step] = v[i];
  }

  // With a backward to follow, the state where a chunk starts (step t = next_save) is saved for it.
  KOKKOS_FORCEINLINE_FUNCTION void save_chunk_state(index_t b, index_t d, index_t first_state, bool active, int t,
                                                    const float (&h)[kM], int& next_save) const {
    if (t != next_save) return;
    next_save += int(p.chunk_len);
    if (!active) return;
    float* const save = p.chunk_states + p.chunk_slot(b, t / p.chunk_len, first_state, d);
    SCANLAB_UNROLL
    for (int i = 0; i < kM; ++i) save[i * p.dim] = h[i];
  }

  // direct_io 2: the tile's rows of the pass (channels d0 .. d0 + rows - 1) as laid out in `set`:
  // where 16-byte piece q of a row's steps from the tile's start lies (floats from the buffer).
  // q's low three bits xor the row's, so 8 threads reading piece q of 8 consecutive rows (a 16-byte
  // access phase) hit 8 distinct groups of 4 banks, as do 8 threads copying one row's 8 pieces.
  // (A device function here: the config header's constexpr ones are host functions, and a call to
  // one from device code compiled to nothing, every piece copied to the row's start; the build now
  // makes that diagnostic, cudafe's 20013, an error.)
  static KOKKOS_FORCEINLINE_FUNCTION int staged_at(int row, int q, int row_stride) {
    return row * row_stride + 4 * (q ^ (row & 7));
  }

  // direct_io 2's pieces a thread moves: piece f of a tile (row f / pieces, 16-byte piece f % pieces
  // of the row's steps from the tile's start). A tile of kPiecesFixed pieces a row (32 steps) has
  // team_size · 8 of them, 8 a thread at a piece and rows fixed for the pass: piece q = rank % 8 of
  // rows rank / 8 + i · team_size / 8, so a thread's global offsets are the pass's plus t0, stepped
  // by a row gap, with no division and no 64-bit product a piece (the run-time division and 64-bit
  // row arithmetic a piece made direct_io 2 issue-bound: speed-notes §61). Other tiles (a short last
  // tile, other time_tile) divide as they go.
  static constexpr int kPiecesFixed = 8, kFixedPerThread = 8;
  // z pieces a thread reads as a tile begins, for the tile's store: all of them (at most 8, 32
  // registers).
  static constexpr int kZAhead = kStagedRows ? kFixedPerThread : 1;
  struct ZAhead {
    streaming::Float4 z[kZAhead];
  };
  struct StagedPass {
    index_t at;       // offset of the thread's first piece at step 0 (a tile adds t0)
    index_t row_gap;  // offset between its consecutive rows
    int row0, row_step, q;
    bool fixed;  // whole warps of 8 pieces a row: the fixed assignment applies to full tiles
  };
  KOKKOS_INLINE_FUNCTION StagedPass staged_pass(const Member& team, index_t b, index_t d0) const {
    const int rank = team.team_rank(), size = team.team_size();
    StagedPass sp{0, 0, rank / kPiecesFixed, size / kPiecesFixed, rank % kPiecesFixed, size % kPiecesFixed == 0};
    sp.at = p.seq(b, d0 + sp.row0, 0) + 4 * sp.q;
    sp.row_gap = index_t(sp.row_step) * p.st.seq_dim;
    return sp;
  }
  KOKKOS_FORCEINLINE_FUNCTION static bool fixed_tile(const StagedPass& sp, int len) {
    return sp.fixed && len == 4 * kPiecesFixed;
  }
  // Piece g of the tile: its global offset (the general assignment).
  KOKKOS_FORCEINLINE_FUNCTION index_t piece_at(index_t b, index_t d0, int g, int pieces, int t0) const {
    return p.seq(b, d0 + g / pieces, 0) + t0 + 4 * (g % pieces);
  }
  // Calls f(i, global offset, row, piece) for each of this thread's pieces of the tile, either
  // assignment (i < kZAhead: the piece's index among the thread's; a tile of at most 32 steps has
  // at most rows · 8 <= team_size · kZAhead pieces, so no thread has more).
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void for_each_staged_piece(const Member& team, const StagedPass& sp, index_t b,
                                                         index_t d0, int rows, int t0, int len, const F& f) const {
    if (fixed_tile(sp, len)) {
      index_t at = sp.at + t0;
      SCANLAB_UNROLL
      for (int i = 0; i < kFixedPerThread; ++i, at += sp.row_gap) {
        const int row = sp.row0 + i * sp.row_step;
        if (row < rows) f(i, at, row, sp.q);
      }
      return;
    }
    // (at compile-time indices, so that ZAhead stays in registers)
    const int pieces = len / 4, total = rows * pieces;  // kVec: len is a multiple of 4
    const int rank = team.team_rank(), size = team.team_size();
    SCANLAB_UNROLL
    for (int i = 0; i < kZAhead; ++i) {
      const int g = rank + i * size;
      if (g < total) f(i, piece_at(b, d0, g, pieces, t0), g / pieces, g % pieces);
    }
  }

  // The tile's copies, one group: B and C of steps [t0, t0 + len) and, with kStagedRows, the rows of
  // u and raw delta of the pass's `rows` channels from d0 (16 bytes a copy; a warp's copies are
  // whole 128-byte lines of 4 rows).
  KOKKOS_INLINE_FUNCTION void issue_tile(const Member& team, const TeamWalk& full_bc, const StagedPass& sp, float* set,
                                         index_t b, index_t g, index_t d0, int rows, int t0, int len) const {
    const TileBuffers& s = p.tiled_scratch.in;
    if constexpr (kStagedRows) issue_bc_tile<direct_staged_bc_row>(team, p, set + s.B, set + s.C, direct_staged_bc_row, b, g, t0, len);
    else issue_bc_steps(team, p, set + s.B, set + s.C, kBcStep, b, g, t0, len, &full_bc);
    if constexpr (kStagedRows) {
      for_each_staged_piece(team, sp, b, d0, rows, t0, len, [&](int, index_t at, int row, int q) {
        const int to = staged_at(row, q, int(s.row));
        device_math::async_copy_f32x4(set + s.u + to, p.u + at);
        device_math::async_copy_f32x4(set + s.dt + to, p.delta + at);
      });
    }
    device_math::async_copy_commit();
  }

  // kStagedRows: this thread's steps [k, k + kOwn) of its row of the tile in `set`.
  KOKKOS_FORCEINLINE_FUNCTION void read_staged(const float* set, int row, int k, Block& b) const {
    const TileBuffers& s = p.tiled_scratch.in;
    SCANLAB_UNROLL
    for (int q = 0; q < kOwn / 4; ++q) {
      const int at = staged_at(row, k / 4 + q, int(s.row));
      const streaming::Float4 u4 = load4(set + s.u + at), d4 = load4(set + s.dt + at);
      b.x[4 * q] = u4.x; b.x[4 * q + 1] = u4.y; b.x[4 * q + 2] = u4.z; b.x[4 * q + 3] = u4.w;
      b.raw[4 * q] = d4.x; b.raw[4 * q + 1] = d4.y; b.raw[4 * q + 2] = d4.z; b.raw[4 * q + 3] = d4.w;
    }  // (b.z unused: gated at the tile's store)
  }

  // kStagedRows: the ungated outputs of those steps over the raw delta they came from.
  KOKKOS_FORCEINLINE_FUNCTION void write_staged(float* set, int row, int k, const float (&v)[kOwn]) const {
    const TileBuffers& s = p.tiled_scratch.in;
    SCANLAB_UNROLL
    for (int q = 0; q < kOwn / 4; ++q)
      store4(set + s.dt + staged_at(row, k / 4 + q, int(s.row)),
             streaming::Float4{v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]});
  }

  KOKKOS_INLINE_FUNCTION void read_z_ahead(const Member& team, const StagedPass& sp, index_t b, index_t d0, int rows,
                                           int t0, int len, ZAhead& za) const {
    for_each_staged_piece(team, sp, b, d0, rows, t0, len, [&](int i, index_t at, int, int) {
      if (i < kZAhead) za.z[i] = device_math::load4_row_readonly(p.z + at);
    });
  }

  // kStagedRows, after the team's barrier: the tile's outputs from scratch to the rows, gated by
  // silu, the pieces as the copies came in. direct_io 2 runs only with silu or no gate
  // (forward_direct): gate_in_place's switch over the other kinds, inlined at each of the 17
  // pieces, spread the store over ~6 KB of code a piece, and the probe's run-time gate switch cost
  // 1.04-1.15x (speed-notes §63).
  KOKKOS_INLINE_FUNCTION void store_staged_tile(const Member& team, const StagedPass& sp, const float* set, index_t b,
                                                index_t d0, int rows, int t0, int len, const ZAhead& za) const {
    const TileBuffers& s = p.tiled_scratch.in;
    for_each_staged_piece(team, sp, b, d0, rows, t0, len, [&](int i, index_t at, int row, int q) {
      streaming::Float4 v = load4(set + s.dt + staged_at(row, q, int(s.row)));
      if (p.has_z) {
        constexpr GateActivation kSilu = GateActivation::silu;
        v.x *= Act::gate(kSilu, za.z[i].x).act;
        v.y *= Act::gate(kSilu, za.z[i].y).act;
        v.z *= Act::gate(kSilu, za.z[i].z).act;
        v.w *= Act::gate(kSilu, za.z[i].w).act;
      }
      store4_global(p.out + at, v);
    });
  }

  // kJ steps of the thread's states, B and C of the first at Bk and Ck (either layout).
  template <int kJ, bool kNormal>
  KOKKOS_FORCEINLINE_FUNCTION static void walk_steps(const float* Bk, const float* Ck, const float (&x)[kJ],
                                                     const float (&dt)[kJ], float (&h)[kM], const float (&A2)[kM],
                                                     float (&decay)[kM], float (&y)[kJ]) {
    if constexpr (kStagedRows) state_steps_by_state<kM, kJ, direct_staged_bc_row, kNormal, kSummary>(Bk, Ck, x, dt, h, A2, decay, y);
    else state_steps<kM, kJ, kBcStep, kNormal, kSummary>(Bk, Ck, x, dt, h, A2, decay, y);
  }

  // A whole block's kBlock steps in halves of 4 (the unrolled body of session 17's blocks).
  template <bool kNormal>
  KOKKOS_FORCEINLINE_FUNCTION static void walk_block(const float* Bk, const float* Ck, const float (&x)[kBlock],
                                                     const float (&dt)[kBlock], float (&h)[kM], const float (&A2)[kM],
                                                     float (&decay)[kM], float (&y)[kBlock]) {
    SCANLAB_UNROLL
    for (int half = 0; half < kBlock / 4; ++half) {
      const float x4[4] = {x[4 * half], x[4 * half + 1], x[4 * half + 2], x[4 * half + 3]};
      const float dt4[4] = {dt[4 * half], dt[4 * half + 1], dt[4 * half + 2], dt[4 * half + 3]};
      float y4[4];
      walk_steps<4, kNormal>(Bk + 4 * half * kStepStride, Ck + 4 * half * kStepStride, x4, dt4, h, A2, decay, y4);
      SCANLAB_UNROLL
      for (int j = 0; j < 4; ++j) y[4 * half + j] = y4[j];
    }
  }

  // The rare paths rolled (walk_steps_one_by_one) everywhere but in the two-thread kernels in time
  // segments, where it spilled more under their 128 registers (the walk's stack 32 → 96 bytes) and
  // (2,4096,16,8192) ran 0.96x (speed-notes §68); there the unrolled paths as before.
  static constexpr bool kRollRarePaths = !(kSegmented && kS == 2);

  // a[j] for a run-time j, by selects, so that the array stays in registers (an indexed read
  // would put it in local memory).
  template <int kCount>
  KOKKOS_FORCEINLINE_FUNCTION static float pick(const float (&a)[kCount], int j) {
    float v = a[0];
    SCANLAB_UNROLL
    for (int i = 1; i < kCount; ++i) v = i == j ? a[i] : v;
    return v;
  }

  // The block's rare cases, one step at a time with the subnormal-keeping exp2: a decay that can
  // leave the normal range, a short block (the sequence's or a tile's end), a chunk start inside
  // the block. One step's code in a rolled loop: unrolled, these paths were ~1600 of the kernel's
  // instructions beside the hot walk_block<true> (speed-notes §67: instruction-fetch stalls). The
  // same sums in the same order as walk_block, so the same bits.
  KOKKOS_FORCEINLINE_FUNCTION void walk_steps_one_by_one(index_t b, index_t d, index_t first_state, bool active,
                                                         int t, int n, const float* Bk, const float* Ck,
                                                         const float (&x)[kBlock], const float (&dt)[kBlock],
                                                         float (&h)[kM], const float (&A2)[kM], float (&decay)[kM],
                                                         float (&y)[kBlock], int& next_save) const {
    SCANLAB_UNROLL
    for (int j = 0; j < kBlock; ++j) y[j] = 0.0f;
    SCANLAB_NO_UNROLL
    for (int j = 0; j < n; ++j) {
      save_chunk_state(b, d, first_state, active, t + j, h, next_save);
      const float x1[1] = {pick(x, j)}, dt1[1] = {pick(dt, j)};
      float y1[1];
      walk_steps<1, false>(Bk + j * kStepStride, Ck + j * kStepStride, x1, dt1, h, A2, decay, y1);
      SCANLAB_UNROLL
      for (int i = 0; i < kBlock; ++i) y[i] = i == j ? y1[0] : y[i];
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    namespace dm = device_math;
    const TiledScratch& ts = p.tiled_scratch;
    const TileBuffers& s = ts.in;
    // The team's time segment: steps [seg_begin, seg_end), whole tiles, chunks and 4-step blocks
    // (the workspace layout's fwd_segment_len); nothing needs the last segment's summary.
    const index_t segments_here = kSegmented ? (kSummary ? p.fwd_segments - 1 : p.fwd_segments) : 1;
    const TeamWork w = team_work(team.league_rank(), segments_here, p.fwd_tiles, p.groups);
    const index_t segment = kSegmented ? w.chunk : 0;
    const int L = int(p.seqlen);
    const int seg_begin = kSegmented ? int(segment * p.fwd_segment_len) : 0;
    const int seg_end = kSegmented ? int(min_index(L, seg_begin + p.fwd_segment_len)) : L;
    float* const base = dm::shared_scratch(align16(team_scratch_floats<Member, ScratchView>(team, 0, ts.total)));
    float* const swap_slots = kS > 1 ? base + ts.out : nullptr;  // the host's swap_with_partner; four's exchange
    const int thread = team.team_rank(), R = int(p.team_size) / kS, passes = int(p.channels_per_team) / R;
    const int row = thread / kS, part = thread % kS, own = part * kOwn;
    if (kS > 1 && !dm::whole_warps(team)) Kokkos::abort("scanlab direct_io: two or four threads a channel need teams of whole warps");
    const bool silu_gate = p.has_z && p.gate == GateActivation::silu && !kSummary;
    const index_t first_state = index_t(part) * kM;
    const int full_len = int(min_index(p.time_tile, seg_end - seg_begin));
    const unsigned full_bc = bc_steps_inner(p, full_len);
    const TeamWalk full_walk(team, full_bc > 0 ? full_bc : 1u);  // (guards the division where L = 0)
    for (int pass = 0; pass < passes; ++pass) {
      const index_t first = w.tile * p.channels_per_team + index_t(pass) * R;
      const index_t rows = min_index(R, p.channels_per_group - first);
      if (rows <= 0) break;  // the group's last tile: no channels left (uniform across the team)
      const bool active = row < rows;
      // Two threads a channel swap values, so every thread walks the steps (an inactive one on a
      // valid channel's inputs, storing nothing); one alone skips them.
      const bool walks = kS > 1 || active;
      const index_t d = w.g * p.channels_per_group + first + (active ? row : 0);
      // decay: the summary pass's running products of the decays (unused otherwise)
      float h[kM], A2[kM], decay[kM];
      float A2_max = 0.0f;  // the largest |A·log2 e| of this thread's states
      SCANLAB_UNROLL
      for (int i = 0; i < kM; ++i) {
        const index_t n = first_state + i;
        A2[i] = dm::load_readonly(p.A + d * p.dstate + n) * 1.4426950408889634f;  // exp(dt·A) = 2^(dt·A·log2 e)
        A2_max = fmaxf(A2_max, fabsf(A2[i]));
        decay[i] = 1.0f;
        h[i] = kSummary ? 0.0f : p.segment_start_state(w.b, segment, n, d);  // the summary starts from zero
      }
      SCANLAB_UNROLL
      for (int i = 0; i < kM; ++i)
        if (A2[i] != A2[i]) A2_max = A2[i];  // a NaN rate: never the flush-to-zero exp2
      const float D_d = p.has_D ? dm::load_readonly(p.D + d) : 0.0f;
      const float bias = p.has_delta_bias ? dm::load_readonly(p.delta_bias + d) : 0.0f;
      const index_t row_at = p.seq(w.b, d, 0);
      const Row r{p.u + row_at, p.delta + row_at, p.has_z ? p.z + row_at : nullptr, p.out + row_at,
                  p.st.seq_time};
      // the next chunk start, saved for the backward (segments start at chunk starts)
      int next_save = p.save_chunk_states && !kSummary ? seg_begin : seg_end + 1;
      const index_t d0 = w.g * p.channels_per_group + first;  // the pass's first channel

      const StagedPass sp = kStagedRows ? staged_pass(team, w.b, d0) : StagedPass{};
      issue_tile(team, full_walk, sp, base, w.b, w.g, d0, int(rows), seg_begin, full_len);
      Block next{};
      if (walks && !kStagedRows)
        load_block(r, seg_begin, seg_end - seg_begin < kBlock ? seg_end - seg_begin : kBlock, own, next);
      int buf = 0;
      for (int t0 = seg_begin; t0 < seg_end;) {
        const int t1 = t0 + p.time_tile < seg_end ? t0 + int(p.time_tile) : seg_end, len = t1 - t0;
        // this thread's states of step 0 of the tile (the shared-window pointer stays 32-bit;
        // direct_io 2: one thread a channel, its first state 0)
        const float* const B_tile = base + buf * s.buffer + s.B + first_state;
        const float* const C_tile = base + buf * s.buffer + s.C + first_state;
        dm::async_copy_wait<0>();
        team.team_barrier();  // tile t0's B and C have landed; every thread is done with the other buffer
        if (t1 < seg_end)
          issue_tile(team, full_walk, sp, base + (buf ^ 1) * s.buffer, w.b, w.g, d0, int(rows), t1,
                     int(min_index(p.time_tile, seg_end - t1)));
        float* const set = base + buf * s.buffer;
        ZAhead z_ahead{};
        if (kStagedRows && p.has_z && !kSummary) read_z_ahead(team, sp, w.b, d0, int(rows), t0, len, z_ahead);
        if (walks) {
          for (int k = 0; k < len; k += kBlock) {
            const int t = t0 + k, n = len - k < kBlock ? len - k : kBlock;
            Block cur = next;
            if constexpr (kStagedRows) {
              read_staged(set, row, k, cur);  // (a short block's missing steps: unused values)
            } else {
              // the next block's loads fly while this one computes (the tile's end does not stop them)
              const int t_next = k + kBlock < len ? t + kBlock : t1;
              if (t_next < seg_end) load_block(r, t_next, seg_end - t_next < kBlock ? seg_end - t_next : kBlock, own, next);
            }
            prepare(cur, bias, silu_gate);
            float dt[kBlock], x[kBlock];
            block_steps(team, swap_slots, part, cur, dt, x);
            save_chunk_state(w.b, d, first_state, active, t, h, next_save);
            float y[kBlock];
            const float* const Bk = B_tile + k * kStepStride;
            const float* const Ck = C_tile + k * kStepStride;
            // the block's largest |dt| decides whether any decay can leave the normal range
            // (almost never: then it keeps subnormals for the block); one test a block, so that the
            // walk of kBlock steps is one basic block for the scheduler (a test a half of 4 steps:
            // speed-notes §63)
            float dt_max = 0.0f;
            SCANLAB_UNROLL
            for (int j = 0; j < kBlock; ++j) dt_max = fmaxf(dt_max, fabsf(dt[j]));
            if (n == kBlock && next_save >= t + kBlock && exp2_products_stay_normal(dt_max, A2_max)) {
              walk_block<true>(Bk, Ck, x, dt, h, A2, decay, y);
            } else if constexpr (kRollRarePaths) {
              walk_steps_one_by_one(w.b, d, first_state, active, t, n, Bk, Ck, x, dt, h, A2, decay, y, next_save);
            } else if (n == kBlock && next_save >= t + kBlock) {
              walk_block<false>(Bk, Ck, x, dt, h, A2, decay, y);
            } else {  // a short block (the sequence's or a tile's end) or a chunk start inside it
              SCANLAB_UNROLL
              for (int j = 0; j < kBlock; ++j) {
                y[j] = 0.0f;
                if (j >= n) continue;
                save_chunk_state(w.b, d, first_state, active, t + j, h, next_save);
                const float x1[1] = {x[j]}, dt1[1] = {dt[j]};
                float y1[1];
                walk_steps<1, false>(Bk + j * kStepStride, Ck + j * kStepStride, x1, dt1, h, A2, decay, y1);
                y[j] = y1[0];
              }
            }
            if (kSummary) continue;  // no outputs: the segment's end state and decay product only
            float v[kOwn];
            finish(team, swap_slots, part, cur, x, D_d, y, v);
            if (kStagedRows) write_staged(set, row, k, v);
            else if (active) store(r, t, n, own, v);
          }
        }
        if (kStagedRows && !kSummary) {
          team.team_barrier();  // every row's outputs of the tile are in scratch
          store_staged_tile(team, sp, set, w.b, d0, int(rows), t0, len, z_ahead);
        }  // (the next tile's barrier orders these reads before the buffer is refilled)
        t0 = t1;
        buf ^= 1;
      }
      if (active) store_walk_end<kM>(p, kSummary, seg_end == L, w.b, segment, first_state, d, h, decay);
      team.team_barrier();  // every thread is done with the last tile before the next pass refills buffer 0
    }
  }
};

// "tiled"'s forward with direct_io: one thread per channel leaves the compiler every register
// (256 a thread; the anchor's 32768 channels are 8 warps an SM either way); two threads a channel
// take the staged forward's bound (128 registers: 16 warps an SM).
template <int kS>
using DirectForwardBounds = Kokkos::LaunchBounds<256, kS == 1 ? 1 : 2>;

// Whether every whole block (it starts on a 4-step boundary) can move in 16-byte accesses: seqlen
// contiguous and a multiple of 4, tiles of whole 4-step runs, every row start 16-byte aligned.
inline bool direct_vector_io(const Params& q) {
  const auto aligned = [](const float* at) { return (reinterpret_cast<std::uintptr_t>(at) & 15) == 0; };
  return q.st.seq_time == 1 && q.seqlen % 4 == 0 && q.time_tile % 4 == 0 && q.st.seq_dim % 4 == 0 &&
         q.st.seq_batch % 4 == 0 && aligned(q.u) && aligned(q.delta) && (q.z == nullptr || aligned(q.z)) &&
         aligned(q.out);
}

// direct_io's blocks of 4 steps used half of each 32-byte sector a block and the other half a
// block later, which Kokkos' default ~23 KB of L1 cannot keep for 8-16 warps (16-32 sectors a warp
// and tensor): the second half came from L2 again. With the carve-out fitted to its resident teams
// (fit_l1_carveout) the forward at (8,4096,16,2048) went from 0.964 to 0.713 ms with one thread a
// channel (reports/speed-notes.md §29).
template <class Space>
void forward_direct(const Params& q, const SelectiveScanConfig& c, const Space& space) {
  const index_t teams = q.batch * q.groups * q.fwd_tiles;
  auto launch = [&](auto dstate, auto split, auto sfu, auto vec, auto staged) {
    constexpr int kN = decltype(dstate)::value, kS = decltype(split)::value;
    constexpr bool kStaged = decltype(staged)::value;
    if constexpr (kN > 0 && kS <= 4 && kN % kS == 0 && (!kStaged || (kS == 1 && kN <= direct_staged_max_dstate))) {
      constexpr bool kSfu = decltype(sfu)::value, kVec = decltype(vec)::value;
      constexpr int kWarpsPerSm = kS == 1 ? 8 : 16;  // what DirectForwardBounds<kS> leaves room for
      auto run = [&](const char* label, index_t league, auto functor) {
        using Functor = decltype(functor);
        fit_l1_carveout<Functor, DirectForwardBounds<kS>, Space>(label, q.team_size, q.tiled_scratch.total,
                                                                 kWarpsPerSm, false);
        Kokkos::parallel_for(label, team_policy<Space, DirectForwardBounds<kS>>(space, league, q.team_size, 0,
                                                                                 q.tiled_scratch.total),
                             functor);
        fit_l1_carveout<Functor, DirectForwardBounds<kS>, Space>(label, q.team_size, q.tiled_scratch.total,
                                                                 kWarpsPerSm, true);
      };
      using Seg = TimeSegments;
      if (q.fwd_segments > 1) {  // every segment after the first needs its start state
        run(kStaged ? "scanlab::selective_scan_forward_direct_rows_segment_summary"
                    : "scanlab::selective_scan_forward_direct_segment_summary",
            teams * (q.fwd_segments - 1), ForwardDirect<Space, kN, kS, kSfu, kVec, Seg::summary, kStaged>{q});
        run(kStaged ? "scanlab::selective_scan_forward_direct_rows_segments" : "scanlab::selective_scan_forward_direct_segments",
            teams * q.fwd_segments, ForwardDirect<Space, kN, kS, kSfu, kVec, Seg::walk, kStaged>{q});
      } else {
        run(kStaged ? "scanlab::selective_scan_forward_tiled_direct_rows" : "scanlab::selective_scan_forward_tiled_direct",
            teams, ForwardDirect<Space, kN, kS, kSfu, kVec, Seg::whole, kStaged>{q});
      }
    } else {  // invalid_reason() refuses it first; a clear error all the same
      throw std::invalid_argument(
          "selective_scan direct_io: needs a state_split of 1, 2 or 4 dividing dstate_static (1 with direct_io 2, "
          "and dstate_static at most " + std::to_string(direct_staged_max_dstate) + ")");
    }
  };
  // direct_io 2 stages whole 16-byte runs and gates by silu alone: where the rows are not
  // (state_space_v1's time-major layout, seqlen not a multiple of 4) or the gate is another, it
  // runs as 1, the same results
  const bool vec = direct_vector_io(q);
  const bool staged = c.direct_io == 2 && vec && (!q.has_z || q.gate == GateActivation::silu);
  dispatch_dstate(c.dstate_static, [&](auto dstate) {
    dispatch_split<Space>(c.state_split, [&](auto split) {  // Serial: 1 only
      dispatch_flag(c.fast_activations, [&](auto sfu) {
        if (staged) {
          launch(dstate, split, sfu, std::true_type{}, std::true_type{});
        } else {
          dispatch_flag(vec, [&](auto v) { launch(dstate, split, sfu, v, std::false_type{}); });
        }
      });
    });
  });
}

}  // namespace detail

#define SCANLAB_SELECTIVE_SCAN_INSTANTIATE_DIRECT(SPACE) \
  template void detail::forward_direct<SPACE>(const detail::Params&, const SelectiveScanConfig&, const SPACE&);

}  // namespace scanlab::kernels
