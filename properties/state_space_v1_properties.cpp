// state_space_v1's properties (DESIGN.md's verification model), each a separate RapidCheck property
// with its own generator; the templates live in properties/harness.hpp, the generators in
// properties/generators.cpp. Every case draws a compiled-in Kokkos backend and a valid config.
#include "harness.hpp"

namespace scanlab::properties {
namespace {

using Op = OpTraits<StateSpaceV1Problem>;

TEST(StateSpaceV1, ForwardMatchesOracle) { forward_matches_oracle<Op>(); }
TEST(StateSpaceV1, BackwardMatchesOracle) { backward_matches_oracle<Op>(); }
TEST(StateSpaceV1, StateContinuationForward) { state_continuation<Op>(false); }
TEST(StateSpaceV1, StateContinuationBackward) { state_continuation<Op>(true); }
TEST(StateSpaceV1, ChunkSizeInvariance) { chunk_size_invariance<Op>(); }
TEST(StateSpaceV1, BatchPermutation) { batch_permutation<Op>(); }
TEST(StateSpaceV1, BackendsAgree) { backends_agree<Op>(); }
TEST(StateSpaceV1, BitwiseRepeatable) { bitwise_repeatable<Op>(); }
TEST(StateSpaceV1, BoundMutation) { bound_mutation<Op>(); }

}  // namespace
}  // namespace scanlab::properties
