// Problem descriptor for selective_scan (Mamba-1 / SSM1; mamba_ssm's selective_scan_fn plus an
// initial state). The single source of truth for its shapes, options, validity and costs.
//
// Sizes: B = batch, D = dim, N = dstate, L = seqlen, G = groups. Tensors (names as in files):
//   u, delta, z, out (B,D,L); A (D,N); B, C per-step (B,N,L) or (B,G,N,L), or time-invariant
//   (D,N); D, delta_bias (D); initial_state, last_state (B,D,N).
// dt = delta + delta_bias[d], softplus'd if delta_softplus (dt > 20 keeps dt);
// h_t = exp(dt·A)·h_{t-1} + dt·B·u_t; y_t = Σ_n C·h_t + D·u_t; out = y·act(z) when z is given.
#pragma once

#include "common.hpp"

namespace scanlab {

// The activation applied to the gate z. mamba_ssm's selective_scan uses silu (y·z·sigmoid(z));
// ejkernel's state_space_v1 lets the caller choose.
enum class GateActivation { silu, identity, gelu_tanh, gelu_erf };
std::string to_string(GateActivation activation);
GateActivation parse_gate_activation(const std::string& name);  // throws std::invalid_argument

// Softplus keeps dt unchanged above this, as mamba_ssm does.
inline constexpr double kSoftplusThreshold = 20.0;

struct SelectiveScanProblem {
  static constexpr const char* op_name = "selective_scan";

  std::int64_t batch = 1, dim = 1, dstate = 1, seqlen = 1, groups = 1;
  bool B_per_step = true;  // false: time-invariant B of shape (D,N)
  bool C_per_step = true;
  bool has_D = false, has_z = false, has_delta_bias = false, delta_softplus = false;
  bool has_initial_state = false;
  bool with_backward = false;    // the case holds dout: gradients are computed
  bool has_dlast_state = false;  // the case holds dlast_state as well
  GateActivation gate_activation = GateActivation::silu;  // case.json "act_fn"; silu if absent

  void validate() const;  // throws ProblemError listing every broken rule

  // Reads the dims from the tensors' shapes and the options from case.json's object, then checks
  // that every tensor agrees with them.
  static SelectiveScanProblem from_case(const TensorMap& tensors, const nlohmann::json& options);
  nlohmann::json options_json() const;  // the scalar options case.json holds

  Shape bc_shape(bool per_step) const;
  Shape B_shape() const { return bc_shape(B_per_step); }
  Shape C_shape() const { return bc_shape(C_per_step); }
  std::vector<TensorSpec> tensors() const;  // inputs, backward inputs, outputs and gradients

  std::int64_t channels_per_group() const { return dim / groups; }
  std::int64_t group_of_channel(std::int64_t d) const { return d / channels_per_group(); }

  // Fewest bytes a float32 implementation must move: every tensor the pass reads once, every
  // tensor it writes once. Forward: u, delta, z, B, C, A, D, delta_bias, initial_state in; out and
  // last_state out. Backward: the forward inputs plus dout and dlast_state in; every gradient out.
  double bytes_moved(Pass pass) const;
  // Per (b,d,t) and state n the forward does exp's argument (1), dt·B·u (2), the state update FMA
  // (2) and the C·h FMA (2): 7 flops; plus dt (1), the D skip (2) and the gate (4) per (b,d,t).
  // The backward is counted as twice the forward's state work plus its own gradient FMAs (6 per n).
  double flops(Pass pass) const;
  // exp, log and reciprocal: N exps per (b,d,t) forward (2N backward, which recomputes them);
  // softplus costs an exp and a log (and a reciprocal in the backward); sigmoid an exp and a
  // reciprocal; gelu_erf's erf and gelu_tanh's tanh count one each.
  double sfu_ops(Pass pass) const;
};

}  // namespace scanlab
