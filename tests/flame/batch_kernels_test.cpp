// The presorted chaos game's term-major batches (src/flame/chaos_game.cpp,
// Kernel::kTermMajor: an xform whose terms draw no random numbers applies
// one term at a time to the whole batch) against the per-point
// pgFlameApplyXform: the same histogram bits, for every variation that
// draws nothing, with post-affines, xaos and a final xform; and
// pgFlameVariationDraws (which xforms may take that path) against what each
// variation actually does to the generator; and the plain, AVX2 and AVX-512
// variants of the term loops against each other.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "flame/chaos_game.hpp"
#include "flame/iterate_helpers.hpp"
#include "flame/variation_fixtures.hpp"
#include "flame/xform.h"
#include "procgen/flame.hpp"
#include "procgen/error.hpp"
#include "procgen/flame_render.hpp"

namespace procgen {
namespace {

const Execution kSerial{Backend::kSerial, 1};

/// iterateFlame with the batch kernels and point by point must give the same bits.
void expectBatchesMatchPerPoint(const FlameGenome& g, uint64_t seed) {
  const FlameRenderOptions o = test::optionsFor(FlameMethod::kPresorted, seed);
  const FlameHistogram batched = iterateFlame(g, o, kSerial);
  flame::setFlameBatchKernelsForTesting(false);
  const FlameHistogram per_point = iterateFlame(g, o, kSerial);
  flame::setFlameBatchKernelsForTesting(true);
  EXPECT_GT(batched.samples, 0u);
  EXPECT_TRUE(test::sameBits(batched, per_point));
}

TEST(FlameTermMajorBatches, EveryVariationThatDrawsNothingMatchesThePerPointXform) {
  // Every non-drawing variation, four per xform (so each xform needs several
  // precalculations), small weights so that orbits stay mostly bounded.
  std::vector<int> quiet;
  for (int v = 0; v < kFlameVariationCount; ++v)
    if (!pgFlameVariationDraws(static_cast<pg_u32>(v))) quiet.push_back(v);
  ASSERT_GT(quiet.size(), 70u);
  FlameGenome g = test::emptyGenome(64, 36, 10.0, 20.0);
  for (size_t k = 0; k < quiet.size(); k += 4) {
    std::vector<std::pair<int, double>> terms;
    for (size_t i = k; i < std::min(k + 4, quiet.size()); ++i) terms.push_back({quiet[i], 0.3});
    FlameXform xf = test::flame::testXform(terms);
    xf.weight = 1.0 + static_cast<double>(k % 3);
    xf.color = static_cast<double>(k) / static_cast<double>(quiet.size());
    if (k % 8 == 0) xf.post = {0.9, 0.1, -0.05, -0.2, 0.8, 0.1};
    g.xforms.push_back(xf);
  }
  expectBatchesMatchPerPoint(g, 3);
  // With a final xform of quiet terms (applied with probability 0.7) and xaos.
  g.final_xform = test::flame::testXform({{3, 0.4}, {20, 0.3}, {91, 0.2}});
  g.final_xform->opacity = 0.7;
  g.xforms[1].chaos = {1.0, 0.0, 2.0};
  expectBatchesMatchPerPoint(g, 4);
}

TEST(FlameTermMajorBatches, ExampleGenomesMatchThePerPointXform) {
  for (const char* name : {"mixed.flam3", "trig.flam3"}) {
    const std::string path = std::string(PROCGEN_SOURCE_DIR) + "/examples/flames/" + name;
    for (FlameGenome g : readFlameFile(path)) {
      g.width = 64;
      g.height = 36;
      g.scale /= 10;
      g.quality = 10;
      SCOPED_TRACE(std::string(name) + " flame " + std::to_string(g.source_line));
      expectBatchesMatchPerPoint(g, 5);
    }
  }
}

TEST(FlameTermMajorBatches, EveryInstructionSetGivesTheSameBits) {
  // The term-major loops are compiled for plain x86-64, AVX2 and AVX-512;
  // each variant this CPU runs must give the histogram of the plain one.
  std::vector<int> quiet;
  for (int v = 0; v < kFlameVariationCount; ++v)
    if (!pgFlameVariationDraws(static_cast<pg_u32>(v))) quiet.push_back(v);
  FlameGenome g = test::emptyGenome(64, 36, 10.0, 20.0);
  for (size_t k = 0; k < quiet.size(); k += 3) {
    std::vector<std::pair<int, double>> terms;
    for (size_t i = k; i < std::min(k + 3, quiet.size()); ++i) terms.push_back({quiet[i], 0.35});
    g.xforms.push_back(test::flame::testXform(terms));
  }
  const FlameRenderOptions o = test::optionsFor(FlameMethod::kPresorted, 6);
  const int best = flame::flameVectorIsaForTesting();
  flame::setFlameVectorIsaForTesting(0);
  const FlameHistogram plain = iterateFlame(g, o, kSerial);
  EXPECT_GT(plain.samples, 0u);
  for (int isa = 1; isa <= best; ++isa) {
    flame::setFlameVectorIsaForTesting(isa);
    EXPECT_TRUE(test::sameBits(iterateFlame(g, o, kSerial), plain)) << "instruction set " << isa;
  }
  flame::setFlameVectorIsaForTesting(best);
  EXPECT_THROW(flame::setFlameVectorIsaForTesting(3), Error);
}

TEST(FlameTermMajorBatches, DrawsSaysWhichVariationsUseTheGenerator) {
  // Apply each variation alone at the fixture's points: the generator moves
  // exactly when pgFlameVariationDraws says it draws (pre_blur included).
  for (int v = 0; v < kFlameVariationCount; ++v) {
    const FlameXform xf = test::flame::testXform({{v, 0.7}});
    const flame::XformTable table = test::flame::compileOne(xf);
    bool moved = false;
    for (const auto& t : test::flame::testAffineOutputs()) {
      const std::array<float, 2> in = test::flame::inputFor(t);
      PgFlameRng rng, before;
      pgFlameRngInit(&rng, 77, static_cast<uint64_t>(v));
      before = rng;
      PgFlamePoint p{in[0], in[1], 0.5f};
      pgFlameApplyXform(&table.xforms[0], table.terms.data(), table.params.data(), &p, &rng);
      moved = moved || std::memcmp(&rng, &before, sizeof rng) != 0;
    }
    EXPECT_EQ(moved, pgFlameVariationDraws(static_cast<pg_u32>(v)) != 0) << "variation " << v;
  }
}

}  // namespace
}  // namespace procgen
