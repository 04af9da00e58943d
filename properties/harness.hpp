// The property framework every op's properties file instantiates (written once, instantiated per
// op through its OpTraits, as Kokkos Kernels' impl_test_* templates are per TestCategory):
//   - drawing a valid kernel config per case: the registry's heuristic and candidates plus the
//     op's config axes (cli/op_traits.cpp), drawn field by field so that each value of each field
//     is drawn with probability at least 1/(its number of values) whenever it can run the case;
//   - Coverage: counters of every implementation, every compile-time specialisation value, every
//     backend and every edge regime; a property fails when one was not drawn (RC_TAG only prints);
//   - failure capture: a failing evaluation records its case; as RapidCheck shrinks, every failing
//     evaluation overwrites the record, so after rc's check returns the record is the minimal case,
//     which is saved as a case directory (case.json with seed and note, float64 .npy including dout
//     and the state cotangent, config.json, the backend's outputs under out-BACKEND/) under
//     $SCANLAB_FAILURE_DIR (default build/failures/), replayable with `scanlab replay DIR`;
//   - the property templates themselves (forward, backward, state continuation, chunk-size
//     invariance, batch permutation, backend agreement, bitwise repeatability, the bound's
//     mutation test).
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/detail/TestListener.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/case_runner.hpp"
#include "cli/op_traits.hpp"
#include "generators.hpp"
#include "reference/error_bound.hpp"

// How RapidCheck prints drawn backends and configs in a counterexample (found by ADL).
namespace scanlab {
inline void showValue(BackendKind kind, std::ostream& os) { os << to_string(kind); }
}  // namespace scanlab
namespace scanlab::kernels {
inline void showValue(const SelectiveScanConfig& c, std::ostream& os) { os << c.to_json().dump(); }
inline void showValue(const S7ScanConfig& c, std::ostream& os) { os << c.to_json().dump(); }
inline void showValue(const S7InnerConfig& c, std::ostream& os) { os << c.to_json().dump(); }
}  // namespace scanlab::kernels

namespace scanlab::properties {

using cli::OpTraits;
using reference::TensorComparison;

// ---------------------------------------------------------------------------------------------
// Coverage

// Tags drawn, counted; `required` tags must each be drawn at least once, `offered` tags (a config
// value that could run some drawn case) become required when offered.
class Coverage {
 public:
  void require(const std::string& tag);
  void require(const std::vector<std::string>& tags);
  void offer(const std::string& tag);  // becomes required
  void hit(const std::string& tag);
  void hit(const std::vector<std::string>& tags);
  std::vector<std::string> missing() const;
  std::string report() const;  // every tag with its count, required ones marked
  int count(const std::string& tag) const;
  // Asserts coverage however few cases ran (the harness's own test of the assertion, which must
  // not depend on RC_PARAMS).
  bool assert_at_any_count = false;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, int> hits_;
  std::set<std::string> required_;
};

// Coverage is asserted only when a property ran at least this many cases (RapidCheck's own
// default of 100 is raised to kDefaultCases for these properties unless RC_PARAMS sets
// max_success; a smaller explicit max_success prints the coverage without asserting it).
inline constexpr int kCoverageMinCases = 150;
inline constexpr int kDefaultCases = 300;

// ---------------------------------------------------------------------------------------------
// Failure capture

struct FailureRecord {
  io::Case c;                  // op, options, every input (dout and the state cotangent included)
  nlohmann::json config;       // the kernel config (null when none)
  std::string backend;         // e.g. "openmp", for the replay line
  TensorMap got;               // what the backend produced, saved under out-BACKEND/
  std::string message;         // the comparison table or the exception
  std::string property;        // e.g. "SelectiveScan.ForwardMatchesOracle"
};
// Keeps the latest record; RapidCheck's last failing evaluation is its minimal case.
void record_failure(FailureRecord record);
void clear_failure();
std::optional<FailureRecord> last_failure();
// Saves a record under cli::failure_root(); returns the directory. `seed` goes into case.json's
// seed, `reproduce_line` (the command that repeats the failure) into its note.
std::string save_failure(const FailureRecord& record, std::uint64_t seed, const std::string& reproduce_line);

// Runs a property as the current gtest test: RapidCheck with the global configuration (RC_PARAMS;
// max_success defaults to kDefaultCases), saving the minimal failing case, then asserts coverage.
// Failures are reported to RapidCheck's global listener (which prints the RC_PARAMS line at exit)
// unless another listener is given (the harness's own tests pass a silent one).
void run_property(Coverage& coverage, const std::function<void()>& property,
                  rc::detail::TestListener* listener = nullptr);

// While alive, run_property reports to `listener` instead of RapidCheck's global one (so the
// harness's own tests of failing properties do not print reproduce lines at exit).
class ScopedPropertyListener {
 public:
  explicit ScopedPropertyListener(rc::detail::TestListener* listener);
  ~ScopedPropertyListener();

