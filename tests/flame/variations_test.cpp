// flam3's 99 variations (src/flame/variations.h) against an independent
// re-derivation in double precision, written here from the published
// formulas — Draves & Reckase, "The Fractal Flame Algorithm", appendix, with
// flam3 3.1.1's semantics and quirks (variations.c): the "angle" θ = atan2(x, y)
// of the early variations, fisheye's swapped axes, coth's sign, cpow's branch
// that turns the angle only, the variations that use the weight inside the
// formula. Where the paper gives a closed form the reference uses it (complex
// functions through std::complex, sin θ and cos θ through atan2), so it is not
// a transcription of the float code.
//
// Every variation is evaluated through pgFlameApplyXform, on tables made by
// compileXforms (so the derived per-xform values are checked too), with a
// non-identity affine, non-default parameters and weight, at five points
// (near 0, positive, negative, mixed, large). Variations that draw random
// numbers are replayed: the reference draws from a copy of the same
// PgFlameRng in the same order (as doubles).
//
// Tolerance: |got − want|∞ ≤ kRelTol·max(‖want‖∞, 1e-3) + sensitivity, with
// kRelTol = 4e-6 (≈ 34 float ulps of the result) and `sensitivity` how far
// the exact result moves when the affine output moves by its own float
// rounding (4ε(|a x| + |b y| + |c|), ε = 2^-24) — the error no float
// implementation avoids where a formula is ill-conditioned. Three variations
// get a stated allowance (errorScale below). Both sides must agree on the
// bad-value verdict (NaN or beyond ±1e10). A test point whose sensitivity
// exceeds 1% of the result sits on a discontinuity and is refused.
//
// Outside this file (not committed): the 78 variations that draw no random
// numbers were also run through libflam3's own apply_xform at these points,
// same parameters — all within 5e-6 relative, wedge_sph near 0 within its
// sensitivity (1.4e-4).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <complex>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "flame/variation_fixtures.hpp"
#include "flame/xform.h"
#include "flame/xform_table.hpp"
#include "procgen/flame.hpp"

