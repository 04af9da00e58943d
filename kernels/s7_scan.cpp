// s7_scan kernels: the stages kernels/s7_scan.hpp describes, their launches, the device-level
// passes and the host bridge.
#include "s7_scan.hpp"

#include <algorithm>
#include <climits>
#include <sstream>

#include "s7_device.hpp"
#include "streaming.hpp"

namespace scanlab::kernels {
namespace {

using namespace s7_detail;
using index_t = std::int64_t;

template <class Space>
using Member = typename Kokkos::TeamPolicy<Space>::member_type;

KOKKOS_INLINE_FUNCTION index_t min_index(index_t a, index_t b) { return a < b ? a : b; }

// League geometry of a streaming stage: rank = ((b·tiles + tile)·splits + split)·groups + group.
// Groups vary fastest, so teams that run at the same time share one (b, tile) and its u, X, DX or
// dout tile stays in L2 while they re-read it.
struct StreamGrid {
  index_t tiles = 1, splits = 1, groups = 1, tile_len = 1;
  KOKKOS_INLINE_FUNCTION void decompose(index_t rank, index_t& b, index_t& tile, index_t& split,
                                        index_t& group) const {
    group = rank % groups;
    rank /= groups;
    split = rank % splits;
    rank /= splits;
    tile = rank % tiles;
    b = rank / tiles;
  }
};

// `steps_per_item`: 4 when the stage moves 16-byte vectors along seqlen (a thread's item is four
// steps), else 1.
StreamGrid stream_grid(const S7ScanProblem& p, const S7ScanConfig& c, index_t rows, int group, index_t splits,
                       int steps_per_item = 1) {
  StreamGrid g;
  g.tile_len = index_t(c.team_size) * c.items_per_thread * steps_per_item;
  g.tiles = ceil_div(p.seqlen, g.tile_len);
  g.splits = splits;
  g.groups = ceil_div(rows, group);
  return g;
}

int checked_league(index_t league, const char* stage) {
  if (league > INT_MAX)
    throw std::invalid_argument(std::string("s7_scan ") + stage + ": " + std::to_string(league) +
                                " teams exceed the int league size Kokkos takes; raise the tile sizes");
  return static_cast<int>(league);
}

template <class Space, class... Traits, class Functor>
void launch(const char* label, const Space& space, index_t league, int team_size, std::size_t scratch_bytes,
            const Functor& f) {
  Kokkos::TeamPolicy<Space, Traits...> policy(space, checked_league(league, label), team_size);
  if (scratch_bytes) policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes));
  const int max_team = policy.team_size_max(f, Kokkos::ParallelForTag());
  if (team_size > max_team)
    throw std::invalid_argument(std::string(label) + ": team size " + std::to_string(team_size) +
                                " exceeds this kernel's maximum " + std::to_string(max_team) + " on " +
                                Space::name());
  Kokkos::parallel_for(label, policy, f);
}

template <class Space>
using SV3 = Kokkos::View<const float***, Kokkos::LayoutStride, typename Space::memory_space>;
template <class Space>
using SV4 = Kokkos::View<const float****, Kokkos::LayoutStride, typename Space::memory_space>;
template <class Space>
using OV3 = Kokkos::View<float***, Kokkos::LayoutStride, typename Space::memory_space>;
template <class Space>
using OV4 = Kokkos::View<float****, Kokkos::LayoutStride, typename Space::memory_space>;
template <class Space>
using WV3 = typename S7ScanWorkspace<Space>::View3;
template <class Space>
using WV4 = typename S7ScanWorkspace<Space>::View4;

// ---------------------------------------------------------------------------------------------
// Streaming stages. Each thread owns one time step t and GROUP rows of the state (or dim) axis;
// rows past the end are clamped to the last row for loading and never stored.
//
// The forward's stages also have a vector path, taken when every tensor they touch allows 16-byte
// accesses along seqlen (views_allow_vec4): a thread owns four consecutive steps, one 16-byte
// load per (row, h or n) instead of four 4-byte ones, so each thread keeps four times the bytes
// in flight with a quarter of the load instructions. Each lane does the scalar path's
// multiply-adds in the same order, so both paths give bitwise the same result.

