// Special-function-unit operations behind named functions (DESIGN.md: backend-specific code sits
// behind a small named function with a portable fallback, so a kernel reads the same everywhere).
// On CUDA each is one MUFU instruction (ex2.approx / lg2.approx / rcp.approx, flush-to-zero:
// about 2 ulp, which the error bounds cover); on the host it is the C library's function.
// `scanlab ceilings` measures the rate of exactly these functions, so the SFU ceiling a sweep
// compares against is the rate of the code the kernels run.
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>

namespace scanlab {

KOKKOS_INLINE_FUNCTION float sfu_exp2(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return std::exp2(x);
#endif
}

// 2^x keeping subnormal results: ex2.approx.f32 without .ftz (MUFU.EX2 with a two-multiply range
// fix-up). A decay exp(dt·A) below 2^-126 flushed to zero is an error of up to 2^-126 in a
// gradient such as dA, whose terms can all be that small; no float32 error bound covers it.
KOKKOS_INLINE_FUNCTION float sfu_exp2_subnormal(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return std::exp2(x);
#endif
}

// True when every 2^(d·a) with d in [d_lo, d_hi] and a in [a_lo, a_hi] is a normal float with room
// to spare (exponent ≥ -125, a binade above the flush threshold, far beyond MUFU.EX2's 2 ulp), so
// that sfu_exp2 returns bitwise what sfu_exp2_subnormal would, without the range fix-up. fl(d·a) is
// monotone in each factor, so the four corners bound every product; a NaN corner answers false.
KOKKOS_INLINE_FUNCTION bool exp2_stays_normal(float d_lo, float d_hi, float a_lo, float a_hi) {
  const float least = -125.0f;
  return d_lo * a_lo >= least && d_lo * a_hi >= least && d_hi * a_lo >= least && d_hi * a_hi >= least;
}

// The same guarantee from magnitudes alone, one product where exp2_stays_normal takes four: every
// 2^(d·a) with |d| <= d_max and |a| <= a_max has |fl(d·a)| <= fl(d_max·a_max) (rounding is
// monotone), so a product of at most 125 leaves every exponent >= -125. It answers false more
// often (a large positive product, which overflows either way), never wrongly true; a NaN bound
// answers false.
KOKKOS_INLINE_FUNCTION bool exp2_products_stay_normal(float d_max, float a_max) { return d_max * a_max <= 125.0f; }

KOKKOS_INLINE_FUNCTION float sfu_log2(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return std::log2(x);
#endif
}

KOKKOS_INLINE_FUNCTION float sfu_rcp(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return 1.0f / x;
#endif
}

// σ(x) from the SFU: e = 2^(-|x|·log2 e) by MUFU.EX2 keeping subnormals, 1 / (1 + e) by MUFU.RCP,
// and e times that below 0 (device_math::sigmoid_f32's form, which never overflows). The
// argument's rounding is a relative error of up to |x|·eps32 in e, the size of the input rounding
// σ's error bound already charges; the three SFU-form roundings are within kBoundSafety.
KOKKOS_INLINE_FUNCTION float sigmoid_sfu_f32(float x) {
  const float e = sfu_exp2_subnormal(-fabsf(x) * 1.4426950408889634f);
  const float r = sfu_rcp(1.0f + e);
  return x >= 0.0f ? r : e * r;
}

// log(1 + e^x) = max(x, 0) + log1p(e^-|x|) from the SFU: t = e^-|x| in (0, 1] by MUFU.EX2 (subnormals
// kept: below x ≈ -87.3 the value itself is subnormal), then log1p(t) = 2·atanh(s), s = t / (2 + t)
// in (0, 1/3] (one MUFU.RCP), by atanh's odd series to s^13 (the next term is below eps32 / 4).
// Relative error ~|x|·eps32 from the argument's rounding, as in sigmoid_sfu_f32, plus a few ulp.
KOKKOS_INLINE_FUNCTION float softplus_sfu_f32(float x) {
  const float t = sfu_exp2_subnormal(-fabsf(x) * 1.4426950408889634f);
  const float s = t * sfu_rcp(2.0f + t), s2 = s * s;
  float series = 1.0f / 13.0f;  // atanh(s) / s - 1 = s²/3 + s⁴/5 + ... + s¹²/13, by Horner in s²
  series = series * s2 + 1.0f / 11.0f;
  series = series * s2 + 1.0f / 9.0f;
  series = series * s2 + 1.0f / 7.0f;
  series = series * s2 + 1.0f / 5.0f;
  series = series * s2 + 1.0f / 3.0f;
  const float two_s = s + s;
  return fmaxf(x, 0.0f) + (two_s * (series * s2) + two_s);
}

}  // namespace scanlab
