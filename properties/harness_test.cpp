// The property framework has teeth: each property template, given a kernel with a planted bug of
// the kind it exists to catch, fails; the failure is shrunk, saved as a replayable case directory
// and printed with its reproduce line; coverage that was not reached fails the test. The bugs are
// planted in wrappers around the real kernels (OpTraits with run() or error_bound() replaced), so
// the kernels themselves are untouched.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <regex>

#include "properties/cli/cli_test_util.hpp"
#include "harness.hpp"

namespace scanlab::properties {
namespace {

using S7 = OpTraits<S7ScanProblem>;
using SS = OpTraits<SelectiveScanProblem>;
namespace fs = std::filesystem;

// Ignores every event: the planted failures must not print RC_PARAMS lines at exit.
class SilentListener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

// Runs a property that must fail; returns the failure messages gtest received.
template <class F>
std::string expect_failure(F&& property) {
  SilentListener silent;
  ScopedPropertyListener scoped(&silent);
  testing::TestPartResultArray results;
  {
    testing::ScopedFakeTestPartResultReporter reporter(
        testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    property();
  }
  std::string messages;
  for (int i = 0; i < results.size(); ++i)
    if (results.GetTestPartResult(i).failed()) messages += results.GetTestPartResult(i).message() + std::string("\n");
  EXPECT_FALSE(messages.empty()) << "the property passed with a planted bug";
  return messages;
}

// Failures of this file go to a scratch directory.
class Harness : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = cli_test::scratch_dir(std::string("harness-") + testing::UnitTest::GetInstance()->current_test_info()->name());
    const char* old = std::getenv("SCANLAB_FAILURE_DIR");
    if (old) previous_ = old;
    setenv("SCANLAB_FAILURE_DIR", (dir_ / "failures").c_str(), 1);
  }
  void TearDown() override {
    if (previous_) setenv("SCANLAB_FAILURE_DIR", previous_->c_str(), 1);
    else unsetenv("SCANLAB_FAILURE_DIR");
  }
  static std::string saved_dir(const std::string& messages) {
    std::smatch m;
    if (!std::regex_search(messages, m, std::regex("minimal failing case saved: (\\S+)"))) return "";
    return m[1];
  }
  fs::path dir_;
  std::optional<std::string> previous_;
};

void scale_last(TensorMap& r, const std::string& name, double factor) {
  auto it = r.find(name);
  if (it != r.end() && it->second.numel() > 0) it->second[it->second.numel() - 1] *= factor;
}

// Forward: the last output element is off by 1 once seqlen ≥ 6 (wrong in every such case, so the
// minimal case is known: every size 1 but seqlen, which shrinks towards 6).
struct S7ForwardBug : S7 {
  static TensorMap run(const Problem& p, const TensorMap& in, BackendKind k, const Config& c) {
    TensorMap r = S7::run(p, in, k, c);
    if (p.seqlen >= 6) r.at("out")[r.at("out").numel() - 1] += 1.0;
    return r;
  }
};

TEST_F(Harness, ForwardFailureIsShrunkSavedAndReplayable) {
  const std::string messages = expect_failure([] { forward_matches_oracle<S7ForwardBug>(); });
  EXPECT_NE(messages.find("reproduce: RC_PARAMS=\"reproduce="), std::string::npos) << messages;
  const std::string dir = saved_dir(messages);
  ASSERT_FALSE(dir.empty()) << messages;
  for (const char* file : {"case.json", "config.json", "u.npy", "A.npy", "B.npy", "C.npy", "failure.txt"})
    EXPECT_TRUE(fs::exists(fs::path(dir) / file)) << file;
  const auto c = io::read_case(dir);
  const auto p = S7ScanProblem::from_case(c.tensors, c.options);
  // Shrunk towards the smallest case that still fails: every size at its minimum but seqlen,
  // which cannot go below the planted threshold.
  EXPECT_EQ(p.batch, 1);
  EXPECT_EQ(p.dim, 1);
  EXPECT_EQ(p.dstate, 1);
  EXPECT_GE(p.seqlen, 6);
  EXPECT_LE(p.seqlen, 13);
  EXPECT_TRUE(c.options.contains("seed"));
  EXPECT_NE(c.options.value("note", std::string()).find("--gtest_filter=Harness.ForwardFailureIsShrunkSavedAndReplayable"),
            std::string::npos);
  // The saved case replays through the CLI; the real kernel (no planted bug) passes it, with the
  // config that failed.
  const std::string backend = [&] {
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && e.path().filename().string().rfind("out-", 0) == 0) return e.path().filename().string().substr(4);
    return std::string("serial");
  }();
  auto r = cli_test::run_cli({"replay", dir, "--backend", backend});
  EXPECT_EQ(r.code, 0) << cli_test::describe(r);
  EXPECT_NE(r.out.find("(config.json)"), std::string::npos) << r.out;
}