// True when the view's data is 16-byte aligned and every stride but seqlen's (1) is a multiple of 4,
// so every (…, t) with t % 4 == 0 starts a 16-byte vector. Empty views pass.
template <class View>
bool allows_vec4(const View& v) {
  if (v.data() == nullptr) return true;
  if (reinterpret_cast<std::uintptr_t>(v.data()) % 16 != 0) return false;
  std::size_t strides[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  v.stride(strides);
  for (unsigned r = 0; r + 1 < View::rank; ++r)
    if (strides[r] % 4 != 0) return false;
  return strides[View::rank - 1] == 1;
}
template <class... Views>
bool views_allow_vec4(index_t seqlen, const Views&... views) {
  return seqlen % 4 == 0 && (allows_vec4(views) && ...);
}

// The vector path's sums: acc[j] = Σ_k rows[j][k·row_stride] · common[k·common_stride] over
// k = 0 … count-1 in ascending order, four consecutive steps per lane. Software-pipelined: step
// k+1's GROUP + 1 loads are issued before step k's multiply-adds, so a thread always has a step's
// loads in flight. Left to itself the compiler unrolled by 4 and waited on each batch of loads
// before issuing the next, and the Bu and y stages read at ~84% of the read ceiling (ncu,
// 2026-12-02-s11). The multiply-adds and their order are unchanged.
template <int GROUP>
KOKKOS_FORCEINLINE_FUNCTION void sum4_ascending(const float* const (&rows)[GROUP], index_t row_stride,
                                                const float* common, index_t common_stride, index_t count,
                                                streaming::Float4 (&acc)[GROUP]) {
  SCANLAB_UNROLL
  for (int j = 0; j < GROUP; ++j) acc[j] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (count <= 0) return;
  streaming::Float4 c = streaming::load4(common), r[GROUP];
  SCANLAB_UNROLL
  for (int j = 0; j < GROUP; ++j) r[j] = streaming::load4(rows[j]);
  // Not unrolled further: at 4 the pipelined buffers spilled under the 128-register cap (ptxas:
  // 56 bytes of stack for a group of 4).
  SCANLAB_NO_UNROLL
  for (index_t k = 0; k + 1 < count; ++k) {
    const streaming::Float4 c_next = streaming::load4(common + (k + 1) * common_stride);
    streaming::Float4 r_next[GROUP];
    SCANLAB_UNROLL
    for (int j = 0; j < GROUP; ++j) r_next[j] = streaming::load4(rows[j] + (k + 1) * row_stride);
    SCANLAB_UNROLL
    for (int j = 0; j < GROUP; ++j) streaming::fma4(acc[j], r[j], c);
    c = c_next;
    SCANLAB_UNROLL
    for (int j = 0; j < GROUP; ++j) r[j] = r_next[j];
  }
  SCANLAB_UNROLL
  for (int j = 0; j < GROUP; ++j) streaming::fma4(acc[j], r[j], c);
}

// Bu[s,b,n,t] = Σ_{h in split s} B[b,n,h,t]·u[b,h,t], h ascending, + bias[b,n,t] in split 0; the
// walk adds the splits in split order (splits give teams to shapes with few (b, tile, state group)
// triples). With one split this is the unsplit sum plus the bias.
template <class Space, int GROUP>
struct BuStage {
  SV3<Space> u, bias;
  SV4<Space> B;
  WV4<Space> Bu;
  StreamGrid grid;
  index_t H, N, L;
  bool vec4 = false;  // 16-byte accesses along seqlen (the grid's tiles are then multiples of 4)

  KOKKOS_INLINE_FUNCTION void operator()(const Member<Space>& m) const {
    index_t b, tile, split, group;
    grid.decompose(m.league_rank(), b, tile, split, group);
    const index_t n0 = group * GROUP, t0 = tile * grid.tile_len;
    const index_t len = min_index(grid.tile_len, L - t0);
    const index_t h_begin = split * H / grid.splits, h_end = (split + 1) * H / grid.splits;
    if (vec4) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(m, len / 4), [&](const index_t q) {
        const index_t t = t0 + 4 * q;
        const float* Bp[GROUP];
        SCANLAB_UNROLL
        for (int j = 0; j < GROUP; ++j) Bp[j] = &B(b, min_index(n0 + j, N - 1), h_begin, t);
        streaming::Float4 acc[GROUP];
        sum4_ascending<GROUP>(Bp, index_t(B.stride_2()), &u(b, h_begin, t), index_t(u.stride_1()), h_end - h_begin,
                              acc);
        SCANLAB_UNROLL
        for (int j = 0; j < GROUP; ++j) {
          if (n0 + j >= N) continue;
          streaming::Float4 r = acc[j];
          if (split == 0 && bias.data() != nullptr) {
            const streaming::Float4 c = streaming::load4(&bias(b, n0 + j, t));
            r.x += c.x; r.y += c.y; r.z += c.z; r.w += c.w;
          }
          streaming::store4(&Bu(split, b, n0 + j, t), r);
        }
      });
      return;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, len), [&](const index_t i) {
      const index_t t = t0 + i;
      index_t n[GROUP];
      float acc[GROUP];
      SCANLAB_UNROLL
      for (int j = 0; j < GROUP; ++j) {
        n[j] = min_index(n0 + j, N - 1);
        acc[j] = 0.0f;
      }
      for (index_t h = h_begin; h < h_end; ++h) {
        const float uh = u(b, h, t);
        SCANLAB_UNROLL
        for (int j = 0; j < GROUP; ++j) acc[j] += B(b, n[j], h, t) * uh;
      }
      const bool add_bias = split == 0 && bias.data() != nullptr;
      SCANLAB_UNROLL
      for (int j = 0; j < GROUP; ++j)
        if (n0 + j < N) Bu(split, b, n0 + j, t) = add_bias ? acc[j] + bias(b, n0 + j, t) : acc[j];
    });
  }
};

// out[b,h,t] = Σ_n C[b,h,n,t]·X[b,n,t], n ascending.
template <class Space, int GROUP>
struct YStage {
  SV4<Space> C;
  WV3<Space> X;
  OV3<Space> out;
  StreamGrid grid;
  index_t H, N, L;
  bool vec4 = false;  // 16-byte accesses along seqlen (the grid's tiles are then multiples of 4)

  KOKKOS_INLINE_FUNCTION void operator()(const Member<Space>& m) const {
    index_t b, tile, split, group;
    grid.decompose(m.league_rank(), b, tile, split, group);
    const index_t h0 = group * GROUP, t0 = tile * grid.tile_len;
    const index_t len = min_index(grid.tile_len, L - t0);
    if (vec4) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(m, len / 4), [&](const index_t q) {
        const index_t t = t0 + 4 * q;
        const float* Cp[GROUP];
        SCANLAB_UNROLL
        for (int j = 0; j < GROUP; ++j) Cp[j] = &C(b, min_index(h0 + j, H - 1), 0, t);
        streaming::Float4 acc[GROUP];
        sum4_ascending<GROUP>(Cp, index_t(C.stride_2()), &X(b, 0, t), index_t(X.stride_1()), N, acc);
        SCANLAB_UNROLL
        for (int j = 0; j < GROUP; ++j)
          if (h0 + j < H) streaming::store4(&out(b, h0 + j, t), acc[j]);
      });
      return;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, len), [&](const index_t i) {
      const index_t t = t0 + i;
      index_t h[GROUP];
      float acc[GROUP];
      SCANLAB_UNROLL
      for (int j = 0; j < GROUP; ++j) {
        h[j] = min_index(h0 + j, H - 1);
        acc[j] = 0.0f;
      }
      for (index_t n = 0; n < N; ++n) {
        const float xn = X(b, n, t);
        SCANLAB_UNROLL
        for (int j = 0; j < GROUP; ++j) acc[j] += C(b, h[j], n, t) * xn;
      }
      SCANLAB_UNROLL
      for (int j = 0; j < GROUP; ++j)
        if (h0 + j < H) out(b, h0 + j, t) = acc[j];
    });
  }
};

// dC[b,h,n,t] = dout[b,h,t]·X[b,n,t] and G[s,b,n,t] = Σ_{h in split s} C[b,h,n,t]·dout[b,h,t].
template <class Space, int GROUP>
struct CPassStage {
  SV4<Space> C;
  SV3<Space> dout;
  WV3<Space> X;
  OV4<Space> dC;
  WV4<Space> G;
  StreamGrid grid;
  index_t H, N, L;

  KOKKOS_INLINE_FUNCTION void operator()(const Member<Space>& m) const {
    index_t b, tile, split, group;
    grid.decompose(m.league_rank(), b, tile, split, group);
    const index_t n0 = group * GROUP, t0 = tile * grid.tile_len;
    const index_t len = min_index(grid.tile_len, L - t0);
    const index_t h_begin = split * H / grid.splits, h_end = (split + 1) * H / grid.splits;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, len), [&](const index_t i) {
      const index_t t = t0 + i;
      index_t n[GROUP];
      float x[GROUP], acc[GROUP];
      SCANLAB_UNROLL
      for (int j = 0; j < GROUP; ++j) {
        n[j] = min_index(n0 + j, N - 1);
        x[j] = X(b, n[j], t);
        acc[j] = 0.0f;
      }
      for (index_t h = h_begin; h < h_end; ++h) {
        const float d = dout(b, h, t);
        SCANLAB_UNROLL
        for (int j = 0; j < GROUP; ++j) {
          if (n0 + j < N) dC(b, h, n[j], t) = d * x[j];
          acc[j] += C(b, h, n[j], t) * d;
        }
      }
      SCANLAB_UNROLL
      for (int j = 0; j < GROUP; ++j)
        if (n0 + j < N) G(split, b, n0 + j, t) = acc[j];
    });
  }
};

