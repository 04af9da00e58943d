// RapidCheck generators for every op's problems and input values. The problem (dims and options)
// is drawn with shrinkable integers and booleans, so a failure shrinks towards the smallest
// dims and the fewest options; the values are drawn by a seeded float generator per "regime",
// because RapidCheck's built-in floats (integer plus fraction) never reach the edges that matter:
//   selective_scan / state_space_v1: delta (dt) normal, tiny, huge and around the softplus
//     threshold 20 (kept at least 16 float32 ulps away from 20 so that float32 and float64 take
//     the same branch); A normal, near 0 and very negative; gates normal or large of either sign;
//   s7_scan / s7_inner: |A| normal, near 1/√2 (A_bar = 0), large (A_bar → 1) and small
//     (A_bar → −1); for s7_inner large gates of either sign.
// Sizes reach L = 1, N = 1, H = 1, odd and prime sizes, and L past every internal chunk.
// Every value is float32-representable, so the float32 kernels and the float64 oracle read the
// same numbers and the only differences are the kernels' own rounding.
// Each case carries tags ("delta:tiny", "seqlen:long", "option:has_z", ...) that the properties
// RC_TAG and count; harness.hpp asserts that every edge tag was drawn.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "kernels/backend.hpp"
#include "kernels/problem/s7_inner.hpp"
#include "kernels/problem/s7_scan.hpp"
#include "kernels/problem/selective_scan.hpp"
#include "kernels/problem/state_space_v1.hpp"

namespace scanlab::properties {

struct SizeLimits {
  // Elements of the largest tensor a case may hold (the oracle's cost grows with it).
  std::int64_t max_elements = 4000;
  // "seqlen:long" cases draw L in [long_seqlen, long_seqlen + 40): set it past every internal
  // chunk (harness.hpp derives it from the configs).
  std::int64_t long_seqlen = 257;
};

struct GenRequest {
  enum class Backward { never, always, either };
  Backward backward = Backward::either;
  bool allow_state_cotangent = true;  // dlast_state / dfinal_state with the backward
  bool allow_initial_state = true;
  std::int64_t min_seqlen = 1;        // 2 for the state-continuation properties
  std::int64_t min_batch = 1;         // 2 for the batch-permutation property
  SizeLimits limits;
};

template <class Problem>
struct GeneratedCase {
  Problem problem;
  TensorMap inputs;               // every input, and dout / the state cotangent with the backward
  std::vector<std::string> tags;  // regimes, size edges and options drawn
  std::uint64_t value_seed = 0;   // the float generator's seed (values are a function of it)
};

// The generator of a whole case (problem, then values) of one op.
template <class Problem>
rc::Gen<GeneratedCase<Problem>> gen_case(const GenRequest& request);

// Only the problem (dims and options).
template <class Problem>
rc::Gen<Problem> gen_problem(const GenRequest& request);

// The values of every input the problem names, in the regimes given ("delta" -> "tiny", ...).
// Deterministic in (problem, regimes, seed).
template <class Problem>
TensorMap make_inputs(const Problem& p, const std::map<std::string, std::string>& regimes, std::uint64_t seed,
                      std::vector<std::string>* tags = nullptr);

// The edge tags a run of gen_case with this request must reach (the properties assert them).
template <class Problem>
std::vector<std::string> edge_tags(const GenRequest& request);

// Size-independent draws that still shrink towards their first value. RapidCheck scales
// inRange by the test's size (small sizes draw only the lowest values), which would leave the
// large dims and the last choices undrawn for most of a run.
rc::Gen<std::size_t> gen_index(std::size_t count);            // uniform in [0, count)
rc::Gen<std::int64_t> gen_int(std::int64_t lo, std::int64_t hi);  // uniform in [lo, hi)
rc::Gen<bool> gen_bool();                                      // shrinks towards false
template <class T>
rc::Gen<T> gen_choice(std::vector<T> choices) {
  return rc::gen::map(gen_index(choices.size()), [choices](std::size_t i) { return choices[i]; });
}

// A Kokkos backend compiled into this binary.
rc::Gen<BackendKind> gen_kokkos_backend();

// Size edges of a problem as tags ("seqlen:1", "dstate:1", "seqlen:long", ...).
std::vector<std::string> size_tags(std::int64_t seqlen, const SizeLimits& limits);

// One-line descriptions, so RapidCheck's counterexample says what the case was.
std::string describe_problem(const SelectiveScanProblem& p);
std::string describe_problem(const StateSpaceV1Problem& p);
std::string describe_problem(const S7ScanProblem& p);
std::string describe_problem(const S7InnerProblem& p);

template <class Problem>
void showValue(const GeneratedCase<Problem>& c, std::ostream& os) {
  os << describe_problem(c.problem) << " value_seed=" << c.value_seed << " tags=[";
  for (std::size_t i = 0; i < c.tags.size(); ++i) os << (i ? " " : "") << c.tags[i];
  os << "]";
}

}  // namespace scanlab::properties
