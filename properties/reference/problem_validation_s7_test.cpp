// Every rule of S7ScanProblem and S7InnerProblem, each with the message it must give, through
// validate() and through from_case() (a case directory's tensors and options). Then the cost
// counters, recomputed here from the tensor specs and the ops' semantics.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "kernels/problem/s7_inner.hpp"
#include "kernels/problem/s7_scan.hpp"

namespace {

using namespace scanlab;
using nlohmann::json;

// The messages a call throws as a ProblemError (empty when it does not throw).
std::vector<std::string> messages_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const ProblemError& e) {
    return e.messages();
  }
  return {};
}

std::string listed(const std::vector<std::string>& messages) {
  std::string text;
  for (const auto& m : messages) text += "\n  " + m;
  return text.empty() ? " (none)" : text;
}

#define EXPECT_RULE(call, message)                                                             \
  do {                                                                                         \
    const auto _messages = messages_of([&] { call; });                                         \
    EXPECT_NE(std::find(_messages.begin(), _messages.end(), std::string(message)), _messages.end()) \
        << "expected: " << (message) << "\ngot:" << listed(_messages);                         \
  } while (0)

TensorMap tensors_for(const std::vector<TensorSpec>& specs) {
  TensorMap tensors;
  for (const auto& spec : specs)
    if (spec.role == TensorRole::input || spec.role == TensorRole::grad_input) tensors[spec.name] = Tensor(spec.shape);
  return tensors;
}

double spec_bytes(const std::vector<TensorSpec>& specs, std::initializer_list<TensorRole> roles) {
  double elements = 0;
  for (const auto& spec : specs)
    if (std::find(roles.begin(), roles.end(), spec.role) != roles.end()) elements += double(shape_numel(spec.shape));
  return 4.0 * elements;  // float32
}

constexpr std::int64_t k2to20 = std::int64_t{1} << 20;

// ==========================================================================================
// s7_scan

S7ScanProblem full_scan() {
  S7ScanProblem p;
  p.batch = 2; p.dim = 3; p.dstate = 4; p.seqlen = 5;
  p.has_bias = p.has_initial_state = p.with_backward = p.has_dlast_state = true;
  return p;
}
const json kScanOptions = {{"op", "s7_scan"}};

TEST(ProblemValidationS7, ScanSizesMustBePositive) {
  for (std::int64_t bad : {0, -3}) {
    const std::string got = ", got " + std::to_string(bad);
    S7ScanProblem p = full_scan();
    p.batch = bad;
    EXPECT_RULE(p.validate(), "batch must be positive" + got);
    p = full_scan(); p.dim = bad;
    EXPECT_RULE(p.validate(), "dim must be positive" + got);
    p = full_scan(); p.dstate = bad;
    EXPECT_RULE(p.validate(), "dstate must be positive" + got);
    p = full_scan(); p.seqlen = bad;
    EXPECT_RULE(p.validate(), "seqlen must be positive" + got);
  }
  // Every broken rule is reported at once.
  S7ScanProblem p = full_scan();
  p.batch = 0; p.seqlen = -1;
  EXPECT_EQ(messages_of([&] { p.validate(); }).size(), 2u);
  EXPECT_NO_THROW(full_scan().validate());
}

TEST(ProblemValidationS7, ScanDlastStateNeedsDout) {
  S7ScanProblem p = full_scan();
  p.with_backward = false;
  EXPECT_RULE(p.validate(), "dlast_state is given without dout");
  TensorMap t = tensors_for(full_scan().tensors());
  t.erase("dout");
  EXPECT_RULE(S7ScanProblem::from_case(t, kScanOptions), "dlast_state is given without dout");
}

TEST(ProblemValidationS7, ScanIndexOverflow) {
  S7ScanProblem p;
  p.batch = 1; p.dstate = k2to20 / 2; p.dim = k2to20; p.seqlen = k2to20;  // B and C: exactly 2^59
  EXPECT_NO_THROW(p.validate());
  p.dim = k2to20 + 1;
  EXPECT_RULE(p.validate(), "tensor 'B' of shape (1, 524288, 1048577, 1048576) has more elements than a "
                            "64-bit offset can address safely (2^59)");
  EXPECT_RULE(p.validate(), "tensor 'C' of shape (1, 1048577, 524288, 1048576) has more elements than a "
                            "64-bit offset can address safely (2^59)");
}