// dB[b,n,h,t] = DX[b,n,t]·u[b,h,t] and du[b,h,t] = Σ_n B[b,n,h,t]·DX[b,n,t], n ascending.
template <class Space, int GROUP>
struct BPassStage {
  SV4<Space> B;
  SV3<Space> u;
  WV3<Space> DX;
  OV4<Space> dB;
  OV3<Space> du;
  StreamGrid grid;
  index_t H, N, L;

  KOKKOS_INLINE_FUNCTION void operator()(const Member<Space>& m) const {
    index_t b, tile, split, group;
    grid.decompose(m.league_rank(), b, tile, split, group);
    const index_t h0 = group * GROUP, t0 = tile * grid.tile_len;
    const index_t len = min_index(grid.tile_len, L - t0);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, len), [&](const index_t i) {
      const index_t t = t0 + i;
      index_t h[GROUP];
      float uh[GROUP], acc[GROUP];
      SCANLAB_UNROLL
      for (int j = 0; j < GROUP; ++j) {
        h[j] = min_index(h0 + j, H - 1);
        uh[j] = u(b, h[j], t);
        acc[j] = 0.0f;
      }
      for (index_t n = 0; n < N; ++n) {
        const float dx = DX(b, n, t);
        SCANLAB_UNROLL
        for (int j = 0; j < GROUP; ++j) {
          if (h0 + j < H) dB(b, n, h[j], t) = dx * uh[j];
          acc[j] += B(b, n, h[j], t) * dx;
        }
      }
      SCANLAB_UNROLL
      for (int j = 0; j < GROUP; ++j)
        if (h0 + j < H) du(b, h0 + j, t) = acc[j];
    });
  }
};

// ---------------------------------------------------------------------------------------------
// Time walks. A team owns `rows` consecutive dstate rows of one batch entry and either every
// chunk in order (sequential, and the apply pass of chunked) or one chunk (chunked); one thread
// walks one row, reading its own row of A and the driving term (Σ_s Bu[s] forward, the bias
// inside Bu[0]; Σ_s G[s] backward) in batches of kWalkBatch steps, every load of a batch issued
// before the batch is walked and stored. The rows are b·N·L floats, 1% of a pass's bytes, so a warp's scattered
// 16-byte loads (32 rows, 32 sectors) cost little; what costs is latency. The earlier form staged
// each chunk through team scratch element by element: the compiler cannot move a global load above
// a scratch store that may alias it, so every thread waited out 64 memory round trips per chunk
// (ncu, 2026-12-01: the forward's walk kernels took 146 µs of 1.27 ms at (8,256,64,4096) for
// 17 MB moved), and batching the staging only added index arithmetic (§13 of speed-notes).
//
// Forward:  x = A_bar_t·x + Bu_t, t ascending, from initial_state (or 0).
// Backward: dx_t = g_t + h, h ← A_bar_t·dx_t, t descending, from dlast_state (or 0); h after
//           t = 0 is dinitial_state.
// Summary mode (chunked, first pass): every chunk walks from 0 and writes its end value and the
// product of its A_bars, so that end(true carry) = end(0) + product·carry.
enum class WalkMode { summary, apply };

constexpr int kWalkBatch = kS7WalkBatch;

// Steps [first, first + count) of a row into registers (16-byte loads when `vec` and the batch is
// whole and aligned); steps past count are left as they are.
KOKKOS_FORCEINLINE_FUNCTION void load_steps(const float* row, int count, bool vec, float (&out)[kWalkBatch]) {
  if (vec && count == kWalkBatch) {
    SCANLAB_UNROLL
    for (int q = 0; q < kWalkBatch / 4; ++q) {
      const streaming::Float4 v = streaming::load4(row + 4 * q);
      out[4 * q] = v.x; out[4 * q + 1] = v.y; out[4 * q + 2] = v.z; out[4 * q + 3] = v.w;
    }
    return;
  }
  SCANLAB_UNROLL
  for (int j = 0; j < kWalkBatch; ++j)
    if (j < count) out[j] = row[j];
}
KOKKOS_FORCEINLINE_FUNCTION void store_steps(float* row, int count, bool vec, const float (&in)[kWalkBatch]) {
  if (vec && count == kWalkBatch) {
    SCANLAB_UNROLL
    for (int q = 0; q < kWalkBatch / 4; ++q)
      streaming::store4(row + 4 * q, streaming::Float4{in[4 * q], in[4 * q + 1], in[4 * q + 2], in[4 * q + 3]});
    return;
  }
  SCANLAB_UNROLL
  for (int j = 0; j < kWalkBatch; ++j)
    if (j < count) row[j] = in[j];
}

// "scanned"'s work tag: one team per (b, n) row, one thread per chunk, the chunks' maps combined
// by a team-wide scan (WalkStage::operator()(ScannedWalk, ·) says how).
struct ScannedWalk {};

// One step of the walk: forward x = A_bar·x + Bu (the output is x); backward dx = g + h,
// h ← A_bar·dx (the output is dx). Every impl walks through this one function.
template <bool REVERSE>
KOKKOS_FORCEINLINE_FUNCTION float walk_step(float& value, float a_bar, float drive) {
  if (!REVERSE) {
    value = a_bar * value + drive;
    return value;
  }
  const float dx = drive + value;
  value = a_bar * dx;
  return dx;
}

template <class Space, bool REVERSE>
struct WalkStage {
  // Inputs of the walk. The driving term is Σ_s partials[s] (split order).
  SV3<Space> A;
  WV4<Space> partials;           // forward: Bu's splits of Σ_h B·u + bias; backward: G's of Σ_h C·dout
  Kokkos::View<const float**, Kokkos::LayoutStride, typename Space::memory_space> start;  // initial_state / dlast_state
  WV3<Space> carry;              // chunked apply: the value entering each chunk
  WV3<Space> chunk_end, chunk_prod;  // summary outputs
  // Outputs of the apply pass.
  WV3<Space> states;  // forward: X; backward: DX
  WV3<Space> X;       // backward: the forward states, for dA
  Kokkos::View<const float**, Kokkos::LayoutStride, typename Space::memory_space> initial_state;  // backward dA at t = 0
  OV3<Space> dA, dbias;
  Kokkos::View<float**, Kokkos::LayoutStride, typename Space::memory_space> final_value;  // last_state / dinitial_state

