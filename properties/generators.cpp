#include "generators.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

namespace scanlab::properties {
namespace {

using std::int64_t;

// Seeded float32-representable values. Regimes pick ranges; log_uniform reaches every decade.
class Values {
 public:
  explicit Values(std::uint64_t seed) : rng_(seed) {}
  double unit() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }
  double uniform(double lo, double hi) { return f32(lo + (hi - lo) * unit()); }
  double log_uniform(double lo, double hi) { return f32(std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * unit())); }
  double sign() { return unit() < 0.5 ? -1.0 : 1.0; }
  bool chance(double p) { return unit() < p; }
  static double f32(double v) { return static_cast<double>(static_cast<float>(v)); }

 private:
  std::mt19937_64 rng_;
};

// One float32 ulp at 20 (20 lies in [16, 32): 2^(4−23)).
constexpr double kUlp32At20 = 0x1p-19;
constexpr double kInvSqrt2 = 0.70710678118654752440;

template <class F>
Tensor filled(const Shape& shape, F&& value) {
  Tensor t(shape);
  for (auto& v : t.values) v = value();
  return t;
}

const Shape& spec_shape(const std::vector<TensorSpec>& specs, const std::string& name) {
  for (const auto& s : specs)
    if (s.name == name) return s.shape;
  throw std::logic_error("generator: the descriptor has no tensor '" + name + "'");
}

// Elements of the largest tensor of a problem, from its descriptor.
template <class P>
int64_t largest_tensor(const P& p) {
  int64_t largest = 0;
  for (const auto& s : p.tensors()) largest = std::max(largest, shape_numel(s.shape));
  return largest;
}

// Sequence lengths: 1, short, prime, medium (crossing the small chunk lengths) and long (past
// every internal chunk). Shrinks towards the first entry that the request allows.
rc::Gen<int64_t> gen_seqlen(const GenRequest& r) {
  const int64_t long_min = std::max<int64_t>(r.limits.long_seqlen, 2);
  return rc::gen::exec([r, long_min] {
    std::vector<std::string> kinds;
    if (r.min_seqlen <= 1) kinds.push_back("1");
    for (const char* k : {"short", "prime", "medium", "long"}) kinds.push_back(k);
    const std::string kind = *gen_choice(kinds);
    if (kind == "1") return int64_t{1};
    if (kind == "short") return *gen_int(std::max<int64_t>(2, r.min_seqlen), 13);
    if (kind == "prime") return *gen_choice<int64_t>({2, 3, 5, 7, 11, 13, 17, 31, 61, 67, 127});
    if (kind == "medium") return *gen_int(13, 101);
    return *gen_int(long_min, long_min + 40);
  });
}

// dstate for selective_scan and state_space_v1: each of the kernels' compile-time dstates (1, 2, 4,
// 8, 16, 32, 64) about one case in twelve, so that each specialisation is drawn often enough to
// be asserted, with odd and prime sizes between them for the generic path.
const std::vector<int64_t>& dstate_choices() {
  static const std::vector<int64_t> choices{1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 32, 64};
  return choices;
}

