// The float64 oracle for state_space_v1: sequential, written for clarity, not speed.
// Semantics: kernels/problem/state_space_v1.hpp.
#pragma once

#include "../kernels/problem/state_space_v1.hpp"

namespace scanlab::reference {

// Runs the forward pass and, when p.with_backward, the backward from dout (and the final-state
// cotangent when given). Returns every output and, with dout, every gradient "d" + input name.
TensorMap state_space_v1(const StateSpaceV1Problem& p, const TensorMap& inputs);

// Per-element bound on |float32 result − exact| for every tensor state_space_v1() returns, from the
// float64 magnitude pass (reference/error_bound.hpp explains the model).
TensorMap state_space_v1_error_bound(const StateSpaceV1Problem& p, const TensorMap& inputs);

}  // namespace scanlab::reference
