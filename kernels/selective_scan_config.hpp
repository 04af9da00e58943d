// Configurations, the implementation registry and the host bridges of the selective_scan kernels
// (kernels/selective_scan.hpp). Nothing here includes Kokkos, so the CLI, the tuner, the
// benchmarks and the properties can name, validate, size and serialise configs cheaply.
//
// Every tunable a kernel has is a field of SelectiveScanConfig; no kernel hides a constant that
// changes its schedule. A config never changes the result beyond float32 rounding, and with a
// fixed config every backend is bitwise repeatable: no floating-point atomics, and every
// reduction runs in an order fixed by the config alone, never by thread counts or timing.
//
// Implementations (kernels/selective_scan.hpp):
//   "sequential": a thread owns one (b, d) channel at a time and walks time in order, all dstate
//                 states in registers (dstate_static) or team scratch (generic). Parallel over
//                 batch·dim only: the fast path when batch·dim is large.
//   "chunked":    parallel in time for small batch·dim: every chunk of chunk_len steps scans from
//                 a zero state (its end state and decay product Π exp(dt·A)), the carries are
//                 propagated across chunks in order per (b, d, n), and every chunk scans again
//                 from its true start state, writing the outputs.
//   "tiled":      the forward of "sequential" restructured for the GPU: a thread owns one channel
//                 with its states in registers (needs dstate_static and per-step B and C); the
//                 team's u, delta, z, B and C move through double-buffered team-scratch tiles
//                 that asynchronous copies fill one tile ahead (cp.async on CUDA), so every global
//                 load is coalesced and in flight while the previous tile computes; outputs leave
//                 through a scratch tile with coalesced stores; exp as exp2 of a log2(e)-scaled A.
//                 A channel's states may be split over state_split threads (each sums its states'
//                 share of y; the team adds the shares in a fixed order when it stores the tile).
//                 With direct_io, one or two threads per channel move their own u, delta, z and
//                 output between global memory and registers in blocks of 4 steps (16-byte
//                 accesses where seqlen is contiguous), and only B and C go through the team's
//                 tiles; two threads split the states and the block's per-step work (each
//                 prepares, gates and stores two of its steps) and swap dt and y's shares.
//                 Its backward walks the chunks in reverse the same way (one chunk per tile,
//                 chunk_len 8 or 16, one channel per thread): per state n, the chunk's forward is
//                 recomputed into registers from the saved chunk-start state, then its adjoint runs
//                 backwards; per-step dB and dC are summed over the team's threads in a fixed order
//                 through team scratch.
// The backward of all three recomputes the forward chunk by chunk from the chunk-start states the
// forward saved, and runs the reverse-time adjoint inside the chunk ("sequential", "tiled": one
// team walks the chunks in reverse; "chunked": chunk-local adjoints from zero, a reverse carry
// pass, then every chunk in parallel).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend.hpp"
#include "problem/selective_scan.hpp"
#include "problem/state_space_v1.hpp"
#include "tensor.hpp"

