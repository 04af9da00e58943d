// Every rule of SelectiveScanProblem and StateSpaceV1Problem, through validate() and through
// from_case(): each broken rule is reported with its own message (asserted by content), every
// rule broken at once is reported at once, and the cost counters agree with the tensors the
// descriptor lists (each optional tensor adds exactly its bytes).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "kernels/problem/selective_scan.hpp"
#include "kernels/problem/state_space_v1.hpp"

namespace {

using namespace scanlab;
using nlohmann::json;

// Runs f, which must throw ProblemError, and returns its what() (empty if nothing was thrown).
std::string problem_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ProblemError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("unexpected exception type: ") + e.what();
  }
  return "";
}

#define EXPECT_RULE(statement, fragment)                                                         \
  do {                                                                                           \
    const std::string message_ = problem_error([&] { statement; });                              \
    EXPECT_NE(message_.find(fragment), std::string::npos)                                        \
        << "expected a ProblemError mentioning \"" << (fragment) << "\", got: \"" << message_ << "\""; \
  } while (0)

// ---- selective_scan -----------------------------------------------------------------------

SelectiveScanProblem valid_problem() {
  SelectiveScanProblem p;
  p.batch = 2; p.dim = 4; p.dstate = 3; p.seqlen = 5;
  return p;
}

// A complete, valid case: dims (2, 4, 3, 5), per-step B and C with `groups`.
TensorMap valid_tensors(std::int64_t groups = 1) {
  TensorMap t;
  t["u"] = Tensor({2, 4, 5});
  t["delta"] = Tensor({2, 4, 5});
  t["A"] = Tensor({4, 3});
  const Shape bc = groups == 1 ? Shape{2, 3, 5} : Shape{2, groups, 3, 5};
  t["B"] = Tensor(bc);
  t["C"] = Tensor(bc);
  return t;
}

json ss_options() { return json{{"op", "selective_scan"}}; }

TEST(ProblemValidationSelectiveScan, ValidProblemsPass) {
  EXPECT_NO_THROW(valid_problem().validate());
  EXPECT_NO_THROW(SelectiveScanProblem::from_case(valid_tensors(), ss_options()));
  EXPECT_NO_THROW(SelectiveScanProblem::from_case(valid_tensors(2), ss_options()));
  TensorMap everything = valid_tensors(2);
  everything["D"] = Tensor({4});
  everything["z"] = Tensor({2, 4, 5});
  everything["delta_bias"] = Tensor({4});
  everything["initial_state"] = Tensor({2, 4, 3});
  everything["dout"] = Tensor({2, 4, 5});
  everything["dlast_state"] = Tensor({2, 4, 3});
  json options{{"op", "selective_scan"}, {"delta_softplus", true}, {"seed", 3}, {"note", "x"}, {"scanlab_version", "0"}};
  const auto p = SelectiveScanProblem::from_case(everything, options);
  EXPECT_TRUE(p.has_D && p.has_z && p.has_delta_bias && p.has_initial_state && p.with_backward && p.has_dlast_state);
  EXPECT_TRUE(p.delta_softplus);
  EXPECT_EQ(p.groups, 2);
  EXPECT_EQ(p.dim, 4); EXPECT_EQ(p.dstate, 3); EXPECT_EQ(p.seqlen, 5); EXPECT_EQ(p.batch, 2);
}

TEST(ProblemValidationSelectiveScan, ZeroOrNegativeSizes) {
  for (const char* what : {"batch", "dim", "dstate", "seqlen", "groups"})
    for (std::int64_t bad : {0, -3}) {
      SelectiveScanProblem p = valid_problem();
      if (std::string(what) == "batch") p.batch = bad;
      if (std::string(what) == "dim") p.dim = bad;
      if (std::string(what) == "dstate") p.dstate = bad;
      if (std::string(what) == "seqlen") p.seqlen = bad;
      if (std::string(what) == "groups") p.groups = bad;
      EXPECT_RULE(p.validate(), std::string(what) + " must be positive, got " + std::to_string(bad));
    }
  // From tensors with an empty axis.
  TensorMap t = valid_tensors();
  t["u"] = Tensor({2, 0, 5});
  t["delta"] = Tensor({2, 0, 5});
  t["A"] = Tensor({0, 3});
  EXPECT_RULE(SelectiveScanProblem::from_case(t, ss_options()), "dim must be positive, got 0");
  TensorMap s = valid_tensors();
  s["u"] = Tensor({2, 4, 0});
  EXPECT_RULE(SelectiveScanProblem::from_case(s, ss_options()), "seqlen must be positive, got 0");
}