TEST(ProblemValidationS7, ScanFromCaseReadsSizesAndOptions) {
  const S7ScanProblem p = S7ScanProblem::from_case(tensors_for(full_scan().tensors()),
                                                   {{"op", "s7_scan"}, {"seed", 3}, {"note", "x"}, {"scanlab_version", "0"}});
  EXPECT_EQ(p.batch, 2); EXPECT_EQ(p.dim, 3); EXPECT_EQ(p.dstate, 4); EXPECT_EQ(p.seqlen, 5);
  EXPECT_TRUE(p.has_bias && p.has_initial_state && p.with_backward && p.has_dlast_state);
  S7ScanProblem plain = full_scan();
  plain.has_bias = plain.has_initial_state = plain.with_backward = plain.has_dlast_state = false;
  const S7ScanProblem q = S7ScanProblem::from_case(tensors_for(plain.tensors()), kScanOptions);
  EXPECT_FALSE(q.has_bias || q.has_initial_state || q.with_backward || q.has_dlast_state);
}

TEST(ProblemValidationS7, ScanFromCaseRejectsMissingTensors) {
  const TensorMap full = tensors_for(full_scan().tensors());
  auto without = [&](const std::string& name) {
    TensorMap t = full;
    t.erase(name);
    return t;
  };
  EXPECT_RULE(S7ScanProblem::from_case(without("u"), kScanOptions), "missing input tensor 'u' (batch, dim, seqlen)");
  EXPECT_RULE(S7ScanProblem::from_case(without("A"), kScanOptions), "missing input tensor 'A' (batch, dstate, seqlen)");
  EXPECT_RULE(S7ScanProblem::from_case(without("B"), kScanOptions), "missing input tensor 'B' of shape (2, 4, 3, 5)");
  EXPECT_RULE(S7ScanProblem::from_case(without("C"), kScanOptions), "missing input tensor 'C' of shape (2, 3, 4, 5)");
}

TEST(ProblemValidationS7, ScanFromCaseRejectsWrongRanks) {
  TensorMap t = tensors_for(full_scan().tensors());
  t["u"] = Tensor({2, 3});
  EXPECT_RULE(S7ScanProblem::from_case(t, kScanOptions),
              "tensor 'u' has rank 2 (2, 3), expected rank 3 (batch, dim, seqlen)");
  t = tensors_for(full_scan().tensors());
  t["A"] = Tensor({2, 4, 5, 1});
  EXPECT_RULE(S7ScanProblem::from_case(t, kScanOptions),
              "tensor 'A' has rank 4 (2, 4, 5, 1), expected rank 3 (batch, dstate, seqlen)");
}

TEST(ProblemValidationS7, ScanFromCaseRejectsWrongShapes) {
  struct Wrong {
    std::string name;
    Shape shape;
    std::string expected;
  };
  const std::vector<Wrong> cases = {
      {"A", {3, 4, 5}, "(2, 4, 5)"},              // batch disagrees with u
      {"A", {2, 4, 6}, "(2, 4, 5)"},              // seqlen disagrees with u
      {"B", {2, 3, 4, 5}, "(2, 4, 3, 5)"},        // B is (b, N, H, L), not C's layout
      {"C", {2, 4, 3, 5}, "(2, 3, 4, 5)"},        // C is (b, H, N, L)
      {"bias", {2, 4, 4}, "(2, 4, 5)"},
      {"initial_state", {2, 3}, "(2, 4)"},
      {"dout", {2, 3, 4}, "(2, 3, 5)"},
      {"dlast_state", {1, 4}, "(2, 4)"},
  };
  for (const auto& w : cases) {
    TensorMap t = tensors_for(full_scan().tensors());
    t[w.name] = Tensor(w.shape);
    EXPECT_RULE(S7ScanProblem::from_case(t, kScanOptions),
                "tensor '" + w.name + "' has shape " + shape_string(w.shape) + ", expected " + w.expected);
  }
}

TEST(ProblemValidationS7, ScanFromCaseRejectsZeroSizesUnknownOptionsAndTensors) {
  TensorMap t = tensors_for(full_scan().tensors());
  t["u"] = Tensor({0, 3, 5});
  EXPECT_RULE(S7ScanProblem::from_case(t, kScanOptions), "batch must be positive, got 0");
  t = tensors_for(full_scan().tensors());
  t["A"] = Tensor({2, 0, 5});
  EXPECT_RULE(S7ScanProblem::from_case(t, kScanOptions), "dstate must be positive, got 0");

  t = tensors_for(full_scan().tensors());
  EXPECT_RULE(S7ScanProblem::from_case(t, {{"op", "s7_scan"}, {"delta_softplus", true}}),
              "unknown option 'delta_softplus' in case.json");
  t["z"] = Tensor({2, 3, 5});
  EXPECT_RULE(S7ScanProblem::from_case(t, kScanOptions),
              "tensor 'z' is not an input of s7_scan with these options (misspelled, or an option missing?)");
}

