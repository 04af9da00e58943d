// The sweep case shared by selective_scan and state_space_v1 (benchmarks/selective_scan_bench.cpp,
// benchmarks/state_space_v1_bench.cpp): both run the kernels of kernels/selective_scan.hpp
// through their device-level API. Inputs are filled on the device once per buffer set, and each
// timed call is the forward, the backward alone (after an untimed forward that leaves the chunk
// states the backward reads), or both.
//
// Input ranges follow how Mamba layers are initialised: dt in about [1e-3, 0.3] (delta_bias the
// inverse softplus of that range with softplus on), A = -exp(A_log) in [-16, -1], everything
// else uniform in [-1, 1] (the gate in [-3, 3], so silu sees both of its regimes).
#pragma once

#include <Kokkos_Core.hpp>

#include <map>
#include <string>
#include <vector>

#include "device_timer.hpp"
#include "kernels/problem/selective_scan.hpp"
#include "kernels/problem/state_space_v1.hpp"
#include "kernels/selective_scan.hpp"
#include "kernels/selective_scan_config.hpp"
#include "kokkos_case.hpp"

namespace scanlab::bench {
namespace selective_scan_bench {

using kernels::SelectiveScanConfig;
using kernels::SequenceLayout;

inline const std::vector<std::string> kActivations = {"silu", "identity", "gelu_tanh", "gelu_erf"};

inline SelectiveScanProblem selective_scan_problem(const SweepCase& c) {
  SelectiveScanProblem p;
  p.batch = shape_value(c, "batch");
  p.dim = shape_value(c, "dim");
  p.dstate = shape_value(c, "dstate");
  p.seqlen = shape_value(c, "seqlen");
  p.groups = shape_value(c, "groups");
  p.has_z = switch_value(c, "z");
  p.has_D = switch_value(c, "D");
  p.has_delta_bias = switch_value(c, "delta_bias");
  p.delta_softplus = switch_value(c, "softplus");
  p.has_initial_state = switch_value(c, "initial_state");
  p.gate_activation = parse_gate_activation(choice_value(c, "act_fn"));
  p.with_backward = c.direction != Direction::fwd;
  p.validate();
  return p;
}

inline StateSpaceV1Problem state_space_v1_problem(const SweepCase& c) {
  StateSpaceV1Problem p;
  p.batch = shape_value(c, "batch");
  p.seqlen = shape_value(c, "seqlen");
  p.dim = shape_value(c, "dim");
  p.dstate = shape_value(c, "dstate");
  p.has_gate = switch_value(c, "gate");
  p.act_fn = parse_gate_activation(choice_value(c, "act_fn"));
  p.has_initial_state = switch_value(c, "initial_state");
  p.with_backward = c.direction != Direction::fwd;
  p.validate();
  return p;
}

inline InputRanges selective_scan_ranges(bool softplus) {
  return {{"u", {-1, 1}},
          {"delta", softplus ? ValueRange{-1, 1} : ValueRange{1e-3, 0.1}},
          {"delta_bias", softplus ? ValueRange{-6, -2} : ValueRange{0, 0.01}},
          {"A", {-16, -1}},
          {"B", {-1, 1}},
          {"C", {-1, 1}},
          {"D", {-1, 1}},
          {"z", {-3, 3}},
          {"initial_state", {-1, 1}},
          {"dout", {-1, 1}},
          {"dlast_state", {-1, 1}}};
}

inline InputRanges state_space_v1_ranges() {
  return {{"hidden_states", {-1, 1}}, {"dt", {1e-3, 0.1}}, {"A", {-16, -1}},           {"B", {-1, 1}},
          {"C", {-1, 1}},             {"D", {-1, 1}},      {"gate", {-3, 3}},           {"initial_state", {-1, 1}},
          {"dout", {-1, 1}},          {"dfinal_state", {-1, 1}}};
}

// One case on one space: the kernel problem (state_space_v1 runs as its selective_scan), the
// tensor names the op's own files use (for the seeds), and the buffer sets.
template <class Space>
class ScanCase : public PreparedCase {
 public:
  // kernel_problem: what the kernels run; names: kernel view name -> the op's tensor name.
  // config: resolved by the op's own traits (state_space_v1 judges configs on its own problem).
  ScanCase(const SweepCase& c, const SweepSettings& s, const SelectiveScanProblem& kernel_problem, SequenceLayout layout,
           const SelectiveScanConfig& resolved, const InputRanges& ranges,
           const std::map<std::string, std::string>& names, CaseCosts op_costs)
      : problem_(kernel_problem), direction_(c.direction), config_(resolved), timer_(space_) {
    config = config_.to_json();
    costs = op_costs;
    costs.extra_bytes = 0;
    for (Pass pass : {Pass::forward, Pass::backward})
      if (direction_ == Direction::fwdbwd || (direction_ == Direction::fwd) == (pass == Pass::forward))
        costs.extra_bytes += kernels::selective_scan_extra_bytes(problem_, config_, pass);
    workspace_bytes = kernels::selective_scan_workspace_bytes(problem_, config_);

    auto first = kernels::allocate_selective_scan_tensors<Space>(problem_, layout);
    tensor_bytes = 0;
    for_each_view(first, [&](const char*, const View& v) { tensor_bytes += std::int64_t(v.span()) * 4; });
    buffer_sets = buffer_sets_for(tensor_bytes + workspace_bytes, s.cache_bytes, s.max_buffer_sets);
    for (int set = 0; set < buffer_sets; ++set) {
      tensors_.push_back(set == 0 ? first : kernels::allocate_selective_scan_tensors<Space>(problem_, layout));
      workspaces_.push_back(kernels::allocate_selective_scan_workspace<Space>(problem_, config_));
      for_each_view(tensors_.back(), [&](const char* name, const View& v) {
        auto it = names.find(name);
        if (it != names.end()) fill_input(space_, v, ranges, s.seed, set, it->second);
      });
    }
    // The backward alone reads what a forward left in the workspace.
    if (direction_ == Direction::bwd)
      for (int set = 0; set < buffer_sets; ++set)
        kernels::selective_scan_forward<Space>(problem_, config_, tensors_[set], workspaces_[set], space_);
    space_.fence();
  }

