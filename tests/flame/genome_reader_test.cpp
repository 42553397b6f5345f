// The flam3 genome reader (src/flame/genome_reader.cpp) against two
// independent references:
//  - flam3's own parser (libflam3's flam3_parse_xml2, Debian libflam3-dev;
//    compiled only when found): the same text read by both, every field
//    compared exactly — Debian's test.flam3, genomes written by flam3-genome
//    with fixed seeds (tests/flame/data/), and hand-written genomes for each
//    feature and palette form;
//  - hand-derived values (flam3's rules applied by hand) and hand-placed
//    errors with their exact line:col.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/sanitizer.hpp"
#include "procgen/error.hpp"
#include "procgen/flame.hpp"

#if PROCGEN_HAVE_LIBFLAM3
extern "C" {
#include <flam3.h>
}
#endif

namespace procgen {
namespace {

namespace fs = std::filesystem;

fs::path dataFile(const std::string& name) {
  return fs::path(PROCGEN_SOURCE_DIR) / "tests" / "flame" / "data" / name;
}

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* const kLibraryPath = "/usr/share/flam3/flam3-palettes.xml";
bool haveLibrary() {
  return fs::exists(kLibraryPath);
}

std::vector<FlameGenome> parse(std::string_view xml, const FlameReadOptions& options = {}) {
  return parseFlameGenomes(xml, "t.flame", options);
}

// The error's position, its message and its exit code.
void expectError(std::string_view xml, int line, int column, const std::string& needle,
                 const FlameReadOptions& options = {}) {
  SCOPED_TRACE(std::string(xml.substr(0, 200)));
  try {
    (void)parse(xml, options);
    ADD_FAILURE() << "no error; expected '" << needle << "'";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.location().file, "t.flame");
    EXPECT_EQ(e.location().line, line) << e.what();
    EXPECT_EQ(e.location().column, column) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(e.exitCode(), ExitCode::kBadInput);
  }
}

// A genome with every variation and every parameter set (aliases for every
// other parameter that has one), values distinct per attribute.
std::string everyVariationGenome() {
  std::ostringstream x;
  x << "<flame name=\"all\" size=\"64 48\">\n  <xform weight=\"1\" color=\"0.25\"";
  for (int i = 0; i < kFlameVariationCount; ++i)
    x << ' ' << flameVariationName(i) << "=\"" << (i + 1) * 0.0078125 << '"';
  const auto params = flameParams();
  for (size_t i = 0; i < params.size(); ++i) {
    const bool alias = !params[i].alias.empty() && i % 2 == 0;
    double value = 0.5 + static_cast<double>(i) * 0.125;
    if (params[i].name == "super_shape_rnd") value = 1.75;  // flam3 clamps it to 1
    x << ' ' << (alias ? params[i].alias : params[i].name) << "=\"" << value << '"';
  }
  x << "/>\n  <xform weight=\"0.5\" linear=\"1\"/>\n</flame>\n";
  return x.str();
}

// Every <flame> attribute, xaos, a final xform read between xforms, post,
// opacity, plotmode, the legacy var / var1 / symmetry forms, soloxform, a
// <symmetry> after the final xform, a partial hex palette, <edit>/<motion>.
const char* const kFeaturesGenome = R"(<flames>
<flame name="features" version="test" time="3" size="320 240" center="0.25 -0.5" scale="80" zoom="0.5"
       rotate="30" quality="25" supersample="2" passes="3" filter="0.8" filter_shape="mitchell"
       temporal_samples="500" temporal_filter_type="exp" temporal_filter_width="1.5" temporal_filter_exp="0.3"
       background="0.1 0.2 0.3" brightness="12" gamma="2.5" gamma_threshold="0.05" vibrancy="0.7"
       highlight_power="1.5" hue="1.25" palette_mode="linear" interpolation_type="linear"
       palette_interpolation="rgb" hsv_rgb_palette_blend="0.25" estimator_radius="7" estimator_minimum="1"
       estimator_curve="0.6" soloxform="2">
  <xform weight="0.5" coefs="0.5 0 0 0.5 -0.5 0" linear="1" chaos="1 0 2.5"/>
  <finalxform coefs="0.9 0.1 -0.1 0.9 0 0" spherical="0.5" color="0.3" color_speed="0.2"/>
  <xform weight="0.25" color="0.7 0.1" symmetry="0.4" coefs="0.4 -0.3 0.3 0.4 0.5 0.25"
         post="1.1 0.2 -0.2 0.9 0.05 -0.05" julia="0.3" swirl="0.2" chaos="0.5 0.5"/>
  <xform weight="0.25" var1="13" opacity="0.5" coefs="-0.5 0.1 0.2 0.5 0 0.5" animate="0">
    <motion motion_frequency="2" motion_function="sin" linear="2"/>
  </xform>
  <xform weight="0.125" plotmode="off" coefs="0.3 0 0 0.3 0 0"
         var="0 0.5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0.25"/>
  <symmetry kind="5"/>
  <palette count="4" format="RGB">ff0000 00ff00
      0000ff ffffff</palette>
  <edit date="today" action="hand-written"><edit action="nested"/></edit>
</flame>
<flame name="dihedral" time="4" size="100 100" rotate="20">
  <symmetry kind="-7"/>
  <xform weight="1" coefs="0.5 0.2 -0.2 0.5 0.3 0" sinusoidal="1"/>
  <color index="0" rgb="255 0 0"/>
</flame>
</flames>
)";

