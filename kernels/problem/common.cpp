#include "common.hpp"

#include <set>

namespace scanlab {

static std::string join_messages(const std::string& op, const std::vector<std::string>& messages) {
  std::string text = op + ": invalid problem:";
  for (const auto& m : messages) text += "\n  - " + m;
  return text;
}

ProblemError::ProblemError(const std::string& op, std::vector<std::string> messages)
    : std::invalid_argument(join_messages(op, messages)), messages_(std::move(messages)) {}

void check_tensors_against_specs(const std::string& op, const std::vector<TensorSpec>& specs,
                                 const TensorMap& tensors, RuleCheck& rules) {
  std::set<std::string> known;  // what a case directory may hold: inputs and backward inputs
  for (const auto& spec : specs) {
    if (spec.role == TensorRole::output || spec.role == TensorRole::gradient) continue;
    known.insert(spec.name);
    auto it = tensors.find(spec.name);
    if (it == tensors.end()) {
      rules.require(false, "missing input tensor '" + spec.name + "' of shape " + shape_string(spec.shape));
      continue;
    }
    rules.require(it->second.shape == spec.shape, "tensor '" + spec.name + "' has shape " +
                                                     shape_string(it->second.shape) + ", expected " +
                                                     shape_string(spec.shape));
  }
  for (const auto& [name, tensor] : tensors) {
    (void)tensor;
    rules.require(known.count(name) > 0, "tensor '" + name + "' is not an input of " + op +
                                             " with these options (misspelled, or an option missing?)");
  }
}

bool expect_rank(RuleCheck& rules, const std::string& name, const Tensor& t, std::size_t rank,
                 const std::string& layout) {
  bool ok = t.shape.size() == rank;
  rules.require(ok, "tensor '" + name + "' has rank " + std::to_string(t.shape.size()) + " " +
                        shape_string(t.shape) + ", expected rank " + std::to_string(rank) + " " + layout);
  return ok;
}

bool bool_option(const nlohmann::json& options, const std::string& key, RuleCheck& rules) {
  if (!options.contains(key)) return false;
  const auto& v = options.at(key);
  rules.require(v.is_boolean(), "option '" + key + "' must be true or false, got " + v.dump());
  return v.is_boolean() && v.get<bool>();
}

void require_positive(RuleCheck& rules, const std::string& what, std::int64_t value) {
  rules.require(value > 0, what + " must be positive, got " + std::to_string(value));
}

void require_indexable(RuleCheck& rules, const std::string& tensor, const Shape& shape) {
  std::int64_t n = 1;
  for (auto extent : shape) {
    if (extent <= 0) return;  // reported by require_positive
    if (n > kMaxElements / extent) {
      rules.require(false, "tensor '" + tensor + "' of shape " + shape_string(shape) +
                               " has more elements than a 64-bit offset can address safely (2^59)");
      return;
    }
    n *= extent;
  }
}

}  // namespace scanlab