TEST(ProblemValidationS7, ScanBytesMovedAreTheCompulsoryBytesOfItsTensors) {
  for (int mask = 0; mask < 8; ++mask) {
    S7ScanProblem p;
    p.batch = 3; p.dim = 5; p.dstate = 7; p.seqlen = 11;
    p.has_bias = mask & 1;
    p.has_initial_state = mask & 2;
    p.with_backward = true;
    p.has_dlast_state = mask & 4;
    SCOPED_TRACE(mask);
    using R = TensorRole;
    const auto specs = p.tensors();
    // Forward: read every input once (B and C, the big ones, included), write out and last_state.
    EXPECT_DOUBLE_EQ(p.bytes_moved(Pass::forward), spec_bytes(specs, {R::input, R::output}));
    // Backward: read every input and cotangent, write one gradient per input.
    EXPECT_DOUBLE_EQ(p.bytes_moved(Pass::backward), spec_bytes(specs, {R::input, R::grad_input, R::gradient}));
    const double big = 4.0 * 2 * p.batch * p.dstate * p.dim * p.seqlen;  // |B| + |C|
    EXPECT_GT(p.bytes_moved(Pass::forward), big);
  }
}

TEST(ProblemValidationS7, ScanFlopsAndSfuOps) {
  S7ScanProblem p = full_scan();
  const double bl = double(p.batch) * p.seqlen, contractions = 4.0 * bl * p.dstate * p.dim;  // Bu and y
  EXPECT_GE(p.flops(Pass::forward), contractions);
  EXPECT_LE(p.flops(Pass::forward), contractions + 10.0 * bl * p.dstate);
  EXPECT_GE(p.flops(Pass::backward), p.flops(Pass::forward) + 2 * contractions);  // dB, dC, du, the adjoint
  // One reciprocal per A_bar, per (b, n, t).
  EXPECT_DOUBLE_EQ(p.sfu_ops(Pass::forward), bl * p.dstate);
  EXPECT_GE(p.sfu_ops(Pass::backward), p.sfu_ops(Pass::forward));
  // Linear in batch and seqlen.
  S7ScanProblem q = p;
  q.batch *= 2;
  q.seqlen *= 3;
  EXPECT_DOUBLE_EQ(q.flops(Pass::forward), 6 * p.flops(Pass::forward));
  EXPECT_DOUBLE_EQ(q.flops(Pass::backward), 6 * p.flops(Pass::backward));
}

// ==========================================================================================
// s7_inner

S7InnerProblem full_inner() {
  S7InnerProblem p;
  p.batch = 2; p.seqlen = 5; p.dim = 4; p.dstate = 3;
  p.with_backward = true;
  return p;
}
const json kInnerOptions = {{"op", "s7_inner"}};

TEST(ProblemValidationS7, InnerSizesMustBePositive) {
  for (std::int64_t bad : {0, -2}) {
    const std::string got = ", got " + std::to_string(bad);
    S7InnerProblem p = full_inner();
    p.batch = bad;
    EXPECT_RULE(p.validate(), "batch must be positive" + got);
    p = full_inner(); p.seqlen = bad;
    EXPECT_RULE(p.validate(), "seqlen must be positive" + got);
    p = full_inner(); p.dim = bad;
    EXPECT_RULE(p.validate(), "dim must be positive" + got);
    p = full_inner(); p.dstate = bad;
    EXPECT_RULE(p.validate(), "dstate must be positive" + got);
  }
  EXPECT_NO_THROW(full_inner().validate());
}

