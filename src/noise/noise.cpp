// procgen noise entry points (include/procgen/noise.hpp): validation, the
// per-call setup (seed key, per-octave lattice scales and tile periods), one
// point (noiseAt) and the grid dispatch to the stages of noise_stages.hpp.
//
// Paper: shared/seeds/001_191daa7b81372e37.txt — §3 (multi-octave Perlin
// noise: octave o at pos · scalingᵒ, amplitude persistenceᵒ) and §4 (the grid
// on the GPU, whose optimizations the optimized stages implement).
#include <cmath>
#include <limits>
#include <string>

#include "common/dispatch.hpp"
#include "noise/noise_stages.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"

namespace procgen {

namespace {

[[noreturn]] void fail(const std::string& message, ExitCode code = ExitCode::kUsage) {
  throw Error("noise: " + message, code);
}

void requireFinite(double value, const char* name) {
  if (!std::isfinite(value)) fail(std::string(name) + " must be a finite number");
}

/// Lattice cells are 32-bit: every lattice coordinate must stay below 2^31 in
/// magnitude so that neighbouring cells never wrap.
constexpr double kMaxLatticeCoordinate = 2147483648.0 - 2.0;

int latticeDims(const NoiseParams& params) { return params.dims + (params.time ? 1 : 0); }

/// The largest octave frequency factor lacunarityᵒ used.
double maxLacunarityPower(const NoiseParams& params) {
  double m = 1.0;
  int octaves = params.fractal == FractalType::kNone ? 1 : params.octaves;
  for (int o = 0; o < octaves; ++o) m = std::max(m, std::pow(static_cast<double>(params.lacunarity), o));
  return m;
}

}  // namespace

void validateNoise(const NoiseParams& params, const NoiseGrid* grid) {
  if (params.dims < 2 || params.dims > 4) fail("dims must be 2, 3 or 4 (got " + std::to_string(params.dims) + ")");
  if (params.time && params.dims == 4) fail("time adds a dimension: dims + time must be at most 4");
  if (static_cast<unsigned>(params.type) > static_cast<unsigned>(NoiseType::kCellular)) fail("unknown noise type");
  if (static_cast<unsigned>(params.fractal) > static_cast<unsigned>(FractalType::kPingPong))
    fail("unknown fractal type");
  if (static_cast<unsigned>(params.cellular_distance) > static_cast<unsigned>(CellularDistance::kChebyshev))
    fail("unknown cellular distance");
  if (static_cast<unsigned>(params.cellular_return) > static_cast<unsigned>(CellularReturn::kCellValue))
    fail("unknown cellular return");
  if (static_cast<unsigned>(params.warp) > static_cast<unsigned>(DomainWarp::kFractal)) fail("unknown domain warp");
  if (params.type == NoiseType::kCellular && latticeDims(params) > 3)
    fail("cellular noise is 2D or 3D (time included)");
  if (params.octaves < 1 || params.octaves > kMaxOctaves)
    fail("octaves must be 1.." + std::to_string(kMaxOctaves) + " (got " + std::to_string(params.octaves) + ")");
  requireFinite(params.frequency, "frequency");
  if (params.frequency <= 0) fail("frequency must be positive");
  requireFinite(params.lacunarity, "lacunarity");
  if (params.lacunarity <= 0) fail("lacunarity must be positive");
  requireFinite(params.gain, "gain");
  requireFinite(params.weighted_strength, "weighted strength");
  if (params.weighted_strength < 0 || params.weighted_strength > 1) fail("weighted strength must be in [0, 1]");
  requireFinite(params.ping_pong_strength, "ping-pong strength");
  if (params.ping_pong_strength < 0) fail("ping-pong strength must not be negative");
  requireFinite(params.cellular_jitter, "cellular jitter");
  if (params.cellular_jitter < 0 || params.cellular_jitter > 1) fail("cellular jitter must be in [0, 1]");
  requireFinite(params.warp_amplitude, "warp amplitude");
  if (params.warp_amplitude < 0) fail("warp amplitude must not be negative");
  if (params.time) requireFinite(*params.time, "time");
  // Σ gainᵒ must be a usable normaliser.
  double total = 0, amp = 1;
  for (int o = 0; o < params.octaves; ++o, amp *= params.gain) total += std::fabs(amp);
  if (!std::isfinite(total) || total > 1e30) fail("gain^octaves overflows");

  const double lac_max = maxLacunarityPower(params);
  if (!std::isfinite(params.frequency * lac_max)) fail("frequency · lacunarity^octaves overflows");
  if (params.time && std::fabs(*params.time) * params.frequency * lac_max > kMaxLatticeCoordinate)
    fail("time · frequency · lacunarity^(octaves-1) must stay below 2^31 lattice cells");
  if (!grid) return;

  const int ldims = latticeDims(params);
  for (int d = 0; d < 4; ++d) {
    if (grid->size[d] == 0) fail("grid size must be at least 1 along every axis");
    if (grid->size[d] > (uint64_t{1} << 31))
      fail("grid size along axis " + std::to_string(d) + " is over 2^31 samples", ExitCode::kBadInput);
    if (d >= params.dims && grid->size[d] != 1)
      fail("grid size along unused axis " + std::to_string(d) + " must be 1 (dims is " + std::to_string(params.dims) +
           ")");
    requireFinite(grid->origin[d], "origin");
  }
  requireFinite(grid->step, "step");
  if (grid->step <= 0) fail("step must be positive");
  uint64_t points = 1;
  for (int d = 0; d < 4; ++d) {
    auto p = checkedMul(points, grid->size[d]);
    if (!p) fail("grid size overflows 64 bits", ExitCode::kBadInput);
    points = *p;
  }
  if (!checkedMul(points, sizeof(float)) || points > (uint64_t{1} << 60))
    fail("grid of " + std::to_string(points) + " points is too large", ExitCode::kBadInput);
  for (int d = 0; d < params.dims; ++d) {
    double extent = grid->step * static_cast<double>(grid->size[d]);
    double far = std::max(std::fabs(grid->origin[d]), std::fabs(grid->origin[d] + extent));
    if (!std::isfinite(far) || far * params.frequency * lac_max > kMaxLatticeCoordinate)
      fail("grid reaches beyond 2^31 lattice cells along axis " + std::to_string(d) +
           " (|origin + step·size| · frequency · lacunarity^(octaves-1))");
    if (grid->tile && extent * params.frequency * lac_max > 1073741824.0)
      fail("tile period beyond 2^30 lattice cells along axis " + std::to_string(d));
  }
  // The skewed simplex lattice has no axis-aligned period.
  if (grid->tile && params.type == NoiseType::kSimplex)
    fail("simplex noise cannot tile (its skewed lattice has no axis-aligned period); use perlin, value or cellular");
  (void)ldims;
}

namespace detail {

NoiseRange emptyRange() {
  return {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
}

NoiseSetup makeNoiseSetup(const NoiseParams& params, const NoiseGrid* grid) {
  NoiseSetup s;
  PgNoiseConfig& c = s.cfg;
  s.lattice_dims = latticeDims(params);
  c.key = pgNoiseSeedKey(params.seed);
  c.type = static_cast<pg_i32>(params.type);
  c.dims = s.lattice_dims;
  c.fractal = static_cast<pg_i32>(params.fractal);
  c.octaves = params.fractal == FractalType::kNone ? 1 : params.octaves;
  c.gain = params.gain;
  c.weighted_strength = params.fractal == FractalType::kNone ? 0.0f : params.weighted_strength;
  c.ping_pong_strength = params.ping_pong_strength;
  c.cellular_distance = static_cast<pg_i32>(params.cellular_distance);
  c.cellular_return = static_cast<pg_i32>(params.cellular_return);
  c.cellular_jitter = params.cellular_jitter;
  c.warp = static_cast<pg_i32>(params.warp);
  c.warp_octaves = params.warp == DomainWarp::kFractal ? params.octaves : 1;
  c.warp_amplitude = params.warp_amplitude;
  // Σ |amplitudes| bounds the sum of terms in [−1, 1] (weighting only shrinks
  // later amplitudes): dividing by it keeps every sum in [−1, 1].
  auto bound = [&](int octaves) {
    double total = 0, amp = 1;
    for (int o = 0; o < octaves; ++o, amp *= params.gain) total += std::fabs(amp);
    return static_cast<float>(1.0 / total);
  };
  c.fractal_bound = bound(c.octaves);
  c.warp_bound = bound(c.warp_octaves);
  s.table_octaves = std::max(c.octaves, params.warp == DomainWarp::kNone ? 0 : c.warp_octaves);

  for (int o = 0; o < kMaxOctaves; ++o) {
    double f = params.frequency * std::pow(static_cast<double>(params.lacunarity), o);
    for (int d = 0; d < 4; ++d) {
      double scale = f;
      int32_t period = 0;
      if (grid && grid->tile && d < params.dims && o < s.table_octaves) {
        // A whole number of cells per grid extent makes the lattice periodic
        // (docs/noise.md, "Tiling"); the frequency moves to the nearest such.
        double extent = grid->step * static_cast<double>(grid->size[d]);
        double cells = std::max(1.0, std::round(extent * f));
        period = static_cast<int32_t>(cells);
        scale = cells / extent;
      }
      s.scale[o][d] = scale;
      c.scale[o][d] = static_cast<float>(scale);
      c.period[o][d] = period;
    }
  }
  if (grid) {
    s.step = grid->step;
    for (int d = 0; d < params.dims; ++d) {
      s.size[d] = grid->size[d];
      s.origin[d] = grid->origin[d];
    }
  }
  if (params.time) {
    s.size[params.dims] = 1;
    s.origin[params.dims] = *params.time;
  }
  return s;
}

void splitLatticeCoordinate(const NoiseSetup& setup, int octave, int axis, double field, uint32_t& cell,
                            float& frac) {
  double t = field * setup.scale[octave][axis];
  double fl = std::floor(t);
  int32_t period = setup.cfg.period[octave][axis];
  int64_t c = static_cast<int64_t>(fl);
  if (period > 0) c = ((c % period) + period) % period;
  cell = static_cast<uint32_t>(c);
  frac = static_cast<float>(t - fl);
  pgNoiseNormalize(&cell, &frac, period);
}

void splitPoint(const NoiseSetup& setup, const double* field, uint32_t* cells, float* fracs) {
  for (int o = 0; o < setup.table_octaves; ++o)
    for (int d = 0; d < setup.lattice_dims; ++d)
      splitLatticeCoordinate(setup, o, d, field[d], cells[o * 4 + d], fracs[o * 4 + d]);
}

LatticeTables makeLatticeTables(const NoiseSetup& setup) {
  LatticeTables t;
  for (int d = 0; d < setup.lattice_dims; ++d) {
    t.base[d] = t.total;
    t.total += static_cast<uint32_t>(setup.size[d]);
  }
  const size_t entries = static_cast<size_t>(setup.table_octaves) * t.total;
  t.cells.resize(entries);
  t.fracs.resize(entries);
  for (int o = 0; o < setup.table_octaves; ++o)
    for (int d = 0; d < setup.lattice_dims; ++d)
      for (uint64_t i = 0; i < setup.size[d]; ++i) {
        const size_t at = static_cast<size_t>(o) * t.total + t.base[d] + i;
        splitLatticeCoordinate(setup, o, d, setup.fieldCoordinate(d, i), t.cells[at], t.fracs[at]);
      }
  return t;
}

}  // namespace detail

namespace {

NoiseRange runGrid(const detail::NoiseSetup& setup, std::span<float> out, const Execution& execution,
                   NoiseEvaluation evaluation) {
  const bool naive = evaluation == NoiseEvaluation::kNaive;
  return detail::dispatch(
      execution, "generateNoise",
      [&] { return naive ? detail::serialNaiveGrid(setup, out) : detail::serialOptimizedGrid(setup, out); },
      [&] {
        int threads = effectiveThreads(execution);
        return naive ? detail::cpuNaiveGrid(setup, out, threads) : detail::cpuOptimizedGrid(setup, out, threads);
      },
      [&] {
        return naive ? detail::openclNaiveGrid(setup, out, execution.device)
                     : detail::openclOptimizedGrid(setup, out, execution.device);
      });
}

}  // namespace

NoiseRange generateNoise(const NoiseParams& params, const NoiseGrid& grid, std::span<float> out,
                         const Execution& execution, NoiseEvaluation evaluation) {
  return generateNoiseSlab(params, grid, 0, 0, grid.size[0], out, execution, evaluation);
}

NoiseRange generateNoiseSlab(const NoiseParams& params, const NoiseGrid& grid, int axis, uint64_t begin,
                             uint64_t end, std::span<float> out, const Execution& execution,
                             NoiseEvaluation evaluation) {
  validateNoise(params, &grid);
  if (axis < 0 || axis > 3 || begin >= end || end > grid.size[size_t(axis)])
    fail("slab [" + std::to_string(begin) + ", " + std::to_string(end) + ") is not a non-empty part of axis " +
         std::to_string(axis));
  const uint64_t points = grid.points() / grid.size[size_t(axis)] * (end - begin);
  if (out.size() != points)
    fail("output holds " + std::to_string(out.size()) + " floats, the slab has " + std::to_string(points) + " points");
  // The setup of the whole grid (its tile periods), restricted to the slab:
  // coordinates are origin + step·(begin + i), the whole grid's bits.
  detail::NoiseSetup setup = detail::makeNoiseSetup(params, &grid);
  setup.size[size_t(axis)] = end - begin;
  setup.first[size_t(axis)] = begin;
  return runGrid(setup, out, execution, evaluation);
}

float noiseAt(const NoiseParams& params, std::span<const double> point, std::span<float> gradient) {
  validateNoise(params, nullptr);
  if (point.size() != static_cast<size_t>(params.dims))
    fail("a point has " + std::to_string(params.dims) + " coordinates (got " + std::to_string(point.size()) + ")");
  for (double x : point) requireFinite(x, "point coordinate");
  if (!gradient.empty()) {
    if (gradient.size() != static_cast<size_t>(params.dims))
      fail("the gradient has " + std::to_string(params.dims) + " components (got " +
           std::to_string(gradient.size()) + ")");
    if (params.type != NoiseType::kPerlin && params.type != NoiseType::kSimplex)
      fail(std::string("no analytic gradient for ") + std::string(noiseTypeName(params.type)) +
           " noise (perlin and simplex have one)");
    if (params.warp != DomainWarp::kNone) fail("no analytic gradient through a domain warp");
  }
  const double lac_max = maxLacunarityPower(params);
  for (double x : point)
    if (std::fabs(x) * params.frequency * lac_max > kMaxLatticeCoordinate)
      fail("the point is beyond 2^31 lattice cells (|x| · frequency · lacunarity^(octaves-1))");
  const detail::NoiseSetup setup = detail::makeNoiseSetup(params, nullptr);
  double field[4] = {0, 0, 0, 0};
  for (int d = 0; d < params.dims; ++d) field[d] = point[d];
  if (params.time) field[params.dims] = *params.time;
  uint32_t cells[kMaxOctaves * 4];
  float fracs[kMaxOctaves * 4];
  detail::splitPoint(setup, field, cells, fracs);
  float g[4] = {0, 0, 0, 0};
  float value = pgNoiseSample(&setup.cfg, cells, fracs, gradient.empty() ? nullptr : g);
  for (size_t d = 0; d < gradient.size(); ++d) gradient[d] = g[d];
  return value;
}

std::string_view noiseTypeName(NoiseType type) {
  switch (type) {
    case NoiseType::kPerlin: return "perlin";
    case NoiseType::kSimplex: return "simplex";
    case NoiseType::kValue: return "value";
    case NoiseType::kCellular: return "cellular";
  }
  return "unknown";
}

std::optional<NoiseType> parseNoiseType(std::string_view name) {
  if (name == "perlin") return NoiseType::kPerlin;
  if (name == "simplex") return NoiseType::kSimplex;
  if (name == "value") return NoiseType::kValue;
  if (name == "cellular") return NoiseType::kCellular;
  return std::nullopt;
}

std::optional<FractalType> parseFractalType(std::string_view name) {
  if (name == "none") return FractalType::kNone;
  if (name == "fbm") return FractalType::kFbm;
  if (name == "ridged") return FractalType::kRidged;
  if (name == "billow") return FractalType::kBillow;
  if (name == "pingpong") return FractalType::kPingPong;
  return std::nullopt;
}

std::optional<CellularDistance> parseCellularDistance(std::string_view name) {
  if (name == "euclidean") return CellularDistance::kEuclidean;
  if (name == "sq") return CellularDistance::kEuclideanSq;
  if (name == "manhattan") return CellularDistance::kManhattan;
  if (name == "chebyshev") return CellularDistance::kChebyshev;
  return std::nullopt;
}

std::optional<CellularReturn> parseCellularReturn(std::string_view name) {
  if (name == "f1") return CellularReturn::kF1;
  if (name == "f2") return CellularReturn::kF2;
  if (name == "f2-f1") return CellularReturn::kF2MinusF1;
  if (name == "value") return CellularReturn::kCellValue;
  return std::nullopt;
}

}  // namespace procgen
