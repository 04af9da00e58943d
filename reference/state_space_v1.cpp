// The float64 oracle for state_space_v1: a layout adapter onto the selective_scan oracle, so the
// two ops share one copy of the math (and of its error bound).
//
// ejkernel's conventions are time-major: hidden_states, dt, gate, dout (b,L,D) and B, C (b,L,N).
// selective_scan's are channel-major: u, delta, z (b,D,L) and B, C (b,N,L). The mapping is
//   hidden_states → u, dt → delta (already post-softplus: no softplus, no delta_bias), gate → z
//   with act_fn as the gate activation, A, D (required), initial_state as they are,
//   dout → dout, dfinal_state → dlast_state;
// and back: out, final_state (= last_state), conv_state copied through untouched, gradients
// dhidden_states, ddt, dgate transposed back, dB, dC transposed back, dA, dD, dinitial_state as
// they are, and dconv_state = 0 (conv_state does not enter the scan).
#include "state_space_v1.hpp"

#include <cmath>
#include <stdexcept>

#include "error_bound.hpp"
#include "selective_scan.hpp"

namespace scanlab::reference {
namespace {

// (b, X, Y) → (b, Y, X).
Tensor swap_last_axes(const Tensor& t) {
  if (t.rank() != 3) throw std::invalid_argument("state_space_v1 oracle: expected a rank-3 tensor, got " + shape_string(t.shape));
  const std::int64_t batch = t.shape[0], rows = t.shape[1], cols = t.shape[2];
  Tensor swapped(Shape{batch, cols, rows});
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) swapped[(b * cols + c) * rows + r] = t[(b * rows + r) * cols + c];
  return swapped;
}

void check_shapes(const StateSpaceV1Problem& p, const TensorMap& inputs) {
  for (const auto& spec : p.tensors()) {
    if (spec.role != TensorRole::input && spec.role != TensorRole::grad_input) continue;
    const Tensor& t = require(inputs, spec.name);
    if (t.shape != spec.shape)
      throw std::invalid_argument("state_space_v1 oracle: tensor '" + spec.name + "' has shape " +
                                  shape_string(t.shape) + ", expected " + shape_string(spec.shape));
  }
}

// ejkernel's names and layouts → selective_scan's.
TensorMap to_selective_scan(const StateSpaceV1Problem& p, const TensorMap& inputs) {
  check_shapes(p, inputs);
  TensorMap ss;
  ss["u"] = swap_last_axes(require(inputs, "hidden_states"));
  ss["delta"] = swap_last_axes(require(inputs, "dt"));
  ss["A"] = require(inputs, "A");
  ss["B"] = swap_last_axes(require(inputs, "B"));
  ss["C"] = swap_last_axes(require(inputs, "C"));
  ss["D"] = require(inputs, "D");
  if (p.has_gate) ss["z"] = swap_last_axes(require(inputs, "gate"));
  if (p.has_initial_state) ss["initial_state"] = require(inputs, "initial_state");
  if (p.with_backward) ss["dout"] = swap_last_axes(require(inputs, "dout"));
  if (p.has_dfinal_state) ss["dlast_state"] = require(inputs, "dfinal_state");
  return ss;
}

// selective_scan's outputs (values or their bounds) → ejkernel's names and layouts. The
// conv_state passthrough and its zero gradient are filled in by the caller.
TensorMap from_selective_scan(const StateSpaceV1Problem& p, TensorMap ss) {
  TensorMap result;
  result["out"] = swap_last_axes(ss.at("out"));
  result["final_state"] = std::move(ss.at("last_state"));
  if (p.with_backward) {
    result["dhidden_states"] = swap_last_axes(ss.at("du"));
    result["ddt"] = swap_last_axes(ss.at("ddelta"));
    result["dA"] = std::move(ss.at("dA"));
    result["dB"] = swap_last_axes(ss.at("dB"));
    result["dC"] = swap_last_axes(ss.at("dC"));
    result["dD"] = std::move(ss.at("dD"));
    if (p.has_gate) result["dgate"] = swap_last_axes(ss.at("dz"));
    if (p.has_initial_state) result["dinitial_state"] = std::move(ss.at("dinitial_state"));
  }
  return result;
}

}  // namespace

TensorMap state_space_v1(const StateSpaceV1Problem& p, const TensorMap& inputs) {
  p.validate();
  TensorMap result = from_selective_scan(p, selective_scan(p.as_selective_scan(), to_selective_scan(p, inputs)));
  if (p.has_conv_state) {
    const Tensor& conv_state = require(inputs, "conv_state");
    result["conv_state"] = conv_state;
    if (p.with_backward) result["dconv_state"] = Tensor(conv_state.shape);  // no path to any output
  }
  return result;
}

TensorMap state_space_v1_error_bound(const StateSpaceV1Problem& p, const TensorMap& inputs) {
  p.validate();
  TensorMap bounds =
      from_selective_scan(p, selective_scan_error_bound(p.as_selective_scan(), to_selective_scan(p, inputs)));
  if (p.has_conv_state) {
    // The passthrough returns the float32-rounded input: |x|·eps away from the exact value (plus
    // the underflow term 2^-150 the magnitude pass adds to every rounding).
    const Tensor& conv_state = require(inputs, "conv_state");
    Tensor& conv_bound = bounds["conv_state"] = Tensor(conv_state.shape);
    for (std::int64_t i = 0; i < conv_state.numel(); ++i) conv_bound[i] = bound_from_terms(std::fabs(conv_state[i]) + 0x1p-126);
    // Exact zeros; the floor is the magnitude pass's underflow term (2^-150 per rounding), so
    // no bound is zero.
    if (p.with_backward) {
      Tensor& zero_bound = bounds["dconv_state"] = Tensor(conv_state.shape);
      for (auto& v : zero_bound.values) v = bound_from_terms(0x1p-126);
    }
  }
  return bounds;
}

}  // namespace scanlab::reference
