// Autotuning (issue 6) and its persistent cache.
//
// `scanlab tune` takes the valid configs of a case (the op's heuristic first, then its registry
// candidates), checks each one against the float64 oracle on a reduced case of the same options,
// dstate and config (batch 1, at most kVerifySeqlen steps and kVerifyDim channels: the oracle at
// full size would cost more than the tuning), times the ones that pass exactly as the sweeps time
// (the op's sweep case: random inputs rotated past the cache, fences or CUDA events around each
// call, the median of repetitions), and stores the fastest in the cache. A config that fails
// the oracle check is discarded and reported, however fast it is.
//
// The cache is one JSON file ($SCANLAB_TUNE_CACHE, default ~/.cache/scanlab/tune-cache.json):
//   {"schema": "scanlab.tune-cache/1", "entries": {KEY: {"config": {...}, "median_s": ..., ...}}}
// KEY = device | backend | op | shape bucket, the bucket being the problem's options and its input
// shapes with every extent rounded up to a power of two (so (16,1536,16,1024) shares the entry
// of (16,2048,16,1024)), forward-only and with-backward problems apart. Stores lock the file,
// re-read it and merge, then replace it atomically: tuners on several shapes or machines may
// share one file. `--impl auto` on every verb looks the problem up here before falling back to
// the heuristic config (resolve_config, cli/case_runner.hpp); --no-cache bypasses it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/sweep.hpp"
#include "kernels/backend.hpp"
#include "kernels/problem/common.hpp"

namespace scanlab::cli {

constexpr std::int64_t kVerifySeqlen = 600;  // > 2 chunks of every registry chunk_len, not a multiple of them
constexpr std::int64_t kVerifyDim = 160;

std::string default_tune_cache_path();

class TuneCache {
 public:
  explicit TuneCache(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  // The file's entries ({} when the file does not exist). A file that is not a tune cache is an
  // error naming it, never silently replaced.
  nlohmann::json entries() const;
  std::optional<nlohmann::json> find(const std::string& key) const;
  // Lock, re-read, set entries[key] = entry, write a temporary file and rename it over the cache.
  void store(const std::string& key, const nlohmann::json& entry) const;

 private:
  std::string path_;
};

// The shape bucket of a problem: options and input shapes rounded up to powers of two.
std::string shape_bucket(const nlohmann::json& options, const std::vector<TensorSpec>& specs, bool with_backward);
std::string tune_key(const std::string& device, const std::string& backend, const std::string& op,
                     const std::string& bucket);
// The device name the cache keys a backend by (machine_context's "device").
std::string tune_device_name(BackendKind kind);

// Makes `--impl auto` of every op consult the cache at `path` (loaded once, on first use).
void install_tuning_cache(const std::string& path);

// One candidate's outcome.
struct TuneCandidate {
  nlohmann::json config;
  bool heuristic = false;
  std::string status;  // "timed", "wrong" (failed the oracle check), "failed" (threw), "unverified"
  std::string detail;  // why, for wrong/failed/unverified
  double worst_error_over_bound = 0;  // of the oracle check on the reduced case
  std::vector<double> samples_s;      // per-repetition mean call time
  double median_s = 0;
};
struct TuneShapeResult {
  std::string case_key, bucket, key;
  nlohmann::json verify_shape;  // the reduced case the oracle checked
  std::vector<TuneCandidate> candidates;
  int winner = -1;  // index into candidates (timed and fastest); -1 when none passed
  int heuristic = -1;
  nlohmann::json to_json() const;
};

struct TuneOptions {
  bench::SweepSettings settings;  // backend, seed, cache bytes
  int repetitions = 5;
  int warmups = 2;
  double min_time_s = 0.02;
  int max_candidates = 24;  // the heuristic plus at most this many - 1 others (spread_candidates)
  bool progress = true;
  // Tests only: changes a candidate's outputs before the oracle check (a deliberately wrong config).
  std::function<void(const nlohmann::json& config, TensorMap& outputs)> tamper;
};

// At most `most` of the registry's configs: the heuristic (first), then evenly spaced picks from
// the rest, so a short tune still spans every implementation and team size.
std::vector<nlohmann::json> spread_candidates(const std::vector<nlohmann::json>& configs, int most);

// The reduced case the oracle checks a config on.
bench::SweepCase verification_case(const bench::SweepCase& c);

// Tunes one case: verify, time, pick. Does not touch the cache.
TuneShapeResult tune_case(const bench::SweepCase& c, const TuneOptions& options);

}  // namespace scanlab::cli
