// `scanlab tune OP <axes> [--direction D] [--backend B] [--cache FILE | --no-cache] [--out FILE]`:
// per case, every valid config of the registry checked against the oracle and timed; the fastest
// correct one goes to the tuning cache (cli/tune.hpp).
#include <CLI/CLI.hpp>

#include <cstdio>

#include "benchmarks/context.hpp"
#include "benchmarks/sweep.hpp"
#include "case_runner.hpp"
#include "launch.hpp"
#include "sweep_axes.hpp"
#include "tune.hpp"
#include "verbs.hpp"

namespace {

using namespace scanlab::bench;
using namespace scanlab::cli;

int run_tune_verb(int argc, char** argv) {
  CLI::App app{"Autotunes OP on this machine: for each case of the axes, the op's heuristic config and its registry\n"
               "candidates that can run it are each checked against the float64 oracle on a reduced case (batch 1,\n"
               "at most 600 steps and 160 channels, same options and dstate) and, if correct, timed as `scanlab sweep`\n"
               "times (random inputs rotated past the cache, fences or CUDA events, median of --repetitions). The\n"
               "fastest correct config is stored in the tuning cache, which `--impl auto` of every verb then uses for\n"
               "problems of the same shape bucket (extents rounded up to powers of two, same options and backend and\n"
               "device). A config that disagrees with the oracle is discarded and reported, and the exit status is 1.",
               "scanlab tune"};
  app.footer(axes_help() +
             "Cache: --cache FILE, else $SCANLAB_TUNE_CACHE, else ~/.cache/scanlab/tune-cache.json (JSON; stores lock,\n"
             "re-read and merge, so tuners may share it). Exit status: 0 tuned, 1 a config failed the oracle check\n"
             "or no config could be timed, 2 a usage error.\n");
  std::string op, direction_text = "fwdbwd", backend_text = "auto", cache_path, out;
  AxisFlags axis_flags;
  TuneOptions options;
  bool no_cache = false;
  app.add_option("op", op, "selective_scan, state_space_v1, s7_scan, s7_inner")->required();
  add_axis_flags(app, axis_flags);
  app.add_option("--direction", direction_text, "fwd, bwd, fwdbwd or a list (what is timed; fwd and the others are "
                 "separate cache entries)")->capture_default_str();
  app.add_option("--backend", backend_text, "serial, openmp, cuda or auto")->capture_default_str();
  app.add_option("--repetitions", options.repetitions, "timed repetitions per candidate (median)")->capture_default_str();
  app.add_option("--min-time", options.min_time_s, "seconds per repetition (sets the calls per repetition)")
      ->capture_default_str();
  app.add_option("--warmups", options.warmups, "untimed calls per candidate")->capture_default_str();
  app.add_option("--max-candidates", options.max_candidates, "most configs tried per case: the heuristic, then evenly spaced picks from the registry's candidates")
      ->capture_default_str();
  app.add_option("--seed", options.settings.seed, "seed of the random inputs")->capture_default_str();
  app.add_option("--cache", cache_path, "tuning cache file to update");
  app.add_flag("--no-cache", no_cache, "do not write the cache (report only)");
  app.add_option("--out", out, "JSON report: every case's candidates, their status and times");
  app.add_flag("--quiet", [&](std::int64_t) { options.progress = false; }, "no progress lines");
  if (int rc = parse_command_line(app, argc, argv); rc >= 0) return rc;

  SweepRequest request;
  request.op = op;
  request.directions = parse_directions(direction_text);
  request.axes = axes_from_flags(op, axis_flags);
  request.settings.backend = scanlab::parse_backend(backend_text);
  options.settings.backend = request.settings.backend;
  if (!options.settings.backend.is_kokkos())
    throw std::invalid_argument("tune times scanlab's kernels: --backend serial, openmp, cuda or auto");
  if (options.repetitions < 1) throw std::invalid_argument("--repetitions must be at least 1");
  if (options.max_candidates < 1) throw std::invalid_argument("--max-candidates must be at least 1");
  const auto cases = sweep_cases(request);  // every case valid before anything runs
  if (cache_path.empty()) cache_path = default_tune_cache_path();
  TuneCache cache(cache_path);
  if (!no_cache) cache.entries();  // a broken cache file fails now, not after the tuning
  std::string command = "scanlab tune";
  for (int i = 1; i < argc; ++i) command += " " + shell_quote(argv[i]);

  nlohmann::json report = {{"schema", "scanlab.tune/1"},
                           {"op", op},
                           {"machine", machine_context(options.settings.backend)},
                           {"command", command},
                           {"cache", no_cache ? nlohmann::json() : nlohmann::json(cache_path)},
                           {"repetitions", options.repetitions},
                           {"min_time_s", options.min_time_s},
                           {"seed", options.settings.seed},
                           {"cases", nlohmann::json::array()}};
  bool any_wrong = false, any_untimed = false;
  std::printf("%-70s %9s %9s %7s %s\n", "case", "heur ms", "tuned ms", "speedup", "candidates (timed/wrong/other)");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (options.progress) std::fprintf(stderr, "[%zu/%zu] tuning %s\n", i + 1, cases.size(), cases[i].key().c_str());
    const auto r = tune_case(cases[i], options);
    int timed = 0, wrong = 0, other = 0;
    for (const auto& c : r.candidates) (c.status == "timed" ? timed : c.status == "wrong" ? wrong : other)++;
    any_wrong = any_wrong || wrong > 0;
    nlohmann::json entry = r.to_json();
    if (r.winner < 0) {
      any_untimed = true;
    } else if (!no_cache) {
      const auto& w = r.candidates[std::size_t(r.winner)];
      cache.store(r.key, {{"config", w.config},
                          {"median_s", w.median_s},
                          {"heuristic_median_s", entry["heuristic_median_s"]},
                          {"case", r.case_key},
                          {"candidates_timed", timed},
                          {"command", command}});
    }
    report["cases"].push_back(entry);
    const double heur = entry["heuristic_median_s"].is_number() ? entry["heuristic_median_s"].get<double>() : NAN;
    const double best = r.winner >= 0 ? r.candidates[std::size_t(r.winner)].median_s : NAN;
    std::printf("%-70s %9.4g %9.4g %6.2fx %d/%d/%d\n", r.case_key.substr(0, 70).c_str(), heur * 1e3, best * 1e3,
                heur / best, timed, wrong, other);
    // Written after every case, so an interrupted tune keeps what it measured.
    if (!out.empty()) write_file_atomically(out, report.dump(1) + "\n");
  }
  if (!no_cache) std::printf("tuned configs stored in %s\n", cache_path.c_str());
  if (any_wrong) std::fprintf(stderr, "scanlab tune: a config FAILED the oracle check (see the report): a kernel bug\n");
  if (any_untimed) std::fprintf(stderr, "scanlab tune: a case had no config that could be checked and timed\n");
  return any_wrong || any_untimed ? 1 : 0;
}

const bool registered = register_verb(
    {"tune", "autotune an op's config per shape (oracle-checked, timed) into the tuning cache", run_tune_verb});

}  // namespace