bool is_prime(int64_t n) {
  if (n < 2) return false;
  for (int64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

void add_option(std::vector<std::string>& tags, bool on, const std::string& name) {
  if (on) tags.push_back("option:" + name);
}

}  // namespace

std::vector<std::string> size_tags(int64_t seqlen, const SizeLimits& limits) {
  std::vector<std::string> tags;
  if (seqlen == 1) tags.push_back("seqlen:1");
  if (seqlen > 2 && is_prime(seqlen)) tags.push_back("seqlen:prime");
  if (seqlen >= limits.long_seqlen) tags.push_back("seqlen:long");
  return tags;
}

rc::Gen<std::size_t> gen_index(std::size_t count) {
  if (count == 0) throw std::logic_error("gen_index: nothing to choose from");
  return rc::gen::resize(100, rc::gen::inRange<std::size_t>(0, count));
}
rc::Gen<int64_t> gen_int(int64_t lo, int64_t hi) { return rc::gen::resize(100, rc::gen::inRange<int64_t>(lo, hi)); }
rc::Gen<bool> gen_bool() { return rc::gen::map(gen_index(2), [](std::size_t i) { return i == 1; }); }

rc::Gen<BackendKind> gen_kokkos_backend() { return gen_choice(compiled_kokkos_backends()); }

// ---------------------------------------------------------------------------------------------
// selective_scan

std::string describe_problem(const SelectiveScanProblem& p) {
  std::ostringstream s;
  s << "selective_scan batch=" << p.batch << " dim=" << p.dim << " dstate=" << p.dstate << " seqlen=" << p.seqlen
    << " groups=" << p.groups << " B=" << (p.B_per_step ? "per-step" : "time-invariant")
    << " C=" << (p.C_per_step ? "per-step" : "time-invariant") << (p.has_D ? " D" : "") << (p.has_z ? " z" : "")
    << (p.has_delta_bias ? " delta_bias" : "") << (p.delta_softplus ? " softplus" : "")
    << (p.has_initial_state ? " initial_state" : "") << (p.with_backward ? " backward" : "")
    << (p.has_dlast_state ? " dlast_state" : "");
  return s.str();
}

template <>
rc::Gen<SelectiveScanProblem> gen_problem<SelectiveScanProblem>(const GenRequest& r) {
  return rc::gen::exec([r] {
    SelectiveScanProblem p;
    p.seqlen = *gen_seqlen(r);
    p.batch = *gen_int(r.min_batch, std::max<int64_t>(r.min_batch + 1, 4));
    p.groups = *gen_int(1, 4);
    p.dim = p.groups * *gen_int(1, 21);  // past one team's 16 channels now and then
    // Every compile-time dstate of the kernels, and odd and prime sizes between them.
    p.dstate = *gen_choice<int64_t>(dstate_choices());
    p.B_per_step = !*gen_bool();
    p.C_per_step = !*gen_bool();
    if (p.groups > 1 && !p.B_per_step && !p.C_per_step) p.B_per_step = true;
    p.has_D = *gen_bool();
    p.has_z = *gen_bool();
    p.has_delta_bias = *gen_bool();
    p.delta_softplus = *gen_bool();
    p.has_initial_state = r.allow_initial_state && *gen_bool();
    p.with_backward = r.backward == GenRequest::Backward::always ||
                      (r.backward == GenRequest::Backward::either && *gen_bool());
    p.has_dlast_state = p.with_backward && r.allow_state_cotangent && *gen_bool();
    // Keep the oracle cheap: shrink batch, then dim (by whole groups), then dstate, but a large
    // dstate (a compile-time specialisation) keeps its value and gives up sequence length instead
    // when the sequence is not one of the long ones.
    while (largest_tensor(p) > r.limits.max_elements) {
      if (p.batch > r.min_batch) --p.batch;
      else if (p.dim > p.groups) p.dim -= p.groups;
      else if (p.dstate > 16 && p.seqlen < r.limits.long_seqlen && p.seqlen > r.min_seqlen)
        p.seqlen = std::max<int64_t>(r.min_seqlen, p.seqlen / 2);
      else if (p.dstate > 1) p.dstate = (p.dstate + 1) / 2;
      else if (p.groups > 1) p.dim = p.groups = 1;
      else break;
    }
    return p;
  });
}

template <>
TensorMap make_inputs<SelectiveScanProblem>(const SelectiveScanProblem& p, const std::map<std::string, std::string>& regimes,
                                            std::uint64_t seed, std::vector<std::string>* tags) {
  Values v(seed);
  const auto specs = p.tensors();
  const std::string delta_regime = regimes.at("delta"), A_regime = regimes.at("A"), z_regime = regimes.at("z");
  TensorMap in;
  in["u"] = filled(spec_shape(specs, "u"), [&] { return v.uniform(-2, 2); });
  in["B"] = filled(p.B_shape(), [&] { return v.uniform(-1.5, 1.5); });
  in["C"] = filled(p.C_shape(), [&] { return v.uniform(-1.5, 1.5); });
  in["A"] = filled(spec_shape(specs, "A"), [&] {
    if (A_regime == "near_zero") return v.chance(0.1) ? 0.0 : -v.log_uniform(1e-7, 1e-2);
    if (A_regime == "very_negative") return -v.log_uniform(30, 3000);
    return -v.uniform(0.05, 4);
  });
  if (p.has_D) in["D"] = filled(spec_shape(specs, "D"), [&] { return v.uniform(-1, 1); });
  if (p.has_z)
    in["z"] = filled(spec_shape(specs, "z"), [&] {
      return z_regime == "large" ? v.sign() * v.uniform(8, 60) : v.uniform(-3, 3);
    });
  // delta_bias first: the softplus-threshold regime aims delta + delta_bias at 20 ± a margin.
  Tensor bias(Shape{p.dim});
  if (p.has_delta_bias) {
    bias = filled(spec_shape(specs, "delta_bias"), [&] {
      if (p.delta_softplus) return v.uniform(-1, 1);
      // Without softplus dt = delta + bias must stay ≥ 0 (a positive dt·A would grow without bound).
      if (delta_regime == "tiny") return v.log_uniform(1e-7, 1e-4);
      if (delta_regime == "huge") return v.uniform(0, 10);
      return v.uniform(0, 0.5);
    });
    in["delta_bias"] = bias;
  }
  Tensor delta(spec_shape(specs, "delta"));
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t d = 0; d < p.dim; ++d)
      for (int64_t t = 0; t < p.seqlen; ++t) {
        double value;
        if (!p.delta_softplus) {
          if (delta_regime == "tiny") value = v.log_uniform(1e-6, 1e-3);
          else if (delta_regime == "huge") value = v.log_uniform(10, 1000);
          else value = v.uniform(0.01, 1.5);
        } else if (delta_regime == "tiny") {
          value = v.uniform(-24, -9);  // softplus(−24..−9): dt from 4e-11 to 1e-4
        } else if (delta_regime == "huge") {
          value = v.log_uniform(26, 1000);  // past the threshold: dt = delta + bias
        } else if (delta_regime == "softplus_threshold" && v.chance(0.7)) {
          // delta + bias = 20 ± off, off ≥ 16 ulps so that float32 and float64 agree on the branch.
          const double off = v.sign() * v.log_uniform(16 * kUlp32At20, 0.5);
          const double b_d = p.has_delta_bias ? bias.at({d}) : 0.0;
          value = Values::f32(20.0 + off - b_d);
          if (std::fabs(value + b_d - 20.0) < 8 * kUlp32At20)  // rounding moved it too close: step away
            value = Values::f32(value + (off > 0 ? 16 : -16) * kUlp32At20);
        } else {
          value = v.uniform(-4, 4);
        }
        delta.at({b, d, t}) = value;
      }
  in["delta"] = delta;
  if (p.has_initial_state) in["initial_state"] = filled(spec_shape(specs, "initial_state"), [&] { return v.uniform(-2, 2); });
  if (p.with_backward) in["dout"] = filled(spec_shape(specs, "dout"), [&] { return v.uniform(-1, 1); });
  if (p.has_dlast_state) in["dlast_state"] = filled(spec_shape(specs, "dlast_state"), [&] { return v.uniform(-1, 1); });
  if (tags) {
    tags->push_back("delta:" + delta_regime);
    tags->push_back("A:" + A_regime);
    if (p.has_z) tags->push_back("z:" + z_regime);
  }
  return in;
}

