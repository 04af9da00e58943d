// What every problem descriptor shares: the error type that carries one message per broken
// rule, the tensor specs, and the pass (forward / backward) that the cost counters are for.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../tensor.hpp"

namespace scanlab {

// Thrown by validate() and from_case(); what() lists every broken rule, one per line.
class ProblemError : public std::invalid_argument {
 public:
  ProblemError(const std::string& op, std::vector<std::string> messages);
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  std::vector<std::string> messages_;
};

// Collects broken rules, then throws them together so a user fixes a case in one go.
class RuleCheck {
 public:
  explicit RuleCheck(std::string op) : op_(std::move(op)) {}
  void require(bool ok, const std::string& message) {
    if (!ok) messages_.push_back(message);
  }
  bool ok() const { return messages_.empty(); }
  void throw_if_broken() const {
    if (!messages_.empty()) throw ProblemError(op_, messages_);
  }

 private:
  std::string op_;
  std::vector<std::string> messages_;
};

enum class TensorRole { input, output, grad_input, gradient };

// One tensor the op reads or writes, with the shape the problem's dims imply.
struct TensorSpec {
  std::string name;
  Shape shape;
  TensorRole role;
};

// The forward pass, or the backward pass alone (which re-reads the forward inputs).
enum class Pass { forward, backward };

// Elements beyond this cannot be indexed by a signed 64-bit offset with headroom for
// address arithmetic (offset * sizeof(double) must not overflow either).
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 59;

// Checks that every tensor the case holds is one the problem expects, with the expected shape,
// and that no unexpected tensor is present (a misspelled name must not be silently ignored).
void check_tensors_against_specs(const std::string& op, const std::vector<TensorSpec>& specs,
                                 const TensorMap& tensors, RuleCheck& rules);

// Rank check with a message naming the tensor, used by the from_case() parsers.
bool expect_rank(RuleCheck& rules, const std::string& name, const Tensor& t, std::size_t rank,
                 const std::string& layout);

// Reads an optional boolean option from case.json; a wrong type is a broken rule.
bool bool_option(const nlohmann::json& options, const std::string& key, RuleCheck& rules);

// Size rules shared by every descriptor: positive, and products that stay indexable.
void require_positive(RuleCheck& rules, const std::string& what, std::int64_t value);
void require_indexable(RuleCheck& rules, const std::string& tensor, const Shape& shape);

}  // namespace scanlab
