#include "selective_scan_config.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace scanlab::kernels {
namespace detail {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t scratch_request_bytes(std::int64_t floats) { return (floats * 4 + 63) / 64 * 64; }

std::int64_t effective_chunk_len(const SelectiveScanProblem& p, const SelectiveScanConfig& c) {
  return std::min<std::int64_t>(c.chunk_len, p.seqlen);
}

// "tiled" saves the chunk-start states inside a tile, so its tiles are not clipped to a chunk
// (until session 5 they were: the heuristic's time_tile 16 ran as 8 beside chunk_len 8); the
// other forwards keep tiles within chunks.
std::int64_t effective_time_tile(const SelectiveScanProblem& p, const SelectiveScanConfig& c) {
  if (c.impl == "tiled") return std::min<std::int64_t>(c.time_tile, p.seqlen);
  return std::min<std::int64_t>(c.time_tile, effective_chunk_len(p, c));
}

namespace {
// Appends an array of `count` floats at `offset`, returning where it starts.
std::int64_t take(std::int64_t& offset, std::int64_t count) {
  const std::int64_t start = offset;
  offset += count;
  return start;
}
}  // namespace

ForwardScratch forward_scratch(const SelectiveScanProblem& p, const SelectiveScanConfig& c) {
  ForwardScratch s;
  std::int64_t off = 0;
  const std::int64_t N = p.dstate, tile = effective_time_tile(p, c);
  s.stage_B = take(off, N * (p.B_per_step ? tile : c.team_size));
  s.stage_C = take(off, N * (p.C_per_step ? tile : c.team_size));
  if (c.dstate_static == 0) {
    s.state = take(off, N * c.team_size);
    s.A = take(off, N * c.team_size);
    s.decay = take(off, N * c.team_size);
  }
  if (c.stage_io) {
    const std::int64_t io = c.team_size * (tile + 1);
    s.io_u = take(off, io);
    s.io_dt = take(off, io);
    if (p.has_z) s.io_gate = take(off, io);
    s.io_out = take(off, io);
  }
  s.total = off;
  return s;
}

// Both buffers of "tiled"'s input tiles for `rows` channels and tiles of `len` steps, from `off`.
// staged_rows (direct_io 2): u and raw delta only, rows of the tile rounded up to 32 steps and
// swizzled instead of padded (direct_staged_row_stride); B and C room for [n][k] rows of
// direct_staged_bc_row steps.
static TileBuffers take_tile_buffers(std::int64_t& off, const SelectiveScanProblem& p, std::int64_t rows,
                                     std::int64_t len, bool staged_rows = false) {
  TileBuffers t;
  const std::int64_t len4 = (len + 3) / 4 * 4, start = off;
  t.row = staged_rows ? direct_staged_row_stride(len) : len4 + 4;
  const std::int64_t bc_step = tiled_forward_bc_step(p.dstate);
  t.u = take(off, rows * t.row);
  t.dt = take(off, rows * t.row);
  if (p.has_z && !staged_rows) t.z = take(off, rows * t.row);
  // (staged_rows: either layout, since direct_io 2 runs as 1 where rows are not whole 16-byte runs)
  const std::int64_t bc_floats = staged_rows ? std::max(p.dstate * direct_staged_bc_row, len4 * bc_step) : len4 * bc_step;
  t.B = take(off, bc_floats);
  t.C = take(off, bc_floats);
  t.buffer = off - start;
  off += t.buffer;  // buffer 1
  return t;
}

TiledScratch tiled_scratch(const SelectiveScanProblem& p, const SelectiveScanConfig& c) {
  TiledScratch s;
  std::int64_t off = 0;
  const std::int64_t split = std::max(1, c.state_split);
  // direct_io 1: B and C only (each thread moves its channel's inputs and output in registers),
  // and with two or four threads a channel their exchange (direct_exchange_floats), 16-byte aligned;
  // direct_io 2: the team's rows of u and raw delta too (one thread a channel)
  const std::int64_t rows = c.direct_io == 1 ? 0 : c.team_size / split;
  s.in = take_tile_buffers(off, p, rows, effective_time_tile(p, c), c.direct_io == 2);
  if (!c.direct_io) {
    s.out = take(off, c.team_size * s.in.row);
  } else if (split > 1) {
    off = (off + 3) / 4 * 4;
    s.out = take(off, c.team_size * direct_exchange_floats(split));
  }
  s.total = off + 4;  // slack for aligning the base to 16 bytes
  return s;
}

std::int64_t forward_scratch_floats(const SelectiveScanProblem& p, const SelectiveScanConfig& c) {
  return c.impl == "tiled" ? tiled_scratch(p, c).total : forward_scratch(p, c).total;
}

TiledBackwardScratch tiled_backward_scratch(const SelectiveScanProblem& p, const SelectiveScanConfig& c) {
  TiledBackwardScratch s;
  const std::int64_t threads = c.bwd_team_size, split = std::max(1, c.bwd_state_split), rows = threads / split;
  // Rows hold the kernel's compile-time chunk (config chunk_len), not the clamped one: the kernel
  // reads every row's kK steps (the missing ones zero-filled).
  const std::int64_t len4 = (std::max<std::int64_t>(effective_chunk_len(p, c), c.chunk_len) + 3) / 4 * 4;
  std::int64_t off = 0;
  s.bc_row = len4 + 4;
  s.B = take(off, p.dstate * s.bc_row);
  s.C = take(off, p.dstate * s.bc_row);
  if (c.bwd_stage_inputs == 1) {  // u, delta, dout, z: a row of the compile-time chunk per channel
    off = (off + 3) / 4 * 4;       // 16-byte copies
    s.inputs_tensor = rows * std::int64_t(c.chunk_len);
    s.inputs = take(off, 4 * s.inputs_tensor);
  }
  s.bc_buffer = off;
  off += s.bc_buffer;  // buffer 1
  s.adjoint = take(off, p.dstate / split * threads);
  s.dA = take(off, p.dstate / split * threads);
  s.summary_total = off + 4;  // the summary pass reads no further (more of its teams fit an SM)
  // One buffer, not two: a thread copies its own column for the next chunk once its state loop
  // has read this one's (2 KB a team of 32 at dstate 16; a second buffer would cost the eighth team)
  if (c.bwd_stage_inputs == 1) s.states = take(off, p.dstate * threads);
  off = (off + 3) / 4 * 4;  // the contribution blocks are read 16 bytes at a time
  s.contrib_row = (rows + 3) / 4 * 4 + 4;
  // One state per block: two (one barrier per pair) left room for seven teams of 32 per SM at
  // dstate 16 instead of eight, so 32768 channels ran in a second wave on the H200 (16.2 against
  // 11.1 ms, reports/results/h200/2026-11-30-s4/probe/; ncu's shared-memory block limit 7).
  // The kernel's compile-time chunk, not the clamped one.
  s.contrib_block = split * std::max(1, c.bwd_state_interleave) * 2 * std::int64_t(c.chunk_len) * s.contrib_row;
  s.contrib = take(off, 2 * s.contrib_block);
  if (split > 1) {
    s.shares_row = 3 * std::int64_t(c.chunk_len) + 4;
    s.shares = take(off, threads * s.shares_row);
  }
  s.total = off + 4;  // slack for aligning the base to 16 bytes
  return s;
}

std::int64_t backward_scratch_floats(const SelectiveScanProblem& p, const SelectiveScanConfig& c) {
  if (c.impl == "tiled") return tiled_backward_scratch(p, c).total;
  std::int64_t floats = backward_scratch(p, c).total;
  if (c.impl == "chunked") floats = std::max(floats, adjoint_scratch(p, c).total);
  return floats;
}

AdjointScratch adjoint_scratch(const SelectiveScanProblem& p, const SelectiveScanConfig& c) {
  AdjointScratch s;
  std::int64_t off = 0;
  const std::int64_t N = p.dstate;
  s.stage_C = take(off, N * (p.C_per_step ? effective_time_tile(p, c) : c.bwd_team_size));
  if (c.dstate_static == 0) {
    s.adjoint = take(off, N * c.bwd_team_size);
    s.A = take(off, N * c.bwd_team_size);
  }
  s.total = off;
  return s;
}

BackwardScratch backward_scratch(const SelectiveScanProblem& p, const SelectiveScanConfig& c) {
  BackwardScratch s;
  std::int64_t off = 0;
  const std::int64_t N = p.dstate, K = effective_chunk_len(p, c), channels = c.bwd_channels_per_team;
  const std::int64_t per_step = K * (channels + 1);
  if (p.B_per_step) s.stage_B = take(off, N * K);
  if (p.C_per_step) s.stage_C = take(off, N * K);
  s.u = take(off, per_step);
  s.dt = take(off, per_step);
  if (p.delta_softplus) s.slope = take(off, per_step);
  s.dy = take(off, per_step);
  if (p.has_z) s.dz_factor = take(off, per_step);
  s.du = take(off, per_step);
  s.ddt = take(off, per_step);
  if (p.has_z) s.y = take(off, per_step);
  s.h = take(off, per_step);
  s.decay = take(off, per_step);
  s.adjoint = take(off, N * channels);
  s.dA = take(off, N * channels);
  if (!p.B_per_step) s.dB = take(off, N * channels);
  if (!p.C_per_step) s.dC = take(off, N * channels);
  if (p.has_D) s.dD = take(off, channels);
  if (p.has_delta_bias) s.ddelta_bias = take(off, channels);
  if (p.B_per_step) s.contrib_B = take(off, c.bwd_team_size * K);
  if (p.C_per_step) s.contrib_C = take(off, c.bwd_team_size * K);
  s.total = off;
  return s;
}

}  // namespace detail

