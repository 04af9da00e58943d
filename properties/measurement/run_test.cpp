// Ceilings and sweeps actually measured on the host backends: every field present and positive,
// the schema accepted by the readers, the inputs an exec implementation would get equal to what
// the kernels were timed on, and bad requests refused before anything runs.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include "benchmarks/ceilings.hpp"
#include "benchmarks/kokkos_case.hpp"
#include "benchmarks/sweep.hpp"
#include "benchmarks/sweep_files.hpp"
#include "kernels/problem/s7_scan.hpp"

using namespace scanlab;
using namespace scanlab::bench;

namespace {

nlohmann::json quick_ceilings(BackendKind kind) {
  CeilingOptions options;
  options.quick = true;
  options.copy_bytes = 4 << 20;
  options.repetitions = 2;
  Backend backend;
  backend.kind = kind;
  return measure_ceilings(backend, options);
}

double positive(const nlohmann::json& j, const std::string& what) {
  EXPECT_TRUE(j.is_number()) << what << " = " << j.dump();
  if (!j.is_number()) return 0;
  EXPECT_GT(j.get<double>(), 0) << what;
  EXPECT_TRUE(std::isfinite(j.get<double>())) << what;
  return j.get<double>();
}

SweepRequest tiny_request(const std::string& op, std::vector<AxisValues> axes) {
  SweepRequest r;
  r.op = op;
  r.directions = {Direction::fwd, Direction::fwdbwd};
  r.axes = std::move(axes);
  r.settings.backend.kind = BackendKind::serial;
  r.settings.max_buffer_sets = 2;
  r.repetitions = 3;
  r.iterations = 1;
  r.warmups = 1;
  r.progress = false;
  r.ceilings = {{"roofline",
                 {{"memory_label", "DRAM"},
                  {"memory_bytes_per_s", 1e10},
                  {"l2_bytes_per_s", 5e10},
                  {"fp32_flops_per_s", 1e10},
                  {"sfu_ops_per_s", 1e9}}}};
  return r;
}

}  // namespace

TEST(MeasurementCeilings, EveryFieldPresentAndPositiveOnTheHost) {
  for (auto kind : compiled_kokkos_backends()) {
    if (kind == BackendKind::cuda) continue;  // the H200 run covers it
    SCOPED_TRACE(to_string(kind));
    const auto c = quick_ceilings(kind);
    EXPECT_EQ(c["schema"], "scanlab.ceilings/1");
    for (const char* key : {"device", "backend", "kokkos_configuration", "git_commit", "date_utc", "host"})
      EXPECT_TRUE(c["machine"].contains(key) && c["machine"][key].is_string()) << key;
    EXPECT_EQ(c["machine"]["backend"], to_string(kind));
    positive(c["copy_native"]["bytes_per_s"], "copy_native");
    ASSERT_TRUE(c["copy_variants"].is_array());
    EXPECT_GE(c["copy_variants"].size(), 8u);
    for (const auto& v : c["copy_variants"]) {
      positive(v["bytes_per_s"], v["name"].get<std::string>());
      positive(v["fraction_of_native"], v["name"].get<std::string>());
      positive(v["time_s"]["median"], v["name"].get<std::string>());
    }
    positive(c["copy_kokkos"]["bytes_per_s"], "copy_kokkos");
    EXPECT_EQ(c["streaming_pattern"]["header"], "kernels/streaming.hpp");
    positive(c["streaming_pattern"]["fraction_of_native"], "streaming_pattern");
    positive(c["memory_read"]["bytes_per_s"], "memory_read");
    positive(c["l2_read"]["bytes_per_s"], "l2_read");
    positive(c["fp32_fma"]["flops_per_s"], "fp32_fma");
    positive(c["fp32_fma"]["fma_per_s"], "fma_per_s");
    for (const char* f : {"exp2", "log2", "rcp"}) positive(c["sfu"][f]["ops_per_s"], f);
    const auto r = roofline_of(c);
    EXPECT_EQ(r.memory_label, "DRAM");
    // The memory ceiling is the fastest copy measured, native or Kokkos.
    double fastest = c["copy_native"]["bytes_per_s"].get<double>();
    for (const auto& v : c["copy_variants"]) fastest = std::max(fastest, v["bytes_per_s"].get<double>());
    EXPECT_DOUBLE_EQ(r.memory_bytes_per_s, fastest);
    EXPECT_DOUBLE_EQ(r.sfu_ops_per_s, c["sfu"]["exp2"]["ops_per_s"].get<double>());
  }
}

TEST(MeasurementCeilings, RefusesBackendsWithoutAKokkosSpaceAndBrokenFiles) {
  Backend reference;
  EXPECT_THROW(measure_ceilings(reference, CeilingOptions{}), std::invalid_argument);
  EXPECT_THROW(roofline_of(nlohmann::json::object()), std::invalid_argument);
  EXPECT_THROW(roofline_of({{"roofline", {{"memory_bytes_per_s", 1.0}}}}), std::invalid_argument);
}

