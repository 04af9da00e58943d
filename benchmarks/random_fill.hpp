// Random data for timing, filled on the device: never zeros (zeros hide unwritten outputs and can
// run faster than real data, METHOD.md), reproducible from a seed, and cheap enough to fill
// gigabytes before a sweep. A counter-based hash (splitmix64) makes element i's value depend
// only on (seed, i), so the fill is the same on every backend and in every launch order.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace scanlab::bench {

KOKKOS_INLINE_FUNCTION std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [lo, hi), from the top 24 bits of the hash (exact in float32).
KOKKOS_INLINE_FUNCTION float hashed_uniform(std::uint64_t seed, std::uint64_t index, float lo, float hi) {
  const std::uint64_t h = splitmix64(seed * 0x100000001B3ull ^ splitmix64(index));
  const float unit = float(h >> 40) * (1.0f / 16777216.0f);
  return lo + (hi - lo) * unit;
}

// Fills every element of a contiguous float or double view of any rank, in [lo, hi).
template <class Space, class ViewType>
void fill_uniform(const Space& space, const ViewType& view, std::uint64_t seed, double lo, double hi) {
  using Value = typename ViewType::non_const_value_type;
  Value* data = view.data();
  const float flo = float(lo), fhi = float(hi);
  Kokkos::parallel_for(
      "scanlab_fill_uniform", Kokkos::RangePolicy<Space>(space, 0, std::int64_t(view.span())),
      KOKKOS_LAMBDA(const std::int64_t i) { data[i] = Value(hashed_uniform(seed, std::uint64_t(i), flo, fhi)); });
}

}  // namespace scanlab::bench
