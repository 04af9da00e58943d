// `scanlab tune` and its cache: the cache round trip (merge-safe stores, a broken file refused),
// tuning a small shape on a host backend, a deliberately wrong config rejected however fast it
// is, and `--impl auto` (run, sweep) using what tune stored.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "benchmarks/sweep.hpp"
#include "cli/case_runner.hpp"
#include "cli/tune.hpp"
#include "cli_test_util.hpp"

namespace {

using namespace scanlab;
using namespace scanlab::cli;
using namespace scanlab::cli_test;

bench::SweepCase small_case(bench::Direction direction = bench::Direction::fwdbwd) {
  bench::SweepCase c;
  c.op = "selective_scan";
  c.direction = direction;
  c.shape = {{"batch", 2}, {"dim", 24}, {"dstate", 4}, {"seqlen", 97}, {"groups", 1}};
  c.options = {{"z", true},           {"D", true},       {"delta_bias", true},
               {"softplus", true},    {"initial_state", false}, {"act_fn", "silu"}};
  return c;
}

TuneOptions quick_options() {
  TuneOptions o;
  o.settings.backend = parse_backend("openmp");
  o.repetitions = 2;
  o.warmups = 1;
  o.min_time_s = 0;
  o.max_candidates = 6;
  o.progress = false;
  return o;
}

TEST(CliTune, CacheStoresMergeAndABrokenFileIsRefused) {
  const auto dir = scratch_dir("tune-cache");
  const std::string path = (dir / "cache.json").string();
  TuneCache a(path), b(path);
  EXPECT_TRUE(a.entries().empty());
  a.store("k1", {{"config", {{"impl", "sequential"}}}, {"median_s", 1.0}});
  b.store("k2", {{"config", {{"impl", "chunked"}}}, {"median_s", 2.0}});  // a second writer keeps k1
  const auto e = a.entries();
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e["k1"]["config"]["impl"], "sequential");
  EXPECT_EQ(e["k2"]["median_s"], 2.0);
  std::ofstream(path) << "{\"not\": \"a cache\"}";
  try {
    a.entries();
    FAIL() << "a file that is not a tune cache must be refused";
  } catch (const std::runtime_error& err) {
    EXPECT_NE(std::string(err.what()).find(path), std::string::npos) << err.what();
  }
}

TEST(CliTune, BucketsRoundExtentsUpAndSeparateForwardFromBackward) {
  auto c = small_case();
  const auto& bench = bench::find_op_bench("selective_scan");
  auto d = c;
  d.shape["seqlen"] = 128;  // 97 and 128 share the power-of-two bucket
  EXPECT_EQ(shape_bucket(bench.case_options(c), bench.tensor_specs(c), true),
            shape_bucket(bench.case_options(d), bench.tensor_specs(d), true));
  d.shape["seqlen"] = 129;
  EXPECT_NE(shape_bucket(bench.case_options(c), bench.tensor_specs(c), true),
            shape_bucket(bench.case_options(d), bench.tensor_specs(d), true));
  auto f = small_case(bench::Direction::fwd);
  EXPECT_NE(shape_bucket(bench.case_options(c), bench.tensor_specs(c), true),
            shape_bucket(bench.case_options(f), bench.tensor_specs(f), false));
}

TEST(CliTune, ASpreadOfCandidatesKeepsTheHeuristicAndSpansTheRegistry) {
  std::vector<nlohmann::json> all;
  for (int i = 0; i < 10; ++i) all.push_back(i);
  EXPECT_EQ(spread_candidates(all, 4), (std::vector<nlohmann::json>{0, 1, 4, 7}));
  EXPECT_EQ(spread_candidates(all, 10), all);
  EXPECT_EQ(spread_candidates(all, 1), (std::vector<nlohmann::json>{0}));
  EXPECT_EQ(spread_candidates(all, 3).back(), 5);
}

TEST(CliTune, TimesEveryCorrectCandidateAndPicksTheFastest) {
  const auto r = tune_case(small_case(), quick_options());
  ASSERT_GE(r.candidates.size(), 2u);
  EXPECT_TRUE(r.candidates[0].heuristic);
  ASSERT_GE(r.winner, 0);
  for (const auto& c : r.candidates) {
    EXPECT_EQ(c.status, "timed") << c.config.dump() << ": " << c.detail;
    EXPECT_LE(c.worst_error_over_bound, 1.0);
    EXPECT_EQ(c.samples_s.size(), 2u);
    EXPECT_LE(r.candidates[std::size_t(r.winner)].median_s, c.median_s);
  }
}

