#include "large_index.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <set>

#include "benchmarks/random_fill.hpp"
#include "kernels/selective_scan.hpp"
#include "reference/error_bound.hpp"
#include "reference/selective_scan.hpp"

namespace scanlab::cli {
namespace {

using kernels::SelectiveScanConfig;

// Each input's value range and hash stream; regenerated on the host for the sampled channels.
struct InputFill {
  const char* name;
  float lo, hi;
};
constexpr InputFill kFills[] = {{"u", -1.f, 1.f},          {"delta", -2.f, 1.f},     {"A", -2.f, -0.1f},
                                {"B", -1.f, 1.f},          {"C", -1.f, 1.f},         {"D", -1.f, 1.f},
                                {"z", -2.f, 2.f},          {"delta_bias", -.5f, .5f}, {"initial_state", -1.f, 1.f},
                                {"dout", -1.f, 1.f},       {"dlast_state", -1.f, 1.f}};

std::uint64_t stream_seed(std::uint64_t seed, int tensor) { return seed * 64 + std::uint64_t(tensor) + 1; }

template <class Space>
typename kernels::SelectiveScanTensors<Space>::View* view_of(kernels::SelectiveScanTensors<Space>& t,
                                                              const std::string& name) {
  if (name == "u") return &t.u;
  if (name == "delta") return &t.delta;
  if (name == "A") return &t.A;
  if (name == "B") return &t.B;
  if (name == "C") return &t.C;
  if (name == "D") return &t.D;
  if (name == "z") return &t.z;
  if (name == "delta_bias") return &t.delta_bias;
  if (name == "initial_state") return &t.initial_state;
  if (name == "dout") return &t.dout;
  if (name == "dlast_state") return &t.dlast_state;
  if (name == "out") return &t.out;
  if (name == "last_state") return &t.last_state;
  if (name == "du") return &t.du;
  if (name == "ddelta") return &t.ddelta;
  if (name == "dA") return &t.dA;
  if (name == "dB") return &t.dB;
  if (name == "dC") return &t.dC;
  if (name == "dD") return &t.dD;
  if (name == "dz") return &t.dz;
  if (name == "ddelta_bias") return &t.ddelta_bias;
  if (name == "dinitial_state") return &t.dinitial_state;
  throw std::logic_error("large-index: no view named " + name);
}

// Where channel d's slice of a tensor starts and how long it is (batch is 1, layout (B,D,L)).
struct Slice {
  std::int64_t begin, length;
};
Slice channel_slice(const SelectiveScanProblem& p, const std::string& name, std::int64_t d) {
  const std::string base = (name.size() > 1 && name[0] == 'd' && name != "delta" && name != "delta_bias")
                               ? name.substr(1)
                               : name;
  if (base == "u" || base == "delta" || base == "z" || base == "out" || base == "dout")
    return {d * p.seqlen, p.seqlen};
  if (base == "A" || base == "initial_state" || base == "last_state" || base == "dlast_state")
    return {d * p.dstate, p.dstate};
  if (base == "D" || base == "delta_bias") return {d, 1};
  if (base == "B" || base == "C") {
    if (!p.B_per_step) return {d * p.dstate, p.dstate};
    return {0, p.dstate * p.seqlen};  // one batch, one group: every channel shares it
  }
  throw std::logic_error("large-index: no slice rule for " + name);
}

template <class Space>
LargeIndexResult run_on(const LargeIndexOptions& o) {
  SelectiveScanProblem p;
  p.batch = 1; p.dim = o.dim; p.dstate = o.dstate; p.seqlen = o.seqlen; p.groups = 1;
  p.B_per_step = p.C_per_step = !o.time_invariant_BC;
  p.has_D = p.has_z = p.has_delta_bias = p.delta_softplus = p.has_initial_state = true;
  p.with_backward = p.has_dlast_state = true;
  p.validate();
  SelectiveScanConfig config = kernels::selective_scan_heuristic_config(p, o.backend);
  if (!o.impl.empty()) config.impl = o.impl;
  if (auto why = config.invalid_reason(p, o.backend); !why.empty())
    throw std::invalid_argument("large-index: config " + config.to_json().dump() + " cannot run: " + why);

  LargeIndexResult result;
  result.elements_per_tensor = p.batch * p.dim * p.seqlen;
  Space space;
  auto t = kernels::allocate_selective_scan_tensors<Space>(p, kernels::SequenceLayout::batch_dim_seqlen);
  for (int i = 0; i < int(std::size(kFills)); ++i)
    bench::fill_uniform(space, *view_of(t, kFills[i].name), stream_seed(o.seed, i), kFills[i].lo, kFills[i].hi);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* name : {"out", "last_state", "du", "ddelta", "dA", "dB", "dC", "dD", "dz", "ddelta_bias",
                           "dinitial_state"})
    Kokkos::deep_copy(space, *view_of(t, name), nan);  // every checked element must be written
  auto workspace = kernels::allocate_selective_scan_workspace<Space>(p, config);
  kernels::selective_scan_forward(p, config, t, workspace, space);
  kernels::selective_scan_backward(p, config, t, workspace, space);
  space.fence();

