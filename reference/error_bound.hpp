// The tolerance model shared by every op: a float32 result is compared with the float64 oracle
// element by element against a bound computed by a float64 "magnitude pass" (the op's recurrence
// run on absolute values, carrying first-order rounding terms). Never a fixed rtol/atol.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../kernels/tensor.hpp"

namespace scanlab::reference {

// Unit roundoff of float32 (round to nearest): every float32 operation's relative error.
inline constexpr double kEps32 = 0x1p-24;

// One constant multiplies every first-order term. The terms are worst-case magnitudes already
// (|a|·|b| for every product, full reduction lengths); the constant covers what first order drops
// and the kernels' own small liberties: fast exp/log/erf of up to ~2 ulp (CUDA's expf is 2 ulp,
// __expf far more and is not allowed), FMA contraction, and reductions reordered into chunks. 8
// leaves room for 2-ulp special functions plus reassociation (each reordering step costs at most
// one extra eps per term, already counted by using full reduction lengths), while a 2^-12
// relative error stays detectable wherever the bound is below 2^-13 of the value, i.e. whenever
// the result is not pure cancellation.
// s7_inner's pass is probabilistic instead (Higham–Mary: errors mean-zero, combined in
// quadrature, reference/s7_inner.cpp): there the same 8 is the λ of its tail bound, a failure
// probability below 2·exp(−λ²/2) ≈ 2.5e-14 per element; worst-case terms compounded through its
// ten stages left no element of any gradient testable.
inline constexpr double kBoundSafety = 8.0;

// The bound on |float32 result - exact| for an element whose first-order rounding terms sum to
// `terms` (already in units of the operations' magnitudes, not yet multiplied by eps).
inline double bound_from_terms(double terms) { return kBoundSafety * kEps32 * terms; }

// Outcome of comparing one tensor with the oracle.
struct TensorComparison {
  std::string name;
  std::int64_t elements = 0;
  double max_ratio = 0;        // max |got - expected| / bound over the elements (inf for NaN)
  std::int64_t worst_index = -1;
  double got = 0, expected = 0, bound = 0;  // at worst_index
  std::int64_t non_finite = 0;  // NaN or inf in got where expected is finite
  std::string problem;          // non-empty when the tensor is missing or has the wrong shape
  bool pass() const { return problem.empty() && non_finite == 0 && max_ratio <= 1.0; }
};

// Compares every tensor named in `bounds` that `expected` holds. A NaN never passes, and a
// bound of zero only accepts an exact match.
std::vector<TensorComparison> compare_with_bounds(const TensorMap& got, const TensorMap& expected,
                                                  const TensorMap& bounds);

bool all_pass(const std::vector<TensorComparison>& comparisons);
std::string describe(const std::vector<TensorComparison>& comparisons);  // a table, one row per tensor

}  // namespace scanlab::reference