// The tags a request makes reachable for every op with a state: seqlen 1, the initial state, the
// backward and the state's cotangent (named `cotangent_tag`).
static void add_request_tags(std::vector<std::string>& t, const GenRequest& r, const char* cotangent_tag) {
  if (r.min_seqlen <= 1) t.push_back("seqlen:1");
  if (r.allow_initial_state) t.push_back("option:initial_state");
  if (r.backward != GenRequest::Backward::never) t.push_back("option:backward");
  if (r.backward != GenRequest::Backward::never && r.allow_state_cotangent) t.push_back(cotangent_tag);
}

template <>
std::vector<std::string> edge_tags<SelectiveScanProblem>(const GenRequest& r) {
  std::vector<std::string> t{"delta:normal", "delta:tiny", "delta:huge", "delta:softplus_threshold", "A:normal",
                             "A:near_zero", "A:very_negative", "z:normal", "z:large", "seqlen:prime", "seqlen:long",
                             "dstate:1", "option:groups", "option:B_time_invariant", "option:C_time_invariant",
                             "option:has_D", "option:has_z", "option:delta_bias", "option:softplus"};
  add_request_tags(t, r, "option:dlast_state");
  return t;
}

// ---------------------------------------------------------------------------------------------
// state_space_v1

std::string describe_problem(const StateSpaceV1Problem& p) {
  std::ostringstream s;
  s << "state_space_v1 batch=" << p.batch << " seqlen=" << p.seqlen << " dim=" << p.dim << " dstate=" << p.dstate
    << (p.has_gate ? " gate(" + to_string(p.act_fn) + ")" : "") << (p.has_initial_state ? " initial_state" : "")
    << (p.has_conv_state ? " conv_state(d_conv=" + std::to_string(p.d_conv) + ")" : "")
    << (p.with_backward ? " backward" : "") << (p.has_dfinal_state ? " dfinal_state" : "");
  return s.str();
}