// Each palette form in its own flame (palette=N ones need the library).
std::string paletteFormsGenome(bool with_library) {
  std::ostringstream x;
  x << "<palettes>\n";
  x << "<flame name=\"hex256\"><xform weight=\"1\" linear=\"1\"/><palette count=\"256\" format=\"RGB\">\n";
  for (int i = 0; i < 256; ++i) {
    char entry[8];
    std::snprintf(entry, sizeof entry, "%02x%02x%02x", i, (i * 7) & 255, 255 - i);
    x << entry << (i % 8 == 7 ? "\n" : "");
  }
  x << "</palette></flame>\n";
  x << "<flame name=\"hexrgba\"><xform weight=\"1\" linear=\"1\"/>"
       "<palette count=\"3\" format=\"RGBA\">ff000080 00FF00ff 0000ff00</palette></flame>\n";
  x << "<flame name=\"colors\"><xform weight=\"1\" linear=\"1\"/>"
       "<colors count=\"5\" data=\"00ff0000 0000ff00 000000ff 00ffffff 00808080\"/></flame>\n";
  x << "<flame name=\"colorlist\"><xform weight=\"1\" linear=\"1\"/>"
       "<color index=\"10\" rgb=\"255 0 0\"/><color index=\"200\" rgba=\"0 0 255 128\"/>"
       "<color index=\"100\" rgb=\"0 255 0\" a=\"64\"/><color index=\"150\" rgb=\"12.5 100.25 "
       "3\"/></flame>\n";
  if (with_library) {
    x << "<flame name=\"library\" palette=\"15\" hue=\"0.22851\"><xform weight=\"1\" "
         "linear=\"1\"/></flame>\n";
    x << "<flame name=\"libneg\" palette=\"300\" hue=\"-0.4\"><xform weight=\"1\" linear=\"1\"/></flame>\n";
    x << "<flame name=\"override\" palette=\"2\"><xform weight=\"1\" linear=\"1\"/>"
         "<color index=\"0\" rgb=\"1 2 3\"/></flame>\n";
    x << "<flame name=\"oldform\"><xform weight=\"1\" linear=\"1\"/>"
         "<palette index0=\"3\" hue0=\"0.1\" index1=\"200\" hue1=\"0.7\" blend=\"0.3\"/></flame>\n";
    x << "<flame name=\"oldform2\"><xform weight=\"1\" linear=\"1\"/>"
         "<palette index0=\"650\" index1=\"11\"/></flame>\n";
  }
  x << "</palettes>\n";
  return x.str();
}

// --- libflam3 as the reference ------------------------------------------------

#if PROCGEN_HAVE_LIBFLAM3

// flam3's kernel numbers by our names.
int flam3Kernel(FlameFilterShape shape) {
  switch (shape) {
    case FlameFilterShape::kGaussian:
      return flam3_gaussian_kernel;
    case FlameFilterShape::kHermite:
      return flam3_hermite_kernel;
    case FlameFilterShape::kBox:
      return flam3_box_kernel;
    case FlameFilterShape::kTriangle:
      return flam3_triangle_kernel;
    case FlameFilterShape::kBell:
      return flam3_bell_kernel;
    case FlameFilterShape::kBspline:
      return flam3_b_spline_kernel;
    case FlameFilterShape::kMitchell:
      return flam3_mitchell_kernel;
    case FlameFilterShape::kBlackman:
      return flam3_blackman_kernel;
    case FlameFilterShape::kCatrom:
      return flam3_catrom_kernel;
    case FlameFilterShape::kHanning:
      return flam3_hanning_kernel;
    case FlameFilterShape::kHamming:
      return flam3_hamming_kernel;
    case FlameFilterShape::kLanczos3:
      return flam3_lanczos3_kernel;
    case FlameFilterShape::kLanczos2:
      return flam3_lanczos2_kernel;
    case FlameFilterShape::kQuadratic:
      return flam3_quadratic_kernel;
  }
  return -1;
}

using ParamGetter = double (*)(const flam3_xform&);
struct Flam3Param {
  const char* name;
  ParamGetter get;
};
#define F(name, field)                                  \
  Flam3Param {                                          \
#name, [](const flam3_xform& x) { return x.field; } \
  }
const Flam3Param kFlam3Params[] = {
    F(blob_low, blob_low),
    F(blob_high, blob_high),
    F(blob_waves, blob_waves),
    F(pdj_a, pdj_a),
    F(pdj_b, pdj_b),
    F(pdj_c, pdj_c),
    F(pdj_d, pdj_d),
    F(fan2_x, fan2_x),
    F(fan2_y, fan2_y),
    F(rings2_val, rings2_val),
    F(perspective_angle, perspective_angle),
    F(perspective_dist, perspective_dist),
    F(julian_power, julian_power),
    F(julian_dist, julian_dist),
    F(juliascope_power, juliascope_power),
    F(juliascope_dist, juliascope_dist),
    F(radial_blur_angle, radial_blur_angle),
    F(pie_slices, pie_slices),
    F(pie_rotation, pie_rotation),
    F(pie_thickness, pie_thickness),
    F(ngon_sides, ngon_sides),
    F(ngon_power, ngon_power),
    F(ngon_circle, ngon_circle),
    F(ngon_corners, ngon_corners),
    F(curl_c1, curl_c1),
    F(curl_c2, curl_c2),
    F(rectangles_x, rectangles_x),
    F(rectangles_y, rectangles_y),
    F(disc2_rot, disc2_rot),
    F(disc2_twist, disc2_twist),
    F(super_shape_rnd, super_shape_rnd),
    F(super_shape_m, super_shape_m),
    F(super_shape_n1, super_shape_n1),
    F(super_shape_n2, super_shape_n2),
    F(super_shape_n3, super_shape_n3),
    F(super_shape_holes, super_shape_holes),
    F(flower_petals, flower_petals),
    F(flower_holes, flower_holes),
    F(conic_eccentricity, conic_eccentricity),
    F(conic_holes, conic_holes),
    F(parabola_height, parabola_height),
    F(parabola_width, parabola_width),
    F(bent2_x, bent2_x),
    F(bent2_y, bent2_y),
    F(bipolar_shift, bipolar_shift),
    F(cell_size, cell_size),
    F(cpow_r, cpow_r),
    F(cpow_i, cpow_i),
    F(cpow_power, cpow_power),
    F(curve_xamp, curve_xamp),
    F(curve_yamp, curve_yamp),
    F(curve_xlength, curve_xlength),
    F(curve_ylength, curve_ylength),
    F(escher_beta, escher_beta),
    F(lazysusan_spin, lazysusan_spin),
    F(lazysusan_space, lazysusan_space),
    F(lazysusan_twist, lazysusan_twist),
    F(lazysusan_x, lazysusan_x),
    F(lazysusan_y, lazysusan_y),
    F(modulus_x, modulus_x),
    F(modulus_y, modulus_y),
    F(oscilloscope_separation, oscope_separation),
    F(oscilloscope_frequency, oscope_frequency),
    F(oscilloscope_amplitude, oscope_amplitude),
    F(oscilloscope_damping, oscope_damping),
    F(popcorn2_x, popcorn2_x),
    F(popcorn2_y, popcorn2_y),
    F(popcorn2_c, popcorn2_c),
    F(separation_x, separation_x),
    F(separation_xinside, separation_xinside),
    F(separation_y, separation_y),
    F(separation_yinside, separation_yinside),
    F(split_xsize, split_xsize),
    F(split_ysize, split_ysize),
    F(splits_x, splits_x),
    F(splits_y, splits_y),
    F(stripes_space, stripes_space),
    F(stripes_warp, stripes_warp),
    F(wedge_angle, wedge_angle),
    F(wedge_hole, wedge_hole),
    F(wedge_count, wedge_count),
    F(wedge_swirl, wedge_swirl),
    F(wedge_julia_angle, wedge_julia_angle),
    F(wedge_julia_count, wedge_julia_count),
    F(wedge_julia_power, wedge_julia_power),
    F(wedge_julia_dist, wedge_julia_dist),
    F(wedge_sph_angle, wedge_sph_angle),
    F(wedge_sph_count, wedge_sph_count),
    F(wedge_sph_hole, wedge_sph_hole),
    F(wedge_sph_swirl, wedge_sph_swirl),
    F(whorl_inside, whorl_inside),
    F(whorl_outside, whorl_outside),
    F(waves2_freqx, waves2_freqx),
    F(waves2_scalex, waves2_scalex),
    F(waves2_freqy, waves2_freqy),
    F(waves2_scaley, waves2_scaley),
    F(auger_sym, auger_sym),
    F(auger_weight, auger_weight),
    F(auger_freq, auger_freq),
    F(auger_scale, auger_scale),
    F(flux_spread, flux_spread),
    F(mobius_re_a, mobius_re_a),
    F(mobius_im_a, mobius_im_a),
    F(mobius_re_b, mobius_re_b),
    F(mobius_im_b, mobius_im_b),
    F(mobius_re_c, mobius_re_c),
    F(mobius_im_c, mobius_im_c),
    F(mobius_re_d, mobius_re_d),
    F(mobius_im_d, mobius_im_d),
};
#undef F