namespace scanlab::kernels {

struct SelectiveScanConfig {
  std::string impl = "sequential";  // a name from selective_scan_implementations()
  int dstate_static = 0;       // compile-time dstate (1, 2, 4, 8, 16, 32 or 64; must equal the
                               // problem's) keeping the states in registers; 0: the generic
                               // runtime-dstate path, states in team scratch
  int channels_per_team = 16;  // forward: channels of one group per team; per-step B and C are
                               // staged once per team and shared by these channels ("tiled":
                               // the team stages team_size channels at a time)
  int team_size = 1;           // forward: threads per team, each owning channels_per_team /
                               // team_size channels in turn (must divide channels_per_team)
  int time_tile = 32;          // forward: time steps of per-step B and C staged per barrier
                               // ("tiled": of every input, per buffer)
  int stage_io = 0;            // forward: 1 loads u, delta, z of a time tile into team scratch
                               // with coalesced team loads and stores out the same way; 0 lets
                               // each thread load its own channel's steps directly ("tiled"
                               // always stages: 0)
  int chunk_len = 32;          // time steps per chunk: the backward's recompute unit (it saves
                               // the state at every chunk start) and "chunked"'s parallel unit
  int bwd_channels_per_team = 16;  // backward: channels per team; per-step dB and dC are summed
                                   // over them in the team, then over teams in a second kernel
  int bwd_team_size = 1;           // backward: threads per team (must divide bwd_channels_per_team)
  int scratch_level = 0;       // Kokkos team-scratch level: 0 (on-chip on CUDA, small) or 1
                               // (global memory, large)
  int state_split = 1;         // "tiled" forward: threads per channel (1, 2 or 4), each holding
                               // dstate / state_split of its states, so a team of team_size
                               // threads runs team_size / state_split channels at a time (more
                               // warps for the same channels); 1 for the other implementations
  int bwd_state_split = 1;     // "tiled" backward likewise: threads per channel (1, 2 or 4), so
                               // a team of bwd_team_size threads runs bwd_team_size /
                               // bwd_state_split = bwd_channels_per_team channels
  int bwd_state_interleave = 1;  // "tiled" backward with bwd_state_split 1 at chunk_len 8: states
                                 // a thread walks together (1, 2 or 4; must divide dstate), their
                                 // independent chains interleaved; 1 otherwise
  int bwd_stage_inputs = 0;    // "tiled" backward with bwd_state_interleave 2: 1 has each thread
                               // copy its channel's next chunk of u, delta, dout and z into team
                               // scratch asynchronously (with the chunk's B and C), and its next
                               // chunk-start states during a chunk's end phase, so the chunk waits
                               // on no global load and its end re-reads scratch; 10 KB more a team
                               // of 32 at dstate 16; 0 loads them straight into registers
  int bwd_normal_loop = 0;     // "tiled" backward at bwd_state_interleave 2, unstaged, in teams of 32
                               // channels: 1 runs a kernel whose state loop is compiled for chunks
                               // whose decays all stay normal (a warp's vote; other chunks take the
                               // generic loop), its exps unbranched; 0 the loop that branches on it
  int fast_activations = 0;    // "tiled": 1 computes softplus and silu's σ with one MUFU.EX2 each
                               // (the rest on the FMA pipe, sfu.hpp) instead of the library's
                               // expf, log1pf and division; compiled into the kernels, not a
                               // run-time branch; 0 for the other implementations
  int bwd_summary_blocks = 1;  // "tiled" backward in time segments: the summary pass splits each
                               // segment it summarizes into up to this many blocks of whole chunks,
                               // run side by side (the walk folds their summaries in order); no
                               // effect without time segments
  int bwd_time_segments = 1;   // "tiled" backward: time segments run in parallel (a summary pass
                               // first gives each segment its end adjoint), for problems with too
                               // few channels to fill the device; 1 walks all chunks in one team,
                               // and 1 for the other implementations
  int fwd_time_segments = 1;   // "tiled" forward likewise: time segments of whole tiles and chunks
                               // run in parallel, each from its start state (a summary pass
                               // first); 1 for the other implementations
  int direct_io = 0;           // "tiled" forward: 1 has each thread (one, two or four per channel:
                               // state_split 1, 2 or 4; in time segments too) read its channel's
                               // u, delta, z straight into registers in 8-step blocks (4 at
                               // dstate 64) and write its
                               // outputs the same way, only per-step B and C passing through team
                               // tiles; 0 moves every input and the output through team tiles;
                               // 2 (state_split 1): the team copies its channels' rows of u and raw
                               // delta for each tile into team scratch (16-byte asynchronous copies,
                               // consecutive threads along a row), each thread walks its row there
                               // and writes y + D·u over the delta it has read, and the team stores
                               // the tile's outputs along the rows, gated by z it read as the tile
                               // began (where rows are not whole 16-byte runs, as 1); 0 for the
                               // other implementations

