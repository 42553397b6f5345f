// Noise grid throughput (points per second): the seed paper's table
// (shared/seeds/001_191daa7b81372e37.txt §6 — a 128³ volume of 3D Perlin fBm,
// octaves 1–8) with the columns naive (every point on its own: the paper's
// "Unopt. Perlin"), serial (the optimized grid on one core), cpu×1, cpu×2,
// and Debian's libnoise (noise::module::Perlin, standard quality) as a
// labelled peer when the build found it. Frequency 0.0173 (non-dyadic, so no
// octave samples the lattice points where gradient noise is 0), lacunarity 2,
// gain (libnoise: persistence) 0.5. Besides items/s (points), the counter
// `point_octaves/s` is points × octaves per second.
//
// Steady state: the output volume is allocated and touched once before
// timing and reused by every iteration. Wall-clock time (UseRealTime), so the
// cpu rows count their threads' work.
//   build/bench/procgen_bench --benchmark_filter=NoisePerlin3D
#include <benchmark/benchmark.h>

#include <vector>

#include "procgen/noise.hpp"

#if PROCGEN_HAVE_LIBNOISE
#include <libnoise/noise.h>
#endif

namespace {

using namespace procgen;

constexpr uint64_t kSide = 128;
constexpr double kFrequency = 0.0173;

std::vector<float>& volume() {
  static std::vector<float> v(kSide * kSide * kSide, 0.0f);
  return v;
}

void setCounters(benchmark::State& state, int octaves) {
  const double points = static_cast<double>(kSide * kSide * kSide);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(points));
  state.counters["point_octaves/s"] =
      benchmark::Counter(points * octaves * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void perlinFbm(benchmark::State& state, Backend backend, int threads, NoiseEvaluation evaluation) {
  if (!backendAvailable(backend)) {
    state.SkipWithError("backend not built");
    return;
  }
  const int octaves = static_cast<int>(state.range(0));
  NoiseParams params;
  params.type = NoiseType::kPerlin;
  params.dims = 3;
  params.fractal = FractalType::kFbm;
  params.octaves = octaves;
  params.frequency = kFrequency;
  params.lacunarity = 2.0f;
  params.gain = 0.5f;
  NoiseGrid grid;
  grid.size = {kSide, kSide, kSide, 1};
  std::vector<float>& out = volume();
  const Execution execution{backend, threads};
  NoiseRange range = generateNoise(params, grid, out, execution, evaluation);  // warm-up
  for (auto _ : state) {
    range = generateNoise(params, grid, out, execution, evaluation);
    benchmark::DoNotOptimize(range);
    benchmark::ClobberMemory();
  }
  setCounters(state, octaves);
}

void naive(benchmark::State& state) { perlinFbm(state, Backend::kSerial, 1, NoiseEvaluation::kNaive); }
void serial(benchmark::State& state) { perlinFbm(state, Backend::kSerial, 1, NoiseEvaluation::kOptimized); }
void cpu1(benchmark::State& state) { perlinFbm(state, Backend::kCpu, 1, NoiseEvaluation::kOptimized); }
void cpu2(benchmark::State& state) { perlinFbm(state, Backend::kCpu, 2, NoiseEvaluation::kOptimized); }

BENCHMARK(naive)->Name("NoisePerlin3D/naive")->DenseRange(1, 8)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(serial)->Name("NoisePerlin3D/serial")->DenseRange(1, 8)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(cpu1)->Name("NoisePerlin3D/cpu1")->DenseRange(1, 8)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(cpu2)->Name("NoisePerlin3D/cpu2")->DenseRange(1, 8)->Unit(benchmark::kMillisecond)->UseRealTime();

#if PROCGEN_HAVE_LIBNOISE
// libnoise evaluates point by point (its own gradient table, cubic-quintic
// "standard" quality, no normalisation): the same volume, octaves and factors.
void libnoisePerlin(benchmark::State& state) {
  const int octaves = static_cast<int>(state.range(0));
  noise::module::Perlin perlin;
  perlin.SetFrequency(kFrequency);
  perlin.SetLacunarity(2.0);
  perlin.SetPersistence(0.5);
  perlin.SetOctaveCount(octaves);
  perlin.SetNoiseQuality(noise::QUALITY_STD);
  perlin.SetSeed(1337);
  std::vector<float>& out = volume();
  for (auto _ : state) {
    size_t i = 0;
    for (uint64_t z = 0; z < kSide; ++z)
      for (uint64_t y = 0; y < kSide; ++y)
        for (uint64_t x = 0; x < kSide; ++x)
          out[i++] = static_cast<float>(
              perlin.GetValue(static_cast<double>(x), static_cast<double>(y), static_cast<double>(z)));
    benchmark::ClobberMemory();
  }
  setCounters(state, octaves);
}
BENCHMARK(libnoisePerlin)
    ->Name("NoisePerlin3D/peer_libnoise")
    ->DenseRange(1, 8)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
#endif

}  // namespace
