// Benchmark sweeps (DESIGN.md, measurement model): every case of a sweep is one Google Benchmark
// run (UseManualTime; each call timed by benchmarks/device_timer.hpp; repetitions reported as
// median and interquartile range), on random inputs rotated among enough buffer sets to exceed
// the last-level cache. The sweep JSON is Google Benchmark's own JSON ("context", "benchmarks")
// plus a "scanlab" context block and one "cases" entry per case with the descriptor's costs, the
// achieved rates, the fraction of each measured ceiling and which binds (reports/README.md has
// the schema). Ops plug in through register_op_bench from their benchmarks/<op>_bench.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "axes.hpp"
#include "ceilings.hpp"
#include "kernels/backend.hpp"
#include "kernels/problem/common.hpp"
#include "kernels/tensor.hpp"
#include "statistics.hpp"

namespace scanlab::bench {

// A size axis of an op ("batch", "dim", ...) with its default list.
struct ShapeAxis {
  std::string name, default_text, help;
};
// An option axis: a switch ("z", flag --z, values on/off) or a choice ("act_fn", --act-fn).
struct OptionAxis {
  enum class Kind { toggle, choice };
  std::string name, flag;
  Kind kind = Kind::toggle;
  std::string default_text, help;
  std::vector<std::string> choices;
};

// What the descriptor says a case costs, for the case's direction (fwdbwd: forward + backward).
struct CaseCosts {
  double bytes_moved = 0, flops = 0, sfu_ops = 0;
  double extra_bytes = -1;  // modelled traffic beyond the compulsory bytes (-1: not modelled)
};

struct SweepSettings {
  Backend backend;
  std::string impl = "auto";                         // auto (tuning cache, else heuristic) or an implementation name
  bool use_tuning_cache = true;                      // false: auto is the heuristic (--no-cache)
  nlohmann::json config = nlohmann::json::object();  // fields laid over the chosen config
  std::uint64_t seed = 20261129;
  std::int64_t cache_bytes = 0;  // rotate inputs until their bytes exceed 4x this
  int max_buffer_sets = 8;
};

// A case ready to time: its buffer sets allocated and filled with random data on the device,
// its config chosen and checked.
class PreparedCase {
 public:
  virtual ~PreparedCase() = default;
  // Runs the case's direction once on one buffer set; returns the seconds it took on the device.
  virtual double run(int buffer_set) = 0;

  CaseCosts costs;
  std::int64_t tensor_bytes = 0;     // inputs, outputs and gradients of one buffer set
  std::int64_t workspace_bytes = 0;  // the op's own device workspace (per set)
  int buffer_sets = 1;
  nlohmann::json config;  // the config's to_json()
  std::string timer;      // how run() times, when it differs from the sweep's timer (exec)
};

struct OpBench {
  std::string op;
  std::vector<ShapeAxis> shape_axes;
  std::vector<OptionAxis> option_axes;
  // Validates the case's problem (throws ProblemError / invalid_argument) and returns its costs.
  std::function<CaseCosts(const SweepCase&)> costs;
  // Allocates and fills the case on a Kokkos backend.
  std::function<std::unique_ptr<PreparedCase>(const SweepCase&, const SweepSettings&)> prepare;
  // The case as a case directory's contents (case.json's object and the input tensors, with the
  // values prepare() puts on the device for buffer set 0): what an exec implementation is given.
  std::function<nlohmann::json(const SweepCase&)> case_options;
  std::function<TensorMap(const SweepCase&, std::uint64_t seed)> host_inputs;
  std::function<std::vector<TensorSpec>(const SweepCase&)> tensor_specs;  // the problem's tensors()
  // The config registry seen from a case on a Kokkos backend (`scanlab tune`): the heuristic
  // config first, then the candidates that are valid for the case and differ from it (to_json()).
  std::function<std::vector<nlohmann::json>(const SweepCase&, BackendKind)> configs;
};

// Each benchmarks/<op>_bench.cpp defines add_<op>_benches(), which registers its ops; the
// registry calls them all on first use (benchmarks/ is a static library, so a self-registering
// static initialiser there would be dropped by the linker).
void register_op_bench(OpBench bench);
void add_selective_scan_benches();
void add_state_space_v1_benches();
void add_s7_scan_benches();
void add_s7_inner_benches();
const OpBench& find_op_bench(const std::string& op);  // throws, naming the ops that exist
std::vector<std::string> op_bench_names();

// How many buffer sets of set_bytes rotate past a cache of cache_bytes: enough that all of them
// together exceed 4x the cache (1 when one set alone does), at most max_sets.
int buffer_sets_for(std::int64_t set_bytes, std::int64_t cache_bytes, int max_sets);

struct SweepRequest {
  std::string op;
  std::vector<Direction> directions;
  std::vector<AxisValues> axes;
  Shard shard;
  SweepSettings settings;
  int repetitions = 10;      // Google Benchmark repetitions (samples of the median and IQR)
  double min_time_s = 0.05;  // calls per repetition: enough to last this long (after calibration)
  int iterations = 0;        // calls per repetition; 0: from min_time_s
  int warmups = 2;           // untimed calls before calibration
  nlohmann::json ceilings;   // a ceilings JSON (measured in this run, or loaded)
  std::string ceilings_source;
  std::string command_line;
  bool progress = true;  // one line per case on stderr
  std::string implementation = "scanlab";
  // Prepares a case for an exec:CMD backend. The CLI sets it (it owns the exec protocol,
  // cli/case_runner.hpp); exec sweeps without it are refused.
  std::function<std::unique_ptr<PreparedCase>(const SweepCase&, const SweepSettings&)> prepare_exec;
  // Called after every case with the sweep so far (scanlab.complete = false), so an interrupted
  // sweep leaves what it measured on disk.
  std::function<void(const nlohmann::json& partial)> checkpoint;
  // A partial result of this same sweep (a checkpoint): its cases are kept as they are and not
  // run again (--resume). Google Benchmark's raw "benchmarks" array lists only the cases run now.
  nlohmann::json resume_from;
  nlohmann::json launch;  // the rank's launcher, rank and device binding (null: one process)
};

// The sweep's cases after sharding, each validated against its problem descriptor first (every
// broken case is listed before anything runs).
std::vector<SweepCase> sweep_cases(const SweepRequest& request);

// Runs the sweep. A case that fails to prepare or run stops the sweep: the returned JSON then
// holds the cases done so far, scanlab.complete = false and scanlab.error = the message.
nlohmann::json run_sweep(const SweepRequest& request);

// The per-case entry of a sweep JSON from its parts (pure; tests recompute it).
//   time_s: the spread of the per-repetition mean call times;
//   ceilings: the ceilings JSON, or null (then no fractions and no binding ceiling).
nlohmann::json case_entry(const SweepCase& c, const std::string& implementation, const std::string& backend,
                          const Spread& time_s, const std::vector<double>& samples_s, const CaseCosts& costs,
                          const nlohmann::json& ceilings);

}  // namespace scanlab::bench
