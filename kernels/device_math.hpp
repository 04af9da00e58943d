// Small named functions that every scan kernel calls for its arithmetic and loads, so that the
// kernels read the same on every backend (DESIGN.md, Style). Each has a portable fallback; a
// backend-specific body (CUDA intrinsics, inline PTX) sits behind __CUDA_ARCH__ here and nowhere
// else. Accuracy contract: every function is within ~2 ulp of the correctly rounded float32
// result for the arguments the kernels pass, which reference/error_bound.hpp's kBoundSafety
// covers. A faster, less accurate variant (e.g. an FMA-pipe exp2 polynomial, MUFU.EX2 with a
// log2(e)-scaled argument) gets its own name here and is chosen by a kernel config field, never
// by silently replacing one of these.
#pragma once

#include "streaming.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>

// Full unrolling of loops over a compile-time dstate keeps per-state arrays in registers on
// CUDA (a partially unrolled loop would index the array dynamically and spill it to local
// memory). Host compilers unroll such loops at -O2/-O3 without being told.
// Its twin keeps a loop rolled where the compiler's own unroll would hurt (a software-pipelined
// loop whose unrolled buffers spill).
#if defined(__CUDA_ARCH__)
#define SCANLAB_UNROLL _Pragma("unroll")
#define SCANLAB_NO_UNROLL _Pragma("unroll 1")
#else
#define SCANLAB_UNROLL
#define SCANLAB_NO_UNROLL
#endif