TEST(ProblemValidationSelectiveScan, GroupsMustDivideDim) {
  SelectiveScanProblem p = valid_problem();
  p.groups = 3;
  EXPECT_RULE(p.validate(), "groups (3) must divide dim (4)");
  EXPECT_RULE(SelectiveScanProblem::from_case(valid_tensors(3), ss_options()), "groups (3) must divide dim (4)");
}

TEST(ProblemValidationSelectiveScan, GroupsNeedAPerStepBOrC) {
  SelectiveScanProblem p = valid_problem();
  p.groups = 2;
  p.B_per_step = p.C_per_step = false;
  EXPECT_RULE(p.validate(), "groups > 1 needs a per-step B or C");
  p.C_per_step = true;
  EXPECT_NO_THROW(p.validate());
}

TEST(ProblemValidationSelectiveScan, BAndCMustAgreeOnGroups) {
  TensorMap t = valid_tensors(2);
  t["C"] = Tensor({2, 4, 3, 5});
  EXPECT_RULE(SelectiveScanProblem::from_case(t, ss_options()), "B has 2 groups but C has 4; per-step B and C must agree");
  // A 3-D C is one group: it disagrees with a 2-group B too.
  TensorMap s = valid_tensors(2);
  s["C"] = Tensor({2, 3, 5});
  EXPECT_RULE(SelectiveScanProblem::from_case(s, ss_options()), "B has 2 groups but C has 1");
}

TEST(ProblemValidationSelectiveScan, OneGroupMayBeThreeOrFourDimensional) {
  TensorMap t = valid_tensors();
  t["B"] = Tensor({2, 1, 3, 5});
  const auto p = SelectiveScanProblem::from_case(t, ss_options());
  EXPECT_EQ(p.groups, 1);
  EXPECT_TRUE(p.B_per_step);
}

TEST(ProblemValidationSelectiveScan, TimeInvariantBAndC) {
  TensorMap t = valid_tensors();
  t["B"] = Tensor({4, 3});
  t["C"] = Tensor({4, 3});
  const auto p = SelectiveScanProblem::from_case(t, ss_options());
  EXPECT_FALSE(p.B_per_step);
  EXPECT_FALSE(p.C_per_step);
  EXPECT_EQ(p.B_shape(), (Shape{4, 3}));
  // Time-invariant B with the wrong channel count.
  t["B"] = Tensor({5, 3});
  EXPECT_RULE(SelectiveScanProblem::from_case(t, ss_options()), "tensor 'B' has shape (5, 3), expected (4, 3)");
  // A grouped per-step C beside a time-invariant B is fine.
  TensorMap g = valid_tensors(2);
  g["B"] = Tensor({4, 3});
  const auto q = SelectiveScanProblem::from_case(g, ss_options());
  EXPECT_EQ(q.groups, 2);
  EXPECT_FALSE(q.B_per_step);
}

TEST(ProblemValidationSelectiveScan, WrongRank) {
  TensorMap t = valid_tensors();
  t["u"] = Tensor({8, 5});
  EXPECT_RULE(SelectiveScanProblem::from_case(t, ss_options()), "tensor 'u' has rank 2 (8, 5), expected rank 3 (batch, dim, seqlen)");
  TensorMap a = valid_tensors();
  a["A"] = Tensor({12});
  EXPECT_RULE(SelectiveScanProblem::from_case(a, ss_options()), "tensor 'A' has rank 1 (12,), expected rank 2 (dim, dstate)");
  for (const Shape& bad : {Shape{30}, Shape{1, 2, 3, 5, 1}}) {
    TensorMap b = valid_tensors();
    b["B"] = Tensor(bad);
    EXPECT_RULE(SelectiveScanProblem::from_case(b, ss_options()),
                "tensor 'B' has rank " + std::to_string(bad.size()) + " " + shape_string(bad) +
                    "; expected (dim, dstate), (batch, dstate, seqlen) or (batch, groups, dstate, seqlen)");
  }
}