// Backward: a gradient error in one implementation only.
struct S7GradientBug : S7 {
  static TensorMap run(const Problem& p, const TensorMap& in, BackendKind k, const Config& c) {
    TensorMap r = S7::run(p, in, k, c);
    if (c.impl == "chunked") scale_last(r, "dA", 1 + std::ldexp(1.0, -8));
    return r;
  }
};

TEST_F(Harness, BackwardCatchesAGradientBugOfOneImplementation) {
  const std::string messages = expect_failure([] { backward_matches_oracle<S7GradientBug>(); });
  const std::string dir = saved_dir(messages);
  ASSERT_FALSE(dir.empty()) << messages;
  EXPECT_NE(messages.find("dA"), std::string::npos);
  const auto config = cli::read_config_json(dir);
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ((*config)["impl"], "chunked");
  EXPECT_TRUE(fs::exists(fs::path(dir) / "dout.npy"));
}

// State continuation: a kernel that ignores the initial state, or the state cotangent.
struct S7IgnoresInitialState : S7 {
  static TensorMap run(Problem p, TensorMap in, BackendKind k, const Config& c) {
    if (p.has_initial_state && p.seqlen < 4) {  // only short runs: the whole-sequence cases rarely hit it
      p.has_initial_state = false;
      in.erase("initial_state");
      TensorMap r = S7::run(p, in, k, c);
      if (p.with_backward) r["dinitial_state"] = Tensor(Shape{p.batch, p.dstate});
      return r;
    }
    return S7::run(p, in, k, c);
  }
};

TEST_F(Harness, StateContinuationCatchesAnIgnoredInitialState) {
  const std::string messages = expect_failure([] { state_continuation<S7IgnoresInitialState>(false); });
  EXPECT_NE(messages.find("split at k="), std::string::npos) << messages;
  EXPECT_FALSE(saved_dir(messages).empty()) << messages;
}

struct SSIgnoresStateCotangent : SS {
  static TensorMap run(Problem p, TensorMap in, BackendKind k, const Config& c) {
    if (p.has_dlast_state && p.seqlen < 4) {
      p.has_dlast_state = false;
      in.erase("dlast_state");
    }
    return SS::run(p, in, k, c);
  }
};

TEST_F(Harness, StateContinuationBackwardCatchesAnIgnoredStateCotangent) {
  const std::string messages = expect_failure([] { state_continuation<SSIgnoresStateCotangent>(true); });
  EXPECT_NE(messages.find("split at k="), std::string::npos) << messages;
}

// Chunk-size invariance: an error that only one chunk length makes.
struct SSChunkBug : SS {
  static TensorMap run(const Problem& p, const TensorMap& in, BackendKind k, const Config& c) {
    TensorMap r = SS::run(p, in, k, c);
    if (c.chunk_len == 3 && p.seqlen > 3) scale_last(r, "out", 1 + std::ldexp(1.0, -9));
    return r;
  }
};

TEST_F(Harness, ChunkSizeInvarianceCatchesAChunkLengthBug) {
  const std::string messages = expect_failure([] { chunk_size_invariance<SSChunkBug>(); });
  EXPECT_NE(messages.find("\"chunk_len\":3"), std::string::npos) << messages;
}

// Batch permutation: batch entry 0 is touched by one ulp (a cross-batch dependence).
struct S7BatchBug : S7 {
  static TensorMap run(const Problem& p, const TensorMap& in, BackendKind k, const Config& c) {
    TensorMap r = S7::run(p, in, k, c);
    auto& out = r.at("out");
    out[0] = std::nextafter(float(out[0]), 1e30f);
    return r;
  }
};

TEST_F(Harness, BatchPermutationIsBitwise) {
  const std::string messages = expect_failure([] { batch_permutation<S7BatchBug>(); });
  EXPECT_NE(messages.find("not bitwise"), std::string::npos) << messages;
}

// Bitwise repeatability: every other call differs by one ulp.
struct SSNondeterministic : SS {
  static TensorMap run(const Problem& p, const TensorMap& in, BackendKind k, const Config& c) {
    static int calls = 0;
    TensorMap r = SS::run(p, in, k, c);
    if (++calls % 2 == 0) r.at("out")[0] = std::nextafter(float(r.at("out")[0]), 1e30f);
    return r;
  }
};

TEST_F(Harness, BitwiseRepeatabilityCatchesOneUlp) {
  const std::string messages = expect_failure([] { bitwise_repeatable<SSNondeterministic>(); });
  EXPECT_NE(messages.find("two runs differ: out[0]"), std::string::npos) << messages;
}

// Backend agreement: one backend is wrong.
struct S7BackendBug : S7 {
  static TensorMap run(const Problem& p, const TensorMap& in, BackendKind k, const Config& c) {
    TensorMap r = S7::run(p, in, k, c);
    if (k == compiled_kokkos_backends().back()) scale_last(r, "out", 1 + std::ldexp(1.0, -9));
    return r;
  }
};

