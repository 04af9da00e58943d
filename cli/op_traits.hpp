// One compile-time dispatch from an op's name to everything scanlab knows about it: its problem
// descriptor, its kernel configuration, the float64 oracle and its error bound, the kernel entry
// point and the implementation registry, and the names of the tensors that carry state across a
// split sequence. The CLI verbs, the case runner, the properties and the sweeps all go through
// visit_op, so adding an op is one OpTraits specialisation here and nothing else.
//
//   visit_op("s7_scan", [&](auto op) {
//     using T = decltype(op);               // OpTraits<S7ScanProblem>
//     typename T::Problem p = T::Problem::from_case(tensors, options);
//     return T::reference(p, tensors);
//   });
//
// Nothing here computes a shape: shapes come from the descriptors (kernels/problem/*.hpp).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../kernels/backend.hpp"
#include "../kernels/problem/s7_inner.hpp"
#include "../kernels/problem/s7_scan.hpp"
#include "../kernels/problem/selective_scan.hpp"
#include "../kernels/problem/state_space_v1.hpp"
#include "../kernels/s7_config.hpp"
#include "../kernels/selective_scan_config.hpp"
#include "../reference/error_bound.hpp"
#include "../reference/s7_inner.hpp"
#include "../reference/s7_scan.hpp"
#include "../reference/selective_scan.hpp"
#include "../reference/state_space_v1.hpp"

