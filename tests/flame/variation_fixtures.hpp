// What the variation tests share (host: variations_test.cpp; OpenCL:
// opencl/variations_opencl_test.cpp): one xform with a non-identity affine
// and every flam3 parameter set to a non-default value, the fixed test points
// (given as affine outputs — near 0, positive, negative, mixed, large — and
// mapped back through the affine), and the compiled tables.
#pragma once

#include <array>
#include <string_view>
#include <utility>
#include <vector>

#include "flame/xform_table.hpp"
#include "procgen/flame.hpp"

namespace procgen::test::flame {

/// a b c d e f; c and f are waves' frequencies and popcorn's amplitudes.
inline FlameAffine testAffine() { return FlameAffine{0.875, -0.3125, 0.15625, 0.25, 1.125, -0.1875}; }

/// Non-default values for every flam3 parameter (catalogue names).
inline const std::vector<std::pair<std::string_view, double>>& testParams() {
  static const std::vector<std::pair<std::string_view, double>> params = {
      {"blob_low", 0.2},          {"blob_high", 1.3},         {"blob_waves", 3.0},
      {"pdj_a", 1.1},             {"pdj_b", -0.7},            {"pdj_c", 2.3},
      {"pdj_d", 0.4},             {"fan2_x", 0.6},            {"fan2_y", 0.3},
      {"rings2_val", 0.45},       {"perspective_angle", 0.3}, {"perspective_dist", 2.5},
      {"julian_power", -3.0},     {"julian_dist", 0.7},       {"juliascope_power", 4.0},
      {"juliascope_dist", 1.6},   {"radial_blur_angle", 0.4}, {"pie_slices", 7.0},
      {"pie_rotation", 0.3},      {"pie_thickness", 0.6},     {"ngon_sides", 6.0},
      {"ngon_power", 2.5},        {"ngon_circle", 0.8},       {"ngon_corners", 1.7},
      {"curl_c1", 0.6},           {"curl_c2", 0.25},          {"rectangles_x", 0.57},
      {"rectangles_y", 1.3},      {"disc2_rot", 0.8},         {"disc2_twist", 7.0},
      {"super_shape_rnd", 0.3},   {"super_shape_m", 5.0},     {"super_shape_n1", 1.5},
      {"super_shape_n2", 2.5},    {"super_shape_n3", 0.8},    {"super_shape_holes", 0.1},
      {"flower_petals", 3.5},     {"flower_holes", 0.2},      {"conic_eccentricity", 0.6},
      {"conic_holes", 0.15},      {"parabola_height", 1.2},   {"parabola_width", 0.8},
      {"bent2_x", 1.8},           {"bent2_y", 0.6},           {"bipolar_shift", 0.35},
      {"cell_size", 0.55},         {"cpow_r", 1.5},            {"cpow_i", 0.3},
      {"cpow_power", 3.0},        {"curve_xamp", 0.5},        {"curve_yamp", -0.4},
      {"curve_xlength", 1.4},     {"curve_ylength", 0.9},     {"escher_beta", 0.45},
      {"lazysusan_spin", 0.6},    {"lazysusan_space", 0.3},   {"lazysusan_twist", 1.1},
      {"lazysusan_x", 0.2},       {"lazysusan_y", -0.3},      {"modulus_x", 0.9},
      {"modulus_y", 1.4},         {"oscilloscope_separation", 0.5},
      {"oscilloscope_frequency", 1.3},                        {"oscilloscope_amplitude", 0.8},
      {"oscilloscope_damping", 0.2},                          {"popcorn2_x", 0.3},
      {"popcorn2_y", -0.2},       {"popcorn2_c", 1.7},        {"separation_x", 0.4},
      {"separation_xinside", 0.3}, {"separation_y", 0.6},     {"separation_yinside", -0.2},
      {"split_xsize", 0.7},       {"split_ysize", 1.6},       {"splits_x", 0.25},
      {"splits_y", -0.4},         {"stripes_space", 0.3},     {"stripes_warp", 0.9},
      {"wedge_angle", 0.5},       {"wedge_hole", 0.2},        {"wedge_count", 3.0},
      {"wedge_swirl", 0.4},       {"wedge_julia_angle", 0.35}, {"wedge_julia_count", 2.0},
      {"wedge_julia_power", 3.0}, {"wedge_julia_dist", 0.9},  {"wedge_sph_angle", 0.4},
      {"wedge_sph_count", 2.0},   {"wedge_sph_hole", 0.15},   {"wedge_sph_swirl", 0.3},
      {"whorl_inside", 0.4},      {"whorl_outside", 0.7},     {"waves2_freqx", 2.1},
      {"waves2_scalex", 0.3},     {"waves2_freqy", 1.4},      {"waves2_scaley", -0.5},
      {"auger_sym", 0.6},         {"auger_weight", 0.7},      {"auger_freq", 1.8},
      {"auger_scale", 1.3},       {"flux_spread", 0.4},       {"mobius_re_a", 0.8},
      {"mobius_im_a", 0.3},       {"mobius_re_b", -0.2},      {"mobius_im_b", 0.5},
      {"mobius_re_c", 0.1},       {"mobius_im_c", -0.4},      {"mobius_re_d", 1.1},
      {"mobius_im_d", 0.2},
  };
  return params;
}

/// An xform with testAffine(), every parameter from testParams(), the given
/// terms (index, weight) and flam3's defaults otherwise.
inline FlameXform testXform(const std::vector<std::pair<int, double>>& terms) {
  FlameXform xf;
  xf.weight = 1.0;
  xf.affine = testAffine();
  for (const FlameParamInfo& info : flameParams()) {
    const auto i = static_cast<size_t>(&info - flameParams().data());
    xf.params[i] = info.default_value;
  }
  for (const auto& [name, value] : testParams()) xf.params[static_cast<size_t>(*flameParamIndex(name))] = value;
  for (const auto& [index, weight] : terms) xf.variations.push_back({index, weight});
  return xf;
}

inline procgen::flame::XformTable compileOne(const FlameXform& xf) {
  FlameGenome genome;
  genome.xforms.push_back(xf);
  return procgen::flame::compileXforms(genome);
}

/// Affine outputs (tx, ty) the variations are evaluated at.
inline const std::vector<std::array<double, 2>>& testAffineOutputs() {
  static const std::vector<std::array<double, 2>> points = {
      {0.003, -0.002},  // near 0
      {0.7, 0.45},      // positive
      {-1.3, -0.6},     // negative
      {-0.4, 1.7},      // mixed
      {9.3, -12.7},     // large
  };
  return points;
}

/// The input point (float) whose image under testAffine() is `t`.
inline std::array<float, 2> inputFor(const std::array<double, 2>& t) {
  const FlameAffine m = testAffine();
  const double det = m.a * m.e - m.b * m.d;
  const double u = t[0] - m.c, v = t[1] - m.f;
  return {static_cast<float>((m.e * u - m.b * v) / det), static_cast<float>((m.a * v - m.d * u) / det)};
}

}  // namespace procgen::test::flame
