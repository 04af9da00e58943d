// Sweeps of selective_scan (mamba_ssm's selective_scan_fn conventions: u, delta, z (B,D,L),
// B and C (B,N,L) or (B,G,N,L)); the case itself is benchmarks/selective_scan_case.hpp.
#include "selective_scan_case.hpp"

namespace scanlab::bench {
namespace selective_scan_bench {

template <class Space>
struct SelectiveScanCase : ScanCase<Space> {
  SelectiveScanCase(const SweepCase& c, const SweepSettings& s)
      : ScanCase<Space>(c, s, selective_scan_problem(c), SequenceLayout::batch_dim_seqlen,
                        choose_config<cli::OpTraits<SelectiveScanProblem>>(selective_scan_problem(c), s),
                        selective_scan_ranges(switch_value(c, "softplus")),
                        {{"u", "u"}, {"delta", "delta"}, {"A", "A"}, {"B", "B"}, {"C", "C"}, {"D", "D"}, {"z", "z"},
                         {"delta_bias", "delta_bias"}, {"initial_state", "initial_state"}, {"dout", "dout"},
                         {"dlast_state", "dlast_state"}},
                        direction_costs(selective_scan_problem(c), c.direction)) {}
};

}  // namespace selective_scan_bench

void add_selective_scan_benches() {
  using namespace selective_scan_bench;
  OpBench ss;
  ss.op = "selective_scan";
  ss.shape_axes = {{"batch", "8", "batch size B"},
                   {"dim", "1024", "channels D"},
                   {"dstate", "16", "states per channel N"},
                   {"seqlen", "2048", "sequence length L"},
                   {"groups", "1", "groups of per-step B and C (must divide dim)"}};
  ss.option_axes = {{"z", "--z", OptionAxis::Kind::toggle, "on", "gate z and act(z)", {}},
                    {"D", "--D", OptionAxis::Kind::toggle, "on", "skip term D*u", {}},
                    {"delta_bias", "--delta-bias", OptionAxis::Kind::toggle, "on", "delta_bias added to delta", {}},
                    {"softplus", "--softplus", OptionAxis::Kind::toggle, "on", "dt = softplus(delta + delta_bias)", {}},
                    {"initial_state", "--initial-state", OptionAxis::Kind::toggle, "off", "initial_state given", {}},
                    {"act_fn", "--act-fn", OptionAxis::Kind::choice, "silu", "activation of the gate z", kActivations}};
  ss.costs = [](const SweepCase& c) { return direction_costs(selective_scan_problem(c), c.direction); };
  ss.prepare = [](const SweepCase& c, const SweepSettings& s) {
    return make_kokkos_case<SelectiveScanCase>(s.backend.kind, c, s);
  };
  ss.case_options = [](const SweepCase& c) { return selective_scan_problem(c).options_json(); };
  ss.tensor_specs = [](const SweepCase& c) { return selective_scan_problem(c).tensors(); };
  ss.configs = registry_configs<cli::OpTraits<SelectiveScanProblem>>(selective_scan_problem);
  ss.host_inputs = [](const SweepCase& c, std::uint64_t seed) {
    const auto p = selective_scan_problem(c);
    return host_inputs(p.tensors(), selective_scan_ranges(p.delta_softplus), seed, 0);
  };
  register_op_bench(ss);
}

}  // namespace scanlab::bench
