// `scanlab compare A.json B.json`: per case, B's time against A's and a noise-aware verdict.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>

#include "benchmarks/sweep_files.hpp"
#include "verbs.hpp"

namespace {

int run_compare(int argc, char** argv) {
  CLI::App app{"Compares two sweep JSON files case by case (matched by op, direction, shape and options): the\n"
               "ratio of median times and a verdict. B is 'faster' or 'slower' only when the interquartile ranges\n"
               "of the two times do not overlap and the medians differ by at least --min-change; otherwise the\n"
               "difference is 'same within noise'. Works run-to-run, version-to-version and against a peer.\n"
               "The quartiles see only the repetitions inside each sweep, not what moves a whole sweep: two\n"
               "builds of the same kernel source, or a call's first sweep, differed by 1-3% on the H200\n"
               "(reports/results/h200/2026-12-04-s23/call1/compare.txt). Compare builds A, B, A, B in one run\n"
               "and raise --min-change (0.03) before calling a few percent a change.",
               "scanlab compare"};
  std::string a, b, json_out;
  double min_change = 0.01;
  bool fail_on_slower = false;
  app.add_option("A", a, "baseline sweep JSON")->required();
  app.add_option("B", b, "sweep JSON compared with the baseline")->required();
  app.add_option("--min-change", min_change, "smallest relative change called a change")->capture_default_str();
  app.add_option("--json", json_out, "also write the comparison as JSON");
  app.add_flag("--fail-on-slower", fail_on_slower, "exit with 1 when B is slower in any case");
  CLI11_PARSE(app, argc, argv);
  const auto comparison =
      scanlab::bench::compare_sweeps(scanlab::bench::load_sweep_file(a), scanlab::bench::load_sweep_file(b), min_change);
  std::printf("%s", scanlab::bench::format_comparison(comparison).c_str());
  if (!json_out.empty()) {
    std::ofstream file(json_out);
    if (!file) throw std::runtime_error("cannot write " + json_out);
    file << scanlab::bench::to_json(comparison).dump(1) << "\n";
  }
  if (comparison.cases.empty()) {
    std::fprintf(stderr, "scanlab compare: no case is in both files\n");
    return 1;
  }
  if (fail_on_slower)
    for (const auto& c : comparison.cases)
      if (c.verdict == scanlab::bench::Verdict::slower) return 1;
  return 0;
}

const bool registered = scanlab::cli::register_verb(
    {"compare", "compare two sweeps per case: time ratio and a noise-aware verdict", run_compare});

}  // namespace
