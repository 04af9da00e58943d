// s7_scan Kokkos kernels, forward and backward (semantics: kernels/problem/s7_scan.hpp).
//
// The big tensors are B (b,N,H,L) and C (b,H,N,L); each is read from memory exactly once per
// pass. Everything of size O(b·N·L) goes through a workspace in global memory. Every stage is
// parallel along seqlen; only the time walk over each (b, n) is sequential, and "chunked" makes
// that parallel in time too.
//
// Forward
//   1. Bu     Bu[s][b,n,t] = Σ_{h in split s} B[b,n,h,t]·u[b,h,t] (+ bias in split 0)  reads B once
//   2. walk   x_t = A_bar_t·x_{t−1} + Σ_s Bu[s]_t → X (b,N,L), last_state      impl-specific
//   3. y      out[b,h,t] = Σ_n C[b,h,n,t]·X[b,n,t]                         reads C once
// Backward (consumes the forward's X, so call s7_scan_forward first with the same workspace)
//   1. C pass dC = dout ⊗ x;  G[s][b,n,t] = Σ_{h in split s} C[b,h,n,t]·dout[b,h,t]  reads C once
//   2. walk   dx_t = Σ_s G[s]_t + A_bar_{t+1}·dx_{t+1} from dlast_state → DX (b,N,L);
//             dA = dx_t·x_{t−1}·dA_bar/dA, dbias = dx, dinitial_state = A_bar_0·dx_0
//   3. B pass dB = dx ⊗ u;  du[b,h,t] = Σ_n B[b,n,h,t]·dx[b,n,t]              reads B once
//
// Streaming stages (Bu, y, C pass, B pass): a team owns a tile of team_size·items_per_thread
// consecutive time steps of one batch entry and one group of states_per_thread dstate rows (or
// dims_per_thread dim rows); a thread owns one time step and keeps the group's sums in registers,
// so loads are coalesced along seqlen and every sum runs over h (or n) in ascending order inside
// one thread. Time walks: a team of walk_team_size threads owns walk_team_size rows × chunk_len
// steps; each thread walks its row, reading and writing it in batches of 16 steps (all of a
// batch's loads issued before it is walked).
//
// Determinism: no atomics; each output element is produced by one thread with a fixed operation
// order given by the config (the dim-split partial sums Bu and G are added in split order). Repeated runs
// are bitwise identical on every backend and for any OpenMP thread count.
//
// Kernels take LayoutStride views with unit stride along seqlen, so s7_inner runs these same
// kernels on B and C viewed inside its x_proj output without copying them.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "problem/s7_scan.hpp"
#include "s7_config.hpp"

namespace scanlab::kernels {

// Buffers the stages exchange, allocated once per (problem, config):
//   Bu (S,b,N,L) with S = fwd_dim_splits, X (b,N,L): forward; X is kept for the backward;
//   DX (b,N,L), G (S,b,N,L) with S = bwd_dim_splits: backward only;
//   chunk_end, chunk_prod, carry (b,N,⌈L/chunk_len⌉): "chunked" only (carry is the state entering
//   each chunk, and in the backward the adjoint entering each chunk from its right).
template <class Space>
struct S7ScanWorkspace {
  using memory_space = typename Space::memory_space;
  using View3 = Kokkos::View<float***, Kokkos::LayoutRight, memory_space>;
  using View4 = Kokkos::View<float****, Kokkos::LayoutRight, memory_space>;
  View3 X, DX, chunk_end, chunk_prod, carry;
  View4 Bu, G;
  bool forward_done = false;  // set by the forward; the backward refuses to run without it