  WalkMode mode = WalkMode::apply;
  bool all_chunks = true;  // one team walks every chunk in order
  bool vec4 = false;       // every row the walk reads or writes allows 16-byte accesses at t % 4 == 0
  index_t N, L, rows, chunk_len, chunks, row_tiles, splits;

  // A batch of row (b, n), steps [first, first + count): A into a, the driving term Σ_s partials[s]
  // (split order, ((P0 + P1) + P2) ...; two splits' loads in flight before their adds) into v,
  // and for the backward's dA (with_x_previous) x_{t−1} into x_previous. Steps past count are 0.
  KOKKOS_FORCEINLINE_FUNCTION void load_batch(index_t b, index_t n, index_t first, int count, bool with_x_previous,
                                              float (&a)[kWalkBatch], float (&v)[kWalkBatch],
                                              float (&x_previous)[kWalkBatch]) const {
    const bool vec = vec4 && first % 4 == 0;
    float part[kWalkBatch];
    SCANLAB_UNROLL
    for (int j = 0; j < kWalkBatch; ++j) a[j] = v[j] = part[j] = x_previous[j] = 0.0f;
    load_steps(&A(b, n, first), count, vec, a);
    for (index_t s = 0; s < splits; s += 2) {
      float second[kWalkBatch];
      load_steps(&partials(s, b, n, first), count, vec, part);
      if (s + 1 < splits) load_steps(&partials(s + 1, b, n, first), count, vec, second);
      SCANLAB_UNROLL
      for (int j = 0; j < kWalkBatch; ++j) v[j] += part[j];
      if (s + 1 < splits) {
        SCANLAB_UNROLL
        for (int j = 0; j < kWalkBatch; ++j) v[j] += second[j];
      }
    }
    if (!with_x_previous) return;
    SCANLAB_UNROLL
    for (int j = 0; j < kWalkBatch; ++j) {
      if (j >= count) continue;
      if (first + j > 0)
        x_previous[j] = X(b, n, first + j - 1);
      else if (initial_state.data() != nullptr)
        x_previous[j] = initial_state(b, n);
    }
  }

  // A walked batch's outputs: the states (X forward, DX backward) and, backward, dbias = dx and
  // dA = dx·x_{t−1}·dA_bar/dA.
  KOKKOS_FORCEINLINE_FUNCTION void store_batch(index_t b, index_t n, index_t first, int count,
                                               const float (&a)[kWalkBatch], const float (&out)[kWalkBatch],
                                               const float (&x_previous)[kWalkBatch]) const {
    const bool vec = vec4 && first % 4 == 0;
    store_steps(&states(b, n, first), count, vec, out);
    if (!REVERSE) return;
    if (dbias.data() != nullptr) store_steps(&dbias(b, n, first), count, vec, out);
    float grad[kWalkBatch];
    SCANLAB_UNROLL
    for (int j = 0; j < kWalkBatch; ++j) grad[j] = out[j] * x_previous[j] * s7_a_bar_derivative(a[j]);
    store_steps(&dA(b, n, first), count, vec, grad);
  }

  // "sequential" (all_chunks) and "chunked"'s summary and apply passes.
  KOKKOS_INLINE_FUNCTION void operator()(const Member<Space>& m) const {
    index_t rank = m.league_rank();
    index_t chunk_first = 0, chunk_count = chunks;
    if (!all_chunks) {
      chunk_first = rank % chunks;
      chunk_count = 1;
      rank /= chunks;
    }
    const index_t row_tile = rank % row_tiles, b = rank / row_tiles;
    const index_t n0 = row_tile * rows, nrows = min_index(rows, N - n0);
    const bool summary = mode == WalkMode::summary;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, nrows), [&](const index_t r) {
      const index_t n = n0 + r;
      float value = 0.0f;
      if (summary)
        value = 0.0f;
      else if (!all_chunks)
        value = carry(b, n, chunk_first);
      else if (start.data() != nullptr)
        value = start(b, n);
      for (index_t step = 0; step < chunk_count; ++step) {
        const index_t c = REVERSE && all_chunks ? chunks - 1 - step : chunk_first + step;
        const index_t t0 = c * chunk_len, len = min_index(chunk_len, L - t0);
        float product = 1.0f;
        // Batches in walk order: ascending from t0 forward, descending from the chunk's end backward.
        for (index_t done = 0; done < len; done += kWalkBatch) {
          const int count = int(min_index(kWalkBatch, len - done));
          const index_t first = REVERSE ? t0 + len - done - count : t0 + done;  // the batch's lowest step
          float a[kWalkBatch], v[kWalkBatch], x_previous[kWalkBatch], out[kWalkBatch];
          load_batch(b, n, first, count, REVERSE && !summary, a, v, x_previous);
          SCANLAB_UNROLL
          for (int i = 0; i < kWalkBatch; ++i) {
            const int j = REVERSE ? kWalkBatch - 1 - i : i;
            out[j] = 0.0f;
            if (j >= count) continue;
            const float a_bar = s7_a_bar(a[j]);
            out[j] = walk_step<REVERSE>(value, a_bar, v[j]);
            if (summary) product *= a_bar;
          }
          if (!summary) store_batch(b, n, first, count, a, out, x_previous);
        }
        if (summary) {
          chunk_end(b, n, c) = value;
          chunk_prod(b, n, c) = product;
        } else {
          const index_t terminal = REVERSE ? 0 : chunks - 1;
          if (c == terminal && final_value.data() != nullptr) final_value(b, n) = value;
        }
      }
    });
  }

  // "scanned": one team per (b, n) row and one launch. Thread i of a team of T owns the chunk at
  // walk position w = round·T + i (chunk_len ≤ kWalkBatch steps, held in registers throughout).
  // Per round of T chunks: each thread walks its chunk from 0, which gives the chunk's map
  // x ↦ end + product·x; an inclusive Hillis–Steele scan over the team composes the maps of
  // chunks 0..i in a tree fixed by T alone (deterministic); each thread then walks its chunk again
  // from the round's carry pushed through the maps before it; the last chunk's walked value carries
  // the round into the next. "chunked" does the same in three launches through global memory (summaries,
  // carries, apply: 36-42 µs of an s7_scan forward on the H200, 2026-12-01-s7/final/).
  KOKKOS_INLINE_FUNCTION void operator()(ScannedWalk, const Member<Space>& m) const {
    const index_t b = m.league_rank() / N, n = m.league_rank() % N;
    const int T = m.team_size(), i = m.team_rank();
    // Two buffers of T (product, end) pairs, which the scan alternates between, and the round's
    // last walked value (s7_scanned_walk_scratch_bytes).
    ScratchFloats<Space> maps(m.team_scratch(0), std::size_t(4) * T + 1);
    float carry_value = start.data() != nullptr ? start(b, n) : 0.0f;
    const index_t rounds = ceil_div(chunks, index_t(T));
    for (index_t round = 0; round < rounds; ++round) {
      const index_t w = round * T + i;
      const bool active = w < chunks;
      const index_t c = REVERSE ? chunks - 1 - w : w;
      const index_t first = active ? c * chunk_len : 0;
      const int count = active ? int(min_index(chunk_len, L - first)) : 0;
      float a[kWalkBatch], v[kWalkBatch], x_previous[kWalkBatch], a_bar[kWalkBatch], out[kWalkBatch];
      if (active)
        load_batch(b, n, first, count, REVERSE, a, v, x_previous);
      float end = 0.0f, product = 1.0f;  // an idle thread holds the identity map
      SCANLAB_UNROLL
      for (int s = 0; s < kWalkBatch; ++s) {
        const int j = REVERSE ? kWalkBatch - 1 - s : s;
        a_bar[j] = 0.0f;
        if (j >= count) continue;
        a_bar[j] = s7_a_bar(a[j]);
        walk_step<REVERSE>(end, a_bar[j], v[j]);
        product *= a_bar[j];
      }
      // Inclusive scan: after it, buffer `in` holds the map of chunks 0..i of this round.
      int in = 0;
      maps(2 * i) = product;
      maps(2 * i + 1) = end;
      m.team_barrier();
      for (int offset = 1; offset < T; offset *= 2) {
        const int from = in * 2 * T, to = (1 - in) * 2 * T;
        float p = maps(from + 2 * i), e = maps(from + 2 * i + 1);
        if (i >= offset) {  // earlier map (pe, ee), then this one: x ↦ e + p·(ee + pe·x)
          const float pe = maps(from + 2 * (i - offset)), ee = maps(from + 2 * (i - offset) + 1);
          e = e + p * ee;
          p = pe * p;
        }
        maps(to + 2 * i) = p;
        maps(to + 2 * i + 1) = e;
        m.team_barrier();
        in = 1 - in;
      }
      const int base = in * 2 * T;
      float value = carry_value;
      if (i > 0) value = maps(base + 2 * (i - 1) + 1) + maps(base + 2 * (i - 1)) * carry_value;
      SCANLAB_UNROLL
      for (int s = 0; s < kWalkBatch; ++s) {
        const int j = REVERSE ? kWalkBatch - 1 - s : s;
        out[j] = 0.0f;
        if (j >= count) continue;
        out[j] = walk_step<REVERSE>(value, a_bar[j], v[j]);
      }
      if (active) store_batch(b, n, first, count, a, out, x_previous);
      if (w == chunks - 1 && final_value.data() != nullptr) final_value(b, n) = value;
      // The next round starts from the last chunk's walked value (not the composed map's, which
      // rounds differently): with one thread a team this is the sequential walk, bit for bit.
      if (i == T - 1) maps(4 * T) = value;
      m.team_barrier();  // also: every thread is done reading this round's maps
      carry_value = maps(4 * T);
    }
  }
};

