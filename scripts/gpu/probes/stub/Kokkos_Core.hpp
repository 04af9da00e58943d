// Stub for the probes in scripts/gpu/probes: kernels/sfu.hpp needs only these two macros of Kokkos,
// so a plain-CUDA probe can use scanlab's own activations without building Kokkos.
#pragma once
#define KOKKOS_INLINE_FUNCTION __host__ __device__ inline
#define KOKKOS_FORCEINLINE_FUNCTION __host__ __device__ __forceinline__