namespace {

using namespace procgen;
using namespace procgen::test::flame;
using cplx = std::complex<double>;

constexpr double kPi = std::numbers::pi;
constexpr double kEps = 1e-10;
constexpr double kRelTol = 4e-6;

struct Vec2 {
  double x = 0, y = 0;
};

/// Replays a PgFlameRng's draws as doubles.
struct ReplayRng {
  PgFlameRng rng;
  double u01() { return static_cast<double>(pgFlameRand01(&rng)); }
  bool bit() { return pgFlameRandBit(&rng) != 0; }
};

/// A parameter of the xform by its flam3 attribute name.
struct ParamLookup {
  const FlameXform& xf;
  double operator()(std::string_view name) const {
    const std::optional<int> i = flameParamIndex(name);
    EXPECT_TRUE(i.has_value()) << name;
    return i ? xf.params[static_cast<size_t>(*i)] : 0.0;
  }
};

Vec2 polar(double radius, double angle) { return {radius * std::cos(angle), radius * std::sin(angle)}; }
Vec2 fromComplex(cplx z) { return {z.real(), z.imag()}; }

/// weight × variation v at (x, y), flam3's semantics, in double. `defined`
/// is cleared for an index the reference does not know.
Vec2 reference(int v, double w, double x, double y, const FlameXform& xf, ReplayRng& rng, bool& defined) {
  const ParamLookup P{xf};
  const double r2 = x * x + y * y, r = std::sqrt(r2);
  const double theta = std::atan2(x, y);  // flam3's "angle" (paper: θ = arctan(x/y))
  const double phi = std::atan2(y, x);    // the usual angle (paper: φ)
  const cplx z(x, y);
  const FlameAffine& m = xf.affine;
  auto gauss4 = [&] {
    double s = 0;
    for (int i = 0; i < 4; ++i) s += rng.u01();
    return s - 2.0;
  };
  auto scale = [&](double s) { return Vec2{s * x, s * y}; };
  switch (v) {
    case 0: return {w * x, w * y};
    case 1: return {w * std::sin(x), w * std::sin(y)};
    case 2: return scale(w / (r2 + kEps));
    case 3: return {w * (x * std::sin(r2) - y * std::cos(r2)), w * (x * std::cos(r2) + y * std::sin(r2))};
    case 4: return {w * (x - y) * (x + y) / (r + kEps), w * 2 * x * y / (r + kEps)};
    case 5: return {w * theta / kPi, w * (r - 1)};
    case 6: return {w * r * std::sin(theta + r), w * r * std::cos(theta - r)};
    case 7: return {w * r * std::sin(theta * r), -w * r * std::cos(theta * r)};
    case 8: return {w * theta / kPi * std::sin(kPi * r), w * theta / kPi * std::cos(kPi * r)};
    case 9: {
      const double re = r + kEps;
      return {w / re * (std::cos(theta) + std::sin(re)), w / re * (std::sin(theta) - std::cos(re))};
    }
    case 10: return {w * std::sin(theta) / (r + kEps), w * std::cos(theta) * (r + kEps)};
    case 11: return {w * std::sin(theta) * std::cos(r), w * std::cos(theta) * std::sin(r)};
    case 12: {
      const double p0 = std::pow(std::sin(theta + r), 3), p1 = std::pow(std::cos(theta - r), 3);
      return {w * r * (p0 + p1), w * r * (p0 - p1)};
    }
    case 13: {
      const double omega = rng.bit() ? kPi : 0.0;
      return polar(w * std::sqrt(r), theta / 2 + omega);
    }
    case 14: return {w * (x < 0 ? 2 * x : x), w * (y < 0 ? y / 2 : y)};
    case 15: return {w * (x + m.b * std::sin(y / (m.c * m.c + kEps))), w * (y + m.e * std::sin(x / (m.f * m.f + kEps)))};
    case 16: return {w * 2 / (r + 1) * y, w * 2 / (r + 1) * x};
    case 17: return {w * (x + m.c * std::sin(std::tan(3 * y))), w * (y + m.f * std::sin(std::tan(3 * x)))};
    case 18: return polar(w * std::exp(x - 1), kPi * y);
    case 19: return polar(w * std::pow(r, std::sin(theta)), theta);
    case 20: return fromComplex(w * std::cos(cplx(kPi * x, y)));  // cos(πx)cosh y, −sin(πx)sinh y
    case 21: {
      const double d = m.c * m.c + kEps;
      const double rr = std::fmod(r + d, 2 * d) - d + r * (1 - d);
      return polar(w * rr, theta);
    }
    case 22: {
      const double t = kPi * (m.c * m.c + kEps);
      const double a = theta + (std::fmod(theta + m.f, t) > t / 2 ? -t / 2 : t / 2);
      return polar(w * r, a);
    }
    case 23: {
      const double rr = r * (P("blob_low") + (P("blob_high") - P("blob_low")) / 2 * (std::sin(P("blob_waves") * theta) + 1));
      return {w * rr * std::sin(theta), w * rr * std::cos(theta)};
    }
    case 24:
      return {w * (std::sin(P("pdj_a") * y) - std::cos(P("pdj_b") * x)),
              w * (std::sin(P("pdj_c") * x) - std::cos(P("pdj_d") * y))};
    case 25: {
      const double p1 = kPi * (P("fan2_x") * P("fan2_x") + kEps), p2 = P("fan2_y");
      const double t = theta + p2 - p1 * std::trunc((theta + p2) / p1);
      const double a = t > p1 / 2 ? theta - p1 / 2 : theta + p1 / 2;
      return {w * r * std::sin(a), w * r * std::cos(a)};
    }
    case 26: {
      const double p = P("rings2_val") * P("rings2_val") + kEps;
      const double t = r - 2 * p * std::trunc((r + p) / (2 * p)) + r * (1 - p);
      return {w * t * std::sin(theta), w * t * std::cos(theta)};
    }
    case 27: return scale(w * 2 / (r + 1));
    case 28: return scale(w * 4 / (r2 + 4));
    case 29: return {w * std::sin(x), w * y};
    case 30: {
      const double angle = P("perspective_angle") * kPi / 2, dist = P("perspective_dist");
      return {w * dist / (dist - y * std::sin(angle)) * x, w * dist * std::cos(angle) / (dist - y * std::sin(angle)) * y};
    }
    case 31: {
      const double psi1 = rng.u01(), psi2 = rng.u01();
      return {w * psi2 * x * std::cos(2 * kPi * psi1), w * psi2 * y * std::sin(2 * kPi * psi1)};
    }
    case 32: {
      const double power = P("julian_power"), dist = P("julian_dist");
      const double k = std::trunc(std::fabs(power) * rng.u01());
      return polar(w * std::pow(r, dist / power), (phi + 2 * kPi * k) / power);
    }
    case 33: {
      const double power = P("juliascope_power"), dist = P("juliascope_dist");
      const double k = std::trunc(std::fabs(power) * rng.u01());
      const bool odd = static_cast<long long>(k) % 2 != 0;
      return polar(w * std::pow(r, dist / power), (2 * kPi * k + (odd ? -phi : phi)) / power);
    }
    case 34: {
      const double psi1 = rng.u01(), psi2 = rng.u01();
      return polar(w * psi2, 2 * kPi * psi1);
    }
    case 35: {
      const double psi = rng.u01();
      return polar(w * gauss4(), 2 * kPi * psi);
    }
    case 36: {
      const double g = w * gauss4();
      const double spin = std::sin(P("radial_blur_angle") * kPi / 2), zoom = std::cos(P("radial_blur_angle") * kPi / 2);
      const Vec2 rot = polar(r, phi + spin * g);
      return {rot.x + (zoom * g - 1) * x, rot.y + (zoom * g - 1) * y};
    }
    case 37: {
      const double slices = P("pie_slices");
      const double t1 = std::trunc(rng.u01() * slices + 0.5);
      const double t2 = P("pie_rotation") + 2 * kPi / slices * (t1 + rng.u01() * P("pie_thickness"));
      return polar(w * rng.u01(), t2);
    }
    case 38: {
      const double b = 2 * kPi / P("ngon_sides");
      double t = phi - b * std::floor(phi / b);
      if (t > b / 2) t -= b;
      const double k = (P("ngon_corners") * (1 / (std::cos(t) + kEps) - 1) + P("ngon_circle")) /
                       (std::pow(r, P("ngon_power")) + kEps);
      return scale(w * k);
    }
    case 39: {
      // z / (1 + c1 z + c2 z²)
      return fromComplex(w * z / (1.0 + P("curl_c1") * z + P("curl_c2") * z * z));
    }
    case 40: {
      const double px = P("rectangles_x"), py = P("rectangles_y");
      return {w * ((2 * std::floor(x / px) + 1) * px - x), w * ((2 * std::floor(y / py) + 1) * py - y)};
    }
    case 41: {
      const double a = rng.u01() * w * kPi;
      return {w * std::sin(a), w * std::sin(a) * std::tan(a)};
    }
    case 42: return {w * std::sin(x) / std::cos(y), w * std::tan(y)};
    case 43: {
      const double a = rng.u01(), b = rng.u01();
      return {w * (a - 0.5), w * (b - 0.5)};
    }
    case 44: {
      const double k = w * w * std::tan(rng.u01() * w * kPi) / (r2 + kEps);
      return {k * std::cos(x), k * std::sin(y)};
    }
    case 45: {
      const double a = rng.u01() * w * r;
      return {w * x * (std::cos(a) + std::sin(a)), w * x * (std::cos(a) - std::sin(a))};
    }
    case 46: {
      const double c = std::cos(w * r);
      return {w * x, w * (1 / c + (c < 0 ? 1 : -1))};
    }
    case 47: {
      const double a = rng.u01() * w * r;
      double d = std::log10(std::sin(a) * std::sin(a)) + std::cos(a);
      if (!std::isfinite(d) || std::fabs(d) > 1e10) d = -30;
      return {w * x * d, w * x * (d - kPi * std::sin(a))};
    }
    case 48: return scale(w / std::sqrt((x * x - y * y) * (x * x - y * y) + kEps));
    case 49: {
      const double twist = P("disc2_twist");
      double sinadd = std::sin(twist), cosadd = std::cos(twist) - 1;
      const double k = twist > 2 * kPi ? 1 + twist - 2 * kPi : twist < -2 * kPi ? 1 + twist + 2 * kPi : 1.0;
      sinadd *= k;
      cosadd *= k;
      const double t = P("disc2_rot") * kPi * (x + y);
      return {w * theta / kPi * (std::sin(t) + cosadd), w * theta / kPi * (std::cos(t) + sinadd)};
    }
    case 50: {
      const double th = P("super_shape_m") / 4 * phi + kPi / 4;
      const double rnd = P("super_shape_rnd");
      const double rr = rnd * rng.u01() + (1 - rnd) * r - P("super_shape_holes");
      const double shape = std::pow(std::pow(std::fabs(std::cos(th)), P("super_shape_n2")) +
                                        std::pow(std::fabs(std::sin(th)), P("super_shape_n3")),
                                    -1 / P("super_shape_n1"));
      return polar(w * rr * shape, phi);  // = (rr·shape/r)·(x, y)
    }
    case 51: return polar(w * (rng.u01() - P("flower_holes")) * std::cos(P("flower_petals") * phi), phi);
    case 52: {
      const double e = P("conic_eccentricity");
      return polar(w * (rng.u01() - P("conic_holes")) * e / (1 + e * std::cos(phi)), phi);
    }
    case 53: {
      const double a = rng.u01(), b = rng.u01();
      return {P("parabola_height") * w * std::sin(r) * std::sin(r) * a, P("parabola_width") * w * std::cos(r) * b};
    }
    case 54: return {w * (x < 0 ? x * P("bent2_x") : x), w * (y < 0 ? y * P("bent2_y") : y)};
    case 55: {
      double t = 0.5 * std::atan2(2 * y, r2 - 1) - kPi / 2 * P("bipolar_shift");
      // wrapped into [−π/2, π/2]
      if (t > kPi / 2) t = -kPi / 2 + std::fmod(t + kPi / 2, kPi);
      else if (t < -kPi / 2) t = kPi / 2 - std::fmod(kPi / 2 - t, kPi);
      return {w / (2 * kPi) * std::log(((x + 1) * (x + 1) + y * y) / ((x - 1) * (x - 1) + y * y)), w * 2 / kPi * t};
    }
    case 56: {
      const double rx = std::nearbyint(x), ry = std::nearbyint(y), ox = x - rx, oy = y - ry;
      Vec2 q{ox / 2 + rx, oy / 2 + ry};
      if (rng.u01() < 0.75) {
        if (std::fabs(ox) >= std::fabs(oy)) {
          q.x += ox >= 0 ? 0.25 : -0.25;
          q.y += (ox >= 0 ? 0.25 : -0.25) * oy / ox;
        } else {
          q.y += oy >= 0 ? 0.25 : -0.25;
          q.x += (oy >= 0 ? 0.25 : -0.25) * ox / oy;
        }
      }
      return {w * q.x, w * q.y};
    }
    case 57: {
      const double k = w * 4 / std::sqrt(3 * kPi) * std::sqrt(std::fabs(x * y) / (kEps + x * x + 4 * y * y));
      return {k * x, k * 2 * y};
    }
    case 58: {
      const double s = P("cell_size");
      const double cx = std::floor(x / s), cy = std::floor(y / s);
      const double fx = x - cx * s, fy = y - cy * s;
      const double ix = cx >= 0 ? 2 * cx : -2 * cx - 1, iy = cy >= 0 ? 2 * cy : -2 * cy - 1;
      return {w * (fx + ix * s), -w * (fy + iy * s)};
    }
    case 59: {
      const double power = P("cpow_power");
      const cplx c(P("cpow_r") / power, P("cpow_i") / power);
      const double branch = 2 * kPi / power * std::floor(power * rng.u01());
      return fromComplex(w * std::exp(c * std::log(z)) * std::polar(1.0, branch));
    }
    case 60: {
      const double xl = std::max(P("curve_xlength") * P("curve_xlength"), 1e-20);
      const double yl = std::max(P("curve_ylength") * P("curve_ylength"), 1e-20);
      return {w * (x + P("curve_xamp") * std::exp(-y * y / xl)), w * (y + P("curve_yamp") * std::exp(-x * x / yl))};
    }
    case 61: {
      // Elliptic coordinates: xmax = (|z+1| + |z−1|)/2, cos ν = x / xmax; flam3's
      // μ = log(xmax + sqrt(xmax − 1)) (acosh would take sqrt(xmax² − 1)).
      const double xmax = (std::abs(z + 1.0) + std::abs(z - 1.0)) / 2;
      const double mu = std::log(xmax + std::sqrt(xmax - 1)), nu = std::acos(x / xmax);
      const double s = y > 0 ? -1 : 1;
      return {w / 11.57034632 * std::cosh(-nu) * std::cos(mu), w / 11.57034632 * std::sinh(-nu) * s * std::sin(mu)};
    }
    case 62: {
      const double xmax = (std::abs(z + 1.0) + std::abs(z - 1.0)) / 2;
      const double a = x / xmax;
      const double l = std::log(xmax + std::sqrt(std::max(xmax - 1, 0.0)));
      return {w * 2 / kPi * std::asin(std::clamp(a, -1.0, 1.0)), (y > 0 ? 1 : -1) * w * 2 / kPi * l};
    }
    case 63: {
      const double beta = P("escher_beta");
      const cplx c(0.5 * (1 + std::cos(beta)), 0.5 * std::sin(beta));
      return fromComplex(w * std::exp(c * std::log(z)));
    }
    case 64: {
      const double ex = std::exp(x) / 2, enx = 1 / (4 * ex);  // sinh/cosh halves
      const double k = w / (ex + enx - std::cos(y));
      return {k * (ex - enx), k * std::sin(y)};
    }
    case 65: {
      const double lx = P("lazysusan_x"), ly = P("lazysusan_y");
      const double u = x - lx, t = y + ly, d = std::hypot(u, t);
      if (d < w) {
        const Vec2 q = polar(w * d, std::atan2(t, u) + P("lazysusan_spin") + P("lazysusan_twist") * (w - d));
        return {q.x + lx, q.y - ly};
      }
      const double k = w * (1 + P("lazysusan_space") / d);
      return {k * u + lx, k * t - ly};
    }
    case 66: return r2 < w * w ? scale(w * std::sqrt(w * w / r2 - 1)) : scale(w);
    case 67: return {};  // pre_blur moves the input; it adds nothing itself
    case 68: {
      auto wrap = [](double t, double mm) {
        if (t > mm) return -mm + std::fmod(t + mm, 2 * mm);
        if (t < -mm) return mm - std::fmod(mm - t, 2 * mm);
        return t;
      };
      return {w * wrap(x, P("modulus_x")), w * wrap(y, P("modulus_y"))};
    }
    case 69: {
      const double t = P("oscilloscope_amplitude") * std::exp(-std::fabs(x) * P("oscilloscope_damping")) *
                           std::cos(2 * kPi * P("oscilloscope_frequency") * x) +
                       P("oscilloscope_separation");
      return {w * x, std::fabs(y) <= t ? -w * y : w * y};
    }
    case 70: return {w / kPi * theta, w / kPi * std::log(r)};
    case 71: {
      const double c = P("popcorn2_c");
      return {w * (x + P("popcorn2_x") * std::sin(std::tan(y * c))), w * (y + P("popcorn2_y") * std::sin(std::tan(x * c)))};
    }
    case 72: return scale(1 / (r * (r2 + 1 / (w + kEps))));
    case 73: {
      auto sep = [&](double t, double s, double inside) {
        return t > 0 ? std::sqrt(t * t + s * s) - t * inside : -(std::sqrt(t * t + s * s) + t * inside);
      };
      return {w * sep(x, P("separation_x"), P("separation_xinside")), w * sep(y, P("separation_y"), P("separation_yinside"))};
    }
    case 74:
      return {std::cos(y * P("split_ysize") * kPi) >= 0 ? w * x : -w * x,
              std::cos(x * P("split_xsize") * kPi) >= 0 ? w * y : -w * y};
    case 75:
      return {w * (x >= 0 ? x + P("splits_x") : x - P("splits_x")), w * (y >= 0 ? y + P("splits_y") : y - P("splits_y"))};
    case 76: {
      const double rx = std::floor(x + 0.5), ox = x - rx;
      return {w * (ox * (1 - P("stripes_space")) + rx), w * (y + ox * ox * P("stripes_warp"))};
    }
    case 77: {
      const double a0 = phi + P("wedge_swirl") * r, n = P("wedge_count"), ang = P("wedge_angle");
      const double c = std::floor((n * a0 + kPi) / (2 * kPi));
      return polar(w * (r + P("wedge_hole")), a0 * (1 - ang * n / (2 * kPi)) + c * ang);
    }
    case 78: {
      const double power = P("wedge_julia_power"), n = P("wedge_julia_count"), ang = P("wedge_julia_angle");
      const double k = std::trunc(std::fabs(power) * rng.u01());
      const double a0 = (phi + 2 * kPi * k) / power;
      const double c = std::floor((n * a0 + kPi) / (2 * kPi));
      return polar(w * std::pow(r, P("wedge_julia_dist") / power), a0 * (1 - ang * n / (2 * kPi)) + c * ang);
    }
    case 79: {
      const double ir = 1 / (r + kEps), n = P("wedge_sph_count"), ang = P("wedge_sph_angle");
      const double a0 = phi + P("wedge_sph_swirl") * ir;
      const double c = std::floor((n * a0 + kPi) / (2 * kPi));
      return polar(w * (ir + P("wedge_sph_hole")), a0 * (1 - ang * n / (2 * kPi)) + c * ang);
    }
    case 80: return polar(w * r, phi + (r < w ? P("whorl_inside") : P("whorl_outside")) / (w - r));
    case 81:
      return {w * (x + P("waves2_scalex") * std::sin(y * P("waves2_freqx"))),
              w * (y + P("waves2_scaley") * std::sin(x * P("waves2_freqy")))};
    case 82: return fromComplex(w * std::exp(z));
    case 83: return fromComplex(w * std::log(z));
    case 84: return fromComplex(w * std::sin(z));
    case 85: return fromComplex(w * std::cos(z));
    case 86: return fromComplex(w * std::tan(z));
    case 87: return fromComplex(w / std::cos(z));
    case 88: return fromComplex(w / std::sin(z));
    case 89: return fromComplex(w / std::tan(z));
    case 90: return fromComplex(w * std::sinh(z));
    case 91: return fromComplex(w * std::cosh(z));
    case 92: return fromComplex(w * std::tanh(z));
    case 93: return fromComplex(w / std::cosh(z));
    case 94: return fromComplex(w / std::sinh(z));
    case 95: return fromComplex(w * std::conj(1.0 / std::tanh(z)));  // flam3's coth: imaginary sign flipped
    case 96: {
      const double f = P("auger_freq"), aw = P("auger_weight"), sc = P("auger_scale");
      const double s = std::sin(f * x), t = std::sin(f * y);
      const double dx = x + aw * (sc * t / 2 + std::fabs(x) * t);
      const double dy = y + aw * (sc * s / 2 + std::fabs(y) * s);
      return {w * (x + P("auger_sym") * (dx - x)), w * dy};
    }
    case 97: {
      // Average of the polar coordinates about the foci ±w.
      const cplx zp = z + w, zm = z - w;
      const double rad = w * (2 + P("flux_spread")) * std::sqrt(std::abs(zp) / std::abs(zm));
      return polar(rad, (std::arg(zm) - std::arg(zp)) / 2);
    }
    case 98: {
      const cplx a(P("mobius_re_a"), P("mobius_im_a")), b(P("mobius_re_b"), P("mobius_im_b"));
      const cplx c(P("mobius_re_c"), P("mobius_im_c")), d(P("mobius_re_d"), P("mobius_im_d"));
      return fromComplex(w * (a * z + b) / (c * z + d));
    }
    default:
      defined = false;
      return {};
  }
}


struct RefPoint {
  double x = 0, y = 0, color = 0;
  bool bad = false;
};

/// flam3's apply_xform in double: colour blend, affine, pre_blur first, the
/// terms in order, the post-affine, the bad-value verdict.
/// `dx`, `dy` are added to the affine output (the sensitivity estimate below).
RefPoint referenceApply(const FlameXform& xf, float px, float py, float pc, ReplayRng& rng, bool& defined,
                        double dx = 0, double dy = 0) {
  RefPoint out;
  const double cs = static_cast<float>(xf.color_speed), c = static_cast<float>(xf.color);
  out.color = cs * c + (1 - cs) * pc;
  const FlameAffine& m = xf.affine;
  double tx = m.a * px + m.b * py + m.c + dx, ty = m.d * px + m.e * py + m.f + dy;
  for (const FlameVariationTerm& t : xf.variations) {
    if (t.index != 67) continue;
    double g = 0;
    for (int i = 0; i < 4; ++i) g += rng.u01();
    g = t.weight * (g - 2);
    const double a = rng.u01() * 2 * kPi;
    tx += g * std::cos(a);
    ty += g * std::sin(a);
  }
  for (const FlameVariationTerm& t : xf.variations) {
    const Vec2 d = reference(t.index, t.weight, tx, ty, xf, rng, defined);
    out.x += d.x;
    out.y += d.y;
  }
  if (!xf.post.isIdentity()) {
    const FlameAffine& q = xf.post;
    const double x = q.a * out.x + q.b * out.y + q.c, y = q.d * out.x + q.e * out.y + q.f;
    out.x = x;
    out.y = y;
  }
  out.bad = !(std::fabs(out.x) <= 1e10 && std::fabs(out.y) <= 1e10);
  return out;
}

PgFlameRng testRng() {
  PgFlameRng rng;
  pgFlameRngInit(&rng, 0x5eedf1a3ULL, 7);
  return rng;
}

/// Applies the (single) xform of `table` to (x, y, color).
int apply(const flame::XformTable& table, PgFlamePoint& p, PgFlameRng& rng, size_t xform = 0) {
  return pgFlameApplyXform(&table.xforms[xform], table.terms.data(), table.params.data(), &p, &rng);
}

double distance(double x0, double y0, double x1, double y1) { return std::max(std::fabs(x0 - x1), std::fabs(y0 - y1)); }

/// How far the exact result moves when the affine output moves by its own
/// float rounding: ±4ε(|a x| + |b y| + |c|) in x (likewise y), ε = 2^-24 —
/// the part of the float error that no float implementation can avoid (large
/// where the formula is ill-conditioned, e.g. wedge_sph's angle swirl/r near 0).
double inputSensitivity(const FlameXform& xf, float px, float py, const ReplayRng& start, const RefPoint& want) {
  const FlameAffine& m = xf.affine;
  const double eps = 4.0 * std::ldexp(1.0, -24);
  const double ex = eps * (std::fabs(m.a * px) + std::fabs(m.b * py) + std::fabs(m.c));
  const double ey = eps * (std::fabs(m.d * px) + std::fabs(m.e * py) + std::fabs(m.f));
  double spread = 0;
  for (const auto& [dx, dy] : {std::pair{ex, 0.0}, {-ex, 0.0}, {0.0, ey}, {0.0, -ey}}) {
    ReplayRng rng = start;
    bool defined = true;
    const RefPoint moved = referenceApply(xf, px, py, 0.0f, rng, defined, dx, dy);
    spread = std::max(spread, distance(moved.x, moved.y, want.x, want.y));
  }
  return spread;
}

/// The size the error is measured against, for the few variations whose
/// result is a small difference of large float terms, and the factor on
/// kRelTol for those that amplify a float rounding inside the formula:
///  - radial_blur: r·e^{i(φ + spin·g)} − (1 − zoom·g)·t, two vectors of
///    length ≈ r that cancel when g is small: measured against r;
///  - arch and rays: tan / sec of the float angle u·w·π (two roundings,
///    ≈1.2e-7 relative) near π/2, amplified by a·tan a (≈ 100 at these
///    draws): 10 × kRelTol.
struct ErrorScale {
  double size_floor = 0;
  double factor = 1;
};
ErrorScale errorScale(const FlameXform& xf, double tx, double ty) {
  ErrorScale e;
  for (const FlameVariationTerm& t : xf.variations) {
    if (t.index == 36) e.size_floor = std::max(e.size_floor, std::hypot(tx, ty));
    if (t.index == 41 || t.index == 44) e.factor = 10;
  }
  return e;
}

/// Evaluates `xf` at every test point, `draws` times each (continuing the
/// random stream), and checks each result against referenceApply.
void checkAgainstReference(const FlameXform& xf, const std::string& what, int draws = 1) {
  const flame::XformTable table = compileOne(xf);
  PgFlameRng rng = testRng();
  for (const auto& t : testAffineOutputs()) {
    const std::array<float, 2> in = inputFor(t);
    for (int k = 0; k < draws; ++k) {
      const PgFlameRng start = rng;
      ReplayRng replay{rng};
      bool defined = true;
      const RefPoint want = referenceApply(xf, in[0], in[1], 0.25f, replay, defined);
      ASSERT_TRUE(defined) << what << ": the reference does not know this variation";
      PgFlamePoint p{in[0], in[1], 0.25f};
      const int ok = apply(table, p, rng);
      SCOPED_TRACE(what + " at affine output (" + std::to_string(t[0]) + ", " + std::to_string(t[1]) +
                   "), draw " + std::to_string(k));
      // The same random numbers, in the same order, and no more.
      EXPECT_EQ(pgFlameRandU32(&replay.rng), pgFlameRandU32(&rng)) << "random draws out of step";
      if (want.bad) {
        EXPECT_EQ(ok, 0) << "reference is a bad value (" << want.x << ", " << want.y << "), got (" << p.x << ", "
                         << p.y << ")";
        continue;
      }
      ASSERT_EQ(ok, 1) << "got a bad value (" << p.x << ", " << p.y << "), reference (" << want.x << ", " << want.y
                       << ")";
      const ErrorScale scale = errorScale(xf, t[0], t[1]);
      const double size = std::max({std::fabs(want.x), std::fabs(want.y), 1e-3, scale.size_floor});
      const double sensitivity = inputSensitivity(xf, in[0], in[1], ReplayRng{start}, want);
      // A test point on a discontinuity (floor, fmod, a branch) would make the
      // comparison vacuous — a jump moves the result by a sizeable fraction
      // of itself, while the worst smooth case here (wedge_sph's swirl/r near
      // 0) moves it by 1.2e-3: the fixtures keep every point off the jumps.
      ASSERT_LE(sensitivity, 1e-2 * size) << "the test point sits on a discontinuity; move it (sensitivity " << sensitivity << ", size " << size << ")";
      EXPECT_LE(distance(p.x, p.y, want.x, want.y), scale.factor * kRelTol * size + sensitivity)
          << "got (" << p.x << ", " << p.y << "), reference (" << want.x << ", " << want.y
          << "), input sensitivity " << sensitivity;
      EXPECT_DOUBLE_EQ(p.color, static_cast<float>(want.color));
    }
  }
}

bool usesRandomNumbers(int v) {
  switch (v) {
    case 13: case 31: case 32: case 33: case 34: case 35: case 36: case 37: case 41: case 43: case 44:
    case 45: case 47: case 50: case 51: case 52: case 53: case 56: case 59: case 67: case 78:
      return true;
    default:
      return false;
  }
}

}  // namespace

