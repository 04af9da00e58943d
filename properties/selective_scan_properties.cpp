// selective_scan's properties (DESIGN.md's verification model), each a separate RapidCheck property
// with its own generator; the templates live in properties/harness.hpp, the generators in
// properties/generators.cpp. Every case draws a compiled-in Kokkos backend and a valid config.
#include "harness.hpp"

namespace scanlab::properties {
namespace {

using Op = OpTraits<SelectiveScanProblem>;

TEST(SelectiveScan, ForwardMatchesOracle) { forward_matches_oracle<Op>(); }
TEST(SelectiveScan, BackwardMatchesOracle) { backward_matches_oracle<Op>(); }
TEST(SelectiveScan, StateContinuationForward) { state_continuation<Op>(false); }
TEST(SelectiveScan, StateContinuationBackward) { state_continuation<Op>(true); }
TEST(SelectiveScan, ChunkSizeInvariance) { chunk_size_invariance<Op>(); }
TEST(SelectiveScan, BatchPermutation) { batch_permutation<Op>(); }
TEST(SelectiveScan, BackendsAgree) { backends_agree<Op>(); }
TEST(SelectiveScan, BitwiseRepeatable) { bitwise_repeatable<Op>(); }
TEST(SelectiveScan, BoundMutation) { bound_mutation<Op>(); }

}  // namespace
}  // namespace scanlab::properties
