#include "s7_scan.hpp"

namespace scanlab {

void S7ScanProblem::validate() const {
  RuleCheck rules(op_name);
  require_positive(rules, "batch", batch);
  require_positive(rules, "dim", dim);
  require_positive(rules, "dstate", dstate);
  require_positive(rules, "seqlen", seqlen);
  rules.require(!has_dlast_state || with_backward, "dlast_state is given without dout");
  rules.throw_if_broken();
  for (const auto& spec : tensors()) require_indexable(rules, spec.name, spec.shape);
  rules.throw_if_broken();
}

std::vector<TensorSpec> S7ScanProblem::tensors() const {
  using R = TensorRole;
  const Shape bhl{batch, dim, seqlen}, bnl{batch, dstate, seqlen}, state{batch, dstate};
  std::vector<TensorSpec> specs{{"u", bhl, R::input}, {"A", bnl, R::input},
                                {"B", {batch, dstate, dim, seqlen}, R::input},
                                {"C", {batch, dim, dstate, seqlen}, R::input}};
  if (has_bias) specs.push_back({"bias", bnl, R::input});
  if (has_initial_state) specs.push_back({"initial_state", state, R::input});
  if (with_backward) specs.push_back({"dout", bhl, R::grad_input});
  if (has_dlast_state) specs.push_back({"dlast_state", state, R::grad_input});
  specs.push_back({"out", bhl, R::output});
  specs.push_back({"last_state", state, R::output});
  if (with_backward) {
    std::vector<TensorSpec> grads;
    for (const auto& s : specs)
      if (s.role == R::input) grads.push_back({"d" + s.name, s.shape, R::gradient});
    specs.insert(specs.end(), grads.begin(), grads.end());
  }
  return specs;
}

S7ScanProblem S7ScanProblem::from_case(const TensorMap& tensors, const nlohmann::json& options) {
  RuleCheck rules(op_name);
  S7ScanProblem p;
  for (auto it = options.begin(); it != options.end(); ++it) {
    static const char* known[] = {"op", "seed", "scanlab_version", "note"};
    bool ok = false;
    for (auto* k : known) ok = ok || it.key() == k;
    rules.require(ok, "unknown option '" + it.key() + "' in case.json");
  }
  const Tensor* u = find(tensors, "u");
  const Tensor* A = find(tensors, "A");
  rules.require(u != nullptr, "missing input tensor 'u' (batch, dim, seqlen)");
  rules.require(A != nullptr, "missing input tensor 'A' (batch, dstate, seqlen)");
  if (u && expect_rank(rules, "u", *u, 3, "(batch, dim, seqlen)")) {
    p.batch = u->shape[0]; p.dim = u->shape[1]; p.seqlen = u->shape[2];
  }
  if (A && expect_rank(rules, "A", *A, 3, "(batch, dstate, seqlen)")) p.dstate = A->shape[1];
  p.has_bias = find(tensors, "bias") != nullptr;
  p.has_initial_state = find(tensors, "initial_state") != nullptr;
  p.with_backward = find(tensors, "dout") != nullptr;
  p.has_dlast_state = find(tensors, "dlast_state") != nullptr;
  rules.throw_if_broken();
  p.validate();
  check_tensors_against_specs(op_name, p.tensors(), tensors, rules);
  rules.throw_if_broken();
  return p;
}

nlohmann::json S7ScanProblem::options_json() const { return {{"op", op_name}}; }

double S7ScanProblem::bytes_moved(Pass pass) const {
  const double bl = double(batch) * seqlen;
  const double big = 2.0 * bl * dstate * dim;  // B and C
  const double inputs = big + bl * dim + bl * dstate * (1 + (has_bias ? 1 : 0)) +
                        (has_initial_state ? double(batch) * dstate : 0);
  const double outputs = bl * dim + double(batch) * dstate;
  if (pass == Pass::forward) return 4.0 * (inputs + outputs);
  const double grad_in = bl * dim + (has_dlast_state ? double(batch) * dstate : 0);
  return 4.0 * (inputs + grad_in + inputs);
}

double S7ScanProblem::flops(Pass pass) const {
  const double bl = double(batch) * seqlen;
  const double forward = bl * (4.0 * dstate * dim + 6.0 * dstate);
  if (pass == Pass::forward) return forward;
  return forward + bl * (8.0 * dstate * dim + 6.0 * dstate);
}

double S7ScanProblem::sfu_ops(Pass pass) const {
  const double bnl = double(batch) * dstate * seqlen;
  return pass == Pass::forward ? bnl : 2 * bnl;
}

}  // namespace scanlab