  std::int64_t bytes() const;  // device bytes held (equals s7_scan_workspace_bytes)
};

template <class Space>
S7ScanWorkspace<Space> s7_scan_allocate_workspace(const S7ScanProblem& p, const S7ScanConfig& c);

// The tensors the kernels read and write, as strided views (unit stride along seqlen; any
// strides on the other axes). Optional tensors are empty Views when the problem lacks them.
template <class Space>
struct S7ScanViews {
  using memory_space = typename Space::memory_space;
  template <class T>
  using V = Kokkos::View<T, Kokkos::LayoutStride, memory_space>;
  V<const float***> u, A, bias;         // (b,H,L), (b,N,L), (b,N,L)
  V<const float****> B, C;              // (b,N,H,L), (b,H,N,L)
  V<const float**> initial_state;       // (b,N)
  V<const float***> dout;               // (b,H,L)
  V<const float**> dlast_state;         // (b,N)
  V<float***> out;                      // (b,H,L)
  V<float**> last_state;                // (b,N)
  V<float***> du, dA, dbias;
  V<float****> dB, dC;
  V<float**> dinitial_state;
};

// Every tensor of one s7_scan problem, LayoutRight, allocated once (benchmarks fill the inputs and
// time the passes without host copies), plus the workspace.
template <class Space>
struct S7ScanTensors {
  using memory_space = typename Space::memory_space;
  template <class T>
  using V = Kokkos::View<T, Kokkos::LayoutRight, memory_space>;
  V<float***> u, A, bias;
  V<float****> B, C;
  V<float**> initial_state;
  V<float***> dout;
  V<float**> dlast_state;
  V<float***> out;
  V<float**> last_state;
  V<float***> du, dA, dbias;
  V<float****> dB, dC;
  V<float**> dinitial_state;
  S7ScanWorkspace<Space> workspace;

  S7ScanViews<Space> views() const;
  std::int64_t tensor_bytes() const;  // inputs, outputs and gradients (not the workspace)
};

// Allocates every tensor the problem names (inputs zero-filled) and the workspace.
template <class Space>
S7ScanTensors<Space> s7_scan_allocate(const S7ScanProblem& p, const S7ScanConfig& c);

// The passes. They enqueue kernels on `space` and do not fence. The config must be valid
// (invalid_reason() empty; checked, throws std::invalid_argument).
template <class Space>
void s7_scan_forward(const S7ScanProblem& p, const S7ScanConfig& c, S7ScanTensors<Space>& t, const Space& space);
template <class Space>
void s7_scan_backward(const S7ScanProblem& p, const S7ScanConfig& c, S7ScanTensors<Space>& t, const Space& space);

// The same passes on strided views (what s7_inner calls).
template <class Space>
void s7_scan_forward_views(const S7ScanProblem& p, const S7ScanConfig& c, const S7ScanViews<Space>& v,
                           S7ScanWorkspace<Space>& w, const Space& space);
template <class Space>
void s7_scan_backward_views(const S7ScanProblem& p, const S7ScanConfig& c, const S7ScanViews<Space>& v,
                            S7ScanWorkspace<Space>& w, const Space& space);

#define SCANLAB_S7_SCAN_DECLARE(EXTERN, SPACE)                                                                  \
  EXTERN template struct S7ScanWorkspace<SPACE>;                                                                \
  EXTERN template struct S7ScanTensors<SPACE>;                                                                  \
  EXTERN template S7ScanWorkspace<SPACE> s7_scan_allocate_workspace<SPACE>(const S7ScanProblem&,                \
                                                                            const S7ScanConfig&);               \
  EXTERN template S7ScanTensors<SPACE> s7_scan_allocate<SPACE>(const S7ScanProblem&, const S7ScanConfig&);      \
  EXTERN template void s7_scan_forward<SPACE>(const S7ScanProblem&, const S7ScanConfig&, S7ScanTensors<SPACE>&, \
                                              const SPACE&);                                                    \
  EXTERN template void s7_scan_backward<SPACE>(const S7ScanProblem&, const S7ScanConfig&,                       \
                                               S7ScanTensors<SPACE>&, const SPACE&);                            \
  EXTERN template void s7_scan_forward_views<SPACE>(const S7ScanProblem&, const S7ScanConfig&,                  \
                                                    const S7ScanViews<SPACE>&, S7ScanWorkspace<SPACE>&,         \
                                                    const SPACE&);                                              \
  EXTERN template void s7_scan_backward_views<SPACE>(const S7ScanProblem&, const S7ScanConfig&,                 \
                                                     const S7ScanViews<SPACE>&, S7ScanWorkspace<SPACE>&,        \
                                                     const SPACE&);

#ifdef KOKKOS_ENABLE_SERIAL
SCANLAB_S7_SCAN_DECLARE(extern, Kokkos::Serial)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
SCANLAB_S7_SCAN_DECLARE(extern, Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_CUDA
SCANLAB_S7_SCAN_DECLARE(extern, Kokkos::Cuda)
#endif

}  // namespace scanlab::kernels