  // Empty when this config can run the problem on the backend, else why not (one reason per
  // line). Host limits come from the running Kokkos (OpenMP team size <= its threads).
  std::string invalid_reason(const SelectiveScanProblem& p, BackendKind backend) const;
  nlohmann::json to_json() const;
  // Fields missing from j keep their defaults above; an unknown field or a wrong type or value
  // throws std::invalid_argument naming it.
  static SelectiveScanConfig from_json(const nlohmann::json& j);
  bool operator==(const SelectiveScanConfig& o) const { return to_json() == o.to_json(); }
  bool operator!=(const SelectiveScanConfig& o) const { return !(*this == o); }
};

std::vector<std::string> selective_scan_implementations();  // {"sequential", "chunked", "tiled"}
std::vector<std::string> selective_scan_config_fields();     // "name: one-line meaning", per field
std::vector<int> selective_scan_static_dstates();            // {1, 2, 4, 8, 16, 32, 64}

// The default without measuring (the rule; selective_scan_config.cpp has the constants):
//   dstate_static = dstate when it is one of the specialisations, else 0 (registers beat
//         scratch even where 32 and 64 spill on sm_90).
//   cuda (cpg↑: channels per group rounded up to a power of two; one channel per thread):
//     a compile-time dstate and per-step B and C, with batch·dim >= 16384 independent channels,
//         or >= 1024 where dstate % 4 == 0 (time segments; 3.7-4.9x chunked's fwd+bwd at
//         1024-8192 channels, 2026-12-02-s13/few-channels-and-bwd-dstate/):
//         "tiled", teams of min(32, cpg↑) channels, two threads per channel (state_split 2
//         where dstate allows; 4 at batch·dim <= 16384 where dstate allows), time_tile 16 (8 at
//         dstate 64), backward teams of min(32, cpg↑) channels, two threads per channel
//         (bwd_state_split 2; 4 likewise; 1 at dstate >= 32 with more than 16384 channels:
//         0.83x / 0.90x split 2's backward time at dstate 32 / 64, 2026-12-02-s13/), walking
//         two states at once (bwd_state_interleave 2; so too at dstate 16 with more than 16384
//         channels, 2026-12-03-s18/ and 2026-12-04-s19/call3/, and at dstate 16 with 16384
//         channels or fewer in time segments filling one wave of 8 warps an SM:
//         2026-12-03-s18/, 2026-12-05-s25/call2/), at dstate 16 with each chunk's inputs
//         copied into scratch a chunk ahead (bwd_stage_inputs 1: 1.11-1.13x the backward's
//         speed without segments, 2026-12-05-s25/call1/); where four threads per channel still fill less than
//         3/4 of concurrency / 4 (what the 128-register cap keeps resident: batch·dim = 8192 on
//         the H200), two threads per channel and both passes in min(16, ⌊concurrency / 4 /
//         (2·batch·dim)⌋) time segments (fwd_time_segments, bwd_time_segments; the forward at
//         dstate 16 only below 3/8 of it, batch·dim < 6336: at 8192 four threads per channel
//         without segments were 1.11x faster on an H100, 2026-12-07-s44/s44a/); chunk_len 8 (the side-by-side H200 runs in
//         reports/results/h200/2026-11-29-s3-speed/; for the forward split, 2026-11-30-s4/fix/:
//         split 2 beat 1 and 4 at the anchor, 1.33 against 1.92 and 2.04 ms; for the backward's,
//         2026-11-30-s5/ bwd-split/ against direct-io/, two calls: 5.62 against 6.52 ms),
//         fast_activations 1 (the SFU forms: 0.88-0.94x the library forms' time on the
//         dstate-16 shapes, a tie at 64: 2026-12-01-s9/); where the forward runs without time
//         segments from dstate 16 (or with four threads per channel), direct_io instead (B and
//         C tiles of 32 steps; one thread per channel, teams of min(128, cpg↑), or at dstate 16
//         where one thread a channel fills fewer than 7 warps an SM two, teams of 64 threads
//         and 32 channels: 2026-12-03-s17/call2/); so too at dstate 16 in time segments (two
//         threads a channel, the same segments: 2026-12-04-s20/call1/);
//     otherwise with a backward: "chunked", forward teams of min(128, cpg↑), backward teams of
//         min(64, cpg↑), chunk_len 8;
//     otherwise forward only, batch·dim >= 16384: "sequential", teams of min(64, cpg↑);
//     otherwise forward only: "chunked", teams of min(64, cpg↑), chunk_len the power of two
//         in [16, 128] nearest below batch·dim·seqlen / 2^18, so that about 2^18 (b, d, chunk)
//         threads (132 SMs × 2048) are in flight;
//     time_tile 32, stage_io 0 (staging measured slower).
//   host: teams of one thread owning min(16, cpg) channels, time_tile 64, chunk_len 32;
//         "sequential" unless batch·dim / 16 teams would leave some of the backend's threads
//         idle and seqlen >= 4·chunk_len, then "chunked".
//   Then, until every kernel's scratch fits on chip: time_tile halves (to 8), the forward team
//   halves (to 32 threads on cuda), chunk_len halves (to 8), the backward team halves; else
//   scratch_level 1.
// With `impl` named, the same rule for that implementation (the team shape and chunk it needs).
SelectiveScanConfig selective_scan_heuristic_config(const SelectiveScanProblem& p, BackendKind backend,
                                                    const std::string& impl = "");
// Valid configs worth timing, the heuristic first, no duplicates; at least 8 on big GPU shapes.
std::vector<SelectiveScanConfig> selective_scan_candidate_configs(const SelectiveScanProblem& p,
                                                                  BackendKind backend);

// How the (b, d, t) and B/C tensors lie in memory. selective_scan: u, delta, z, out (B,D,L) and
// B, C (B,G,N,L). state_space_v1: hidden_states, dt, gate, out (b,L,D) and B, C (b,L,N).
enum class SequenceLayout { batch_dim_seqlen, batch_seqlen_dim };

// Element strides of every tensor the kernels touch (gradients share their input's strides).
// B and C (and dB, dC) are addressed as b·batch + g·group + d·dim + n·state + t·time: per-step
// tensors have dim = 0, time-invariant (D,N) ones batch = group = time = 0, so one formula
// covers both.
struct SelectiveScanStrides {
  std::int64_t seq_batch = 0, seq_dim = 0, seq_time = 0;
  std::int64_t B_batch = 0, B_group = 0, B_dim = 0, B_state = 0, B_time = 0;
  std::int64_t C_batch = 0, C_group = 0, C_dim = 0, C_state = 0, C_time = 0;
  std::int64_t state_batch = 0, state_dim = 0, state_state = 0;  // initial/last state (B,D,N)
};
SelectiveScanStrides selective_scan_strides(const SelectiveScanProblem& p, SequenceLayout layout);

// Team-scratch layouts of the kernels, in floats from the start of a team's scratch; -1 marks
// an absent array. The kernels and invalid_reason() both use these, so what is checked is
// what is allocated.
namespace detail {
std::int64_t ceil_div(std::int64_t a, std::int64_t b);
// The lengths the kernels run with: a chunk no longer than seqlen, a tile no longer than a chunk
// (longer settings schedule the same work, so they are clamped rather than refused).
std::int64_t effective_chunk_len(const SelectiveScanProblem& p, const SelectiveScanConfig& c);
std::int64_t effective_time_tile(const SelectiveScanProblem& p, const SelectiveScanConfig& c);

// B and C go through scratch whether per-step or not, so the inner loop has one form and no
// branch: per-step ones as a time tile [n][k] shared by the team, time-invariant ones as one
// column per thread [n][thread] holding its channel's row (loaded once per channel; kept out of
// registers, where the compiler would otherwise hoist 2·dstate loop-invariant loads).
// With stage_io, the per-step inputs and the output of the threads' channels also pass through
// scratch, one row per thread, [thread][k] with row stride time_tile + 1 (so a warp's threads hit distinct
// banks): the team loads and stores them with consecutive threads on consecutive addresses of
// the tensor (along seqlen or along dim, whichever the layout makes contiguous).
struct ForwardScratch {  // the forward scans (all modes) and "chunked"'s chunk-local pass
  std::int64_t stage_B = -1, stage_C = -1;       // [n][k] per-step, [n][thread] time-invariant
  std::int64_t state = -1, A = -1, decay = -1;  // generic dstate: [n][thread]
  std::int64_t io_u = -1, io_dt = -1, io_gate = -1, io_out = -1;  // [thread][k]: u, dt, act(z), out
  std::int64_t total = 0;
};
// "tiled"'s forward's double-buffered input tiles, buffer 0's offsets; buffer 1 is `buffer`
// floats further. u, raw delta and z as [row][k], row stride `row` = the tile rounded up to 4,
// plus 4 (16-byte aligned rows whose float4 reads by consecutive threads fall on distinct banks);
// B and C step-major, [k][n], step stride tiled_forward_bc_step(dstate) (a thread reads its
// consecutive states of a step with 16-byte reads; the kernel compiles the stride in, so it is not
// a field here).
struct TileBuffers {
  std::int64_t row = 0, buffer = 0;
  std::int64_t u = -1, dt = -1, z = -1, B = -1, C = -1;
};
// dstate rounded up to 4, plus 4: 16-byte aligned steps, and the copy-in's consecutive steps of one
// state two to a bank instead of all on one or two.
constexpr std::int64_t tiled_forward_bc_step(std::int64_t dstate) { return (dstate + 3) / 4 * 4 + 4; }
// direct_io's team-scratch floats a thread for the exchange between a channel's threads: two swap a
// block's four dt and four u (the host's swap_with_partner; warp shuffles on CUDA), four exchange
// their two dt, two u and then the y shares of the block's 8 steps (ForwardDirect's kExchangeRow);
// one exchanges nothing. The layout (tiled_scratch) and the kernel both read it from here.
constexpr std::int64_t direct_exchange_floats(std::int64_t state_split) {
  return state_split == 4 ? 12 : state_split == 2 ? 8 : 0;
}
// direct_io 2's row stride: a tile's steps rounded up to 32 floats, so that swizzling a row's
// 16-byte pieces within groups of 8 (ForwardDirect::staged_at) stays inside the row.
constexpr std::int64_t direct_staged_row_stride(std::int64_t time_tile) { return (time_tile + 31) / 32 * 32; }
// direct_io 2's B and C tiles: [n][k] rows of this many steps (a compile-time stride in the kernel,
// so a state's 4 steps are one 16-byte read at an immediate offset); its tiles are at most as long.
constexpr int direct_staged_bc_row = 32;
// The widest dstate_static direct_io 2 is compiled for: at 64 its B and C rows (32 steps of 64
// states, 16 KB) and a warp's rows of u and delta pass the 40 KB of team scratch Kokkos 3.4 gives a
// team on CUDA, so those instantiations (a quarter of its code) could never run there.
constexpr int direct_staged_max_dstate = 32;
// "tiled"'s forward: the input buffers (team_size / state_split rows) and one tile [thread][k]
// of the threads' shares of y (row stride in.row). The base is aligned to 16 bytes inside the
// request (`total` includes the slack).
struct TiledScratch {
  TileBuffers in;
  std::int64_t out = -1;
  std::int64_t total = 0;
};
// "tiled"'s backward: double-buffered per-step B and C tiles [n][k] (row stride bc_row, buffer 1
// at bc_buffer); per thread and owned state i (state part + split·i) the carried adjoint and dA
// sum ([i][thread]); two blocks of one state-iteration's per-step dB, dC contributions for the
// fixed-order team sum (alternating by iteration): [part][column][row] with column (dB|dC, k)
// over the config's chunk_len (which the kernel is compiled for) and row stride contrib_row = the
// team's channels rounded up to 4, plus 4 (a thread sums a column with 16-byte reads; consecutive
// columns on distinct banks); with a state split, each thread's shares of the chunk's du, ddt
// and y ([thread][du | ddt | y][k], row stride shares_row), summed in part order. A channel's own
// inputs and gradients do not pass through scratch: its threads read and write its chunk directly.
struct TiledBackwardScratch {
  std::int64_t bc_row = 0, B = -1, C = -1, bc_buffer = 0;
  std::int64_t inputs = -1, inputs_tensor = 0;  // bwd_stage_inputs, in each buffer: [tensor][row][chunk]
  std::int64_t states = -1;  // bwd_stage_inputs: the chunk-start states, one buffer, [n][thread]
  std::int64_t adjoint = -1, dA = -1, contrib = -1, contrib_row = 0, contrib_block = 0;
  std::int64_t shares = -1, shares_row = 0;
  std::int64_t total = 0;
  std::int64_t summary_total = 0;  // the summary pass's: the buffers, adjoint and dA (a prefix of the layout)
};
struct AdjointScratch {  // "chunked"'s chunk-local reverse adjoint
  std::int64_t stage_C = -1;         // [n][k] per-step, [n][thread] time-invariant
  std::int64_t adjoint = -1, A = -1;  // generic dstate: [n][thread]
  std::int64_t total = 0;
};
struct BackwardScratch {  // the chunk backward, both implementations
  std::int64_t stage_B = -1, stage_C = -1;  // per-step B, C of the whole chunk: [n][k]
  // per channel and step of the chunk: [k][channel], row stride bwd_channels_per_team + 1 (the
  // team loads and stores them coalesced along the tensor, the threads read them by channel;
  // the odd stride keeps both conflict-free)
  std::int64_t u = -1, dt = -1, slope = -1, dy = -1, dz_factor = -1, du = -1, ddt = -1, y = -1, h = -1, decay = -1;
  // per channel and state: [n][channel]
  std::int64_t adjoint = -1, dA = -1, dB = -1, dC = -1;  // dB, dC: time-invariant only
  std::int64_t dD = -1, ddelta_bias = -1;                // per channel: [channel]
  std::int64_t contrib_B = -1, contrib_C = -1;           // per-step dB, dC: [thread][k]
  std::int64_t total = 0;
};
// Bytes of team scratch a kernel asks Kokkos for: its floats rounded up to 64 bytes, because
// Kokkos rounds every scratch request up to its alignment and returns nullptr past the end.
std::int64_t scratch_request_bytes(std::int64_t floats);
ForwardScratch forward_scratch(const SelectiveScanProblem& p, const SelectiveScanConfig& c);
TiledScratch tiled_scratch(const SelectiveScanProblem& p, const SelectiveScanConfig& c);
// Floats of team scratch the config's forward kernel asks for ("tiled"'s or the others').
std::int64_t forward_scratch_floats(const SelectiveScanProblem& p, const SelectiveScanConfig& c);
AdjointScratch adjoint_scratch(const SelectiveScanProblem& p, const SelectiveScanConfig& c);
BackwardScratch backward_scratch(const SelectiveScanProblem& p, const SelectiveScanConfig& c);
TiledBackwardScratch tiled_backward_scratch(const SelectiveScanProblem& p, const SelectiveScanConfig& c);
// Floats of team scratch the config's backward kernel asks for (the largest of its kernels).
std::int64_t backward_scratch_floats(const SelectiveScanProblem& p, const SelectiveScanConfig& c);
}  // namespace detail

// The device workspace beside the inputs, outputs and gradients, in floats (offsets into one
// allocation; -1 marks an absent buffer). S = ⌈seqlen / chunk_len⌉ chunks.
//   chunk_states    (B, S, N, D)  state at every chunk start (h_{-1} for chunk 0): written by
//                   the forward, read by the backward ("sequential": only with a backward)
//   chunk_local     (B, S, N, D)  "chunked": a chunk's end state from zero (forward), then its
//                   start adjoint from zero, overwritten by the end adjoint (backward)
//   chunk_decay     (B, S, N, D)  "chunked": Π exp(dt·A) over the chunk; kept for the backward
//   segment_adjoint (B, P·Q, N, D)  "tiled" with time segments: a summary block's start adjoint
//                   from zero at its end, Q blocks a segment (bwd_summary_blocks; segment 0's unused)
//   segment_decay   (B, P·Q, N, D)  likewise: Π exp(dt·A) over the block
//   segment_state, segment_state_decay   (B, F, N, D)  "tiled"'s forward in F time segments: a
//                   segment's end state from zero, and Π exp(dt·A) over it
//   part_dA, part_dB_channel, part_dC_channel   (B, P, N, D)  per-channel partial sums over time
//                   (dA; time-invariant dB, dC), P = 1 ("sequential"), S ("chunked") or the time
//                   segments ("tiled": ⌈S / ⌈S / bwd_time_segments⌉⌉ segments of whole chunks)
//   part_dD, part_ddelta_bias                   (B, P, D)
//   part_dB_step, part_dC_step   (B, G, T, N, L)  per-step dB, dC summed over each backward
//                   team's channels, T = ⌈(D/G) / bwd_channels_per_team⌉ teams per group; absent
//                   when T = 1 (the team sum is written to dB directly)
// Total O(B·D·N·L / chunk_len); nothing of size B·D·N·L.
struct SelectiveScanWorkspaceLayout {
  std::int64_t num_chunks = 0, channel_segments = 0, bwd_tiles = 0;
  std::int64_t time_segments = 1, chunks_per_segment = 1;  // "tiled"'s backward; 1 and num_chunks otherwise
  std::int64_t summary_blocks = 1, chunks_per_summary_block = 1;  // its summary pass's blocks of a segment
  std::int64_t fwd_segments = 1, fwd_segment_len = 0;     // "tiled"'s forward: segments of fwd_segment_len steps
  std::int64_t segment_state = -1, segment_state_decay = -1;
  std::int64_t chunk_states = -1, chunk_local = -1, chunk_decay = -1, segment_adjoint = -1, segment_decay = -1;
  std::int64_t part_dA = -1, part_dB_channel = -1, part_dC_channel = -1, part_dD = -1, part_ddelta_bias = -1;
  std::int64_t part_dB_step = -1, part_dC_step = -1;
  std::int64_t total_floats = 0;
  std::int64_t bytes() const { return total_floats * 4; }
};
SelectiveScanWorkspaceLayout selective_scan_workspace_layout(const SelectiveScanProblem& p,
                                                             const SelectiveScanConfig& c);
// Device bytes of workspace for the problem (its with_backward decides whether the backward's
// buffers are included). Sweeps add it to the tensors' bytes for peak device memory.
std::int64_t selective_scan_workspace_bytes(const SelectiveScanProblem& p, const SelectiveScanConfig& c);
// Modelled global-memory traffic beyond SelectiveScanProblem::bytes_moved(pass): workspace
// written and read again, and inputs re-read by later stages (formula in the .cpp).
double selective_scan_extra_bytes(const SelectiveScanProblem& p, const SelectiveScanConfig& c, Pass pass);

// What the backend's Kokkos space allows a team: the largest team size the kernels will launch
// (CUDA: 256, so that any register count up to 255 fits one block; OpenMP: its thread count;
// Serial: 1), team scratch bytes per level, and the threads that run at once. Defined with the
// kernels (it asks the running Kokkos); `compiled` is false when the space is not in this binary
// (CUDA's nominal limits are returned then, so configs can still be checked on a CPU build).
// Level 1's total is capped too: Kokkos allocates it for every team that can be resident (CUDA:
// concurrency / team size; a host thread holds a team's) and keeps it, so the cap is half the
// memory that holds it (the device's, or the host's RAM), leaving the rest for the tensors.
struct KernelBackendLimits {
  bool compiled = false;
  int max_team_size = 1;
  std::int64_t max_scratch_bytes[2] = {0, 0};
  std::int64_t concurrency = 1;
  std::int64_t memory_bytes = 0;  // the memory level-1 scratch lives in
  std::int64_t level1_scratch_total_max_bytes() const { return memory_bytes / 2; }
};
KernelBackendLimits selective_scan_backend_limits(BackendKind backend);

// Host bridges: float64 host tensors → float32 device Views, every output and gradient poisoned
// with NaN first, the forward (and the backward when p.with_backward) run, device errors
// checked, results copied back as float64. They return exactly the tensors the oracle returns
// (reference/selective_scan.hpp, reference/state_space_v1.hpp); gradients take their input's
// shape. An invalid config throws std::invalid_argument with invalid_reason().
// run_state_space_v1 runs the same kernels on ejkernel's (b,L,D) layout through strides; its
// config is validated against p.as_selective_scan().
TensorMap run_selective_scan(const SelectiveScanProblem& p, const TensorMap& inputs, BackendKind backend,
                             const SelectiveScanConfig& config);
TensorMap run_state_space_v1(const StateSpaceV1Problem& p, const TensorMap& inputs, BackendKind backend,
                             const SelectiveScanConfig& config);

}  // namespace scanlab::kernels
