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

}  // namespace scanlab::reference
