#include "tune.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "benchmarks/context.hpp"
#include "launch.hpp"
#include "benchmarks/statistics.hpp"
#include "case_runner.hpp"
#include "op_traits.hpp"

namespace scanlab::cli {

namespace fs = std::filesystem;
constexpr const char* kSchema = "scanlab.tune-cache/1";

std::string default_tune_cache_path() {
  if (const char* p = std::getenv("SCANLAB_TUNE_CACHE"); p && *p) return p;
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/scanlab/tune-cache.json";
}

static nlohmann::json read_cache_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("schema", std::string()) != kSchema || !j.contains("entries") ||
      !j["entries"].is_object())
    throw std::runtime_error("tune cache " + path + " is not a " + kSchema +
                             " file (move it away, or point SCANLAB_TUNE_CACHE elsewhere)");
  return j["entries"];
}

nlohmann::json TuneCache::entries() const { return read_cache_file(path_); }

std::optional<nlohmann::json> TuneCache::find(const std::string& key) const {
  const auto e = entries();
  auto it = e.find(key);
  if (it == e.end()) return std::nullopt;
  return *it;
}

void TuneCache::store(const std::string& key, const nlohmann::json& entry) const {
  const fs::path path(path_);
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  // An advisory lock on a sibling file serialises read-merge-write among tuners sharing the cache.
  const std::string lock_path = path_ + ".lock";
  const int fd = ::open(lock_path.c_str(), O_CREAT | O_RDWR, 0644);
  if (fd < 0) throw std::runtime_error("cannot open the tune cache lock " + lock_path);
  if (::flock(fd, LOCK_EX) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot lock " + lock_path);
  }
  try {
    nlohmann::json entries = read_cache_file(path_);
    entries[key] = entry;
    // Atomic: readers see the old file or the new one.
    write_file_atomically(path_, nlohmann::json{{"schema", kSchema}, {"entries", entries}}.dump(1) + "\n");
  } catch (...) {
    ::flock(fd, LOCK_UN);
    ::close(fd);
    throw;
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
}

static std::int64_t round_up_pow2(std::int64_t v) {
  std::int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

std::string shape_bucket(const nlohmann::json& options, const std::vector<TensorSpec>& specs, bool with_backward) {
  nlohmann::json o = options;
  o.erase("op");
  std::string text = o.dump() + (with_backward ? " bwd" : " fwd");
  for (const auto& spec : specs) {
    if (spec.role != TensorRole::input) continue;
    text += " " + spec.name + ":";
    for (std::size_t i = 0; i < spec.shape.size(); ++i)
      text += (i ? "x" : "") + std::to_string(round_up_pow2(spec.shape[i]));
  }
  return text;
}

std::string tune_key(const std::string& device, const std::string& backend, const std::string& op,
                     const std::string& bucket) {
  return device + " | " + backend + " | " + op + " | " + bucket;
}

std::string tune_device_name(BackendKind kind) {
  // device_name reads /proc/cpuinfo or the CUDA device properties: once per backend per process.
  static std::mutex mutex;
  static std::map<BackendKind, std::string> names;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = names.find(kind);
  return it != names.end() ? it->second : names[kind] = device_name(kind);
}

namespace {

// The cache file's entries, read once (on the first lookup of any op) and shared by every op.
struct LoadedCache {
  explicit LoadedCache(std::string path) : cache(std::move(path)) {}
  const nlohmann::json& entries() {
    std::call_once(loaded, [&] {
      try {
        loaded_entries = cache.entries();
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
    if (!error.empty()) throw std::runtime_error(error);
    return loaded_entries;
  }
  TuneCache cache;
  std::once_flag loaded;
  nlohmann::json loaded_entries;
  std::string error;
};

template <class T>
void install_for(std::shared_ptr<LoadedCache> cache) {
  using P = typename T::Problem;
  TunedConfig<P>::lookup = [cache](const P& p, BackendKind kind) -> std::optional<typename T::Config> {
    const auto& entries = cache->entries();
    const std::string key =
        tune_key(tune_device_name(kind), to_string(kind), T::name, shape_bucket(p.options_json(), p.tensors(), p.with_backward));
    auto it = entries.find(key);
    if (it == entries.end() || !it->contains("config")) return std::nullopt;
    return config_from_json<T>((*it)["config"]);
  };
}

}  // namespace

void install_tuning_cache(const std::string& path) {
  auto cache = std::make_shared<LoadedCache>(path);
  for (const auto& op : op_names()) visit_op(op, [&](auto t) {
      install_for<decltype(t)>(cache);
      return 0;
    });
}

nlohmann::json TuneShapeResult::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : candidates) {
    nlohmann::json j = {{"config", c.config},           {"heuristic", c.heuristic}, {"status", c.status},
                        {"worst_error_over_bound", c.worst_error_over_bound}};
    if (!c.detail.empty()) j["detail"] = c.detail;
    if (c.status == "timed") {
      j["median_s"] = c.median_s;
      j["samples_s"] = c.samples_s;
    }
    list.push_back(j);
  }
  nlohmann::json j = {{"case", case_key}, {"bucket", bucket}, {"key", key}, {"verify_shape", verify_shape},
                      {"candidates", list}};
  j["winner"] = winner >= 0 ? nlohmann::json(candidates[winner].config) : nlohmann::json();
  j["winner_median_s"] = winner >= 0 ? nlohmann::json(candidates[winner].median_s) : nlohmann::json();
  j["heuristic_median_s"] =
      heuristic >= 0 && candidates[heuristic].status == "timed" ? nlohmann::json(candidates[heuristic].median_s) : nlohmann::json();
  return j;
}

std::vector<nlohmann::json> spread_candidates(const std::vector<nlohmann::json>& configs, int most) {
  if (most < 1) most = 1;
  if (configs.size() <= std::size_t(most)) return configs;
  // The registry lists neighbours together (one implementation and team size over every chunk
  // length, then the next): evenly spaced picks span all of it rather than its first corner.
  std::vector<nlohmann::json> out{configs.front()};
  const std::size_t rest = configs.size() - 1, want = std::size_t(most) - 1;
  for (std::size_t k = 0; k < want; ++k) out.push_back(configs[1 + (k * rest) / want]);
  return out;
}

bench::SweepCase verification_case(const bench::SweepCase& c) {
  bench::SweepCase v = c;
  auto cap = [&](const char* name, std::int64_t most) {
    if (v.shape.contains(name)) v.shape[name] = std::min(v.shape[name].get<std::int64_t>(), most);
  };
  cap("batch", 1);
  cap("seqlen", kVerifySeqlen);
  if (v.shape.contains("dim")) {
    // Keep dim a multiple of groups (selective_scan's groups must divide dim).
    const std::int64_t groups = v.shape.value("groups", std::int64_t(1));
    const std::int64_t dim = v.shape["dim"].get<std::int64_t>();
    if (dim > kVerifyDim) v.shape["dim"] = std::max<std::int64_t>(groups, kVerifyDim / groups * groups);
  }
  return v;
}

TuneShapeResult tune_case(const bench::SweepCase& c, const TuneOptions& o) {
  const bench::OpBench& bench = bench::find_op_bench(c.op);
  if (!bench.configs) throw std::logic_error(c.op + " has no config registry for tuning");
  if (!o.settings.backend.is_kokkos())
    throw std::invalid_argument("tune times scanlab's kernels: --backend serial, openmp, cuda or auto");
  const BackendKind kind = o.settings.backend.kind;
  bench.costs(c);  // a broken case fails here, naming its problem
  TuneShapeResult r;
  r.case_key = c.key();
  r.bucket = shape_bucket(bench.case_options(c), bench.tensor_specs(c), c.direction != bench::Direction::fwd);
  r.key = tune_key(tune_device_name(kind), to_string(kind), c.op, r.bucket);
  auto configs = spread_candidates(bench.configs(c, kind), o.max_candidates);

  const bench::SweepCase v = verification_case(c);
  r.verify_shape = v.shape;
  io::Case verify{c.op, bench.case_options(v), bench.host_inputs(v, o.settings.seed)};
  const OracleCheck oracle = check_against_oracle(verify, TensorMap{});  // the oracle's outputs and bounds, once

  bench::SweepSettings settings = o.settings;
  if (settings.cache_bytes <= 0) settings.cache_bytes = bench::last_level_cache_bytes(kind);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    TuneCandidate cand;
    cand.config = configs[i];
    cand.heuristic = i == 0;
    ImplRequest request;
    request.config = cand.config;
    try {
      RunResult run = run_case(verify, o.settings.backend, request);
      if (o.tamper) o.tamper(cand.config, run.outputs);
      const auto comparisons = reference::compare_with_bounds(run.outputs, oracle.expected, oracle.bounds);
      for (const auto& cmp : comparisons) cand.worst_error_over_bound = std::max(cand.worst_error_over_bound, cmp.max_ratio);
      if (!reference::all_pass(comparisons)) {
        cand.status = "wrong";
        for (const auto& cmp : comparisons)
          if (!cmp.pass())
            cand.detail += (cand.detail.empty() ? "" : "; ") + cmp.name + ": " +
                           (cmp.problem.empty() ? "error/bound " + std::to_string(cmp.max_ratio) + ", " +
                                                      std::to_string(cmp.non_finite) + " non-finite"
                                                : cmp.problem);
      }
    } catch (const std::exception& e) {
      // A config valid at full size may still be refused on the reduced case: it is not timed.
      cand.status = "unverified";
      cand.detail = e.what();
    }
    if (cand.status.empty()) {
      try {
        settings.impl = cand.config.value("impl", std::string("auto"));
        settings.config = cand.config;
        auto prepared = bench.prepare(c, settings);
        for (int w = 0; w < o.warmups; ++w) prepared->run(w % prepared->buffer_sets);
        const double once = prepared->run(0);
        const int calls = int(std::clamp(std::ceil(o.min_time_s / std::max(once, 1e-9)), 1.0, 10000.0));
        int set = 1;
        for (int rep = 0; rep < o.repetitions; ++rep) {
          double total = 0;
          for (int k = 0; k < calls; ++k) total += prepared->run(set++ % prepared->buffer_sets);
          cand.samples_s.push_back(total / calls);
        }
        cand.median_s = bench::spread_of(cand.samples_s).median;
        cand.status = "timed";
      } catch (const std::exception& e) {
        cand.status = "failed";
        cand.detail = e.what();
      }
    }
    if (o.progress) {
      char line[160];
      if (cand.status == "timed")
        std::snprintf(line, sizeof(line), "%.4g ms", cand.median_s * 1e3);
      else
        std::snprintf(line, sizeof(line), "%s", cand.status.c_str());
      std::fprintf(stderr, "  [%zu/%zu] %s%s  %s\n", i + 1, configs.size(), cand.heuristic ? "(heuristic) " : "",
                   cand.config.dump().c_str(), line);
      if (!cand.detail.empty() && cand.status != "timed") std::fprintf(stderr, "        %s\n", cand.detail.substr(0, 300).c_str());
    }
    r.candidates.push_back(std::move(cand));
  }
  r.heuristic = r.candidates.empty() ? -1 : 0;
  for (std::size_t i = 0; i < r.candidates.size(); ++i)
    if (r.candidates[i].status == "timed" && (r.winner < 0 || r.candidates[i].median_s < r.candidates[r.winner].median_s))
      r.winner = int(i);
  return r;
}

}  // namespace scanlab::cli