using detail::ceil_div;

namespace {

const std::vector<int>& static_dstates() {
  static const std::vector<int> values{1, 2, 4, 8, 16, 32, 64};
  return values;
}

bool is_chunked(const SelectiveScanConfig& c) { return c.impl == "chunked"; }

std::int64_t pow2_ceil(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

std::int64_t pow2_floor(std::int64_t x) {
  std::int64_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

// Products of sizes in double first: a layout past 2^59 floats is refused before int64 math.
double product(std::initializer_list<std::int64_t> factors) {
  double r = 1;
  for (auto f : factors) r *= double(f);
  return r;
}

// The widest launch of each pass: "tiled"'s time segments (w's, 1 otherwise) multiply its teams.
std::int64_t forward_league(const SelectiveScanProblem& p, const SelectiveScanConfig& c,
                            const SelectiveScanWorkspaceLayout& w) {
  const std::int64_t tiles = ceil_div(p.channels_per_group(), c.channels_per_team);
  return p.batch * p.groups * tiles * (is_chunked(c) ? ceil_div(p.seqlen, c.chunk_len) : w.fwd_segments);
}

std::int64_t backward_league(const SelectiveScanProblem& p, const SelectiveScanConfig& c,
                             const SelectiveScanWorkspaceLayout& w) {
  const std::int64_t tiles = ceil_div(p.channels_per_group(), c.bwd_channels_per_team);
  return p.batch * p.groups * tiles * (is_chunked(c) ? ceil_div(p.seqlen, c.chunk_len) : w.time_segments);
}

// `total` in at most `asked` segments of whole `unit`s, as even as they go (asking for more than
// there are units gives one unit each): the segment length and the segment count.
std::pair<std::int64_t, std::int64_t> whole_unit_segments(std::int64_t total, std::int64_t asked, std::int64_t unit) {
  const std::int64_t len = ceil_div(ceil_div(total, asked), unit) * unit;
  return {len, ceil_div(total, len)};
}

}  // namespace

std::vector<int> selective_scan_static_dstates() { return static_dstates(); }

std::vector<std::string> selective_scan_implementations() { return {"sequential", "chunked", "tiled"}; }

std::vector<std::string> selective_scan_config_fields() {
  return {
      "impl: sequential (one thread walks a channel through time), chunked (parallel in time) or tiled (sequential's "
      "forward through double-buffered, asynchronously filled team tiles; registers and per-step B, C only)",
      "dstate_static: compile-time dstate 1,2,4,8,16,32,64 (states in registers; must equal dstate) or 0 (generic)",
      "channels_per_team: forward channels of one group per team (per-step B, C staged once per team)",
      "team_size: forward threads per team; each owns channels_per_team/team_size channels in turn",
      "time_tile: forward time steps of per-step B, C staged in team scratch per barrier",
      "stage_io: forward u, delta, z in and out through team scratch with coalesced team loads (1) or direct per-thread loads (0)",
      "chunk_len: steps per chunk: backward recompute unit (state saved per chunk) and chunked's parallel unit",
      "bwd_channels_per_team: backward channels per team (per-step dB, dC summed in the team first)",
      "bwd_team_size: backward threads per team (divides bwd_channels_per_team)",
      "scratch_level: Kokkos team scratch level 0 (on chip on CUDA) or 1 (global memory, which Kokkos allocates "
      "for every team that can be resident and keeps: at most half the device's memory in all)",
      "state_split: tiled forward threads per channel, 1, 2 or 4 (each holds dstate/state_split states); 1 otherwise",
      "bwd_state_split: tiled backward threads per channel, 1, 2 or 4 (bwd_team_size = bwd_channels_per_team x it); 1 otherwise",
      "bwd_state_interleave: tiled backward states a thread walks together, 1, 2 or 4 (needs bwd_state_split 1 and "
      "chunk_len 8; divides dstate); 1 otherwise",
      "bwd_stage_inputs: tiled's backward at bwd_state_interleave 2 copies each chunk's u, delta, dout, z and "
      "chunk-start states into team scratch a chunk ahead (1) or loads them into registers in the chunk (0); 0 otherwise",
      "bwd_normal_loop: tiled's backward at bwd_state_interleave 2, unstaged, in teams of 32 channels runs chunks whose "
      "decays stay normal through a state loop compiled for them, its exps unbranched (1: a kernel of its own), or "
      "every chunk through one loop that branches on it (0); the same bits either way; 0 otherwise",
      "fast_activations: tiled's softplus and silu sigma from the SFU (1: MUFU exp2 and reciprocal) or the library's "
      "expf, log1pf and division (0); 0 otherwise",
      "bwd_time_segments: tiled's backward splits the chunks into up to this many time segments run in parallel "
      "(a summary pass gives each its end adjoint); 1 otherwise",
      "bwd_summary_blocks: in time segments, tiled's backward summary pass splits each segment into up to this many "
      "blocks of whole chunks run in parallel (no effect without segments); 1 otherwise",
      "fwd_time_segments: tiled's forward splits time into up to this many segments of whole tiles and chunks run "
      "in parallel (a summary pass gives each its start state); 1 otherwise",
      "direct_io: tiled's forward with each thread moving its own channel's u, delta, z and output in registers, "
      "only B, C through team tiles (1; needs state_split 1, 2 or 4), or everything through team tiles (0), or "
      "one thread a channel walking rows of u and delta the team copies into scratch, its outputs leaving "
      "through them (2; state_split 1, dstate_static to 32, time_tile to 32; as 1 where rows are not 16-byte "
      "runs or the gate is not silu); 0 otherwise",
  };
}

SelectiveScanStrides selective_scan_strides(const SelectiveScanProblem& p, SequenceLayout layout) {
  SelectiveScanStrides s;
  const std::int64_t D = p.dim, N = p.dstate, L = p.seqlen, G = p.groups;
  if (layout == SequenceLayout::batch_dim_seqlen) {
    s.seq_batch = D * L; s.seq_dim = L; s.seq_time = 1;
  } else {
    s.seq_batch = L * D; s.seq_dim = 1; s.seq_time = D;
  }
  auto bc = [&](bool per_step, std::int64_t& batch, std::int64_t& group, std::int64_t& dim, std::int64_t& state,
                std::int64_t& time) {
    if (!per_step) {  // (D, N)
      batch = 0; group = 0; dim = N; state = 1; time = 0;
    } else if (layout == SequenceLayout::batch_dim_seqlen) {  // (B, G, N, L)
      batch = G * N * L; group = N * L; dim = 0; state = L; time = 1;
    } else {  // (b, L, G·N): ejkernel has one group; a group axis would sit beside N
      batch = L * G * N; group = N; dim = 0; state = 1; time = G * N;
    }
  };
  bc(p.B_per_step, s.B_batch, s.B_group, s.B_dim, s.B_state, s.B_time);
  bc(p.C_per_step, s.C_batch, s.C_group, s.C_dim, s.C_state, s.C_time);
  s.state_batch = D * N; s.state_dim = N; s.state_state = 1;
  return s;
}

SelectiveScanWorkspaceLayout selective_scan_workspace_layout(const SelectiveScanProblem& p,
                                                             const SelectiveScanConfig& c) {
  SelectiveScanWorkspaceLayout w;
  if (c.chunk_len <= 0 || c.bwd_channels_per_team <= 0) return w;
  const std::int64_t B = p.batch, D = p.dim, N = p.dstate, L = p.seqlen, G = p.groups;
  const bool chunked = is_chunked(c);
  w.num_chunks = ceil_div(L, c.chunk_len);
  // "tiled"'s backward time segments: whole chunks.
  w.chunks_per_segment = w.num_chunks;
  if (c.impl == "tiled" && p.with_backward && c.bwd_time_segments > 1 && w.num_chunks > 1)
    std::tie(w.chunks_per_segment, w.time_segments) = whole_unit_segments(w.num_chunks, c.bwd_time_segments, 1);
  w.channel_segments = chunked ? w.num_chunks : w.time_segments;
  // The summary pass's blocks: whole chunks, as many as asked up to one a chunk.
  w.chunks_per_summary_block = w.chunks_per_segment;
  if (w.time_segments > 1 && c.bwd_summary_blocks > 1)
    std::tie(w.chunks_per_summary_block, w.summary_blocks) =
        whole_unit_segments(w.chunks_per_segment, c.bwd_summary_blocks, 1);
  // "tiled"'s forward segments: whole tiles, whole chunks where a backward follows (it saves the
  // chunk-start states) and 16-byte runs, so each segment's walk is the whole pass's from t0.
  w.fwd_segment_len = L;
  if (c.impl == "tiled" && c.fwd_time_segments > 1 && c.time_tile > 0 && L > 0) {
    std::int64_t unit = std::lcm<std::int64_t>(detail::effective_time_tile(p, c), 4);
    if (p.with_backward) unit = std::lcm<std::int64_t>(unit, detail::effective_chunk_len(p, c));
    std::tie(w.fwd_segment_len, w.fwd_segments) = whole_unit_segments(L, c.fwd_time_segments, unit);
  }
  w.bwd_tiles = ceil_div(p.channels_per_group(), c.bwd_channels_per_team);
  const std::int64_t S = w.num_chunks, P = w.channel_segments, T = w.bwd_tiles;
  if (product({B, S, N, D}) * 8 + product({B, w.fwd_segments, N, D}) * 2 + product({B, G, T, N, L}) * 2 >
      double(kMaxElements)) {
    w.total_floats = -1;  // too large to index; invalid_reason() says so
    return w;
  }
  std::int64_t off = 0;
  auto take = [&off](std::int64_t count) { const std::int64_t start = off; off += count; return start; };
  if (chunked || p.with_backward) w.chunk_states = take(B * S * N * D);
  if (chunked) {
    w.chunk_local = take(B * S * N * D);
    w.chunk_decay = take(B * S * N * D);
  }
  if (w.time_segments > 1) {
    w.segment_adjoint = take(B * P * w.summary_blocks * N * D);
    w.segment_decay = take(B * P * w.summary_blocks * N * D);
  }
  if (w.fwd_segments > 1) {
    w.segment_state = take(B * w.fwd_segments * N * D);
    w.segment_state_decay = take(B * w.fwd_segments * N * D);
  }
  if (p.with_backward) {
    w.part_dA = take(B * P * N * D);
    if (!p.B_per_step) w.part_dB_channel = take(B * P * N * D);
    if (!p.C_per_step) w.part_dC_channel = take(B * P * N * D);
    if (p.has_D) w.part_dD = take(B * P * D);
    if (p.has_delta_bias) w.part_ddelta_bias = take(B * P * D);
    if (T > 1 && p.B_per_step) w.part_dB_step = take(B * G * T * N * L);
    if (T > 1 && p.C_per_step) w.part_dC_step = take(B * G * T * N * L);
  }
  w.total_floats = off;
  return w;
}

std::int64_t selective_scan_workspace_bytes(const SelectiveScanProblem& p, const SelectiveScanConfig& c) {
  return selective_scan_workspace_layout(p, c).bytes();
}

// Extra traffic, in float32 elements × 4 bytes (compulsory traffic is bytes_moved's):
//   forward, sequential: the chunk-start states written when a backward follows (B·S·N·D);
//   forward, chunked: the local pass re-reads u, delta and a per-step B; it writes end states
//     and decays (2·B·S·N·D), the carry pass reads them and writes the start states (3·B·S·N·D),
//     and the final pass reads the start states (B·S·N·D); tiled with F time segments adds the
//     summary pass over segments 0..F-2 (re-reads u, delta and B there; writes 2·B·F·N·D), read
//     back by the main pass (2·B·F·N·D);
//   backward: reads the chunk-start states (B·S·N·D) and writes then reads every partial;
//     chunked adds the local adjoint pass (re-reads delta, dout, z and a per-step C; writes
//     B·S·N·D) and the reverse carry (reads local adjoints and decays, writes end adjoints);
//     tiled with P time segments adds the summary pass over segments 1..P-1 in Q blocks each
//     (bwd_summary_blocks; re-reads delta, dout, z and C there; writes 2·B·P·Q·N·D), which the
//     main pass reads back (2·B·P·Q·N·D).
double selective_scan_extra_bytes(const SelectiveScanProblem& p, const SelectiveScanConfig& c, Pass pass) {
  const auto w = selective_scan_workspace_layout(p, c);
  if (w.total_floats < 0) return 0;
  const double bsnd = double(p.batch) * w.num_chunks * p.dstate * p.dim;
  const double bdl = double(p.batch) * p.dim * p.seqlen;
  const double bc_B = p.B_per_step ? double(shape_numel(p.B_shape())) : 0;
  const double bc_C = p.C_per_step ? double(shape_numel(p.C_shape())) : 0;
  double floats = 0;
  if (pass == Pass::forward) {
    if (is_chunked(c)) floats = 2 * bdl + bc_B + 2 * bsnd + 3 * bsnd + bsnd;
    else if (p.with_backward) floats = bsnd;
    if (w.fwd_segments > 1) {  // tiled's summary pass re-reads u, delta and B of segments 0..F-2
      const double share = double(w.fwd_segments - 1) / double(w.fwd_segments);
      const double bfnd = double(p.batch) * w.fwd_segments * p.dstate * p.dim;
      floats += share * (2 * bdl + bc_B) + 2 * bfnd + 2 * bfnd;
    }
  } else {
    floats = bsnd;
    double partials = 0;
    for (std::int64_t off : {w.part_dA, w.part_dB_channel, w.part_dC_channel}) if (off >= 0) partials += double(p.batch) * w.channel_segments * p.dstate * p.dim;
    for (std::int64_t off : {w.part_dD, w.part_ddelta_bias}) if (off >= 0) partials += double(p.batch) * w.channel_segments * p.dim;
    for (std::int64_t off : {w.part_dB_step, w.part_dC_step}) if (off >= 0) partials += double(p.batch) * p.groups * w.bwd_tiles * p.dstate * p.seqlen;
    floats += 2 * partials;
    if (is_chunked(c)) floats += (2 + (p.has_z ? 1 : 0)) * bdl + bc_C + bsnd + 3 * bsnd;
    if (w.time_segments > 1) {  // tiled's summary pass re-reads delta, dout, z and C of segments 1..
      const double share = double(w.time_segments - 1) / double(w.time_segments);
      const double bpnd = double(p.batch) * w.time_segments * w.summary_blocks * p.dstate * p.dim;
      floats += share * ((2 + (p.has_z ? 1 : 0)) * bdl + bc_C) + 2 * bpnd + 2 * bpnd;
    }
  }
  return 4.0 * floats;
}

std::string SelectiveScanConfig::invalid_reason(const SelectiveScanProblem& p, BackendKind backend) const {
  std::vector<std::string> why;
  const auto impls = selective_scan_implementations();
  if (std::find(impls.begin(), impls.end(), impl) == impls.end())
    why.push_back("unknown implementation '" + impl + "' (expected sequential, chunked or tiled)");
  const auto& statics = static_dstates();
  if (dstate_static != 0 && std::find(statics.begin(), statics.end(), dstate_static) == statics.end())
    why.push_back("dstate_static " + std::to_string(dstate_static) + " is not a compiled specialisation (0, 1, 2, 4, 8, 16, 32 or 64)");
  else if (dstate_static != 0 && dstate_static != p.dstate)
    why.push_back("dstate_static " + std::to_string(dstate_static) + " does not match the problem's dstate " +
                  std::to_string(p.dstate) + " (use 0 for the generic path)");
  struct Positive { const char* name; int value; };
  bool sizes_ok = true;
  for (auto f : {Positive{"channels_per_team", channels_per_team}, Positive{"team_size", team_size},
                 Positive{"time_tile", time_tile}, Positive{"chunk_len", chunk_len},
                 Positive{"bwd_channels_per_team", bwd_channels_per_team}, Positive{"bwd_team_size", bwd_team_size}}) {
    if (f.value <= 0) {
      why.push_back(std::string(f.name) + " must be positive, got " + std::to_string(f.value));
      sizes_ok = false;
    }
  }
  if (stage_io != 0 && stage_io != 1) why.push_back("stage_io must be 0 or 1, got " + std::to_string(stage_io));
  if (scratch_level != 0 && scratch_level != 1)
    why.push_back("scratch_level must be 0 or 1, got " + std::to_string(scratch_level));
  if (sizes_ok && state_split == 1 && channels_per_team % team_size != 0)
    why.push_back("team_size " + std::to_string(team_size) + " does not divide channels_per_team " +
                  std::to_string(channels_per_team));
  if (sizes_ok && bwd_state_split == 1 && bwd_channels_per_team % bwd_team_size != 0)
    why.push_back("bwd_team_size " + std::to_string(bwd_team_size) + " does not divide bwd_channels_per_team " +
                  std::to_string(bwd_channels_per_team));
  // A state split (forward's or backward's): 1, 2 or 4, only for tiled. True when it splits (is
  // valid and not 1), so the caller checks what it must divide.
  auto splits = [&](int split, const std::string& name, const char* pass) {
    if (split == 1) return false;
    if (split != 2 && split != 4) {
      why.push_back(name + " must be 1, 2 or 4, got " + std::to_string(split));
      return false;
    }
    if (impl != "tiled") {
      why.push_back(name + " splits tiled's " + pass + " only: it must be 1 for " + impl);
      return false;
    }
    return true;
  };
  auto divides_dstate = [&](int split, const std::string& name) {
    if (dstate_static % split != 0)
      why.push_back(name + " " + std::to_string(split) + " must divide dstate_static " + std::to_string(dstate_static));
  };
  if (splits(state_split, "state_split", "forward") && sizes_ok) {
    if (team_size % state_split != 0 || channels_per_team % (team_size / state_split) != 0)
      why.push_back("state_split " + std::to_string(state_split) + " must divide team_size " + std::to_string(team_size) +
                    ", and team_size / state_split must divide channels_per_team " + std::to_string(channels_per_team));
    divides_dstate(state_split, "state_split");
  }
  if (splits(bwd_state_split, "bwd_state_split", "backward")) divides_dstate(bwd_state_split, "bwd_state_split");
  if (bwd_state_interleave != 1 && bwd_state_interleave != 2 && bwd_state_interleave != 4)
    why.push_back("bwd_state_interleave must be 1, 2 or 4, got " + std::to_string(bwd_state_interleave));
  else if (bwd_state_interleave != 1 && (impl != "tiled" || bwd_state_split != 1 || chunk_len != 8))
    why.push_back("bwd_state_interleave " + std::to_string(bwd_state_interleave) +
                  " is compiled for tiled's backward with bwd_state_split 1 and chunk_len 8 only: it must be 1 here");
  else if (bwd_state_interleave != 1)
    divides_dstate(bwd_state_interleave, "bwd_state_interleave");
  if (bwd_stage_inputs != 0 && bwd_stage_inputs != 1)
    why.push_back("bwd_stage_inputs must be 0 or 1, got " + std::to_string(bwd_stage_inputs));
  else if (bwd_stage_inputs == 1 && (impl != "tiled" || bwd_state_interleave != 2))
    why.push_back("bwd_stage_inputs is compiled for tiled's backward with bwd_state_interleave 2 only: it must be 0 here");
  if (bwd_normal_loop != 0 && bwd_normal_loop != 1)
    why.push_back("bwd_normal_loop must be 0 or 1, got " + std::to_string(bwd_normal_loop));
  else if (bwd_normal_loop == 1 &&
           (impl != "tiled" || bwd_state_interleave != 2 || bwd_stage_inputs != 0 || bwd_channels_per_team != 32))
    why.push_back("bwd_normal_loop is compiled for tiled's backward with bwd_state_interleave 2 and bwd_stage_inputs 0 "
                  "in teams of 32 channels only: it must be 0 here");
  if (fwd_time_segments < 1)
    why.push_back("fwd_time_segments must be at least 1, got " + std::to_string(fwd_time_segments));
  else if (fwd_time_segments > 1 && impl != "tiled")
    why.push_back("fwd_time_segments splits tiled's forward only: it must be 1 for " + impl);
  if (bwd_summary_blocks < 1)
    why.push_back("bwd_summary_blocks must be at least 1, got " + std::to_string(bwd_summary_blocks));
  else if (bwd_summary_blocks > 1 && impl != "tiled")
    why.push_back("bwd_summary_blocks splits tiled's backward summary pass only: it must be 1 for " + impl);
  if (bwd_time_segments < 1)
    why.push_back("bwd_time_segments must be at least 1, got " + std::to_string(bwd_time_segments));
  else if (bwd_time_segments > 1 && impl != "tiled")
    why.push_back("bwd_time_segments splits tiled's backward only: it must be 1 for " + impl);
  if (fast_activations != 0 && fast_activations != 1)
    why.push_back("fast_activations must be 0 or 1, got " + std::to_string(fast_activations));
  else if (fast_activations == 1 && impl != "tiled")
    why.push_back("fast_activations is compiled into tiled's kernels only: it must be 0 for " + impl);
  if (direct_io != 0 && direct_io != 1 && direct_io != 2)
    why.push_back("direct_io must be 0, 1 or 2, got " + std::to_string(direct_io));
  else if (direct_io != 0 && impl != "tiled")
    why.push_back("direct_io is a form of tiled's forward: it must be 0 for " + impl);
  else if (direct_io == 1 && state_split != 1 && state_split != 2 && state_split != 4)
    why.push_back("direct_io runs one, two or four threads per channel: it needs state_split 1, 2 or 4, got " +
                  std::to_string(state_split));
  else if (direct_io == 2 && state_split != 1)
    why.push_back("direct_io 2 stages one thread's channel a row: it needs state_split 1, got " +
                  std::to_string(state_split));
  else if (direct_io == 2 && detail::effective_time_tile(p, *this) > detail::direct_staged_bc_row)
    why.push_back("direct_io 2 keeps a tile's B and C as rows of " + std::to_string(detail::direct_staged_bc_row) +
                  " steps: it needs time_tile <= " + std::to_string(detail::direct_staged_bc_row) + " (or seqlen <= it), got " +
                  std::to_string(time_tile));
  else if (direct_io == 2 && dstate_static > detail::direct_staged_max_dstate)
    why.push_back("direct_io 2 is compiled to dstate_static " + std::to_string(detail::direct_staged_max_dstate) +
                  " (beyond it its tiles pass the 40 KB of team scratch a team gets on cuda), got " +
                  std::to_string(dstate_static));
  else if (direct_io != 0 && p.seqlen > INT_MAX)
    why.push_back("direct_io counts a channel's steps in 32 bits: seqlen must be below 2^31, got " +
                  std::to_string(p.seqlen));
  else if (direct_io == 1 && state_split > 1 && backend == BackendKind::cuda && team_size % 32 != 0)
    why.push_back("direct_io with two or four threads per channel exchanges values within warps (shuffles, warp "
                  "syncs): on cuda team_size must be a multiple of 32, got " + std::to_string(team_size));
  if (impl == "tiled") {
    if (dstate_static == 0) why.push_back("tiled keeps the states in registers: it needs dstate_static = dstate");
    if (!p.B_per_step || !p.C_per_step) why.push_back("tiled stages per-step B and C only (use sequential for time-invariant ones)");
    if (scratch_level != 0) why.push_back("tiled copies into on-chip team scratch: scratch_level must be 0");
    if (stage_io != 0) why.push_back("tiled always stages its inputs: stage_io must be 0");
    if (p.with_backward && chunk_len != 8 && chunk_len != 16)
      why.push_back("tiled's backward keeps a chunk in registers: chunk_len must be 8 or 16");
    if (p.with_backward && sizes_ok && std::int64_t(bwd_channels_per_team) * bwd_state_split != bwd_team_size)
      why.push_back("tiled's backward runs bwd_state_split threads per channel: bwd_team_size must equal "
                    "bwd_channels_per_team x bwd_state_split");
  }
  const bool kokkos = backend == BackendKind::serial || backend == BackendKind::openmp || backend == BackendKind::cuda;
  if (!kokkos) why.push_back("backend " + to_string(backend) + " does not run Kokkos kernels");
  if (why.empty()) {
    const KernelBackendLimits limits = selective_scan_backend_limits(backend);
    const std::string space = to_string(backend);
    if (team_size > limits.max_team_size)
      why.push_back("team_size " + std::to_string(team_size) + " exceeds " + space + "'s limit of " +
                    std::to_string(limits.max_team_size));
    if (p.with_backward && bwd_team_size > limits.max_team_size)
      why.push_back("bwd_team_size " + std::to_string(bwd_team_size) + " exceeds " + space + "'s limit of " +
                    std::to_string(limits.max_team_size));
    const std::int64_t max_scratch = limits.max_scratch_bytes[scratch_level];
    // Level 1's total over the resident teams (KernelBackendLimits): a fuzzed config with teams
    // of one thread asked an H100 for 82.56 GB; cudaMalloc failed, and Kokkos 3.4 (unpatched)
    // segfaulted.
    auto check_scratch = [&](const char* kernel, std::int64_t floats, int threads) {
      const std::int64_t bytes = detail::scratch_request_bytes(floats);
      if (bytes > max_scratch) {
        why.push_back(std::string(kernel) + " needs " + std::to_string(bytes) + " bytes of team scratch; " + space +
                      " offers " + std::to_string(max_scratch) + " at level " + std::to_string(scratch_level) +
                      " (fewer channels per team, a shorter time_tile/chunk_len or scratch_level 1)");
        return;
      }
      const std::int64_t resident = backend == BackendKind::cuda
                                        ? std::max<std::int64_t>(1, limits.concurrency / std::max(1, threads))
                                        : limits.concurrency;
      if (scratch_level == 1 && bytes * resident > limits.level1_scratch_total_max_bytes())
        why.push_back(std::string(kernel) + "'s level-1 team scratch is " + std::to_string(bytes) + " bytes a team x " +
                      std::to_string(resident) + " resident teams on " + space + " = " +
                      std::to_string(bytes * resident) + " bytes, more than the " +
                      std::to_string(limits.level1_scratch_total_max_bytes()) + " scanlab allows (half of " + space +
                      "'s " + std::to_string(limits.memory_bytes) +
                      " bytes of memory; larger teams, fewer channels per team or a shorter time_tile/chunk_len)");
    };
    check_scratch("the forward", detail::forward_scratch_floats(p, *this), team_size);
    if (p.with_backward) check_scratch("the backward", detail::backward_scratch_floats(p, *this), bwd_team_size);
    const auto w = selective_scan_workspace_layout(p, *this);
    if (w.total_floats < 0) why.push_back("the workspace would exceed 2^59 floats");
    if (forward_league(p, *this, w) > INT_MAX || (p.with_backward && backward_league(p, *this, w) > INT_MAX))
      why.push_back("more than 2^31 - 1 teams (raise channels_per_team or chunk_len)");
  }
  std::string text;
  for (const auto& w : why) text += (text.empty() ? "" : "\n") + w;
  return text;
}

nlohmann::json SelectiveScanConfig::to_json() const {
  return {{"impl", impl},
          {"dstate_static", dstate_static},
          {"channels_per_team", channels_per_team},
          {"team_size", team_size},
          {"time_tile", time_tile},
          {"stage_io", stage_io},
          {"chunk_len", chunk_len},
          {"bwd_channels_per_team", bwd_channels_per_team},
          {"bwd_team_size", bwd_team_size},
          {"scratch_level", scratch_level},
          {"state_split", state_split},
          {"bwd_state_split", bwd_state_split},
          {"bwd_state_interleave", bwd_state_interleave},
          {"bwd_stage_inputs", bwd_stage_inputs},
          {"bwd_normal_loop", bwd_normal_loop},
          {"fast_activations", fast_activations},
          {"bwd_time_segments", bwd_time_segments},
          {"bwd_summary_blocks", bwd_summary_blocks},
          {"fwd_time_segments", fwd_time_segments},
          {"direct_io", direct_io}};
}

SelectiveScanConfig SelectiveScanConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("selective_scan config must be a JSON object, got " + j.dump());
  SelectiveScanConfig c;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const nlohmann::json& v = it.value();
    if (key == "impl") {
      if (!v.is_string()) throw std::invalid_argument("selective_scan config field 'impl' must be a string, got " + v.dump());
      c.impl = v.get<std::string>();
      const auto impls = selective_scan_implementations();
      if (std::find(impls.begin(), impls.end(), c.impl) == impls.end())
        throw std::invalid_argument("selective_scan config field 'impl': unknown implementation '" + c.impl + "'");
      continue;
    }
    int* field = nullptr;
    if (key == "dstate_static") field = &c.dstate_static;
    else if (key == "channels_per_team") field = &c.channels_per_team;
    else if (key == "team_size") field = &c.team_size;
    else if (key == "time_tile") field = &c.time_tile;
    else if (key == "stage_io") field = &c.stage_io;
    else if (key == "chunk_len") field = &c.chunk_len;
    else if (key == "bwd_channels_per_team") field = &c.bwd_channels_per_team;
    else if (key == "bwd_team_size") field = &c.bwd_team_size;
    else if (key == "scratch_level") field = &c.scratch_level;
    else if (key == "state_split") field = &c.state_split;
    else if (key == "bwd_state_split") field = &c.bwd_state_split;
    else if (key == "bwd_state_interleave") field = &c.bwd_state_interleave;
    else if (key == "bwd_stage_inputs") field = &c.bwd_stage_inputs;
    else if (key == "bwd_normal_loop") field = &c.bwd_normal_loop;
    else if (key == "fast_activations") field = &c.fast_activations;
    else if (key == "bwd_time_segments") field = &c.bwd_time_segments;
    else if (key == "bwd_summary_blocks") field = &c.bwd_summary_blocks;
    else if (key == "fwd_time_segments") field = &c.fwd_time_segments;
    else if (key == "direct_io") field = &c.direct_io;
    if (!field) throw std::invalid_argument("unknown selective_scan config field '" + key + "'");
    if (!v.is_number_integer() || v.get<std::int64_t>() < INT_MIN || v.get<std::int64_t>() > INT_MAX)
      throw std::invalid_argument("selective_scan config field '" + key + "' must be an integer, got " + v.dump());
    *field = v.get<int>();
  }
  return c;
}