  // Channels: the first, the last (highest offsets), the two around offset 2^31, and random.
  std::set<std::int64_t> channels{0, p.dim - 1};
  const std::int64_t straddle = (std::int64_t{1} << 31) / p.seqlen;
  if (straddle < p.dim) channels.insert(straddle);
  if (straddle >= 1 && straddle - 1 < p.dim) channels.insert(straddle - 1);
  std::mt19937_64 rng(o.seed);
  for (int i = 0; i < o.random_channels; ++i) channels.insert(std::int64_t(rng() % std::uint64_t(p.dim)));

  SelectiveScanProblem one = p;
  one.dim = 1;
  std::vector<std::string> outputs{"out", "last_state", "du", "ddelta", "dA", "dD", "dz", "ddelta_bias",
                                   "dinitial_state"};
  if (o.time_invariant_BC) { outputs.push_back("dB"); outputs.push_back("dC"); }
  bool all_pass = true;
  char line[1024];
  std::snprintf(line, sizeof line, "selective_scan (batch, dim, dstate, seqlen) = (1, %lld, %lld, %lld): %lld elements per (b,d,t) tensor, B/C %s, config %s\n",
                (long long)p.dim, (long long)p.dstate, (long long)p.seqlen, (long long)result.elements_per_tensor,
                o.time_invariant_BC ? "time-invariant" : "per-step", config.to_json().dump().c_str());
  result.report += line;
  bool corrupted = !o.corrupt_one_output;
  for (std::int64_t d : channels) {
    TensorMap inputs;
    for (int i = 0; i < int(std::size(kFills)); ++i) {
      const std::string name = kFills[i].name;
      const Slice s = channel_slice(p, name, d);
      Tensor tensor;
      for (const auto& spec : one.tensors())
        if (spec.name == name) tensor = Tensor(spec.shape);
      for (std::int64_t k = 0; k < s.length; ++k)
        tensor[k] = bench::hashed_uniform(stream_seed(o.seed, i), std::uint64_t(s.begin + k), kFills[i].lo,
                                          kFills[i].hi);
      inputs[name] = tensor;
    }
    TensorMap expected = reference::selective_scan(one, inputs);
    TensorMap bounds = reference::selective_scan_error_bound(one, inputs);
    TensorMap got, checked_bounds;
    for (const auto& name : outputs) {
      const Slice s = channel_slice(p, name, d);
      result.highest_offset_checked = std::max(result.highest_offset_checked, s.begin + s.length - 1);
      auto device = Kokkos::subview(*view_of(t, name), std::make_pair(s.begin, s.begin + s.length));
      auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), device);
      Tensor tensor(expected.at(name).shape);
      for (std::int64_t k = 0; k < s.length; ++k) tensor[k] = host(k);
      if (!corrupted && name == "out") {
        tensor[s.length - 1] *= 1.0 + 0x1p-8;
        corrupted = true;
      }
      got[name] = tensor;
      checked_bounds[name] = bounds.at(name);
    }
    auto comparisons = reference::compare_with_bounds(got, expected, checked_bounds);
    const bool pass = reference::all_pass(comparisons);
    all_pass = all_pass && pass;
    std::snprintf(line, sizeof line, "channel d = %lld (u offsets %lld..%lld): %s\n", (long long)d,
                  (long long)(d * p.seqlen), (long long)(d * p.seqlen + p.seqlen - 1), pass ? "pass" : "FAIL");
    result.report += line + reference::describe(comparisons);
  }
  result.pass = all_pass;
  return result;
}

}  // namespace

LargeIndexResult run_large_index_check(const LargeIndexOptions& o) {
  switch (o.backend) {
#ifdef KOKKOS_ENABLE_SERIAL
    case BackendKind::serial: return run_on<Kokkos::Serial>(o);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    case BackendKind::openmp: return run_on<Kokkos::OpenMP>(o);
#endif
#ifdef KOKKOS_ENABLE_CUDA
    case BackendKind::cuda: return run_on<Kokkos::Cuda>(o);
#endif
    default: throw std::invalid_argument("large-index: backend " + to_string(o.backend) + " is not compiled in");
  }
}

}  // namespace scanlab::cli
