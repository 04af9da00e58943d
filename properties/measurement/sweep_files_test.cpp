// Statistics, the noise verdict, per-case entries, and merge/compare on synthetic sweep JSONs.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "benchmarks/sweep.hpp"
#include "benchmarks/sweep_files.hpp"

using namespace scanlab::bench;

namespace {

Spread spread_around(double median, double half_iqr) {
  Spread s;
  s.median = median;
  s.q1 = median - half_iqr;
  s.q3 = median + half_iqr;
  s.min = s.q1 - half_iqr;
  s.max = s.q3 + half_iqr;
  s.count = 10;
  return s;
}

nlohmann::json fake_ceilings() {
  return {{"roofline",
           {{"memory_label", "HBM"},
            {"memory_bytes_per_s", 4e12},
            {"l2_bytes_per_s", 8e12},
            {"fp32_flops_per_s", 5e13},
            {"sfu_ops_per_s", 4e12}}}};
}

// A sweep JSON as `scanlab sweep --shard index/count` writes it, with one case per seqlen.
nlohmann::json fake_sweep(int index, int count, const std::vector<int>& seqlens, double seconds,
                          const std::string& commit = "abc") {
  nlohmann::json cases = nlohmann::json::array();
  for (int L : seqlens) {
    SweepCase c;
    c.op = "s7_scan";
    c.shape = {{"batch", 2}, {"seqlen", L}};
    c.options = {{"bias", true}};
    CaseCosts costs{1e9 * L, 1e10, 1e8};
    cases.push_back(case_entry(c, "scanlab", "cuda", spread_around(seconds * L, seconds * L * 0.01), {seconds * L},
                               costs, fake_ceilings()));
  }
  return {{"context", nlohmann::json::object()},
          {"benchmarks", nlohmann::json::array({{{"name", "b" + std::to_string(index)}}})},
          {"scanlab",
           {{"schema", "scanlab.sweep/1"},
            {"implementation", "scanlab"},
            {"op", "s7_scan"},
            {"machine", {{"device", "H200"}, {"backend", "cuda"}, {"git_commit", commit}, {"host", "h" + std::to_string(index)}}},
            {"directions", {"fwd"}},
            {"axes", {{"seqlen", {64, 128, 256, 512, 1024}}}},
            {"repetitions", 10},
            {"shard", {{"index", index}, {"count", count}}},
            {"ceilings", fake_ceilings()},
            {"complete", true}}},
          {"cases", cases}};
}

}  // namespace

TEST(MeasurementFiles, QuartilesMatchNumPy) {
  // numpy.percentile([1, 2, 3, 4, 10], [25, 50, 75]) = [2, 3, 4]; of [1, 2, 3, 4]: [1.75, 2.5, 3.25]
  auto s = spread_of({10, 1, 3, 2, 4});
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  s = spread_of({4, 3, 2, 1});
  EXPECT_DOUBLE_EQ(s.q1, 1.75);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.q3, 3.25);
  const auto back = spread_from_json(to_json(s));
  EXPECT_DOUBLE_EQ(back.q3, s.q3);
  EXPECT_EQ(back.count, 4);
  auto broken = to_json(s);
  broken["q1"] = 5;
  EXPECT_THROW(spread_from_json(broken), std::invalid_argument);
}

TEST(MeasurementFiles, NoiseVerdict) {
  const auto a = spread_around(1.0, 0.02);
  EXPECT_EQ(compare_times(a, spread_around(1.03, 0.02), 0.01), Verdict::same_within_noise);  // IQRs overlap
  EXPECT_EQ(compare_times(a, spread_around(1.10, 0.02), 0.01), Verdict::slower);
  EXPECT_EQ(compare_times(a, spread_around(0.90, 0.02), 0.01), Verdict::faster);
  // Disjoint IQRs but a change below min_change: same within noise.
  const auto tight = spread_around(1.0, 0.0001);
  EXPECT_EQ(compare_times(tight, spread_around(1.005, 0.0001), 0.01), Verdict::same_within_noise);
  EXPECT_EQ(compare_times(tight, spread_around(1.005, 0.0001), 0.0), Verdict::slower);
  EXPECT_THROW(compare_times(spread_around(0, 0), a, 0.01), std::invalid_argument);
}

