// procgen noise: Perlin, simplex, value and cellular noise with fractal sums,
// point by point and on grids (2D images, 3D volumes, 4D slices).
//
// Paper: "Perlin noise in compute shaders" (shared/seeds/001_191daa7b81372e37.txt).
// The per-point functions are written once in the C subset (src/noise/*.h) and
// compile as C++ and as OpenCL C. The grid path exploits the grid as the paper
// does: lattice gradients of a block's cells are computed once and reused for
// all its points (the paper's cooperative work-group caching), and the fade
// weights and per-axis dot-product terms are computed once per row / column
// (separability). `NoiseEvaluation::kNaive` evaluates every point on its own:
// the paper's unoptimized baseline and the independent check of the fast path.
//
// Conventions:
//  - value at grid index i = noise((origin + step·i) · frequency) (x fastest,
//    then y, z, w); with `time` set the field gains one more coordinate equal to
//    time · frequency (the paper's 2D+T and 3D+T), so dims + time ≤ 4;
//  - every coherent type, cellular included, returns values in [−1, 1];
//  - the seed is an integer that keys an integer hash: no per-seed table;
//  - coordinates far from the origin (|x| up to 1e7 after scaling) are split
//    into an integer lattice cell and a fraction before any float arithmetic,
//    so the field is as smooth there as near 0;
//  - serial and cpu give bit-identical grids at every thread count; opencl
//    agrees within kNoiseOpenCLTolerance (absolute) with the same cell choice;
//  - outputs are caller-owned; functions are thread-safe for distinct outputs.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "procgen/backend.hpp"

namespace procgen {

enum class NoiseType : uint8_t { kPerlin, kSimplex, kValue, kCellular };
enum class FractalType : uint8_t { kNone, kFbm, kRidged, kBillow, kPingPong };
enum class CellularDistance : uint8_t { kEuclidean, kEuclideanSq, kManhattan, kChebyshev };
enum class CellularReturn : uint8_t { kF1, kF2, kF2MinusF1, kCellValue };
enum class DomainWarp : uint8_t { kNone, kSingle, kFractal };
enum class NoiseEvaluation : uint8_t {
  kOptimized,  ///< blocked, cached, separable, SIMD (serial/cpu), local memory (opencl)
  kNaive,      ///< every point on its own: the paper's baseline and the reference
};

/// Absolute difference allowed between opencl and serial values.
inline constexpr float kNoiseOpenCLTolerance = 1e-4f;

struct NoiseParams {
  NoiseType type = NoiseType::kPerlin;
  int dims = 3;  ///< 2, 3 or 4 spatial dimensions (plus one with `time`)
  uint64_t seed = 1337;
  double frequency = 0.0173;  ///< non-dyadic on purpose (see docs/noise.md)

  FractalType fractal = FractalType::kFbm;
  int octaves = 5;                ///< 1 .. kMaxOctaves
  float lacunarity = 2.0f;        ///< frequency factor per octave
  float gain = 0.5f;              ///< amplitude factor per octave
  float weighted_strength = 0.0f; ///< 0..1: later octaves weighted by earlier values
  float ping_pong_strength = 2.0f;

  CellularDistance cellular_distance = CellularDistance::kEuclidean;
  CellularReturn cellular_return = CellularReturn::kF1;
  float cellular_jitter = 1.0f;   ///< 0 (regular grid) .. 1

  DomainWarp warp = DomainWarp::kNone;
  float warp_amplitude = 0.0f;    ///< in field units before frequency scaling

  std::optional<double> time;     ///< extra coordinate (2D+T, 3D+T)
};

inline constexpr int kMaxOctaves = 16;

/// A regular grid: size[d] samples along axis d (unused axes 1), sample i at
/// origin + step · i. With `tile`, the field is periodic with the grid's
/// extent in every spatial axis: the sample at index size[d] would equal the
/// one at index 0. Tiling uses a periodic lattice in every dimension (each
/// octave's frequency moves to the nearest whole number of cells per extent;
/// docs/noise.md, "Tiling"); simplex noise cannot tile (validateNoise refuses).
struct NoiseGrid {
  std::array<uint64_t, 4> size{1, 1, 1, 1};
  std::array<double, 4> origin{0, 0, 0, 0};
  double step = 1.0;
  bool tile = false;

  uint64_t points() const { return size[0] * size[1] * size[2] * size[3]; }
};

struct NoiseRange {
  float min = 0.0f;  ///< the smallest value actually written
  float max = 0.0f;  ///< the largest value actually written
};

/// Checks params and grid; throws Error (ExitCode::kUsage) naming the bad
/// field: dims not 2..4, dims + time > 4, octaves out of range, a non-finite
/// or non-positive frequency/step, non-finite parameters, a size of 0, a size
/// along an unused axis other than 1, cellular beyond 3 lattice dimensions,
/// simplex with tile, coordinates beyond 2^31 lattice cells at the highest
/// octave. A grid whose point count overflows (or exceeds 2^60, or 2^31 along
/// one axis) throws Error with ExitCode::kBadInput (an oversized grid, exit 2).
/// Called by every entry point.
void validateNoise(const NoiseParams& params, const NoiseGrid* grid = nullptr);

/// Fills out[0 .. grid.points()) (out.size() must equal grid.points()) and
/// returns the min/max of what it wrote. Memory: none beyond `out` and
/// per-thread blocks. Throws as validateNoise, BackendUnavailableError for a
/// backend not built or without a device.
NoiseRange generateNoise(const NoiseParams& params, const NoiseGrid& grid, std::span<float> out,
                         const Execution& execution,
                         NoiseEvaluation evaluation = NoiseEvaluation::kOptimized);

/// The part [begin, end) along `axis` (0..3) of the grid — a slab of z-planes
/// of a volume (axis 2), a band of rows of a 2D field (axis 1): fills out
/// (its size: grid.points() / size[axis] · (end − begin), in the grid's
/// order) with exactly the values generateNoise writes at those indices
/// (coordinates and tile periods are the whole grid's), and returns their
/// min/max. For splitting a grid over MPI ranks (procgen/distributed.hpp).
/// Throws as generateNoise; Error (kUsage) for an empty or out-of-range slab.
NoiseRange generateNoiseSlab(const NoiseParams& params, const NoiseGrid& grid, int axis, uint64_t begin,
                             uint64_t end, std::span<float> out, const Execution& execution,
                             NoiseEvaluation evaluation = NoiseEvaluation::kOptimized);

/// One value at `point` (dims coordinates, plus time from params), scaled by
/// frequency like grid points. With `gradient` non-null (Perlin and simplex,
/// fractal sums included), writes d value / d point (unscaled coordinates, so
/// it includes the frequency factor) for the first dims coordinates.
/// Throws Error (kUsage) for types without an analytic gradient.
float noiseAt(const NoiseParams& params, std::span<const double> point,
              std::span<float> gradient = {});

std::string_view noiseTypeName(NoiseType type);
std::optional<NoiseType> parseNoiseType(std::string_view name);
std::optional<FractalType> parseFractalType(std::string_view name);
std::optional<CellularDistance> parseCellularDistance(std::string_view name);
std::optional<CellularReturn> parseCellularReturn(std::string_view name);

}  // namespace procgen