TEST_F(Harness, BackendsAgreeCatchesOneWrongBackend) {
  if (compiled_kokkos_backends().size() < 2) GTEST_SKIP() << "one backend compiled in";
  const std::string messages = expect_failure([] { backends_agree<S7BackendBug>(); });
  EXPECT_NE(messages.find(" vs "), std::string::npos) << messages;
}

// The bound mutation test fails when the bound is 64 times too loose.
struct S7LooseBound : S7 {
  static TensorMap error_bound(const Problem& p, const TensorMap& in) { return scaled(S7::error_bound(p, in), 64); }
};

TEST_F(Harness, BoundMutationCatchesALooseBound) {
  const std::string messages = expect_failure([] { bound_mutation<S7LooseBound>(); });
  EXPECT_NE(messages.find("the bound is too loose for out"), std::string::npos) << messages;
}

// Coverage is asserted: a required tag that is never drawn fails the test even though every
// case passed.
TEST_F(Harness, CoverageThatWasNotReachedFails) {
  const std::string messages = expect_failure([] {
    Coverage coverage;
    coverage.assert_at_any_count = true;  // RC_PARAMS may set fewer cases than kCoverageMinCases
    coverage.require("regime:never-drawn");
    coverage.require("regime:drawn");
    run_property(coverage, [&] {
      coverage.hit("regime:drawn");
      RC_ASSERT(*rc::gen::inRange(0, 10) < 10);
    });
  });
  EXPECT_NE(messages.find("never drawn"), std::string::npos) << messages;
  EXPECT_NE(messages.find("regime:never-drawn"), std::string::npos) << messages;
  EXPECT_EQ(messages.find("regime:drawn,"), std::string::npos) << messages;
}

// The generators reach the regimes they promise, with the values they promise.
TEST(HarnessGenerators, RegimesProduceTheirEdgeValues) {
  S7ScanProblem p;
  p.batch = 1; p.dim = 1; p.dstate = 8; p.seqlen = 64;
  const Tensor zero = make_inputs(p, {{"A", "abar_zero"}}, 1).at("A");
  for (double a : zero.values) {
    const double a_bar = 1 - 1 / (a * a + 0.5);
    EXPECT_LT(std::fabs(a_bar), 5e-3) << "A " << a;
    EXPECT_EQ(a, double(float(a))) << "not float32-representable";
  }
  const Tensor large = make_inputs(p, {{"A", "large"}}, 1).at("A");
  for (double a : large.values) EXPECT_GE(std::fabs(a), 10.0);
  const Tensor small = make_inputs(p, {{"A", "small"}}, 1).at("A");
  for (double a : small.values) EXPECT_LE(std::fabs(a), 1e-2);

  SelectiveScanProblem q;
  q.batch = 2; q.dim = 3; q.dstate = 2; q.seqlen = 50; q.delta_softplus = true; q.has_delta_bias = true;
  const auto in = make_inputs(q, {{"delta", "softplus_threshold"}, {"A", "normal"}, {"z", "normal"}}, 4);
  int near = 0;
  for (std::int64_t b = 0; b < q.batch; ++b)
    for (std::int64_t d = 0; d < q.dim; ++d)
      for (std::int64_t t = 0; t < q.seqlen; ++t) {
        const double raw = in.at("delta").at({b, d, t}) + in.at("delta_bias").at({d});
        // Near 20, but never within 8 float32 ulps of it, in float64 and in float32 arithmetic.
        EXPECT_GE(std::fabs(raw - 20.0), 8 * 0x1p-19) << raw;
        const float raw32 = float(in.at("delta").at({b, d, t})) + float(in.at("delta_bias").at({d}));
        EXPECT_EQ(raw > 20.0, raw32 > 20.0f) << "float32 would take the other softplus branch at " << raw;
        near += std::fabs(raw - 20.0) < 0.5;
      }
  EXPECT_GT(near, 50) << "too few values near the softplus threshold";
  SelectiveScanProblem r = q;
  r.delta_softplus = false;
  r.has_delta_bias = false;
  const TensorMap tiny = make_inputs(r, {{"delta", "tiny"}, {"A", "near_zero"}, {"z", "large"}}, 5);
  for (double v : tiny.at("delta").values) EXPECT_LE(v, 1e-3);
  r.has_z = true;
  int positive = 0, negative = 0;
  const TensorMap large_gates = make_inputs(r, {{"delta", "huge"}, {"A", "very_negative"}, {"z", "large"}}, 5);
  for (double v : large_gates.at("z").values) {
    EXPECT_GE(std::fabs(v), 8.0);
    (v > 0 ? positive : negative)++;
  }
  EXPECT_GT(positive, 0);
  EXPECT_GT(negative, 0);
}

}  // namespace
}  // namespace scanlab::properties
