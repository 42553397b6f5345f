// One chaos-game step through one xform (pgFlameApplyXform, src/flame/
// variations.h) on the host: nanoseconds per call for a linear xform, a
// spherical one, a trig-heavy mix of seven variations, and every variation
// alone (generated: FlameVariation/<name>). 256 points are stepped in turn so
// that calls overlap as in the serial chaos game; a bad value restarts its
// point at a random position, as the iteration does.
//   build/bench/procgen_bench --benchmark_filter='FlameApplyXform'
//   build/bench/procgen_bench --benchmark_filter='FlameVariation/'
#include <benchmark/benchmark.h>

#include <string>
#include <utility>
#include <vector>

#include "flame/xform.h"
#include "flame/xform_table.hpp"
#include "procgen/flame.hpp"

namespace {

using namespace procgen;

flame::XformTable tableFor(const std::vector<std::pair<int, double>>& terms) {
  FlameXform xf;
  xf.weight = 1.0;
  xf.affine = FlameAffine{0.62, -0.31, 0.12, 0.27, 0.58, -0.09};
  for (const FlameParamInfo& info : flameParams())
    xf.params[static_cast<size_t>(&info - flameParams().data())] = info.default_value;
  for (const auto& [v, w] : terms) xf.variations.push_back({v, w});
  FlameGenome genome;
  genome.xforms.push_back(xf);
  return flame::compileXforms(genome);
}

void stepXform(benchmark::State& state, const flame::XformTable& table) {
  constexpr int kPoints = 256;
  PgFlameRng rng;
  pgFlameRngInit(&rng, 42, 0);
  std::vector<PgFlamePoint> points(kPoints);
  for (PgFlamePoint& p : points) p = {pgFlameRand11(&rng), pgFlameRand11(&rng), 0.5f};
  int64_t bad = 0;
  for (auto _ : state) {
    for (PgFlamePoint& p : points) {
      if (!pgFlameApplyXform(&table.xforms[0], table.terms.data(), table.params.data(), &p, &rng)) {
        p = {pgFlameRand11(&rng), pgFlameRand11(&rng), p.color};
        ++bad;
      }
    }
    benchmark::DoNotOptimize(points.data());
  }
  state.SetItemsProcessed(state.iterations() * kPoints);
  state.counters["ns_per_call"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kPoints,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
  state.counters["bad_fraction"] =
      static_cast<double>(bad) / (static_cast<double>(state.iterations()) * kPoints);
}

void BM_FlameApplyXformLinear(benchmark::State& state) {
  stepXform(state, tableFor({{0, 1.0}}));
}
void BM_FlameApplyXformSpherical(benchmark::State& state) {
  stepXform(state, tableFor({{2, 1.0}}));
}
// sinusoidal, swirl, polar, julia, exponential, sin, tanh.
void BM_FlameApplyXformTrigMix(benchmark::State& state) {
  stepXform(state, tableFor({{1, 0.2}, {3, 0.15}, {5, 0.1}, {13, 0.2}, {18, 0.1}, {84, 0.15}, {92, 0.1}}));
}
BENCHMARK(BM_FlameApplyXformLinear);
BENCHMARK(BM_FlameApplyXformSpherical);
BENCHMARK(BM_FlameApplyXformTrigMix);

// Every variation alone (pre_blur beside linear).
const bool kRegistered = [] {
  for (int v = 0; v < kFlameVariationCount; ++v) {
    std::vector<std::pair<int, double>> terms = {{v, 0.8}};
    if (v == 67) terms = {{0, 0.8}, {67, 0.3}};
    benchmark::RegisterBenchmark(
        ("FlameVariation/" + std::string(flameVariationName(v))).c_str(),
        [table = tableFor(terms)](benchmark::State& state) { stepXform(state, table); });
  }
  return true;
}();

}  // namespace