template <>
rc::Gen<StateSpaceV1Problem> gen_problem<StateSpaceV1Problem>(const GenRequest& r) {
  return rc::gen::exec([r] {
    StateSpaceV1Problem p;
    p.seqlen = *gen_seqlen(r);
    p.batch = *gen_int(r.min_batch, std::max<int64_t>(r.min_batch + 1, 4));
    p.dim = *gen_int(1, 21);
    p.dstate = *gen_choice<int64_t>(dstate_choices());
    p.has_gate = *gen_bool();
    p.act_fn = *gen_choice<GateActivation>({GateActivation::silu, GateActivation::identity, GateActivation::gelu_tanh,
                                             GateActivation::gelu_erf});
    p.has_initial_state = r.allow_initial_state && *gen_bool();
    p.has_conv_state = *gen_bool();
    p.d_conv = p.has_conv_state ? *gen_int(1, 5) : 0;
    p.with_backward = r.backward == GenRequest::Backward::always ||
                      (r.backward == GenRequest::Backward::either && *gen_bool());
    p.has_dfinal_state = p.with_backward && r.allow_state_cotangent && *gen_bool();
    while (largest_tensor(p) > r.limits.max_elements) {
      if (p.batch > r.min_batch) --p.batch;
      else if (p.dim > 1) p.dim = (p.dim + 1) / 2;
      else if (p.dstate > 16 && p.seqlen < r.limits.long_seqlen && p.seqlen > r.min_seqlen)
        p.seqlen = std::max<int64_t>(r.min_seqlen, p.seqlen / 2);
      else if (p.dstate > 1) p.dstate = (p.dstate + 1) / 2;
      else break;
    }
    return p;
  });
}

template <>
TensorMap make_inputs<StateSpaceV1Problem>(const StateSpaceV1Problem& p, const std::map<std::string, std::string>& regimes,
                                           std::uint64_t seed, std::vector<std::string>* tags) {
  Values v(seed);
  const auto specs = p.tensors();
  const std::string dt_regime = regimes.at("dt"), A_regime = regimes.at("A"), gate_regime = regimes.at("gate");
  TensorMap in;
  for (const auto& s : specs) {
    if (s.role != TensorRole::input && s.role != TensorRole::grad_input) continue;
    std::function<double()> value = [&] { return v.uniform(-1, 1); };
    if (s.name == "hidden_states" || s.name == "initial_state") value = [&] { return v.uniform(-2, 2); };
    if (s.name == "B" || s.name == "C") value = [&] { return v.uniform(-1.5, 1.5); };
    if (s.name == "dt")  // already post-softplus: positive
      value = [&] {
        if (dt_regime == "tiny") return v.log_uniform(1e-6, 1e-3);
        if (dt_regime == "huge") return v.log_uniform(10, 1000);
        return v.uniform(0.01, 1.5);
      };
    if (s.name == "A")
      value = [&] {
        if (A_regime == "near_zero") return v.chance(0.1) ? 0.0 : -v.log_uniform(1e-7, 1e-2);
        if (A_regime == "very_negative") return -v.log_uniform(30, 3000);
        return -v.uniform(0.05, 4);
      };
    if (s.name == "gate")
      value = [&] { return gate_regime == "large" ? v.sign() * v.uniform(8, 60) : v.uniform(-3, 3); };
    in[s.name] = filled(s.shape, value);
  }
  if (tags) {
    tags->push_back("dt:" + dt_regime);
    tags->push_back("A:" + A_regime);
    if (p.has_gate) tags->push_back("gate:" + gate_regime);
  }
  return in;
}

template <>
std::vector<std::string> edge_tags<StateSpaceV1Problem>(const GenRequest& r) {
  std::vector<std::string> t{"dt:normal", "dt:tiny", "dt:huge", "A:normal", "A:near_zero", "A:very_negative",
                             "gate:normal", "gate:large", "act_fn:silu", "act_fn:identity", "act_fn:gelu_tanh",
                             "act_fn:gelu_erf", "seqlen:prime", "seqlen:long", "dstate:1", "dim:1",
                             "option:conv_state"};
  add_request_tags(t, r, "option:dfinal_state");
  return t;
}