 private:
  rc::detail::TestListener* previous_;
};

// ---------------------------------------------------------------------------------------------
// Tensor helpers (generic: shapes come from the descriptors)

// For each tensor the descriptor names, the axis along which it runs in time (absent: none),
// found by comparing the descriptor's shapes at seqlen and seqlen + 1. Likewise the batch axis.
std::map<std::string, int> axes_that_change(const std::vector<TensorSpec>& a, const std::vector<TensorSpec>& b);
template <class P>
std::map<std::string, int> time_axes(const P& p) {
  P q = p;
  q.seqlen = p.seqlen + 1;
  return axes_that_change(p.tensors(), q.tensors());
}
template <class P>
std::map<std::string, int> batch_axes(const P& p) {
  P q = p;
  q.batch = p.batch + 1;
  return axes_that_change(p.tensors(), q.tensors());
}
Tensor slice_axis(const Tensor& t, int axis, std::int64_t begin, std::int64_t end);
Tensor concat_axis(const Tensor& a, const Tensor& b, int axis);
Tensor permute_axis(const Tensor& t, int axis, const std::vector<std::int64_t>& order);  // out[i] = t[order[i]]
Tensor add(const Tensor& a, const Tensor& b);
TensorMap scaled(const TensorMap& bounds, double factor);
// Only the entries of `m` whose names are in `names`.
TensorMap restrict_to(const TensorMap& m, const std::vector<std::string>& names);
// "" when equal bit for bit, else where they differ first.
std::string bitwise_difference(const TensorMap& a, const TensorMap& b);
double f32(double v);
double ulp32(double v);  // one float32 ulp at v

std::string join(const std::vector<std::string>& parts, const std::string& sep);

// ---------------------------------------------------------------------------------------------
// Configs

// Every valid config the properties may draw for (p, backend): the heuristic, the candidates, each
// implementation with the heuristic's other fields, and every axis value applied to the heuristic
// and to each implementation's variant of it (one field changed at a time; the candidates vary
// several fields together). Deduplicated, as JSON objects in a stable order (the heuristic first).
template <class T>
std::vector<nlohmann::json> config_pool(const typename T::Problem& p, BackendKind kind) {
  using Config = typename T::Config;
  std::vector<nlohmann::json> pool;
  std::set<std::string> seen;
  auto add = [&](const Config& c) {
    if (!T::invalid_reason(c, p, kind).empty()) return;
    nlohmann::json j = c.to_json();
    if (seen.insert(j.dump()).second) pool.push_back(j);
  };
  std::vector<Config> bases;
  const Config heuristic = T::heuristic(p, kind);
  bases.push_back(heuristic);
  for (const auto& impl : T::implementations()) {
    Config c = heuristic;
    T::set_impl(c, impl);
    bases.push_back(c);
  }
  for (const auto& base : bases) add(base);
  for (const auto& c : T::candidates(p, kind)) add(c);
  const auto axes = T::config_axes();
  for (const auto& base : bases) {
    const nlohmann::json base_json = base.to_json();
    for (const auto& axis : axes) {
      if (!base_json.contains(axis.field)) continue;
      for (const auto& value : axis.values) {
        nlohmann::json j = base_json;
        j[axis.field] = value;
        try {
          add(T::Config::from_json(j));
        } catch (const std::exception&) {
        }
      }
    }
  }
  return pool;
}

// Field order of the field-by-field draw: impl, the specialisation axes, the other axes, the rest.
template <class T>
std::vector<std::string> draw_order(const nlohmann::json& example) {
  std::vector<std::string> order{"impl"};
  const auto axes = T::config_axes();
  for (bool specialisation : {true, false})
    for (const auto& a : axes)
      if (a.specialisation == specialisation && example.contains(a.field)) order.push_back(a.field);
  for (auto it = example.begin(); it != example.end(); ++it)
    if (std::find(order.begin(), order.end(), it.key()) == order.end()) order.push_back(it.key());
  return order;
}

// Draws from a pool field by field: for each field in draw_order, a value among those the
// remaining configs hold, then keeps the configs with that value. Shrinks towards the heuristic.
// The pool holds single-field variants, so that draw almost never combines two non-default fields
// (a mutation that dropped the s7 walk's split sum passed 1000 random checks, session 7). With
// mixing.fields and a validity test, each of those is then re-drawn with probability 1/2 among
// every value the pool holds for it, and kept where the config stays valid (shrinks to no mixing).
struct PoolMixing {
  std::vector<std::string> fields;
  std::function<bool(const nlohmann::json&)> valid;
};
rc::Gen<nlohmann::json> gen_from_pool(std::vector<nlohmann::json> pool, std::vector<std::string> order,
                                      PoolMixing mixing = {});

// The non-specialisation axes (the specialisations keep the pool's draw, which coverage counts) and
// T's validity test on (p, kind).
template <class T>
PoolMixing pool_mixing(const typename T::Problem& p, BackendKind kind) {
  PoolMixing m;
  for (const auto& axis : T::config_axes())
    if (!axis.specialisation) m.fields.push_back(axis.field);
  m.valid = [p, kind](const nlohmann::json& j) {
    try {
      return T::invalid_reason(T::Config::from_json(j), p, kind).empty();
    } catch (const std::exception&) {
      return false;
    }
  };
  return m;
}

// Draws a config from a pool (config_pool<T>), field by field, then mixed.
template <class T>
rc::Gen<typename T::Config> gen_config_from(std::vector<nlohmann::json> pool, PoolMixing mixing) {
  if (pool.empty()) throw std::logic_error(std::string(T::name) + ": no valid config to draw from");
  auto order = draw_order<T>(pool.front());
  return rc::gen::map(gen_from_pool(std::move(pool), std::move(order), std::move(mixing)),
                      [](const nlohmann::json& j) { return T::Config::from_json(j); });
}

template <class T>
rc::Gen<typename T::Config> gen_config(const typename T::Problem& p, BackendKind kind) {
  auto pool = config_pool<T>(p, kind);
  if (pool.empty())
    throw std::logic_error(std::string(T::name) + ": no valid config for " + describe_problem(p) + " on " +
                           to_string(kind) + " (not even the heuristic)");
  return gen_config_from<T>(std::move(pool), pool_mixing<T>(p, kind));
}

// Coverage bookkeeping for a config drawn from `pool`: its implementation, backend and
// specialisation values are hit; every implementation and every compiled backend is required, and
// every specialisation value that some config in the pool holds is offered (and so becomes
// required).
template <class T>
void cover_config(Coverage& coverage, const std::vector<nlohmann::json>& pool, BackendKind kind,
                  const typename T::Config& c) {
  for (const auto& impl : T::implementations()) coverage.require("impl:" + impl);
  for (auto compiled : compiled_kokkos_backends()) coverage.require("backend:" + to_string(compiled));
  coverage.hit("impl:" + T::impl_of(c));
  coverage.hit("backend:" + to_string(kind));
  const nlohmann::json j = c.to_json();
  for (const auto& axis : T::config_axes()) {
    if (!axis.specialisation || !j.contains(axis.field)) continue;
    for (const auto& other : pool)
      if (other.contains(axis.field)) coverage.offer("config:" + axis.field + "=" + other[axis.field].dump());
    coverage.hit("config:" + axis.field + "=" + j[axis.field].dump());
  }
}

// The longest internal chunk any config can use (fields named *chunk*), so that "seqlen:long"
// cases run past all of them; capped to keep the oracle cheap.
template <class T>
std::int64_t longest_chunk() {
  std::int64_t longest = 0;
  auto scan = [&](const nlohmann::json& j) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key().find("chunk") != std::string::npos && it->is_number_integer())
        longest = std::max<std::int64_t>(longest, it->get<std::int64_t>());
  };
  for (const auto& axis : T::config_axes())
    if (axis.field.find("chunk") != std::string::npos)
      for (const auto& v : axis.values) scan(nlohmann::json{{axis.field, v}});
  typename T::Problem probe;
  probe.seqlen = 4096;
  for (auto kind : compiled_kokkos_backends()) {
    scan(T::heuristic(probe, kind).to_json());
    for (const auto& c : T::candidates(probe, kind)) scan(c.to_json());
  }
  return std::min<std::int64_t>(longest, 1024);
}

