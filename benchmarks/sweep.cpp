#include "sweep.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "context.hpp"

namespace scanlab::bench {

// ------------------------------------------------------------------ registry
static std::map<std::string, OpBench>& raw_registry() {
  static std::map<std::string, OpBench> ops;
  return ops;
}

static std::map<std::string, OpBench>& op_registry() {
  static const bool filled = [] {
    add_selective_scan_benches();
    add_state_space_v1_benches();
    add_s7_scan_benches();
    add_s7_inner_benches();
    return true;
  }();
  (void)filled;
  return raw_registry();
}

void register_op_bench(OpBench bench) {
  auto& ops = raw_registry();
  if (ops.count(bench.op)) throw std::logic_error("sweep for op '" + bench.op + "' registered twice");
  ops.emplace(bench.op, std::move(bench));
}

std::vector<std::string> op_bench_names() {
  std::vector<std::string> names;
  for (const auto& [name, bench] : op_registry()) names.push_back(name);
  return names;
}

const OpBench& find_op_bench(const std::string& op) {
  auto it = op_registry().find(op);
  if (it == op_registry().end()) {
    std::string known;
    for (const auto& name : op_bench_names()) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("no sweep for op '" + op + "' (sweeps exist for: " + known + ")");
  }
  return it->second;
}

int buffer_sets_for(std::int64_t set_bytes, std::int64_t cache_bytes, int max_sets) {
  if (set_bytes <= 0 || cache_bytes <= 0) return 1;
  const double needed = std::ceil(4.0 * double(cache_bytes) / double(set_bytes));
  return int(std::max(1.0, std::min(double(std::max(1, max_sets)), needed)));
}

// ------------------------------------------------------------------ per-case entry
nlohmann::json case_entry(const SweepCase& c, const std::string& implementation, const std::string& backend,
                          const Spread& time_s, const std::vector<double>& samples_s, const CaseCosts& costs,
                          const nlohmann::json& ceilings) {
  const double t = time_s.median;
  nlohmann::json e = {
      {"key", c.key()},
      {"op", c.op},
      {"direction", to_string(c.direction)},
      {"shape", c.shape},
      {"options", c.options},
      {"implementation", implementation},
      {"backend", backend},
      {"time_s", to_json(time_s)},
      {"samples_s", samples_s},
      {"bytes_moved", costs.bytes_moved},
      {"flops", costs.flops},
      {"sfu_ops", costs.sfu_ops},
      {"achieved", {{"bytes_per_s", costs.bytes_moved / t}, {"flops_per_s", costs.flops / t}, {"sfu_ops_per_s", costs.sfu_ops / t}}},
  };
  if (costs.extra_bytes >= 0) e["extra_bytes"] = costs.extra_bytes;
  if (ceilings.is_null()) {
    e["binding_ceiling"] = nullptr;
    return e;
  }
  const Roofline r = roofline_of(ceilings);
  const double floor_memory = costs.bytes_moved / r.memory_bytes_per_s;
  const double floor_fp32 = costs.flops / r.fp32_flops_per_s;
  const double floor_sfu = costs.sfu_ops / r.sfu_ops_per_s;
  e["floor_s"] = {{"memory", floor_memory}, {"fp32", floor_fp32}, {"sfu", floor_sfu}};
  e["fraction_of_ceiling"] = {{"memory", floor_memory / t},
                              {"l2", costs.bytes_moved / r.l2_bytes_per_s / t},
                              {"fp32", floor_fp32 / t},
                              {"sfu", floor_sfu / t}};
  // The binding ceiling is the one whose floor time is largest (issue 7's definition); ties go
  // to the first in this order.
  std::string binding = "memory";
  double floor = floor_memory;
  if (floor_fp32 > floor) binding = "fp32", floor = floor_fp32;
  if (floor_sfu > floor) binding = "sfu", floor = floor_sfu;
  e["binding_ceiling"] = binding;
  e["fraction_of_binding"] = floor / t;
  return e;
}

// ------------------------------------------------------------------ cases
std::vector<SweepCase> sweep_cases(const SweepRequest& request) {
  const OpBench& bench = find_op_bench(request.op);
  auto cases = shard_cases(expand_cases(request.op, request.directions, request.axes), request.shard);
  std::string broken;
  int broken_count = 0;
  for (const auto& c : cases) {
    try {
      bench.costs(c);
    } catch (const std::exception& e) {
      if (++broken_count <= 10) broken += "\n  " + c.key() + ": " + e.what();
    }
  }
  if (broken_count)
    throw std::invalid_argument(std::to_string(broken_count) + " of the sweep's cases are invalid" +
                                (broken_count > 10 ? " (the first 10)" : "") + ":" + broken);
  return cases;
}

// ------------------------------------------------------------------ Google Benchmark plumbing
namespace {

// Forwards everything to one JSONReporter across the per-case RunSpecifiedBenchmarks calls (one
// context, one "benchmarks" array), and keeps each repetition's mean call time.
class SweepReporter : public benchmark::BenchmarkReporter {
 public:
  SweepReporter() {
    json_.SetOutputStream(&buffer_);
    json_.SetErrorStream(&errors_);
  }
  bool ReportContext(const Context& context) override {
    if (!context_done_) json_.ReportContext(context);
    context_done_ = true;
    return true;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    json_.ReportRuns(runs);
    for (const auto& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;
      if (run.error_occurred) {
        error_ = run.error_message;
        continue;
      }
      repetition_means_s_.push_back(run.real_accumulated_time / double(run.iterations));
    }
  }
  void Finalize() override {}  // called after every case; the document is closed by finish()
  nlohmann::json finish() {
    if (!context_done_) return {{"context", nlohmann::json::object()}, {"benchmarks", nlohmann::json::array()}};
    json_.Finalize();
    return nlohmann::json::parse(buffer_.str());
  }
  std::vector<double> take_samples() { return std::exchange(repetition_means_s_, {}); }
  std::string take_error() { return std::exchange(error_, {}); }

