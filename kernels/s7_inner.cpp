// s7_inner: the layer's GEMMs (kernels/matmul.hpp), elementwise stages and the s7_scan kernels on
// strided views, as kernels/s7_inner.hpp lays out; the device-level passes and the host bridge.
#include "s7_inner.hpp"

#include <climits>
#include <sstream>

#include "matmul.hpp"
#include "s7_device.hpp"

namespace scanlab::kernels {
namespace {

using namespace s7_detail;
using index_t = std::int64_t;

template <class Space>
using Member = typename Kokkos::TeamPolicy<Space>::member_type;
template <class Space>
using W3 = typename S7InnerWorkspace<Space>::View3;
template <class Space>
using ConstV1 = Kokkos::View<const float*, Kokkos::LayoutRight, typename Space::memory_space>;
template <class Space>
using ConstV3 = Kokkos::View<const float***, Kokkos::LayoutRight, typename Space::memory_space>;
template <class Space>
using OutV3 = Kokkos::View<float***, Kokkos::LayoutRight, typename Space::memory_space>;

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

// ---------------------------------------------------------------------------------------------
// Elementwise stages over a contiguous index range: team_size·items_per_thread consecutive
// indices per team, thread k of a team takes k, k + team_size, ... (coalesced). Op(i) computes
// element i from its own inputs only, so the result does not depend on the schedule.

template <class Space, class Op>
struct FlatStage {
  Op op;
  index_t count, per_team;
  KOKKOS_INLINE_FUNCTION void operator()(const Member<Space>& m) const {
    const index_t begin = index_t(m.league_rank()) * per_team;
    const index_t end = begin + per_team < count ? begin + per_team : count;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, begin, end), [&](const index_t i) { op(i); });
  }
};

template <class Space, class Op>
void launch_flat(const char* label, const Space& space, const S7InnerConfig& c, index_t count, const Op& op) {
  if (count <= 0) return;
  FlatStage<Space, Op> stage{op, count, index_t(c.elementwise_team_size) * c.elementwise_items_per_thread};
  const index_t teams = ceil_div(count, stage.per_team);
  if (teams > INT_MAX) throw std::invalid_argument(std::string(label) + ": too many teams");
  Kokkos::parallel_for(label, Kokkos::TeamPolicy<Space>(space, int(teams), c.elementwise_team_size), stage);
}

// (b, row, t) of a flat index into a (b, rows, L) array.
struct Flat3 {
  index_t rows, L;
  KOKKOS_INLINE_FUNCTION void split(index_t i, index_t& b, index_t& row, index_t& t) const {
    t = i % L;
    const index_t rest = i / L;
    row = rest % rows;
    b = rest / rows;
  }
};

// A[b,n,t] = xd[b,n,t] + base_params[n].
template <class Space>
struct AddBaseParams {
  W3<Space> A, xd;
  ConstV1<Space> base;
  Flat3 shape;
  KOKKOS_INLINE_FUNCTION void operator()(index_t i) const {
    index_t b, n, t;
    shape.split(i, b, n, t);
    A(b, n, t) = xd(b, n, t) + base(n);
  }
};

// y += D_tv ⊙ x;  g = gelu(y).
template <class Space>
struct SkipAndGelu {
  W3<Space> y, g, x, xd;
  Flat3 shape;
  index_t offset_D;
  KOKKOS_INLINE_FUNCTION void operator()(index_t i) const {
    index_t b, h, t;
    shape.split(i, b, h, t);
    const float yv = y(b, h, t) + xd(b, offset_D + h, t) * x(b, h, t);
    y(b, h, t) = yv;
    g(b, h, t) = gelu_erf(yv);
  }
};

// dy += dg ⊙ gelu'(y);  dD_tv = dy ⊙ x into dxd's D_tv rows.
template <class Space>
struct GeluBackward {
  W3<Space> dy, dg, y, x, dxd;
  Flat3 shape;
  index_t offset_D;
  KOKKOS_INLINE_FUNCTION void operator()(index_t i) const {
    index_t b, h, t;
    shape.split(i, b, h, t);
    const float d = dy(b, h, t) + dg(b, h, t) * gelu_erf_derivative(y(b, h, t));
    dy(b, h, t) = d;
    dxd(b, offset_D + h, t) = d * x(b, h, t);
  }
};