// Each of the 99 variations alone (pre_blur beside linear, since alone it
// adds nothing), at two weights, against the reference.
TEST(FlameVariations, EachMatchesTheDoubleReference) {
  for (int v = 0; v < kFlameVariationCount; ++v) {
    for (double w : {0.7, -0.45}) {
      std::vector<std::pair<int, double>> terms = {{v, w}};
      if (v == 67) terms = {{0, 0.9}, {67, w}};
      const std::string what = std::string(flameVariationName(v)) + " (" + std::to_string(v) + ") weight " +
                               std::to_string(w);
      checkAgainstReference(testXform(terms), what, usesRandomNumbers(v) ? 6 : 1);
    }
  }
}

// No silent zero: every catalogue index moves some test point (pre_blur:
// linear with pre_blur differs from linear alone).
TEST(FlameVariations, EveryCatalogueIndexIsImplemented) {
  for (int v = 0; v < kFlameVariationCount; ++v) {
    SCOPED_TRACE(flameVariationName(v));
    const flame::XformTable with = compileOne(testXform(v == 67 ? std::vector<std::pair<int, double>>{{0, 1.0}, {67, 0.7}}
                                                                : std::vector<std::pair<int, double>>{{v, 0.7}}));
    const flame::XformTable without = compileOne(testXform({{0, 1.0}}));
    bool moved = false;
    for (const auto& t : testAffineOutputs()) {
      const std::array<float, 2> in = inputFor(t);
      PgFlameRng rng = testRng();
      PgFlamePoint p{in[0], in[1], 0.5f};
      apply(with, p, rng);
      if (v == 67) {
        PgFlameRng rng2 = testRng();
        PgFlamePoint q{in[0], in[1], 0.5f};
        apply(without, q, rng2);
        moved = moved || p.x != q.x || p.y != q.y;
      } else {
        moved = moved || p.x != 0.0f || p.y != 0.0f;
      }
    }
    EXPECT_TRUE(moved) << "variation " << v << " adds nothing at every test point";
  }
  // Outside the catalogue: nothing (the reader never produces one).
  PgFlameVarInput in{0.5f, 0.25f, 0.3125f, std::sqrt(0.3125f), 0.0f, 0.0f, 0.0f, 0.0f};
  PgFlameRng rng = testRng();
  const flame::XformTable table = compileOne(testXform({{0, 1.0}}));
  const PgFlameVec2 d = pgFlameVariation(kFlameVariationCount, 1.0f, &in, table.params.data(), table.xforms[0].affine, &rng);
  EXPECT_EQ(d.x, 0.0f);
  EXPECT_EQ(d.y, 0.0f);
}

