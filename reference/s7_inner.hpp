// The float64 oracle for s7_inner: sequential, written for clarity, not speed.
// Semantics: kernels/problem/s7_inner.hpp.
#pragma once

#include "../kernels/problem/s7_inner.hpp"

namespace scanlab::reference {

// Runs the forward pass and, when p.with_backward, the backward from dout (and the final-state
// cotangent when given). Returns every output and, with dout, every gradient "d" + input name.
TensorMap s7_inner(const S7InnerProblem& p, const TensorMap& inputs);

// Per-element bound on |float32 result − exact| for every tensor s7_inner() returns, from a
// float64 probabilistic first-order pass (Higham–Mary; reference/s7_inner.cpp explains the model,
// reference/error_bound.hpp the shared constants).
TensorMap s7_inner_error_bound(const S7InnerProblem& p, const TensorMap& inputs);

}  // namespace scanlab::reference