// dx += dy ⊙ D_tv (the skip's share of du).
template <class Space>
struct SkipBackward {
  W3<Space> dx, dy, xd;
  Flat3 shape;
  index_t offset_D;
  KOKKOS_INLINE_FUNCTION void operator()(index_t i) const {
    index_t b, h, t;
    shape.split(i, b, h, t);
    dx(b, h, t) += dy(b, h, t) * xd(b, offset_D + h, t);
  }
};

// partial[b,n,k] = Σ_{t in block k} dA[b,n,t], t ascending (dA sits in dxd's first N rows).
template <class Space>
struct BaseParamPartials {
  W3<Space> partial, dxd;
  index_t N, L, blocks, block_len;
  KOKKOS_INLINE_FUNCTION void operator()(index_t i) const {
    const index_t k = i % blocks, rest = i / blocks, n = rest % N, b = rest / N;
    const index_t t_end = (k + 1) * block_len < L ? (k + 1) * block_len : L;
    float sum = 0.0f;
    for (index_t t = k * block_len; t < t_end; ++t) sum += dxd(b, n, t);
    partial(b, n, k) = sum;
  }
};

// dbase_params[n] = Σ_b Σ_k partial[b,n,k], in that order.
template <class Space>
struct BaseParamSum {
  Kokkos::View<float*, Kokkos::LayoutRight, typename Space::memory_space> dbase;
  W3<Space> partial;
  index_t batch, blocks;
  KOKKOS_INLINE_FUNCTION void operator()(index_t n) const {
    float sum = 0.0f;
    for (index_t b = 0; b < batch; ++b)
      for (index_t k = 0; k < blocks; ++k) sum += partial(b, n, k);
    dbase(n) = sum;
  }
};

// ---------------------------------------------------------------------------------------------
// Stages between the (b,L,Dm) layout of the layer's ends and the T layout: a team transposes one
// tile × tile block through team scratch, so both sides are read and written along their
// contiguous axis.

template <class Space>
struct TransposeGrid {
  index_t tile, h_tiles, t_tiles;
  KOKKOS_INLINE_FUNCTION void split(index_t rank, index_t& b, index_t& h0, index_t& t0) const {
    const index_t tt = rank % t_tiles, rest = rank / t_tiles;
    h0 = (rest % h_tiles) * tile;
    t0 = tt * tile;
    b = rest / h_tiles;
  }
};


// out[b,t,h] = sigmoid(z[b,h,t])·y[b,h,t] + hidden_states[b,t,h].
template <class Space>
struct GateOutput {
  W3<Space> z, y;
  ConstV3<Space> hidden;
  OutV3<Space> out;
  TransposeGrid<Space> grid;
  index_t H, L;
  KOKKOS_INLINE_FUNCTION void operator()(const Member<Space>& m) const {
    index_t b, h0, t0;
    grid.split(m.league_rank(), b, h0, t0);
    const int tile = int(grid.tile), ld = tile + 1;
    ScratchFloats<Space> s(m.team_scratch(0), std::size_t(tile * ld));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, tile * tile), [&](const int i) {
      const int hl = i / tile, tl = i % tile;  // along t: reads z, y coalesced
      const index_t h = h0 + hl, t = t0 + tl;
      if (h < H && t < L) s(tl * ld + hl) = sigmoid_f32(z(b, h, t)) * y(b, h, t);
    });
    m.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, tile * tile), [&](const int i) {
      const int tl = i / tile, hl = i % tile;  // along h: writes out coalesced
      const index_t h = h0 + hl, t = t0 + tl;
      if (h < H && t < L) out(b, t, h) = s(tl * ld + hl) + hidden(b, t, h);
    });
  }
};