namespace scanlab::cli {

// The four ops in the order every listing uses.
inline const std::vector<std::string>& op_names() {
  static const std::vector<std::string> names{"selective_scan", "state_space_v1", "s7_scan", "s7_inner"};
  return names;
}

// A config field the properties set to values beyond the registry's candidates, so that every
// value a user can put in config.json is fuzzed, not only the ones the tuner would time. Values
// that a problem cannot run are dropped through the config's invalid_reason().
struct ConfigAxis {
  std::string field;                 // a key of Config::to_json()
  std::vector<nlohmann::json> values;
  // A compile-time specialisation (a template parameter of the kernel): the properties assert
  // that each of its values was drawn, not only printed with RC_TAG.
  bool specialisation = false;
};

template <class Problem>
struct OpTraits;

// The state plumbing of an op whose problem carries an initial state and a cotangent of its final
// state (the flag `has_state_cotangent` names): loss = <out, dout> + <final, dfinal>. The
// specialisation adds the names of its state output and cotangent tensors.
template <class P, bool P::*kStateCotangentFlag>
struct StatefulOpTraits {
  static constexpr const char* output_cotangent = "dout";
  static constexpr bool has_state = true;
  static constexpr const char* initial_state = "initial_state";
  static void set_backward(P& p, bool on) {
    p.with_backward = on;
    if (!on) p.*kStateCotangentFlag = false;
  }
  static void set_initial_state(P& p, bool on) { p.has_initial_state = on; }
  static void set_state_cotangent(P& p, bool on) { p.*kStateCotangentFlag = on; }
  static bool has_state_cotangent(const P& p) { return p.*kStateCotangentFlag; }
};

// selective_scan: mamba_ssm's selective_scan_fn plus an initial state.
template <>
struct OpTraits<SelectiveScanProblem>
    : StatefulOpTraits<SelectiveScanProblem, &SelectiveScanProblem::has_dlast_state> {
  using Problem = SelectiveScanProblem;
  using Config = kernels::SelectiveScanConfig;
  static constexpr const char* name = "selective_scan";

  static TensorMap reference(const Problem& p, const TensorMap& in) { return reference::selective_scan(p, in); }
  static TensorMap error_bound(const Problem& p, const TensorMap& in) {
    return reference::selective_scan_error_bound(p, in);
  }
  static TensorMap run(const Problem& p, const TensorMap& in, BackendKind kind, const Config& c) {
    return kernels::run_selective_scan(p, in, kind, c);
  }
  static Config heuristic(const Problem& p, BackendKind kind) { return kernels::selective_scan_heuristic_config(p, kind); }
  // The rule for a named implementation (its own team shape and chunk), for --impl NAME.
  static Config heuristic_for_impl(const Problem& p, BackendKind kind, const std::string& impl) {
    return kernels::selective_scan_heuristic_config(p, kind, impl);
  }
  static std::vector<Config> candidates(const Problem& p, BackendKind kind) {
    return kernels::selective_scan_candidate_configs(p, kind);
  }
  static std::string invalid_reason(const Config& c, const Problem& p, BackendKind kind) {
    return c.invalid_reason(p, kind);
  }
  static std::vector<std::string> implementations() { return kernels::selective_scan_implementations(); }
  static std::vector<std::string> config_fields() { return kernels::selective_scan_config_fields(); }
  static std::string impl_of(const Config& c) { return c.impl; }
  static void set_impl(Config& c, const std::string& impl) { c.impl = impl; }
  static std::vector<ConfigAxis> config_axes();

  static constexpr const char* state_output = "last_state";
  static constexpr const char* state_cotangent = "dlast_state";
};

// state_space_v1: the same math under ejkernel's conventions, run by selective_scan's kernels.
template <>
struct OpTraits<StateSpaceV1Problem>
    : StatefulOpTraits<StateSpaceV1Problem, &StateSpaceV1Problem::has_dfinal_state> {
  using Problem = StateSpaceV1Problem;
  using Config = kernels::SelectiveScanConfig;
  static constexpr const char* name = "state_space_v1";

  static TensorMap reference(const Problem& p, const TensorMap& in) { return reference::state_space_v1(p, in); }
  static TensorMap error_bound(const Problem& p, const TensorMap& in) {
    return reference::state_space_v1_error_bound(p, in);
  }
  static TensorMap run(const Problem& p, const TensorMap& in, BackendKind kind, const Config& c) {
    return kernels::run_state_space_v1(p, in, kind, c);
  }
  // Configs are selective_scan's, judged on the selective_scan problem the kernels run.
  static Config heuristic(const Problem& p, BackendKind kind) {
    return kernels::selective_scan_heuristic_config(p.as_selective_scan(), kind);
  }
  static Config heuristic_for_impl(const Problem& p, BackendKind kind, const std::string& impl) {
    return kernels::selective_scan_heuristic_config(p.as_selective_scan(), kind, impl);
  }
  static std::vector<Config> candidates(const Problem& p, BackendKind kind) {
    return kernels::selective_scan_candidate_configs(p.as_selective_scan(), kind);
  }
  static std::string invalid_reason(const Config& c, const Problem& p, BackendKind kind) {
    return c.invalid_reason(p.as_selective_scan(), kind);
  }
  static std::vector<std::string> implementations() { return kernels::selective_scan_implementations(); }
  static std::vector<std::string> config_fields() { return kernels::selective_scan_config_fields(); }
  static std::string impl_of(const Config& c) { return c.impl; }
  static void set_impl(Config& c, const std::string& impl) { c.impl = impl; }
  static std::vector<ConfigAxis> config_axes() { return OpTraits<SelectiveScanProblem>::config_axes(); }

  static constexpr const char* state_output = "final_state";
  static constexpr const char* state_cotangent = "dfinal_state";
};

// s7_scan: lrnnx's s7_scan_fn plus an initial state.
template <>
struct OpTraits<S7ScanProblem> : StatefulOpTraits<S7ScanProblem, &S7ScanProblem::has_dlast_state> {
  using Problem = S7ScanProblem;
  using Config = kernels::S7ScanConfig;
  static constexpr const char* name = "s7_scan";

  static TensorMap reference(const Problem& p, const TensorMap& in) { return reference::s7_scan(p, in); }
  static TensorMap error_bound(const Problem& p, const TensorMap& in) { return reference::s7_scan_error_bound(p, in); }
  static TensorMap run(const Problem& p, const TensorMap& in, BackendKind kind, const Config& c) {
    return kernels::run_s7_scan(p, in, kind, c);
  }
  static Config heuristic(const Problem& p, BackendKind kind) { return kernels::s7_scan_heuristic_config(p, kind); }
  static std::vector<Config> candidates(const Problem& p, BackendKind kind) {
    return kernels::s7_scan_candidate_configs(p, kind);
  }
  static std::string invalid_reason(const Config& c, const Problem& p, BackendKind kind) {
    return c.invalid_reason(p, kind);
  }
  static std::vector<std::string> implementations() { return kernels::s7_scan_implementations(); }
  static std::vector<std::string> config_fields() { return kernels::s7_scan_config_fields(); }
  static std::string impl_of(const Config& c) { return c.impl; }
  static void set_impl(Config& c, const std::string& impl) { c.impl = impl; }
  static std::vector<ConfigAxis> config_axes();