// The flags compiled for each variation cover every precalculation it reads:
// computing all of them changes nothing, bit for bit.
TEST(FlameVariations, CompiledFlagsCoverWhatEachVariationReads) {
  constexpr pg_u32 kAllPrecalc = PG_FLAME_NEEDS_R | PG_FLAME_NEEDS_ATAN_XY | PG_FLAME_NEEDS_ANGLES | PG_FLAME_NEEDS_ATAN_YX;
  for (int v = 0; v < kFlameVariationCount; ++v) {
    SCOPED_TRACE(flameVariationName(v));
    const flame::XformTable compiled = compileOne(testXform({{v, 0.7}}));
    flame::XformTable everything = compiled;
    everything.xforms[0].flags |= kAllPrecalc;
    for (const auto& t : testAffineOutputs()) {
      const std::array<float, 2> in = inputFor(t);
      PgFlameRng r1 = testRng(), r2 = testRng();
      PgFlamePoint a{in[0], in[1], 0.5f}, b{in[0], in[1], 0.5f};
      apply(compiled, a, r1);
      apply(everything, b, r2);
      // Bit patterns, so that NaN == NaN.
      EXPECT_EQ(std::bit_cast<uint32_t>(a.x), std::bit_cast<uint32_t>(b.x)) << a.x << " vs " << b.x;
      EXPECT_EQ(std::bit_cast<uint32_t>(a.y), std::bit_cast<uint32_t>(b.y)) << a.y << " vs " << b.y;
    }
  }
}

