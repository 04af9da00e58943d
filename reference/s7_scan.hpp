// The float64 oracle for s7_scan: sequential, written for clarity, not speed.
// Semantics: kernels/problem/s7_scan.hpp.
#pragma once

#include "../kernels/problem/s7_scan.hpp"

namespace scanlab::reference {

// Runs the forward pass and, when p.with_backward, the backward from dout (and the final-state
// cotangent when given). Returns every output and, with dout, every gradient "d" + input name.
TensorMap s7_scan(const S7ScanProblem& p, const TensorMap& inputs);

// Per-element bound on |float32 result − exact| for every tensor s7_scan() returns, from the
// float64 magnitude pass (reference/error_bound.hpp explains the model).
TensorMap s7_scan_error_bound(const S7ScanProblem& p, const TensorMap& inputs);

// The magnitude pass itself, for ops that run s7_scan inside (s7_inner): `input_terms` holds, for
// every input and cotangent the problem reads (u, A, B, C, bias, initial_state, dout,
// dlast_state), a per-element first-order error term in units of eps32 (|value| for an input
// that was only rounded to float32; more when the input was itself computed in float32).
// Returns the same kind of terms, not yet scaled by bound_from_terms, for every tensor
// s7_scan() returns.
TensorMap s7_scan_error_terms(const S7ScanProblem& p, const TensorMap& inputs, const TensorMap& input_terms);

}  // namespace scanlab::reference