  static constexpr const char* state_output = "last_state";
  static constexpr const char* state_cotangent = "dlast_state";
};

// s7_inner: lrnnx's s7_inner_fn, the whole S7 layer. No state crosses its boundary.
template <>
struct OpTraits<S7InnerProblem> {
  using Problem = S7InnerProblem;
  using Config = kernels::S7InnerConfig;
  static constexpr const char* name = "s7_inner";

  static TensorMap reference(const Problem& p, const TensorMap& in) { return reference::s7_inner(p, in); }
  static TensorMap error_bound(const Problem& p, const TensorMap& in) { return reference::s7_inner_error_bound(p, in); }
  static TensorMap run(const Problem& p, const TensorMap& in, BackendKind kind, const Config& c) {
    return kernels::run_s7_inner(p, in, kind, c);
  }
  static Config heuristic(const Problem& p, BackendKind kind) { return kernels::s7_inner_heuristic_config(p, kind); }
  static std::vector<Config> candidates(const Problem& p, BackendKind kind) {
    return kernels::s7_inner_candidate_configs(p, kind);
  }
  static std::string invalid_reason(const Config& c, const Problem& p, BackendKind kind) {
    return c.invalid_reason(p, kind);
  }
  static std::vector<std::string> implementations() { return kernels::s7_inner_implementations(); }
  static std::vector<std::string> config_fields() { return kernels::s7_inner_config_fields(); }
  static std::string impl_of(const Config& c) { return c.impl(); }
  static void set_impl(Config& c, const std::string& impl) { c.scan.impl = impl; }
  static std::vector<ConfigAxis> config_axes();

  static constexpr const char* output_cotangent = "dout";
  static constexpr bool has_state = false;
  static constexpr const char* initial_state = "";
  static constexpr const char* state_output = "";
  static constexpr const char* state_cotangent = "";
  static void set_backward(Problem& p, bool on) { p.with_backward = on; }
  static void set_initial_state(Problem&, bool) {}
  static void set_state_cotangent(Problem&, bool) {}
  static bool has_state_cotangent(const Problem&) { return false; }
};

[[noreturn]] void throw_unknown_op(const std::string& op);

// Calls f(OpTraits<Problem>{}) for the op named `op` and returns what it returns (every branch
// must return the same type). An unknown name throws std::invalid_argument listing the four ops.
template <class F>
auto visit_op(const std::string& op, F&& f) {
  if (op == "selective_scan") return f(OpTraits<SelectiveScanProblem>{});
  if (op == "state_space_v1") return f(OpTraits<StateSpaceV1Problem>{});
  if (op == "s7_scan") return f(OpTraits<S7ScanProblem>{});
  if (op == "s7_inner") return f(OpTraits<S7InnerProblem>{});
  throw_unknown_op(op);
}

// Throws std::invalid_argument unless `impl` names one of the op's implementations or one of
// `also_accepted` (words like auto that the caller handles); the message names the op, what was
// being read (`what`) and every name it would have taken.
template <class T>
void require_known_impl(const std::string& impl, const std::string& what,
                        const std::vector<std::string>& also_accepted = {}) {
  std::vector<std::string> names = also_accepted;
  for (const auto& i : T::implementations()) names.push_back(i);
  std::string list;
  for (const auto& name : names) {
    if (name == impl) return;
    list += (list.empty() ? "" : ", ") + name;
  }
  throw std::invalid_argument(std::string(T::name) + ": " + what + ": unknown implementation '" + impl +
                              "' (one of: " + list + ")");
}

// Reads a config from JSON for an op (config.json of a saved case, a tuning cache entry), checking
// that its implementation exists; the error names the op and lists its implementations.
template <class T>
typename T::Config config_from_json(const nlohmann::json& j) {
  typename T::Config c = T::Config::from_json(j);
  require_known_impl<T>(T::impl_of(c), "config");
  return c;
}

}  // namespace scanlab::cli
