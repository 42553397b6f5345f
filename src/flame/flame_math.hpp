// flame_math.hpp — sin, cos, atan2 and the hyperbolic functions of the flame
// variations on the host (C++ only; OpenCL C uses its built-ins, see
// variations.h).
//
// Why: glibc's float expm1f, atanf/atan2f, tanhf, coshf and sinhf (fdlibm's
// branchy float code) were a third of the time of a trig-heavy flame (perf on
// examples/flames/trig.flam3: expm1f 18%, atanf + atan2f 16%); these take
// about half as long scalar, and having no control flow they vectorise in the
// presorted chaos game's term loops (chaos_game.cpp; 4 doubles per AVX2
// instruction), as glibc's calls cannot. glibc's newer expf/logf/powf are
// faster than a double-evaluated replacement (measured), so they stay.
//
// Method: evaluate in double and round once to float, so every result is
// within 1 float ulp of the exact value (tests/flame/flame_math_test.cpp
// checks them against libm's double functions over their ranges).
// exp: Cody–Waite reduction x = k ln2 + r with fdlibm's split ln2 (s_expm1.c),
// |r| ≤ ln2/2, e^r − 1 by its Taylor series (Abramowitz & Stegun 4.2.1).
// sin/cos: x = k π/2 + r (fdlibm's three-part π/2), Taylor series (A&S
// 4.3.65/66). atan2: C's quadrants from the signs, atan of min/max in [0, 1],
// above tan(π/8) through atan a = π/4 + atan((a − 1)/(a + 1)), then the
// Taylor series (A&S 4.4.42) on |t| ≤ tan(π/8). No branches except the
// selects, no FMA (the build has no -mfma, and the files with AVX-512
// variants are compiled with -ffp-contract=off), so the bits are the same on
// every x86-64 and every thread. Special values (±0, ±inf, NaN) follow C's.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace procgen::flame::math {

inline constexpr double kShifter = 0x1.8p52;  // x + kShifter − kShifter rounds x to an integer (|x| < 2^51)

/// e^x = scale·(1 + p) with p = e^r − 1 for the reduced r (|r| ≤ ln2/2), x
/// clamped to [−160, 120] (beyond, float results are 0 / inf anyway).
[[gnu::always_inline]] inline void expSplit(double x, double& scale, double& p) {
  constexpr double kLog2e = 1.4426950408889634074;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // fdlibm ln2_hi: k·kLn2Hi exact for |k| < 2^20
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  x = x < -160.0 ? -160.0 : (x > 120.0 ? 120.0 : x);  // NaN passes
  const double kd = x * kLog2e + kShifter;
  const double k = kd - kShifter;
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  // e^r − 1 to r^10/10! (the next term is < 2e-12 relative).
  p = r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 + r * (1.0 / 3628800))))))))));
  // 2^k from the low bits of kd (k + 1023 in 1 .. 2046 after the clamp).
  scale = std::bit_cast<double>((std::bit_cast<uint64_t>(kd) + 1023u) << 52);
}

[[gnu::always_inline]] inline double expd(double x) {
  double scale, p;
  expSplit(x, scale, p);
  return scale + scale * p;
}

[[gnu::always_inline]] inline double expm1d(double x) {
  double scale, p;
  expSplit(x, scale, p);
  return (scale - 1.0) + scale * p;  // exact scale − 1 for k ≤ 52: p's digits survive near 0
}

/// sin x and cos x for float x: r = x − k π/2 with fdlibm's three-part π/2
/// (e_rem_pio2.c; exact products for |k| < 2^20, so within 1 ulp for
/// |x| < 1.6e6; beyond, the reduction's error grows as |x|·2^-52 — Cephes'
/// float sin stops at 8192), Taylor series on |r| ≤ π/4, the quadrant's
/// choice by selects. Both from one reduction where a variation needs both.
[[gnu::always_inline]] inline void sinCosd(double x, double& sn, double& cs) {
  constexpr double kTwoOverPi = 0.63661977236758134308;
  constexpr double kPio2A = 1.57079632673412561417e+00, kPio2B = 6.07710050630396597660e-11,
                   kPio2C = 2.02226624879595063154e-21;
  const double kd = x * kTwoOverPi + kShifter;
  const double k = kd - kShifter;
  const uint64_t quadrant = std::bit_cast<uint64_t>(kd) & 3u;
  const double r = ((x - k * kPio2A) - k * kPio2B) - k * kPio2C;
  const double r2 = r * r;
  // Taylor to r^11 and r^12: the next terms are < 1e-11 relative on |r| ≤ π/4.
  // r · (1 + …), not r + r·(…): sin(−0) = −0.
  const double s = r * (1.0 + r2 * (-1.0 / 6 + r2 * (1.0 / 120 + r2 * (-1.0 / 5040 + r2 * (1.0 / 362880 + r2 * (-1.0 / 39916800))))));
  const double c = 1.0 + r2 * (-0.5 + r2 * (1.0 / 24 + r2 * (-1.0 / 720 + r2 * (1.0 / 40320 + r2 * (-1.0 / 3628800 + r2 * (1.0 / 479001600))))));
  const double ns = -s, nc = -c;
  sn = quadrant == 0 ? s : quadrant == 1 ? c : quadrant == 2 ? ns : nc;
  cs = quadrant == 0 ? c : quadrant == 1 ? ns : quadrant == 2 ? nc : s;
}

