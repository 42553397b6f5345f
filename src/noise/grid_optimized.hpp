// The optimized grid of procgen noise, shared by the serial and cpu stages
// (serial/optimized_grid.cpp runs its blocks in order, cpu/optimized_grid.cpp
// spreads them over the CpuExecutor; the arithmetic of a point does not depend
// on the block it falls in, so the two are bit-identical at every thread
// count).
//
// Paper (shared/seeds/001_191daa7b81372e37.txt) §4.2 and §4.3, done by one
// core instead of a work-group: the per-axis parts of a point (cell, fraction,
// fade weight) are computed once per column / row / slice and octave; the
// hash chain of a lattice corner, which runs x → y → z → w (hash.h), is cut
// after its second-to-last link and that prefix is cached per block (a block
// fixes every axis but x and the last) and reused by every row of the block;
// and where a lattice cell holds several points of a row the cell's eight
// gradients are turned once into the four coefficients of the row's value
// inside the cell, A + B·f + C·u + D·u·f (f the fraction along x, u its fade),
// so each point costs three fused multiply-adds. SIMD across x with GCC vector
// extensions, compiled for AVX-512, AVX2 and the baseline and picked at run
// time (docs/noise.md, "The grid path").
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "noise/noise_stages.hpp"

namespace procgen::detail {

class OptimizedGrid {
 public:
  /// True when the grid path handles this setup (Perlin and value noise
  /// without domain warp, every fractal, dimension and tile setting); the
  /// stages fall back to the naive rows otherwise.
  static bool handles(const NoiseSetup& setup);

  /// Precomputes the per-axis tables of every octave. `setup` must outlive this.
  explicit OptimizedGrid(const NoiseSetup& setup);

  /// Lays out the blocks but leaves the tables to buildTable(job) for every
  /// job in [0, tableJobs()) — independent jobs (one octave and axis each),
  /// any thread, any order, all done before the first runBlock. The cpu stage
  /// builds them while its workers wake up.
  enum TablesLater { kTablesLater };
  OptimizedGrid(const NoiseSetup& setup, TablesLater);
  uint64_t tableJobs() const { return table_jobs_; }
  void buildTable(uint64_t job);

  /// Blocks to run (each a few rows sharing the cached hash prefixes).
  uint64_t blockCount() const { return block_count_; }

  /// Writes the points of block `b` into out (the whole grid) and returns their
  /// min/max. Thread-safe for distinct blocks.
  NoiseRange runBlock(uint64_t b, std::span<float> out) const;

  /// One lattice axis at one octave: per grid index the cell, the next cell
  /// (wrapped when tiled), the fraction and its fade weight. Along x also the
  /// cell's ordinal (unwrapped, relative to index 0) and the distinct cells.
  struct AxisTable {
    std::vector<uint32_t> c0, c1;
    std::vector<float> f, u;
    std::vector<int32_t> ord;            // x only
    std::vector<uint32_t> cell0, cell1;  // x only: cells by ordinal (padded)
    size_t cell_count = 0;               // x only: distinct cells
    bool coefficients = false;           // x only: several points per cell
  };

  const NoiseSetup& setup() const { return setup_; }
  const AxisTable& table(int octave, int axis) const { return tables_[octave * 4 + axis]; }
  uint64_t paddedWidth() const { return padded_; }
  uint64_t rowsPerBlock() const { return rows_per_block_; }

 private:
  const NoiseSetup& setup_;
  std::vector<AxisTable> tables_;
  uint64_t padded_ = 0;
  uint64_t prefix_count_ = 1;  // blocks along the middle axes (all but x and the last)
  uint64_t rows_per_block_ = 1;
  uint64_t block_count_ = 0;
  uint64_t table_jobs_ = 0;
};

/// Test hook: the instruction set the optimized grid uses — 0 the best this
/// CPU has, 1 baseline (4 lanes), 2 AVX2 (8 lanes), 3 AVX-512 (16 lanes); a
/// set the CPU lacks falls back to the best it has. Returns the one in use.
int setOptimizedGridIsaForTesting(int isa);

}  // namespace procgen::detail