ParamGetter flam3Param(std::string_view name) {
  for (const Flam3Param& p : kFlam3Params)
    if (name == p.name) return p.get;
  return nullptr;
}

const char* interpolationName(int v) {
  return v == flam3_interpolation_smooth ? "smooth" : "linear";
}
const char* interpolationTypeName(int v) {
  switch (v) {
    case flam3_inttype_linear:
      return "linear";
    case flam3_inttype_compat:
      return "old";
    case flam3_inttype_older:
      return "older";
    default:
      return "log";
  }
}
const char* paletteInterpolationName(int v) {
  switch (v) {
    case flam3_palette_interpolation_hsv:
      return "hsv";
    case flam3_palette_interpolation_sweep:
      return "sweep";
    case flam3_palette_interpolation_rgb:
      return "rgb";
    default:
      return "hsv_circular";
  }
}
const char* temporalFilterName(int v) {
  switch (v) {
    case flam3_temporal_gaussian:
      return "gaussian";
    case flam3_temporal_exp:
      return "exp";
    default:
      return "box";
  }
}

// Debian builds libflam3 with -ffast-math (flam3's Makefile.am), so values
// it computes (palette colours, x/255 taken as x·(1/255)) may differ from
// ours, which follow flam3's source in IEEE arithmetic, in the last bits.
// Values read from the text are compared exactly.
constexpr double kComputed = 1e-12;

void expectAffine(const FlameAffine& m, const double c[3][2], const char* what) {
  SCOPED_TRACE(what);
  EXPECT_NEAR(m.a, c[0][0], kComputed);  // computed for <symmetry> xforms
  EXPECT_NEAR(m.d, c[0][1], kComputed);
  EXPECT_NEAR(m.b, c[1][0], kComputed);
  EXPECT_NEAR(m.e, c[1][1], kComputed);
  EXPECT_EQ(m.c, c[2][0]);
  EXPECT_EQ(m.f, c[2][1]);
}

void expectXform(const FlameXform& ours, const flam3_xform& ref, double expected_opacity, bool final_xform) {
  if (!final_xform) {
    EXPECT_EQ(ours.weight, ref.density);
  }
  EXPECT_NEAR(ours.color, ref.color, kComputed);  // computed for <symmetry> xforms
  EXPECT_EQ(ours.color_speed, ref.color_speed);
  EXPECT_EQ(ours.animate, ref.animate);
  EXPECT_EQ(expected_opacity, ref.opacity);
  expectAffine(ours.affine, ref.c, "coefs");
  expectAffine(ours.post, ref.post, "post");
  std::vector<double> weights(kFlameVariationCount, 0.0);
  for (const FlameVariationTerm& t : ours.variations) {
    ASSERT_GE(t.index, 0);
    ASSERT_LT(t.index, kFlameVariationCount);
    EXPECT_NE(t.weight, 0.0);
    weights[static_cast<size_t>(t.index)] = t.weight;
  }
  for (size_t i = 1; i < ours.variations.size(); ++i)
    EXPECT_LT(ours.variations[i - 1].index, ours.variations[i].index);
  for (int i = 0; i < kFlameVariationCount; ++i)
    EXPECT_EQ(weights[static_cast<size_t>(i)], ref.var[i]) << flameVariationName(i);
  const auto params = flameParams();
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamGetter get = flam3Param(params[i].name);
    ASSERT_NE(get, nullptr) << params[i].name;
    EXPECT_EQ(ours.params[i], get(ref)) << params[i].name;
  }
}

