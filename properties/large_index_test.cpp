// The large-index check itself must be able to fail, and pass on a correct kernel: run it at a
// small size on the host backends (the H200 run uses the same code at 2^31 + 13 elements).
#include <gtest/gtest.h>

#include "cli/large_index.hpp"
#include "kernels/backend.hpp"

using scanlab::cli::LargeIndexOptions;

TEST(LargeIndexCheck, PassesOnEveryHostBackendAtSmallSize) {
  for (auto kind : scanlab::compiled_kokkos_backends()) {
    if (kind == scanlab::BackendKind::cuda) continue;
    for (bool time_invariant : {false, true}) {
      LargeIndexOptions o;
      o.backend = kind;
      o.dim = 37; o.dstate = 4; o.seqlen = 101;
      o.time_invariant_BC = time_invariant;
      auto r = scanlab::cli::run_large_index_check(o);
      EXPECT_TRUE(r.pass) << r.report;
      EXPECT_EQ(r.highest_offset_checked, 37 * 101 - 1);
    }
  }
}

TEST(LargeIndexCheck, CatchesACorruptedOutput) {
  LargeIndexOptions o;
  o.backend = scanlab::BackendKind::serial;
  o.dim = 11; o.dstate = 2; o.seqlen = 17;
  o.corrupt_one_output = true;
  auto r = scanlab::cli::run_large_index_check(o);
  EXPECT_FALSE(r.pass) << r.report;
}