// Chunked, second pass: per (b, n) the carries in chunk order, carry_{c+1} = end_c + prod_c·carry_c
// (forward, from initial_state) or carry_{c−1} = end_c + prod_c·carry_c (backward, from dlast_state).
template <class Space, bool REVERSE>
struct PropagateStage {
  WV3<Space> chunk_end, chunk_prod, carry;
  Kokkos::View<const float**, Kokkos::LayoutStride, typename Space::memory_space> start;
  index_t N, chunks, rows, row_tiles;

  KOKKOS_INLINE_FUNCTION void operator()(const Member<Space>& m) const {
    const index_t row_tile = m.league_rank() % row_tiles, b = m.league_rank() / row_tiles;
    const index_t n0 = row_tile * rows, nrows = min_index(rows, N - n0);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, nrows), [&](const index_t r) {
      const index_t n = n0 + r;
      float value = start.data() != nullptr ? start(b, n) : 0.0f;
      // kWalkBatch chunks' summaries loaded before their carries are stored (the walks say why).
      for (index_t first = 0; first < chunks; first += kWalkBatch) {
        float end[kWalkBatch], prod[kWalkBatch];
        SCANLAB_UNROLL
        for (int j = 0; j < kWalkBatch; ++j) {
          const index_t step = first + j, c = REVERSE ? chunks - 1 - step : step;
          end[j] = step < chunks ? chunk_end(b, n, c) : 0.0f;
          prod[j] = step < chunks ? chunk_prod(b, n, c) : 0.0f;
        }
        SCANLAB_UNROLL
        for (int j = 0; j < kWalkBatch; ++j) {
          const index_t step = first + j, c = REVERSE ? chunks - 1 - step : step;
          if (step >= chunks) break;
          carry(b, n, c) = value;
          value = end[j] + prod[j] * value;
        }
      }
    });
  }
};

// ---------------------------------------------------------------------------------------------
// Launchers.

// Streaming stages are built for two or more teams of up to 256 threads per SM, i.e. at most 128
// registers a thread: left free, ptxas took 136 for the Bu stage at a group of 4 once it summed a
// split of dim (102 before), 12 warps per SM instead of 16, and the stage ran 10% slower on the
// H200 (2026-12-01-s7). Larger teams launch unbounded.
template <class Space, class Functor>
void launch_streaming(const char* label, const Space& space, index_t league, int team_size, const Functor& f) {
  if (team_size <= 256)
    launch<Space, Kokkos::LaunchBounds<256, 2>>(label, space, league, team_size, 0, f);
  else
    launch<Space>(label, space, league, team_size, 0, f);
}

template <template <class, int> class Stage, class Space, class Setup>
void launch_grouped(const char* label, const Space& space, int group, index_t league, int team_size,
                    const Setup& setup) {
  switch (group) {
    case 1: { Stage<Space, 1> s; setup(s); launch_streaming(label, space, league, team_size, s); return; }
    case 2: { Stage<Space, 2> s; setup(s); launch_streaming(label, space, league, team_size, s); return; }
    case 4: { Stage<Space, 4> s; setup(s); launch_streaming(label, space, league, team_size, s); return; }
    case 8: { Stage<Space, 8> s; setup(s); launch_streaming(label, space, league, team_size, s); return; }
    default: throw std::invalid_argument(std::string(label) + ": group size must be 1, 2, 4 or 8");
  }
}

index_t chunk_count(const S7ScanProblem& p, const S7ScanConfig& c) { return ceil_div(p.seqlen, c.chunk_len); }
index_t walk_rows(const S7ScanProblem& p, const S7ScanConfig& c) {
  return min_index(c.walk_team_size, p.dstate);
}

void require_valid(const S7ScanProblem& p, const S7ScanConfig& c, BackendKind backend) {
  const std::string why = c.invalid_reason(p, backend);
  if (!why.empty()) throw std::invalid_argument("s7_scan config " + c.to_json().dump() + ": " + why);
}

