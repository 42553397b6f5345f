// src/flame/flame_math.hpp (sin, cos, atan2, expm1, sinh, tanh and sech in float, as the
// host's variations use them) against libm's double functions — the
// reference is the exact value to ~1e-16, far below a float ulp.
//
// Error measure: |got − exact| in units of the float ulp at the exact value
// (the spacing of floats at |exact|, the smallest normal spacing below
// FLT_MIN). Stated bound: ≤ 1 ulp everywhere (sin and cos: for |x| < 1.6e6;
// beyond, |x|·2^-52 absolute; the functions round a double
// result once; what they add before that is < 1e-9 relative), checked over
// each function's range on a dense log grid of both signs plus random inputs,
// and the special values (±0, ±inf, NaN) against C's definitions.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "flame/flame_math.hpp"

namespace {

namespace fm = procgen::flame::math;

/// Float ulps between `got` and the exact double `want`.
double ulpError(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : INFINITY;
  const float rounded = static_cast<float>(want);
  if (std::isinf(rounded)) return got == rounded ? 0.0 : INFINITY;
  const float mag = std::fabs(rounded);
  const double ulp = mag < FLT_MIN ? std::ldexp(1.0, -149)
                                   : static_cast<double>(std::nextafter(mag, INFINITY)) - mag;
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

/// ±10^e for e on a grid of `per_decade` steps per decade in [lo, hi], and 0.
std::vector<float> logGrid(int lo, int hi, int per_decade) {
  std::vector<float> v{0.0f, -0.0f};
  for (int i = lo * per_decade; i <= hi * per_decade; ++i) {
    const float x = static_cast<float>(std::pow(10.0, static_cast<double>(i) / per_decade));
    v.push_back(x);
    v.push_back(-x);
  }
  return v;
}

template <class Fast, class Exact>
double maxUnaryError(const std::vector<float>& xs, Fast fast, Exact exact, float& worst) {
  double max_err = 0;
  for (float x : xs) {
    const double e = ulpError(fast(x), exact(static_cast<double>(x)));
    if (e > max_err) {
      max_err = e;
      worst = x;
    }
  }
  return max_err;
}

std::vector<float> unaryInputs(float range) {
  std::vector<float> xs = logGrid(-30, static_cast<int>(std::ceil(std::log10(range))), 2000);
  std::mt19937 gen(19);
  std::uniform_real_distribution<float> d(-range, range);
  for (int i = 0; i < 200000; ++i) xs.push_back(d(gen));
  std::uniform_real_distribution<float> small(-2.0f, 2.0f);
  for (int i = 0; i < 200000; ++i) xs.push_back(small(gen));
  return xs;
}

TEST(FlameMath, Expm1IsWithinOneUlpOfLibm) {
  float worst = 0;
  const double err = maxUnaryError(unaryInputs(120.0f), fm::expm1f, [](double x) { return std::expm1(x); }, worst);
  EXPECT_LE(err, 1.0) << "at x = " << worst;
}

TEST(FlameMath, SinhIsWithinOneUlpOfLibm) {
  float worst = 0;
  const double err = maxUnaryError(unaryInputs(120.0f), fm::sinhf, [](double x) { return std::sinh(x); }, worst);
  EXPECT_LE(err, 1.0) << "at x = " << worst;
}

TEST(FlameMath, TanhAndSechAreWithinOneUlpOfLibm) {
  float worst_t = 0, worst_s = 0;
  const auto xs = unaryInputs(120.0f);
  const double err_t = maxUnaryError(
      xs, [](float x) { float t, s; fm::tanhSech(x, t, s); return t; }, [](double x) { return std::tanh(x); }, worst_t);
  const double err_s = maxUnaryError(
      xs, [](float x) { float t, s; fm::tanhSech(x, t, s); return s; }, [](double x) { return 1.0 / std::cosh(x); },
      worst_s);
  EXPECT_LE(err_t, 1.0) << "tanh at x = " << worst_t;
  EXPECT_LE(err_s, 1.0) << "sech at x = " << worst_s;
}

TEST(FlameMath, SinAndCosAreWithinOneUlpOfLibmBelow1point6e6) {
  std::vector<float> xs = unaryInputs(1.6e6f);
  std::erase_if(xs, [](float x) { return !(std::fabs(x) < 1.6e6f); });
  std::mt19937 gen(31);
  std::uniform_real_distribution<float> mid(-1000.0f, 1000.0f);
  for (int i = 0; i < 200000; ++i) xs.push_back(mid(gen));
  float worst_s = 0, worst_c = 0;
  const double err_s = maxUnaryError(xs, fm::sinf, [](double x) { return std::sin(x); }, worst_s);
  const double err_c = maxUnaryError(xs, fm::cosf, [](double x) { return std::cos(x); }, worst_c);
  EXPECT_LE(err_s, 1.0) << "sin at x = " << worst_s;
  EXPECT_LE(err_c, 1.0) << "cos at x = " << worst_c;
  // Beyond, the stated bound: |error| ≤ |x|·2^-52 + 1 ulp (absolute).
  for (float x : {1e7f, -3.3e8f, 1e10f, 2.5e12f}) {
    EXPECT_LE(std::fabs(fm::sinf(x) - std::sin(static_cast<double>(x))), std::fabs(x) * 0x1p-52 + 0x1p-24) << x;
    EXPECT_LE(std::fabs(fm::cosf(x) - std::cos(static_cast<double>(x))), std::fabs(x) * 0x1p-52 + 0x1p-24) << x;
  }
  EXPECT_TRUE(std::isnan(fm::sinf(NAN)) && std::isnan(fm::cosf(INFINITY)));
  EXPECT_TRUE(std::signbit(fm::sinf(-0.0f)));
  EXPECT_EQ(fm::cosf(0.0f), 1.0f);
}

TEST(FlameMath, Atan2IsWithinOneUlpOfLibmInEveryQuadrant) {
  std::vector<float> coords = logGrid(-38, 38, 12);
  coords.push_back(FLT_MAX);
  coords.push_back(-FLT_MAX);
  coords.push_back(FLT_TRUE_MIN);
  double max_err = 0;
  float wy = 0, wx = 0;
  auto check = [&](float y, float x) {
    const double e = ulpError(fm::atan2f(y, x), std::atan2(static_cast<double>(y), static_cast<double>(x)));
    if (e > max_err) {
      max_err = e;
      wy = y;
      wx = x;
    }
  };
  for (float y : coords)
    for (float x : coords) check(y, x);
  std::mt19937 gen(23);
  std::uniform_real_distribution<float> d(-10.0f, 10.0f);
  for (int i = 0; i < 400000; ++i) check(d(gen), d(gen));
  EXPECT_LE(max_err, 1.0) << "at atan2(" << wy << ", " << wx << ")";
}

TEST(FlameMath, SpecialValuesFollowC) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // atan2's signed zeros and infinities (C11 F.10.1.4).
  for (float y : {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf})
    for (float x : {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf}) {
      const float got = fm::atan2f(y, x), want = std::atan2(y, x);
      EXPECT_EQ(got, want) << "atan2(" << y << ", " << x << ")";
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << "atan2(" << y << ", " << x << ")";
    }
  EXPECT_TRUE(std::isnan(fm::atan2f(nan, 1.0f)));
  EXPECT_TRUE(std::isnan(fm::atan2f(1.0f, nan)));
  for (float (*f)(float) : {fm::expm1f, fm::sinhf}) {
    EXPECT_TRUE(std::isnan(f(nan)));
    EXPECT_TRUE(std::signbit(f(-0.0f)));
    EXPECT_EQ(f(-0.0f), 0.0f);
  }
  EXPECT_EQ(fm::expm1f(inf), inf);
  EXPECT_EQ(fm::expm1f(-inf), -1.0f);
  EXPECT_EQ(fm::sinhf(-inf), -inf);
  EXPECT_EQ(fm::sinhf(100.0f), inf);  // overflows float, as sinhf
  float th, se;
  fm::tanhSech(nan, th, se);
  EXPECT_TRUE(std::isnan(th) && std::isnan(se));
  fm::tanhSech(-inf, th, se);
  EXPECT_EQ(th, -1.0f);
  EXPECT_EQ(se, 0.0f);
  fm::tanhSech(-0.0f, th, se);
  EXPECT_TRUE(th == 0.0f && std::signbit(th));
  EXPECT_EQ(se, 1.0f);
}

}  // namespace