TEST(ProblemValidationSelectiveScan, WrongShape) {
  const std::pair<const char*, Shape> cases[] = {
      {"delta", {2, 4, 6}}, {"A", {4, 2}}, {"B", {2, 3, 6}}, {"C", {1, 3, 5}}, {"D", {5}},
      {"z", {2, 4, 4}}, {"delta_bias", {3}}, {"initial_state", {2, 4, 2}}, {"dout", {2, 5, 5}}};
  const std::map<std::string, Shape> right = {{"delta", {2, 4, 5}}, {"A", {4, 3}}, {"B", {2, 3, 5}}, {"C", {2, 3, 5}},
                                              {"D", {4}}, {"z", {2, 4, 5}}, {"delta_bias", {4}},
                                              {"initial_state", {2, 4, 3}}, {"dout", {2, 4, 5}}};
  for (const auto& [name, shape] : cases) {
    TensorMap t = valid_tensors();
    t[name] = Tensor(shape);
    // A has its dstate read from its own shape: a wrong A shows up in B and C instead.
    const std::string expected = std::string(name) == "A"
        ? "tensor 'B' has shape (2, 3, 5), expected (2, 2, 5)"
        : "tensor '" + std::string(name) + "' has shape " + shape_string(shape) + ", expected " + shape_string(right.at(name));
    EXPECT_RULE(SelectiveScanProblem::from_case(t, ss_options()), expected);
  }
  TensorMap t = valid_tensors();
  t["dout"] = Tensor({2, 4, 5});
  t["dlast_state"] = Tensor({2, 4, 4});
  EXPECT_RULE(SelectiveScanProblem::from_case(t, ss_options()), "tensor 'dlast_state' has shape (2, 4, 4), expected (2, 4, 3)");
}

TEST(ProblemValidationSelectiveScan, MissingTensors) {
  for (const char* name : {"u", "A", "B", "C", "delta"}) {
    TensorMap t = valid_tensors();
    t.erase(name);
    EXPECT_RULE(SelectiveScanProblem::from_case(t, ss_options()), std::string("missing input tensor '") + name + "'");
  }
}

TEST(ProblemValidationSelectiveScan, DlastStateWithoutDout) {
  SelectiveScanProblem p = valid_problem();
  p.has_dlast_state = true;
  EXPECT_RULE(p.validate(), "dlast_state is given without dout");
  TensorMap t = valid_tensors();
  t["dlast_state"] = Tensor({2, 4, 3});
  EXPECT_RULE(SelectiveScanProblem::from_case(t, ss_options()), "dlast_state is given without dout");
}

TEST(ProblemValidationSelectiveScan, UnknownOptionAndWrongOptionType) {
  json unknown = ss_options();
  unknown["delta_sofplus"] = true;
  EXPECT_RULE(SelectiveScanProblem::from_case(valid_tensors(), unknown), "unknown option 'delta_sofplus' in case.json");
  json act = ss_options();
  act["act_fn"] = "relu";  // the gate activations are state_space_v1's set
  EXPECT_RULE(SelectiveScanProblem::from_case(valid_tensors(), act),
              "unknown act_fn 'relu' (expected silu, identity, gelu_tanh or gelu_erf)");
  act["act_fn"] = 2;
  EXPECT_RULE(SelectiveScanProblem::from_case(valid_tensors(), act), "option 'act_fn' must be a string, got 2");
  act["act_fn"] = "gelu_erf";
  EXPECT_EQ(SelectiveScanProblem::from_case(valid_tensors(), act).gate_activation, GateActivation::gelu_erf);
  EXPECT_EQ(SelectiveScanProblem::from_case(valid_tensors(), act).options_json().at("act_fn"), "gelu_erf");
  EXPECT_FALSE(SelectiveScanProblem::from_case(valid_tensors(), ss_options()).options_json().contains("act_fn"));
  for (const json& bad : {json("yes"), json(1), json(nullptr)}) {
    json wrong = ss_options();
    wrong["delta_softplus"] = bad;
    EXPECT_RULE(SelectiveScanProblem::from_case(valid_tensors(), wrong),
                "option 'delta_softplus' must be true or false, got " + bad.dump());
  }
}

TEST(ProblemValidationSelectiveScan, UnknownTensorName) {
  TensorMap t = valid_tensors();
  t["uu"] = Tensor({2, 4, 5});
  EXPECT_RULE(SelectiveScanProblem::from_case(t, ss_options()), "tensor 'uu' is not an input of selective_scan");
  // A gradient-only tensor in the inputs is not an input either.
  TensorMap g = valid_tensors();
  g["du"] = Tensor({2, 4, 5});
  EXPECT_RULE(SelectiveScanProblem::from_case(g, ss_options()), "tensor 'du' is not an input of selective_scan");
}

