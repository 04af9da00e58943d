// Kokkos initialises and a small kernel computes the right answer on every compiled-in space.
// On the H200 this is the cuda build's smoke test.
#include <gtest/gtest.h>

#include "kernels/backend.hpp"

TEST(Smoke, EveryCompiledBackendRunsAKernel) {
  const auto kinds = scanlab::compiled_kokkos_backends();
  ASSERT_FALSE(kinds.empty());
  for (auto kind : kinds) {
    SCOPED_TRACE(scanlab::to_string(kind) + " on " + scanlab::device_name(kind));
    EXPECT_EQ(scanlab::smoke_check(kind, 1 << 20), "");
  }
}