// Parses `xml` with both readers and compares every field flam3 keeps.
void expectSameAsFlam3(const std::string& xml, const std::string& what) {
  SCOPED_TRACE(what);
  const std::vector<FlameGenome> ours = parse(xml);

  // flam3 never frees an <edit>'s copy (clear_cp) and shares it between
  // the flames that follow: keep <edit>s (provenance only) from it.
  std::string text = xml;
  for (std::string previous; previous != text;) {
    previous = text;
    text = std::regex_replace(text, std::regex("<edit[^>]*/>"), "");
    text = std::regex_replace(text, std::regex("<edit[^>]*>\\s*</edit>"), "");
  }
  char name[] = "reference.flam3";
  int count = 0;
  flam3_genome* ref = flam3_parse_xml2(text.data(), name, flam3_defaults_on, &count);
  ASSERT_NE(ref, nullptr);
  ASSERT_EQ(static_cast<size_t>(count), ours.size());
  for (int k = 0; k < count; ++k) {
    SCOPED_TRACE("flame " + std::to_string(k));
    const FlameGenome& g = ours[static_cast<size_t>(k)];
    const flam3_genome& r = ref[k];
    EXPECT_EQ(g.name, std::string(r.flame_name));
    EXPECT_EQ(g.time, r.time);
    EXPECT_EQ(g.width, r.width);
    EXPECT_EQ(g.height, r.height);
    EXPECT_EQ(g.center_x, r.center[0]);
    EXPECT_EQ(g.center_y, r.center[1]);
    EXPECT_EQ(g.scale, r.pixels_per_unit);
    EXPECT_EQ(g.zoom, r.zoom);
    EXPECT_EQ(g.rotate, r.rotate);
    EXPECT_EQ(g.quality, r.sample_density);
    EXPECT_EQ(g.supersample, r.spatial_oversample);
    EXPECT_EQ(g.passes, r.nbatches);
    EXPECT_EQ(g.filter_radius, r.spatial_filter_radius);
    EXPECT_EQ(flam3Kernel(g.filter_shape), r.spatial_filter_select);
    EXPECT_EQ(g.temporal_samples, r.ntemporal_samples);
    EXPECT_EQ(g.temporal_filter_type, temporalFilterName(r.temporal_filter_type));
    EXPECT_EQ(g.temporal_filter_width, r.temporal_filter_width);
    EXPECT_EQ(g.temporal_filter_exp, r.temporal_filter_exp);
    for (int c = 0; c < 3; ++c) EXPECT_EQ(g.background[static_cast<size_t>(c)], r.background[c]);
    EXPECT_EQ(g.brightness, r.brightness);
    EXPECT_EQ(g.gamma, r.gamma);
    EXPECT_EQ(g.gamma_threshold, r.gam_lin_thresh);
    EXPECT_EQ(g.vibrancy, r.vibrancy);
    EXPECT_EQ(g.highlight_power, r.highlight_power);
    EXPECT_EQ(g.estimator_radius, r.estimator);
    EXPECT_EQ(g.estimator_minimum, r.estimator_minimum);
    EXPECT_EQ(g.estimator_curve, r.estimator_curve);
    EXPECT_EQ(g.hue, r.hue_rotation);
    EXPECT_EQ(g.palette_index, r.palette_index);
    EXPECT_EQ(static_cast<int>(g.palette_mode), r.palette_mode);
    EXPECT_EQ(g.interpolation, interpolationName(r.interpolation));
    EXPECT_EQ(g.interpolation_type, interpolationTypeName(r.interpolation_type));
    EXPECT_EQ(g.palette_interpolation, paletteInterpolationName(r.palette_interpolation));
    EXPECT_EQ(g.hsv_rgb_palette_blend, r.hsv_rgb_palette_blend);
    EXPECT_EQ(g.symmetry_kind, r.symmetry);
    for (int i = 0; i < 256; ++i)
      for (int c = 0; c < 4; ++c)
        ASSERT_NEAR(g.palette[static_cast<size_t>(i)][static_cast<size_t>(c)], r.palette[i].color[c],
                    kComputed)
            << "palette entry " << i << " channel " << c;

    const int n_std = r.num_xforms - (r.final_xform_index >= 0 ? 1 : 0);
    ASSERT_EQ(static_cast<int>(g.xforms.size()), n_std);
    ASSERT_EQ(g.final_xform.has_value(), r.final_xform_index >= 0);
    for (int i = 0; i < n_std; ++i) {
      SCOPED_TRACE("xform " + std::to_string(i));
      const FlameXform& xf = g.xforms[static_cast<size_t>(i)];
      const double opacity = g.solo_xform >= 0 && g.solo_xform != i ? 0.0 : xf.opacity;
      expectXform(xf, r.xform[i], opacity, false);
      for (int j = 0; j < n_std; ++j) {
        const double ours_chaos =
            static_cast<size_t>(j) < xf.chaos.size() ? xf.chaos[static_cast<size_t>(j)] : 1.0;
        EXPECT_EQ(ours_chaos, r.chaos[i][j]) << "chaos " << i << " -> " << j;
      }
    }
    if (g.final_xform) {
      SCOPED_TRACE("final xform");
      EXPECT_EQ(r.final_xform_index, r.num_xforms - 1);
      expectXform(*g.final_xform, r.xform[r.final_xform_index], g.final_xform->opacity, true);
    }
  }
  for (int k = 0; k < count; ++k) clear_cp(&ref[k], flam3_defaults_on);
  free(ref);
}

TEST(FlameGenomeReaderVsFlam3, DebianTestFlam3) {
  const fs::path path = "/usr/share/flam3/test.flam3";
  if (!fs::exists(path) || !haveLibrary())
    GTEST_SKIP() << "flam3-palette (test.flam3, flam3-palettes.xml) not installed";
  expectSameAsFlam3(readText(path), path.string());
}

TEST(FlameGenomeReaderVsFlam3, GenomesWrittenByFlam3Genome) {
  // Random genomes of flam3-genome with fixed seeds: random variations and
  // parameters, post transforms, <symmetry> (re-applied on reading, as flam3
  // does), inline <color> palettes and <edit> provenance.
  expectSameAsFlam3(readText(dataFile("flam3_genome_seed9.flam3")), "seed 9");
  expectSameAsFlam3(readText(dataFile("flam3_genome_seed7_sym.flam3")),
                    "seed 7, symmetry -3, parametric vars");
}

TEST(FlameGenomeReaderVsFlam3, EveryVariationAndParameterByNameAndAlias) {
  expectSameAsFlam3(everyVariationGenome(), "every variation");
}

TEST(FlameGenomeReaderVsFlam3, FlameAttributesXformFormsAndSymmetry) {
  expectSameAsFlam3(kFeaturesGenome, "features");
}

