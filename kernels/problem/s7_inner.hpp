// Problem descriptor for s7_inner (lrnnx's s7_inner_fn), the fused S7 layer.
// Sizes: batch b, seqlen L, dim Dm (d_model), dstate N. hidden_states, out (b,L,Dm);
// in_proj_weight, gate_proj_weight (Dm,Dm); x_proj_weight (R, Dm) with R = N + 2·Dm·N + Dm + N;
// base_params (N).
// x = hidden_states·W_inᵀ; x_dbl = x·W_xᵀ split into [N | Dm·N | Dm·N | Dm | N] → A (+ base_params),
// B (viewed (b,N,Dm,L)), C (viewed (b,Dm,N,L)), D_tv, bias; inside each Dm·N block the flat
// index is h·N + n; y = s7_scan(xᵀ, A, B, C, bias) + D_tv ⊙ xᵀ;
// out = sigmoid(gelu(yᵀ)·W_gateᵀ) ⊙ yᵀ + hidden_states with the exact (erf) GELU.
#pragma once

#include "s7_scan.hpp"

namespace scanlab {

struct S7InnerProblem {
  static constexpr const char* op_name = "s7_inner";

  std::int64_t batch = 1, seqlen = 1, dim = 1, dstate = 1;
  bool with_backward = false;

  void validate() const;
  static S7InnerProblem from_case(const TensorMap& tensors, const nlohmann::json& options);
  nlohmann::json options_json() const;
  std::vector<TensorSpec> tensors() const;

  std::int64_t x_proj_rows() const { return 2 * dstate + 2 * dim * dstate + dim; }
  // Column offsets of the five blocks inside x_dbl's last axis.
  std::int64_t offset_A() const { return 0; }
  std::int64_t offset_B() const { return dstate; }
  std::int64_t offset_C() const { return dstate + dim * dstate; }
  std::int64_t offset_D() const { return dstate + 2 * dim * dstate; }
  std::int64_t offset_bias() const { return dstate + 2 * dim * dstate + dim; }
  S7ScanProblem inner_scan() const;  // the s7_scan this layer runs

  // Compulsory bytes: hidden_states and the weights in, out written (backward: plus dout in and
  // every gradient out). x_dbl (b·L·R) is an intermediate and not counted.
  double bytes_moved(Pass pass) const;
  // The three products (2·b·L·Dm·(Dm + R + Dm)) plus the scan and the elementwise tail; the
  // backward is counted as twice the forward's products plus the scan's backward.
  double flops(Pass pass) const;
  // erf per GELU, exp + reciprocal per sigmoid, the scan's reciprocals.
  double sfu_ops(Pass pass) const;
};

}  // namespace scanlab
