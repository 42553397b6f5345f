// Tone mapping against flam3-render itself: the same flame (the tests'
// Sierpinski + spherical chaos game, tonemap_helpers.hpp) rendered by
// flam3-render and by our chaos game + toneMapFlame, compared by PSNR and by
// the mean of each channel (which k1/k2, gamma or the filters would shift).
// flam3 is stochastic (ISAAC against our xorshift), so the images differ by
// sampling noise only. Skipped when flam3-render is not installed.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "common/cli_run.hpp"
#include "common/png_decode.hpp"
#include "flame/tonemap_helpers.hpp"
#include "procgen/flame_render.hpp"

namespace procgen {
namespace {

std::string flam3Xml(const FlameGenome& g) {
  std::string xml =
      "<flames><flame name=\"tonemap\" size=\"" + std::to_string(g.width) + " " + std::to_string(g.height) +
      "\" center=\"0 0\" scale=\"" + std::to_string(g.scale) + "\" quality=\"" + std::to_string(g.quality) +
      "\" oversample=\"" + std::to_string(g.supersample) + "\" filter=\"" + std::to_string(g.filter_radius) +
      "\" filter_shape=\"gaussian\" estimator_radius=\"" + std::to_string(g.estimator_radius) +
      "\" estimator_minimum=\"0\" estimator_curve=\"0.4\" brightness=\"" + std::to_string(g.brightness) +
      "\" gamma=\"" + std::to_string(g.gamma) + "\" gamma_threshold=\"" + std::to_string(g.gamma_threshold) +
      "\" vibrancy=\"" + std::to_string(g.vibrancy) + "\" highlight_power=\"" +
      std::to_string(g.highlight_power) + "\" background=\"0 0 0\">\n";
  xml += R"( <xform weight="0.291667" color="0" linear="1" coefs="0.5 0 0 0.5 0 -0.65"/>
 <xform weight="0.291667" color="0.35" linear="1" coefs="0.5 0 0 0.5 -0.65 0.5"/>
 <xform weight="0.291667" color="0.7" linear="1" coefs="0.5 0 0 0.5 0.65 0.5"/>
 <xform weight="0.125" color="1" spherical="0.9" coefs="1 0 0 1 0 0"/>
)";
  for (int i = 0; i < 256; ++i)
    xml += " <color index=\"" + std::to_string(i) + "\" rgb=\"" + std::to_string(i) + " " +
           std::to_string(255 - i) + " 128\"/>\n";
  return xml + "</flame></flames>\n";
}

class FlameToneMapFlam3 : public test::ScratchDirTest {};

TEST_F(FlameToneMapFlam3, SameFlameAsFlam3Render) {
  if (std::system("command -v flam3-render > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "flam3-render is not installed";
  struct Case {
    int supersample;
    double estimator, vibrancy, highlight_power;
    bool earlyclip;
  };
  for (const Case& c : {Case{1, 9, 1, -1, false}, Case{2, 5, 0.6, 1, false}, Case{2, 9, 1, -1, true}}) {
    const std::string name = "ss" + std::to_string(c.supersample) + (c.earlyclip ? "_earlyclip" : "");
    SCOPED_TRACE(name);
    FlameGenome g;
    g.width = 200;
    g.height = 150;
    g.scale = 50;
    g.quality = 300;
    g.supersample = c.supersample;
    g.estimator_radius = c.estimator;
    g.vibrancy = c.vibrancy;
    g.highlight_power = c.highlight_power;
    g.brightness = 3;
    const test::fs::path genome = dir_ / "g.flam3", png = dir_ / "flam3.png";
    std::ofstream(genome) << flam3Xml(g);
    const std::string cmd = "cd " + dir_.string() +
                            " && nthreads=2 isaac_seed=7 verbose=0 earlyclip=" + (c.earlyclip ? "1" : "0") +
                            " out=" + png.string() + " flam3-render < " + genome.string() +
                            " > /dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const std::string bytes = test::slurp(png);
    const test::Decoded theirs = test::decode(std::vector<uint8_t>(bytes.begin(), bytes.end()));
    ASSERT_TRUE(theirs.ok);
    ASSERT_EQ(theirs.width, 200u);
    ASSERT_EQ(theirs.height, 150u);

    const FlameHistogram h = test::sierpinskiHistogram(g, 3);
    FlameRenderOptions options;
    options.earlyclip = c.earlyclip;
    const FlameImage ours = toneMapFlame(g, h, options, Execution{Backend::kSerial, 1});
    double squared = 0, mean_ours[3] = {0, 0, 0}, mean_theirs[3] = {0, 0, 0};
    const int pixels = 200 * 150;
    for (int p = 0; p < pixels; ++p)
      for (int ch = 0; ch < 3; ++ch) {
        const double a = ours.pixels8[p * 3 + ch], b = theirs.samples[p * theirs.channels + ch];
        squared += (a - b) * (a - b);
        mean_ours[ch] += a / pixels;
        mean_theirs[ch] += b / pixels;
      }
    const double psnr = 10 * std::log10(255.0 * 255.0 / (squared / (3.0 * pixels)));
    RecordProperty("psnr_" + name, std::to_string(psnr));
    // Measured (2026-11-26): 40.4 and 38.4 dB, channel means within 0.2 of
    // flam3's. Without density estimation: 32.6 / 32.8 dB, means 0.8 lower;
    // brightness × 1.1: means 1.8 higher — both fail here.
    EXPECT_GE(psnr, 36.0);
    for (int ch = 0; ch < 3; ++ch) EXPECT_NEAR(mean_ours[ch], mean_theirs[ch], 0.5) << "channel " << ch;
  }
}

}  // namespace
}  // namespace procgen
