// Genomes and measurements shared by the chaos-game tests
// (tests/flame/iterate_test.cpp, tests/flame/cpu/iterate_cpu_test.cpp).
// Genomes are built in code (no reader), each small enough to derive by hand
// what flam3 plots for it.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <vector>

#include "procgen/flame_render.hpp"

namespace procgen {

/// How gtest prints a FlameMethod parameter.
inline void PrintTo(FlameMethod m, std::ostream* os) {
  *os << (m == FlameMethod::kPresorted ? "presorted" : "naive");
}

namespace test {

inline constexpr int kLinear = 0;  // flam3 variation indices
inline constexpr int kSpherical = 2;

/// A genome with no xforms yet: the camera, a palette whose entry i is
/// (i, 255 − i, 64, 255)/255 (so red × 255 names the entry), no density
/// estimation (estimator_radius 0 keeps the gutter at the spatial filter's).
inline FlameGenome emptyGenome(int width, int height, double scale, double quality, double cx = 0,
                               double cy = 0) {
  FlameGenome g;
  g.width = width;
  g.height = height;
  g.scale = scale;
  g.quality = quality;
  g.center_x = cx;
  g.center_y = cy;
  g.estimator_radius = 0;
  for (int i = 0; i < 256; ++i)
    g.palette[static_cast<size_t>(i)] = {i / 255.0, (255 - i) / 255.0, 64 / 255.0, 1.0};
  return g;
}

/// x' = a x + b y + c, y' = d x + e y + f, then `linear` × (x', y') (+ spherical).
inline FlameXform affineXform(double weight, double a, double b, double c, double d, double e, double f,
                              double color = 0.0, double color_speed = 0.5, double linear = 1.0,
                              double spherical = 0.0) {
  FlameXform x;
  x.weight = weight;
  x.affine = {a, b, c, d, e, f};
  x.color = color;
  x.color_speed = color_speed;
  if (linear != 0) x.variations.push_back({kLinear, linear});
  if (spherical != 0) x.variations.push_back({kSpherical, spherical});
  return x;
}

/// The contraction x' = x/2 + 0.25, y' = y/2 − 0.1 (fixed point (0.5, −0.2))
/// on a 64×64 image at 10 pixels per unit centred on (0.05, 0.05), so that
/// the fixed point lies at the centre of a cell.
inline FlameGenome fixedPointGenome(double color = 0.5 + 1.0 / 512.0) {
  FlameGenome g = emptyGenome(64, 64, 10, 10, 0.05, 0.05);
  g.xforms.push_back(affineXform(1, 0.5, 0, 0.25, 0, 0.5, -0.1, color, 0.5));
  return g;
}

/// Three maps onto the thirds of [−1, 1] in x (x' = x/3 + (k − 1)·2/3,
/// y' = y/2): the ninth [−7/9, −5/9] is reached only through xform 1 then
/// xform 0.
inline FlameGenome thirdsGenome() {
  FlameGenome g = emptyGenome(180, 8, 80, 40);
  for (int k = 0; k < 3; ++k)
    g.xforms.push_back(affineXform(1, 1.0 / 3, 0, (k - 1) * 2.0 / 3, 0, 0.5, 0, k / 2.0));
  return g;
}

/// A four-xform spherical flame (the xforms of a `flam3-genome` random
/// genome with use_vars=2) on a 160×90 image.
inline FlameGenome sphericalGenome(double quality) {
  FlameGenome g = emptyGenome(160, 90, 148.0 / 8, quality, -0.364479, -1.05803);
  const double coefs[4][6] = {{-0.138514, -0.295664, 0.567153, 0.733005, -0.423628, -0.280372},
                              {-0.263944, -0.467615, -0.942268, 0.466256, 0.189527, -0.616175},
                              {0.239948, 0.597133, -0.127159, 0.380001, -0.782813, 0.961246},
                              {-0.885334, -0.4786, -0.991576, -0.173358, 0.126367, -0.214837}};
  for (int i = 0; i < 4; ++i) {
    const double* c = coefs[i];  // flam3's order: a d b e c f
    g.xforms.push_back(affineXform(0.25, c[0], c[2], c[4], c[1], c[3], c[5], i & 1, 0.5, 0.0, 1.0));
  }
  return g;
}

/// A slowly converging flame: a rotation by 20° contracting by 0.97 (weight
/// 0.95) and x/3 + (0.7, 0) (weight 0.05). A random start point takes some
/// 50 steps to reach the attractor, so short orbits plot a visible share of
/// that transient (orbits of 256 steps: ~15% of their samples).
inline FlameGenome slowGenome(double quality) {
  FlameGenome g = emptyGenome(120, 120, 40, quality);
  const double c = 0.97 * std::cos(20 * 3.141592653589793 / 180),
               s = 0.97 * std::sin(20 * 3.141592653589793 / 180);
  g.xforms.push_back(affineXform(0.95, c, -s, 0, s, c, 0, 0.0));
  g.xforms.push_back(affineXform(0.05, 1.0 / 3, 0, 0.7, 0, 1.0 / 3, 0, 1.0));
  return g;
}

inline FlameRenderOptions optionsFor(FlameMethod method, uint64_t seed = 1) {
  FlameRenderOptions o;
  o.method = method;
  o.seed = seed;
  return o;
}

/// World point → histogram cell, as rect.c computes it (no rotation):
/// (p − bounds) × cells / (bounds extent), truncated.
struct Cell {
  int x, y;
};
inline Cell cellOf(const FlameHistogramLayout& l, double x, double y) {
  return {static_cast<int>(std::floor((x - l.bounds[0]) * l.width / (l.bounds[2] - l.bounds[0]))),
          static_cast<int>(std::floor((y - l.bounds[1]) * l.height / (l.bounds[3] - l.bounds[1])))};
}
/// The world point at the centre of a cell.
inline void cellCentre(const FlameHistogramLayout& l, int ix, int iy, double* x, double* y) {
  *x = l.bounds[0] + (ix + 0.5) * (l.bounds[2] - l.bounds[0]) / l.width;
  *y = l.bounds[1] + (iy + 0.5) * (l.bounds[3] - l.bounds[1]) / l.height;
}
inline const FlameBucket& at(const FlameHistogram& h, int ix, int iy) {
  return h.buckets[static_cast<size_t>(iy) * static_cast<size_t>(h.layout.width) + static_cast<size_t>(ix)];
}
inline double totalCount(const FlameHistogram& h) {
  double sum = 0;
  for (const FlameBucket& b : h.buckets) sum += b.count;
  return sum;
}

/// Two histograms equal bit for bit (every field of every bucket).
inline bool sameBits(const FlameHistogram& a, const FlameHistogram& b) {
  return a.buckets.size() == b.buckets.size() &&
         std::memcmp(a.buckets.data(), b.buckets.data(), a.buckets.size() * sizeof(FlameBucket)) == 0 &&
         a.samples == b.samples && a.bad_values == b.bad_values && a.iterations == b.iterations;
}

/// Total-variation distance between the normalised `field` (0 = count,
/// 1 = red) of two equal-layout histograms summed over blocks of
/// block × block cells: ½ Σ |p − q|.
inline double blockDistance(const FlameHistogram& a, const FlameHistogram& b, int block, int field = 0) {
  const int w = a.layout.width, h = a.layout.height;
  const int bw = (w + block - 1) / block, bh = (h + block - 1) / block;
  std::vector<double> pa(static_cast<size_t>(bw * bh)), pb(pa.size());
  double sa = 0, sb = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const FlameBucket& ba = at(a, x, y);
      const FlameBucket& bb = at(b, x, y);
      const double va = field == 0 ? ba.count : ba.red, vb = field == 0 ? bb.count : bb.red;
      pa[static_cast<size_t>(y / block * bw + x / block)] += va;
      pb[static_cast<size_t>(y / block * bw + x / block)] += vb;
      sa += va;
      sb += vb;
    }
  double d = 0;
  for (size_t i = 0; i < pa.size(); ++i) d += std::abs(pa[i] / sa - pb[i] / sb);
  return d / 2;
}

/// Relative L1 distance of the log densities, Σ|log(1 + a/255) − log(1 + b/255)|
/// / Σ log(1 + a/255) over cells: what the tone map's log scaling shows, so
/// sparse hits in cells the other run leaves empty weigh in.
inline double logDensityDistance(const FlameHistogram& a, const FlameHistogram& b) {
  double d = 0, total = 0;
  for (size_t i = 0; i < a.buckets.size(); ++i) {
    const double la = std::log1p(a.buckets[i].count / 255.0), lb = std::log1p(b.buckets[i].count / 255.0);
    d += std::abs(la - lb);
    total += la;
  }
  return d / total;
}

/// A genome exercising every path of the chaos game at once: xaos, a final
/// xform applied with probability 0.7, opacity below 1, rotation, the
/// linear palette, a spread of weights.
inline FlameGenome everythingGenome(double quality) {
  FlameGenome g = sphericalGenome(quality);
  g.rotate = 30;
  g.palette_mode = FlamePaletteMode::kLinear;
  g.xforms[0].weight = 0.5;
  g.xforms[1].opacity = 0.6;
  g.xforms[2].chaos = {1.0, 0.0, 2.0, 1.0};
  g.xforms[3].chaos = {0.5};
  FlameXform final = affineXform(0, 0.9, 0.1, 0.05, -0.1, 0.9, 0.0, 0.8, 0.3, 0.7, 0.2);
  final.opacity = 0.7;
  g.final_xform = final;
  return g;
}

}  // namespace test
}  // namespace procgen
