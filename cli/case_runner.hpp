// Runs one case of an op on one backend: the float64 oracle, a Kokkos kernel with a config, or an
// external implementation through the exec protocol. `scanlab run`, `check`, `replay`, the
// properties and the corpus test all run cases through here, so every role sees the same
// --impl resolution and the same exec protocol.
//
// The exec protocol (DESIGN.md), as implemented by run_exec():
//   1. scanlab writes the case directory CASE_DIR: case.json (op and options) and every input as
//      NAME.npy in float64, C order (dout and dlast_state / dfinal_state too when the backward
//      is wanted). float64, so that the precision is the implementation's own choice.
//   2. it runs `/bin/sh -c 'CMD "$@"' sh CASE_DIR OUT_DIR` (CMD is split by the shell, so it may
//      carry arguments and environment assignments); OUT_DIR exists and is empty. The command's
//      stdout and stderr are captured; a non-zero exit (or a signal) is a failure whose message
//      carries the last lines of that output.
//   3. it reads OUT_DIR/NAME.npy (float32 or float64) for every output and, with dout, every
//      gradient "d" + input name. A missing file is an error naming the tensor and its shape.
//   4. timing.json in OUT_DIR, if written, reports the implementation's own kernel time so that
//      process start-up is not counted: {"seconds": 0.0123} (required key: the time of what was
//      asked, forward plus backward when dout was given), optionally "forward_seconds" and
//      "backward_seconds". Any other key is ignored.
// Temporary directories live under $TMPDIR and are removed afterwards unless
// SCANLAB_KEEP_EXEC_DIRS is set.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/case_dir.hpp"
#include "op_traits.hpp"

namespace CLI {
class App;
}

