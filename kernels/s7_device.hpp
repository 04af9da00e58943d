// Small helpers the s7 kernels share: the S7 transition and its derivative, the exact GELU and
// its derivative (on device_math.hpp's erf and exp), device error checks and host ⇄ device tensor
// copies. Backend-specific pieces sit behind these names (or device_math.hpp's) with a portable
// body, so the kernels read the same on every backend (DESIGN.md).
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "backend.hpp"
#include "device_math.hpp"
#include "tensor.hpp"

namespace scanlab::kernels::s7_detail {

using device_math::erf_f32;
using device_math::exp_f32;

// Team scratch as floats (level 0, carved by the team policy's set_scratch_size).
template <class Space>
using ScratchFloats =
    Kokkos::View<float*, typename Space::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// A_bar = 1 − 1/(A² + 0.5). A² + 0.5 ≥ 0.5, so the reciprocal is always finite; A_bar is 0 at
// |A| = 1/√2 and nothing ever divides by it.
KOKKOS_INLINE_FUNCTION float s7_a_bar(float A) { return 1.0f - 1.0f / (A * A + 0.5f); }
// dA_bar/dA = 2A/(A² + 0.5)².
KOKKOS_INLINE_FUNCTION float s7_a_bar_derivative(float A) {
  const float r = 1.0f / (A * A + 0.5f);
  return 2.0f * A * r * r;
}

// Exact GELU, 0.5·y·(1 + erf(y/√2)), and its exact derivative
// Φ(y) + y·φ(y) = 0.5·(1 + erf(y/√2)) + y·exp(−y²/2)/√(2π).
constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;
KOKKOS_INLINE_FUNCTION float gelu_erf(float y) { return 0.5f * y * (1.0f + erf_f32(y * kInvSqrt2)); }
KOKKOS_INLINE_FUNCTION float gelu_erf_derivative(float y) {
  return 0.5f * (1.0f + erf_f32(y * kInvSqrt2)) + y * kInvSqrt2Pi * exp_f32(-0.5f * y * y);
}
using device_math::sigmoid_f32;

// ⌈a/b⌉ for positive b.
KOKKOS_INLINE_FUNCTION std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Fences the space and turns an asynchronous device error into an exception naming `where`.
template <class Space>
void check_device(const Space& space, const std::string& where) {
  space.fence();
  (void)where;
#ifdef KOKKOS_ENABLE_CUDA
  if (std::is_same<Space, Kokkos::Cuda>::value) {
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
      throw std::runtime_error(where + ": CUDA error " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
  }
#endif
}

// A float32 LayoutRight device View of rank R with the tensor's shape, filled from it.
template <class ViewType>
ViewType to_device(const Tensor& t, const std::string& label) {
  constexpr int rank = ViewType::rank;
  if (t.rank() != rank)
    throw std::invalid_argument(label + ": expected rank " + std::to_string(rank) + ", got " + shape_string(t.shape));
  std::size_t ext[8] = {KOKKOS_INVALID_INDEX, KOKKOS_INVALID_INDEX, KOKKOS_INVALID_INDEX, KOKKOS_INVALID_INDEX,
                        KOKKOS_INVALID_INDEX, KOKKOS_INVALID_INDEX, KOKKOS_INVALID_INDEX, KOKKOS_INVALID_INDEX};
  for (int i = 0; i < rank; ++i) ext[i] = static_cast<std::size_t>(t.shape[static_cast<std::size_t>(i)]);
  ViewType v(Kokkos::view_alloc(label, Kokkos::WithoutInitializing),
             typename ViewType::array_layout(ext[0], ext[1], ext[2], ext[3], ext[4], ext[5], ext[6], ext[7]));
  auto host = Kokkos::create_mirror_view(v);
  float* dst = host.data();
  for (std::int64_t i = 0; i < t.numel(); ++i) dst[i] = static_cast<float>(t[i]);
  Kokkos::deep_copy(v, host);
  return v;
}

// A device View of the given extents filled with NaN, so that an element a kernel fails to write
// shows up in the comparison.
template <class ViewType>
ViewType poisoned(const std::string& label, std::size_t e0, std::size_t e1 = KOKKOS_INVALID_INDEX,
                  std::size_t e2 = KOKKOS_INVALID_INDEX, std::size_t e3 = KOKKOS_INVALID_INDEX) {
  ViewType v(Kokkos::view_alloc(label, Kokkos::WithoutInitializing), e0, e1, e2, e3);
  Kokkos::deep_copy(v, std::numeric_limits<float>::quiet_NaN());
  return v;
}

// The View's values as a float64 host tensor of the given shape (C order).
template <class ViewType>
Tensor to_host(const ViewType& v, const Shape& shape) {
  auto host = Kokkos::create_mirror_view(v);
  Kokkos::deep_copy(host, v);
  Tensor t(shape);
  if (static_cast<std::int64_t>(host.span()) != t.numel())
    throw std::logic_error("to_host: view span " + std::to_string(host.span()) + " != " + shape_string(shape));
  const float* src = host.data();
  for (std::int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<double>(src[i]);
  return t;
}

// Runs f.template operator()<Space>() for the Kokkos space that serves `backend`.
template <class F>
auto dispatch_space(BackendKind backend, F&& f) {
  switch (backend) {
#ifdef KOKKOS_ENABLE_SERIAL
    case BackendKind::serial: return f(Kokkos::Serial());
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    case BackendKind::openmp: return f(Kokkos::OpenMP());
#endif
#ifdef KOKKOS_ENABLE_CUDA
    case BackendKind::cuda: return f(Kokkos::Cuda());
#endif
    default: break;
  }
  throw std::invalid_argument("backend '" + to_string(backend) + "' has no Kokkos space in this binary");
}

}  // namespace scanlab::kernels::s7_detail