namespace {

// Fits the scratch of every kernel the problem runs into on-chip (level 0) scratch: the
// forward's by halving time_tile (down to 8), then by halving its team (down to 32 threads, or
// to 1 on a host); the backward's by halving chunk_len (down to 8), then its team likewise. Only
// if that fails is scratch level 1 (global memory, measured several times slower) taken.
void fit_scratch(const SelectiveScanProblem& p, BackendKind backend, SelectiveScanConfig& c) {
  const auto limits = selective_scan_backend_limits(backend);
  const std::int64_t limit = limits.max_scratch_bytes[0];
  // "tiled" keeps one channel per thread, so only a smaller team frees scratch (N = 64's backward
  // needs teams of 16 on CUDA); the others halve their teams down to a warp.
  const int min_team = backend == BackendKind::cuda ? (c.impl == "tiled" ? 8 : 32) : 1;
  auto bytes = [](std::int64_t floats) { return detail::scratch_request_bytes(floats); };
  auto forward_bytes = [&]() { return bytes(detail::forward_scratch_floats(p, c)); };
  auto backward_bytes = [&]() {
    return p.with_backward ? bytes(detail::backward_scratch_floats(p, c)) : std::int64_t(0);
  };
  auto halve_team = [&](int& channels, int& threads) {
    if (channels <= min_team) return false;
    const bool one_per_thread = channels == threads;
    channels /= 2;
    threads = one_per_thread ? channels : std::min(threads, channels);
    while (channels % threads != 0) --threads;
    return true;
  };
  // A split team keeps its split threads per channel.
  auto halve_split_team = [&](int& channels, int& threads, int split) {
    if (split == 1) return halve_team(channels, threads);
    if (channels <= min_team || threads != channels * split) return false;
    channels /= 2;
    threads /= 2;
    return true;
  };
  c.scratch_level = 0;
  while (forward_bytes() > limit && c.time_tile > 8) c.time_tile /= 2;
  while (forward_bytes() > limit && halve_split_team(c.channels_per_team, c.team_size, c.state_split)) {}
  while (backward_bytes() > limit && c.chunk_len > 8) c.chunk_len /= 2;
  while (backward_bytes() > limit && halve_split_team(c.bwd_channels_per_team, c.bwd_team_size, c.bwd_state_split)) {}
  if (forward_bytes() > limit || backward_bytes() > limit) c.scratch_level = 1;
}

int static_dstate_for(const SelectiveScanProblem& p) {
  for (int n : static_dstates())
    if (n == p.dstate) return n;
  return 0;
}

}  // namespace

