// Special-function-unit operations behind named functions (DESIGN.md: backend-specific code sits
// behind a small named function with a portable fallback, so a kernel reads the same everywhere).
// On CUDA each is one MUFU instruction (ex2.approx / lg2.approx / rcp.approx, flush-to-zero:
// about 2 ulp, which the error bounds cover); on the host it is the C library's function
// (sfu_exp2's result then flushed as .ftz does).
// `scanlab ceilings` measures the rate of exactly these functions, so the SFU ceiling a sweep
// compares against is the rate of the code the kernels run. The activation forms at the end take
// one MUFU each and do the rest on the FMA pipe: the same code on the host and the GPU (mul_add).
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>

namespace scanlab {

// The host flushes a subnormal result to zero as the GPU's .ftz does. The kernels call this one
// only where every result is known normal, so no correct output changes; a wrong "known normal"
// decision then changes bits on the host too, where the host tests can see it (they compare such
// decisions' two forms bit for bit; with exp2 keeping subnormals here, only a GPU could).
KOKKOS_INLINE_FUNCTION float sfu_exp2(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  const float y = std::exp2(x);
  return y < 1.17549435e-38f ? 0.0f : y;  // (FLT_MIN; a NaN stays NaN)
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

// a·b + c: one FFMA on the GPU (and on hosts built with FMA), a multiply and an add on other hosts,
// where fmaf would be a library call (2.8x slower activations on the host, measured).
KOKKOS_FORCEINLINE_FUNCTION float mul_add(float a, float b, float c) {
#if defined(__CUDA_ARCH__) || defined(__FMA__)
  return fmaf(a, b, c);
#else
  return a * b + c;
#endif
}

// 1/x for x in [1, 2] on the FMA pipe, where MUFU.RCP would queue behind the decays' MUFU.EX2 (the
// forward issues ~20 MUFU a step at the anchor: 16 decays, 2 exps and 2 reciprocals in the
// activations; reports/speed-notes.md §42). A quadratic seed (relative error 1.2%, a Chebyshev fit
// on [1, 2]) and two Newton steps r += r·(1 − x·r), each squaring the error: 1.5e-4, then ~2e-8
// before the last rounding. Six FFMA. 1 gives exactly 1 (a host test holds it); NaN stays NaN.
KOKKOS_INLINE_FUNCTION float reciprocal_1_to_2(float x) {
  float r = mul_add(mul_add(0.333044469f, x, -1.48441482f), x, 2.14274836f);
  r = mul_add(r, mul_add(-x, r, 1.0f), r);
  return mul_add(r, mul_add(-x, r, 1.0f), r);
}

// log1p(t) for t in [0, 1] on the FMA pipe: t·P(t), P a degree-8 Chebyshev fit of log1p(t)/t on
// [0, 1] (P(0) = 1: relative accuracy down to the subnormals), by Horner. Relative error over
// [0, 1] 2.8 eps32 with FMA, 3.2 without (measured against float64; reports/speed-notes.md §42).
// Nine FMA-pipe instructions, no MUFU.
KOKKOS_INLINE_FUNCTION float log1p_unit(float t) {
  float p = 0.00525345793f;
  p = mul_add(p, t, -0.0295885075f);
  p = mul_add(p, t, 0.0783616677f);
  p = mul_add(p, t, -0.136747703f);
  p = mul_add(p, t, 0.191114306f);
  p = mul_add(p, t, -0.248443693f);
  p = mul_add(p, t, 0.333192706f);
  p = mul_add(p, t, -0.499995023f);
  p = mul_add(p, t, 1.0f);
  return t * p;
}

// σ(x) with one MUFU: e = 2^(-|x|·log2 e) by MUFU.EX2 keeping subnormals, 1 / (1 + e) on the FMA
// pipe (reciprocal_1_to_2: 1 + e is in [1, 2]), and e times that below 0 (device_math::sigmoid_f32's
// form, which never overflows). The argument's rounding is a relative error of up to |x|·eps32 in
// e, the size of the input rounding σ's error bound already charges; the form's own roundings are
// within kBoundSafety.
KOKKOS_INLINE_FUNCTION float sigmoid_sfu_f32(float x) {
  const float e = sfu_exp2_subnormal(-fabsf(x) * 1.4426950408889634f);
  const float r = reciprocal_1_to_2(1.0f + e);
  return x >= 0.0f ? r : e * r;
}

// log(1 + e^x) = max(x, 0) + log1p(e^-|x|) with one MUFU: t = e^-|x| in [0, 1] by MUFU.EX2
// (subnormals kept: below x ≈ -87.3 the value itself is subnormal), then log1p_unit(t). Relative
// error ~|x|·eps32 from the argument's rounding, as in sigmoid_sfu_f32, plus a few ulp.
KOKKOS_INLINE_FUNCTION float softplus_sfu_f32(float x) {
  const float t = sfu_exp2_subnormal(-fabsf(x) * 1.4426950408889634f);
  return fmaxf(x, 0.0f) + log1p_unit(t);
}

// softplus_sfu_f32(x) and its slope sigmoid_sfu_f32(x) from the one MUFU they share (e^-|x|): each
// bitwise what its own function gives.
struct SoftplusWithSlope {
  float value, slope;
};
KOKKOS_INLINE_FUNCTION SoftplusWithSlope softplus_with_slope_sfu_f32(float x) {
  const float t = sfu_exp2_subnormal(-fabsf(x) * 1.4426950408889634f);
  const float r = reciprocal_1_to_2(1.0f + t);
  return {fmaxf(x, 0.0f) + log1p_unit(t), x >= 0.0f ? r : t * r};
}

}  // namespace scanlab