template <class Space>
BackendKind backend_of() {
#ifdef KOKKOS_ENABLE_CUDA
  if (std::is_same<Space, Kokkos::Cuda>::value) return BackendKind::cuda;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  if (std::is_same<Space, Kokkos::OpenMP>::value) return BackendKind::openmp;
#endif
  return BackendKind::serial;
}

template <class View>
void require_extents(const View& v, const char* name, std::initializer_list<index_t> extents) {
  int axis = 0;
  for (index_t e : extents) {
    if (index_t(v.extent(axis)) != e) {
      std::ostringstream s;
      s << "s7_scan: " << name << " has extent " << v.extent(axis) << " on axis " << axis << ", expected " << e;
      throw std::invalid_argument(s.str());
    }
    ++axis;
  }
}

template <class Space>
void check_workspace(const S7ScanProblem& p, const S7ScanConfig& c, const S7ScanWorkspace<Space>& w, bool backward) {
  require_extents(w.X, "workspace X", {p.batch, p.dstate, p.seqlen});
  if (!backward) require_extents(w.Bu, "workspace Bu", {c.fwd_dim_splits, p.batch, p.dstate, p.seqlen});
  if (backward) {
    require_extents(w.DX, "workspace DX", {p.batch, p.dstate, p.seqlen});
    require_extents(w.G, "workspace G", {c.bwd_dim_splits, p.batch, p.dstate, p.seqlen});
  }
  if (c.impl == "chunked") {
    const index_t nc = chunk_count(p, c);
    require_extents(w.carry, "workspace carry", {p.batch, p.dstate, nc});
    require_extents(w.chunk_end, "workspace chunk_end", {p.batch, p.dstate, nc});
    require_extents(w.chunk_prod, "workspace chunk_prod", {p.batch, p.dstate, nc});
  }
}

template <class Space, bool REVERSE>
void run_walk(const S7ScanProblem& p, const S7ScanConfig& c, WalkStage<Space, REVERSE> walk, const Space& space,
              S7ScanWorkspace<Space>& w, const char* summary_label, const char* propagate_label,
              const char* apply_label) {
  const index_t rows = walk_rows(p, c), row_tiles = ceil_div(p.dstate, rows), nc = chunk_count(p, c);
  walk.N = p.dstate;
  walk.L = p.seqlen;
  walk.rows = rows;
  walk.chunk_len = c.chunk_len;
  walk.chunks = nc;
  walk.row_tiles = row_tiles;
  walk.splits = REVERSE ? c.bwd_dim_splits : c.fwd_dim_splits;
  walk.vec4 = views_allow_vec4(p.seqlen, walk.A, walk.partials, walk.states, walk.X, walk.dA, walk.dbias);
  const int team = static_cast<int>(rows);
  if (c.impl == "scanned") {
    launch<Space, ScannedWalk>(apply_label, space, p.batch * p.dstate, c.walk_team_size,
                               std::size_t(s7_scanned_walk_scratch_bytes(c.walk_team_size)), walk);
    return;
  }
  if (c.impl == "sequential") {
    walk.mode = WalkMode::apply;
    walk.all_chunks = true;
    launch(apply_label, space, p.batch * row_tiles, team, 0, walk);
    return;
  }
  // chunked: summaries, carries, then every chunk again from its carry. (Folding the carries in
  // the apply pass instead, each thread over the chunks before its own, cost more than this
  // kernel where chunks are many: 2026-12-01-s7/carry-fold/.)
  walk.chunk_end = w.chunk_end;
  walk.chunk_prod = w.chunk_prod;
  walk.carry = w.carry;
  walk.mode = WalkMode::summary;
  walk.all_chunks = false;
  launch(summary_label, space, p.batch * row_tiles * nc, team, 0, walk);
  PropagateStage<Space, REVERSE> propagate;
  propagate.chunk_end = w.chunk_end;
  propagate.chunk_prod = w.chunk_prod;
  propagate.carry = w.carry;
  propagate.start = walk.start;
  propagate.N = p.dstate;
  propagate.chunks = nc;
  propagate.rows = rows;
  propagate.row_tiles = row_tiles;
  launch(propagate_label, space, p.batch * row_tiles, team, 0, propagate);
  walk.mode = WalkMode::apply;
  launch(apply_label, space, p.batch * row_tiles * nc, team, 0, walk);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

template <class Space>
std::int64_t S7ScanWorkspace<Space>::bytes() const {
  return std::int64_t(sizeof(float)) *
         std::int64_t(Bu.span() + X.span() + DX.span() + chunk_end.span() + chunk_prod.span() + carry.span() +
                      G.span());
}

template <class Space>
S7ScanWorkspace<Space> s7_scan_allocate_workspace(const S7ScanProblem& p, const S7ScanConfig& c) {
  using View3 = typename S7ScanWorkspace<Space>::View3;
  using View4 = typename S7ScanWorkspace<Space>::View4;
  S7ScanWorkspace<Space> w;
  const auto b = std::size_t(p.batch), N = std::size_t(p.dstate), L = std::size_t(p.seqlen);
  const auto alloc3 = [](const char* label, std::size_t e0, std::size_t e1, std::size_t e2) {
    return View3(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing), e0, e1, e2);
  };
  w.Bu = View4(Kokkos::view_alloc("s7_scan::Bu", Kokkos::WithoutInitializing), std::size_t(c.fwd_dim_splits), b, N,
               L);
  w.X = alloc3("s7_scan::X", b, N, L);
  if (p.with_backward) {
    w.DX = alloc3("s7_scan::DX", b, N, L);
    w.G = View4(Kokkos::view_alloc("s7_scan::G", Kokkos::WithoutInitializing), std::size_t(c.bwd_dim_splits), b, N,
                L);
  }
  if (c.impl == "chunked") {
    const auto nc = std::size_t(chunk_count(p, c));
    w.chunk_end = alloc3("s7_scan::chunk_end", b, N, nc);
    w.chunk_prod = alloc3("s7_scan::chunk_prod", b, N, nc);
    w.carry = alloc3("s7_scan::carry", b, N, nc);
  }
  return w;
}

template <class Space>
S7ScanViews<Space> S7ScanTensors<Space>::views() const {
  S7ScanViews<Space> v;
  v.u = u; v.A = A; v.bias = bias; v.B = B; v.C = C; v.initial_state = initial_state;
  v.dout = dout; v.dlast_state = dlast_state;
  v.out = out; v.last_state = last_state;
  v.du = du; v.dA = dA; v.dbias = dbias; v.dB = dB; v.dC = dC; v.dinitial_state = dinitial_state;
  return v;
}