TEST(ProblemValidationS7, InnerXProjWeightRowsFollowTheSplit) {
  const S7InnerProblem p = full_inner();
  // [N | Dm·N | Dm·N | Dm | N], computed here as running offsets.
  const std::int64_t N = p.dstate, Dm = p.dim;
  const std::int64_t widths[] = {N, Dm * N, Dm * N, Dm, N};
  std::int64_t offsets[6] = {0};
  for (int i = 0; i < 5; ++i) offsets[i + 1] = offsets[i] + widths[i];
  EXPECT_EQ(p.offset_A(), offsets[0]);
  EXPECT_EQ(p.offset_B(), offsets[1]);
  EXPECT_EQ(p.offset_C(), offsets[2]);
  EXPECT_EQ(p.offset_D(), offsets[3]);
  EXPECT_EQ(p.offset_bias(), offsets[4]);
  EXPECT_EQ(p.x_proj_rows(), offsets[5]);
  EXPECT_EQ(p.x_proj_rows(), 3 + 2 * 4 * 3 + 4 + 3);

  for (std::int64_t rows : {p.x_proj_rows() - 1, p.x_proj_rows() + 1, std::int64_t{20}}) {
    TensorMap t = tensors_for(p.tensors());
    t["x_proj_weight"] = Tensor({rows, Dm});
    EXPECT_RULE(S7InnerProblem::from_case(t, kInnerOptions),
                "tensor 'x_proj_weight' has shape (" + std::to_string(rows) + ", 4), expected (34, 4)");
  }
  TensorMap t = tensors_for(p.tensors());
  t["x_proj_weight"] = Tensor({p.x_proj_rows(), Dm + 1});
  EXPECT_RULE(S7InnerProblem::from_case(t, kInnerOptions), "tensor 'x_proj_weight' has shape (34, 5), expected (34, 4)");
}

TEST(ProblemValidationS7, InnerIndexOverflow) {
  S7InnerProblem p;
  p.batch = 1; p.seqlen = 1; p.dim = k2to20; p.dstate = k2to20;  // x_proj_weight ≈ 2^61 elements
  const std::string rows = std::to_string(p.x_proj_rows());
  EXPECT_RULE(p.validate(), "tensor 'x_proj_weight' of shape (" + rows +
                                ", 1048576) has more elements than a 64-bit offset can address safely (2^59)");
  // x_dbl, the (batch, seqlen, R) intermediate, overflows while every tensor of the case fits.
  p.batch = k2to20; p.seqlen = k2to20; p.dim = 1; p.dstate = k2to20;
  EXPECT_RULE(p.validate(), "tensor 'x_dbl (intermediate)' of shape (1048576, 1048576, 4194305) has more elements "
                            "than a 64-bit offset can address safely (2^59)");
  // dim·dstate so large that x_proj_rows() itself would overflow int64.
  p.batch = 1; p.seqlen = 1; p.dim = std::int64_t{1} << 32; p.dstate = std::int64_t{1} << 32;
  EXPECT_RULE(p.validate(), "dim·dstate is too large: x_proj_weight's row count (2·dstate + 2·dim·dstate + dim) "
                            "must stay addressable by a 64-bit offset (5·dim·dstate ≤ 2^59)");
}

TEST(ProblemValidationS7, InnerFromCaseReadsSizes) {
  const S7InnerProblem p = S7InnerProblem::from_case(tensors_for(full_inner().tensors()), kInnerOptions);
  EXPECT_EQ(p.batch, 2); EXPECT_EQ(p.seqlen, 5); EXPECT_EQ(p.dim, 4); EXPECT_EQ(p.dstate, 3);
  EXPECT_TRUE(p.with_backward);
  S7InnerProblem forward = full_inner();
  forward.with_backward = false;
  EXPECT_FALSE(S7InnerProblem::from_case(tensors_for(forward.tensors()), kInnerOptions).with_backward);
  const S7ScanProblem scan = p.inner_scan();
  EXPECT_EQ(scan.batch, 2); EXPECT_EQ(scan.dim, 4); EXPECT_EQ(scan.dstate, 3); EXPECT_EQ(scan.seqlen, 5);
  EXPECT_TRUE(scan.has_bias);
  EXPECT_FALSE(scan.has_initial_state || scan.has_dlast_state);
}