// pre_blur moves the affine output before every other term reads it, even
// those listed first (julia, index 13 < 67), and draws its five numbers first.
TEST(FlameVariations, PreBlurAppliesFirst) {
  const FlameXform xf = testXform({{13, 0.6}, {67, 0.35}});
  checkAgainstReference(xf, "julia + pre_blur", 8);

  // The check is not vacuous: julia of the unblurred point, with julia's bit
  // drawn after pre_blur's five numbers, is a different point.
  const flame::XformTable table = compileOne(xf);
  const std::array<float, 2> in = inputFor({0.7, 0.45});
  PgFlameRng rng = testRng();
  ReplayRng replay{rng};
  PgFlamePoint p{in[0], in[1], 0.0f};
  ASSERT_EQ(apply(table, p, rng), 1);
  for (int i = 0; i < 5; ++i) replay.u01();
  bool defined = true;
  const Vec2 unblurred = reference(13, 0.6, 0.7, 0.45, xf, replay, defined);
  EXPECT_GT(std::hypot(p.x - unblurred.x, p.y - unblurred.y), 1e-3);
}

TEST(FlameVariations, PostAffineAppliesToTheSum) {
  FlameXform xf = testXform({{0, 0.6}, {3, 0.3}, {83, 0.25}});
  xf.post = FlameAffine{0.5, -0.8, 0.3, 0.9, 0.4, -0.2};
  checkAgainstReference(xf, "post(linear + swirl + log)");
  const flame::XformTable table = compileOne(xf);
  EXPECT_EQ(table.xforms[0].has_post, 1u);
  EXPECT_EQ(compileOne(testXform({{0, 1.0}})).xforms[0].has_post, 0u);

  // A hand-computed case: linear at (1, 2) with the identity pre-affine, post
  // x' = 2x − y + 1, y' = 3y − 4 → (1, 2).
  FlameXform lin;
  lin.variations = {{0, 1.0}};
  lin.post = FlameAffine{2, -1, 1, 0, 3, -4};
  const flame::XformTable t2 = compileOne(lin);
  PgFlameRng rng = testRng();
  PgFlamePoint p{1.0f, 2.0f, 0.0f};
  ASSERT_EQ(apply(t2, p, rng), 1);
  EXPECT_EQ(p.x, 1.0f);
  EXPECT_EQ(p.y, 2.0f);
}