namespace {

TEST(FlameMath, Atan2BatchGivesAtan2fBitsOnEveryInstructionSet) {
  // Quadrants, magnitudes from 1e-38 to 1e38, signed zeros, infinities, NaN.
  std::vector<float> ys, xs;
  std::mt19937 gen(29);
  std::uniform_real_distribution<float> d(-10.0f, 10.0f);
  std::uniform_int_distribution<int> e(-38, 38);
  for (int i = 0; i < 20000; ++i) {
    ys.push_back(d(gen) * std::pow(10.0f, static_cast<float>(e(gen) / 4)));
    xs.push_back(d(gen) * std::pow(10.0f, static_cast<float>(e(gen) / 4)));
  }
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, FLT_TRUE_MIN, FLT_MAX};
  for (float y : specials)
    for (float x : specials) {
      ys.push_back(y);
      xs.push_back(x);
    }
  std::vector<float> want(ys.size());
  for (size_t i = 0; i < ys.size(); ++i) want[i] = fm::atan2f(ys[i], xs[i]);
  int tested = 0;
  for (int isa = 0; isa <= 2; ++isa) {
    if (!fm::atan2BatchIsaSupported(isa)) continue;
    ++tested;
    // Odd lengths and offsets: the vector body and the scalar tail.
    for (uint32_t n : {1u, 7u, 128u, 20077u}) {  // 3 + n ≤ the 20081 inputs
      std::vector<float> got(n);
      fm::atan2BatchForIsa(isa, ys.data() + 3, xs.data() + 3, got.data(), n);
      EXPECT_EQ(std::memcmp(got.data(), want.data() + 3, n * sizeof(float)), 0) << "isa " << isa << ", n " << n;
    }
  }
  EXPECT_GE(tested, 1);
  std::vector<float> got(ys.size());
  fm::atan2Batch(ys.data(), xs.data(), got.data(), static_cast<uint32_t>(ys.size()));
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
}

}  // namespace
