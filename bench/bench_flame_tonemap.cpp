// Flame tone mapping (toneMapFlame) at issue 19's benchmark size: a
// 1280×720 image, quality 50, supersample 1 and 2, flam3's default tone
// settings (density estimation radius 9, minimum 0, curve 0.4; gaussian
// filter 0.5), serial beside cpu×1 and cpu×2. The histogram comes from the
// tests' small chaos game (tests/flame/tonemap_helpers.hpp: a Sierpinski
// gasket bent by a spherical map, 46 M points — dense cells and sparse ones,
// as a flame has), built once per supersampling before timing. Items are
// output pixels.
//   build/bench/procgen_bench --benchmark_filter=FlameToneMap
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>

#include "../tests/flame/tonemap_helpers.hpp"  // the chaos game the tests compare with flam3
#include "procgen/flame_render.hpp"

namespace {

using namespace procgen;

FlameGenome benchGenome(int supersample) {
  FlameGenome g;
  g.width = 1280;
  g.height = 720;
  g.scale = 240;
  g.quality = 50;
  g.supersample = supersample;
  return g;  // flam3's defaults otherwise: estimator 9 / 0 / 0.4, gaussian 0.5, gamma 4, brightness 4
}

const FlameHistogram& histogram(int supersample) {
  static std::map<int, std::unique_ptr<FlameHistogram>> cache;
  auto& slot = cache[supersample];
  if (!slot) slot = std::make_unique<FlameHistogram>(test::sierpinskiHistogram(benchGenome(supersample)));
  return *slot;
}

void BM_FlameToneMap(benchmark::State& state, Backend backend, int threads) {
  if (!backendAvailable(backend)) {
    state.SkipWithError("backend not built");
    return;
  }
  const int supersample = static_cast<int>(state.range(0));
  const FlameGenome g = benchGenome(supersample);
  const FlameHistogram& h = histogram(supersample);
  for (auto _ : state) {
    FlameImage image = toneMapFlame(g, h, FlameRenderOptions{}, Execution{backend, threads});
    benchmark::DoNotOptimize(image.pixels8.data());
  }
  state.SetItemsProcessed(state.iterations() * int64_t{1280} * 720);
}

BENCHMARK_CAPTURE(BM_FlameToneMap, serial, Backend::kSerial, 1)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_FlameToneMap, cpu1, Backend::kCpu, 1)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_FlameToneMap, cpu2, Backend::kCpu, 2)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