TEST(FlameGenomeReaderVsFlam3, EveryPaletteForm) {
  expectSameAsFlam3(paletteFormsGenome(haveLibrary()), "palette forms");
}

TEST(FlameGenomeReaderVsFlam3, DefaultsAreClearCpAndInitializeXforms) {
  // Nothing but weights: every other field is flam3's default; xforms
  // alternate colour 0, 1 by slot, the final xform counting in the slot.
  expectSameAsFlam3(
      "<flame time=\"0\"><xform weight=\"1\"/><xform weight=\"2\"/><finalxform linear=\"1\"/>"
      "<xform weight=\"3\"/></flame>",
      "defaults");
}

#endif  // PROCGEN_HAVE_LIBFLAM3

// --- hand-derived values ------------------------------------------------------

TEST(FlameGenomeReader, DefaultsAreFlam3s) {
  const auto g = parse(
      "<flame name=\"a b\tc\"><xform weight=\"1\"/><xform weight=\"2\"/><finalxform linear=\"1\"/>"
      "<xform weight=\"3\"/></flame>");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].name, "a_b_c");  // whitespace becomes '_'
  EXPECT_EQ(g[0].width, 100);
  EXPECT_EQ(g[0].scale, 50.0);
  EXPECT_EQ(g[0].quality, 1.0);
  EXPECT_EQ(g[0].gamma, 4.0);
  EXPECT_EQ(g[0].palette_index, -1);
  ASSERT_EQ(g[0].xforms.size(), 3u);
  // Slots 0, 1, then the final took slot 2, so the third xform is slot 3.
  EXPECT_EQ(g[0].xforms[0].color, 0.0);
  EXPECT_EQ(g[0].xforms[1].color, 1.0);
  EXPECT_EQ(g[0].final_xform->color, 0.0);
  EXPECT_EQ(g[0].xforms[2].color, 1.0);
  EXPECT_TRUE(g[0].xforms[0].variations.empty());  // the parser clears flam3's default linear
  EXPECT_EQ(g[0].xforms[0].color_speed, 0.5);
  EXPECT_EQ(g[0].xforms[0].params[0], 0.0);  // blob_low
  EXPECT_EQ(g[0].xforms[0].params[1], 1.0);  // blob_high
  EXPECT_EQ(g[0].xforms[2].source_line, 1);
}

TEST(FlameGenomeReader, XformAttributes) {
  const auto g = parse(
      "<flame size=\"10 20\">\n"
      "<xform weight=\"0.5\" color=\"0.25 0.9\" symmetry=\"0.6\" coefs=\"1 2 3 4 5 6\" post=\"6 5 4 3 2 1\"\n"
      "  julia=\"-0.5\" linear=\"0\" oscope_damping=\"0.75\" Re_A=\"2\" mobius_im_d=\"3\" "
      "plotmode=\"off\"/>\n"
      "<xform weight=\"1\" var1=\"2\" swirl=\"0.5\" chaos=\"2 0\" opacity=\"0.25\" amw_amp=\"4\"/>\n"
      "</flame>");
  const FlameXform& a = g[0].xforms[0];
  EXPECT_EQ(a.color, 0.25);
  EXPECT_EQ(a.color_speed, (1.0 - 0.6) / 2);
  EXPECT_EQ(a.animate, 0.0);
  // "a d b e c f"
  EXPECT_EQ(a.affine.a, 1);
  EXPECT_EQ(a.affine.d, 2);
  EXPECT_EQ(a.affine.b, 3);
  EXPECT_EQ(a.affine.e, 4);
  EXPECT_EQ(a.affine.c, 5);
  EXPECT_EQ(a.affine.f, 6);
  EXPECT_EQ(a.post.a, 6);
  EXPECT_EQ(a.post.f, 1);
  ASSERT_EQ(a.variations.size(), 1u);
  EXPECT_EQ(a.variations[0].index, 13);
  EXPECT_EQ(a.variations[0].weight, -0.5);
  EXPECT_EQ(a.opacity, 0.0);
  EXPECT_EQ(a.params[static_cast<size_t>(*flameParamIndex("oscilloscope_damping"))], 0.75);
  EXPECT_EQ(a.params[static_cast<size_t>(*flameParamIndex("mobius_re_a"))], 2.0);
  EXPECT_EQ(a.params[static_cast<size_t>(*flameParamIndex("mobius_im_d"))], 3.0);
  EXPECT_EQ(a.source_line, 2);
  const FlameXform& b = g[0].xforms[1];
  ASSERT_EQ(b.variations.size(), 2u);  // var1 = spherical (2), then swirl (3)
  EXPECT_EQ(b.variations[0].index, 2);
  EXPECT_EQ(b.variations[0].weight, 1.0);
  EXPECT_EQ(b.variations[1].index, 3);
  EXPECT_EQ(b.chaos, (std::vector<double>{2.0, 0.0}));
  // Trailing 1s (and a row of 1s) are no chaos: entries past the end are 1.
  const auto c = parse(
      "<flame><xform weight=\"1\" chaos=\"0.5 1 1\"/><xform weight=\"1\" chaos=\"1 1\"/>"
      "<color index=\"0\" rgb=\"1 1 1\"/></flame>");
  EXPECT_EQ(c[0].xforms[0].chaos, (std::vector<double>{0.5}));
  EXPECT_TRUE(c[0].xforms[1].chaos.empty());
  EXPECT_EQ(b.opacity, 0.25);
  EXPECT_EQ(b.source_line, 4);
}

TEST(FlameGenomeReader, LegacyVarResetsEarlierWeightsInAttributeOrder) {
  std::string var;
  for (int i = 0; i < kFlameVariationCount; ++i) var += i == 5 ? "0.5 " : "0 ";
  const auto g = parse("<flame><xform weight=\"1\" swirl=\"1\" var=\"" + var + "\" julia=\"2\"/></flame>");
  const auto& v = g[0].xforms[0].variations;
  ASSERT_EQ(v.size(), 2u);  // swirl cleared by var; polar from var; julia after
  EXPECT_EQ(v[0].index, 5);
  EXPECT_EQ(v[0].weight, 0.5);
  EXPECT_EQ(v[1].index, 13);
}

