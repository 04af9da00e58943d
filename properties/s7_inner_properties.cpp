// s7_inner's properties (DESIGN.md's verification model), each a separate RapidCheck property
// with its own generator; the templates live in properties/harness.hpp, the generators in
// properties/generators.cpp. Every case draws a compiled-in Kokkos backend and a valid config.
#include "harness.hpp"

namespace scanlab::properties {
namespace {

using Op = OpTraits<S7InnerProblem>;

TEST(S7Inner, ForwardMatchesOracle) { forward_matches_oracle<Op>(); }
TEST(S7Inner, BackwardMatchesOracle) { backward_matches_oracle<Op>(); }
TEST(S7Inner, ChunkSizeInvariance) { chunk_size_invariance<Op>(); }
TEST(S7Inner, BatchPermutation) { batch_permutation<Op>(); }
TEST(S7Inner, BackendsAgree) { backends_agree<Op>(); }
TEST(S7Inner, BitwiseRepeatable) { bitwise_repeatable<Op>(); }
TEST(S7Inner, BoundMutation) { bound_mutation<Op>(); }

}  // namespace
}  // namespace scanlab::properties
