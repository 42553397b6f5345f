// The flam3 variation catalogue: names in flam3's index order (variations.c
// flam3_variation_names) and the parameter attributes with flam3's defaults
// (variations.c initialize_xforms; parser.c for the aliases).
// shared/reference/flam3/VARIATIONS.md lists the same table.
#include <algorithm>
#include <array>
#include <numbers>

#include "procgen/flame.hpp"

namespace procgen {
namespace {

constexpr std::array<std::string_view, kFlameVariationCount> kVariationNames = {
    "linear", "sinusoidal", "spherical", "swirl", "horseshoe", "polar", "handkerchief", "heart",
    "disc", "spiral", "hyperbolic", "diamond", "ex", "julia", "bent", "waves", "fisheye", "popcorn",
    "exponential", "power", "cosine", "rings", "fan", "blob", "pdj", "fan2", "rings2", "eyefish",
    "bubble", "cylinder", "perspective", "noise", "julian", "juliascope", "blur", "gaussian_blur",
    "radial_blur", "pie", "ngon", "curl", "rectangles", "arch", "tangent", "square", "rays",
    "blade", "secant2", "twintrian", "cross", "disc2", "super_shape", "flower", "conic", "parabola",
    "bent2", "bipolar", "boarders", "butterfly", "cell", "cpow", "curve", "edisc", "elliptic",
    "escher", "foci", "lazysusan", "loonie", "pre_blur", "modulus", "oscilloscope", "polar2",
    "popcorn2", "scry", "separation", "split", "splits", "stripes", "wedge", "wedge_julia",
    "wedge_sph", "whorl", "waves2", "exp", "log", "sin", "cos", "tan", "sec", "csc", "cot", "sinh",
    "cosh", "tanh", "sech", "csch", "coth", "auger", "flux", "mobius",
};

constexpr std::array<FlameParamInfo, kFlameParamCount> kParams = {{
    {"blob_low", "", 23, 0.0},
    {"blob_high", "", 23, 1.0},
    {"blob_waves", "", 23, 1.0},
    {"pdj_a", "", 24, 0.0},
    {"pdj_b", "", 24, 0.0},
    {"pdj_c", "", 24, 0.0},
    {"pdj_d", "", 24, 0.0},
    {"fan2_x", "", 25, 0.0},
    {"fan2_y", "", 25, 0.0},
    {"rings2_val", "", 26, 0.0},
    {"perspective_angle", "", 30, 0.0},
    {"perspective_dist", "", 30, 0.0},
    {"julian_power", "", 32, 1.0},
    {"julian_dist", "", 32, 1.0},
    {"juliascope_power", "", 33, 1.0},
    {"juliascope_dist", "", 33, 1.0},
    {"radial_blur_angle", "", 36, 0.0},
    {"pie_slices", "", 37, 6.0},
    {"pie_rotation", "", 37, 0.0},
    {"pie_thickness", "", 37, 0.5},
    {"ngon_sides", "", 38, 5.0},
    {"ngon_power", "", 38, 3.0},
    {"ngon_circle", "", 38, 1.0},
    {"ngon_corners", "", 38, 2.0},
    {"curl_c1", "", 39, 1.0},
    {"curl_c2", "", 39, 0.0},
    {"rectangles_x", "", 40, 1.0},
    {"rectangles_y", "", 40, 1.0},
    {"disc2_rot", "", 49, 0.0},
    {"disc2_twist", "", 49, 0.0},
    {"super_shape_rnd", "", 50, 0.0},
    {"super_shape_m", "", 50, 0.0},
    {"super_shape_n1", "", 50, 1.0},
    {"super_shape_n2", "", 50, 1.0},
    {"super_shape_n3", "", 50, 1.0},
    {"super_shape_holes", "", 50, 0.0},
    {"flower_petals", "", 51, 0.0},
    {"flower_holes", "", 51, 0.0},
    {"conic_eccentricity", "", 52, 1.0},
    {"conic_holes", "", 52, 0.0},
    {"parabola_height", "", 53, 0.0},
    {"parabola_width", "", 53, 0.0},
    {"bent2_x", "", 54, 1.0},
    {"bent2_y", "", 54, 1.0},
    {"bipolar_shift", "", 55, 0.0},
    {"cell_size", "", 58, 1.0},
    {"cpow_r", "", 59, 1.0},
    {"cpow_i", "", 59, 0.0},
    {"cpow_power", "", 59, 1.0},
    {"curve_xamp", "", 60, 0.0},
    {"curve_yamp", "", 60, 0.0},
    {"curve_xlength", "", 60, 1.0},
    {"curve_ylength", "", 60, 1.0},
    {"escher_beta", "", 63, 0.0},
    {"lazysusan_spin", "", 65, 0.0},
    {"lazysusan_space", "", 65, 0.0},
    {"lazysusan_twist", "", 65, 0.0},
    {"lazysusan_x", "", 65, 0.0},
    {"lazysusan_y", "", 65, 0.0},
    {"modulus_x", "", 68, 0.0},
    {"modulus_y", "", 68, 0.0},
    {"oscilloscope_separation", "oscope_separation", 69, 1.0},
    {"oscilloscope_frequency", "oscope_frequency", 69, std::numbers::pi},
    {"oscilloscope_amplitude", "oscope_amplitude", 69, 1.0},
    {"oscilloscope_damping", "oscope_damping", 69, 0.0},
    {"popcorn2_x", "", 71, 0.0},
    {"popcorn2_y", "", 71, 0.0},
    {"popcorn2_c", "", 71, 0.0},
    {"separation_x", "", 73, 0.0},
    {"separation_xinside", "", 73, 0.0},
    {"separation_y", "", 73, 0.0},
    {"separation_yinside", "", 73, 0.0},
    {"split_xsize", "", 74, 0.0},
    {"split_ysize", "", 74, 0.0},
    {"splits_x", "", 75, 0.0},
    {"splits_y", "", 75, 0.0},
    {"stripes_space", "", 76, 0.0},
    {"stripes_warp", "", 76, 0.0},
    {"wedge_angle", "", 77, 0.0},
    {"wedge_hole", "", 77, 0.0},
    {"wedge_count", "", 77, 1.0},
    {"wedge_swirl", "", 77, 0.0},
    {"wedge_julia_angle", "", 78, 0.0},
    {"wedge_julia_count", "", 78, 1.0},
    {"wedge_julia_power", "", 78, 1.0},
    {"wedge_julia_dist", "", 78, 0.0},
    {"wedge_sph_angle", "", 79, 0.0},
    {"wedge_sph_count", "", 79, 1.0},
    {"wedge_sph_hole", "", 79, 0.0},
    {"wedge_sph_swirl", "", 79, 0.0},
    {"whorl_inside", "", 80, 0.0},
    {"whorl_outside", "", 80, 0.0},
    {"waves2_freqx", "", 81, 0.0},
    {"waves2_scalex", "", 81, 0.0},
    {"waves2_freqy", "", 81, 0.0},
    {"waves2_scaley", "", 81, 0.0},
    {"auger_sym", "", 96, 0.0},
    {"auger_weight", "", 96, 0.5},
    {"auger_freq", "", 96, 1.0},
    {"auger_scale", "", 96, 1.0},
    {"flux_spread", "", 97, 0.0},
    {"mobius_re_a", "Re_A", 98, 0.0},
    {"mobius_im_a", "Im_A", 98, 0.0},
    {"mobius_re_b", "Re_B", 98, 0.0},
    {"mobius_im_b", "Im_B", 98, 0.0},
    {"mobius_re_c", "Re_C", 98, 0.0},
    {"mobius_im_c", "Im_C", 98, 0.0},
    {"mobius_re_d", "Re_D", 98, 0.0},
    {"mobius_im_d", "Im_D", 98, 0.0},
}};

}  // namespace

std::string_view flameVariationName(int index) {
  return index >= 0 && index < kFlameVariationCount ? kVariationNames[static_cast<size_t>(index)]
                                                     : std::string_view{};
}

std::optional<int> flameVariationIndex(std::string_view name) {
  auto it = std::find(kVariationNames.begin(), kVariationNames.end(), name);
  if (it == kVariationNames.end()) return std::nullopt;
  return static_cast<int>(it - kVariationNames.begin());
}

std::span<const FlameParamInfo> flameParams() { return kParams; }

std::optional<int> flameParamIndex(std::string_view name) {
  if (name.empty()) return std::nullopt;
  for (size_t i = 0; i < kParams.size(); ++i)
    if (kParams[i].name == name || kParams[i].alias == name) return static_cast<int>(i);
  return std::nullopt;
}

}  // namespace procgen