TEST(FlameVariations, ColourBlendsByColorSpeed) {
  FlameXform xf = testXform({{0, 1.0}});
  xf.color = 0.8;
  xf.color_speed = 0.3;
  PgFlameRng rng = testRng();
  PgFlamePoint p{0.1f, 0.2f, 0.2f};
  apply(compileOne(xf), p, rng);
  EXPECT_NEAR(p.color, 0.3 * 0.8 + 0.7 * 0.2, 1e-7);  // 0.38
  xf.color_speed = 1.0;  // jump to the xform's colour
  p.color = 0.2f;
  apply(compileOne(xf), p, rng);
  EXPECT_EQ(p.color, 0.8f);
  xf.color_speed = 0.0;  // keep the point's colour
  p.color = 0.2f;
  apply(compileOne(xf), p, rng);
  EXPECT_EQ(p.color, 0.2f);
}

// NaN and anything beyond ±1e10 (flam3's badvalue) return 0.
TEST(FlameVariations, BadValuesReturnZero) {
  auto run = [](const std::vector<std::pair<int, double>>& terms, float x, float y, FlameAffine post = {}) {
    FlameXform xf;  // identity affine
    for (const auto& [v, w] : terms) xf.variations.push_back({v, w});
    xf.post = post;
    PgFlameRng rng = testRng();
    PgFlamePoint p{x, y, 0.0f};
    const int ok = apply(compileOne(xf), p, rng);
    return std::make_pair(ok, p);
  };
  EXPECT_EQ(run({{18, 1.0}}, 30.0f, 0.0f).first, 0);  // exponential: e^29 ≈ 3.9e12
  EXPECT_EQ(run({{18, 1.0}}, 20.0f, 0.0f).first, 1);  // e^19 ≈ 1.8e8
  const auto [nan_ok, nan_p] = run({{66, 1.0}}, 0.0f, 0.0f);  // loonie at 0: ∞ · 0
  EXPECT_TRUE(std::isnan(nan_p.x));
  EXPECT_EQ(nan_ok, 0);
  EXPECT_EQ(run({{0, 1.0}}, 9e9f, -9e9f).first, 1);
  EXPECT_EQ(run({{0, 1.0}}, 1.1e10f, 0.0f).first, 0);
  EXPECT_EQ(run({{0, 1.0}}, 0.0f, -1.1e10f).first, 0);
  // The verdict is on the post-affine result.
  EXPECT_EQ(run({{0, 1.0}}, 9e9f, 0.0f, FlameAffine{2, 0, 0, 0, 1, 0}).first, 0);
  EXPECT_EQ(run({{0, 1.0}}, 2e10f, 0.0f, FlameAffine{0.25, 0, 0, 0, 1, 0}).first, 1);
}