// dy[b,h,t] = dout[b,t,h]·s, dz[b,h,t] = dout[b,t,h]·y·s(1 − s), s = sigmoid(z[b,h,t]).
template <class Space>
struct GateBackward {
  W3<Space> z, y, dy, dz;
  ConstV3<Space> dout;
  TransposeGrid<Space> grid;
  index_t H, L;
  KOKKOS_INLINE_FUNCTION void operator()(const Member<Space>& m) const {
    index_t b, h0, t0;
    grid.split(m.league_rank(), b, h0, t0);
    const int tile = int(grid.tile), ld = tile + 1;
    ScratchFloats<Space> s(m.team_scratch(0), std::size_t(tile * ld));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, tile * tile), [&](const int i) {
      const int tl = i / tile, hl = i % tile;  // along h: reads dout coalesced
      const index_t h = h0 + hl, t = t0 + tl;
      if (h < H && t < L) s(hl * ld + tl) = dout(b, t, h);
    });
    m.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, tile * tile), [&](const int i) {
      const int hl = i / tile, tl = i % tile;  // along t
      const index_t h = h0 + hl, t = t0 + tl;
      if (h < H && t < L) {
        const float d = s(hl * ld + tl), gate = sigmoid_f32(z(b, h, t));
        dy(b, h, t) = d * gate;
        dz(b, h, t) = (d * y(b, h, t)) * (gate * (1.0f - gate));
      }
    });
  }
};

template <class Space, class Stage>
void launch_transposed(const char* label, const Space& space, const S7InnerConfig& c, const S7InnerProblem& p,
                       Stage stage) {
  stage.grid.tile = c.transpose_tile;
  stage.grid.h_tiles = ceil_div(p.dim, c.transpose_tile);
  stage.grid.t_tiles = ceil_div(p.seqlen, c.transpose_tile);
  stage.H = p.dim;
  stage.L = p.seqlen;
  const index_t teams = p.batch * stage.grid.h_tiles * stage.grid.t_tiles;
  if (teams > INT_MAX) throw std::invalid_argument(std::string(label) + ": too many teams");
  Kokkos::TeamPolicy<Space> policy(space, int(teams), c.elementwise_team_size);
  policy.set_scratch_size(
      0, Kokkos::PerTeam(ScratchFloats<Space>::shmem_size(std::size_t(c.transpose_tile * (c.transpose_tile + 1)))));
  Kokkos::parallel_for(label, policy, stage);
}

// ---------------------------------------------------------------------------------------------

void require_valid(const S7InnerProblem& p, const S7InnerConfig& c, BackendKind backend) {
  const std::string why = c.invalid_reason(p, backend);
  if (!why.empty()) throw std::invalid_argument("s7_inner config " + c.to_json().dump() + ": " + why);
}

template <class Space>
void require_default_instance(const Space& space) {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same<Space, Kokkos::Cuda>::value)
    if (space.cuda_stream() != Kokkos::Cuda().cuda_stream())
      throw std::invalid_argument("s7_inner: pass the default CUDA instance (the GEMMs run on its stream)");
#endif
  (void)space;
}

// The scan's tensors as strided views into the layer's T-layout activations (s7_inner.hpp).
template <class Space>
S7ScanViews<Space> scan_views(const S7InnerProblem& p, S7InnerWorkspace<Space>& w, bool backward) {
  using Views = S7ScanViews<Space>;
  const index_t N = p.dstate, H = p.dim, L = p.seqlen, R = p.x_proj_rows();
  const auto b = std::size_t(p.batch);
  const auto row_view3 = [&](float* base, index_t first_row, index_t rows) {
    // (b, rows, L) rows first_row.. of a (b, R, L) array
    return typename Views::template V<float***>(
        base + first_row * L, Kokkos::LayoutStride(b, std::size_t(R * L), std::size_t(rows), std::size_t(L),
                                                   std::size_t(L), 1));
  };
  const auto B_view = [&](float* base) {  // (b, N, H, L): n-stride L, h-stride N·L
    return typename Views::template V<float****>(
        base + p.offset_B() * L, Kokkos::LayoutStride(b, std::size_t(R * L), std::size_t(N), std::size_t(L),
                                                      std::size_t(H), std::size_t(N * L), std::size_t(L), 1));
  };
  const auto C_view = [&](float* base) {  // (b, H, N, L): h-stride N·L, n-stride L
    return typename Views::template V<float****>(
        base + p.offset_C() * L, Kokkos::LayoutStride(b, std::size_t(R * L), std::size_t(H), std::size_t(N * L),
                                                      std::size_t(N), std::size_t(L), std::size_t(L), 1));
  };
  Views v;
  v.u = w.x;
  v.A = w.A;
  v.bias = row_view3(w.xd.data(), p.offset_bias(), N);
  v.B = B_view(w.xd.data());
  v.C = C_view(w.xd.data());
  v.out = w.y;
  if (backward) {
    v.dout = w.dy;
    v.du = w.dx;
    v.dA = row_view3(w.dxd.data(), p.offset_A(), N);
    v.dbias = row_view3(w.dxd.data(), p.offset_bias(), N);
    v.dB = B_view(w.dxd.data());
    v.dC = C_view(w.dxd.data());
  }
  return v;
}