TEST(CliTune, AWrongConfigIsRejectedHoweverFastItIs) {
  auto o = quick_options();
  const auto configs =
      spread_candidates(bench::find_op_bench("selective_scan").configs(small_case(), BackendKind::openmp), o.max_candidates);
  ASSERT_GE(configs.size(), 3u);
  const nlohmann::json survivor = configs[2];
  // Every config but one returns an output with one element off by 2^-10 relative: each must be
  // caught by the oracle check, and only the survivor may win.
  o.tamper = [&](const nlohmann::json& config, TensorMap& outputs) {
    if (config == survivor) return;
    Tensor& out = outputs.at("out");
    out.values[std::size_t(out.numel() / 2)] *= 1.0 + std::ldexp(1.0, -10);
  };
  const auto r = tune_case(small_case(), o);
  ASSERT_GE(r.winner, 0);
  EXPECT_EQ(r.candidates[std::size_t(r.winner)].config, survivor);
  int wrong = 0;
  for (const auto& c : r.candidates) {
    if (c.config == survivor) continue;
    EXPECT_EQ(c.status, "wrong") << c.config.dump();
    EXPECT_NE(c.detail.find("out"), std::string::npos) << c.detail;
    ++wrong;
  }
  EXPECT_EQ(wrong, int(r.candidates.size()) - 1);
}

TEST(CliTune, TuneStoresAndImplAutoUsesTheStoredConfig) {
  const auto dir = scratch_dir("tune-cli");
  const std::string cache = (dir / "cache.json").string(), report = (dir / "tune.json").string();
  const std::vector<std::string> env{"SCANLAB_TUNE_CACHE=" + cache, "OMP_NUM_THREADS=2"};
  const std::vector<std::string> axes{"--batch", "1", "--dim", "16", "--dstate", "4", "--seqlen", "64"};
  std::vector<std::string> args{"tune", "selective_scan", "--backend", "openmp", "--repetitions", "2", "--min-time",
                                "0", "--max-candidates", "4", "--direction", "fwd", "--out", report, "--quiet"};
  args.insert(args.end(), axes.begin(), axes.end());
  const auto tuned = run_cli(args, env);
  ASSERT_EQ(tuned.code, 0) << describe(tuned);
  const auto tune_json = nlohmann::json::parse(read_file(report));
  ASSERT_EQ(tune_json["cases"].size(), 1u);
  const auto& shape = tune_json["cases"][0];
  EXPECT_GE(shape["candidates"].size(), 2u);
  ASSERT_TRUE(shape["winner"].is_object());
  const auto entries = TuneCache(cache).entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries.begin().value()["config"], shape["winner"]);

  // Plant a different valid config under the same key: `--impl auto` must now run that one.
  nlohmann::json planted;
  for (const auto& c : shape["candidates"])
    if (c["config"] != shape["winner"]) planted = c["config"];
  ASSERT_TRUE(planted.is_object());
  TuneCache(cache).store(entries.begin().key(), {{"config", planted}, {"median_s", 0.0}});
  std::vector<std::string> sweep{"sweep", "selective_scan", "--backend", "openmp", "--direction", "fwd", "--repetitions",
                                 "1", "--iterations", "1", "--warmups", "0", "--quick-ceilings", "--quiet",
                                 "--out", (dir / "sweep.json").string()};
  sweep.insert(sweep.end(), axes.begin(), axes.end());
  auto swept = run_cli(sweep, env);
  ASSERT_EQ(swept.code, 0) << describe(swept);
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "sweep.json"))["cases"][0]["config"], planted);
  sweep.push_back("--no-cache");
  swept = run_cli(sweep, env);
  ASSERT_EQ(swept.code, 0) << describe(swept);
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "sweep.json"))["cases"][0]["config"], shape["candidates"][0]["config"])
      << "--no-cache must run the heuristic config";
}

TEST(CliTune, UsageErrorsExitTwo) {
  EXPECT_EQ(run_cli({"tune"}).code, 2);
  const auto r = run_cli({"tune", "selective_scan", "--backend", "reference", "--seqlen", "8"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("serial, openmp, cuda"), std::string::npos) << describe(r);
}

}  // namespace
