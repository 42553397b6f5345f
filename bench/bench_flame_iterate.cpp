// Chaos-game throughput (plotted samples per second) of iterateFlame: the
// seed paper's comparison (shared/seeds/003_*.txt §4) of the divergent naive
// chaos game with the presorted one, on the CPU, at the camera
// (1280×720; quality 5 here so that an iteration takes a fraction of a
// second — samples/s do not depend on the quality). Genome classes: linear
// (Barnsley's fern: 4 affine maps), spherical (4 xforms of a flam3-genome
// random genome, use_vars=2), and the spherical genome with xaos, a final
// xform and opacity. Rows: method × serial, cpu×1, cpu×2. Wall-clock time
// (UseRealTime), so the cpu rows count their threads' work. End to end
// against flam3-render is `procgen bench flame`.
//   build/bench/procgen_bench --benchmark_filter=FlameIterate
#include <benchmark/benchmark.h>

#include "procgen/flame_render.hpp"

namespace {

using namespace procgen;

FlameXform xform(double weight, const double (&coefs)[6], int variation, double color) {
  FlameXform x;  // coefs in flam3's order: a d b e c f
  x.weight = weight;
  x.affine = {coefs[0], coefs[2], coefs[4], coefs[1], coefs[3], coefs[5]};
  x.color = color;
  x.variations.push_back({variation, 1.0});
  return x;
}

FlameGenome camera(double cx, double cy, double scale) {
  FlameGenome g;
  g.width = 1280;
  g.height = 720;
  g.center_x = cx;
  g.center_y = cy;
  g.scale = scale;
  g.quality = 5;
  for (int i = 0; i < 256; ++i) g.palette[static_cast<size_t>(i)] = {i / 255.0, 0.5, 1 - i / 255.0, 1.0};
  return g;
}

FlameGenome fern() {
  FlameGenome g = camera(0, 5, 70);
  const double maps[4][6] = {{0, 0, 0, 0.16, 0, 0},
                             {0.85, -0.04, 0.04, 0.85, 0, 1.6},
                             {0.2, 0.23, -0.26, 0.22, 0, 1.6},
                             {-0.15, 0.26, 0.28, 0.24, 0, 0.44}};
  const double weights[4] = {0.01, 0.85, 0.07, 0.07};
  for (int i = 0; i < 4; ++i) g.xforms.push_back(xform(weights[i], maps[i], 0, i / 3.0));
  return g;
}

FlameGenome spherical() {
  FlameGenome g = camera(-0.364479, -1.05803, 148);
  const double coefs[4][6] = {{-0.138514, -0.295664, 0.567153, 0.733005, -0.423628, -0.280372},
                              {-0.263944, -0.467615, -0.942268, 0.466256, 0.189527, -0.616175},
                              {0.239948, 0.597133, -0.127159, 0.380001, -0.782813, 0.961246},
                              {-0.885334, -0.4786, -0.991576, -0.173358, 0.126367, -0.214837}};
  for (int i = 0; i < 4; ++i) g.xforms.push_back(xform(0.25, coefs[i], 2, i & 1));
  return g;
}

FlameGenome xaosFinal() {
  FlameGenome g = spherical();
  g.xforms[1].opacity = 0.6;
  g.xforms[2].chaos = {1.0, 0.0, 2.0, 1.0};
  const double shear[6] = {0.9, -0.1, 0.1, 0.9, 0.05, 0.0};
  g.final_xform = xform(0, shear, 0, 0.8);
  g.final_xform->opacity = 0.7;
  return g;
}

void iterate(benchmark::State& state, FlameGenome (*genome)(), FlameMethod method, Backend backend,
             int threads) {
  if (!backendAvailable(backend)) {
    state.SkipWithError("backend not built");
    return;
  }
  const FlameGenome g = genome();
  FlameRenderOptions options;
  options.method = method;
  uint64_t samples = 0;
  for (auto _ : state) {
    const FlameHistogram h = iterateFlame(g, options, Execution{backend, threads});
    samples += h.samples;
    benchmark::DoNotOptimize(h.buckets.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(samples));
}

#define PROCGEN_FLAME_ROWS(name, genome)                                                                    \
  BENCHMARK_CAPTURE(iterate, name##_naive_serial, genome, FlameMethod::kNaive, Backend::kSerial, 1)         \
      ->Unit(benchmark::kMillisecond)                                                                       \
      ->UseRealTime();                                                                                      \
  BENCHMARK_CAPTURE(iterate, name##_presorted_serial, genome, FlameMethod::kPresorted, Backend::kSerial, 1) \
      ->Unit(benchmark::kMillisecond)                                                                       \
      ->UseRealTime();                                                                                      \
  BENCHMARK_CAPTURE(iterate, name##_naive_cpu2, genome, FlameMethod::kNaive, Backend::kCpu, 2)              \
      ->Unit(benchmark::kMillisecond)                                                                       \
      ->UseRealTime();                                                                                      \
  BENCHMARK_CAPTURE(iterate, name##_presorted_cpu1, genome, FlameMethod::kPresorted, Backend::kCpu, 1)      \
      ->Unit(benchmark::kMillisecond)                                                                       \
      ->UseRealTime();                                                                                      \
  BENCHMARK_CAPTURE(iterate, name##_presorted_cpu2, genome, FlameMethod::kPresorted, Backend::kCpu, 2)      \
      ->Unit(benchmark::kMillisecond)                                                                       \
      ->UseRealTime()

PROCGEN_FLAME_ROWS(FlameIterate_linear, fern);
PROCGEN_FLAME_ROWS(FlameIterate_spherical, spherical);
PROCGEN_FLAME_ROWS(FlameIterate_xaos_final, xaosFinal);

}  // namespace
