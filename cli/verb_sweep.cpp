// `scanlab sweep OP <axes> [--direction fwd,bwd,fwdbwd] [--backend B] [--impl I] [--shard i/n]
//  [--repetitions R] [--ceilings FILE] --out FILE`: a benchmark sweep to JSON (benchmarks/sweep.hpp).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "benchmarks/context.hpp"
#include "benchmarks/sweep.hpp"
#include "case_runner.hpp"
#include "sweep_axes.hpp"
#include "verbs.hpp"

namespace {

using namespace scanlab::bench;

// A case timed through the exec protocol (cli/case_runner.hpp): every call writes the case
// directory (the inputs scanlab's own kernels get for buffer set 0), runs the command and reads
// its outputs; the time is the implementation's timing.json (seconds; backward_seconds for bwd),
// or the whole call's wall time when it writes none.
class ExecCase : public PreparedCase {
 public:
  ExecCase(const OpBench& bench, const SweepCase& c, const SweepSettings& s)
      : command_(s.backend.command), direction_(c.direction) {
    costs = bench.costs(c);
    case_ = {c.op, bench.case_options(c), bench.host_inputs(c, s.seed)};
    const auto specs = bench.tensor_specs(c);
    expected_ = scanlab::cli::expected_outputs(specs);
    for (const auto& spec : specs) tensor_bytes += 4 * scanlab::shape_numel(spec.shape);
    config = {{"exec", command_}};
  }
  double run(int) override {
    const auto r = scanlab::cli::run_exec(command_, case_, expected_);
    if (direction_ == Direction::bwd) {
      if (!r.reported_backward_seconds)
        throw std::runtime_error("a bwd sweep needs \"backward_seconds\" in the implementation's timing.json");
      timer = "timing.json backward_seconds";
      return *r.reported_backward_seconds;
    }
    if (r.reported_seconds) {
      timer = "timing.json seconds";
      return *r.reported_seconds;
    }
    timer = "wall clock of the whole exec call (no timing.json: process start-up included)";
    return r.wall_seconds;
  }

