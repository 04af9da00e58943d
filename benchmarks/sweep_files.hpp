// Sweep JSON files after the run: the schema check every reader applies, `scanlab merge` (joins
// the shards of one sweep) and `scanlab compare` (per case, the time ratio and a verdict that
// accounts for the spread). Pure functions of JSON, so they are tested without running anything.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "statistics.hpp"

namespace scanlab::bench {

// Reads and checks a sweep JSON (scanlab's or a peer runner's); errors name the file.
nlohmann::json load_sweep_file(const std::string& path);
// Throws std::invalid_argument listing every schema problem: the "scanlab" block (schema
// "scanlab.sweep/1", implementation, op, machine) and each case (key, op, direction, shape,
// options, implementation, time_s ordered and positive, bytes_moved, flops, sfu_ops), and keys
// unique within the file.
void check_sweep_schema(const nlohmann::json& sweep, const std::string& what);

// The context fields shards of one sweep must share; merge refuses files that differ in any.
std::vector<std::string> merge_context_fields();

// Joins shards: contexts agree (merge_context_fields), shard counts agree, no shard and no case
// twice. Cases come back in the sweep's own order (case k of shard i is case i + k*n of the whole
// sweep); Google Benchmark's "benchmarks" arrays are concatenated. scanlab.merged_from records
// each input (file, shard, host, date, its roofline); scanlab.complete is true only when every
// shard is present and complete. Each file is (name, JSON).
nlohmann::json merge_sweeps(const std::vector<std::pair<std::string, nlohmann::json>>& files);

struct CaseComparison {
  std::string key;
  Spread a, b;
  double ratio = 0;    // b's median time / a's
  double speedup = 0;  // a's median time / b's: above 1 means B is faster
  Verdict verdict = Verdict::same_within_noise;
};
struct Comparison {
  std::string a_label, b_label;  // implementation@backend (git commit)
  std::vector<CaseComparison> cases;
  std::vector<std::string> only_in_a, only_in_b;
  std::vector<std::string> context_differences;  // "git_commit: abc -> def", ...
};
// Matches cases by key (op, direction, shape, options; not implementation or backend, so a
// sweep compares with a peer's as well as with another run of itself).
Comparison compare_sweeps(const nlohmann::json& a, const nlohmann::json& b, double min_change);
std::string format_comparison(const Comparison& comparison);
nlohmann::json to_json(const Comparison& comparison);

}  // namespace scanlab::bench
