// Problem descriptor for state_space_v1: selective_scan's math under ejkernel's conventions.
// hidden_states, dt, gate, out (b,L,D) are time-major; A (D,N); B, C (b,L,N); D (D, required);
// dt is already post-softplus; optional gate with act_fn (silu by default); optional
// initial_state (b,D,N); optional conv_state (b,D,d_conv), passed through untouched.
// Outputs: out, final_state (b,D,N), conv_state. Gradients from dout and optional dfinal_state.
#pragma once

#include "selective_scan.hpp"

namespace scanlab {

struct StateSpaceV1Problem {
  static constexpr const char* op_name = "state_space_v1";

  std::int64_t batch = 1, seqlen = 1, dim = 1, dstate = 1;
  bool has_gate = false;
  GateActivation act_fn = GateActivation::silu;
  bool has_initial_state = false;
  bool has_conv_state = false;
  std::int64_t d_conv = 0;  // meaningful only with conv_state
  bool with_backward = false, has_dfinal_state = false;

  void validate() const;
  static StateSpaceV1Problem from_case(const TensorMap& tensors, const nlohmann::json& options);
  nlohmann::json options_json() const;
  std::vector<TensorSpec> tensors() const;

  // The same math as a selective_scan problem (one group, per-step B and C, D given, no
  // delta_bias, no softplus): kernels and oracle run it through selective_scan's code.
  SelectiveScanProblem as_selective_scan() const;

  // Costs are selective_scan's, plus the conv_state passthrough copy.
  double bytes_moved(Pass pass) const;
  double flops(Pass pass) const { return as_selective_scan().flops(pass); }
  double sfu_ops(Pass pass) const { return as_selective_scan().sfu_ops(pass); }
};

}  // namespace scanlab