TEST(MeasurementSweep, TinySweepsOfEveryOpWriteTheSchema) {
  for (const auto& op : op_bench_names()) {
    SCOPED_TRACE(op);
    const auto& bench = find_op_bench(op);
    std::vector<AxisValues> axes;
    for (const auto& a : bench.shape_axes) {
      const std::int64_t small = a.name == "dstate" ? 4 : a.name == "seqlen" ? 24 : a.name == "dim" ? 8 : 1;
      axes.push_back({a.name, true, {small}});
    }
    axes.front().values.push_back(2);  // two sizes of the first axis
    for (const auto& a : bench.option_axes) {
      AxisValues axis{a.name, false, {}};
      if (a.kind == OptionAxis::Kind::toggle) axis.values.push_back(a.default_text == "on");
      else axis.values.push_back(a.default_text);
      axes.push_back(axis);
    }
    const auto result = run_sweep(tiny_request(op, axes));
    EXPECT_NO_THROW(check_sweep_schema(result, op));
    const auto& block = result["scanlab"];
    EXPECT_TRUE(block["complete"].get<bool>()) << block.value("error", std::string());
    ASSERT_EQ(result["cases"].size(), 4u);
    EXPECT_EQ(block["case_count"], 4);
    for (const char* key : {"device", "backend", "kokkos_configuration", "git_commit"})
      EXPECT_TRUE(block["machine"].contains(key)) << key;
    EXPECT_TRUE(block["ceilings"].contains("roofline"));
    EXPECT_FALSE(result["benchmarks"].empty());  // Google Benchmark's own entries are kept
    for (const auto& c : result["cases"]) {
      EXPECT_EQ(c["op"], op);
      EXPECT_EQ(c["backend"], "serial");
      EXPECT_EQ(c["samples_s"].size(), 3u);
      EXPECT_FALSE(c["config"].empty());
      EXPECT_TRUE(c["impl"].is_string());
      EXPECT_GT(c["bytes_moved"].get<double>(), 0);
      EXPECT_GT(c["memory"]["tensor_bytes"].get<double>(), 0);
      EXPECT_GE(c["memory"]["peak_device_bytes"].get<double>(), c["memory"]["tensor_bytes"].get<double>());
      EXPECT_GE(c["memory"]["buffer_sets"].get<int>(), 1);
      EXPECT_LE(c["memory"]["buffer_sets"].get<int>(), 2);
      EXPECT_TRUE(c["binding_ceiling"].is_string());
      // The achieved rates are the descriptor's counts over the median.
      EXPECT_DOUBLE_EQ(c["achieved"]["bytes_per_s"].get<double>(),
                       c["bytes_moved"].get<double>() / c["time_s"]["median"].get<double>());
    }
    // fwdbwd counts both passes.
    EXPECT_GT(result["cases"][1]["bytes_moved"].get<double>(), result["cases"][0]["bytes_moved"].get<double>());
  }
}

TEST(MeasurementSweep, BadRequestsAreRefusedBeforeAnythingRuns) {
  auto r = tiny_request("selective_scan", {{"batch", true, {1}},
                                          {"dim", true, {6, 8}},
                                          {"dstate", true, {4}},
                                          {"seqlen", true, {8}},
                                          {"groups", true, {4}},
                                          {"z", false, {true}},
                                          {"D", false, {true}},
                                          {"delta_bias", false, {true}},
                                          {"softplus", false, {true}},
                                          {"initial_state", false, {false}},
                                          {"act_fn", false, {"silu"}}});
  try {
    sweep_cases(r);
    FAIL() << "dim 6 with 4 groups accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dim=6"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("groups"), std::string::npos) << e.what();
  }
  EXPECT_THROW(find_op_bench("no_such_op"), std::invalid_argument);
  r.axes[1].values = {8};
  r.settings.impl = "no_such_impl";
  const auto result = run_sweep(r);  // a case that cannot be prepared stops the sweep, with the reason
  EXPECT_FALSE(result["scanlab"]["complete"].get<bool>());
  EXPECT_NE(result["scanlab"]["error"].get<std::string>().find("no_such_impl"), std::string::npos);
}

TEST(MeasurementSweep, ExecInputsEqualTheInputsTheKernelsAreTimedOn) {
  S7ScanProblem p;
  p.batch = 2;
  p.dim = 3;
  p.dstate = 5;
  p.seqlen = 7;
  p.has_bias = true;
  const InputRanges ranges = {{"u", {-1, 1}}, {"A", {-2, 2}}, {"bias", {-0.1, 0.1}}, {"B", {-1, 1}}, {"C", {-1, 1}}};
  const auto host = host_inputs(p.tensors(), ranges, 42, 0);
  ASSERT_EQ(host.count("B"), 1u);
  Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::HostSpace> B("B", 2, 5, 3, 7);
  fill_input(Kokkos::DefaultHostExecutionSpace(), B, ranges, 42, 0, "B");
  Kokkos::fence();
  const auto& hb = host.at("B");
  ASSERT_EQ(hb.numel(), std::int64_t(B.span()));
  int zeros = 0;
  for (std::int64_t i = 0; i < hb.numel(); ++i) {
    EXPECT_EQ(hb[i], double(B.data()[i])) << i;
    EXPECT_GE(hb[i], -1.0);
    EXPECT_LT(hb[i], 1.0);
    zeros += hb[i] == 0;
  }
  EXPECT_EQ(zeros, 0);
  // Another set, another tensor: other values.
  EXPECT_NE(host_inputs(p.tensors(), ranges, 42, 1).at("B")[0], hb[0]);
  EXPECT_NE(host.at("C")[0], hb[0]);
}
