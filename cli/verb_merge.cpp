// `scanlab merge FILES... --out FILE`: joins the shards of one sweep (benchmarks/sweep_files.hpp).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>

#include "benchmarks/sweep_files.hpp"
#include "verbs.hpp"

namespace {

int run_merge(int argc, char** argv) {
  CLI::App app{"Joins the shards of one sweep (scanlab sweep --shard i/n) into one JSON. Refuses files whose\n"
               "contexts differ (op, implementation, device, backend, Kokkos configuration, git commit, axes,\n"
               "repetitions, seed, shard count) and any case or shard present twice; warns when shards are missing.",
               "scanlab merge"};
  std::vector<std::string> files;
  std::string out;
  app.add_option("files", files, "sweep JSON files (one per shard)")->required();
  app.add_option("--out", out, "merged JSON file to write")->required();
  CLI11_PARSE(app, argc, argv);
  std::vector<std::pair<std::string, nlohmann::json>> loaded;
  for (const auto& f : files) loaded.emplace_back(f, scanlab::bench::load_sweep_file(f));
  const auto merged = scanlab::bench::merge_sweeps(loaded);
  std::ofstream file(out);
  if (!file) throw std::runtime_error("cannot write " + out);
  file << merged.dump(1) << "\n";
  const auto& block = merged["scanlab"];
  if (!block["missing_shards"].empty())
    std::fprintf(stderr, "scanlab merge: warning: shards %s of %d are missing\n", block["missing_shards"].dump().c_str(),
                 block["shard"]["count"].get<int>());
  std::fprintf(stderr, "merged %zu files, %zu cases%s -> %s\n", files.size(), merged["cases"].size(),
               block["complete"].get<bool>() ? "" : " (incomplete)", out.c_str());
  return 0;
}

const bool registered =
    scanlab::cli::register_verb({"merge", "join the shards of a sweep into one JSON", run_merge});

}  // namespace