namespace scanlab::device_math {

// e^x. CUDA: expf (range reduction on the FMA pipe plus MUFU.EX2, 2 ulp; never __expf, whose
// error grows with |x|). Host: the C library's expf.
KOKKOS_INLINE_FUNCTION float exp_f32(float x) { return expf(x); }

// log(1 + x), accurate near 0 (softplus of very negative arguments).
KOKKOS_INLINE_FUNCTION float log1p_f32(float x) { return log1pf(x); }

KOKKOS_INLINE_FUNCTION float tanh_f32(float x) { return tanhf(x); }

KOKKOS_INLINE_FUNCTION float erf_f32(float x) { return erff(x); }

// σ(x) = 1 / (1 + e^-x) for x >= 0 and e^x · (1 / (1 + e^x)) below: an exp, an add and a
// reciprocal (the error bound counts three roundings; the product below 0 is one more, inside
// kBoundSafety). The exp's argument is -|x|, so it never overflows: below x ≈ -88.7, 1 / (1 +
// e^-x) gave 0 where σ is a subnormal and x·σ (silu) a normal float (a kernel test with gates in
// the tails found it). A reciprocal, not e / (1 + e): a general IEEE division is the longer
// sequence (the H200 forward was 3% slower with it, reports/speed-notes.md §11).
KOKKOS_INLINE_FUNCTION float sigmoid_f32(float x) {
  const float e = exp_f32(-fabsf(x));
  const float r = 1.0f / (1.0f + e);
  return x >= 0.0f ? r : e * r;
}

// Waits for the threads of a team that exchange data through team scratch. `one_warp`: they are
// the 32 consecutive team ranks 32w..32w+31, which on CUDA are one warp (the team's vector length
// is 1) that __syncwarp orders without holding the rest of the team at a barrier; otherwise, and on
// every other backend, the team barrier. Either way every write before it is visible after it to
// the threads it waits for.
template <class Member>
KOKKOS_INLINE_FUNCTION void group_barrier(const Member& team, bool one_warp) {
#if defined(__CUDA_ARCH__)
  if (one_warp && blockDim.x == 1) {
    __syncwarp();
    return;
  }
#else
  (void)one_warp;
#endif
  team.team_barrier();
}

// Whether `v` holds for every thread of the group that group_barrier(team, true) waits for: on
// CUDA, where the team's vector length is 1, the 32 ranks 32w..32w+31 are one warp and one vote
// answers; elsewhere the thread's own `v` (every backend but CUDA orders a group with the team
// barrier, so its threads need not agree). Every thread of the warp must call it.
template <class Member>
KOKKOS_INLINE_FUNCTION bool group_all(const Member& team, bool v) {
#if defined(__CUDA_ARCH__)
  if (blockDim.x == 1) return __all_sync(0xffffffffu, v);
#endif
  (void)team;
  return v;
}

// Makes the compiler compute v here, where it would otherwise sink a value's whole computation
// into the branch that uses it (CUDA: an empty asm that "modifies" v; no instruction). Elsewhere
// nothing.
KOKKOS_FORCEINLINE_FUNCTION void compute_here(float& v) {
#if defined(__CUDA_ARCH__)
  asm volatile("" : "+f"(v));
#else
  (void)v;
#endif
}

// Swaps kV values with the partner team rank (rank ^ 1), for kernels whose ranks 2r and 2r+1 share
// one channel's work: v[i] becomes the partner's v[i]. Every thread of the team calls it, at the
// same point. CUDA with vector length 1: a warp shuffle over the whole warp (the pair is two lanes
// of one warp). Its precondition there: the team is whole warps (a full mask compiles to one SHFL
// a value; a computed one added five instructions a call), which the caller checks once
// (whole_warps). Elsewhere through team scratch (`slots`: kV floats a team rank) between two team
// barriers (the second keeps a later call from overwriting slots the partner has not read).
template <int kV, class Member>
KOKKOS_INLINE_FUNCTION void swap_with_partner(const Member& team, float (&v)[kV], float* slots) {
#if defined(__CUDA_ARCH__)
  if (blockDim.x == 1) {
    SCANLAB_UNROLL
    for (int i = 0; i < kV; ++i) v[i] = __shfl_xor_sync(0xffffffffu, v[i], 1);
    return;
  }
#endif
  const int rank = team.team_rank();
  for (int i = 0; i < kV; ++i) slots[rank * kV + i] = v[i];
  team.team_barrier();
  for (int i = 0; i < kV; ++i) v[i] = slots[(rank ^ 1) * kV + i];
  team.team_barrier();
}

// Whether swap_with_partner's CUDA path may run on this team: teams of whole warps (always true
// off CUDA, where it goes through scratch).
template <class Member>
KOKKOS_INLINE_FUNCTION bool whole_warps(const Member& team) {
#if defined(__CUDA_ARCH__)
  return blockDim.x != 1 || team.team_size() % 32 == 0;
#else
  (void)team;
  return true;
#endif
}

// A load from memory that no thread writes during the kernel: the read-only data path on CUDA
// (LDG through the texture cache), a plain load elsewhere.
KOKKOS_INLINE_FUNCTION float load_readonly(const float* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

// streaming::load4 / load2 of memory that no thread writes during the kernel, for a thread that
// walks one row 32 bytes at a time: on CUDA the read-only path, asking L2 to fetch the whole
// 128-byte line around the access (ld.global.nc.L2::128B) so that the row's next blocks find it
// there; the plain loads elsewhere. A probe's input loads with it: 1.03x at (8,4096,16,2048), 1.10x
// at (8,2048,16,2048), on an H100 (reports/speed-notes.md §59).
KOKKOS_FORCEINLINE_FUNCTION streaming::Float4 load4_row_readonly(const float* p) {
#if defined(__CUDA_ARCH__)
  streaming::Float4 v;
  asm("ld.global.nc.L2::128B.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
#else
  return streaming::load4(p);
#endif
}
KOKKOS_FORCEINLINE_FUNCTION streaming::Float2 load2_row_readonly(const float* p) {
#if defined(__CUDA_ARCH__)
  streaming::Float2 v;
  asm("ld.global.nc.L2::128B.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "l"(p));
  return v;
#else
  return streaming::load2(p);
#endif
}

// A level-0 team-scratch pointer re-derived from the kernel's dynamic shared-memory window, so the
// compiler knows its address space: scratch accesses compile to 32-bit-addressed LDS/STS instead
// of generic 64-bit loads (the pointer Kokkos hands out is generic; the tiled forward's SASS showed
// LD.E.128 with 64-bit address arithmetic for every scratch read). Same address, so the same data;
// elsewhere the pointer itself.
#if defined(__CUDA_ARCH__)
extern __shared__ float4 scanlab_shared_window[];
#endif
KOKKOS_INLINE_FUNCTION float* shared_scratch(float* p) {
#if defined(__CUDA_ARCH__)
  const std::size_t offset = static_cast<std::size_t>(__cvta_generic_to_shared(p)) -
                             static_cast<std::size_t>(__cvta_generic_to_shared(scanlab_shared_window));
  return reinterpret_cast<float*>(reinterpret_cast<char*>(scanlab_shared_window) + offset);
#else
  return p;
#endif
}

// Asynchronous copies from global memory into level-0 team scratch: cp.async on sm_80 and later
// (the copy is in flight while the thread goes on; no register holds the data), a plain copy
// elsewhere. A team makes copies visible with async_copy_commit() after issuing them,
// async_copy_wait<K>() (all but the K most recent committed groups have landed) and then a team
// barrier. The 4-float form needs 16-byte aligned source and destination.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define SCANLAB_CP_ASYNC 1
#endif
KOKKOS_INLINE_FUNCTION void async_copy_f32(float* scratch_dst, const float* src) {
#if defined(SCANLAB_CP_ASYNC)
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(scratch_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
#else
  *scratch_dst = *src;
#endif
}
KOKKOS_INLINE_FUNCTION void async_copy_f32x4(float* scratch_dst, const float* src) {
#if defined(SCANLAB_CP_ASYNC)
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(scratch_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
#else
  for (int i = 0; i < 4; ++i) scratch_dst[i] = src[i];
#endif
}
KOKKOS_INLINE_FUNCTION void async_copy_commit() {
#if defined(SCANLAB_CP_ASYNC)
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int kPending>
KOKKOS_INLINE_FUNCTION void async_copy_wait() {
#if defined(SCANLAB_CP_ASYNC)
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

}  // namespace scanlab::device_math
