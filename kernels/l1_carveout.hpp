// The shared-memory carve-out a team kernel asks for on CUDA. Kokkos 3.4 launches every team
// kernel with cudaFuncCachePreferShared, i.e. the largest carve-out (233 KB on the H200, ~23 KB
// left for L1). Kernels whose threads read their own channel's steps from global memory and come
// back to the same sectors (direct_io's half-sector blocks, the backward's re-reads at a chunk's
// end) lose those hits to that L1, so they ask for the carve-out that just fits the teams an SM
// holds and leave the rest to L1 (reports/speed-notes.md §29, §30).
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "selective_scan_config.hpp"

namespace scanlab::kernels::detail {

// Sets the carve-out for the kernel Kokkos builds for Functor under TeamPolicy<Space, Bounds>:
// warps_per_sm warps of teams of team_size threads, each with scratch_floats of level-0 scratch.
// Call it before every launch (the size follows the launch's scratch) and after a kernel's first
// one (where Kokkos sets its own cache preference, once per kernel). Nothing off CUDA.
template <class Functor, class Bounds, class Space>
void fit_l1_carveout(const char* kernel, std::int64_t team_size, std::int64_t scratch_floats, int warps_per_sm,
                     bool after_launch) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
    static bool launched = false;  // per kernel
    if (after_launch && launched) return;
    if (after_launch) launched = true;
    using Driver = Kokkos::Impl::ParallelFor<Functor, Kokkos::TeamPolicy<Kokkos::Cuda, Bounds>, Kokkos::Cuda>;
    const auto func = Kokkos::Impl::CudaParallelLaunch<Driver, Bounds>::get_kernel_func();
    const std::int64_t teams_per_sm = std::max<std::int64_t>(1, warps_per_sm * 32 / std::max<std::int64_t>(1, team_size));
    // the team's request plus the 1 KB a block the driver reserves, in percent of the 228 KB an
    // H200 SM can carve out (rounded up; the driver takes the next carve-out size that fits)
    const std::int64_t bytes = teams_per_sm * (scratch_request_bytes(scratch_floats) + 1024);
    const int percent = int(std::min<std::int64_t>(100, (bytes * 100 + 228 * 1024 - 1) / (228 * 1024) + 1));
    const cudaError_t e =
        cudaFuncSetAttribute(reinterpret_cast<const void*>(func), cudaFuncAttributePreferredSharedMemoryCarveout, percent);
    if (e != cudaSuccess)
      throw std::runtime_error(std::string(kernel) + ": cudaFuncSetAttribute(carveout " + std::to_string(percent) +
                               "%): " + cudaGetErrorString(e));
  }
#else
  (void)kernel;
  (void)team_size;
  (void)scratch_floats;
  (void)warps_per_sm;
  (void)after_launch;
#endif
}

}  // namespace scanlab::kernels::detail
