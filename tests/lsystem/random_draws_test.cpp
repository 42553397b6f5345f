// ran() and stochastic choices are keyed per module (src/common/random.h:
// seed, phase, position, draw). Checked statistically on every backend that
// runs here, serial and cpu included, so that a stream that gives every
// module the same value (or repeats across steps or seeds) is caught on a
// machine without OpenCL too — the backend parity suite cannot see a bug that
// serial and cpu share.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "procgen/lsystem.hpp"

namespace {

using procgen::test::Variant;

constexpr int kModules = 400;

class RandomDraws : public procgen::test::BackendTest {
 protected:
  procgen::ModuleString derive(const std::string& text, int n, uint64_t seed) {
    const procgen::LSystem l = procgen::LSystem::fromText(text, "draws.l");
    procgen::DeriveOptions options;
    options.iterations = n;
    options.seed = seed;
    options.execution = execution();
    return procgen::derive(l, options);
  }
};

std::string axiomOfAs() { return "Axiom: " + std::string(kModules, 'A') + "\n"; }

/// Uniform [0,1) samples: all in range, nearly all distinct, mean and a
/// 10-bin chi-square within what 400 independent uniforms give (mean within
/// 5 sigma, chi-square below 35: p < 1e-4 for 9 degrees of freedom).
void expectUniform(const std::vector<float>& v) {
  ASSERT_EQ(v.size(), size_t(kModules));
  double sum = 0;
  int bins[10] = {};
  for (float x : v) {
    ASSERT_GE(x, 0.0f);
    ASSERT_LT(x, 1.0f);
    sum += x;
    ++bins[std::min(9, int(x * 10))];
  }
  EXPECT_GE(std::set<float>(v.begin(), v.end()).size(), size_t(kModules - 5)) << "values repeat across modules";
  const double mean = sum / kModules, sigma = std::sqrt(1.0 / 12.0 / kModules);
  EXPECT_NEAR(mean, 0.5, 5 * sigma);
  double chi2 = 0;
  for (int b : bins) chi2 += (b - kModules / 10.0) * (b - kModules / 10.0) / (kModules / 10.0);
  EXPECT_LT(chi2, 35.0);
}

std::vector<float> params(const procgen::ModuleString& s) { return {s.params.begin(), s.params.end()}; }

TEST_P(RandomDraws, RanInSuccessorsDiffersPerModuleStepAndSeed) {
  const std::string text = "Lsystem: 1\n" + axiomOfAs() + "A --> B(ran(1))\nB(x) --> B(ran(1))\nendlsystem\n";
  const procgen::ModuleString one = derive(text, 1, 7);
  ASSERT_EQ(one.size(), size_t(kModules));
  expectUniform(params(one));
  const procgen::ModuleString two = derive(text, 2, 7);
  expectUniform(params(two));
  const procgen::ModuleString other_seed = derive(text, 1, 8);
  expectUniform(params(other_seed));
  int same_step = 0, same_seed = 0;
  for (size_t i = 0; i < size_t(kModules); ++i) {
    same_step += one.params[i] == two.params[i];
    same_seed += one.params[i] == other_seed.params[i];
  }
  EXPECT_LE(same_step, 2) << "step 2 repeats step 1's draws";
  EXPECT_LE(same_seed, 2) << "seed 8 repeats seed 7's draws";
}

TEST_P(RandomDraws, TwoRanCallsInOneModuleDiffer) {
  const std::string text = "Lsystem: 1\n" + axiomOfAs() + "A --> B(ran(1), ran(1))\nendlsystem\n";
  const procgen::ModuleString s = derive(text, 1, 3);
  ASSERT_EQ(s.params.size(), size_t(2 * kModules));
  std::vector<float> first, second;
  int same = 0;
  for (size_t i = 0; i < size_t(kModules); ++i) {
    first.push_back(s.params[2 * i]);
    second.push_back(s.params[2 * i + 1]);
    same += s.params[2 * i] == s.params[2 * i + 1];
  }
  expectUniform(first);
  expectUniform(second);
  EXPECT_LE(same, 2);
}

// A condition with ran(): each module passes with probability 0.3, so the
// count of rewritten modules is binomial(400, 0.3): 120 ± 5 sigma (9.2).
TEST_P(RandomDraws, RanInConditionsIsDrawnPerModule) {
  const std::string text = "Lsystem: 1\n" + axiomOfAs() + "A : ran(1) < 0.3 --> B\nendlsystem\n";
  for (uint64_t seed : {1, 2, 3}) {
    const procgen::ModuleString s = derive(text, 1, seed);
    const auto b = std::count(s.symbols.begin(), s.symbols.end(), uint8_t('B'));
    EXPECT_NEAR(double(b), 0.3 * kModules, 5 * std::sqrt(kModules * 0.3 * 0.7)) << "seed " << seed;
  }
}

// Stochastic productions: A --> B : 1, A --> C : 3 picks B with p = 1/4.
TEST_P(RandomDraws, StochasticChoicesArePerModule) {
  const std::string text = "Lsystem: 1\n" + axiomOfAs() + "A --> B : 1\nA --> C : 3\nendlsystem\n";
  const procgen::ModuleString s = derive(text, 1, 11);
  const auto b = std::count(s.symbols.begin(), s.symbols.end(), uint8_t('B'));
  EXPECT_NEAR(double(b), 0.25 * kModules, 5 * std::sqrt(kModules * 0.25 * 0.75));
}

// ran() in homomorphism successors: F(ran(1)) drawn per module gives
// segments of uniform length.
TEST_P(RandomDraws, RanInHomomorphismIsDrawnPerModule) {
  const procgen::LSystem l = procgen::LSystem::fromText(
      "Lsystem: 1\n" + axiomOfAs() + "homomorphism:\nA --> f(1)F(ran(1))\nendlsystem\n", "hom.l");
  const procgen::ModuleString s = procgen::derive(l, procgen::DeriveOptions{});
  procgen::InterpretOptions options;
  options.view = l.view();
  options.seed = 5;
  options.execution = execution();
  const procgen::Geometry g = procgen::interpret(l, s, options);
  ASSERT_EQ(g.segments.size(), size_t(kModules));
  std::vector<float> lengths;
  for (const procgen::Segment& seg : g.segments)
    lengths.push_back(float(std::hypot(double(seg.end.x) - seg.start.x, double(seg.end.y) - seg.start.y,
                                       double(seg.end.z) - seg.start.z)));
  // Lengths are ran(1) up to float rounding of the endpoints: uniformity,
  // not exact distinctness, is what holds.
  double sum = 0;
  for (float x : lengths) sum += x;
  EXPECT_NEAR(sum / kModules, 0.5, 5 * std::sqrt(1.0 / 12.0 / kModules));
  std::sort(lengths.begin(), lengths.end());
  EXPECT_GT(lengths.back() - lengths.front(), 0.9f) << "every module drew the same length";
  int distinct = 1;
  for (size_t i = 1; i < lengths.size(); ++i) distinct += lengths[i] - lengths[i - 1] > 1e-4f;
  EXPECT_GT(distinct, kModules / 2);
}

INSTANTIATE_TEST_SUITE_P(Backends, RandomDraws, testing::ValuesIn(procgen::test::backendVariants()),
                         procgen::test::variantName);

}  // namespace