TEST(FlameGenomeReader, SymmetryAddsFlam3sRotationsAndReflection) {
  // kind -4: the reflection x -> -x (colour 1), then rotations by 90, 180,
  // 270 degrees, coefficients rounded to 6 decimals, colours (k-1)/(4-2);
  // all with weight 1, color_speed 0, animate 0, linear 1, sorted by
  // determinant (the reflection's -1 first, the rotations' 1 in order).
  const auto g = parse("<flame><xform weight=\"1\" linear=\"1\"/><symmetry kind=\"-4\"/></flame>");
  ASSERT_EQ(g[0].xforms.size(), 5u);
  EXPECT_EQ(g[0].symmetry_kind, -4);
  const double expected[4][5] = {
      // a (cos), d (sin), b (-sin), e (cos), colour
      {-1, 0, 0, 1, 1.0},
      {0, 1, -1, 0, 0.0},
      {-1, 0, 0, -1, 0.5},
      {0, -1, 1, 0, 1.0},
  };
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    const FlameXform& x = g[0].xforms[i + 1];
    EXPECT_NEAR(x.affine.a, expected[i][0], 1e-12);
    EXPECT_NEAR(x.affine.d, expected[i][1], 1e-12);
    EXPECT_NEAR(x.affine.b, expected[i][2], 1e-12);
    EXPECT_NEAR(x.affine.e, expected[i][3], 1e-12);
    EXPECT_EQ(x.color, expected[i][4]);
    EXPECT_EQ(x.weight, 1.0);
    EXPECT_EQ(x.color_speed, 0.0);
    EXPECT_EQ(x.animate, 0.0);
    ASSERT_EQ(x.variations.size(), 1u);
    EXPECT_EQ(x.variations[0].index, 0);
  }
  // kind 3: two rotations, 0.866025 = round6(sin 120 degrees).
  const auto h = parse("<flame><xform weight=\"1\"/><symmetry kind=\"3\"/></flame>");
  ASSERT_EQ(h[0].xforms.size(), 3u);
  EXPECT_NEAR(std::fabs(h[0].xforms[1].affine.d), 0.866025, 1e-12);
  EXPECT_NEAR(h[0].xforms[1].affine.a, -0.5, 1e-12);
}

TEST(FlameGenomeReader, SymmetryKindZeroIsNoneWithAWarning) {
  std::vector<std::string> warnings;
  FlameReadOptions options;
  options.warn = [&](const std::string& w) { warnings.push_back(w); };
  const auto g = parse(
      "<flame>\n<xform weight=\"1\"/>\n<symmetry kind=\"0\"/><color index=\"0\" rgb=\"1 1 1\"/></flame>",
      options);
  EXPECT_EQ(g[0].xforms.size(), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].rfind("t.flame:3: warning: ", 0), 0u) << warnings[0];
}

TEST(FlameGenomeReader, InlinePalettesAndMissingEntries) {
  // Entries 0 and 2 given (premultiplied by alpha), entry 1 halfway, entries
  // 3..255 between entry 2 and entry 0 wrapped to 256.
  const auto g = parse(
      "<flame><xform weight=\"1\"/><color index=\"0\" rgb=\"255 0 0\"/>"
      "<color index=\"2\" rgba=\"0 0 255 51\"/></flame>");
  const auto& p = g[0].palette;
  EXPECT_EQ(p[0][0], 1.0);
  EXPECT_EQ(p[0][3], 1.0);
  EXPECT_DOUBLE_EQ(p[2][3], 0.2);
  EXPECT_DOUBLE_EQ(p[2][2], 0.2);  // 0.2 * 255/255
  EXPECT_DOUBLE_EQ(p[1][0], 0.5);
  EXPECT_DOUBLE_EQ(p[1][2], 0.1);
  EXPECT_DOUBLE_EQ(p[1][3], 0.6);
  const double t = (129 - 2) / 254.0;  // entry 129 between 2 and 256
  EXPECT_DOUBLE_EQ(p[129][0], t * 1.0);
  EXPECT_DOUBLE_EQ(p[129][2], (1 - t) * 0.2);

  const auto h = parse(
      "<flame><xform weight=\"1\"/><palette count=\"2\" format=\"RGBA\">\n"
      "  ff800040\n 00ff00ff </palette></flame>");
  EXPECT_EQ(h[0].palette[0][1], 128 / 255.0);
  EXPECT_EQ(h[0].palette[0][3], 64 / 255.0);  // hex RGBA is not premultiplied (flam3)
  EXPECT_EQ(h[0].palette[1][1], 1.0);
}

TEST(FlameGenomeReader, LibraryPaletteWithHue) {
  if (!haveLibrary()) GTEST_SKIP() << "flam3-palette not installed";
  // Palette 0 of flam3-palettes.xml starts 00b9eaeb 00c1eeeb.
  const auto g = parse("<flame palette=\"0\"><xform weight=\"1\"/></flame>");
  EXPECT_NEAR(g[0].palette[0][0], 0xb9 / 255.0, 1e-12);
  EXPECT_NEAR(g[0].palette[0][1], 0xea / 255.0, 1e-12);
  EXPECT_NEAR(g[0].palette[1][0], 0xc1 / 255.0, 1e-12);
  EXPECT_EQ(g[0].palette[0][3], 1.0);
  // hue 1/3 turn: (r, g, b) -> (b, r, g) exactly in HSV.
  const auto h = parse("<flame palette=\"0\" hue=\"0.3333333333333333\"><xform weight=\"1\"/></flame>");
  EXPECT_NEAR(h[0].palette[0][0], 0xeb / 255.0, 1e-9);
  EXPECT_NEAR(h[0].palette[0][1], 0xb9 / 255.0, 1e-9);
  EXPECT_NEAR(h[0].palette[0][2], 0xea / 255.0, 1e-9);
  // The option, then $flam3_palettes, name the file.
  const fs::path tmp = fs::temp_directory_path() / "procgen_genome_reader_palettes.xml";
  {
    std::ofstream out(tmp);
    out << "<palettes><palette number=\"7\" data=\"";
    for (int i = 0; i < 256; ++i) out << "00102030 ";
    out << "\"/></palettes>";
  }
  FlameReadOptions options;
  options.palettes_file = tmp;
  const auto k = parse("<flame palette=\"7\"><xform weight=\"1\"/></flame>", options);
  EXPECT_NEAR(k[0].palette[255][2], 0x30 / 255.0, 1e-12);
  expectError("<flame palette=\"0\"><xform weight=\"1\"/></flame>", 1, 17, "no palette numbered 0", options);
  fs::remove(tmp);
}

