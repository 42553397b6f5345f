// Flame tone mapping on the cpu backend is bit-identical to serial at 1, 2
// and 7 threads (and on opencl, which tone-maps on the host), over images
// tall enough for many density-estimation bands, every output mode, and
// histograms of sparse and dense cells.
#include <gtest/gtest.h>

#include <string>

#include "flame/tonemap_helpers.hpp"
#include "flame/tonemap_stages.hpp"
#include "procgen/flame_render.hpp"

namespace procgen {
namespace {

struct ParityCase {
  const char* name;
  int width, height, supersample;
  double estimator;
  FlameFilterShape shape;
  double filter;
  bool earlyclip, transparency;
  int bits;
};

TEST(FlameToneMapCpu, BitIdenticalToSerialAtAnyThreadCount) {
  const ParityCase cases[] = {
      {"de_ss1", 96, 160, 1, 9, FlameFilterShape::kGaussian, 0.5, false, false, 8},
      {"de_ss2_16bit", 64, 120, 2, 5, FlameFilterShape::kMitchell, 1.0, false, true, 16},
      {"de_ss3_earlyclip", 40, 70, 3, 3, FlameFilterShape::kLanczos2, 0.7, true, false, 8},
      {"plain_log", 80, 90, 2, 0, FlameFilterShape::kCatrom, 1.2, false, true, 16},
  };
  for (const ParityCase& pc : cases) {
    SCOPED_TRACE(pc.name);
    FlameGenome g = test::toneMapGenome(pc.width, pc.height);
    g.supersample = pc.supersample;
    g.estimator_radius = pc.estimator;
    g.filter_shape = pc.shape;
    g.filter_radius = pc.filter;
    g.vibrancy = 0.8;
    g.highlight_power = 0.7;
    g.background = {0.1, 0.0, 0.3};
    FlameRenderOptions o;
    o.earlyclip = pc.earlyclip;
    o.transparency = pc.transparency;
    o.bits_per_channel = pc.bits;
    FlameHistogram h = test::emptyHistogram(g, o);
    test::fillRandom(h, 1234, 0.5);
    const flame::ToneMapSetup setup = flame::makeToneMapSetup(g, h, o);
    if (pc.estimator > 0) {
      ASSERT_GE(setup.deBandCount(), 6);  // both parities, several bands each
    }
    const FlameImage serial = toneMapFlame(g, h, o, Execution{Backend::kSerial, 1});
    for (Backend backend : {Backend::kCpu, Backend::kOpenCL}) {
      if (!backendAvailable(backend)) continue;
      for (int threads : {1, 2, 7}) {
        const FlameImage other = toneMapFlame(g, h, o, Execution{backend, threads});
        ASSERT_EQ(other.width, serial.width);
        ASSERT_EQ(other.channels, serial.channels);
        EXPECT_TRUE(other.pixels8 == serial.pixels8) << backendName(backend) << " threads " << threads;
        EXPECT_TRUE(other.pixels16 == serial.pixels16) << backendName(backend) << " threads " << threads;
      }
    }
  }
}

}  // namespace
}  // namespace procgen