// A term list sums its variations (flam3's p0 += …), random ones included,
// drawing in term order.
TEST(FlameVariations, SeveralTermsSum) {
  const std::vector<std::pair<int, double>> terms = {{0, 0.3}, {13, 0.4}, {28, 0.2}, {37, 0.5}, {91, 0.1}, {98, -0.3}};
  checkAgainstReference(testXform(terms), "linear + julia + bubble + pie + cosh + mobius", 4);

  // And the sum is the sum of the terms applied one by one on the same stream.
  const flame::XformTable all = compileOne(testXform(terms));
  for (const auto& t : testAffineOutputs()) {
    const std::array<float, 2> in = inputFor(t);
    PgFlameRng rng = testRng(), rng1 = testRng();
    PgFlamePoint p{in[0], in[1], 0.0f};
    apply(all, p, rng);
    double sx = 0, sy = 0;
    for (const auto& term : terms) {
      PgFlamePoint q{in[0], in[1], 0.0f};
      apply(compileOne(testXform({term})), q, rng1);
      sx += q.x;
      sy += q.y;
    }
    EXPECT_NEAR(p.x, sx, 1e-6 * std::max(1.0, std::fabs(sx)));
    EXPECT_NEAR(p.y, sy, 1e-6 * std::max(1.0, std::fabs(sy)));
    EXPECT_EQ(pgFlameRandU32(&rng), pgFlameRandU32(&rng1));
  }
}

