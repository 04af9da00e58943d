#include "s7_inner.hpp"

namespace scanlab {

void S7InnerProblem::validate() const {
  RuleCheck rules(op_name);
  require_positive(rules, "batch", batch);
  require_positive(rules, "seqlen", seqlen);
  require_positive(rules, "dim", dim);
  require_positive(rules, "dstate", dstate);
  rules.throw_if_broken();
  // x_proj_rows() = 2·dstate + 2·dim·dstate + dim ≤ 5·dim·dstate must not overflow int64 itself
  // before the shapes below are checked.
  rules.require(dstate <= kMaxElements / 5 / dim,
                "dim·dstate is too large: x_proj_weight's row count (2·dstate + 2·dim·dstate + dim) must stay "
                "addressable by a 64-bit offset (5·dim·dstate ≤ 2^59)");
  rules.throw_if_broken();
  for (const auto& spec : tensors()) require_indexable(rules, spec.name, spec.shape);
  require_indexable(rules, "x_dbl (intermediate)", {batch, seqlen, x_proj_rows()});
  rules.throw_if_broken();
}

std::vector<TensorSpec> S7InnerProblem::tensors() const {
  using R = TensorRole;
  const Shape bld{batch, seqlen, dim};
  std::vector<TensorSpec> specs{{"hidden_states", bld, R::input}, {"in_proj_weight", {dim, dim}, R::input},
                                {"x_proj_weight", {x_proj_rows(), dim}, R::input},
                                {"gate_proj_weight", {dim, dim}, R::input}, {"base_params", {dstate}, R::input}};
  if (with_backward) specs.push_back({"dout", bld, R::grad_input});
  specs.push_back({"out", bld, R::output});
  if (with_backward) {
    std::vector<TensorSpec> grads;
    for (const auto& s : specs)
      if (s.role == R::input) grads.push_back({"d" + s.name, s.shape, R::gradient});
    specs.insert(specs.end(), grads.begin(), grads.end());
  }
  return specs;
}

S7InnerProblem S7InnerProblem::from_case(const TensorMap& tensors, const nlohmann::json& options) {
  RuleCheck rules(op_name);
  S7InnerProblem p;
  for (auto it = options.begin(); it != options.end(); ++it) {
    static const char* known[] = {"op", "seed", "scanlab_version", "note"};
    bool ok = false;
    for (auto* k : known) ok = ok || it.key() == k;
    rules.require(ok, "unknown option '" + it.key() + "' in case.json");
  }
  const Tensor* x = find(tensors, "hidden_states");
  const Tensor* base = find(tensors, "base_params");
  rules.require(x != nullptr, "missing input tensor 'hidden_states' (batch, seqlen, dim)");
  rules.require(base != nullptr, "missing input tensor 'base_params' (dstate,)");
  if (x && expect_rank(rules, "hidden_states", *x, 3, "(batch, seqlen, dim)")) {
    p.batch = x->shape[0]; p.seqlen = x->shape[1]; p.dim = x->shape[2];
  }
  if (base && expect_rank(rules, "base_params", *base, 1, "(dstate,)")) p.dstate = base->shape[0];
  p.with_backward = find(tensors, "dout") != nullptr;
  rules.throw_if_broken();
  p.validate();
  check_tensors_against_specs(op_name, p.tensors(), tensors, rules);
  rules.throw_if_broken();
  return p;
}

nlohmann::json S7InnerProblem::options_json() const { return {{"op", op_name}}; }

S7ScanProblem S7InnerProblem::inner_scan() const {
  S7ScanProblem s;
  s.batch = batch; s.dim = dim; s.dstate = dstate; s.seqlen = seqlen;
  s.has_bias = true; s.has_initial_state = false;
  s.with_backward = with_backward; s.has_dlast_state = false;
  return s;
}

double S7InnerProblem::bytes_moved(Pass pass) const {
  const double bld = double(batch) * seqlen * dim;
  const double weights = 2.0 * dim * dim + double(x_proj_rows()) * dim + dstate;
  if (pass == Pass::forward) return 4.0 * (bld + weights + bld);
  return 4.0 * (bld + weights + bld + bld + weights);
}

double S7InnerProblem::flops(Pass pass) const {
  const double bl = double(batch) * seqlen;
  const double products = 2.0 * bl * dim * (2.0 * dim + double(x_proj_rows()));
  const double tail = bl * dim * 12.0;
  if (pass == Pass::forward) return products + inner_scan().flops(Pass::forward) + tail;
  return 2 * products + inner_scan().flops(Pass::backward) + 2 * tail;
}

double S7InnerProblem::sfu_ops(Pass pass) const {
  const double bld = double(batch) * seqlen * dim;
  if (pass == Pass::forward) return bld * 3 + inner_scan().sfu_ops(Pass::forward);
  return bld * 5 + inner_scan().sfu_ops(Pass::backward);
}

}  // namespace scanlab
