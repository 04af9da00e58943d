#include "state_space_v1.hpp"

namespace scanlab {

void StateSpaceV1Problem::validate() const {
  RuleCheck rules(op_name);
  require_positive(rules, "batch", batch);
  require_positive(rules, "seqlen", seqlen);
  require_positive(rules, "dim", dim);
  require_positive(rules, "dstate", dstate);
  if (has_conv_state) require_positive(rules, "d_conv", d_conv);
  rules.require(!has_dfinal_state || with_backward, "dfinal_state is given without dout");
  rules.throw_if_broken();
  for (const auto& spec : tensors()) require_indexable(rules, spec.name, spec.shape);
  rules.throw_if_broken();
}

std::vector<TensorSpec> StateSpaceV1Problem::tensors() const {
  using R = TensorRole;
  const Shape bld{batch, seqlen, dim}, bln{batch, seqlen, dstate}, state{batch, dim, dstate};
  std::vector<TensorSpec> specs{{"hidden_states", bld, R::input}, {"A", {dim, dstate}, R::input},
                                {"B", bln, R::input}, {"C", bln, R::input}, {"D", {dim}, R::input},
                                {"dt", bld, R::input}};
  if (has_gate) specs.push_back({"gate", bld, R::input});
  if (has_initial_state) specs.push_back({"initial_state", state, R::input});
  if (has_conv_state) specs.push_back({"conv_state", {batch, dim, d_conv}, R::input});
  if (with_backward) specs.push_back({"dout", bld, R::grad_input});
  if (has_dfinal_state) specs.push_back({"dfinal_state", state, R::grad_input});
  specs.push_back({"out", bld, R::output});
  specs.push_back({"final_state", state, R::output});
  // conv_state is passed through under its own name; as an output it lands in the out dir.
  if (with_backward) {
    std::vector<TensorSpec> grads;
    for (const auto& s : specs)
      if (s.role == R::input) grads.push_back({"d" + s.name, s.shape, R::gradient});
    specs.insert(specs.end(), grads.begin(), grads.end());
  }
  return specs;
}

StateSpaceV1Problem StateSpaceV1Problem::from_case(const TensorMap& tensors, const nlohmann::json& options) {
  RuleCheck rules(op_name);
  StateSpaceV1Problem p;
  for (auto it = options.begin(); it != options.end(); ++it) {
    static const char* known[] = {"op", "act_fn", "seed", "scanlab_version", "note"};
    bool ok = false;
    for (auto* k : known) ok = ok || it.key() == k;
    rules.require(ok, "unknown option '" + it.key() + "' in case.json");
  }
  if (options.contains("act_fn")) {
    const auto& v = options.at("act_fn");
    if (v.is_string()) {
      try { p.act_fn = parse_gate_activation(v.get<std::string>()); }
      catch (const std::invalid_argument& e) { rules.require(false, e.what()); }
    } else {
      rules.require(false, "option 'act_fn' must be a string, got " + v.dump());
    }
  }
  const Tensor* x = find(tensors, "hidden_states");
  const Tensor* A = find(tensors, "A");
  const Tensor* conv = find(tensors, "conv_state");
  rules.require(x != nullptr, "missing input tensor 'hidden_states' (batch, seqlen, dim)");
  rules.require(A != nullptr, "missing input tensor 'A' (dim, dstate)");
  if (x && expect_rank(rules, "hidden_states", *x, 3, "(batch, seqlen, dim)")) {
    p.batch = x->shape[0]; p.seqlen = x->shape[1]; p.dim = x->shape[2];
  }
  if (A && expect_rank(rules, "A", *A, 2, "(dim, dstate)")) p.dstate = A->shape[1];
  p.has_gate = find(tensors, "gate") != nullptr;
  p.has_initial_state = find(tensors, "initial_state") != nullptr;
  p.has_conv_state = conv != nullptr;
  if (conv && expect_rank(rules, "conv_state", *conv, 3, "(batch, dim, d_conv)")) p.d_conv = conv->shape[2];
  p.with_backward = find(tensors, "dout") != nullptr;
  p.has_dfinal_state = find(tensors, "dfinal_state") != nullptr;
  rules.require(!options.contains("act_fn") || p.has_gate, "act_fn is given but there is no gate tensor");
  rules.throw_if_broken();
  p.validate();
  check_tensors_against_specs(op_name, p.tensors(), tensors, rules);
  rules.throw_if_broken();
  return p;
}

nlohmann::json StateSpaceV1Problem::options_json() const {
  nlohmann::json j{{"op", op_name}};
  if (has_gate) j["act_fn"] = to_string(act_fn);
  return j;
}

SelectiveScanProblem StateSpaceV1Problem::as_selective_scan() const {
  SelectiveScanProblem p;
  p.batch = batch; p.dim = dim; p.dstate = dstate; p.seqlen = seqlen; p.groups = 1;
  p.B_per_step = p.C_per_step = true;
  p.has_D = true; p.has_z = has_gate; p.has_delta_bias = false; p.delta_softplus = false;
  p.has_initial_state = has_initial_state;
  p.with_backward = with_backward; p.has_dlast_state = has_dfinal_state;
  p.gate_activation = act_fn;
  return p;
}

double StateSpaceV1Problem::bytes_moved(Pass pass) const {
  const double conv = has_conv_state ? 4.0 * double(batch) * dim * d_conv : 0.0;
  // forward: read and write the passthrough; backward: write its (zero) gradient.
  return as_selective_scan().bytes_moved(pass) + (pass == Pass::forward ? 2 * conv : conv);
}

}  // namespace scanlab
