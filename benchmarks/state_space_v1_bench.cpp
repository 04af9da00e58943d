// Sweeps of state_space_v1 (ejkernel's conventions: time-major (b,L,D) tensors, dt already
// positive, D required, optional gate with act_fn); it runs as its selective_scan problem through
// strides (benchmarks/selective_scan_case.hpp).
#include "selective_scan_case.hpp"

namespace scanlab::bench {
namespace selective_scan_bench {

template <class Space>
struct StateSpaceV1Case : ScanCase<Space> {
  StateSpaceV1Case(const SweepCase& c, const SweepSettings& s)
      : ScanCase<Space>(c, s, state_space_v1_problem(c).as_selective_scan(), SequenceLayout::batch_seqlen_dim,
                        choose_config<cli::OpTraits<StateSpaceV1Problem>>(state_space_v1_problem(c), s),
                        state_space_v1_ranges(),
                        {{"u", "hidden_states"}, {"delta", "dt"}, {"A", "A"}, {"B", "B"}, {"C", "C"}, {"D", "D"},
                         {"z", "gate"}, {"initial_state", "initial_state"}, {"dout", "dout"},
                         {"dlast_state", "dfinal_state"}},
                        direction_costs(state_space_v1_problem(c), c.direction)) {}
};

}  // namespace selective_scan_bench

void add_state_space_v1_benches() {
  using namespace selective_scan_bench;
  OpBench v1;
  v1.op = "state_space_v1";
  v1.shape_axes = {{"batch", "8", "batch size b"},
                   {"dim", "2048", "channels D"},
                   {"dstate", "16", "states per channel N"},
                   {"seqlen", "2048", "sequence length L"}};
  v1.option_axes = {{"gate", "--gate", OptionAxis::Kind::toggle, "on", "gate given (act_fn applied to it)", {}},
                    {"act_fn", "--act-fn", OptionAxis::Kind::choice, "silu", "activation of the gate", kActivations},
                    {"initial_state", "--initial-state", OptionAxis::Kind::toggle, "off", "initial_state given", {}}};
  v1.costs = [](const SweepCase& c) { return direction_costs(state_space_v1_problem(c), c.direction); };
  v1.prepare = [](const SweepCase& c, const SweepSettings& s) {
    return make_kokkos_case<StateSpaceV1Case>(s.backend.kind, c, s);
  };
  v1.case_options = [](const SweepCase& c) { return state_space_v1_problem(c).options_json(); };
  v1.tensor_specs = [](const SweepCase& c) { return state_space_v1_problem(c).tensors(); };
  v1.configs = registry_configs<cli::OpTraits<StateSpaceV1Problem>>(state_space_v1_problem);
  v1.host_inputs = [](const SweepCase& c, std::uint64_t seed) {
    return host_inputs(state_space_v1_problem(c).tensors(), state_space_v1_ranges(), seed, 0);
  };
  register_op_bench(v1);
}

}  // namespace scanlab::bench