// ---------------------------------------------------------------------------------------------
// s7_scan

std::string describe_problem(const S7ScanProblem& p) {
  std::ostringstream s;
  s << "s7_scan batch=" << p.batch << " dim=" << p.dim << " dstate=" << p.dstate << " seqlen=" << p.seqlen
    << (p.has_bias ? " bias" : "") << (p.has_initial_state ? " initial_state" : "")
    << (p.with_backward ? " backward" : "") << (p.has_dlast_state ? " dlast_state" : "");
  return s.str();
}

template <>
rc::Gen<S7ScanProblem> gen_problem<S7ScanProblem>(const GenRequest& r) {
  return rc::gen::exec([r] {
    S7ScanProblem p;
    p.seqlen = *gen_seqlen(r);
    p.batch = *gen_int(r.min_batch, std::max<int64_t>(r.min_batch + 1, 4));
    p.dim = *gen_int(1, 18);     // past two groups of 8 dims and states per thread
    p.dstate = *gen_int(1, 18);
    p.has_bias = *gen_bool();
    p.has_initial_state = r.allow_initial_state && *gen_bool();
    p.with_backward = r.backward == GenRequest::Backward::always ||
                      (r.backward == GenRequest::Backward::either && *gen_bool());
    p.has_dlast_state = p.with_backward && r.allow_state_cotangent && *gen_bool();
    while (largest_tensor(p) > r.limits.max_elements) {
      if (p.batch > r.min_batch) --p.batch;
      else if (p.dim > 1) p.dim = (p.dim + 1) / 2;
      else if (p.dstate > 1) p.dstate = (p.dstate + 1) / 2;
      else break;
    }
    return p;
  });
}

// |A| regimes of S7, where A_bar = 1 − 1/(A² + 0.5): near 1/√2 A_bar crosses 0 (lrnnx divides by
// it), large |A| pushes A_bar to 1 (long memory), small |A| to −1 (alternating sign).
static double s7_A_value(Values& v, const std::string& regime) {
  if (regime == "abar_zero") {
    const double eps = v.chance(0.3) ? 0.0 : v.sign() * v.log_uniform(1e-7, 1e-3);
    return v.sign() * Values::f32(kInvSqrt2 * (1 + eps));
  }
  if (regime == "large") return v.sign() * v.log_uniform(10, 1000);
  if (regime == "small") return v.chance(0.1) ? 0.0 : v.sign() * v.log_uniform(1e-7, 1e-2);
  return v.sign() * v.uniform(0.2, 3);
}

template <>
TensorMap make_inputs<S7ScanProblem>(const S7ScanProblem& p, const std::map<std::string, std::string>& regimes,
                                     std::uint64_t seed, std::vector<std::string>* tags) {
  Values v(seed);
  const std::string A_regime = regimes.at("A");
  TensorMap in;
  for (const auto& s : p.tensors()) {
    if (s.role != TensorRole::input && s.role != TensorRole::grad_input) continue;
    if (s.name == "A")
      in[s.name] = filled(s.shape, [&] { return s7_A_value(v, A_regime); });
    else
      in[s.name] = filled(s.shape, [&] { return v.uniform(-1, 1); });
  }
  if (tags) tags->push_back("A:" + A_regime);
  return in;
}

template <>
std::vector<std::string> edge_tags<S7ScanProblem>(const GenRequest& r) {
  std::vector<std::string> t{"A:normal", "A:abar_zero", "A:large",   "A:small",  "seqlen:prime",
                             "seqlen:long", "dstate:1", "dim:1", "option:bias"};
  add_request_tags(t, r, "option:dlast_state");
  return t;
}

// ---------------------------------------------------------------------------------------------
// s7_inner

std::string describe_problem(const S7InnerProblem& p) {
  std::ostringstream s;
  s << "s7_inner batch=" << p.batch << " seqlen=" << p.seqlen << " dim=" << p.dim << " dstate=" << p.dstate
    << (p.with_backward ? " backward" : "");
  return s.str();
}

