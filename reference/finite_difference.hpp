// Checks an analytic backward against central finite differences of its own forward, in
// float64. The scalar probed is loss = Σ_k <output_k, cotangent_k> (dout for out, dlast_state
// for last_state, ...), whose gradient with respect to each input is what the backward returns.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "../kernels/tensor.hpp"

namespace scanlab::reference {

using ForwardFn = std::function<TensorMap(const TensorMap& inputs)>;

struct FiniteDifferenceOptions {
  double relative_step = 1e-6;     // h = relative_step · max(1, |x|)
  double tolerance = 1e-6;         // on |fd − analytic| / scale, scale = max(max|analytic|, max|fd|, 1e-300)
  std::int64_t max_elements = 64;  // elements probed per input (all of them when smaller)
  std::uint64_t seed = 1;          // which elements, when sampling
  // Inputs whose probe would cross a kink (e.g. softplus at 20): the caller keeps points away.
};

struct GradientCheck {
  std::string input;                 // e.g. "delta"
  std::int64_t probed = 0;
  double max_error = 0;              // max |fd − analytic| / scale over the probed elements
  std::int64_t worst_index = -1;
  double fd = 0, analytic = 0;       // at worst_index
  bool pass = false;
};

// cotangents maps an output name to its cotangent tensor ("out" -> dout, "last_state" ->
// dlast_state). analytic maps "d" + input name to the gradient to be checked; every input named in
// `inputs_to_check` must have one.
std::vector<GradientCheck> check_gradients(const ForwardFn& forward, const TensorMap& inputs,
                                           const std::map<std::string, Tensor>& cotangents,
                                           const TensorMap& analytic,
                                           const std::vector<std::string>& inputs_to_check,
                                           const FiniteDifferenceOptions& options = {});

std::string describe(const std::vector<GradientCheck>& checks);

}  // namespace scanlab::reference