// variations.h's parameter indices are the catalogue's; the table holds one
// block of PG_FLAME_XFORM_PARAM_COUNT floats per xform, flam3's parameters
// first, and the flags are the union over the terms.
TEST(FlameVariations, ParameterLayoutFollowsTheCatalogue) {
  static_assert(PG_FLAME_P_COUNT == kFlameParamCount);
#define PG_CHECK_PARAM(id, attr)                                                   \
  EXPECT_EQ(flameParamIndex(#attr), std::optional<int>(PG_FLAME_P_##id)) << #attr; \
  EXPECT_EQ(flameParams()[PG_FLAME_P_##id].name, #attr);
  PG_FLAME_PARAM_LIST(PG_CHECK_PARAM)
#undef PG_CHECK_PARAM

  FlameGenome genome;
  genome.xforms = {testXform({{0, 0.5}, {5, 0.5}}), testXform({{32, 1.0}, {67, 0.2}})};
  genome.final_xform = testXform({{9, 1.0}});
  const flame::XformTable table = flame::compileXforms(genome);
  ASSERT_EQ(table.xforms.size(), 3u);
  EXPECT_EQ(table.params.size(), 3u * PG_FLAME_XFORM_PARAM_COUNT);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(table.xforms[i].param_begin, i * PG_FLAME_XFORM_PARAM_COUNT);
    for (const auto& [name, value] : testParams())
      EXPECT_EQ(table.params[table.xforms[i].param_begin + static_cast<size_t>(*flameParamIndex(name))],
                static_cast<float>(value))
          << name;
  }
  EXPECT_EQ(table.xforms[0].flags, PG_FLAME_NEEDS_R | PG_FLAME_NEEDS_ATAN_XY);
  EXPECT_EQ(table.xforms[1].flags, PG_FLAME_NEEDS_ATAN_YX | PG_FLAME_HAS_PRE_BLUR);
  EXPECT_EQ(table.xforms[2].flags, PG_FLAME_NEEDS_R | PG_FLAME_NEEDS_ANGLES);
  // The pre_blur weight is where pgFlameApplyXform reads it.
  EXPECT_EQ(table.params[table.xforms[1].param_begin + PG_FLAME_D_PRE_BLUR_WEIGHT], 0.2f);
}

// The complex tan … coth family keeps flam3's (double) range: a hyperbolic
// argument of ±60 overflows cosh in float but not the result, which must be
// flam3's value and not a bad value.
TEST(FlameVariations, ComplexTrigKeepsFlam3sRangeForLargeArguments) {
  const std::array<float, 2> points[] = {{0.3f, 60.0f}, {0.3f, -60.0f}, {60.0f, 0.3f}, {-60.0f, 0.3f}, {1.2f, 95.0f}};
  for (int v = 86; v <= 95; ++v) {
    if (v == 90 || v == 91) continue;  // sinh, cosh: genuinely beyond 1e10 there
    FlameXform xf;  // identity affine: the points are the arguments
    xf.variations = {{v, 0.7}};
    const flame::XformTable table = compileOne(xf);
    for (const auto& pt : points) {
      SCOPED_TRACE(std::string(flameVariationName(v)) + " at (" + std::to_string(pt[0]) + ", " + std::to_string(pt[1]) + ")");
      PgFlameRng rng = testRng();
      ReplayRng replay{rng};
      bool defined = true;
      const RefPoint want = referenceApply(xf, pt[0], pt[1], 0.0f, replay, defined);
      ASSERT_FALSE(want.bad);
      PgFlamePoint p{pt[0], pt[1], 0.0f};
      ASSERT_EQ(apply(table, p, rng), 1) << "(" << p.x << ", " << p.y << ")";
      const double size = std::max({std::fabs(want.x), std::fabs(want.y), 1e-3});
      EXPECT_LE(distance(p.x, p.y, want.x, want.y), kRelTol * size)
          << "got (" << p.x << ", " << p.y << "), reference (" << want.x << ", " << want.y << ")";
    }
  }
}