TEST(FlameGenomeReader, SeveralFlamesAtAnyDepthInDocumentOrder) {
  const auto g = parse(
      "<a><b><flame name=\"1\"><xform weight=\"1\"/><flame name=\"inner\"/></flame></b>"
      "<!-- c --><flame name=\"2\"><xform weight=\"1\"/></flame></a>");
  ASSERT_EQ(g.size(), 2u);  // a <flame> inside a <flame> is not read (flam3)
  EXPECT_EQ(g[0].name, "1");
  EXPECT_EQ(g[1].name, "2");
}

TEST(FlameGenomeReader, ContrastAndUnknownFlameAttributesAreKeptOrIgnored) {
  const auto g = parse("<flame contrast=\"2\" url=\"x\" plugins=\"y\"><xform weight=\"1\"/></flame>");
  EXPECT_EQ(g[0].contrast, 2.0);
}

TEST(FlameGenomeReader, FilterShapeNamesRoundTrip) {
  for (int i = 0; i < 14; ++i) {
    const auto shape = static_cast<FlameFilterShape>(i);
    EXPECT_EQ(parseFlameFilterShape(flameFilterShapeName(shape)), shape);
  }
  EXPECT_EQ(flameFilterShapeName(FlameFilterShape::kLanczos3), "lanczos3");
  EXPECT_FALSE(parseFlameFilterShape("Gaussian"));
}

TEST(FlameGenomeReader, ReadFlameFile) {
  const auto g = readFlameFile(dataFile("flam3_genome_seed9.flam3"));
  EXPECT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].source_line, 3);
  EXPECT_THROW(readFlameFile(dataFile("no_such_file.flam3")), Error);
}

// --- errors, each at its exact line:col -----------------------------------------

TEST(FlameGenomeReaderErrors, MalformedXml) {
  expectError("<flame size=\"10 10\">\n  <xform weight=\"1\">\n</flame>", 3, 3, "malformed XML");
  expectError("<flame a=\"1\" a=\"2\"><xform weight=\"1\"/></flame>", 1, 14, "repeated");
  expectError(std::string("<flame>\n<x\0/>", 13), 2, 3, "NUL byte");
  expectError("", 1, 1, "malformed XML");
}

TEST(FlameGenomeReaderErrors, NoFlame) {
  expectError("<pick>\n  <xform/>\n</pick>", 1, 1, "no <flame>");
}

TEST(FlameGenomeReaderErrors, BadNumbers) {
  expectError("<flame scale=\"50x\"><xform weight=\"1\"/></flame>", 1, 15, "'50x' is not a finite number");
  expectError("<flame scale=\"nan\"><xform weight=\"1\"/></flame>", 1, 15, "not a finite number");
  expectError("<flame>\n<xform weight=\"1\" coefs=\"1 0 0 1 inf 0\"/></flame>", 2, 34, "'inf'");
  expectError("<flame>\n<xform weight=\"1\" coefs=\"1 0 0 1 0\"/></flame>", 2, 35,
              "expected 6 numbers, found 5");
  expectError("<flame center=\"1e999 0\"><xform weight=\"1\"/></flame>", 1, 16, "'1e999'");
  expectError("<flame gamma=\"0\"><xform weight=\"1\"/></flame>", 1, 15, "must be > 0");
  // After an entity reference the position falls back to the value's start.
  expectError("<flame center=\"&#49; x\"><xform weight=\"1\"/></flame>", 1, 16, "'x'");
}

TEST(FlameGenomeReaderErrors, SizesAndQuality) {
  expectError("<flame size=\"0 100\"><xform weight=\"1\"/></flame>", 1, 14, "width must be 1 .. 1048576");
  expectError("<flame size=\"100 1048577\"><xform weight=\"1\"/></flame>", 1, 18,
              "height must be 1 .. 1048576");
  expectError("<flame size=\"100\"><xform weight=\"1\"/></flame>", 1, 14, "expected 2 integers");
  expectError("<flame size=\"10.5 10\"><xform weight=\"1\"/></flame>", 1, 14, "not an integer");
  expectError("<flame quality=\"-1\"><xform weight=\"1\"/></flame>", 1, 17, "must be >= 0");
  expectError("<flame supersample=\"0\"><xform weight=\"1\"/></flame>", 1, 21, "must be 1 .. 1048576");
  expectError("<flame oversample=\"-2\"><xform weight=\"1\"/></flame>", 1, 20, "must be 1 .. 1048576");
  expectError("<flame filter_shape=\"sinc\"><xform weight=\"1\"/></flame>", 1, 22, "unknown filter shape");
  expectError("<flame palette_mode=\"smooth\"><xform weight=\"1\"/></flame>", 1, 22, "step or linear");
}

