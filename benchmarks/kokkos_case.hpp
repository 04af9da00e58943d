// What every op's sweep case shares on a Kokkos backend: the dispatch from a BackendKind to the
// case template instantiated on that space, the per-tensor seeds and value ranges of the random
// inputs, and the filling of device views and host tensors with the same values (so an exec
// implementation timed on a case directory sees exactly the inputs scanlab's kernels saw).
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "cli/case_runner.hpp"
#include "kernels/problem/common.hpp"
#include "random_fill.hpp"
#include "sweep.hpp"

namespace scanlab::bench {

// Value range of one input tensor; inputs not listed are refused (every input needs a range).
struct ValueRange {
  double lo = -1, hi = 1;
};
using InputRanges = std::map<std::string, ValueRange>;

// A seed per (sweep seed, buffer set, tensor name): FNV-1a of the name mixed into the seed.
inline std::uint64_t tensor_seed(std::uint64_t seed, int buffer_set, const std::string& name) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
  return splitmix64(seed + 0x1000193ull * std::uint64_t(buffer_set)) ^ h;
}

inline const ValueRange& range_of(const InputRanges& ranges, const std::string& name) {
  auto it = ranges.find(name);
  if (it == ranges.end()) throw std::logic_error("no value range for input tensor '" + name + "'");
  return it->second;
}

// Fills a device view (any rank, contiguous) with the tensor's random values.
template <class Space, class View>
void fill_input(const Space& space, const View& view, const InputRanges& ranges, std::uint64_t seed, int buffer_set,
                const std::string& name) {
  if (view.span() == 0) return;
  const ValueRange& r = range_of(ranges, name);
  fill_uniform(space, view, tensor_seed(seed, buffer_set, name), r.lo, r.hi);
}

// The host tensors (inputs and grad inputs of the specs) with the same values fill_input gives.
inline TensorMap host_inputs(const std::vector<TensorSpec>& specs, const InputRanges& ranges, std::uint64_t seed,
                             int buffer_set) {
  TensorMap out;
  for (const auto& spec : specs) {
    if (spec.role != TensorRole::input && spec.role != TensorRole::grad_input) continue;
    const ValueRange& r = range_of(ranges, spec.name);
    Tensor t(spec.shape);
    const std::uint64_t s = tensor_seed(seed, buffer_set, spec.name);
    for (std::int64_t i = 0; i < t.numel(); ++i)
      t[i] = double(hashed_uniform(s, std::uint64_t(i), float(r.lo), float(r.hi)));
    out.emplace(spec.name, std::move(t));
  }
  return out;
}

// CaseT<Space> on the backend's space; CaseT derives from PreparedCase.
template <template <class> class CaseT, class... Args>
std::unique_ptr<PreparedCase> make_kokkos_case(BackendKind kind, Args&&... args) {
  switch (kind) {
#if defined(KOKKOS_ENABLE_SERIAL)
    case BackendKind::serial: return std::make_unique<CaseT<Kokkos::Serial>>(std::forward<Args>(args)...);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    case BackendKind::openmp: return std::make_unique<CaseT<Kokkos::OpenMP>>(std::forward<Args>(args)...);
#endif
#if defined(KOKKOS_ENABLE_CUDA)
    case BackendKind::cuda: return std::make_unique<CaseT<Kokkos::Cuda>>(std::forward<Args>(args)...);
#endif
    default:
      throw std::invalid_argument("sweeps run on serial, openmp or cuda (compiled in), or on exec:CMD; not '" +
                                  to_string(kind) + "'");
  }
}

// Reads the sweep case's axis values with clear errors (the CLI fills every axis an op names).
inline std::int64_t shape_value(const SweepCase& c, const char* name) {
  if (!c.shape.contains(name)) throw std::invalid_argument(c.op + " case lacks the size axis '" + std::string(name) + "'");
  return c.shape.at(name).get<std::int64_t>();
}
inline bool switch_value(const SweepCase& c, const char* name) {
  if (!c.options.contains(name)) throw std::invalid_argument(c.op + " case lacks the option '" + std::string(name) + "'");
  return c.options.at(name).get<bool>();
}
inline std::string choice_value(const SweepCase& c, const char* name) {
  if (!c.options.contains(name)) throw std::invalid_argument(c.op + " case lacks the option '" + std::string(name) + "'");
  return c.options.at(name).get<std::string>();
}

// Costs of a direction from a descriptor with bytes_moved/flops/sfu_ops(Pass).
template <class Problem>
CaseCosts direction_costs(const Problem& p, Direction direction) {
  CaseCosts c;
  for (Pass pass : {Pass::forward, Pass::backward}) {
    const bool counted = direction == Direction::fwdbwd || (direction == Direction::fwd) == (pass == Pass::forward);
    if (!counted) continue;
    c.bytes_moved += p.bytes_moved(pass);
    c.flops += p.flops(pass);
    c.sfu_ops += p.sfu_ops(pass);
  }
  return c;
}

// The config a case runs, resolved as every verb resolves --impl (cli/case_runner.hpp's
// resolve_config: "auto" is the tuning cache's config when there is one, else the op's heuristic;
// NAME is the heuristic with that implementation), then --config's fields laid over it; refused
// with the config's own reasons when it cannot run the problem.
template <class Traits>
typename Traits::Config choose_config(const typename Traits::Problem& p, const SweepSettings& s) {
  cli::ImplRequest request;
  request.impl = s.impl;
  request.use_tuning_cache = s.use_tuning_cache;
  const auto chosen = cli::resolve_config<Traits>(p, s.backend.kind, request);
  if (!s.config.is_object() || s.config.empty()) return chosen;
  return cli::lay_config_over<Traits>(p, s.backend.kind, chosen, s.config);
}

// OpBench::configs for an op whose problem comes from problem_of(case).
template <class Traits, class ProblemOf>
std::function<std::vector<nlohmann::json>(const SweepCase&, BackendKind)> registry_configs(ProblemOf problem_of) {
  return [problem_of](const SweepCase& c, BackendKind kind) {
    const auto p = problem_of(c);
    std::vector<nlohmann::json> out{Traits::heuristic(p, kind).to_json()};
    for (const auto& config : Traits::candidates(p, kind)) {
      nlohmann::json j = config.to_json();
      if (Traits::invalid_reason(config, p, kind).empty() && std::find(out.begin(), out.end(), j) == out.end())
        out.push_back(j);
    }
    return out;
  };
}

}  // namespace scanlab::bench