TEST(ProblemValidationS7, InnerFromCaseRejectsMissingAndMisshapenTensors) {
  const TensorMap full = tensors_for(full_inner().tensors());
  auto with = [&](const std::string& name, const Shape& shape) {
    TensorMap t = full;
    t[name] = Tensor(shape);
    return t;
  };
  auto without = [&](const std::string& name) {
    TensorMap t = full;
    t.erase(name);
    return t;
  };
  EXPECT_RULE(S7InnerProblem::from_case(without("hidden_states"), kInnerOptions),
              "missing input tensor 'hidden_states' (batch, seqlen, dim)");
  EXPECT_RULE(S7InnerProblem::from_case(without("base_params"), kInnerOptions),
              "missing input tensor 'base_params' (dstate,)");
  EXPECT_RULE(S7InnerProblem::from_case(without("in_proj_weight"), kInnerOptions),
              "missing input tensor 'in_proj_weight' of shape (4, 4)");
  EXPECT_RULE(S7InnerProblem::from_case(without("x_proj_weight"), kInnerOptions),
              "missing input tensor 'x_proj_weight' of shape (34, 4)");
  EXPECT_RULE(S7InnerProblem::from_case(without("gate_proj_weight"), kInnerOptions),
              "missing input tensor 'gate_proj_weight' of shape (4, 4)");
  EXPECT_RULE(S7InnerProblem::from_case(with("hidden_states", {10, 4}), kInnerOptions),
              "tensor 'hidden_states' has rank 2 (10, 4), expected rank 3 (batch, seqlen, dim)");
  EXPECT_RULE(S7InnerProblem::from_case(with("base_params", {3, 1}), kInnerOptions),
              "tensor 'base_params' has rank 2 (3, 1), expected rank 1 (dstate,)");
  EXPECT_RULE(S7InnerProblem::from_case(with("in_proj_weight", {4, 5}), kInnerOptions),
              "tensor 'in_proj_weight' has shape (4, 5), expected (4, 4)");
  EXPECT_RULE(S7InnerProblem::from_case(with("gate_proj_weight", {5, 4}), kInnerOptions),
              "tensor 'gate_proj_weight' has shape (5, 4), expected (4, 4)");
  EXPECT_RULE(S7InnerProblem::from_case(with("dout", {2, 4, 5}), kInnerOptions),
              "tensor 'dout' has shape (2, 4, 5), expected (2, 5, 4)");
  EXPECT_RULE(S7InnerProblem::from_case(with("hidden_states", {2, 0, 4}), kInnerOptions),
              "seqlen must be positive, got 0");
  EXPECT_RULE(S7InnerProblem::from_case(with("base_params", {0}), kInnerOptions), "dstate must be positive, got 0");
}

TEST(ProblemValidationS7, InnerFromCaseRejectsUnknownOptionsAndTensors) {
  TensorMap t = tensors_for(full_inner().tensors());
  EXPECT_RULE(S7InnerProblem::from_case(t, {{"op", "s7_inner"}, {"d_state", 3}}), "unknown option 'd_state' in case.json");
  t["dlast_state"] = Tensor({2, 3});  // s7_inner has no state output
  EXPECT_RULE(S7InnerProblem::from_case(t, kInnerOptions),
              "tensor 'dlast_state' is not an input of s7_inner with these options (misspelled, or an option missing?)");
}

TEST(ProblemValidationS7, InnerCostCounters) {
  {
    S7InnerProblem p;
    p.batch = 3; p.seqlen = 7; p.dim = 5; p.dstate = 2; p.with_backward = true;
    using R = TensorRole;
    const auto specs = p.tensors();
    // Forward: hidden_states and the weights in, out written (x_dbl is an intermediate).
    EXPECT_DOUBLE_EQ(p.bytes_moved(Pass::forward), spec_bytes(specs, {R::input, R::output}));
    // Backward: the inputs and dout in, one gradient per input out.
    EXPECT_DOUBLE_EQ(p.bytes_moved(Pass::backward), spec_bytes(specs, {R::input, R::grad_input, R::gradient}));
  }
  const S7InnerProblem p = full_inner();
  const double bld = double(p.batch) * p.seqlen * p.dim;
  const double products = 2.0 * double(p.batch) * p.seqlen * p.dim * (2.0 * p.dim + double(p.x_proj_rows()));
  EXPECT_GE(p.flops(Pass::forward), products + p.inner_scan().flops(Pass::forward));
  EXPECT_GE(p.flops(Pass::backward), 2 * products + p.inner_scan().flops(Pass::backward));
  // erf per GELU, exp and reciprocal per sigmoid, plus the scan's reciprocals.
  EXPECT_DOUBLE_EQ(p.sfu_ops(Pass::forward), 3 * bld + p.inner_scan().sfu_ops(Pass::forward));
  EXPECT_GE(p.sfu_ops(Pass::backward), p.sfu_ops(Pass::forward));
}

}  // namespace