TEST(ProblemValidationSelectiveScan, IndexOverflow) {
  SelectiveScanProblem p = valid_problem();
  p.batch = std::int64_t{1} << 20; p.dim = std::int64_t{1} << 20; p.seqlen = std::int64_t{1} << 20;  // 2^60 elements
  EXPECT_RULE(p.validate(), "tensor 'u' of shape (1048576, 1048576, 1048576) has more elements than a 64-bit offset can address safely (2^59)");
  // Just below the limit is accepted: 2^59 elements exactly.
  SelectiveScanProblem q = valid_problem();
  q.batch = std::int64_t{1} << 19; q.dim = std::int64_t{1} << 20; q.seqlen = std::int64_t{1} << 20; q.dstate = 1;
  EXPECT_NO_THROW(q.validate());
  // A product that overflows int64 itself is reported, not wrapped.
  SelectiveScanProblem r = valid_problem();
  r.batch = r.dim = r.seqlen = std::int64_t{1} << 40;
  EXPECT_RULE(r.validate(), "more elements than a 64-bit offset can address safely");
  // The state (B,D,N) overflows while u (B,D,L) does not.
  SelectiveScanProblem s = valid_problem();
  s.batch = std::int64_t{1} << 30; s.dim = std::int64_t{1} << 20; s.seqlen = 1; s.dstate = 1 << 10;
  EXPECT_RULE(s.validate(), "tensor 'last_state'");
}

