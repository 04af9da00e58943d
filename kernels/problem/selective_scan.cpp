#include "selective_scan.hpp"

namespace scanlab {

std::string to_string(GateActivation activation) {
  switch (activation) {
    case GateActivation::silu: return "silu";
    case GateActivation::identity: return "identity";
    case GateActivation::gelu_tanh: return "gelu_tanh";
    case GateActivation::gelu_erf: return "gelu_erf";
  }
  return "?";
}

GateActivation parse_gate_activation(const std::string& name) {
  for (auto a : {GateActivation::silu, GateActivation::identity, GateActivation::gelu_tanh, GateActivation::gelu_erf})
    if (to_string(a) == name) return a;
  throw std::invalid_argument("unknown act_fn '" + name + "' (expected silu, identity, gelu_tanh or gelu_erf)");
}

Shape SelectiveScanProblem::bc_shape(bool per_step) const {
  if (!per_step) return {dim, dstate};
  if (groups == 1) return {batch, dstate, seqlen};
  return {batch, groups, dstate, seqlen};
}

void SelectiveScanProblem::validate() const {
  RuleCheck rules(op_name);
  require_positive(rules, "batch", batch);
  require_positive(rules, "dim", dim);
  require_positive(rules, "dstate", dstate);
  require_positive(rules, "seqlen", seqlen);
  require_positive(rules, "groups", groups);
  if (groups > 0 && dim > 0) {
    rules.require(dim % groups == 0, "groups (" + std::to_string(groups) + ") must divide dim (" +
                                         std::to_string(dim) + ")");
    rules.require(groups == 1 || B_per_step || C_per_step,
                  "groups > 1 needs a per-step B or C; time-invariant B and C have no group axis");
  }
  rules.require(!has_dlast_state || with_backward, "dlast_state is given without dout");
  rules.throw_if_broken();  // the shapes below are meaningless with non-positive sizes
  for (const auto& spec : tensors()) require_indexable(rules, spec.name, spec.shape);
  rules.throw_if_broken();
}

std::vector<TensorSpec> SelectiveScanProblem::tensors() const {
  const Shape bdl{batch, dim, seqlen}, state{batch, dim, dstate}, per_dim{dim};
  using R = TensorRole;
  std::vector<TensorSpec> specs{{"u", bdl, R::input}, {"delta", bdl, R::input}, {"A", {dim, dstate}, R::input},
                                {"B", B_shape(), R::input}, {"C", C_shape(), R::input}};
  if (has_D) specs.push_back({"D", per_dim, R::input});
  if (has_z) specs.push_back({"z", bdl, R::input});
  if (has_delta_bias) specs.push_back({"delta_bias", per_dim, R::input});
  if (has_initial_state) specs.push_back({"initial_state", state, R::input});
  if (with_backward) specs.push_back({"dout", bdl, R::grad_input});
  if (has_dlast_state) specs.push_back({"dlast_state", state, R::grad_input});
  specs.push_back({"out", bdl, R::output});
  specs.push_back({"last_state", state, R::output});
  if (with_backward) {
    std::vector<TensorSpec> grads;
    for (const auto& s : specs)
      if (s.role == R::input) grads.push_back({"d" + s.name, s.shape, R::gradient});
    specs.insert(specs.end(), grads.begin(), grads.end());
  }
  return specs;
}

SelectiveScanProblem SelectiveScanProblem::from_case(const TensorMap& tensors, const nlohmann::json& options) {
  RuleCheck rules(op_name);
  SelectiveScanProblem p;
  p.delta_softplus = bool_option(options, "delta_softplus", rules);
  for (auto it = options.begin(); it != options.end(); ++it) {
    static const char* known[] = {"op", "delta_softplus", "act_fn", "seed", "scanlab_version", "note"};
    bool ok = false;
    for (auto* k : known) ok = ok || it.key() == k;
    rules.require(ok, "unknown option '" + it.key() + "' in case.json");
  }
  // mamba_ssm gates with silu; a case may name another gate activation (state_space_v1's set),
  // so every problem the kernels accept can be saved and replayed as a case directory.
  if (options.contains("act_fn")) {
    const auto& v = options.at("act_fn");
    if (v.is_string()) {
      try { p.gate_activation = parse_gate_activation(v.get<std::string>()); }
      catch (const std::invalid_argument& e) { rules.require(false, e.what()); }
    } else {
      rules.require(false, "option 'act_fn' must be a string, got " + v.dump());
    }
  }
  const Tensor* u = find(tensors, "u");
  const Tensor* A = find(tensors, "A");
  rules.require(u != nullptr, "missing input tensor 'u' (batch, dim, seqlen)");
  rules.require(A != nullptr, "missing input tensor 'A' (dim, dstate)");
  if (u && expect_rank(rules, "u", *u, 3, "(batch, dim, seqlen)")) {
    p.batch = u->shape[0]; p.dim = u->shape[1]; p.seqlen = u->shape[2];
  }
  if (A && expect_rank(rules, "A", *A, 2, "(dim, dstate)")) p.dstate = A->shape[1];
  // B and C: rank 2 is time-invariant, rank 3 per-step, rank 4 per-step with groups.
  std::int64_t groups_seen[2] = {0, 0};
  const char* names[2] = {"B", "C"};
  bool* per_step[2] = {&p.B_per_step, &p.C_per_step};
  for (int i = 0; i < 2; ++i) {
    const Tensor* t = find(tensors, names[i]);
    if (!t) { rules.require(false, std::string("missing input tensor '") + names[i] + "'"); continue; }
    auto r = t->shape.size();
    rules.require(r >= 2 && r <= 4, std::string("tensor '") + names[i] + "' has rank " + std::to_string(r) +
                                        " " + shape_string(t->shape) +
                                        "; expected (dim, dstate), (batch, dstate, seqlen) or (batch, groups, dstate, seqlen)");
    *per_step[i] = r != 2;
    if (r == 3) groups_seen[i] = 1;
    if (r == 4) groups_seen[i] = t->shape[1];
  }
  if (groups_seen[0] && groups_seen[1])
    rules.require(groups_seen[0] == groups_seen[1], "B has " + std::to_string(groups_seen[0]) + " groups but C has " +
                                                        std::to_string(groups_seen[1]) + "; per-step B and C must agree");
  p.groups = groups_seen[0] ? groups_seen[0] : (groups_seen[1] ? groups_seen[1] : 1);
  p.has_D = find(tensors, "D") != nullptr;
  p.has_z = find(tensors, "z") != nullptr;
  p.has_delta_bias = find(tensors, "delta_bias") != nullptr;
  p.has_initial_state = find(tensors, "initial_state") != nullptr;
  p.with_backward = find(tensors, "dout") != nullptr;
  p.has_dlast_state = find(tensors, "dlast_state") != nullptr;
  rules.throw_if_broken();
  // A 4-D B or C with one group has the same memory as the 3-D form: accept both.
  TensorMap canonical = tensors;
  for (const char* n : {"B", "C"}) {
    auto it = canonical.find(n);
    if (it != canonical.end() && it->second.shape.size() == 4 && it->second.shape[1] == 1)
      it->second.shape = {it->second.shape[0], it->second.shape[2], it->second.shape[3]};
  }
  p.validate();
  check_tensors_against_specs(op_name, p.tensors(), canonical, rules);
  rules.throw_if_broken();
  return p;
}

nlohmann::json SelectiveScanProblem::options_json() const {
  nlohmann::json j{{"op", op_name}, {"delta_softplus", delta_softplus}};
  if (gate_activation != GateActivation::silu) j["act_fn"] = to_string(gate_activation);
  return j;
}

double SelectiveScanProblem::bytes_moved(Pass pass) const {
  const double f = 4.0;  // float32
  const double bdl = double(batch) * dim * seqlen, state = double(batch) * dim * dstate;
  const double bc = double(shape_numel(B_shape())) + double(shape_numel(C_shape()));
  const double small = double(dim) * dstate + (has_D ? dim : 0) + (has_delta_bias ? dim : 0);
  double read = bdl * (2 + (has_z ? 1 : 0)) + bc + small + (has_initial_state ? state : 0);
  if (pass == Pass::forward) return f * (read + bdl + state);
  read += bdl + (has_dlast_state ? state : 0);  // dout, dlast_state
  return f * (read + read - bdl - (has_dlast_state ? state : 0));  // one gradient per forward input
}

double SelectiveScanProblem::flops(Pass pass) const {
  const double bdl = double(batch) * dim * seqlen;
  const double per_step = 7.0 * dstate + 1 + (has_D ? 2 : 0) + (has_z ? 4 : 0);
  if (pass == Pass::forward) return bdl * per_step;
  return bdl * (2 * per_step + 6.0 * dstate);
}

double SelectiveScanProblem::sfu_ops(Pass pass) const {
  const double bdl = double(batch) * dim * seqlen;
  const bool backward = pass == Pass::backward;
  double gate = 0;
  if (has_z) {
    switch (gate_activation) {
      case GateActivation::silu: gate = 2; break;
      case GateActivation::identity: gate = 0; break;
      case GateActivation::gelu_tanh: case GateActivation::gelu_erf: gate = backward ? 2 : 1; break;
    }
  }
  const double softplus = delta_softplus ? (backward ? 3 : 2) : 0;
  return bdl * ((backward ? 2.0 : 1.0) * dstate + softplus + gate);
}

}  // namespace scanlab
