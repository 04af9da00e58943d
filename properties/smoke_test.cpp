// Kokkos initialises and a small kernel computes the right answer on every compiled-in space.
// On the H200 this is the cuda build's smoke test.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cfenv>
#include <cstdio>
#include <string>
#include <vector>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

#include "kernels/backend.hpp"

TEST(Smoke, EveryCompiledBackendRunsAKernel) {
  const auto kinds = scanlab::compiled_kokkos_backends();
  ASSERT_FALSE(kinds.empty());
  for (auto kind : kinds) {
    SCOPED_TRACE(scanlab::to_string(kind) + " on " + scanlab::device_name(kind));
    EXPECT_EQ(scanlab::smoke_check(kind, 1 << 20), "");
  }
}

// The calling thread's floating-point mode: on x86-64 MXCSR without its sticky exception flags
// (rounding, flush-to-zero, denormals-are-zero, the masks), elsewhere the rounding direction.
static unsigned host_fp_mode() {
#if defined(__x86_64__)
  return _mm_getcsr() & ~0x3Fu;
#else
  return unsigned(std::fegetround());
#endif
}

static std::string hex(unsigned v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%04x", v);
  return text;
}

// Serial runs on the main thread and OpenMP on its workers: the host backends can only agree bit
// for bit (KernelSelectiveScan.BitwiseRepeatableAndThreadCountIndependent) if every one of those
// threads rounds and treats subnormals alike, and the oracle's subnormal-keeping exp2 only means
// something if none of them flushes. MXCSR is per thread; a library that sets flush-to-zero on the
// main thread after the worker pool exists would split the two.
TEST(Smoke, HostThreadsShareTheIeeeFloatingPointMode) {
  const unsigned main_mode = host_fp_mode();
#if defined(__x86_64__)
  EXPECT_EQ(main_mode & 0x8040u, 0u) << "the main thread flushes subnormals (MXCSR " << hex(main_mode)
                                     << ": FTZ is bit 15, DAZ bit 6)";
#endif
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
#if defined(KOKKOS_ENABLE_OPENMP)
  const int threads = Kokkos::OpenMP().concurrency();
  // One slot per thread of Kokkos' pool (omp_get_thread_num() is below its size there).
  std::vector<unsigned> modes(std::size_t(threads), ~0u);
  // Enough static chunks that every worker of Kokkos' pool runs at least one.
  Kokkos::parallel_for(
      "fp_modes", Kokkos::RangePolicy<Kokkos::OpenMP, Kokkos::Schedule<Kokkos::Static>>(0, 64 * threads),
      [&](int) { modes[std::size_t(omp_get_thread_num())] = host_fp_mode(); });
  Kokkos::fence();
  int reported = 0;
  for (int t = 0; t < threads; ++t) {
    if (modes[std::size_t(t)] == ~0u) continue;
    ++reported;
    EXPECT_EQ(hex(modes[std::size_t(t)]), hex(main_mode)) << "OpenMP thread " << t << " of " << threads;
  }
  EXPECT_GT(reported, 0) << "no OpenMP worker reported its mode";
#endif
}