template <class Space>
std::int64_t S7ScanTensors<Space>::tensor_bytes() const {
  const std::size_t floats = u.span() + A.span() + bias.span() + B.span() + C.span() + initial_state.span() +
                             dout.span() + dlast_state.span() + out.span() + last_state.span() + du.span() +
                             dA.span() + dbias.span() + dB.span() + dC.span() + dinitial_state.span();
  return std::int64_t(sizeof(float) * floats);
}

template <class Space>
S7ScanTensors<Space> s7_scan_allocate(const S7ScanProblem& p, const S7ScanConfig& c) {
  p.validate();
  S7ScanTensors<Space> t;
  using V3 = typename S7ScanTensors<Space>::template V<float***>;
  using V4 = typename S7ScanTensors<Space>::template V<float****>;
  using V2 = typename S7ScanTensors<Space>::template V<float**>;
  const auto b = std::size_t(p.batch), H = std::size_t(p.dim), N = std::size_t(p.dstate), L = std::size_t(p.seqlen);
  t.u = V3("s7_scan::u", b, H, L);
  t.A = V3("s7_scan::A", b, N, L);
  t.B = V4("s7_scan::B", b, N, H, L);
  t.C = V4("s7_scan::C", b, H, N, L);
  if (p.has_bias) t.bias = V3("s7_scan::bias", b, N, L);
  if (p.has_initial_state) t.initial_state = V2("s7_scan::initial_state", b, N);
  t.out = V3("s7_scan::out", b, H, L);
  t.last_state = V2("s7_scan::last_state", b, N);
  if (p.with_backward) {
    t.dout = V3("s7_scan::dout", b, H, L);
    if (p.has_dlast_state) t.dlast_state = V2("s7_scan::dlast_state", b, N);
    t.du = V3("s7_scan::du", b, H, L);
    t.dA = V3("s7_scan::dA", b, N, L);
    t.dB = V4("s7_scan::dB", b, N, H, L);
    t.dC = V4("s7_scan::dC", b, H, N, L);
    if (p.has_bias) t.dbias = V3("s7_scan::dbias", b, N, L);
    if (p.has_initial_state) t.dinitial_state = V2("s7_scan::dinitial_state", b, N);
  }
  t.workspace = s7_scan_allocate_workspace<Space>(p, c);
  return t;
}

template <class Space>
void s7_scan_forward_views(const S7ScanProblem& p, const S7ScanConfig& c, const S7ScanViews<Space>& v,
                           S7ScanWorkspace<Space>& w, const Space& space) {
  p.validate();
  require_valid(p, c, backend_of<Space>());
  check_workspace(p, c, w, false);
  const index_t H = p.dim, N = p.dstate, L = p.seqlen;

  {  // 1. Bu
    const bool vec4 = views_allow_vec4(L, v.u, v.bias, v.B, w.Bu);
    const StreamGrid grid = stream_grid(p, c, N, c.states_per_thread, c.fwd_dim_splits, vec4 ? 4 : 1);
    launch_grouped<BuStage>("s7_scan::forward_bu", space, c.states_per_thread,
                            p.batch * grid.tiles * grid.splits * grid.groups, c.team_size, [&](auto& s) {
                              s.u = v.u; s.bias = v.bias; s.B = v.B; s.Bu = w.Bu; s.grid = grid;
                              s.H = H; s.N = N; s.L = L; s.vec4 = vec4;
                            });
  }
  {  // 2. walk
    WalkStage<Space, false> walk;
    walk.A = v.A;
    walk.partials = w.Bu;
    walk.start = v.initial_state;
    walk.states = w.X;
    walk.final_value = v.last_state;
    run_walk(p, c, walk, space, w, "s7_scan::forward_chunk_summary", "s7_scan::forward_carry",
             "s7_scan::forward_walk");
  }
  {  // 3. y
    const bool vec4 = views_allow_vec4(L, v.C, w.X, v.out);
    const StreamGrid grid = stream_grid(p, c, H, c.dims_per_thread, 1, vec4 ? 4 : 1);
    launch_grouped<YStage>("s7_scan::forward_y", space, c.dims_per_thread, p.batch * grid.tiles * grid.groups,
                           c.team_size, [&](auto& s) {
                             s.C = v.C; s.X = w.X; s.out = v.out; s.grid = grid; s.H = H; s.N = N; s.L = L;
                             s.vec4 = vec4;
                           });
  }
  w.forward_done = true;
}

template <class Space>
void s7_scan_backward_views(const S7ScanProblem& p, const S7ScanConfig& c, const S7ScanViews<Space>& v,
                            S7ScanWorkspace<Space>& w, const Space& space) {
  p.validate();
  if (!p.with_backward) throw std::invalid_argument("s7_scan backward: the problem has no dout (with_backward is false)");
  require_valid(p, c, backend_of<Space>());
  check_workspace(p, c, w, true);
  if (!w.forward_done)
    throw std::logic_error("s7_scan backward: run s7_scan_forward with this workspace first (the backward uses its states)");
  const index_t H = p.dim, N = p.dstate, L = p.seqlen;

  {  // 1. C pass
    const StreamGrid grid = stream_grid(p, c, N, c.states_per_thread, c.bwd_dim_splits);
    launch_grouped<CPassStage>("s7_scan::backward_c_pass", space, c.states_per_thread,
                               p.batch * grid.tiles * grid.splits * grid.groups, c.team_size, [&](auto& s) {
                                 s.C = v.C; s.dout = v.dout; s.X = w.X; s.dC = v.dC; s.G = w.G; s.grid = grid;
                                 s.H = H; s.N = N; s.L = L;
                               });
  }
  {  // 2. reverse walk
    WalkStage<Space, true> walk;
    walk.A = v.A;
    walk.partials = w.G;
    walk.start = v.dlast_state;
    walk.states = w.DX;
    walk.X = w.X;
    walk.initial_state = v.initial_state;
    walk.dA = v.dA;
    walk.dbias = v.dbias;
    walk.final_value = v.dinitial_state;
    run_walk(p, c, walk, space, w, "s7_scan::backward_chunk_summary", "s7_scan::backward_carry",
             "s7_scan::backward_walk");
  }
  {  // 3. B pass
    const StreamGrid grid = stream_grid(p, c, H, c.dims_per_thread, 1);
    launch_grouped<BPassStage>("s7_scan::backward_b_pass", space, c.dims_per_thread,
                               p.batch * grid.tiles * grid.groups, c.team_size, [&](auto& s) {
                                 s.B = v.B; s.u = v.u; s.DX = w.DX; s.dB = v.dB; s.du = v.du; s.grid = grid;
                                 s.H = H; s.N = N; s.L = L;
                               });
  }
}

template <class Space>
void s7_scan_forward(const S7ScanProblem& p, const S7ScanConfig& c, S7ScanTensors<Space>& t, const Space& space) {
  s7_scan_forward_views<Space>(p, c, t.views(), t.workspace, space);
}