 private:
  benchmark::JSONReporter json_;
  std::ostringstream buffer_, errors_;
  bool context_done_ = false;
  std::vector<double> repetition_means_s_;
  std::string error_;
};

double q1_statistic(const std::vector<double>& v) { return spread_of(v).q1; }
double q3_statistic(const std::vector<double>& v) { return spread_of(v).q3; }

std::string short_seconds(double s) {
  char text[32];
  if (s >= 1) std::snprintf(text, sizeof(text), "%.3f s", s);
  else if (s >= 1e-3) std::snprintf(text, sizeof(text), "%.3f ms", s * 1e3);
  else std::snprintf(text, sizeof(text), "%.1f us", s * 1e6);
  return text;
}

}  // namespace

nlohmann::json run_sweep(const SweepRequest& request) {
  const OpBench& bench = find_op_bench(request.op);
  const auto cases = sweep_cases(request);
  if (request.repetitions < 1) throw std::invalid_argument("--repetitions must be at least 1");
  if (!request.ceilings.is_null()) roofline_of(request.ceilings);  // a broken ceilings file fails now, not at the end

  SweepSettings settings = request.settings;
  if (settings.cache_bytes <= 0) settings.cache_bytes = last_level_cache_bytes(settings.backend.kind);

  nlohmann::json block = {
      {"schema", "scanlab.sweep/1"},
      {"implementation", request.implementation},
      {"op", request.op},
      {"machine", machine_context(settings.backend)},
      {"impl", settings.impl},
      {"config_override", settings.config},
      {"directions", nlohmann::json::array()},
      {"axes", nlohmann::json::object()},
      {"shard", {{"index", request.shard.index}, {"count", request.shard.count}}},
      {"case_count", cases.size()},
      {"repetitions", request.repetitions},
      {"min_time_s", request.min_time_s},
      {"iterations", request.iterations},
      {"warmups", request.warmups},
      {"seed", settings.seed},
      {"cache_bytes", settings.cache_bytes},
      {"rotation", "inputs rotated among buffer sets until their bytes exceed 4x cache_bytes (at most " +
                       std::to_string(settings.max_buffer_sets) + " sets)"},
      {"data", "uniform random per tensor (ranges in the op's benchmarks/<op>_bench.cpp), never zeros"},
      {"timer", settings.backend.kind == BackendKind::cuda   ? "CUDA events around each call"
                : settings.backend.kind == BackendKind::exec ? "the implementation's timing.json (exec protocol)"
                                                             : "fence + steady_clock around each call"},
      {"ceilings", request.ceilings},
      {"ceilings_source", request.ceilings_source},
      {"command", request.command_line},
      {"complete", false},
  };
  if (!request.launch.is_null()) block["launch"] = request.launch;
  for (auto d : request.directions) block["directions"].push_back(to_string(d));
  for (const auto& axis : request.axes) {
    block["axes"][axis.name] = axis.values;
    if (!axis.zipped.empty()) block["axes"][axis.name + "_order"] = axis.zipped;
  }

  SweepReporter reporter;
  nlohmann::json entries = nlohmann::json::array();
  std::map<std::string, nlohmann::json> resumed;
  if (request.resume_from.is_object() && request.resume_from.contains("cases"))
    for (const auto& e : request.resume_from["cases"]) resumed[e.value("key", std::string())] = e;
  auto partial = [&] {
    nlohmann::json j = {{"scanlab", block}, {"cases", entries}, {"benchmarks", nlohmann::json::array()}};
    j["scanlab"]["case_count"] = cases.size();
    return j;
  };
  std::string error;
  const auto started = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < cases.size() && error.empty(); ++i) {
    const SweepCase& c = cases[i];
    const std::string key = c.key();
    if (auto it = resumed.find(key); it != resumed.end()) {
      entries.push_back(it->second);
      if (request.progress)
        std::fprintf(stderr, "[%zu/%zu] %s  (kept from the earlier run)\n", i + 1, cases.size(), key.c_str());
      continue;
    }
    std::unique_ptr<PreparedCase> prepared;
    int iterations = 0;
    const bool exec = settings.backend.kind == BackendKind::exec;
    try {
      if (exec && !request.prepare_exec) throw std::invalid_argument("exec sweeps need the CLI's exec runner");
      prepared = exec ? request.prepare_exec(c, settings) : bench.prepare(c, settings);
      for (int w = 0; w < request.warmups; ++w) prepared->run(w % prepared->buffer_sets);
      iterations = request.iterations;
      if (iterations <= 0 && exec) iterations = 1;  // every call is a process start: one per repetition
      if (iterations <= 0) {
        const double once = prepared->run(0);
        iterations = int(std::clamp(std::ceil(request.min_time_s / std::max(once, 1e-9)), 1.0, 100000.0));
      }
    } catch (const std::exception& e) {
      error = key + ": " + e.what();
      break;
    }
    benchmark::ClearRegisteredBenchmarks();
    int next_set = 0;
    PreparedCase* p = prepared.get();
    benchmark::RegisterBenchmark(key.c_str(),
                                 [p, &next_set](benchmark::State& state) {
                                   try {
                                     for (auto _ : state) state.SetIterationTime(p->run(next_set++ % p->buffer_sets));
                                   } catch (const std::exception& e) {
                                     state.SkipWithError(e.what());
                                   }
                                   state.counters["bytes_moved"] = p->costs.bytes_moved;
                                   state.counters["flops"] = p->costs.flops;
                                   state.counters["sfu_ops"] = p->costs.sfu_ops;
                                   state.counters["bytes_per_second"] = benchmark::Counter(
                                       p->costs.bytes_moved, benchmark::Counter::kIsIterationInvariantRate);
                                 })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(iterations)
        ->Repetitions(request.repetitions)
        ->ComputeStatistics("q1", q1_statistic)
        ->ComputeStatistics("q3", q3_statistic);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::ClearRegisteredBenchmarks();
    const std::string run_error = reporter.take_error();
    const auto samples = reporter.take_samples();
    if (!run_error.empty() || samples.empty()) {
      error = key + ": " + (run_error.empty() ? "no timing came back" : run_error);
      break;
    }
    const Spread spread = spread_of(samples);
    auto entry = case_entry(c, request.implementation, settings.backend.name(), spread, samples, prepared->costs,
                            request.ceilings);
    entry["impl"] = prepared->config.is_object() ? prepared->config.value("impl", std::string()) : std::string();
    if (!prepared->timer.empty()) entry["timer"] = prepared->timer;
    entry["config"] = prepared->config;
    entry["iterations"] = iterations;
    entry["memory"] = {{"tensor_bytes", prepared->tensor_bytes},
                       {"workspace_bytes", prepared->workspace_bytes},
                       {"peak_device_bytes", prepared->tensor_bytes + prepared->workspace_bytes},
                       {"buffer_sets", prepared->buffer_sets},
                       {"harness_device_bytes",
                        std::int64_t(prepared->buffer_sets) * (prepared->tensor_bytes + prepared->workspace_bytes)}};
    entries.push_back(entry);
    prepared.reset();  // free the device memory before the next case
    if (request.progress) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::string line = "[" + std::to_string(i + 1) + "/" + std::to_string(cases.size()) + "] " + key + "  " +
                         short_seconds(spread.median) + " (IQR " +
                         std::to_string(int(std::lround(100 * spread.iqr() / spread.median))) + "%)";
      char rate[96];
      std::snprintf(rate, sizeof(rate), "  %.3g GB/s", entry["achieved"]["bytes_per_s"].get<double>() * 1e-9);
      line += rate;
      if (!entry["binding_ceiling"].is_null()) {
        std::snprintf(rate, sizeof(rate), "  %.0f%% of %s", 100 * entry["fraction_of_binding"].get<double>(),
                      entry["binding_ceiling"].get<std::string>().c_str());
        line += rate;
      }
      std::snprintf(rate, sizeof(rate), "  [%.0f s]", elapsed);
      std::fprintf(stderr, "%s%s\n", line.c_str(), rate);
    }
    if (request.checkpoint) request.checkpoint(partial());
  }
  nlohmann::json result = reporter.finish();
  if (!result.contains("benchmarks")) result["benchmarks"] = nlohmann::json::array();
  block["complete"] = error.empty();
  if (!error.empty()) block["error"] = error;
  result["scanlab"] = block;
  result["cases"] = entries;
  return result;
}

}  // namespace scanlab::bench
