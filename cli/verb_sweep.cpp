// `scanlab sweep OP <axes> [--direction fwd,bwd,fwdbwd] [--backend B] [--impl I] [--shard i/n]
//  [--repetitions R] [--ceilings FILE] --out FILE`: a benchmark sweep to JSON (benchmarks/sweep.hpp).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "benchmarks/context.hpp"
#include "benchmarks/sweep.hpp"
#include "benchmarks/sweep_files.hpp"
#include "launch.hpp"
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
         "Under mpirun or srun (K ranks) each rank runs shard rank/K on its own GPU (node-local rank mod GPUs)\n"
         "or its share of the cores, writes it to OUT.ranks/, and rank 0 merges them into OUT; --resume\n"
         "re-runs only what a killed rank left unfinished (README: Scale-out).\n"
         "exec:CMD sweeps time an external implementation through the exec protocol (cli/case_runner.hpp):\n"
         "one call per repetition unless --iterations, the time from its timing.json (bwd: backward_seconds).\n";
}

// Where rank R of K writes its shard of a sweep whose merged result goes to `out`.
std::string rank_file(const std::string& out, int rank, int size) {
  return out + ".ranks/rank-" + std::to_string(rank) + "-of-" + std::to_string(size) + ".json";
}

// Why `previous` is not an earlier run of `request` ("" when it is): its context fields, its
// shard, or cases this request does not have.
std::string resume_mismatch(const nlohmann::json& previous, const SweepRequest& request,
                            const std::vector<SweepCase>& cases) {
  const auto& b = previous["scanlab"];
  if (b.value("op", std::string()) != request.op) return "op " + b.value("op", std::string("?"));
  const auto& shard = b.value("shard", nlohmann::json::object());
  if (shard.value("index", -1) != request.shard.index || shard.value("count", -1) != request.shard.count)
    return "shard " + shard.dump();
  if (b.value("repetitions", -1) != request.repetitions) return "repetitions";
  if (b.value("seed", std::uint64_t(0)) != request.settings.seed) return "seed";
  std::set<std::string> keys;
  for (const auto& c : cases) keys.insert(c.key());
  for (const auto& c : previous["cases"])
    if (!keys.count(c.value("key", std::string()))) return "case " + c.value("key", std::string()) + " is not in this sweep";
  return "";
}

void load_or_measure_ceilings(SweepRequest& request, const std::string& ceilings_file, bool quick_ceilings) {
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
    return;
  }
  CeilingOptions options;
  options.quick = quick_ceilings;
  if (request.progress) std::fprintf(stderr, "measuring ceilings ...\n");
  // An exec implementation runs on the machine's fastest device: measure that one.
  const auto measured_on = request.settings.backend.kind == scanlab::BackendKind::exec ? scanlab::parse_backend("auto")
                                                                                        : request.settings.backend;
  request.ceilings = measure_ceilings(measured_on, options);
  request.ceilings_source = quick_ceilings ? "measured in this run (quick: not for publishing)" : "measured in this run";
}

