// s7_inner Kokkos kernels, forward and backward (semantics: kernels/problem/s7_inner.hpp).
//
// The layer keeps its activations seqlen-fastest ("T layout", (b, rows, L)), so that the scan
// reads them with unit stride along seqlen and needs no copies:
//   xT_b  (Dm×L) = W_in · hidden_states_bᵀ                          GEMM (u of the scan)
//   xdT_b (R×L)  = W_x · xT_b                                       GEMM; rows [N | Dm·N | Dm·N | Dm | N]
//   A = xdT[:, 0:N] + base_params                                   elementwise (b,N,L)
//   yT = s7_scan(u = xT, A, B, C, bias) on strided views into xdT  s7_scan's own kernels
//        B[b,n,h,t] = xdT[b, N + h·N + n, t], C[b,h,n,t] = xdT[b, N + Dm·N + h·N + n, t]
//   yT += D_tv ⊙ xT;  gT = gelu(yT)                                 elementwise
//   zT_b = W_gate · gT_b                                            GEMM
//   out[b,t,h] = sigmoid(zT[b,h,t])·yT[b,h,t] + hidden_states[b,t,h] elementwise, tiled transpose
// Backward (consumes the forward's activations; run s7_inner_forward first):
//   dyT = doutᵀ ⊙ s, dzT = doutᵀ ⊙ yT ⊙ s(1 − s)                    tiled transpose
//   dW_gate = Σ_b dzT_b · gT_bᵀ;  dgT_b = W_gateᵀ · dzT_b             GEMMs
//   dyT += dgT ⊙ gelu'(yT);  dD_tv = dyT ⊙ xT → dxdT rows of D_tv     elementwise
//   s7_scan backward with dout = dyT: du → dxT; dA, dB, dC, dbias straight into dxdT's rows
//   dxT += dyT ⊙ D_tv;  dxT_b += W_xᵀ · dxdT_b                        elementwise, GEMM
//   dW_x = Σ_b dxdT_b · xT_bᵀ;  dW_in = Σ_b dxT_b · hidden_states_b   GEMMs (batches summed in order)
//   dhidden_states_b = dout_b + dxT_bᵀ · W_in                         GEMM
//   dbase_params[n] = Σ_b Σ_blocks Σ_{t in block} dxdT[b,n,t]         two fixed-order passes
// GEMMs go through kernels/matmul.hpp (OpenBLAS / cuBLAS, no TF32); their batch sums are
// sequential beta = 1 accumulations, so the whole layer is deterministic (s7_config.hpp).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "problem/s7_inner.hpp"
#include "s7_config.hpp"
#include "s7_scan.hpp"

namespace scanlab::kernels {

// Activations and gradients in T layout (b, rows, L), plus the scan's workspace. Backward-only
// buffers are empty for a forward-only problem.
template <class Space>
struct S7InnerWorkspace {
  using memory_space = typename Space::memory_space;
  using View3 = Kokkos::View<float***, Kokkos::LayoutRight, memory_space>;
  View3 x, xd, A, y, g, z;              // (b,Dm,L), (b,R,L), (b,N,L), (b,Dm,L) ×3
  View3 dy, dz, dg, dx, dxd;            // (b,Dm,L) ×4, (b,R,L)
  View3 dbase_partial;                  // (b, N, ⌈L/reduce_block⌉)
  S7ScanWorkspace<Space> scan;
  bool forward_done = false;

  std::int64_t bytes() const;  // equals s7_inner_workspace_bytes
};

template <class Space>
S7InnerWorkspace<Space> s7_inner_allocate_workspace(const S7InnerProblem& p, const S7InnerConfig& c);

// Every tensor of one s7_inner problem, LayoutRight, in the op's own layouts.
template <class Space>
struct S7InnerTensors {
  using memory_space = typename Space::memory_space;
  template <class T>
  using V = Kokkos::View<T, Kokkos::LayoutRight, memory_space>;
  V<float***> hidden_states;                                  // (b,L,Dm)
  V<float**> in_proj_weight, x_proj_weight, gate_proj_weight;  // (Dm,Dm), (R,Dm), (Dm,Dm)
  V<float*> base_params;                                      // (N)
  V<float***> dout, out, dhidden_states;                      // (b,L,Dm)
  V<float**> din_proj_weight, dx_proj_weight, dgate_proj_weight;
  V<float*> dbase_params;
  S7InnerWorkspace<Space> workspace;

  std::int64_t tensor_bytes() const;
};

template <class Space>
S7InnerTensors<Space> s7_inner_allocate(const S7InnerProblem& p, const S7InnerConfig& c);

// The passes; they enqueue on `space`, which on CUDA must be the default instance (the GEMMs run
// on its stream). They do not fence.
template <class Space>
void s7_inner_forward(const S7InnerProblem& p, const S7InnerConfig& c, S7InnerTensors<Space>& t, const Space& space);
template <class Space>
void s7_inner_backward(const S7InnerProblem& p, const S7InnerConfig& c, S7InnerTensors<Space>& t, const Space& space);

#define SCANLAB_S7_INNER_DECLARE(EXTERN, SPACE)                                                                  \
  EXTERN template struct S7InnerWorkspace<SPACE>;                                                                \
  EXTERN template struct S7InnerTensors<SPACE>;                                                                  \
  EXTERN template S7InnerWorkspace<SPACE> s7_inner_allocate_workspace<SPACE>(const S7InnerProblem&,              \
                                                                              const S7InnerConfig&);             \
  EXTERN template S7InnerTensors<SPACE> s7_inner_allocate<SPACE>(const S7InnerProblem&, const S7InnerConfig&);   \
  EXTERN template void s7_inner_forward<SPACE>(const S7InnerProblem&, const S7InnerConfig&,                      \
                                               S7InnerTensors<SPACE>&, const SPACE&);                            \
  EXTERN template void s7_inner_backward<SPACE>(const S7InnerProblem&, const S7InnerConfig&,                     \
                                                S7InnerTensors<SPACE>&, const SPACE&);

#ifdef KOKKOS_ENABLE_SERIAL
SCANLAB_S7_INNER_DECLARE(extern, Kokkos::Serial)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
SCANLAB_S7_INNER_DECLARE(extern, Kokkos::OpenMP)
#endif
#ifdef KOKKOS_ENABLE_CUDA
SCANLAB_S7_INNER_DECLARE(extern, Kokkos::Cuda)
#endif

}  // namespace scanlab::kernels