template <class Space>
void check_workspace(const S7InnerProblem& p, const S7InnerWorkspace<Space>& w, bool backward) {
  const auto expect = [](const W3<Space>& v, const char* name, index_t e0, index_t e1, index_t e2) {
    if (index_t(v.extent(0)) != e0 || index_t(v.extent(1)) != e1 || index_t(v.extent(2)) != e2) {
      std::ostringstream s;
      s << "s7_inner: workspace " << name << " is (" << v.extent(0) << ", " << v.extent(1) << ", " << v.extent(2)
        << "), expected (" << e0 << ", " << e1 << ", " << e2 << ")";
      throw std::invalid_argument(s.str());
    }
  };
  expect(w.x, "x", p.batch, p.dim, p.seqlen);
  expect(w.xd, "xd", p.batch, p.x_proj_rows(), p.seqlen);
  expect(w.A, "A", p.batch, p.dstate, p.seqlen);
  for (const auto* v : {&w.y, &w.g, &w.z}) expect(*v, "y/g/z", p.batch, p.dim, p.seqlen);
  if (backward) {
    for (const auto* v : {&w.dy, &w.dz, &w.dg, &w.dx}) expect(*v, "dy/dz/dg/dx", p.batch, p.dim, p.seqlen);
    expect(w.dxd, "dxd", p.batch, p.x_proj_rows(), p.seqlen);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

template <class Space>
std::int64_t S7InnerWorkspace<Space>::bytes() const {
  std::size_t floats = 0;
  for (const auto* v : {&x, &xd, &A, &y, &g, &z, &dy, &dz, &dg, &dx, &dxd, &dbase_partial}) floats += v->span();
  return std::int64_t(sizeof(float) * floats) + scan.bytes();
}

template <class Space>
S7InnerWorkspace<Space> s7_inner_allocate_workspace(const S7InnerProblem& p, const S7InnerConfig& c) {
  p.validate();
  S7InnerWorkspace<Space> w;
  using View3 = typename S7InnerWorkspace<Space>::View3;
  const auto alloc = [](const char* label, index_t e0, index_t e1, index_t e2) {
    return View3(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing), std::size_t(e0),
                 std::size_t(e1), std::size_t(e2));
  };
  const index_t b = p.batch, H = p.dim, N = p.dstate, L = p.seqlen, R = p.x_proj_rows();
  w.x = alloc("s7_inner::x", b, H, L);
  w.xd = alloc("s7_inner::xd", b, R, L);
  w.A = alloc("s7_inner::A", b, N, L);
  w.y = alloc("s7_inner::y", b, H, L);
  w.g = alloc("s7_inner::g", b, H, L);
  w.z = alloc("s7_inner::z", b, H, L);
  if (p.with_backward) {
    w.dy = alloc("s7_inner::dy", b, H, L);
    w.dz = alloc("s7_inner::dz", b, H, L);
    w.dg = alloc("s7_inner::dg", b, H, L);
    w.dx = alloc("s7_inner::dx", b, H, L);
    w.dxd = alloc("s7_inner::dxd", b, R, L);
    w.dbase_partial = alloc("s7_inner::dbase_partial", b, N, ceil_div(L, c.reduce_block));
  }
  w.scan = s7_scan_allocate_workspace<Space>(p.inner_scan(), c.scan);
  return w;
}

template <class Space>
std::int64_t S7InnerTensors<Space>::tensor_bytes() const {
  const std::size_t floats = hidden_states.span() + in_proj_weight.span() + x_proj_weight.span() +
                             gate_proj_weight.span() + base_params.span() + dout.span() + out.span() +
                             dhidden_states.span() + din_proj_weight.span() + dx_proj_weight.span() +
                             dgate_proj_weight.span() + dbase_params.span();
  return std::int64_t(sizeof(float) * floats);
}

template <class Space>
S7InnerTensors<Space> s7_inner_allocate(const S7InnerProblem& p, const S7InnerConfig& c) {
  p.validate();
  S7InnerTensors<Space> t;
  using V3 = typename S7InnerTensors<Space>::template V<float***>;
  using V2 = typename S7InnerTensors<Space>::template V<float**>;
  using V1 = typename S7InnerTensors<Space>::template V<float*>;
  const auto b = std::size_t(p.batch), L = std::size_t(p.seqlen), D = std::size_t(p.dim),
             R = std::size_t(p.x_proj_rows()), N = std::size_t(p.dstate);
  t.hidden_states = V3("s7_inner::hidden_states", b, L, D);
  t.in_proj_weight = V2("s7_inner::in_proj_weight", D, D);
  t.x_proj_weight = V2("s7_inner::x_proj_weight", R, D);
  t.gate_proj_weight = V2("s7_inner::gate_proj_weight", D, D);
  t.base_params = V1("s7_inner::base_params", N);
  t.out = V3("s7_inner::out", b, L, D);
  if (p.with_backward) {
    t.dout = V3("s7_inner::dout", b, L, D);
    t.dhidden_states = V3("s7_inner::dhidden_states", b, L, D);
    t.din_proj_weight = V2("s7_inner::din_proj_weight", D, D);
    t.dx_proj_weight = V2("s7_inner::dx_proj_weight", R, D);
    t.dgate_proj_weight = V2("s7_inner::dgate_proj_weight", D, D);
    t.dbase_params = V1("s7_inner::dbase_params", N);
  }
  t.workspace = s7_inner_allocate_workspace<Space>(p, c);
  return t;
}

template <class Space>
void s7_inner_forward(const S7InnerProblem& p, const S7InnerConfig& c, S7InnerTensors<Space>& t, const Space& space) {
  p.validate();
  const BackendKind backend = backend_of<Space>();
  require_valid(p, c, backend);
  require_default_instance(space);
  auto& w = t.workspace;
  check_workspace(p, w, false);
  const index_t b = p.batch, H = p.dim, N = p.dstate, L = p.seqlen, R = p.x_proj_rows();
  const GemmMath math = c.gemm_math == "pedantic" ? GemmMath::pedantic : GemmMath::standard;
  const Transpose no = Transpose::no, yes = Transpose::yes;

  // xT_b = W_in · hidden_states_bᵀ;  xdT_b = W_x · xT_b.
  gemm_strided_batched(backend, no, yes, H, L, H, 1.0f, t.in_proj_weight.data(), H, 0, t.hidden_states.data(), H,
                       L * H, 0.0f, w.x.data(), L, H * L, b, math);
  gemm_strided_batched(backend, no, no, R, L, H, 1.0f, t.x_proj_weight.data(), H, 0, w.x.data(), L, H * L, 0.0f,
                       w.xd.data(), L, R * L, b, math);
  launch_flat("s7_inner::add_base_params", space, c, b * N * L,
              AddBaseParams<Space>{w.A, w.xd, t.base_params, Flat3{N, L}});
  // The scan reads B, C and bias where x_proj wrote them.
  const S7ScanViews<Space> sv = scan_views(p, w, false);
  s7_scan_forward_views<Space>(p.inner_scan(), c.scan, sv, w.scan, space);
  launch_flat("s7_inner::skip_gelu", space, c, b * H * L,
              SkipAndGelu<Space>{w.y, w.g, w.x, w.xd, Flat3{H, L}, p.offset_D()});
  // zT_b = W_gate · gT_b.
  gemm_strided_batched(backend, no, no, H, L, H, 1.0f, t.gate_proj_weight.data(), H, 0, w.g.data(), L, H * L, 0.0f,
                       w.z.data(), L, H * L, b, math);
  GateOutput<Space> gate;
  gate.z = w.z;
  gate.y = w.y;
  gate.hidden = t.hidden_states;
  gate.out = t.out;
  launch_transposed("s7_inner::gate_output", space, c, p, gate);
  w.forward_done = true;
}

template <class Space>
void s7_inner_backward(const S7InnerProblem& p, const S7InnerConfig& c, S7InnerTensors<Space>& t, const Space& space) {
  p.validate();
  if (!p.with_backward) throw std::invalid_argument("s7_inner backward: the problem has no dout");
  const BackendKind backend = backend_of<Space>();
  require_valid(p, c, backend);
  require_default_instance(space);
  auto& w = t.workspace;
  check_workspace(p, w, true);
  if (!w.forward_done) throw std::logic_error("s7_inner backward: run s7_inner_forward with this workspace first");
  const index_t b = p.batch, H = p.dim, N = p.dstate, L = p.seqlen, R = p.x_proj_rows();
  const GemmMath math = c.gemm_math == "pedantic" ? GemmMath::pedantic : GemmMath::standard;
  const Transpose no = Transpose::no, yes = Transpose::yes;

  GateBackward<Space> gate;
  gate.z = w.z;
  gate.y = w.y;
  gate.dy = w.dy;
  gate.dz = w.dz;
  gate.dout = t.dout;
  launch_transposed("s7_inner::gate_backward", space, c, p, gate);
  // dW_gate = Σ_b dzT_b · gT_bᵀ (batches in order);  dgT_b = W_gateᵀ · dzT_b.
  for (index_t i = 0; i < b; ++i)
    gemm(backend, no, yes, H, H, L, 1.0f, w.dz.data() + i * H * L, L, w.g.data() + i * H * L, L, i == 0 ? 0.0f : 1.0f,
         t.dgate_proj_weight.data(), H, math);
  gemm_strided_batched(backend, yes, no, H, L, H, 1.0f, t.gate_proj_weight.data(), H, 0, w.dz.data(), L, H * L, 0.0f,
                       w.dg.data(), L, H * L, b, math);
  launch_flat("s7_inner::gelu_backward", space, c, b * H * L,
              GeluBackward<Space>{w.dy, w.dg, w.y, w.x, w.dxd, Flat3{H, L}, p.offset_D()});
  // The scan's gradients land in dxdT's rows (dA, dB, dC, dbias) and in dxT (du).
  const S7ScanViews<Space> sv = scan_views(p, w, true);
  s7_scan_backward_views<Space>(p.inner_scan(), c.scan, sv, w.scan, space);
  launch_flat("s7_inner::skip_backward", space, c, b * H * L,
              SkipBackward<Space>{w.dx, w.dy, w.xd, Flat3{H, L}, p.offset_D()});
  // dxT_b += W_xᵀ · dxdT_b.
  gemm_strided_batched(backend, yes, no, H, L, R, 1.0f, t.x_proj_weight.data(), H, 0, w.dxd.data(), L, R * L, 1.0f,
                       w.dx.data(), L, H * L, b, math);
  // dW_x = Σ_b dxdT_b · xT_bᵀ;  dW_in = Σ_b dxT_b · hidden_states_b.
  for (index_t i = 0; i < b; ++i) {
    const float beta = i == 0 ? 0.0f : 1.0f;
    gemm(backend, no, yes, R, H, L, 1.0f, w.dxd.data() + i * R * L, L, w.x.data() + i * H * L, L, beta,
         t.dx_proj_weight.data(), H, math);
    gemm(backend, no, no, H, H, L, 1.0f, w.dx.data() + i * H * L, L, t.hidden_states.data() + i * L * H, H, beta,
         t.din_proj_weight.data(), H, math);
  }
  // dhidden_states_b = dout_b + dxT_bᵀ · W_in.
  Kokkos::deep_copy(space, t.dhidden_states, t.dout);
  gemm_strided_batched(backend, yes, no, L, H, H, 1.0f, w.dx.data(), L, H * L, t.in_proj_weight.data(), H, 0, 1.0f,
                       t.dhidden_states.data(), H, L * H, b, math);
  // dbase_params = Σ_{b,t} dA, in two fixed-order passes.
  const index_t blocks = ceil_div(L, c.reduce_block);
  launch_flat("s7_inner::dbase_partials", space, c, b * N * blocks,
              BaseParamPartials<Space>{w.dbase_partial, w.dxd, N, L, blocks, c.reduce_block});
  launch_flat("s7_inner::dbase_sum", space, c, N, BaseParamSum<Space>{t.dbase_params, w.dbase_partial, b, blocks});
}

#ifdef KOKKOS_ENABLE_SERIAL
SCANLAB_S7_INNER_DECLARE(, Kokkos::Serial)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
SCANLAB_S7_INNER_DECLARE(, Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_CUDA
SCANLAB_S7_INNER_DECLARE(, Kokkos::Cuda)
#endif

// ---------------------------------------------------------------------------------------------
// Host bridge.

namespace {

template <class Space>
TensorMap run_s7_inner_on(const S7InnerProblem& p, const TensorMap& inputs, const S7InnerConfig& c,
                          const Space& space) {
  using T = S7InnerTensors<Space>;
  using V3 = typename T::template V<float***>;
  using V2 = typename T::template V<float**>;
  using V1 = typename T::template V<float*>;
  T t;
  const auto b = std::size_t(p.batch), L = std::size_t(p.seqlen), D = std::size_t(p.dim),
             R = std::size_t(p.x_proj_rows()), N = std::size_t(p.dstate);
  t.hidden_states = to_device<V3>(require(inputs, "hidden_states"), "hidden_states");
  t.in_proj_weight = to_device<V2>(require(inputs, "in_proj_weight"), "in_proj_weight");
  t.x_proj_weight = to_device<V2>(require(inputs, "x_proj_weight"), "x_proj_weight");
  t.gate_proj_weight = to_device<V2>(require(inputs, "gate_proj_weight"), "gate_proj_weight");
  t.base_params = to_device<V1>(require(inputs, "base_params"), "base_params");
  t.out = poisoned<V3>("out", b, L, D);
  if (p.with_backward) {
    t.dout = to_device<V3>(require(inputs, "dout"), "dout");
    t.dhidden_states = poisoned<V3>("dhidden_states", b, L, D);
    t.din_proj_weight = poisoned<V2>("din_proj_weight", D, D);
    t.dx_proj_weight = poisoned<V2>("dx_proj_weight", R, D);
    t.dgate_proj_weight = poisoned<V2>("dgate_proj_weight", D, D);
    t.dbase_params = poisoned<V1>("dbase_params", N);
  }
  t.workspace = s7_inner_allocate_workspace<Space>(p, c);
  check_device(space, "s7_inner set-up");
  s7_inner_forward<Space>(p, c, t, space);
  check_device(space, "s7_inner forward");
  if (p.with_backward) {
    s7_inner_backward<Space>(p, c, t, space);
    check_device(space, "s7_inner backward");
  }
  TensorMap result;
  const std::int64_t Dm = p.dim;
  result["out"] = to_host(t.out, {p.batch, p.seqlen, Dm});
  if (p.with_backward) {
    result["dhidden_states"] = to_host(t.dhidden_states, {p.batch, p.seqlen, Dm});
    result["din_proj_weight"] = to_host(t.din_proj_weight, {Dm, Dm});
    result["dx_proj_weight"] = to_host(t.dx_proj_weight, {p.x_proj_rows(), Dm});
    result["dgate_proj_weight"] = to_host(t.dgate_proj_weight, {Dm, Dm});
    result["dbase_params"] = to_host(t.dbase_params, {p.dstate});
  }
  return result;
}

}  // namespace

TensorMap run_s7_inner(const S7InnerProblem& p, const TensorMap& inputs, BackendKind backend, const S7InnerConfig& c) {
  p.validate();
  require_valid(p, c, backend);
  for (const auto& spec : p.tensors()) {
    if (spec.role != TensorRole::input && spec.role != TensorRole::grad_input) continue;
    const Tensor& t = require(inputs, spec.name);
    if (t.shape != spec.shape)
      throw std::invalid_argument("s7_inner: input '" + spec.name + "' has shape " + shape_string(t.shape) +
                                  ", expected " + shape_string(spec.shape));
  }
  return dispatch_space(backend, [&](auto space) { return run_s7_inner_on(p, inputs, c, space); });
}

}  // namespace scanlab::kernels
