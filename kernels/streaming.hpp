// The project's Kokkos streaming pattern: how a kernel that walks memory once should launch.
//
// On this Kokkos (3.4.01, CUDA 13, H200) the launch shape decides copy bandwidth more than
// anything inside the loop body (../shared/H200-FACTS.md): a scalar RangePolicy copy reached
// 0.85 TB/s against 4.27 native; 16-byte vectors under a TeamPolicy of 256 threads, each team
// owning 1024 consecutive vectors (4096 floats) through TeamThreadRange, reached 92% of native.
// `scanlab ceilings` measures this pattern beside the other launch shapes and vector widths on
// the machine it runs on and records every variant in its JSON ("copy_variants"), so the choice
// below is re-checked wherever the project runs. A kernel that streams memory uses
// parallel_for_streaming over Float4 views (as_float4) instead of choosing its own shape.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace scanlab::streaming {

// Sixteen bytes, aligned so that one access is one 128-bit load or store (LDG.E.128 on CUDA).
struct alignas(16) Float4 {
  float x, y, z, w;
};

// Four consecutive floats at a 16-byte aligned address, as one access.
KOKKOS_FORCEINLINE_FUNCTION Float4 load4(const float* p) { return *reinterpret_cast<const Float4*>(p); }
KOKKOS_FORCEINLINE_FUNCTION void store4(float* p, const Float4& v) { *reinterpret_cast<Float4*>(p) = v; }
// Eight bytes likewise (one 64-bit access), for a thread that moves half of a 16-byte block.
struct alignas(8) Float2 {
  float x, y;
};
KOKKOS_FORCEINLINE_FUNCTION Float2 load2(const float* p) { return *reinterpret_cast<const Float2*>(p); }
KOKKOS_FORCEINLINE_FUNCTION void store2(float* p, const Float2& v) { *reinterpret_cast<Float2*>(p) = v; }
// acc += a·b lane by lane (each lane the same multiply-add a scalar loop would do).
KOKKOS_FORCEINLINE_FUNCTION void fma4(Float4& acc, const Float4& a, const Float4& b) {
  acc.x += a.x * b.x; acc.y += a.y * b.y; acc.z += a.z * b.z; acc.w += a.w * b.w;
}

// Team of team_size threads covering vectors_per_team consecutive indices; thread k of a team
// touches indices k, k + team_size, ..., so each warp's accesses are contiguous (coalesced).
struct LaunchShape {
  int team_size = 1;
  std::int64_t vectors_per_team = 1;
};

// The winning shape per execution space. Host spaces take one thread per team (OpenMP teams
// larger than a core's hardware threads are refused) and large contiguous blocks per thread.
template <class Space>
inline LaunchShape default_launch_shape() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same<Space, Kokkos::Cuda>::value) return {256, 1024};
#endif
  return {1, 1 << 14};
}

// Calls body(i) once for every i in [0, count) with the given launch shape. body must be a
// KOKKOS_LAMBDA (or functor) taking a std::int64_t.
template <class Space, class Body>
void parallel_for_streaming(const std::string& label, const Space& space, std::int64_t count, const Body& body,
                            LaunchShape shape = default_launch_shape<Space>()) {
  if (count <= 0) return;
  if (shape.team_size <= 0 || shape.vectors_per_team <= 0)
    throw std::invalid_argument("parallel_for_streaming: team_size and vectors_per_team must be positive");
  const std::int64_t per_team = shape.vectors_per_team;
  const std::int64_t teams = (count + per_team - 1) / per_team;
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  Kokkos::parallel_for(
      label, Policy(space, static_cast<int>(teams), shape.team_size), KOKKOS_LAMBDA(const Member& team) {
        const std::int64_t begin = std::int64_t(team.league_rank()) * per_team;
        const std::int64_t end = begin + per_team < count ? begin + per_team : count;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](const std::int64_t i) { body(i); });
      });
}

// Views a float array as 16-byte vectors. The float view must be contiguous, its length a
// multiple of 4 and its data 16-byte aligned (Kokkos allocations are); the tail of a length that
// is not a multiple of 4 is the caller's to handle with scalar accesses.
template <class FloatView>
Kokkos::View<Float4*, typename FloatView::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> as_float4(
    const FloatView& floats) {
  static_assert(std::is_same<typename FloatView::non_const_value_type, float>::value, "as_float4 needs a float view");
  if (floats.span() % 4 != 0 || reinterpret_cast<std::uintptr_t>(floats.data()) % 16 != 0 || !floats.span_is_contiguous())
    throw std::invalid_argument("as_float4: view '" + floats.label() +
                                "' is not a contiguous, 16-byte aligned array of 4k floats");
  return {reinterpret_cast<Float4*>(const_cast<float*>(floats.data())), std::int64_t(floats.span() / 4)};
}

}  // namespace scanlab::streaming