SelectiveScanConfig selective_scan_heuristic_config(const SelectiveScanProblem& p, BackendKind backend,
                                                    const std::string& impl) {
  SelectiveScanConfig c;
  // Registers beat scratch even where they spill: in a session-1 H200 probe (not a committed run)
  // at (8,4096,64,2048) the forward with dstate_static 64 (255 registers, spilling) took 12 ms, the
  // generic path 37-48 ms; `scanlab tune` times both (the registry offers dstate_static 0).
  c.dstate_static = static_dstate_for(p);
  const std::int64_t cpg = p.channels_per_group();
  const std::int64_t channels = p.batch * p.dim;
  const bool tiled_applies = c.dstate_static != 0 && p.B_per_step && p.C_per_step;
  if (backend == BackendKind::cuda) {
    const int cpg_up = int(std::min<std::int64_t>(128, pow2_ceil(cpg)));
    // "tiled" wherever it applies from 1024 channels: with 16384 or more it beat "chunked"
    // 1.8-2.8x in fwd+bwd and 1.8-3.2x forward (reports/results/h200/2026-11-29-s3-speed/); with
    // fewer, since its time segments (session 10), 2.7-3.6x forward and 3.7-4.9x fwd+bwd at
    // 1024, 2048, 4096 and 8192 channels of dstate 16 (2026-12-02-s13/few-channels/, one call),
    // in time segments, which need dstate % 4 == 0 (few_channels below). Below 1024 channels, or
    // below 16384 without segments, nothing was measured: "chunked" as before.
    if (!impl.empty()) c.impl = impl;
    else if (tiled_applies && (channels >= 16384 || (channels >= 1024 && c.dstate_static % 4 == 0))) c.impl = "tiled";
    else if (p.with_backward || channels < 16384) c.impl = "chunked";
    else c.impl = "sequential";
    c.time_tile = 32;
    c.stage_io = 0;  // staged loads were 1.6x slower in the forward in a session-1 H200 probe (uncommitted; tunable)
    if (c.impl == "tiled") {
      // 32 channels per team keep the double-buffered tiles of 16 steps at 25.6 KB at dstate 16
      // (tiled_scratch), so eight teams fit an SM's shared memory; the backward's chunk of 8 keeps
      // its team at 24 KB (at 16 it needed 37 KB in session 3: six teams per SM, two waves on the
      // H200 at 32768 channels).
      c.channels_per_team = std::min(32, cpg_up);
      // Two threads per channel: 16 warps per SM at the anchor instead of 8; four were slower
      // there (2026-11-30-s4/fix/: 1.33 ms with 2, 1.92 with 1, 2.04 with 4). Four at 16384
      // channels or fewer, where two leave too few warps (2026-12-01-s6/activations/, one call:
      // (2,4096,16,8192) 2.16 ms with 4 against 2.80 with 2, (8,2048,16,2048) 0.72 against 0.81;
      // at 20480 and more channels 4 lost, 1.42 against 1.09 ms at the anchor).
      // Where even four threads per channel fill less than 3/4 of the threads resident at the
      // 128-register cap (16 warps per SM, a quarter of `concurrency`), two threads per channel
      // and time segments run side by side instead (fwd_time_segments, bwd_time_segments), as
      // many as fill them: in one H200 call (2026-12-02-s10/segments-first/) at
      // (2,4096,16,8192) 4 segments of split 2 took 1.50 / 5.99 ms (forward / backward) against
      // 1.86 / 9.46 for split 4 alone and 1.76 / 7.47 for split 4 in 2 segments; at
      // (8,2048,16,2048), where split 4 fills 97%, it alone won (0.63 / 2.94 against 0.72 /
      // 2.99 in 2 segments of split 2).
      const bool few_channels = channels <= 16384 && c.dstate_static % 4 == 0;
      const std::int64_t resident = selective_scan_backend_limits(backend).concurrency / 4;
      const bool segmented = few_channels && 4 * channels * 4 < 3 * resident;
      const int segments = segmented ? int(std::clamp<std::int64_t>(resident / (channels * 2), 1, 16)) : 1;
      // The forward at dstate 16 runs segments only below 3/8 of that (6336 channels on the
      // H200): at 8192 channels four threads a channel without segments (teams of 64 channels,
      // tiles of 64; below) beat two in 4 segments on an H100, 895 / 895 against 991 / 992 us
      // at (2,4096,16,8192) (reports/results/h100/2026-12-07-s42/call6/) and 904 / 895 against
      // 995 / 1004 (2026-12-07-s44/s44a/); at 4096 and 2048 channels segments still won (579 /
      // 578 against 614-628 us, 313 / 322 against 413-423 for four threads in 4 segments,
      // the best of 1, 2 and 4 there). The backward keeps `segmented` (measured on its own).
      const bool fwd_segmented = c.dstate_static == 16 ? few_channels && 8 * channels * 4 < 3 * resident : segmented;
      c.state_split = fwd_segmented ? 2 : few_channels ? 4 : c.dstate_static >= 2 ? 2 : 1;
      c.team_size = c.channels_per_team * c.state_split;
      c.fwd_time_segments = fwd_segmented ? segments : 1;
      // Tiles of 16 steps; 8 at dstate 64, where the B and C tiles dominate the scratch (forward
      // at (8,4096,64,2048) 3.03 ms with 8, 3.07 with 16: 2026-11-30-s5/final/ and whole-tiles/,
      // two calls, so a tie; 8 keeps the team's scratch at half).
      c.time_tile = c.dstate_static >= 64 ? 8 : 16;
      // The backward likewise: two threads per channel, teams of 32 channels (64 threads), so the
      // anchor's 32768 channels fill 16 warps per SM (one thread per channel reached 7.7;
      // reports/results/h200/2026-11-30-s5/). Four threads per channel at 16384 channels or fewer
      // beat two in session 6 (fwd+bwd (2,4096,16,8192) 14.9 against 17.2 ms, (8,2048,16,2048)
      // 4.33 against 4.99; at the anchor 7.96 against 7.21), when a team walked every chunk.
      // Time segments where four threads per channel are too few, as in the forward.
      // At dstate 32 and 64 (32768 channels) one thread per channel won: backward 7.21 against
      // 8.74 ms at (8,4096,32,2048), 20.16 against 22.33 at (8,4096,64,2048), with 32 channels a
      // team (2026-12-02-s13/bwd-dstate/, one call; four threads per channel 11.69 and 22.33).
      c.bwd_state_split = segmented ? 2 : few_channels ? 4 : c.dstate_static >= 32 ? 1 : c.dstate_static >= 2 ? 2 : 1;
      c.bwd_time_segments = segments;
      // One thread a channel walking two states at once (bwd_state_interleave 2, 8 warps an SM at
      // its bound, its carve-out fitted): at dstate 64 14.34 against 20.18 ms for one state at a
      // time (the heuristic's until session 18), at dstate 32 6.29 against 7.61; at dstate 16
      // with the anchor's 32768 channels 3.73 against 4.27 for two threads a channel
      // (2026-12-03-s18/call2/, one call). At 20480 and 24576 channels two threads a channel were
      // faster in session 18 (call3/), but with its per-step sums regrouped and its column sums
      // pipelined (speed-notes §33-§34) two states at once won there too: (4,5120,16,4096) 5.80 /
      // 5.85 against 6.31 / 6.35 ms, (16,1536,16,1024) 1.60 / 1.63 against 1.80 / 1.79
      // (2026-12-04-s19/call3/, one call, each twice). Where channels are few
      // (16384 or fewer at dstate 16), in time segments that fill two waves of 8 warps an SM
      // (the power of two at or below 2·8·32·SMs / channels, at most 16): (8,2048,16,2048) 2.53
      // against 2.79 ms for four threads a channel, (1,2048,16,8192) 1.51 against 1.58 for two in
      // segments, (2,4096,16,8192) 5.53 against 5.64 (call3/, call4/; 4, 16 and 32 segments
      // 5.42, 5.32, 5.26 there). And at least one segment per 512 steps: at (2,4096,16,8192)
      // 16 segments took 4.88 ms against 5.12 for that rule's 8, while its 4 at (8,2048,16,2048)
      // and 16 at (1,2048,16,8192) stayed best; each best count leaves 256-512 steps a segment
      // (2026-12-04-s20/call6/, one call). Since the staged chunk inputs (below), one wave
      // (the power of two at or below 8·32·SMs / channels, at most 16): with them, at 2, 4, 8 and
      // 16 segments, (8,2048,16,2048) took 2.04, 2.20, 2.25, 2.33 ms, (2,4096,16,8192) 6.06,
      // 4.10, 4.22, 4.21, (1,2048,16,8192) 5.53, 2.99, 1.70, 1.18; the old rule's unstaged 4, 16
      // and 16 took 2.08, 4.38, 1.25 (2026-12-05-s25/call2/, one call, each twice).
      const std::int64_t sms = std::max<std::int64_t>(1, selective_scan_backend_limits(backend).concurrency / 2048);
      if (!segmented && !few_channels && c.dstate_static >= 16) {
        c.bwd_state_split = 1;
        c.bwd_state_interleave = 2;
      } else if (few_channels && c.dstate_static == 16) {
        c.bwd_state_split = 1;
        c.bwd_state_interleave = 2;
        const std::int64_t one_wave = pow2_floor(std::max<std::int64_t>(1, 8 * 32 * sms / channels));
        c.bwd_time_segments = int(std::clamp<std::int64_t>(one_wave, 1, 16));
      }
      c.bwd_channels_per_team = std::min(32, cpg_up);
      c.bwd_team_size = c.bwd_channels_per_team * c.bwd_state_split;
      c.chunk_len = 8;
      // Two states at once at dstate 16: each chunk's u, delta, dout and z copied into scratch a
      // chunk ahead (bwd_stage_inputs; speed-notes §48). In one H200 call, each twice
      // (2026-12-05-s25/call1/): (8,4096,16,2048) 2.64 against 2.99 ms, (4,5120,16,4096) 4.49
      // against 5.00, (16,1536,16,1024) 1.24 against 1.40; in time segments 1.04-1.08x at 2, 4, 8
      // and 16 segments on (2,4096,16,8192) and (1,2048,16,8192), 0.95-1.07x on (8,2048,16,2048)
      // (call2/). Not at dstate 32: 0.92x (its 8 KB more a team cost an SM a team there).
      c.bwd_stage_inputs = c.bwd_state_interleave == 2 && c.dstate_static == 16 ? 1 : 0;
      // The state loop compiled for normal chunks at dstate 32 only: on an H100, with it in place of
      // the branching loop (reports/results/h100/2026-12-07-s42/call1/, each twice, alternating;
      // speed-notes §69) the backward took 5.58 / 5.55 against 5.98 / 5.99 ms at (8,4096,32,2048),
      // but 12.04 / 12.07 against 11.41 / 11.41 at dstate 64 (the same kernel, unexplained), and the
      // same within 1% at the five dstate-16 shapes (staged, so not offered there).
      c.bwd_normal_loop = c.bwd_state_interleave == 2 && c.bwd_stage_inputs == 0 && c.bwd_channels_per_team == 32 &&
                                  c.dstate_static == 32
                              ? 1
                              : 0;
      // In time segments the summary pass in blocks of 16 chunks (128 steps), at most 8 a segment:
      // on an H100 against one block (speed-notes §56; reports/results/h100/2026-12-05-s31/call1/,
      // one call, Q 4 twice) the backward with Q 1 / 2 / 4 / 8 took, in ms, 3.41 / 3.26 / 3.21 /
      // 3.18 at (2,4096,16,8192) (4 segments, 256 chunks each), 1.69 / 1.57 / 1.62 / 1.58 at
      // (8,2048,16,2048) (2, 128), 1.75 / 1.86 / 1.72 / 1.70 at (1,4096,16,8192) (8, 128), 0.947 /
      // 1.00 / 0.954 / 0.980 at (1,2048,16,8192) (16, 64), 0.423 / 0.401 / 0.421 / 0.438 at
      // (1,1024,16,4096) (16, 32): this rule's Q is the best at three and within 0.7% at the others.
      if (c.bwd_time_segments > 1) {
        const std::int64_t chunks = ceil_div(p.seqlen, c.chunk_len);
        const std::int64_t chunks_per_segment = whole_unit_segments(chunks, c.bwd_time_segments, 1).first;
        c.bwd_summary_blocks = int(std::clamp<std::int64_t>(chunks_per_segment / 16, 1, 8));
      }
      // Each thread moving its own channel's inputs and output in registers (direct_io, B and C
      // tiles of 32 steps) wherever the forward runs without time segments from dstate 16: with
      // its shared-memory carve-out fitted (selective_scan_direct.hpp) it beat the staged forward
      // on every such issue shape in one H200 call (reports/results/h200/2026-12-03-s17/call2/,
      // speed-notes §29): one thread a channel, teams of min(128, cpg↑) channels, at the anchor
      // (8,4096,16,2048) 0.713 against 0.899 ms (two threads 0.734); two threads a channel, 32
      // channels a team of 64, where one thread a channel fills fewer than 7 warps an SM:
      // (4,5120,16,4096) 1.089 against 1.458 (one thread 1.218), (16,1536,16,1024) 0.297
      // against 0.400 (0.325), (8,2048,16,2048) 0.482 against 0.553 (0.476: a tie). At dstate
      // 32 and 64 one thread a channel (two spill 32 states a thread under the 128-register
      // cap: (8,4096,64,2048) 1.727 against 2.529 ms in 2026-12-03-s17/call1/); below dstate 16
      // only where four threads per channel would run (nothing else measured there). In time
      // segments at dstate 16 too, two threads a channel (teams of 64, 32 channels), the segments
      // as for the staged forward: at (2,4096,16,8192) in 4 segments 1.141 ms against 1.460 /
      // 1.480 for the staged forward there; one thread a channel 1.174 / 1.170 in 4 segments, 1.191
      // in 8 (reports/results/h200/2026-12-04-s20/call1/, one call; speed-notes §36); at 4096,
      // 2048 and 1024 channels in 8 or 16 segments 1.24-1.32x the staged forward's speed (call5/).
      // Segments did not pay where the rule runs none (16384-32768 channels: 1.07-1.6x slower).
      // Four threads a channel (32 channels a team of 128) where four fill the threads resident at
      // the 128-register cap in one wave without segments: at (8,2048,16,2048) 0.385 / 0.387 ms
      // against 0.440 / 0.438 for two (2026-12-04-s21/call3/, one call); where they need a second
      // wave they lost ((4,5120,16,4096) 1.086 against 1.020, (16,1536,16,1024) 0.312 against
      // 0.276, the anchor 0.743 against 0.584 for one), and in place of segments too
      // ((2,4096,16,8192) 1.232 without, 1.164 in 2, against 1.036 for two in 4).
      // Without segments, two and four threads a channel in teams of 64 channels and tiles of 64
      // steps (32 and 32 before): in `scanlab tune` on an H100, then as sweeps, each twice
      // (reports/results/h100/2026-12-07-s42/call5/, call6/), (8,2048,16,2048) 0.354 against
      // 0.371 ms (four), (16,1536,16,1024) 0.245 against 0.258 and (4,5120,16,4096) 0.910 against
      // 0.955 (two). (The anchor's one thread a channel gained 1.3% with tiles of 64: not taken.)
      if ((!fwd_segmented && (few_channels || c.dstate_static >= 16)) || (fwd_segmented && c.dstate_static == 16)) {
        const bool four = c.dstate_static == 16 && !fwd_segmented && few_channels && 4 * channels <= resident;
        const bool two = !four && c.dstate_static == 16 && channels < 7 * 32 * sms;
        const bool wide = (four || two) && !fwd_segmented && cpg_up >= 64;
        c.direct_io = 1;
        c.state_split = four ? 4 : two ? 2 : 1;
        c.channels_per_team = wide ? 64 : four || two ? 32 : std::min(128, cpg_up);
        c.team_size = c.channels_per_team * c.state_split;
        c.time_tile = wide ? 64 : 32;
      }
      // softplus and silu's σ from the SFU: faster on every dstate-16 shape of the H200 sweep
      // (forward 0.90-0.94x the library forms' time, fwd+bwd 0.88-0.94x), a tie at dstate 64
      // (reports/results/h200/2026-12-01-s9/, one call; reports/speed-notes.md §14).
      c.fast_activations = 1;
    } else if (p.with_backward) {
      // The chunked backward (parallel in time) beat the sequential one on every shape of the
      // committed H200 tune (reports/results/h200/2026-11-29-s2/measure/tune/).
      c.team_size = c.channels_per_team = std::min(128, cpg_up);
      c.bwd_team_size = c.bwd_channels_per_team = std::min(64, cpg_up);
      c.chunk_len = 8;
    } else if (c.impl == "sequential") {
      c.team_size = c.channels_per_team = std::min(64, cpg_up);
      c.bwd_team_size = c.bwd_channels_per_team = std::min(32, cpg_up);
      c.chunk_len = 16;
    } else {
      c.team_size = c.channels_per_team = std::min(64, cpg_up);
      c.bwd_team_size = c.bwd_channels_per_team = std::min(32, cpg_up);
      const double work = double(channels) * double(p.seqlen) / double(1 << 18);
      c.chunk_len = int(std::clamp<std::int64_t>(pow2_floor(std::max<std::int64_t>(1, std::int64_t(work))), 16, 128));
    }
  } else {
    const auto limits = selective_scan_backend_limits(backend);
    c.team_size = c.bwd_team_size = 1;
    c.channels_per_team = c.bwd_channels_per_team = int(std::min<std::int64_t>(16, cpg));
    c.time_tile = 64;
    c.chunk_len = 32;
    const std::int64_t teams = p.batch * p.groups * ceil_div(cpg, c.channels_per_team);
    if (!impl.empty()) c.impl = impl;
    else c.impl = teams < limits.concurrency && p.seqlen >= 4 * c.chunk_len ? "chunked" : "sequential";
    if (c.impl == "tiled") {
      c.chunk_len = 16;
      c.bwd_channels_per_team = 1;
    }
  }
  fit_scratch(p, backend, c);
  return c;
}