  double run(int set) override {
    timer_.start();
    if (direction_ != Direction::bwd)
      kernels::selective_scan_forward<Space>(problem_, config_, tensors_[set], workspaces_[set], space_);
    if (direction_ != Direction::fwd)
      kernels::selective_scan_backward<Space>(problem_, config_, tensors_[set], workspaces_[set], space_);
    return timer_.stop();
  }

 private:
  using Tensors = kernels::SelectiveScanTensors<Space>;
  using View = typename Tensors::View;
  template <class F>
  static void for_each_view(const Tensors& t, F&& f) {
    const std::pair<const char*, const View*> views[] = {
        {"u", &t.u},       {"delta", &t.delta},       {"A", &t.A},
        {"B", &t.B},       {"C", &t.C},               {"D", &t.D},
        {"z", &t.z},       {"delta_bias", &t.delta_bias}, {"initial_state", &t.initial_state},
        {"out", &t.out},   {"last_state", &t.last_state}, {"dout", &t.dout},
        {"dlast_state", &t.dlast_state}, {"du", &t.du},   {"ddelta", &t.ddelta},
        {"dA", &t.dA},     {"dB", &t.dB},             {"dC", &t.dC},
        {"dD", &t.dD},     {"dz", &t.dz},             {"ddelta_bias", &t.ddelta_bias},
        {"dinitial_state", &t.dinitial_state}};
    for (const auto& [name, view] : views) f(name, *view);
  }

  Space space_;
  SelectiveScanProblem problem_;
  Direction direction_;
  SelectiveScanConfig config_;
  std::vector<Tensors> tensors_;
  std::vector<kernels::SelectiveScanWorkspace<Space>> workspaces_;
  IntervalTimer<Space> timer_;
};

}  // namespace selective_scan_bench
}  // namespace scanlab::bench