// Rank 0: waits for every rank's shard, merges them (scanlab merge) into `out`.
int gather_ranks(const std::string& out, const scanlab::cli::LaunchWorld& world, double timeout_s, bool progress) {
  std::vector<std::string> done;
  for (int r = 0; r < world.size; ++r) done.push_back(rank_file(out, r, world.size) + ".done");
  const auto missing = scanlab::cli::wait_for_rank_files(done, timeout_s, "sweep shard");
  std::vector<std::pair<std::string, nlohmann::json>> files;
  for (int r = 0; r < world.size; ++r) {
    const std::string f = rank_file(out, r, world.size);
    if (std::filesystem::exists(f)) files.emplace_back(f, load_sweep_file(f));
  }
  if (files.empty()) throw std::runtime_error("no rank wrote its shard under " + out + ".ranks/");
  auto merged = merge_sweeps(files);
  merged["scanlab"]["launch"] = {{"launcher", world.launcher}, {"ranks", world.size}};
  scanlab::cli::write_file_atomically(out, merged.dump(1) + "\n");
  const bool complete = merged["scanlab"]["complete"].get<bool>() && missing.empty();
  if (!complete) {
    std::string list;
    for (int r : missing) list += (list.empty() ? "" : ",") + std::to_string(r);
    std::fprintf(stderr, "scanlab sweep: merged %zu of %d rank shards into %s; INCOMPLETE%s%s. Re-run the same "
                 "command with --resume to finish only what is missing.\n", files.size(), world.size, out.c_str(),
                 list.empty() ? "" : ": no result from rank(s) ", list.c_str());
    return 1;
  }
  if (progress)
    std::fprintf(stderr, "rank 0: merged %d rank shards (%zu cases) into %s\n", world.size, merged["cases"].size(),
                 out.c_str());
  return 0;
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
  bool resume = false;
  double gather_timeout_s = 86400;
  app.add_flag("--resume", resume,
               "keep what an earlier run of this same sweep wrote to --out (under mpirun/srun: to OUT.ranks/): "
               "finished shards are not run again, a partial one continues after its last case");
  app.add_option("--gather-timeout", gather_timeout_s,
                 "under mpirun/srun: seconds rank 0 waits for the other ranks' shards")
      ->capture_default_str();
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
  // Under mpirun/srun every rank runs its shard of the sweep and writes it under OUT.ranks/;
  // rank 0 then merges them into OUT (cli/launch.hpp).
  const scanlab::cli::LaunchWorld world = scanlab::cli::detect_launch_world();
  std::string target = out;
  if (world.distributed()) {
    if (shard_text != "0/1")
      throw std::invalid_argument("--shard and an " + world.launcher + " launch of " + std::to_string(world.size) +
                                  " ranks both split the sweep: give one of them");
    request.shard = {world.rank, world.size};
    target = rank_file(out, world.rank, world.size);
    request.launch = {{"launcher", world.launcher},     {"rank", world.rank},
                      {"size", world.size},             {"local_rank", world.local_rank},
                      {"local_size", world.local_size}, {"device_id", scanlab::cli::bound_device_id()}};
  }
  const auto cases = sweep_cases(request);  // every case valid before anything is measured
  // --resume: a finished file of this same sweep is kept; a partial one (a checkpoint) keeps its cases.
  nlohmann::json previous;
  if (resume && std::filesystem::exists(target)) {
    previous = load_sweep_file(target);
    const std::string why = resume_mismatch(previous, request, cases);
    if (!why.empty())
      throw std::invalid_argument("--resume: " + target + " is not a run of this sweep (" + why +
                                  "); move it away or drop --resume");
  } else {
    if (const auto parent = std::filesystem::path(target).parent_path(); !parent.empty())
      std::filesystem::create_directories(parent);
    std::ofstream probe(target, std::ios::app);  // an unwritable --out fails now, not after the sweep
    if (!probe) throw std::runtime_error("cannot write " + target);
    probe.close();
    std::filesystem::remove(target);
  }
  nlohmann::json result;
  if (previous.is_object() && previous["scanlab"].value("complete", false)) {
    std::fprintf(stderr, "scanlab sweep: %s is complete (%zu cases): kept (--resume)\n", target.c_str(),
                 previous["cases"].size());
    result = previous;
  } else {
    if (previous.is_object()) request.resume_from = previous;
    load_or_measure_ceilings(request, ceilings_file, quick_ceilings);
    std::size_t checkpoints = 0;
    request.checkpoint = [&](const nlohmann::json& partial) {
      scanlab::cli::write_file_atomically(target, partial.dump(1) + "\n");
      if (++checkpoints == 1) scanlab::cli::fault_point(world, "after_first_case");
    };
    result = run_sweep(request);
    scanlab::cli::write_file_atomically(target, result.dump(1) + "\n");
  }
  const auto& block = result["scanlab"];
  const bool complete = block["complete"].get<bool>();
  if (!complete)
    std::fprintf(stderr, "scanlab sweep: stopped after %zu of %zu cases: %s\nwrote the partial results to %s "
                 "(--resume continues from them)\n", result["cases"].size(), block["case_count"].get<std::size_t>(),
                 block.value("error", std::string("?")).c_str(), target.c_str());
  if (!world.distributed()) {
    if (complete && request.progress) std::fprintf(stderr, "wrote %zu cases to %s\n", result["cases"].size(), out.c_str());
    return complete ? 0 : 1;
  }
  // This rank is done (complete or not): say so, so rank 0 stops waiting for it.
  scanlab::cli::write_file_atomically(target + ".done", complete ? "complete\n" : "incomplete\n");
  if (world.rank != 0) return complete ? 0 : 1;
  return gather_ranks(out, world, gather_timeout_s, request.progress);
}

const bool registered = scanlab::cli::register_verb(
    {"sweep", "benchmark sweep of one op over axes (lists, ranges; shards) to JSON", run_sweep_verb});

}  // namespace