template <class Space>
void s7_scan_backward(const S7ScanProblem& p, const S7ScanConfig& c, S7ScanTensors<Space>& t, const Space& space) {
  s7_scan_backward_views<Space>(p, c, t.views(), t.workspace, space);
}

#ifdef KOKKOS_ENABLE_SERIAL
SCANLAB_S7_SCAN_DECLARE(, Kokkos::Serial)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
SCANLAB_S7_SCAN_DECLARE(, Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_CUDA
SCANLAB_S7_SCAN_DECLARE(, Kokkos::Cuda)
#endif

// ---------------------------------------------------------------------------------------------
// Host bridge and backend limits.

namespace {

template <class Space>
TensorMap run_s7_scan_on(const S7ScanProblem& p, const TensorMap& inputs, const S7ScanConfig& c, const Space& space) {
  using T = S7ScanTensors<Space>;
  using V3 = typename T::template V<float***>;
  using V4 = typename T::template V<float****>;
  using V2 = typename T::template V<float**>;
  T t;
  const auto b = std::size_t(p.batch), H = std::size_t(p.dim), N = std::size_t(p.dstate), L = std::size_t(p.seqlen);
  t.u = to_device<V3>(require(inputs, "u"), "u");
  t.A = to_device<V3>(require(inputs, "A"), "A");
  t.B = to_device<V4>(require(inputs, "B"), "B");
  t.C = to_device<V4>(require(inputs, "C"), "C");
  if (p.has_bias) t.bias = to_device<V3>(require(inputs, "bias"), "bias");
  if (p.has_initial_state) t.initial_state = to_device<V2>(require(inputs, "initial_state"), "initial_state");
  t.out = poisoned<V3>("out", b, H, L);
  t.last_state = poisoned<V2>("last_state", b, N);
  if (p.with_backward) {
    t.dout = to_device<V3>(require(inputs, "dout"), "dout");
    if (p.has_dlast_state) t.dlast_state = to_device<V2>(require(inputs, "dlast_state"), "dlast_state");
    t.du = poisoned<V3>("du", b, H, L);
    t.dA = poisoned<V3>("dA", b, N, L);
    t.dB = poisoned<V4>("dB", b, N, H, L);
    t.dC = poisoned<V4>("dC", b, H, N, L);
    if (p.has_bias) t.dbias = poisoned<V3>("dbias", b, N, L);
    if (p.has_initial_state) t.dinitial_state = poisoned<V2>("dinitial_state", b, N);
  }
  t.workspace = s7_scan_allocate_workspace<Space>(p, c);
  check_device(space, "s7_scan set-up");
  s7_scan_forward<Space>(p, c, t, space);
  check_device(space, "s7_scan forward");
  if (p.with_backward) {
    s7_scan_backward<Space>(p, c, t, space);
    check_device(space, "s7_scan backward");
  }

  TensorMap result;
  const Shape bhl{p.batch, p.dim, p.seqlen}, bnl{p.batch, p.dstate, p.seqlen}, state{p.batch, p.dstate};
  result["out"] = to_host(t.out, bhl);
  result["last_state"] = to_host(t.last_state, state);
  if (p.with_backward) {
    result["du"] = to_host(t.du, bhl);
    result["dA"] = to_host(t.dA, bnl);
    result["dB"] = to_host(t.dB, {p.batch, p.dstate, p.dim, p.seqlen});
    result["dC"] = to_host(t.dC, {p.batch, p.dim, p.dstate, p.seqlen});
    if (p.has_bias) result["dbias"] = to_host(t.dbias, bnl);
    if (p.has_initial_state) result["dinitial_state"] = to_host(t.dinitial_state, state);
  }
  return result;
}

}  // namespace

TensorMap run_s7_scan(const S7ScanProblem& p, const TensorMap& inputs, BackendKind backend, const S7ScanConfig& c) {
  p.validate();
  require_valid(p, c, backend);
  for (const auto& spec : p.tensors()) {
    if (spec.role != TensorRole::input && spec.role != TensorRole::grad_input) continue;
    const Tensor& t = require(inputs, spec.name);
    if (t.shape != spec.shape)
      throw std::invalid_argument("s7_scan: input '" + spec.name + "' has shape " + shape_string(t.shape) +
                                  ", expected " + shape_string(spec.shape));
  }
  return dispatch_space(backend, [&](auto space) { return run_s7_scan_on(p, inputs, c, space); });
}

namespace {
// A functor with no state, to ask a TeamPolicy for its largest team independently of any kernel.
template <class Space>
struct NoOpTeam {
  KOKKOS_INLINE_FUNCTION void operator()(const Member<Space>&) const {}
};
template <class Space>
int policy_team_size_max() {
  return Kokkos::TeamPolicy<Space>(1, 1).team_size_max(NoOpTeam<Space>(), Kokkos::ParallelForTag());
}
// The walk kernels hold batches of steps in registers (on the H200 ~100-150 a thread), so CUDA
// runs them in smaller teams than the space's largest: the smallest maximum over all four.
template <class Space>
int walk_policy_team_size_max() {
  const WalkStage<Space, false> forward{};
  const WalkStage<Space, true> backward{};
  const Kokkos::ParallelForTag tag;
  return std::min({Kokkos::TeamPolicy<Space>(1, 1).team_size_max(forward, tag),
                   Kokkos::TeamPolicy<Space>(1, 1).team_size_max(backward, tag),
                   Kokkos::TeamPolicy<Space, ScannedWalk>(1, 1).team_size_max(forward, tag),
                   Kokkos::TeamPolicy<Space, ScannedWalk>(1, 1).team_size_max(backward, tag)});
}
// query(Space()) for the backend's execution space; 0 where that space is not compiled in.
template <class Query>
std::int64_t on_space(BackendKind backend, const Query& query) {
  switch (backend) {
#ifdef KOKKOS_ENABLE_SERIAL
    case BackendKind::serial: return query(Kokkos::Serial());
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    case BackendKind::openmp: return query(Kokkos::OpenMP());
#endif
#ifdef KOKKOS_ENABLE_CUDA
    case BackendKind::cuda: return query(Kokkos::Cuda());
#endif
    default: return 0;
  }
}
}  // namespace

int s7_walk_max_team_size(BackendKind backend) {
  return int(on_space(backend, [](auto space) { return walk_policy_team_size_max<decltype(space)>(); }));
}

int s7_max_team_size(BackendKind backend) {
  return int(on_space(backend, [](auto space) { return policy_team_size_max<decltype(space)>(); }));
}

std::int64_t s7_max_team_scratch_bytes(BackendKind backend) {
  return on_space(backend, [](auto space) {
    return std::int64_t(Kokkos::TeamPolicy<decltype(space)>::scratch_size_max(0));
  });
}

}  // namespace scanlab::kernels
