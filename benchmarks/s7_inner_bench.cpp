// Sweeps of s7_inner (lrnnx's s7_inner_fn, the fused S7 layer) through the device-level API of
// kernels/s7_inner.hpp: every buffer set is one s7_inner_allocate (tensors and workspace), filled
// with random inputs on the device; each timed call is the forward, the backward alone (after an
// untimed forward that leaves the activations the backward consumes), or both. Sizes are given
// as (b, L, Dm, N) = (batch, seqlen, dim, dstate).
//
// Input ranges: weights uniform in +-1/sqrt(Dm) (PyTorch's default Linear initialisation), so
// the projections stay O(1); hidden_states, base_params and dout uniform in [-1, 1].
#include <Kokkos_Core.hpp>

#include <cmath>

#include "device_timer.hpp"
#include "kernels/problem/s7_inner.hpp"
#include "kernels/s7_config.hpp"
#include "kernels/s7_inner.hpp"
#include "kokkos_case.hpp"

namespace scanlab::bench {
namespace s7_inner_bench {

S7InnerProblem s7_inner_problem(const SweepCase& c) {
  S7InnerProblem p;
  p.batch = shape_value(c, "batch");
  p.seqlen = shape_value(c, "seqlen");
  p.dim = shape_value(c, "dim");
  p.dstate = shape_value(c, "dstate");
  p.with_backward = c.direction != Direction::fwd;
  p.validate();
  return p;
}

InputRanges s7_inner_ranges(const S7InnerProblem& p) {
  const double w = 1.0 / std::sqrt(double(p.dim));
  return {{"hidden_states", {-1, 1}}, {"in_proj_weight", {-w, w}}, {"x_proj_weight", {-w, w}},
          {"gate_proj_weight", {-w, w}}, {"base_params", {-1, 1}},  {"dout", {-1, 1}}};
}

template <class Space>
class S7InnerCase : public PreparedCase {
 public:
  S7InnerCase(const SweepCase& c, const SweepSettings& s)
      : problem_(s7_inner_problem(c)), direction_(c.direction), timer_(space_) {
    config_ = choose_config<cli::OpTraits<S7InnerProblem>>(problem_, s);
    config = config_.to_json();
    costs = direction_costs(problem_, direction_);
    const InputRanges ranges = s7_inner_ranges(problem_);
    sets_.push_back(kernels::s7_inner_allocate<Space>(problem_, config_));
    tensor_bytes = sets_.front().tensor_bytes();
    workspace_bytes = sets_.front().workspace.bytes();
    buffer_sets = buffer_sets_for(tensor_bytes + workspace_bytes, s.cache_bytes, s.max_buffer_sets);
    for (int set = 1; set < buffer_sets; ++set) sets_.push_back(kernels::s7_inner_allocate<Space>(problem_, config_));
    for (int set = 0; set < buffer_sets; ++set) {
      auto& t = sets_[set];
      fill_input(space_, t.hidden_states, ranges, s.seed, set, "hidden_states");
      fill_input(space_, t.in_proj_weight, ranges, s.seed, set, "in_proj_weight");
      fill_input(space_, t.x_proj_weight, ranges, s.seed, set, "x_proj_weight");
      fill_input(space_, t.gate_proj_weight, ranges, s.seed, set, "gate_proj_weight");
      fill_input(space_, t.base_params, ranges, s.seed, set, "base_params");
      fill_input(space_, t.dout, ranges, s.seed, set, "dout");
      if (direction_ == Direction::bwd) kernels::s7_inner_forward<Space>(problem_, config_, t, space_);
    }
    space_.fence();
  }

  double run(int set) override {
    timer_.start();
    if (direction_ != Direction::bwd) kernels::s7_inner_forward<Space>(problem_, config_, sets_[set], space_);
    if (direction_ != Direction::fwd) kernels::s7_inner_backward<Space>(problem_, config_, sets_[set], space_);
    return timer_.stop();
  }

 private:
  Space space_;
  S7InnerProblem problem_;
  Direction direction_;
  kernels::S7InnerConfig config_;
  std::vector<kernels::S7InnerTensors<Space>> sets_;
  IntervalTimer<Space> timer_;
};

}  // namespace s7_inner_bench

void add_s7_inner_benches() {
  using namespace s7_inner_bench;
  OpBench inner;
  inner.op = "s7_inner";
  inner.shape_axes = {{"batch", "8", "batch size b"},
                      {"seqlen", "4096", "sequence length L"},
                      {"dim", "256", "model width Dm"},
                      {"dstate", "16", "states N"}};
  inner.costs = [](const SweepCase& c) { return direction_costs(s7_inner_problem(c), c.direction); };
  inner.prepare = [](const SweepCase& c, const SweepSettings& s) {
    return make_kokkos_case<S7InnerCase>(s.backend.kind, c, s);
  };
  inner.case_options = [](const SweepCase& c) { return s7_inner_problem(c).options_json(); };
  inner.tensor_specs = [](const SweepCase& c) { return s7_inner_problem(c).tensors(); };
  inner.configs = registry_configs<cli::OpTraits<S7InnerProblem>>(s7_inner_problem);
  inner.host_inputs = [](const SweepCase& c, std::uint64_t seed) {
    const auto p = s7_inner_problem(c);
    return host_inputs(p.tensors(), s7_inner_ranges(p), seed, 0);
  };
  register_op_bench(inner);
}

}  // namespace scanlab::bench
