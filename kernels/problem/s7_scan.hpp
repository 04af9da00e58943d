// Problem descriptor for s7_scan (lrnnx's s7_scan_fn plus an initial state).
// Sizes: batch b, dim H, dstate N, seqlen L. u, out (b,H,L); A, bias (b,N,L); B (b,N,H,L);
// C (b,H,N,L); initial_state, last_state (b,N).
// A_bar = 1 − 1/(A²+0.5); Bu_t[n] = Σ_h B[n,h,t]·u[h,t] + bias[n,t]; x_t = A_bar_t·x_{t−1} + Bu_t;
// y[h,t] = Σ_n C[h,n,t]·x_t[n]; last_state = x_{L−1}.
#pragma once

#include "common.hpp"

namespace scanlab {

struct S7ScanProblem {
  static constexpr const char* op_name = "s7_scan";

  std::int64_t batch = 1, dim = 1, dstate = 1, seqlen = 1;
  bool has_bias = false, has_initial_state = false;
  bool with_backward = false, has_dlast_state = false;

  void validate() const;
  static S7ScanProblem from_case(const TensorMap& tensors, const nlohmann::json& options);
  nlohmann::json options_json() const;
  std::vector<TensorSpec> tensors() const;

  // Compulsory bytes only (float32): |B| + |C| + |u| + |A| + |bias| + |initial_state| + |out| +
  // |last_state| forward; the backward reads those inputs plus dout and dlast_state and writes one
  // gradient per input. Intermediates of size O(b·N·L) (Bu, chunk states) are not counted: they
  // are measured and reported beside this as extra traffic.
  double bytes_moved(Pass pass) const;
  // Per (b,t): Bu is 2·N·H, y is 2·H·N; per (b,n,t): A_bar 3, bias 1, the update FMA 2.
  // Backward: the forward recomputed plus dB, dC, du, dx (8·N·H per (b,t)) and dA (6 per (b,n,t)).
  double flops(Pass pass) const;
  // One reciprocal per (b,n,t) for A_bar (recomputed in the backward, plus one for dA).
  double sfu_ops(Pass pass) const;
};

}  // namespace scanlab