 private:
  std::string command_;
  Direction direction_;
  scanlab::io::Case case_;
  std::vector<scanlab::TensorSpec> expected_;
};

std::string sweep_help() {
  return scanlab::cli::axes_help() +
         "Without --ceilings the machine's ceilings are measured first (scanlab ceilings).\n"
         "--impl auto uses the tuning cache's config for the case's shape bucket when `scanlab tune` stored one\n"
         "(--no-cache: the heuristic); each case's JSON records the config it ran.\n"
         "exec:CMD sweeps time an external implementation through the exec protocol (cli/case_runner.hpp):\n"
         "one call per repetition unless --iterations, the time from its timing.json (bwd: backward_seconds).\n";
}

int run_sweep_verb(int argc, char** argv) {
  CLI::App app{"Benchmark sweep of one op over the given axes, written as Google Benchmark JSON plus scanlab's\n"
               "context block and per-case results (reports/README.md describes the schema).",
               "scanlab sweep"};
  app.footer(sweep_help());
  std::string op, direction_text = "fwd", backend_text = "auto", impl = "auto", config_text, shard_text = "0/1";
  std::string ceilings_file, out;
  bool quick_ceilings = false, list_cases = false;
  SweepRequest request;
  app.add_option("op", op, "selective_scan, state_space_v1, s7_scan, s7_inner")->required();
  scanlab::cli::AxisFlags axis_flags;
  scanlab::cli::add_axis_flags(app, axis_flags);
  app.add_option("--direction", direction_text, "fwd, bwd, fwdbwd or a list of them")->capture_default_str();
  app.add_option("--backend", backend_text, "serial, openmp, cuda, auto or exec:CMD")->capture_default_str();
  app.add_option("--impl", impl, "auto (the tuning cache's config, else the heuristic) or an implementation name")->capture_default_str();
  app.add_flag("--no-cache", [&](std::int64_t) { request.settings.use_tuning_cache = false; },
               "--impl auto ignores the tuning cache (the heuristic config)");
  app.add_option("--config", config_text, "JSON object of config fields laid over the chosen config");
  app.add_option("--shard", shard_text, "run shard i of n (0 <= i < n)")->capture_default_str();
  app.add_option("--repetitions", request.repetitions, "repetitions per case (median and IQR over them)")
      ->capture_default_str();
  app.add_option("--min-time", request.min_time_s, "seconds per repetition (sets the calls per repetition)")
      ->capture_default_str();
  app.add_option("--iterations", request.iterations, "calls per repetition (overrides --min-time)");
  app.add_option("--warmups", request.warmups, "untimed calls per case before timing")->capture_default_str();
  app.add_option("--seed", request.settings.seed, "seed of the random inputs")->capture_default_str();
  app.add_option("--max-buffer-sets", request.settings.max_buffer_sets, "most input sets rotated per case")
      ->capture_default_str();
  app.add_option("--ceilings", ceilings_file, "ceilings JSON from `scanlab ceilings` (else measured now)");
  app.add_flag("--quick-ceilings", quick_ceilings, "measure quick ceilings (tests and CI only)");
  std::string implementation;
  app.add_option("--implementation", implementation,
                 "name of what is timed in the JSON (default: scanlab; for exec:CMD, the backend's name)");
  app.add_flag("--list-cases", list_cases, "print the case keys (after --shard) and exit");
  app.add_flag("--quiet", [&](std::int64_t) { request.progress = false; }, "no progress lines");
  app.add_option("--out", out, "JSON file to write");
  CLI11_PARSE(app, argc, argv);

  const OpBench& bench = find_op_bench(op);
  request.op = op;
  request.directions = parse_directions(direction_text);
  request.axes = scanlab::cli::axes_from_flags(op, axis_flags);
  request.shard = parse_shard(shard_text);
  request.settings.backend = scanlab::parse_backend(backend_text);
  request.settings.impl = impl;
  if (!config_text.empty()) {
    request.settings.config = nlohmann::json::parse(config_text, nullptr, false);
    if (!request.settings.config.is_object()) throw std::invalid_argument("--config must be a JSON object");
  }
  std::string command = "scanlab sweep";
  for (int i = 1; i < argc; ++i) command += " " + scanlab::cli::shell_quote(argv[i]);
  request.command_line = command;

  if (list_cases) {
    for (const auto& c : sweep_cases(request)) std::printf("%s\n", c.key().c_str());
    return 0;
  }
  if (out.empty()) throw std::invalid_argument("--out FILE is required (unless --list-cases)");
  if (request.settings.backend.kind == scanlab::BackendKind::reference)
    throw std::invalid_argument("sweeps time kernels: --backend serial, openmp, cuda or auto (the float64 oracle is "
                                "checked by `scanlab check`, not timed)");
  if (request.settings.backend.kind == scanlab::BackendKind::exec) {
    request.prepare_exec = [&bench](const SweepCase& c, const SweepSettings& s) -> std::unique_ptr<PreparedCase> {
      return std::make_unique<ExecCase>(bench, c, s);
    };
    if (implementation.empty()) implementation = request.settings.backend.name();
  }
  request.implementation = implementation.empty() ? "scanlab" : implementation;
  sweep_cases(request);  // every case valid before anything is measured
  std::ofstream file(out);
  if (!file) throw std::runtime_error("cannot write " + out);

  if (!ceilings_file.empty()) {
    std::ifstream in(ceilings_file);
    if (!in) throw std::runtime_error("cannot read --ceilings " + ceilings_file);
    request.ceilings = nlohmann::json::parse(in);
    roofline_of(request.ceilings);
    const std::string measured_on = request.ceilings["machine"].value("backend", std::string("?"));
    if (measured_on != request.settings.backend.name())
      std::fprintf(stderr, "scanlab sweep: warning: --ceilings were measured on backend %s, the sweep runs on %s\n",
                   measured_on.c_str(), request.settings.backend.name().c_str());
    request.ceilings_source = "loaded from " + ceilings_file;
  } else {
    CeilingOptions options;
    options.quick = quick_ceilings;
    if (request.progress) std::fprintf(stderr, "measuring ceilings ...\n");
    // An exec implementation runs on the machine's fastest device: measure that one.
    const auto measured_on = request.settings.backend.kind == scanlab::BackendKind::exec
                                 ? scanlab::parse_backend("auto")
                                 : request.settings.backend;
    request.ceilings = measure_ceilings(measured_on, options);
    request.ceilings_source = quick_ceilings ? "measured in this run (quick: not for publishing)" : "measured in this run";
  }
  const auto result = run_sweep(request);
  file << result.dump(1) << "\n";
  file.close();
  const auto& block = result["scanlab"];
  if (!block["complete"].get<bool>()) {
    std::fprintf(stderr, "scanlab sweep: stopped after %zu of %zu cases: %s\nwrote the partial results to %s\n",
                 result["cases"].size(), block["case_count"].get<std::size_t>(),
                 block["error"].get<std::string>().c_str(), out.c_str());
    return 1;
  }
  if (request.progress) std::fprintf(stderr, "wrote %zu cases to %s\n", result["cases"].size(), out.c_str());
  return 0;
}

const bool registered = scanlab::cli::register_verb(
    {"sweep", "benchmark sweep of one op over axes (lists, ranges; shards) to JSON", run_sweep_verb});

}  // namespace