std::vector<SelectiveScanConfig> selective_scan_candidate_configs(const SelectiveScanProblem& p, BackendKind backend) {
  std::vector<SelectiveScanConfig> out;
  auto add = [&](const SelectiveScanConfig& c) {
    if (!c.invalid_reason(p, backend).empty()) return;
    for (const auto& o : out)
      if (o == c) return;
    out.push_back(c);
  };
  const SelectiveScanConfig heuristic = selective_scan_heuristic_config(p, backend);
  add(heuristic);
  if (heuristic.impl == "tiled") {  // the other activation form, second: tune's spread always takes it
    SelectiveScanConfig c = heuristic;
    c.fast_activations = 1 - heuristic.fast_activations;
    add(c);
  }
  if (heuristic.direct_io == 1) {  // the staged forward the rule takes elsewhere: two threads a channel
    SelectiveScanConfig c = heuristic;
    c.direct_io = 0;
    c.state_split = heuristic.dstate_static % 2 == 0 ? 2 : 1;
    c.channels_per_team = std::min(32, heuristic.channels_per_team);
    c.team_size = c.channels_per_team * c.state_split;
    c.time_tile = heuristic.dstate_static >= 64 ? 8 : 16;
    add(c);
  }
  const int spec = static_dstate_for(p);
  const std::int64_t cpg = p.channels_per_group();
  if (backend == BackendKind::cuda) {
    for (const char* impl : {"sequential", "chunked"}) {
      for (int team : {32, 64, 128}) {
        if (team > 2 * pow2_ceil(cpg) && team > 32) continue;
        for (int chunk : {8, 16, 32, 64, 128}) {
          for (int level : {0, 1}) {
            SelectiveScanConfig c = heuristic;
            c.impl = impl;
            c.dstate_static = spec;
            c.state_split = c.bwd_state_split = 1;
            c.fast_activations = 0;
            c.team_size = c.channels_per_team = team;
            c.bwd_team_size = c.bwd_channels_per_team = std::min(team, 64);
            c.chunk_len = chunk;
            c.scratch_level = level;
            add(c);
          }
        }
      }
    }
    for (int team : {32, 64, 128}) {
      if (team > 2 * pow2_ceil(cpg) && team > 32) continue;
      for (int tile : {8, 16, 32}) {
        for (int chunk : {8, 16}) {  // the backward's chunk (forward only: unused, one candidate)
          if (!p.with_backward && chunk != 16) continue;
          SelectiveScanConfig c = heuristic;
          for (int split : {1, 2, 4}) {  // the channels per team stay `team`
            if (spec % split != 0 || team * split > 256) continue;
            c.impl = "tiled";
            c.dstate_static = spec;
            c.channels_per_team = team;
            c.state_split = split;
            c.team_size = team * split;
            c.time_tile = tile;
            c.stage_io = 0;
            c.direct_io = 0;  // the staged forward (direct_io's candidates follow)
            c.scratch_level = 0;
            c.chunk_len = chunk;
            c.bwd_state_split = spec % 2 == 0 ? 2 : 1;
            c.bwd_channels_per_team = std::min(team, 32);
            c.bwd_team_size = c.bwd_channels_per_team * c.bwd_state_split;
            add(c);
          }
        }
      }
    }
    // tiled's backward in time segments around the heuristic's count, and around its shape:
    // threads per channel × channels per team
    if (heuristic.impl == "tiled" && p.with_backward) {
      for (int segments : {1, 2, 4, 8}) {
        SelectiveScanConfig c = heuristic;
        c.bwd_time_segments = segments;
        add(c);
      }
    }
    if (heuristic.impl == "tiled") {  // the forward with direct_io: threads per channel, team shapes, tiles
      for (int split : {1, 2, 4}) {
        if (spec % split != 0) continue;
        for (int team : {64, 128, 256}) {
          for (int tile : {16, 32, 64}) {
            SelectiveScanConfig c = heuristic;
            c.direct_io = 1;
            c.state_split = split;
            c.fwd_time_segments = 1;
            c.team_size = team;
            c.channels_per_team = team / split;
            c.time_tile = tile;
            add(c);
          }
        }
      }
      // ... and with the rows staged through scratch (direct_io 2, one thread a channel): a warp
      // or two a team, where they fit the 40 KB of team scratch Kokkos 3.4 allows (rows of 32
      // floats and B and C rows of 32 steps whatever the tile: one warp to dstate 32, none at 64)
      for (int team : {32, 64}) {
        for (int tile : {16, 32}) {
          SelectiveScanConfig c = heuristic;
          c.direct_io = 2;
          c.state_split = 1;
          c.fwd_time_segments = 1;
          c.team_size = c.channels_per_team = team;
          c.time_tile = tile;
          add(c);
        }
      }
    }
    if (heuristic.impl == "tiled") {  // the forward's time segments likewise, staged and direct_io
      for (int segments : {1, 2, 4, 8}) {
        SelectiveScanConfig c = heuristic;
        c.fwd_time_segments = segments;
        add(c);
        for (int split : {1, 2, 4}) {  // direct_io's shapes in the rule: one, two or four threads a channel
          if (spec % split != 0) continue;
          c.direct_io = 1;
          c.state_split = split;
          c.channels_per_team = split > 1 ? 32 : int(std::min<std::int64_t>(128, pow2_ceil(cpg)));
          c.team_size = c.channels_per_team * split;
          c.time_tile = 32;
          add(c);
          if (split == 1) {  // and with the rows staged, a warp a team
            SelectiveScanConfig rows = c;
            rows.direct_io = 2;
            rows.team_size = rows.channels_per_team = 32;
            add(rows);
          }
        }
      }
    }
    if (heuristic.impl == "tiled" && p.with_backward) {
      for (int split : {1, 2, 4}) {
        for (int channels : {16, 32, 64}) {
          if (spec % split != 0 || channels * split > 256) continue;
          SelectiveScanConfig c = heuristic;
          c.bwd_state_split = split;
          c.bwd_channels_per_team = channels;
          c.bwd_team_size = channels * split;
          c.bwd_state_interleave = 1;
          c.bwd_stage_inputs = 0;
          add(c);
          // one thread a channel walking 2 or 4 states at once (chunks of 8)
          for (int interleave : {2, 4}) {
            if (split != 1 || spec % interleave != 0 || heuristic.chunk_len != 8) continue;
            c.bwd_state_interleave = interleave;
            c.bwd_stage_inputs = 0;
            add(c);
            if (interleave == 2) {  // and its chunk inputs copied into scratch a chunk ahead
              c.bwd_stage_inputs = 1;
              add(c);
            }
          }
        }
      }
    }
    if (heuristic.impl == "tiled" && p.with_backward) {  // the backward with and without its kernel for normal chunks
      SelectiveScanConfig c = heuristic;
      c.bwd_normal_loop = 1 - heuristic.bwd_normal_loop;
      add(c);
    }
    for (int tile : {16, 64}) {
      SelectiveScanConfig c = heuristic;
      c.time_tile = tile;
      add(c);
      c.stage_io = 1 - heuristic.stage_io;
      add(c);
    }
    {
      SelectiveScanConfig c = heuristic;
      c.stage_io = 1 - heuristic.stage_io;
      add(c);
    }
    if (spec != 0) {  // the other side of the register/scratch choice
      SelectiveScanConfig c = heuristic;
      c.dstate_static = heuristic.dstate_static == 0 ? spec : 0;
      add(c);
    }
  } else {
    const auto limits = selective_scan_backend_limits(backend);
    for (const char* impl : {"sequential", "chunked"}) {
      for (int channels : {4, 16, 64}) {
        for (int chunk : {16, 32, 64}) {
          SelectiveScanConfig c = heuristic;
          c.impl = impl;
          c.channels_per_team = c.bwd_channels_per_team = int(std::min<std::int64_t>(channels, cpg));
          c.chunk_len = chunk;
          add(c);
        }
      }
    }
    for (int channels : {4, 16}) {
      SelectiveScanConfig c = heuristic;
      c.impl = "tiled";
      c.dstate_static = spec;
      c.channels_per_team = int(std::min<std::int64_t>(channels, cpg));
      c.team_size = 1;
      c.stage_io = 0;
      c.scratch_level = 0;
      c.chunk_len = 16;
      c.bwd_channels_per_team = c.bwd_team_size = c.bwd_state_split = 1;
      add(c);
      c.direct_io = 1;  // each thread's inputs and outputs in registers
      add(c);
      c.direct_io = 0;
      c.fast_activations = 1;  // the SFU forms' algorithm (the host's exp2 and division are exact)
      add(c);
      c.fast_activations = 0;
      if (channels == 4 && spec % 2 == 0 && limits.max_team_size >= 2) {  // two threads per channel
        c.team_size = c.state_split = 2;
        add(c);
        c.bwd_team_size = c.bwd_state_split = 2;
        add(c);
      }
    }
    if (limits.max_team_size >= 2 && cpg >= 2) {
      SelectiveScanConfig c = heuristic;
      c.channels_per_team = c.bwd_channels_per_team = int(std::min<std::int64_t>(16, cpg)) & ~1;
      c.team_size = c.bwd_team_size = 2;
      add(c);
    }
    if (spec != 0) {  // the other side of the register/scratch choice
      SelectiveScanConfig c = heuristic;
      c.dstate_static = heuristic.dstate_static == 0 ? spec : 0;
      add(c);
    }
  }
  return out;
}

}  // namespace scanlab::kernels
