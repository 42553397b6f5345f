// The stages of procgen noise (include/procgen/noise.hpp) and the setup they
// share. generateNoise (noise.cpp) validates, builds one NoiseSetup and
// dispatches to a grid stage of the chosen backend and evaluation:
//
//   stage               serial                 cpu (oneTBB)          opencl
//   naive grid          serial/naive_grid.cpp  cpu/naive_grid.cpp    opencl/naive_grid.{cl,cpp}
//   optimized grid      serial/optimized_grid  cpu/optimized_grid    opencl/optimized_grid.{cl,cpp}
//
// Every stage fills out[0 .. points) in the documented order (x fastest, then
// y, z, w) and returns the min/max of what it wrote. The per-point math is
// src/noise/fractal.h (C subset, shared with the kernels).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "noise/fractal.h"
#include "procgen/noise.hpp"

namespace procgen::detail {

static_assert(PG_NOISE_MAX_OCTAVES == kMaxOctaves);

/// Everything a grid stage needs, derived once from NoiseParams and NoiseGrid.
/// Lattice axes are the spatial axes followed by time (when params.time is
/// set); `size`, `origin` and `step` describe the grid along them (the time
/// axis has one sample at origin = time).
struct NoiseSetup {
  PgNoiseConfig cfg{};                  ///< the per-point config (fractal.h)
  int lattice_dims = 0;                 ///< cfg.dims: spatial dims + time
  int table_octaves = 0;                ///< octaves whose coordinates a point needs
  /// lattice units per field unit, per octave and lattice axis, in double
  /// (cfg.scale holds the same in float for warp displacements)
  std::array<std::array<double, 4>, kMaxOctaves> scale{};
  std::array<uint64_t, 4> size{1, 1, 1, 1};
  std::array<double, 4> origin{0, 0, 0, 0};
  double step = 1.0;
  /// Index of the first point along each axis: a slab of a larger grid
  /// (generateNoiseSlab) keeps that grid's coordinates.
  std::array<uint64_t, 4> first{0, 0, 0, 0};

  uint64_t points() const { return size[0] * size[1] * size[2] * size[3]; }
  /// Rows of size[0] points: y, z, w combined.
  uint64_t rows() const { return size[1] * size[2] * size[3]; }
  /// The field coordinate of grid index `index` along lattice axis `axis`.
  double fieldCoordinate(int axis, uint64_t index) const {
    return origin[axis] + step * static_cast<double>(first[axis] + index);
  }
};

/// Builds the setup of a validated call. With `grid` null (noiseAt) the
/// lattice is not tiled and size/origin are unused.
NoiseSetup makeNoiseSetup(const NoiseParams& params, const NoiseGrid* grid);

/// Splits field coordinate `field` along lattice axis `axis` at `octave` into
/// a lattice cell and a fraction in [0, 1), in double, before any float
/// arithmetic (docs/noise.md, "Precision"); cells of tiled axes are wrapped.
void splitLatticeCoordinate(const NoiseSetup& setup, int octave, int axis, double field, uint32_t& cell,
                            float& frac);

/// The split coordinates of one point (field coordinates per lattice axis) at
/// every octave, in the layout of pgNoiseSample: cells[o*4 + d], fracs[o*4 + d].
void splitPoint(const NoiseSetup& setup, const double* field, uint32_t* cells, float* fracs);

/// Per-axis lattice tables of a grid (for kernels, which have no double):
/// entry o·total + base[d] + i holds the split coordinate of grid index i
/// along lattice axis d at octave o, computed by splitLatticeCoordinate
/// exactly as the serial stages compute it per point.
struct LatticeTables {
  std::vector<uint32_t> cells;
  std::vector<float> fracs;
  std::array<uint32_t, 4> base{};
  uint32_t total = 0;  ///< Σ size[d] over the lattice axes
};
LatticeTables makeLatticeTables(const NoiseSetup& setup);

/// min/max of a range of values (the combine of the grid stages).
inline NoiseRange combineRanges(NoiseRange a, NoiseRange b) {
  return {a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max};
}
/// The identity of combineRanges.
NoiseRange emptyRange();

/// Naive rows [row_begin, row_end) of the grid (a row is size[0] points along
/// x): every point on its own, no caching. out is the whole grid. Shared by the
/// serial and cpu naive stages so they are bit-identical.
NoiseRange naiveRows(const NoiseSetup& setup, uint64_t row_begin, uint64_t row_end, std::span<float> out);

// ---- stages -----------------------------------------------------------------
NoiseRange serialNaiveGrid(const NoiseSetup& setup, std::span<float> out);
NoiseRange cpuNaiveGrid(const NoiseSetup& setup, std::span<float> out, int threads);
NoiseRange openclNaiveGrid(const NoiseSetup& setup, std::span<float> out, int device);

/// The optimized grids. serial/cpu: noise-fast's blocked, cached, separable
/// evaluation (until it lands, the naive rows: serial/optimized_grid.cpp and
/// cpu/optimized_grid.cpp are placeholders it replaces).
NoiseRange serialOptimizedGrid(const NoiseSetup& setup, std::span<float> out);
NoiseRange cpuOptimizedGrid(const NoiseSetup& setup, std::span<float> out, int threads);
/// The opencl optimized grid: cooperative gradient caching in local memory
/// (Perlin, no warp, 2D/3D lattices; the naive kernel otherwise).
NoiseRange openclOptimizedGrid(const NoiseSetup& setup, std::span<float> out, int device);

}  // namespace procgen::detail
