// s7_scan's properties (DESIGN.md's verification model), each a separate RapidCheck property
// with its own generator; the templates live in properties/harness.hpp, the generators in
// properties/generators.cpp. Every case draws a compiled-in Kokkos backend and a valid config.
#include "harness.hpp"

namespace scanlab::properties {
namespace {

using Op = OpTraits<S7ScanProblem>;

TEST(S7Scan, ForwardMatchesOracle) { forward_matches_oracle<Op>(); }
TEST(S7Scan, BackwardMatchesOracle) { backward_matches_oracle<Op>(); }
TEST(S7Scan, StateContinuationForward) { state_continuation<Op>(false); }
TEST(S7Scan, StateContinuationBackward) { state_continuation<Op>(true); }
TEST(S7Scan, ChunkSizeInvariance) { chunk_size_invariance<Op>(); }
TEST(S7Scan, BatchPermutation) { batch_permutation<Op>(); }
TEST(S7Scan, BackendsAgree) { backends_agree<Op>(); }
TEST(S7Scan, BitwiseRepeatable) { bitwise_repeatable<Op>(); }
TEST(S7Scan, BoundMutation) { bound_mutation<Op>(); }

}  // namespace
}  // namespace scanlab::properties