TEST(FlameGenomeReaderErrors, Palettes) {
  expectError("<flame>\n<palette count=\"257\" format=\"RGB\">00</palette></flame>", 2, 17,
              "must be 1 .. 256");
  expectError("<flame>\n<palette count=\"2\" format=\"RGB\">\n  ff0000 00gg00</palette></flame>", 3, 12,
              "colour 1 '00gg00' is not 6 hex digits");
  expectError("<flame>\n<palette count=\"2\" format=\"RGB\">ff0000</palette></flame>", 2, 39,
              "expected 2 colours, found 1");
  expectError("<flame>\n<palette count=\"1\" format=\"RGB\">ff0000 12</palette></flame>", 2, 40,
              "extra data");
  expectError("<flame>\n<palette count=\"1\" format=\"BGR\">ff0000</palette></flame>", 2, 28, "RGB or RGBA");
  expectError("<flame>\n<palette count=\"1\" index0=\"2\"/></flame>", 2, 1, "mixes the old");
  expectError("<flame>\n<colors count=\"2\" data=\"00ff0000 11ff0000\"/></flame>", 2, 34,
              "does not start with 00");
  expectError("<flame>\n<color index=\"256\" rgb=\"1 2 3\"/></flame>", 2, 15, "must be 0 .. 255");
  expectError("<flame>\n<color index=\"3\" rgb=\"1 2 300\"/></flame>", 2, 27, "0 .. 255");
  expectError("<flame>\n<color index=\"3\" rgb=\"1 2 3\" hsv=\"1\"/></flame>", 2, 30,
              "unknown <color> attribute");
  if (haveLibrary()) {
    expectError("<flame>\n<palette index0=\"5\" index1=\"99999\"/></flame>", 2, 29,
                "no palette numbered 99999");
    expectError("<flame\n palette=\"123456\"><xform weight=\"1\"/></flame>", 2, 11,
                "no palette numbered 123456");
  }
  FlameReadOptions options;
  options.palettes_file = "/nonexistent/flam3-palettes.xml";
  expectError("<flame palette=\"1\"><xform weight=\"1\"/></flame>", 1, 17, "cannot read the palette library",
              options);
}

TEST(FlameGenomeReaderErrors, UnknownVariationIsAnErrorOrAWarning) {
  const std::string xml =
      "<flame>\n<xform weight=\"1\"\n    linear=\"1\" frobnicate=\"0.5\"/><color index=\"0\" rgb=\"1 1 "
      "1\"/></flame>";
  expectError(xml, 3, 16, "unknown variation 'frobnicate' on <xform> at line 3");
  std::vector<std::string> warnings;
  FlameReadOptions options;
  options.skip_unknown = true;
  options.warn = [&](const std::string& w) { warnings.push_back(w); };
  const auto g = parse(xml, options);
  ASSERT_EQ(g[0].xforms[0].variations.size(), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "t.flame:3: warning: unknown variation 'frobnicate' on <xform> ignored (as flam3)");
}

TEST(FlameGenomeReaderErrors, XformRules) {
  expectError("<flame>\n<xform weight=\"-1\"/></flame>", 2, 16, "must be >= 0");
  expectError("<flame>\n<finalxform weight=\"1\"/></flame>", 2, 21, "a final xform has no weight");
  expectError("<flame>\n<finalxform linear=\"1\"/><finalxform linear=\"1\"/></flame>", 2, 25, "at most one");
  expectError("<flame>\n<xform weight=\"1\" chaos=\"1 -2\"/></flame>", 2, 28, "chaos entries must be >= 0");
  expectError("<flame>\n<xform weight=\"1\" chaos=\"1 1 3\"/>\n<xform weight=\"1\"/></flame>", 2, 30,
              "entry 2 is 3 but the flame has only 2 xforms");
  expectError("<flame>\n<xform weight=\"1\" var1=\"99\"/></flame>", 2, 25, "must be 0 .. 98");
  expectError("<flame>\n<xform weight=\"1\" var=\"1 2\"/></flame>", 2, 27, "expected 99 numbers, found 2");
  expectError("<flame>\n<xform/></flame>", 2, 1, "without attributes");
  expectError("<flame soloxform=\"3\">\n<xform weight=\"1\"/></flame>", 1, 19, "the flame has 1 xforms");
  expectError("<flame>\n<xform weight=\"1\" motion_function=\"sin\"/></flame>", 2, 36, "<motion>");
  expectError("<flame>\n<symmetry kind=\"-100000\"/><xform weight=\"1\"/></flame>", 2, 17, "symmetry xforms");
}

// An empty <flame/> is 8 bytes of text and ~9 KB of genome: 120000 of them
// (940 KB) would take ~1 GiB. In a child whose address space is limited to
// what it uses plus 1 GiB (budget: half that), the reader stops with a
// ResourceError (exit 2) before std::bad_alloc, and still reads 1000.
TEST(FlameGenomeReaderErrors, ManyEmptyFlamesStopAtTheMemoryBudget) {
  if (procgen::test::kUnderSanitizer) GTEST_SKIP() << "a sanitizer's shadow memory rules out RLIMIT_AS";
  std::string text = "<flames>";
  for (int i = 0; i < 120000; ++i) text += "<flame/>";
  text += "</flames>";
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int outcome = 0;  // 1: read them all, 2: ResourceError, 3: another error, 4: bad_alloc, 5: no limit
    std::ifstream status("/proc/self/status");
    uint64_t in_use = 0;
    for (std::string key; status >> key;) {
      if (key == "VmSize:") {
        status >> in_use;
        in_use *= 1024;
        break;
      }
      status.ignore(1 << 16, '\n');
    }
    rlimit as{};
    getrlimit(RLIMIT_AS, &as);
    as.rlim_cur = in_use + (uint64_t{1} << 30);
    if (in_use == 0 || setrlimit(RLIMIT_AS, &as) != 0) {
      outcome = 5;
    } else {
      try {
        outcome = parse(text).size() == 120000 ? 1 : 3;
      } catch (const ResourceError&) {
        // … while a thousand of them (9 MB) are read under the same limit.
        std::string small = "<flames>";
        for (int i = 0; i < 1000; ++i) small += "<flame/>";
        outcome = parse(small + "</flames>").size() == 1000 ? 2 : 3;
      } catch (const std::bad_alloc&) {
        outcome = 4;
      } catch (...) {
        outcome = 3;
      }
    }
    (void)!write(fds[1], &outcome, sizeof outcome);
    _exit(0);
  }
  close(fds[1]);
  int outcome = 0;
  EXPECT_EQ(read(fds[0], &outcome, sizeof outcome), static_cast<ssize_t>(sizeof outcome));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (outcome == 5) GTEST_SKIP() << "could not limit the child's address space";
  EXPECT_EQ(outcome, 2) << "1: read all, 3: another error, 4: std::bad_alloc";
}

TEST(FlameGenomeReaderErrors, MessagesNameTheAttributeAndValue) {
  try {
    (void)parse("<flame>\n<xform weight=\"1\" color_speed=\"fast\"/></flame>");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.message(), "<xform> attribute color_speed=\"fast\": 'fast' is not a finite number");
    EXPECT_EQ(std::string(e.what()).rfind("t.flame:2:32: error: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace procgen