template <>
rc::Gen<S7InnerProblem> gen_problem<S7InnerProblem>(const GenRequest& r) {
  return rc::gen::exec([r] {
    S7InnerProblem p;
    p.seqlen = *gen_seqlen(r);
    p.batch = *gen_int(r.min_batch, std::max<int64_t>(r.min_batch + 1, 3));
    p.dim = *gen_int(1, 6);
    p.dstate = *gen_int(1, 5);
    p.with_backward = r.backward == GenRequest::Backward::always ||
                      (r.backward == GenRequest::Backward::either && *gen_bool());
    // The layer's cost is b·L·dim·(x_proj rows): budget the intermediate x_dbl as well.
    auto cost = [](const S7InnerProblem& q) {
      return std::max(largest_tensor(q), q.batch * q.seqlen * q.x_proj_rows() / 4);
    };
    while (cost(p) > r.limits.max_elements) {
      if (p.batch > r.min_batch) --p.batch;
      else if (p.dim > 1) p.dim = (p.dim + 1) / 2;
      else if (p.dstate > 1) p.dstate = (p.dstate + 1) / 2;
      else break;
    }
    return p;
  });
}

template <>
TensorMap make_inputs<S7InnerProblem>(const S7InnerProblem& p, const std::map<std::string, std::string>& regimes,
                                      std::uint64_t seed, std::vector<std::string>* tags) {
  Values v(seed);
  const std::string A_regime = regimes.at("A"), gate_regime = regimes.at("gate");
  const double scale = 1.0 / std::sqrt(double(p.dim));
  // A = x_dbl[:, :N] + base_params. For the A_bar edges the rows of x_proj that make A are scaled
  // down, so that A stays within ~1e-4 of base_params, which carries the regime.
  const double a_rows_scale = (A_regime == "abar_zero" || A_regime == "small") ? 1e-4 : 1.0;
  const double gate_scale = gate_regime == "large" ? 30.0 : 1.0;
  const auto specs = p.tensors();
  TensorMap in;
  in["hidden_states"] = filled(spec_shape(specs, "hidden_states"), [&] { return v.uniform(-1, 1); });
  in["in_proj_weight"] = filled(spec_shape(specs, "in_proj_weight"), [&] { return v.uniform(-scale, scale); });
  Tensor x_proj(spec_shape(specs, "x_proj_weight"));
  const int64_t cols = p.dim;
  for (int64_t row = 0; row < p.x_proj_rows(); ++row) {
    const bool a_row = row >= p.offset_A() && row < p.offset_A() + p.dstate;
    for (int64_t col = 0; col < cols; ++col)
      x_proj.at({row, col}) = Values::f32(v.uniform(-scale, scale) * (a_row ? a_rows_scale : 1.0));
  }
  in["x_proj_weight"] = x_proj;
  in["gate_proj_weight"] =
      filled(spec_shape(specs, "gate_proj_weight"), [&] { return Values::f32(v.uniform(-scale, scale) * gate_scale); });
  in["base_params"] = filled(spec_shape(specs, "base_params"), [&] { return s7_A_value(v, A_regime); });
  if (p.with_backward) in["dout"] = filled(spec_shape(specs, "dout"), [&] { return v.uniform(-1, 1); });
  for (const auto& s : specs)
    if ((s.role == TensorRole::input || s.role == TensorRole::grad_input) && !in.count(s.name))
      throw std::logic_error("generator: s7_inner input '" + s.name + "' has no value rule");
  if (tags) {
    tags->push_back("A:" + A_regime);
    tags->push_back("gate:" + gate_regime);
  }
  return in;
}

template <>
std::vector<std::string> edge_tags<S7InnerProblem>(const GenRequest& r) {
  std::vector<std::string> t{"A:normal", "A:abar_zero", "A:large", "A:small", "gate:normal", "gate:large",
                             "seqlen:prime", "seqlen:long", "dstate:1", "dim:1"};
  if (r.min_seqlen <= 1) t.push_back("seqlen:1");
  if (r.backward != GenRequest::Backward::never) t.push_back("option:backward");
  return t;
}

// ---------------------------------------------------------------------------------------------
// Whole cases: problem, regimes, values, tags.