namespace scanlab::cli {

// Parses a verb's command line with CLI11: returns -1 to go on, else the exit code to return
// (0 after --help, which prints the help; 2 for a usage error, which prints the error and a hint).
int parse_command_line(CLI::App& app, int argc, char** argv);

// --backend's help text, shared by every verb that runs an op.
std::string backend_help();
// --impl's help text.
std::string impl_help();

// What --impl (and a saved config.json) ask for.
struct ImplRequest {
  std::string impl = "auto";             // "auto" or an implementation name
  std::optional<nlohmann::json> config;  // a whole config (config.json); wins over impl
  bool use_tuning_cache = true;          // false: `auto` means the heuristic (tune's --no-cache)
};

// The single hook through which `--impl auto` consults tuning results (issue 6's cache): set
// TunedConfig<Problem>::lookup and `auto` uses what it returns, when that config is valid, before
// falling back to the op's heuristic config. Unset, `auto` is the heuristic.
template <class Problem>
struct TunedConfig {
  using Config = typename OpTraits<Problem>::Config;
  static inline std::function<std::optional<Config>(const Problem&, BackendKind)> lookup;
};

// The heuristic config with a named implementation: the op's own rule for it where the op has one
// (OpTraits::heuristic_for_impl), else the heuristic with only its implementation changed.
template <class T>
auto heuristic_with_impl(const typename T::Problem& p, BackendKind kind, const std::string& impl, int)
    -> decltype(T::heuristic_for_impl(p, kind, impl)) {
  return T::heuristic_for_impl(p, kind, impl);
}
template <class T>
typename T::Config heuristic_with_impl(const typename T::Problem& p, BackendKind kind, const std::string& impl, long) {
  typename T::Config c = T::heuristic(p, kind);
  T::set_impl(c, impl);
  return c;
}

// The config a kernel backend runs with:
//   config given: that config (it must be valid for the problem and backend);
//   "auto": the tuning cache's config when there is one, else the heuristic config;
//   NAME: the heuristic rule for implementation NAME (heuristic_with_impl).
// An unknown implementation or an invalid config throws std::invalid_argument with the reason.
template <class T>
typename T::Config resolve_config(const typename T::Problem& p, BackendKind kind, const ImplRequest& request) {
  using Config = typename T::Config;
  auto check_valid = [&](const Config& c, const std::string& how) {
    const std::string reason = T::invalid_reason(c, p, kind);
    if (!reason.empty())
      throw std::invalid_argument(std::string(T::name) + ": " + how + " " + c.to_json().dump() + " cannot run this case on " +
                                  to_string(kind) + ": " + reason);
    return c;
  };
  if (request.config) return check_valid(config_from_json<T>(*request.config), "config");
  if (request.impl.empty() || request.impl == "auto") {
    if (request.use_tuning_cache && TunedConfig<typename T::Problem>::lookup) {
      if (auto tuned = TunedConfig<typename T::Problem>::lookup(p, kind))
        if (T::invalid_reason(*tuned, p, kind).empty()) return *tuned;
    }
    return check_valid(T::heuristic(p, kind), "the heuristic config");
  }
  require_known_impl<T>(request.impl, "--impl", {"auto"});
  return check_valid(heuristic_with_impl<T>(p, kind, request.impl, 0),
                     "--impl " + request.impl + " (the heuristic config with impl " + request.impl + ")");
}

// `base` with `fields` laid over it (a --config patch), checked as a given config is; throws
// std::invalid_argument with the reason when the result cannot run the problem.
template <class T>
typename T::Config lay_config_over(const typename T::Problem& p, BackendKind kind, const typename T::Config& base,
                                   const nlohmann::json& fields) {
  nlohmann::json patched = base.to_json();
  patched.update(fields);
  ImplRequest request;
  request.config = patched;
  return resolve_config<T>(p, kind, request);
}

// What one run produced.
struct RunResult {
  TensorMap outputs;                      // outputs and, with dout, gradients
  nlohmann::json config;                  // the kernel config used (null for reference and exec)
  double wall_seconds = 0;                // the whole call, exec start-up included
  std::optional<double> reported_seconds;  // exec: timing.json's "seconds"
  std::optional<double> reported_forward_seconds, reported_backward_seconds;
};

// An exec implementation's exit status 3: it has no equivalent of the case (an option it lacks).
// `check` skips such cases and counts them; every other verb reports it as the error it is.
inline constexpr int kExecUnsupportedStatus = 3;
struct ExecUnsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs the exec protocol above for one case. `expected` lists the tensors the implementation must
// write (the problem's outputs and gradients). Throws ExecUnsupported on exit status 3 and
// std::runtime_error on any other protocol failure.
RunResult run_exec(const std::string& command, const io::Case& c, const std::vector<TensorSpec>& expected);

// The tensors an implementation must produce for a problem: outputs, and gradients with dout.
std::vector<TensorSpec> expected_outputs(const std::vector<TensorSpec>& specs);

// Typed run of a problem whose inputs (dout and the state cotangent included) are in `inputs`.
// `config` is used by the Kokkos backends only; pass nullptr to resolve `request`.
template <class T>
RunResult run_problem(const typename T::Problem& p, const TensorMap& inputs, const Backend& backend,
                      const ImplRequest& request = {}) {
  RunResult r;
  const auto start = std::chrono::steady_clock::now();
  switch (backend.kind) {
    case BackendKind::reference:
      r.outputs = T::reference(p, inputs);
      break;
    case BackendKind::exec: {
      io::Case c{T::name, p.options_json(), inputs};
      r = run_exec(backend.command, c, expected_outputs(p.tensors()));
      break;
    }
    default: {
      const auto config = resolve_config<T>(p, backend.kind, request);
      r.config = config.to_json();
      r.outputs = T::run(p, inputs, backend.kind, config);
    }
  }
  if (backend.kind != BackendKind::exec)
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// Runs a case directory's content: its op (c.op) decides the types, its tensors and options make
// the problem (the descriptor checks them and names what is wrong).
RunResult run_case(const io::Case& c, const Backend& backend, const ImplRequest& request = {});

// The oracle's outputs and the per-element bounds for a case, and the comparison of `got` with
// them (reference/error_bound.hpp).
struct OracleCheck {
  TensorMap expected, bounds;
  std::vector<reference::TensorComparison> comparisons;
  bool pass() const { return reference::all_pass(comparisons); }
};
OracleCheck check_against_oracle(const io::Case& c, const TensorMap& got);

// Where failing cases are saved: $SCANLAB_FAILURE_DIR, else build/failures under the working
// directory.
std::string failure_root();
// A fresh directory name under failure_root(): PREFIX-YYYYmmdd-HHMMSS-N.
std::string fresh_failure_dir(const std::string& prefix);

// Writes a case directory for a failing (or hand-picked) case: case.json with the options plus
// seed and note, every tensor in float64, config.json when config is not null, and the backend's
// outputs under out-BACKEND/ when given.
void save_case_dir(const std::string& dir, const io::Case& c, const nlohmann::json& config,
                   const TensorMap* got = nullptr, const std::string& got_backend = "");

// Reads DIR/config.json when present.
std::optional<nlohmann::json> read_config_json(const std::string& dir);

// A short name for a backend, usable in a directory name ("openmp", "exec").
std::string backend_dir_name(const Backend& backend);

}  // namespace scanlab::cli