[[gnu::always_inline]] inline float sinf(float x) {
  double s, c;
  sinCosd(x, s, c);
  return static_cast<float>(s);
}

[[gnu::always_inline]] inline float cosf(float x) {
  double s, c;
  sinCosd(x, s, c);
  return static_cast<float>(c);
}

/// atan2(y, x) with C's quadrants and signed zeros.
[[gnu::always_inline]] inline float atan2f(float y, float x) {
  constexpr double kPi = 3.14159265358979323846, kPi2 = 1.57079632679489661923, kPi4 = 0.78539816339744830962;
  const double ax = std::fabs(static_cast<double>(x)), ay = std::fabs(static_cast<double>(y));
  const bool steep = ay > ax;
  const double hi = steep ? ay : ax, lo = steep ? ax : ay;
  // a = lo/hi in [0, 1]; 0/0 → 0 and inf/inf → 1 as atan2's limits. The
  // divisions are unconditional and the choices selects, so that a loop of
  // atan2f has no control flow and the compiler vectorises it.
  double a = lo / (hi == 0.0 ? 1.0 : hi);
  a = hi == lo && hi == INFINITY ? 1.0 : a;
  const bool upper = a > 0.41421356237309504880;  // tan(π/8)
  const double reflected = (a - 1.0) / (a + 1.0);
  const double t = upper ? reflected : a;  // |t| ≤ tan(π/8)
  const double t2 = t * t;
  // atan t to t^23/23 (next term < 3e-11 relative).
  const double at = t + t * t2 * (-1.0 / 3 + t2 * (1.0 / 5 + t2 * (-1.0 / 7 + t2 * (1.0 / 9 + t2 * (-1.0 / 11 + t2 * (1.0 / 13 + t2 * (-1.0 / 15 + t2 * (1.0 / 17 + t2 * (-1.0 / 19 + t2 * (1.0 / 21 + t2 * (-1.0 / 23)))))))))));
  double angle = upper ? kPi4 + at : at;  // atan(lo/hi) in [0, π/4]
  angle = steep ? kPi2 - angle : angle;
  angle = std::signbit(x) ? kPi - angle : angle;
  return static_cast<float>(std::signbit(y) ? -angle : angle);
}

[[gnu::always_inline]] inline float expm1f(float x) {
  const float m = static_cast<float>(expm1d(x));
  return x == 0.0f ? x : m;  // −0 stays −0
}

[[gnu::always_inline]] inline float sinhf(float x) {
  const double m = expm1d(std::fabs(static_cast<double>(x)));
  const double s = 0.5 * (m + m / (m + 1.0));
  return static_cast<float>(std::signbit(x) ? -s : s);
}

/// tanh h and sech h = 1 / cosh h from one exponential (the complex tan …
/// coth family needs both): with m = e^|h| − 1 and e = m + 1,
/// tanh |h| = m (m + 2) / (e² + 1) (no cancellation near 0) and
/// sech h = 2e / (e² + 1).
[[gnu::always_inline]] inline void tanhSech(float h, float& th, float& se) {
  const double m = expm1d(std::fabs(static_cast<double>(h))), e = m + 1.0;
  const double inv = 1.0 / (e * e + 1.0);
  const double t = m * (m + 2.0) * inv;
  th = static_cast<float>(std::signbit(h) ? -t : t);
  se = static_cast<float>(2.0 * e * inv);
}

/// out[j] = atan2f(y[j], x[j]) for j < n: the same bits as atan2f, in a loop
/// the compiler vectorises, compiled for AVX-512, AVX2 and plain x86-64 and
/// picked at run time by the CPU (flame_math.cpp).
void atan2Batch(const float* y, const float* x, float* out, uint32_t n);

/// Test hook: the instruction sets atan2Batch has variants for (0 plain,
/// 1 AVX2, 2 AVX-512), whether this CPU runs `isa`, and that variant.
bool atan2BatchIsaSupported(int isa);
/// The widest of those this CPU runs.
int bestVectorIsa();
void atan2BatchForIsa(int isa, const float* y, const float* x, float* out, uint32_t n);

}  // namespace procgen::flame::math