namespace {

std::vector<std::string> option_tags(const SelectiveScanProblem& p) {
  std::vector<std::string> t;
  add_option(t, p.groups > 1, "groups");
  add_option(t, !p.B_per_step, "B_time_invariant");
  add_option(t, !p.C_per_step, "C_time_invariant");
  add_option(t, p.has_D, "has_D");
  add_option(t, p.has_z, "has_z");
  add_option(t, p.has_delta_bias, "delta_bias");
  add_option(t, p.delta_softplus, "softplus");
  add_option(t, p.has_initial_state, "initial_state");
  add_option(t, p.with_backward, "backward");
  add_option(t, p.has_dlast_state, "dlast_state");
  if (p.dstate == 1) t.push_back("dstate:1");
  return t;
}
std::vector<std::string> option_tags(const StateSpaceV1Problem& p) {
  std::vector<std::string> t;
  if (p.has_gate) t.push_back("act_fn:" + to_string(p.act_fn));
  add_option(t, p.has_initial_state, "initial_state");
  add_option(t, p.has_conv_state, "conv_state");
  add_option(t, p.with_backward, "backward");
  add_option(t, p.has_dfinal_state, "dfinal_state");
  if (p.dstate == 1) t.push_back("dstate:1");
  if (p.dim == 1) t.push_back("dim:1");
  return t;
}
std::vector<std::string> option_tags(const S7ScanProblem& p) {
  std::vector<std::string> t;
  add_option(t, p.has_bias, "bias");
  add_option(t, p.has_initial_state, "initial_state");
  add_option(t, p.with_backward, "backward");
  add_option(t, p.has_dlast_state, "dlast_state");
  if (p.dstate == 1) t.push_back("dstate:1");
  if (p.dim == 1) t.push_back("dim:1");
  return t;
}
std::vector<std::string> option_tags(const S7InnerProblem& p) {
  std::vector<std::string> t;
  add_option(t, p.with_backward, "backward");
  if (p.dstate == 1) t.push_back("dstate:1");
  if (p.dim == 1) t.push_back("dim:1");
  return t;
}

rc::Gen<std::map<std::string, std::string>> gen_regimes(const SelectiveScanProblem& p) {
  return rc::gen::exec([softplus = p.delta_softplus] {
    std::map<std::string, std::string> r;
    r["delta"] = softplus ? *gen_choice<std::string>({"normal", "tiny", "huge", "softplus_threshold"})
                          : *gen_choice<std::string>({"normal", "tiny", "huge"});
    r["A"] = *gen_choice<std::string>({"normal", "near_zero", "very_negative"});
    r["z"] = *gen_choice<std::string>({"normal", "large"});
    return r;
  });
}
rc::Gen<std::map<std::string, std::string>> gen_regimes(const StateSpaceV1Problem&) {
  return rc::gen::exec([] {
    std::map<std::string, std::string> r;
    r["dt"] = *gen_choice<std::string>({"normal", "tiny", "huge"});
    r["A"] = *gen_choice<std::string>({"normal", "near_zero", "very_negative"});
    r["gate"] = *gen_choice<std::string>({"normal", "large"});
    return r;
  });
}
rc::Gen<std::map<std::string, std::string>> gen_regimes(const S7ScanProblem&) {
  return rc::gen::exec([] {
    std::map<std::string, std::string> r;
    r["A"] = *gen_choice<std::string>({"normal", "abar_zero", "large", "small"});
    return r;
  });
}
rc::Gen<std::map<std::string, std::string>> gen_regimes(const S7InnerProblem&) {
  return rc::gen::exec([] {
    std::map<std::string, std::string> r;
    r["A"] = *gen_choice<std::string>({"normal", "abar_zero", "large", "small"});
    r["gate"] = *gen_choice<std::string>({"normal", "large"});
    return r;
  });
}

}  // namespace

template <class P>
rc::Gen<GeneratedCase<P>> gen_case(const GenRequest& request) {
  return rc::gen::exec([request] {
    GeneratedCase<P> c;
    c.problem = *gen_problem<P>(request);
    const auto regimes = *gen_regimes(c.problem);
    c.value_seed = *rc::gen::resize(100, rc::gen::inRange<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()));
    c.inputs = make_inputs(c.problem, regimes, c.value_seed, &c.tags);
    for (auto& t : option_tags(c.problem)) c.tags.push_back(t);
    for (auto& t : size_tags(c.problem.seqlen, request.limits)) c.tags.push_back(t);
    return c;
  });
}

template rc::Gen<GeneratedCase<SelectiveScanProblem>> gen_case<SelectiveScanProblem>(const GenRequest&);
template rc::Gen<GeneratedCase<StateSpaceV1Problem>> gen_case<StateSpaceV1Problem>(const GenRequest&);
template rc::Gen<GeneratedCase<S7ScanProblem>> gen_case<S7ScanProblem>(const GenRequest&);
template rc::Gen<GeneratedCase<S7InnerProblem>> gen_case<S7InnerProblem>(const GenRequest&);

}  // namespace scanlab::properties
