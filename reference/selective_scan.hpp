// The float64 oracle for selective_scan: sequential, written for clarity, not speed.
// Semantics: kernels/problem/selective_scan.hpp.
#pragma once

#include "../kernels/problem/selective_scan.hpp"

namespace scanlab::reference {

// Runs the forward pass and, when p.with_backward, the backward from dout (and the final-state
// cotangent when given). Returns every output and, with dout, every gradient "d" + input name.
TensorMap selective_scan(const SelectiveScanProblem& p, const TensorMap& inputs);

// Per-element bound on |float32 result − exact| for every tensor selective_scan() returns, from the
// float64 magnitude pass (reference/error_bound.hpp explains the model).
TensorMap selective_scan_error_bound(const SelectiveScanProblem& p, const TensorMap& inputs);

}  // namespace scanlab::reference