template <class T>
GenRequest base_request() {
  GenRequest r;
  r.limits.long_seqlen = longest_chunk<T>() + 1;
  r.limits.max_elements = std::max<std::int64_t>(r.limits.max_elements, 6 * r.limits.long_seqlen);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Running and comparing

template <class T>
struct Drawn {
  GeneratedCase<typename T::Problem> gc;
  BackendKind backend;
  std::vector<nlohmann::json> pool;  // every config drawable for (problem, backend)
  typename T::Config config;
};

// Draws a case, a backend and a config, and counts them.
template <class T>
Drawn<T> draw(Coverage& coverage, const GenRequest& request) {
  Drawn<T> d{*gen_case<typename T::Problem>(request), *gen_kokkos_backend(), {}, {}};
  d.pool = config_pool<T>(d.gc.problem, d.backend);
  d.config = *gen_config_from<T>(d.pool, pool_mixing<T>(d.gc.problem, d.backend));
  coverage.hit(d.gc.tags);
  cover_config<T>(coverage, d.pool, d.backend, d.config);
  std::vector<std::string> regimes;
  for (const auto& t : d.gc.tags)
    if (t.rfind("option:", 0) != 0 && t.rfind("seqlen:", 0) != 0 && t.rfind("dstate:", 0) != 0 && t.rfind("dim:", 0) != 0)
      regimes.push_back(t);
  RC_TAG(join(regimes, " "));
  return d;
}

template <class T>
io::Case as_case(const typename T::Problem& p, const TensorMap& inputs) {
  return io::Case{T::name, p.options_json(), inputs};
}

// Records the failure and fails the RapidCheck case.
[[noreturn]] void fail_case(FailureRecord record);

// Runs the kernel; an exception is a recorded failure of the case.
template <class T>
TensorMap run_kernel(const typename T::Problem& p, const TensorMap& inputs, BackendKind kind,
                     const typename T::Config& config, const std::string& property) {
  try {
    return T::run(p, inputs, kind, config);
  } catch (const std::exception& e) {
    fail_case({as_case<T>(p, inputs), config.to_json(), to_string(kind), {}, std::string("kernel threw: ") + e.what(),
               property});
  }
}

struct Oracle {
  TensorMap expected, bounds;
};
template <class T>
Oracle oracle(const typename T::Problem& p, const TensorMap& inputs) {
  return {T::reference(p, inputs), T::error_bound(p, inputs)};
}

// Compares and, on failure, records and fails the case.
void require_within(const TensorMap& got, const TensorMap& expected, const TensorMap& bounds, FailureRecord context,
                    const std::string& what);

std::string current_test_name();

// ---------------------------------------------------------------------------------------------
// The properties

// The op's outputs (and with the backward, every gradient: the initial state's and through the
// last state included) equal the oracle within the float64 error bound.
template <class T>
void matches_oracle(GenRequest::Backward backward, const char* what) {
  Coverage coverage;
  GenRequest request = base_request<T>();
  request.backward = backward;
  coverage.require(edge_tags<typename T::Problem>(request));
  run_property(coverage, [&] {
    auto d = draw<T>(coverage, request);
    const auto& p = d.gc.problem;
    const TensorMap got = run_kernel<T>(p, d.gc.inputs, d.backend, d.config, current_test_name());
    const Oracle o = oracle<T>(p, d.gc.inputs);
    require_within(got, o.expected, o.bounds,
                   {as_case<T>(p, d.gc.inputs), d.config.to_json(), to_string(d.backend), got, "", current_test_name()},
                   what);
  });
}
template <class T>
void forward_matches_oracle() {
  matches_oracle<T>(GenRequest::Backward::never, "forward vs oracle");
}
template <class T>
void backward_matches_oracle() {
  matches_oracle<T>(GenRequest::Backward::always, "forward and backward vs oracle");
}

// Running [0,k) and then [k,L) from the carried state equals the oracle's [0,L) within the bound.
// With the backward, the tail runs first from the head's state, and the head's backward takes the
// tail's initial-state gradient as its state cotangent; gradients of time-varying inputs are
// concatenated, those of the others summed. Head and tail draw their own configs.
template <class T>
void state_continuation(bool backward) {
  static_assert(T::has_state, "state continuation needs an op with a state");
  using P = typename T::Problem;
  Coverage coverage;
  GenRequest request = base_request<T>();
  request.backward = backward ? GenRequest::Backward::always : GenRequest::Backward::never;
  request.min_seqlen = 2;
  coverage.require(edge_tags<P>(request));
  run_property(coverage, [&] {
    auto d = draw<T>(coverage, request);
    const P& full = d.gc.problem;
    const TensorMap& in = d.gc.inputs;
    const std::int64_t L = full.seqlen;
    const std::int64_t k = *gen_int(1, L);
    RC_TAG(k == 1 ? "split:first_step" : k == L - 1 ? "split:last_step" : "split:inside");
    const auto axes = time_axes(full);
    auto part_inputs = [&](const P& part, std::int64_t begin, std::int64_t end) {
      TensorMap m;
      for (const auto& spec : part.tensors()) {
        if (spec.role != TensorRole::input && spec.role != TensorRole::grad_input) continue;
        const Tensor* t = find(in, spec.name);
        if (!t) continue;
        auto axis = axes.find(spec.name);
        m[spec.name] = axis == axes.end() ? *t : slice_axis(*t, axis->second, begin, end);
      }
      return m;
    };
    P head = full, tail = full;
    head.seqlen = k;
    tail.seqlen = L - k;
    T::set_initial_state(tail, true);
    T::set_backward(head, false);  // the head's forward first: it gives the carried state
    P head_b = head;               // then, with the backward, the head again
    T::set_backward(head_b, true);
    T::set_state_cotangent(head_b, true);
    // The head's config must run both head passes.
    std::vector<nlohmann::json> head_pool;
    for (const auto& j : config_pool<T>(backward ? head_b : head, d.backend)) {
      const auto config = T::Config::from_json(j);
      // Both passes must accept it: the backward needs more scratch than the forward.
      if (T::invalid_reason(config, head, d.backend).empty() &&
          (!backward || T::invalid_reason(config, head_b, d.backend).empty()))
        head_pool.push_back(j);
    }
    PoolMixing head_mixing = pool_mixing<T>(head, d.backend);
    if (backward) {
      const PoolMixing with_backward = pool_mixing<T>(head_b, d.backend);
      head_mixing.valid = [a = head_mixing.valid, b = with_backward.valid](const nlohmann::json& j) {
        return a(j) && b(j);
      };
    }
    const auto head_config = *gen_config_from<T>(head_pool, head_mixing);
    const auto tail_config = *gen_config<T>(tail, d.backend);
    const std::string name = current_test_name();
    const TensorMap head_fwd = run_kernel<T>(head, part_inputs(head, 0, k), d.backend, head_config, name);
    TensorMap tail_in = part_inputs(tail, k, L);
    tail_in[T::initial_state] = require(head_fwd, T::state_output);
    const TensorMap tail_out = run_kernel<T>(tail, tail_in, d.backend, tail_config, name);
    TensorMap head_out = head_fwd;
    if (backward) {
      TensorMap head_in = part_inputs(head_b, 0, k);
      head_in[T::state_cotangent] = require(tail_out, std::string("d") + T::initial_state);
      head_out = run_kernel<T>(head_b, head_in, d.backend, head_config, name);
    }
    // Stitch: time axes concatenated, the state from the tail, other gradients summed, the
    // initial-state gradient from the head.
    TensorMap stitched;
    const bool full_has_initial = find(in, T::initial_state) != nullptr;
    std::set<std::string> names;
    for (const TensorMap* m : std::initializer_list<const TensorMap*>{&head_out, &tail_out})
      for (const auto& entry : *m) names.insert(entry.first);
    for (const auto& name : names) {
      const Tensor* h = find(head_out, name);
      const Tensor* t = find(tail_out, name);
      const bool gradient = name.size() > 1 && name[0] == 'd' && find(in, name.substr(1)) != nullptr;
      auto axis = axes.find(name);
      if (name == std::string("d") + T::initial_state) {
        if (full_has_initial && h) stitched[name] = *h;  // the tail's is the carried cotangent
      } else if (name == T::state_output) {
        if (t) stitched[name] = *t;
      } else if (axis != axes.end()) {
        if (h && t) stitched[name] = concat_axis(*h, *t, axis->second);
      } else if (gradient) {
        if (h && t) stitched[name] = add(*h, *t);
      } else if (t) {
        stitched[name] = *t;  // passthroughs (state_space_v1's conv_state)
      }
    }
    const Oracle o = oracle<T>(full, in);
    FailureRecord context{as_case<T>(full, in), head_config.to_json(), to_string(d.backend), stitched, "", name};
    context.c.options["note"] = "state continuation split at k=" + std::to_string(k) + " (head config " +
                                head_config.to_json().dump() + ", tail config " + tail_config.to_json().dump() + ")";
    require_within(stitched, o.expected, o.bounds, context, "split at k=" + std::to_string(k) + " vs oracle [0,L)");
  });
}

// Two random valid configs (of different chunk lengths whenever the registry offers them) agree:
// |a − b| ≤ 2·bound, as each is within the bound of the exact result.
template <class T>
void chunk_size_invariance() {
  Coverage coverage;
  GenRequest request = base_request<T>();
  coverage.require(edge_tags<typename T::Problem>(request));
  coverage.require("chunk:differs");
  run_property(coverage, [&] {
    auto d = draw<T>(coverage, request);
    const auto& p = d.gc.problem;
    // The second config: one whose chunk fields differ from the first's when there is one.
    const auto& pool = d.pool;
    const nlohmann::json first = d.config.to_json();
    auto chunk_of = [](const nlohmann::json& j) {
      nlohmann::json c = nlohmann::json::object();
      for (auto it = j.begin(); it != j.end(); ++it)
        if (it.key().find("chunk") != std::string::npos) c[it.key()] = *it;
      return c;
    };
    std::vector<nlohmann::json> other;
    for (const auto& j : pool)
      if (chunk_of(j) != chunk_of(first)) other.push_back(j);
    if (other.empty()) other = pool;
    const auto second = T::Config::from_json(*gen_from_pool(other, draw_order<T>(pool.front())));
    cover_config<T>(coverage, pool, d.backend, second);
    if (chunk_of(second.to_json()) != chunk_of(first)) coverage.hit("chunk:differs");
    const std::string name = current_test_name();
    const TensorMap a = run_kernel<T>(p, d.gc.inputs, d.backend, d.config, name);
    const TensorMap b = run_kernel<T>(p, d.gc.inputs, d.backend, second, name);
    const Oracle o = oracle<T>(p, d.gc.inputs);
    FailureRecord context{as_case<T>(p, d.gc.inputs), first, to_string(d.backend), a, "", name};
    context.c.options["note"] = "config " + first.dump() + " vs config " + second.to_json().dump();
    require_within(a, b, scaled(o.bounds, 2.0), context,
                   "config " + first.dump() + " vs config " + second.to_json().dump() + " (bound ×2)");
  });
}

// Permuting the batch permutes every batched output bit for bit; outputs without a batch axis
// (gradients of shared parameters, which sum over the batch in another order) agree within 2·bound.
template <class T>
void batch_permutation() {
  using P = typename T::Problem;
  Coverage coverage;
  GenRequest request = base_request<T>();
  request.min_batch = 2;
  coverage.require(edge_tags<P>(request));
  run_property(coverage, [&] {
    auto d = draw<T>(coverage, request);
    P p = d.gc.problem;
    const auto axes = batch_axes(p);
    std::vector<std::int64_t> order(static_cast<std::size_t>(p.batch));
    for (std::int64_t i = 0; i < p.batch; ++i) order[static_cast<std::size_t>(i)] = i;
    std::mt19937_64 rng(d.gc.value_seed ^ 0x9e3779b97f4a7c15ull);
    std::shuffle(order.begin(), order.end(), rng);
    if (std::is_sorted(order.begin(), order.end())) std::reverse(order.begin(), order.end());
    TensorMap permuted_in;
    for (const auto& [name, t] : d.gc.inputs) {
      auto axis = axes.find(name);
      permuted_in[name] = axis == axes.end() ? t : permute_axis(t, axis->second, order);
    }
    const std::string test = current_test_name();
    const TensorMap a = run_kernel<T>(p, d.gc.inputs, d.backend, d.config, test);
    const TensorMap b = run_kernel<T>(p, permuted_in, d.backend, d.config, test);
    TensorMap a_permuted, a_shared, b_shared;
    for (const auto& [name, t] : a) {
      auto axis = axes.find(name);
      if (axis != axes.end()) {
        a_permuted[name] = permute_axis(t, axis->second, order);
      } else {
        a_shared[name] = t;
        if (const Tensor* bt = find(b, name)) b_shared[name] = *bt;
      }
    }
    TensorMap b_batched;
    for (const auto& [name, t] : b)
      if (axes.count(name)) b_batched[name] = t;
    const std::string diff = bitwise_difference(a_permuted, b_batched);
    if (!diff.empty()) {
      FailureRecord r{as_case<T>(p, d.gc.inputs), d.config.to_json(), to_string(d.backend), a,
                      "batch permutation is not bitwise: " + diff, test};
      std::string order_text;
      for (auto i : order) order_text += std::to_string(i) + " ";
      r.c.options["note"] = "batch order " + order_text + ": " + diff;
      fail_case(r);
    }
    if (!a_shared.empty()) {
      const Oracle o = oracle<T>(p, d.gc.inputs);
      require_within(b_shared, a_shared, scaled(restrict_to(o.bounds, [&] {
                                                  std::vector<std::string> n;
                                                  for (auto& [k, v] : a_shared) n.push_back(k);
                                                  return n;
                                                }()),
                                                2.0),
                     {as_case<T>(p, d.gc.inputs), d.config.to_json(), to_string(d.backend), a, "", test},
                     "shared-parameter gradients, permuted batch (bound ×2)");
    }
  });
}

// Two different backends (Serial vs OpenMP here; CUDA vs a host space when CUDA is compiled in),
// each with its own drawn config, agree within 2·bound.
template <class T>
void backends_agree() {
  const auto kinds = compiled_kokkos_backends();
  if (kinds.size() < 2) GTEST_SKIP() << "only one Kokkos backend is compiled in";
  Coverage coverage;
  GenRequest request = base_request<T>();
  coverage.require(edge_tags<typename T::Problem>(request));
  for (std::size_t i = 0; i < kinds.size(); ++i)
    for (std::size_t j = i + 1; j < kinds.size(); ++j)
      coverage.require("pair:" + to_string(kinds[i]) + "-" + to_string(kinds[j]));
  run_property(coverage, [&] {
    auto d = draw<T>(coverage, request);
    const auto& p = d.gc.problem;
    std::vector<BackendKind> others;
    for (auto k : kinds)
      if (k != d.backend) others.push_back(k);
    const BackendKind other = *gen_choice(others);
    const auto other_pool = config_pool<T>(p, other);
    const auto other_config = *gen_config_from<T>(other_pool, pool_mixing<T>(p, other));
    cover_config<T>(coverage, other_pool, other, other_config);
    const auto lo = std::min(d.backend, other), hi = std::max(d.backend, other);
    coverage.hit("pair:" + to_string(lo) + "-" + to_string(hi));
    const std::string name = current_test_name();
    const TensorMap a = run_kernel<T>(p, d.gc.inputs, d.backend, d.config, name);
    const TensorMap b = run_kernel<T>(p, d.gc.inputs, other, other_config, name);
    const Oracle o = oracle<T>(p, d.gc.inputs);
    FailureRecord context{as_case<T>(p, d.gc.inputs), d.config.to_json(), to_string(d.backend), a, "", name};
    context.c.options["note"] = to_string(d.backend) + " " + d.config.to_json().dump() + " vs " + to_string(other) +
                                " " + other_config.to_json().dump();
    require_within(a, b, scaled(o.bounds, 2.0), context,
                   to_string(d.backend) + " vs " + to_string(other) + " (bound ×2)");
  });
}

// The same config twice gives the same bits, forward and backward (no floating-point atomics,
// reductions in a fixed order).
template <class T>
void bitwise_repeatable() {
  Coverage coverage;
  GenRequest request = base_request<T>();
  coverage.require(edge_tags<typename T::Problem>(request));
  run_property(coverage, [&] {
    auto d = draw<T>(coverage, request);
    const auto& p = d.gc.problem;
    const std::string name = current_test_name();
    const TensorMap a = run_kernel<T>(p, d.gc.inputs, d.backend, d.config, name);
    const TensorMap b = run_kernel<T>(p, d.gc.inputs, d.backend, d.config, name);
    const std::string diff = bitwise_difference(a, b);
    if (!diff.empty()) {
      FailureRecord r{as_case<T>(p, d.gc.inputs), d.config.to_json(), to_string(d.backend), a,
                      "two runs differ: " + diff, name};
      r.c.options["note"] = "not bitwise repeatable: " + diff;
      fail_case(r);
    }
  });
}

// The bound has teeth: the oracle's result rounded to float32, and with ±1 float32 ulp of noise
// on every element the bound allows any error at, passes; a 2^-12 relative error injected into an
// element whose bound is below 2^-13 of its value (not dominated by cancellation) fails, in every
// output and gradient tensor. A loose bound would still fail those injections (it merely finds
// fewer elements it calls clear), so the test also counts how often the bound declares a tensor's
// largest element cancellation noise (bound above 2^-13 of the value): for the forward outputs
// that may happen in at most half the cases (the generators' edge regimes make about one in five),
// and every gradient must take an injection in some case. No kernel runs here.
template <class T>
void bound_mutation() {
  using P = typename T::Problem;
  Coverage coverage;
  GenRequest request = base_request<T>();
  coverage.require(edge_tags<P>(request));
  {
    P probe;
    T::set_backward(probe, true);
    for (const auto& spec : cli::expected_outputs(probe.tensors())) coverage.require("mutation:" + spec.name);
  }
  std::set<std::string> tensor_names;
  run_property(coverage, [&] {
    auto gc = *gen_case<P>(request);
    coverage.hit(gc.tags);
    const auto& p = gc.problem;
    const Oracle o = oracle<T>(p, gc.inputs);
    std::mt19937_64 rng(gc.value_seed + 1);
    TensorMap rounded, noisy;
    for (const auto& [name, e] : o.expected) {
      if (!o.bounds.count(name)) continue;
      const Tensor& bound = o.bounds.at(name);
      Tensor r = e, n = e;
      for (std::int64_t i = 0; i < e.numel(); ++i) {
        r[i] = f32(e[i]);
        const double noise = bound[i] > 0 ? ((rng() & 1) ? 1.0 : -1.0) * ulp32(r[i]) : 0.0;
        n[i] = f32(r[i] + noise);
      }
      rounded[name] = r;
      noisy[name] = n;
    }
    FailureRecord context{as_case<T>(p, gc.inputs), nullptr, "reference", rounded, "", current_test_name()};
    require_within(rounded, o.expected, o.bounds, context, "oracle rounded to float32");
    context.got = noisy;
    require_within(noisy, o.expected, o.bounds, context, "oracle rounded to float32 ±1 ulp");
    auto clear = [&](const Tensor& exact, const Tensor& bound, std::int64_t i) {
      return std::isfinite(exact[i]) && exact[i] != 0 && bound[i] <= std::ldexp(std::fabs(exact[i]), -13);
    };
    auto inject = [&](const std::string& name, std::int64_t i) {
      const Tensor& exact = o.expected.at(name);
      TensorMap mutated = rounded;
      const double sign = (rng() & 1) ? 1.0 : -1.0;
      mutated[name][i] = f32(exact[i] * (1 + sign * std::ldexp(1.0, -12)));
      const auto rows = reference::compare_with_bounds(mutated, o.expected, o.bounds);
      for (const auto& row : rows)
        if (row.name == name && row.pass()) {
          context.got = mutated;
          context.message = "a 2^-12 relative error in " + name + "[" + std::to_string(i) + "] (bound " +
                            std::to_string(o.bounds.at(name)[i]) + ", value " + std::to_string(exact[i]) +
                            ") passed the bound:\n" + reference::describe(rows);
          fail_case(context);
        }
    };
    for (const auto& [name, e] : rounded) {
      const Tensor& bound = o.bounds.at(name);
      const Tensor& exact = o.expected.at(name);
      // The largest element: the one least likely to be cancellation noise.
      std::int64_t largest = 0;
      for (std::int64_t i = 1; i < exact.numel(); ++i)
        if (std::fabs(exact[i]) > std::fabs(exact[largest])) largest = i;
      if (exact.numel() == 0 || exact[largest] == 0) continue;  // an all-zero tensor has nothing to inject into
      tensor_names.insert(name);
      coverage.hit("tried:" + name);
      if (!clear(exact, bound, largest)) continue;
      coverage.hit("largest-clear:" + name);
      inject(name, largest);
      std::vector<std::int64_t> candidates;
      for (std::int64_t i = 0; i < exact.numel(); ++i)
        if (clear(exact, bound, i)) candidates.push_back(i);
      inject(name, candidates[rng() % candidates.size()]);
      coverage.hit("mutation:" + name);
    }
  });
  std::set<std::string> forward_outputs;
  {
    P probe;
    for (const auto& spec : probe.tensors())
      if (spec.role == TensorRole::output) forward_outputs.insert(spec.name);
  }
  for (const auto& name : tensor_names) {
    const int tried = coverage.count("tried:" + name), cleared = coverage.count("largest-clear:" + name);
    if (tried < 20 || !forward_outputs.count(name)) continue;
    EXPECT_GE(2 * cleared, tried)
        << "the bound is too loose for " << name << ": it calls the largest element cancellation noise (bound > 2^-13 "
        << "of the value) in " << tried - cleared << " of " << tried << " cases";
  }
}

}  // namespace scanlab::properties
