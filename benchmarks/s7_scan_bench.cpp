// Sweeps of s7_scan (lrnnx's s7_scan_fn plus an initial state) through the device-level API of
// kernels/s7_scan.hpp: every buffer set is one s7_scan_allocate (tensors and workspace), filled
// with random inputs on the device; each timed call is the forward, the backward alone (after an
// untimed forward that leaves the states X the backward consumes), or both.
//
// Input ranges: A uniform in [-2, 2] (so A_bar = 1 - 1/(A^2 + 0.5) covers (-1, 0.89], zero at
// |A| = 1/sqrt(2)), bias small, everything else uniform in [-1, 1].
#include <Kokkos_Core.hpp>

#include "device_timer.hpp"
#include "kernels/problem/s7_scan.hpp"
#include "kernels/s7_config.hpp"
#include "kernels/s7_scan.hpp"
#include "kokkos_case.hpp"

namespace scanlab::bench {
namespace s7_scan_bench {

using kernels::S7ScanConfig;

S7ScanProblem s7_scan_problem(const SweepCase& c) {
  S7ScanProblem p;
  p.batch = shape_value(c, "batch");
  p.dim = shape_value(c, "dim");
  p.dstate = shape_value(c, "dstate");
  p.seqlen = shape_value(c, "seqlen");
  p.has_bias = switch_value(c, "bias");
  p.has_initial_state = switch_value(c, "initial_state");
  p.with_backward = c.direction != Direction::fwd;
  p.validate();
  return p;
}

InputRanges s7_scan_ranges() {
  return {{"u", {-1, 1}},    {"A", {-2, 2}},       {"bias", {-0.1, 0.1}},         {"B", {-1, 1}},
          {"C", {-1, 1}},    {"initial_state", {-1, 1}}, {"dout", {-1, 1}}, {"dlast_state", {-1, 1}}};
}

template <class Space>
class S7ScanCase : public PreparedCase {
 public:
  S7ScanCase(const SweepCase& c, const SweepSettings& s)
      : problem_(s7_scan_problem(c)), direction_(c.direction), timer_(space_) {
    config_ = choose_config<cli::OpTraits<S7ScanProblem>>(problem_, s);
    config = config_.to_json();
    costs = direction_costs(problem_, direction_);
    costs.extra_bytes = 0;
    for (Pass pass : {Pass::forward, Pass::backward})
      if (direction_ == Direction::fwdbwd || (direction_ == Direction::fwd) == (pass == Pass::forward))
        costs.extra_bytes += kernels::s7_scan_extra_bytes(problem_, config_, pass);
    const InputRanges ranges = s7_scan_ranges();
    sets_.push_back(kernels::s7_scan_allocate<Space>(problem_, config_));
    tensor_bytes = sets_.front().tensor_bytes();
    workspace_bytes = sets_.front().workspace.bytes();
    buffer_sets = buffer_sets_for(tensor_bytes + workspace_bytes, s.cache_bytes, s.max_buffer_sets);
    for (int set = 1; set < buffer_sets; ++set) sets_.push_back(kernels::s7_scan_allocate<Space>(problem_, config_));
    for (int set = 0; set < buffer_sets; ++set) {
      auto& t = sets_[set];
      fill_input(space_, t.u, ranges, s.seed, set, "u");
      fill_input(space_, t.A, ranges, s.seed, set, "A");
      fill_input(space_, t.bias, ranges, s.seed, set, "bias");
      fill_input(space_, t.B, ranges, s.seed, set, "B");
      fill_input(space_, t.C, ranges, s.seed, set, "C");
      fill_input(space_, t.initial_state, ranges, s.seed, set, "initial_state");
      fill_input(space_, t.dout, ranges, s.seed, set, "dout");
      fill_input(space_, t.dlast_state, ranges, s.seed, set, "dlast_state");
      if (direction_ == Direction::bwd) kernels::s7_scan_forward<Space>(problem_, config_, t, space_);
    }
    space_.fence();
  }

  double run(int set) override {
    timer_.start();
    if (direction_ != Direction::bwd) kernels::s7_scan_forward<Space>(problem_, config_, sets_[set], space_);
    if (direction_ != Direction::fwd) kernels::s7_scan_backward<Space>(problem_, config_, sets_[set], space_);
    return timer_.stop();
  }

 private:
  Space space_;
  S7ScanProblem problem_;
  Direction direction_;
  S7ScanConfig config_;
  std::vector<kernels::S7ScanTensors<Space>> sets_;
  IntervalTimer<Space> timer_;
};

}  // namespace s7_scan_bench

void add_s7_scan_benches() {
  using namespace s7_scan_bench;
  OpBench scan;
  scan.op = "s7_scan";
  scan.shape_axes = {{"batch", "8", "batch size b"},
                     {"dim", "256", "channels H"},
                     {"dstate", "64", "states N"},
                     {"seqlen", "4096", "sequence length L"}};
  scan.option_axes = {{"bias", "--bias", OptionAxis::Kind::toggle, "on", "bias added to B*u", {}},
                      {"initial_state", "--initial-state", OptionAxis::Kind::toggle, "off", "initial_state given", {}}};
  scan.costs = [](const SweepCase& c) { return direction_costs(s7_scan_problem(c), c.direction); };
  scan.prepare = [](const SweepCase& c, const SweepSettings& s) {
    return make_kokkos_case<S7ScanCase>(s.backend.kind, c, s);
  };
  scan.case_options = [](const SweepCase& c) { return s7_scan_problem(c).options_json(); };
  scan.tensor_specs = [](const SweepCase& c) { return s7_scan_problem(c).tensors(); };
  scan.configs = registry_configs<cli::OpTraits<S7ScanProblem>>(s7_scan_problem);
  scan.host_inputs = [](const SweepCase& c, std::uint64_t seed) {
    return host_inputs(s7_scan_problem(c).tensors(), s7_scan_ranges(), seed, 0);
  };
  register_op_bench(scan);
}

}  // namespace scanlab::bench