RC_GTEST_PROP(MeasurementFiles, VerdictIsAntisymmetric, ()) {
  const double m1 = *rc::gen::inRange(100, 10000) * 1e-6, m2 = *rc::gen::inRange(100, 10000) * 1e-6;
  const double h1 = m1 * *rc::gen::inRange(0, 200) * 1e-3, h2 = m2 * *rc::gen::inRange(0, 200) * 1e-3;
  const auto a = spread_around(m1, h1), b = spread_around(m2, h2);
  const auto ab = compare_times(a, b, 0.01), ba = compare_times(b, a, 0.01);
  if (ab == Verdict::same_within_noise) RC_ASSERT(ba == Verdict::same_within_noise);
  if (ab == Verdict::faster) RC_ASSERT(ba == Verdict::slower);
  if (ab == Verdict::slower) RC_ASSERT(ba == Verdict::faster);
  // Overlapping interquartile ranges never give a verdict.
  if (a.q1 <= b.q3 && b.q1 <= a.q3) RC_ASSERT(ab == Verdict::same_within_noise);
}

TEST(MeasurementFiles, CaseEntryFractionsAndBinding) {
  SweepCase c;
  c.op = "selective_scan";
  c.shape = {{"batch", 8}};
  CaseCosts costs{4e9, 1e12, 8e9};  // floors: memory 1 ms, fp32 20 ms, sfu 2 ms
  const auto e = case_entry(c, "scanlab", "cuda", spread_around(0.04, 0.001), {0.04}, costs, fake_ceilings());
  EXPECT_EQ(e["binding_ceiling"], "fp32");
  EXPECT_NEAR(e["fraction_of_binding"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(e["floor_s"]["memory"].get<double>(), 1e-3, 1e-15);
  EXPECT_NEAR(e["fraction_of_ceiling"]["memory"].get<double>(), 1e-3 / 0.04, 1e-12);
  EXPECT_NEAR(e["fraction_of_ceiling"]["l2"].get<double>(), 4e9 / 8e12 / 0.04, 1e-12);
  EXPECT_NEAR(e["fraction_of_ceiling"]["sfu"].get<double>(), 2e-3 / 0.04, 1e-12);
  EXPECT_NEAR(e["achieved"]["bytes_per_s"].get<double>(), 1e11, 1);
  const auto bare = case_entry(c, "scanlab", "serial", spread_around(0.04, 0.001), {0.04}, costs, nullptr);
  EXPECT_TRUE(bare["binding_ceiling"].is_null());
  EXPECT_FALSE(bare.contains("fraction_of_ceiling"));
  EXPECT_THROW(case_entry(c, "scanlab", "cuda", spread_around(0.04, 0.001), {0.04}, costs, {{"roofline", {}}}),
               std::invalid_argument);
}

TEST(MeasurementFiles, SchemaCheckListsProblems) {
  auto good = fake_sweep(0, 1, {64, 128}, 1e-6);
  EXPECT_NO_THROW(check_sweep_schema(good, "good"));
  auto bad = good;
  bad["scanlab"]["schema"] = "other";
  bad["cases"][0].erase("time_s");
  bad["cases"][1]["key"] = bad["cases"][0]["key"];
  try {
    check_sweep_schema(bad, "bad.json");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.json"), std::string::npos);
    EXPECT_NE(what.find("scanlab.schema"), std::string::npos);
    EXPECT_NE(what.find("cases[0].time_s"), std::string::npos);
    EXPECT_NE(what.find("duplicate case"), std::string::npos);
  }
  EXPECT_THROW(check_sweep_schema(nlohmann::json::array(), "x"), std::invalid_argument);
}

TEST(MeasurementFiles, MergeRestoresTheSweepOrder) {
  // The whole sweep's seqlens are 64..1024; shard i of 2 holds cases i, i+2, i+4.
  const auto s0 = fake_sweep(0, 2, {64, 256, 1024}, 1e-6);
  const auto s1 = fake_sweep(1, 2, {128, 512}, 1e-6);
  const auto merged = merge_sweeps({{"s1.json", s1}, {"s0.json", s0}});
  ASSERT_EQ(merged["cases"].size(), 5u);
  std::vector<int> order;
  for (const auto& c : merged["cases"]) order.push_back(c["shape"]["seqlen"].get<int>());
  EXPECT_EQ(order, (std::vector<int>{64, 128, 256, 512, 1024}));
  EXPECT_TRUE(merged["scanlab"]["complete"].get<bool>());
  EXPECT_EQ(merged["scanlab"]["merged_from"].size(), 2u);
  EXPECT_EQ(merged["benchmarks"].size(), 2u);
  EXPECT_NO_THROW(check_sweep_schema(merged, "merged"));
}

TEST(MeasurementFiles, MergeRefusesDisagreementAndDuplicates) {
  const auto s0 = fake_sweep(0, 2, {64}, 1e-6);
  EXPECT_THROW(merge_sweeps({{"a", s0}, {"b", s0}}), std::invalid_argument);  // same shard twice
  auto other_commit = fake_sweep(1, 2, {128}, 1e-6, "def");
  try {
    merge_sweeps({{"a", s0}, {"b", other_commit}});
    FAIL() << "merged different commits";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("machine.git_commit"), std::string::npos) << e.what();
  }
  auto dup = fake_sweep(1, 2, {64}, 1e-6);  // shard 1 holding shard 0's case
  EXPECT_THROW(merge_sweeps({{"a", s0}, {"b", dup}}), std::invalid_argument);
  auto three = fake_sweep(1, 3, {128}, 1e-6);
  EXPECT_THROW(merge_sweeps({{"a", s0}, {"b", three}}), std::invalid_argument);
  const auto partial = merge_sweeps({{"a", s0}});
  EXPECT_FALSE(partial["scanlab"]["complete"].get<bool>());
  EXPECT_EQ(partial["scanlab"]["missing_shards"], nlohmann::json::array({1}));
}

TEST(MeasurementFiles, CompareMatchesCasesAndGivesVerdicts) {
  const auto a = fake_sweep(0, 1, {64, 128, 256}, 1e-6);
  auto b = fake_sweep(0, 1, {64, 128, 512}, 1e-6, "def");
  b["cases"][1]["time_s"] = to_json(spread_around(128e-6 * 0.5, 1e-8));  // twice as fast
  const auto cmp = compare_sweeps(a, b, 0.01);
  ASSERT_EQ(cmp.cases.size(), 2u);
  EXPECT_EQ(cmp.cases[0].verdict, Verdict::same_within_noise);
  EXPECT_EQ(cmp.cases[1].verdict, Verdict::faster);
  EXPECT_NEAR(cmp.cases[1].speedup, 2.0, 1e-9);
  EXPECT_NEAR(cmp.cases[1].ratio, 0.5, 1e-9);
  EXPECT_EQ(cmp.only_in_a.size(), 1u);
  EXPECT_EQ(cmp.only_in_b.size(), 1u);
  ASSERT_EQ(cmp.context_differences.size(), 1u);
  EXPECT_NE(cmp.context_differences[0].find("git_commit"), std::string::npos);
  const std::string text = format_comparison(cmp);
  EXPECT_NE(text.find("faster"), std::string::npos);
  EXPECT_NE(text.find("only in B"), std::string::npos);
  EXPECT_EQ(to_json(cmp)["cases"][1]["verdict"], "faster");
}

TEST(MeasurementFiles, BufferSetsExceedTheCache) {
  EXPECT_EQ(buffer_sets_for(1 << 20, 64 << 20, 8), 8);        // capped
  EXPECT_EQ(buffer_sets_for(64 << 20, 60 << 20, 8), 4);       // 4 x 60 MiB / 64 MiB
  EXPECT_EQ(buffer_sets_for(std::int64_t(4) << 30, 60 << 20, 8), 1);
  EXPECT_EQ(buffer_sets_for(100, 0, 8), 1);
}