TEST(ProblemValidationSelectiveScan, EveryBrokenRuleIsReportedAtOnce) {
  TensorMap t = valid_tensors();
  t["uu"] = Tensor({1});
  t["delta"] = Tensor({2, 4, 6});
  json options = ss_options();
  options["bogus"] = 1;
  try {
    SelectiveScanProblem::from_case(t, options);
    FAIL() << "no ProblemError";
  } catch (const ProblemError& e) {
    // The option is reported by the first pass; shapes and names by the second once the dims are
    // known, so at least the option is there, and a fixed option reveals the rest together.
    EXPECT_NE(std::string(e.what()).find("unknown option 'bogus'"), std::string::npos) << e.what();
  }
  try {
    SelectiveScanProblem::from_case(t, ss_options());
    FAIL() << "no ProblemError";
  } catch (const ProblemError& e) {
    EXPECT_GE(e.messages().size(), 2u) << e.what();
    EXPECT_NE(std::string(e.what()).find("tensor 'uu'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tensor 'delta' has shape (2, 4, 6)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("selective_scan"), std::string::npos) << e.what();
  }
  SelectiveScanProblem p = valid_problem();
  p.batch = 0; p.dstate = -1; p.has_dlast_state = true;
  try {
    p.validate();
    FAIL() << "no ProblemError";
  } catch (const ProblemError& e) {
    EXPECT_EQ(e.messages().size(), 3u) << e.what();
  }
}

TEST(ProblemValidationSelectiveScan, TensorSpecsNameEveryGradientWithTheInputsShape) {
  SelectiveScanProblem p = valid_problem();
  p.groups = 2; p.C_per_step = false;
  p.has_D = p.has_z = p.has_delta_bias = p.has_initial_state = p.with_backward = p.has_dlast_state = true;
  std::map<std::string, TensorSpec> specs;
  for (const auto& s : p.tensors()) specs[s.name] = s;
  for (const char* input : {"u", "delta", "A", "B", "C", "D", "z", "delta_bias", "initial_state"}) {
    ASSERT_TRUE(specs.count(input)) << input;
    ASSERT_TRUE(specs.count(std::string("d") + input)) << input;
    EXPECT_EQ(specs.at(input).role, TensorRole::input);
    EXPECT_EQ(specs.at(std::string("d") + input).role, TensorRole::gradient);
    EXPECT_EQ(specs.at(std::string("d") + input).shape, specs.at(input).shape) << input;
  }
  EXPECT_EQ(specs.at("B").shape, (Shape{2, 2, 3, 5}));
  EXPECT_EQ(specs.at("C").shape, (Shape{4, 3}));
  EXPECT_EQ(specs.at("dout").role, TensorRole::grad_input);
  EXPECT_EQ(specs.at("dlast_state").role, TensorRole::grad_input);
  EXPECT_EQ(specs.at("out").role, TensorRole::output);
  EXPECT_EQ(specs.at("last_state").shape, (Shape{2, 4, 3}));
  EXPECT_EQ(specs.count("ddout"), 0u);
}

// ---- cost counters ------------------------------------------------------------------------

// Fewest bytes: 4 bytes per element of every tensor the pass reads or writes once. Computed here
// from the spec list, so the counter and the tensor list cannot drift apart.
double bytes_from_specs(const SelectiveScanProblem& p, Pass pass) {
  double elements = 0;
  for (const auto& s : p.tensors()) {
    const bool counted = pass == Pass::forward ? (s.role == TensorRole::input || s.role == TensorRole::output)
                                               : (s.role != TensorRole::output);
    if (counted) elements += double(shape_numel(s.shape));
  }
  return 4 * elements;
}

TEST(ProblemValidationSelectiveScan, BytesMovedCountsEachTensorOnce) {
  SelectiveScanProblem p = valid_problem();  // B=2 D=4 N=3 L=5: bdl 40, state 24, A 12, B/C 30
  p.with_backward = true;
  // Forward: u, delta, A, B, C in; out, last_state out.
  EXPECT_DOUBLE_EQ(p.bytes_moved(Pass::forward), 4.0 * (40 + 40 + 12 + 30 + 30 + 40 + 24));
  // Backward: those inputs and dout in, a gradient per input out.
  EXPECT_DOUBLE_EQ(p.bytes_moved(Pass::backward), 4.0 * (40 + 40 + 12 + 30 + 30 + 40 + (40 + 40 + 12 + 30 + 30)));
  // Each optional input adds its size once forward, twice backward (read, and its gradient).
  const double base_fwd = p.bytes_moved(Pass::forward), base_bwd = p.bytes_moved(Pass::backward);
  const std::pair<bool SelectiveScanProblem::*, double> optional[] = {
      {&SelectiveScanProblem::has_D, 4}, {&SelectiveScanProblem::has_z, 40},
      {&SelectiveScanProblem::has_delta_bias, 4}, {&SelectiveScanProblem::has_initial_state, 24}};
  for (const auto& [flag, elements] : optional) {
    SelectiveScanProblem q = p;
    q.*flag = true;
    EXPECT_DOUBLE_EQ(q.bytes_moved(Pass::forward) - base_fwd, 4 * elements);
    EXPECT_DOUBLE_EQ(q.bytes_moved(Pass::backward) - base_bwd, 8 * elements);
  }
  // dlast_state is read by the backward only, and has no gradient.
  SelectiveScanProblem q = p;
  q.has_dlast_state = true;
  EXPECT_DOUBLE_EQ(q.bytes_moved(Pass::forward), base_fwd);
  EXPECT_DOUBLE_EQ(q.bytes_moved(Pass::backward) - base_bwd, 4.0 * 24);
  // B's layout: time-invariant (D,N) = 12, grouped (B,2,N,L) = 60 instead of 30.
  SelectiveScanProblem tiv = p;
  tiv.B_per_step = false;
  EXPECT_DOUBLE_EQ(base_fwd - tiv.bytes_moved(Pass::forward), 4.0 * (30 - 12));
  SelectiveScanProblem grouped = p;
  grouped.groups = 2;
  EXPECT_DOUBLE_EQ(grouped.bytes_moved(Pass::forward) - base_fwd, 4.0 * 2 * (60 - 30));
  EXPECT_DOUBLE_EQ(grouped.bytes_moved(Pass::backward) - base_bwd, 4.0 * 4 * (60 - 30));
  // Softplus and the gate activation move no bytes.
  SelectiveScanProblem sp = p;
  sp.delta_softplus = true;
  sp.gate_activation = GateActivation::gelu_erf;
  EXPECT_DOUBLE_EQ(sp.bytes_moved(Pass::forward), base_fwd);
  // And every combination agrees with the spec list.
  for (int mask = 0; mask < 256; ++mask) {
    SelectiveScanProblem r = p;
    r.has_D = mask & 1; r.has_z = mask & 2; r.has_delta_bias = mask & 4; r.has_initial_state = mask & 8;
    r.has_dlast_state = mask & 16; r.B_per_step = !(mask & 32); r.C_per_step = !(mask & 64);
    r.groups = (mask & 128) && (r.B_per_step || r.C_per_step) ? 2 : 1;
    EXPECT_DOUBLE_EQ(r.bytes_moved(Pass::forward), bytes_from_specs(r, Pass::forward)) << mask;
    EXPECT_DOUBLE_EQ(r.bytes_moved(Pass::backward), bytes_from_specs(r, Pass::backward)) << mask;
  }
}

TEST(ProblemValidationSelectiveScan, FlopsAndSfuOpsScaleAsDocumented) {
  SelectiveScanProblem p = valid_problem();
  const double bdl = 40, N = 3;
  // 7 flops per state element and step, plus 1 for dt.
  EXPECT_DOUBLE_EQ(p.flops(Pass::forward), bdl * (7 * N + 1));
  SelectiveScanProblem q = p;
  q.has_D = true;
  EXPECT_DOUBLE_EQ(q.flops(Pass::forward) - p.flops(Pass::forward), 2 * bdl);
  q.has_z = true;
  EXPECT_DOUBLE_EQ(q.flops(Pass::forward) - p.flops(Pass::forward), 6 * bdl);
  for (const SelectiveScanProblem& r : {p, q}) {
    EXPECT_GT(r.flops(Pass::backward), 2 * r.flops(Pass::forward));
    SelectiveScanProblem twice = r;
    twice.batch *= 2;
    EXPECT_DOUBLE_EQ(twice.flops(Pass::forward), 2 * r.flops(Pass::forward));
    EXPECT_DOUBLE_EQ(twice.flops(Pass::backward), 2 * r.flops(Pass::backward));
    twice = r;
    twice.seqlen *= 3;
    EXPECT_DOUBLE_EQ(twice.flops(Pass::forward), 3 * r.flops(Pass::forward));
  }
  // SFU: N exps per (b,d,t) forward, 2N backward.
  EXPECT_DOUBLE_EQ(p.sfu_ops(Pass::forward), bdl * N);
  EXPECT_DOUBLE_EQ(p.sfu_ops(Pass::backward), bdl * 2 * N);
  // softplus: exp + log forward, and a reciprocal backward.
  SelectiveScanProblem sp = p;
  sp.delta_softplus = true;
  EXPECT_DOUBLE_EQ(sp.sfu_ops(Pass::forward) - p.sfu_ops(Pass::forward), 2 * bdl);
  EXPECT_DOUBLE_EQ(sp.sfu_ops(Pass::backward) - p.sfu_ops(Pass::backward), 3 * bdl);
  // silu: exp + reciprocal; identity: none; erf or tanh: one (the gate costs nothing without z).
  const std::pair<GateActivation, double> gates[] = {{GateActivation::silu, 2}, {GateActivation::identity, 0},
                                                     {GateActivation::gelu_tanh, 1}, {GateActivation::gelu_erf, 1}};
  for (const auto& [activation, forward_ops] : gates) {
    SelectiveScanProblem g = p;
    g.gate_activation = activation;
    EXPECT_DOUBLE_EQ(g.sfu_ops(Pass::forward), p.sfu_ops(Pass::forward)) << to_string(activation);
    g.has_z = true;
    EXPECT_DOUBLE_EQ(g.sfu_ops(Pass::forward) - p.sfu_ops(Pass::forward), forward_ops * bdl) << to_string(activation);
    EXPECT_GE(g.sfu_ops(Pass::backward) - p.sfu_ops(Pass::backward), forward_ops * bdl) << to_string(activation);
  }
}

// ---- state_space_v1 -----------------------------------------------------------------------

StateSpaceV1Problem valid_v1() {
  StateSpaceV1Problem p;
  p.batch = 2; p.seqlen = 5; p.dim = 4; p.dstate = 3;
  return p;
}

TensorMap valid_v1_tensors() {
  TensorMap t;
  t["hidden_states"] = Tensor({2, 5, 4});
  t["A"] = Tensor({4, 3});
  t["B"] = Tensor({2, 5, 3});
  t["C"] = Tensor({2, 5, 3});
  t["D"] = Tensor({4});
  t["dt"] = Tensor({2, 5, 4});
  return t;
}

json v1_options() { return json{{"op", "state_space_v1"}}; }

TEST(ProblemValidationSelectiveScan, StateSpaceV1ValidProblemsPass) {
  EXPECT_NO_THROW(valid_v1().validate());
  TensorMap t = valid_v1_tensors();
  t["gate"] = Tensor({2, 5, 4});
  t["initial_state"] = Tensor({2, 4, 3});
  t["conv_state"] = Tensor({2, 4, 7});
  t["dout"] = Tensor({2, 5, 4});
  t["dfinal_state"] = Tensor({2, 4, 3});
  json options = v1_options();
  options["act_fn"] = "gelu_tanh";
  const auto p = StateSpaceV1Problem::from_case(t, options);
  EXPECT_TRUE(p.has_gate && p.has_initial_state && p.has_conv_state && p.with_backward && p.has_dfinal_state);
  EXPECT_EQ(p.act_fn, GateActivation::gelu_tanh);
  EXPECT_EQ(p.d_conv, 7);
  // The selective_scan problem it runs as.
  const SelectiveScanProblem s = p.as_selective_scan();
  EXPECT_EQ(s.batch, 2); EXPECT_EQ(s.dim, 4); EXPECT_EQ(s.dstate, 3); EXPECT_EQ(s.seqlen, 5); EXPECT_EQ(s.groups, 1);
  EXPECT_TRUE(s.has_D && s.has_z && s.has_initial_state && s.with_backward && s.has_dlast_state);
  EXPECT_TRUE(s.B_per_step && s.C_per_step);
  EXPECT_FALSE(s.has_delta_bias || s.delta_softplus);
  EXPECT_EQ(s.gate_activation, GateActivation::gelu_tanh);
}

TEST(ProblemValidationSelectiveScan, StateSpaceV1ZeroOrNegativeSizes) {
  for (const char* what : {"batch", "seqlen", "dim", "dstate"}) {
    StateSpaceV1Problem p = valid_v1();
    if (std::string(what) == "batch") p.batch = 0;
    if (std::string(what) == "seqlen") p.seqlen = 0;
    if (std::string(what) == "dim") p.dim = -2;
    if (std::string(what) == "dstate") p.dstate = 0;
    EXPECT_RULE(p.validate(), std::string(what) + " must be positive");
  }
  StateSpaceV1Problem p = valid_v1();
  p.has_conv_state = true;
  p.d_conv = 0;
  EXPECT_RULE(p.validate(), "d_conv must be positive, got 0");
  TensorMap t = valid_v1_tensors();
  t["conv_state"] = Tensor({2, 4, 0});
  EXPECT_RULE(StateSpaceV1Problem::from_case(t, v1_options()), "d_conv must be positive, got 0");
}

TEST(ProblemValidationSelectiveScan, StateSpaceV1WrongRankAndShape) {
  TensorMap t = valid_v1_tensors();
  t["hidden_states"] = Tensor({10, 4});
  EXPECT_RULE(StateSpaceV1Problem::from_case(t, v1_options()), "tensor 'hidden_states' has rank 2 (10, 4), expected rank 3 (batch, seqlen, dim)");
  TensorMap c = valid_v1_tensors();
  c["conv_state"] = Tensor({2, 4});
  EXPECT_RULE(StateSpaceV1Problem::from_case(c, v1_options()), "tensor 'conv_state' has rank 2 (2, 4), expected rank 3 (batch, dim, d_conv)");
  // B in selective_scan's layout (b,N,L) is the wrong shape here.
  TensorMap b = valid_v1_tensors();
  b["B"] = Tensor({2, 3, 5});
  EXPECT_RULE(StateSpaceV1Problem::from_case(b, v1_options()), "tensor 'B' has shape (2, 3, 5), expected (2, 5, 3)");
  TensorMap d = valid_v1_tensors();
  d["dt"] = Tensor({2, 4, 5});
  EXPECT_RULE(StateSpaceV1Problem::from_case(d, v1_options()), "tensor 'dt' has shape (2, 4, 5), expected (2, 5, 4)");
  TensorMap s = valid_v1_tensors();
  s["initial_state"] = Tensor({2, 3, 4});
  EXPECT_RULE(StateSpaceV1Problem::from_case(s, v1_options()), "tensor 'initial_state' has shape (2, 3, 4), expected (2, 4, 3)");
  TensorMap m = valid_v1_tensors();
  m["conv_state"] = Tensor({1, 4, 3});
  EXPECT_RULE(StateSpaceV1Problem::from_case(m, v1_options()), "tensor 'conv_state' has shape (1, 4, 3), expected (2, 4, 3)");
}

TEST(ProblemValidationSelectiveScan, StateSpaceV1MissingAndUnknownTensors) {
  TensorMap t = valid_v1_tensors();
  t.erase("D");
  EXPECT_RULE(StateSpaceV1Problem::from_case(t, v1_options()), "missing input tensor 'D' of shape (4,)");
  TensorMap h = valid_v1_tensors();
  h.erase("hidden_states");
  EXPECT_RULE(StateSpaceV1Problem::from_case(h, v1_options()), "missing input tensor 'hidden_states'");
  TensorMap u = valid_v1_tensors();
  u["z"] = Tensor({2, 5, 4});  // selective_scan's name for the gate
  EXPECT_RULE(StateSpaceV1Problem::from_case(u, v1_options()), "tensor 'z' is not an input of state_space_v1");
}

TEST(ProblemValidationSelectiveScan, StateSpaceV1Options) {
  json relu = v1_options();
  relu["act_fn"] = "relu";
  TensorMap gated = valid_v1_tensors();
  gated["gate"] = Tensor({2, 5, 4});
  EXPECT_RULE(StateSpaceV1Problem::from_case(gated, relu), "unknown act_fn 'relu' (expected silu, identity, gelu_tanh or gelu_erf)");
  json number = v1_options();
  number["act_fn"] = 3;
  EXPECT_RULE(StateSpaceV1Problem::from_case(gated, number), "option 'act_fn' must be a string, got 3");
  json silu = v1_options();
  silu["act_fn"] = "silu";
  EXPECT_RULE(StateSpaceV1Problem::from_case(valid_v1_tensors(), silu), "act_fn is given but there is no gate tensor");
  json softplus = v1_options();
  softplus["delta_softplus"] = true;  // selective_scan's option: dt is already post-softplus here
  EXPECT_RULE(StateSpaceV1Problem::from_case(valid_v1_tensors(), softplus), "unknown option 'delta_softplus' in case.json");
  // The default activation is silu.
  EXPECT_EQ(StateSpaceV1Problem::from_case(gated, v1_options()).act_fn, GateActivation::silu);
}

TEST(ProblemValidationSelectiveScan, StateSpaceV1DfinalStateWithoutDout) {
  StateSpaceV1Problem p = valid_v1();
  p.has_dfinal_state = true;
  EXPECT_RULE(p.validate(), "dfinal_state is given without dout");
  TensorMap t = valid_v1_tensors();
  t["dfinal_state"] = Tensor({2, 4, 3});
  EXPECT_RULE(StateSpaceV1Problem::from_case(t, v1_options()), "dfinal_state is given without dout");
}

TEST(ProblemValidationSelectiveScan, StateSpaceV1IndexOverflow) {
  StateSpaceV1Problem p = valid_v1();
  p.batch = std::int64_t{1} << 21; p.seqlen = std::int64_t{1} << 20; p.dim = std::int64_t{1} << 20;
  EXPECT_RULE(p.validate(), "tensor 'hidden_states' of shape (2097152, 1048576, 1048576) has more elements than a 64-bit offset can address safely (2^59)");
  StateSpaceV1Problem c = valid_v1();
  c.has_conv_state = true;
  c.batch = std::int64_t{1} << 20; c.dim = std::int64_t{1} << 20; c.d_conv = std::int64_t{1} << 20;
  c.seqlen = 1; c.dstate = 1;
  EXPECT_RULE(c.validate(), "tensor 'conv_state'");
}

TEST(ProblemValidationSelectiveScan, StateSpaceV1CostsAreSelectiveScansPlusThePassthrough) {
  StateSpaceV1Problem p = valid_v1();
  p.with_backward = true;
  const SelectiveScanProblem s = p.as_selective_scan();
  EXPECT_DOUBLE_EQ(p.bytes_moved(Pass::forward), s.bytes_moved(Pass::forward));
  EXPECT_DOUBLE_EQ(p.bytes_moved(Pass::backward), s.bytes_moved(Pass::backward));
  EXPECT_DOUBLE_EQ(p.flops(Pass::backward), s.flops(Pass::backward));
  EXPECT_DOUBLE_EQ(p.sfu_ops(Pass::forward), s.sfu_ops(Pass::forward));
  // conv_state (2,4,6) = 48 elements: read and written forward, its zero gradient written backward.
  StateSpaceV1Problem c = p;
  c.has_conv_state = true;
  c.d_conv = 6;
  EXPECT_DOUBLE_EQ(c.bytes_moved(Pass::forward) - p.bytes_moved(Pass::forward), 4.0 * 2 * 48);
  EXPECT_DOUBLE_EQ(c.bytes_moved(Pass::backward) - p.bytes_moved(Pass::backward), 4.0 * 48);
  // The gate adds its bytes once forward and twice backward, like z.
  StateSpaceV1Problem g = p;
  g.has_gate = true;
  EXPECT_DOUBLE_EQ(g.bytes_moved(Pass::forward) - p.bytes_moved(Pass::forward), 4.0 * 40);
  EXPECT_DOUBLE_EQ(g.bytes_moved(Pass::backward) - p.bytes_moved(Pass::backward), 8.0 * 40);
  // The initial state likewise, and the final-state cotangent once, backward only.
  StateSpaceV1Problem i = p;
  i.has_initial_state = true;
  EXPECT_DOUBLE_EQ(i.bytes_moved(Pass::backward) - p.bytes_moved(Pass::backward), 8.0 * 24);
  StateSpaceV1Problem f = p;
  f.has_dfinal_state = true;
  EXPECT_DOUBLE_EQ(f.bytes_moved(Pass::forward), p.bytes_moved(Pass::forward));
  EXPECT_DOUBLE_EQ(f.bytes_moved(Pass::backward) - p.bytes_moved(Pass::backward), 4.0 * 24);
}

}  // namespace
