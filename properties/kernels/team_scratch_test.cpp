// Kokkos 3.4's CUDA level-1 team scratch after an allocation that runs out of memory. Unpatched,
// resize_team_scratch_space recorded the new size before allocating it: the failed request threw,
// and the next launch got the old buffer (or null) for the recorded size, or reallocated null, a
// host segfault (session 37's `check state_space_v1 --backend cuda --seed 372`, whose fuzzed teams
// of one thread asked an H100 for 82.56 GB). scanlab's patch (scripts/kokkos-3.4.01-cuda13.patch)
// records it after success, and invalid_reason keeps scanlab's configs under half the GPU's memory
// of it. CUDA only: the host spaces give each thread its own scratch.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <exception>
#include <string>

#if defined(KOKKOS_ENABLE_CUDA)
namespace scanlab {
namespace {

using CudaTeams = Kokkos::TeamPolicy<Kokkos::Cuda>;

// Each team fills kInts of its level-1 scratch with its league rank, then one thread sums them.
struct FillLevelOneScratch {
  static constexpr int kInts = 4096;
  Kokkos::View<long*, Kokkos::CudaSpace> sums;
  KOKKOS_INLINE_FUNCTION void operator()(const CudaTeams::member_type& team) const {
    int* const s = static_cast<int*>(team.team_scratch(1).get_shmem(sizeof(int) * kInts));
    const int rank = team.league_rank();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kInts), [&](int i) { s[i] = rank + i; });
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&] {
      long total = 0;
      for (int i = 0; i < kInts; ++i) total += s[i];
      sums(rank) = total;
    });
  }
};

TEST(KernelSelectiveScan, TeamScratchOutOfMemoryThrowsAndCudaCarriesOn) {
  constexpr int kTeams = 512;
  Kokkos::View<long*, Kokkos::CudaSpace> sums("sums", kTeams);
  // The largest per-team request Kokkos takes, for every team of one thread the GPU can hold at
  // once: terabytes, past any GPU's memory.
  const std::size_t too_much = CudaTeams::scratch_size_max(1);
  const auto& cuda = *Kokkos::Cuda().impl_internal_space_instance();
#if KOKKOS_VERSION < 40000
  const auto size_before = cuda.m_team_scratch_current_size;
  const void* const buffer_before = cuda.m_team_scratch_ptr;
#endif
  // Kokkos 3.4 reports the failed cudaMalloc as a std::runtime_error naming the allocation (the
  // first H200 run of this test expected std::bad_alloc); any std::exception that says so will do.
  std::string error;
  try {
    Kokkos::parallel_for(CudaTeams(kTeams, 1).set_scratch_size(1, Kokkos::PerTeam(too_much)), FillLevelOneScratch{sums});
  } catch (const std::exception& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("TeamScratch"), std::string::npos) << "expected a failed team-scratch allocation, got: '"
                                                          << error << "'";
#if KOKKOS_VERSION < 40000
  EXPECT_EQ(cuda.m_team_scratch_current_size, size_before) << "the failed size was recorded";
  EXPECT_EQ(cuda.m_team_scratch_ptr, buffer_before);
#endif
  (void)cuda;
  // A launch that fits runs, and every team saw its own scratch.
  Kokkos::parallel_for(CudaTeams(kTeams, 64).set_scratch_size(1, Kokkos::PerTeam(sizeof(int) * FillLevelOneScratch::kInts)),
                       FillLevelOneScratch{sums});
  Kokkos::fence();
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sums);
  const long n = FillLevelOneScratch::kInts;
  for (int rank = 0; rank < kTeams; ++rank) ASSERT_EQ(host(rank), rank * n + n * (n - 1) / 2) << "team " << rank;
}

}  // namespace
}  // namespace scanlab
#endif
