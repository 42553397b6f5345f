// The chaos game of one render, cut into work units, shared by the serial and
// cpu iteration stages (src/flame/serial/iterate.cpp, src/flame/cpu/iterate.cpp).
//
// flam3 semantics (flam3.c flam3_iterate, rect.c iter_thread, variations.c
// apply_xform; shared/reference/flam3/FLAM3_SPEC.md "Iteration semantics"):
// start points uniform in [−1,1]² with a uniform colour, `fuse` iterations not
// plotted (15; 100 with earlyclip), the xform drawn from the 16384-grain
// selection row (the previous xform's row under xaos), a bad value replaced by
// a uniform point and retried up to 5 times in a row (the 5th replacement is
// kept), the final xform applied to the plotted copy only (with probability =
// its opacity — a 16-bit draw in the presorted batches; a bad final result
// plots a uniform point, as flam3 does), the
// rotation about the centre, the histogram's +y down, the plotted weight of
// the xform that made the point (flam3's adjust_percentage(opacity) of
// PgFlameXform::opacity).
//
// Two ways to run a unit (FlameMethod):
//  - kNaive: one orbit of flam3's sub-batch size, a random xform per step —
//    the paper's divergent baseline and the reference;
//  - kPresorted: the paper's divergence-free method (shared/seeds/003_*.txt
//    §2–3) on the CPU. A population of kPopulation points; each iteration the
//    slots are assigned xforms in proportion to the weights — slot j takes
//    the xform of selection entry (offset + j·128), a stratified sample of
//    flam3's 16384-entry row (a fresh random offset each iteration), so the
//    slots of one xform are one contiguous run — and the points are moved to
//    the slots through a random permutation (a fixed set of kPermutations
//    precomputed per render from the seed, as the paper's §3.4). Each run is
//    one batch applying ONE xform: no per-point choice, no branch
//    mispredictions, independent points the out-of-order core overlaps, and
//    for xforms made of linear and spherical terms a loop the compiler
//    vectorises; other xforms whose terms draw no random numbers apply one
//    term at a time to the whole batch (a loop per variation with the
//    variation's code inlined: no per-point dispatch, and vectorised where
//    the variation's functions allow), the same operations in the same
//    order as pgFlameApplyXform, so the same bits. With xaos each point
//    draws its next xform from its row and the points are grouped by xform
//    (a counting sort) instead.
//
// Output: plotted points as PlotRecords (histogram cell, colour, xform), in
// generation order. Accumulating records into a bucket in generation order
// (unit by unit, each unit's records in order) gives bit-identical
// histograms however the units are spread over threads: the serial stage
// accumulates them as they come; the cpu stage sorts each unit's records by
// histogram band and adds each band's records unit by unit.
//
// Random numbers: Philox stream `unit` of the seed for everything a unit
// draws; the permutation set from streams kPermutationStream + k.
#pragma once

#include <cstdint>
#include <vector>

#include "flame/chaos_program.hpp"
#include "procgen/flame_render.hpp"

namespace procgen::flame {

/// Test hook: false makes every batch use the per-point pgFlameApplyXform
/// (the vectorised linear/spherical kernels must give the same bits).
void setFlameBatchKernelsForTesting(bool enabled);

/// Test hook: the instruction set of the term-major loops (0 plain x86-64,
/// 1 AVX2, 2 AVX-512; the default is the widest this CPU runs; a wider one
/// than the CPU runs throws). Every variant must give the same bits.
int flameVectorIsaForTesting();
void setFlameVectorIsaForTesting(int isa);

/// One plotted point: its histogram cell, its colour as a 16-bit fixed-point
/// palette coordinate (the high byte is flam3's step index, the low byte the
/// linear mode's fraction), and the xform whose plotted weight it carries.
struct PlotRecord {
  uint32_t cell;
  uint16_t colour;
  uint16_t xform;
};
static_assert(sizeof(PlotRecord) == 8);

inline constexpr int kFuse = 15;                      // rect.c FUSE_27
inline constexpr int kFuseEarlyclip = 100;            // rect.c FUSE_28
inline constexpr int kBadValueRetries = 5;            // flam3_iterate: the 5th bad value in a row is kept
inline constexpr uint64_t kNaiveUnitSamples = 10000;  // flam3's sub_batch_size: one orbit per unit
// A presorted unit follows kPopulation orbits for kPresortedIterations
// plotted steps each: orbits about as long as flam3's (10000 samples per
// start point), because the first steps after the fuse still carry the
// transient from the random start — units of 1024 orbits × 256 steps came out
// ~8% brighter than flam3 on a flower/super_shape genome (so did naive orbits
// cut to 256 samples). Batches are ~128/xforms points long.
inline constexpr int kPopulation = 128;
inline constexpr int kSlotStride = kSelectionGrain / kPopulation;
inline constexpr uint64_t kPresortedIterations = 8192;
inline constexpr uint64_t kSliceIterations = 256;  // presorted: records handed over every 32768 samples
inline constexpr int kPermutations = 64;
inline constexpr uint64_t kPermutationStream = uint64_t{1} << 63;
// One 32-bit draw per iteration picks the offset, the permutation and the
// subset of a partial last iteration; xaos draws two xforms per 32 bits.
static_assert(uint64_t{kSlotStride} * kPermutations * kPermutations <= (uint64_t{1} << 32));
static_assert(kPopulation % 2 == 0 && kSelectionGrain % kPopulation == 0);

/// Per-worker scratch of ChaosGame::runUnit (allocate once per worker).
struct UnitWorkspace {
  std::vector<float> ax, ay, ac, bx, by, bc, fx, fy, fc;
  std::vector<uint16_t> a_row, b_row, b_xform, next_xform, f_xform, codes;
  std::vector<uint32_t> counts, bad_slots, cells;
  std::vector<PlotRecord> records;  ///< one slice of the unit's output (sliceRecords)
};

/// Receives a unit's records, slice by slice, in generation order.
class RecordSink {
 public:
  virtual void take(const PlotRecord* records, uint64_t n) = 0;

 protected:
  ~RecordSink() = default;
};

struct UnitStats {
  uint64_t records = 0;     ///< PlotRecords written (points inside the histogram with weight > 0)
  uint64_t samples = 0;     ///< points plotted (flam3's samples: inside or not)
  uint64_t bad_values = 0;  ///< flam3's badvals
  double iterations = 0;    ///< points × steps, fuse included (retries not counted)
};

struct TermBatch;  // one batch's precalculations (chaos_game.cpp)

class ChaosGame {
 public:
  /// Precomputes the tables of one render: the histogram mapping, the
  /// plotted weights, the xform kernels, the presorted runs and permutations.
  ChaosGame(const ChaosProgram& program, const FlameHistogramLayout& layout,
            const FlameRenderOptions& options);

  uint64_t unitCount() const { return unit_count_; }
  /// Points unit `u` plots (every unit plots unitSamples except the last).
  uint64_t unitSamples(uint64_t u) const {
    return u + 1 < unit_count_ ? unit_samples_ : total_samples_ - unit_samples_ * (unit_count_ - 1);
  }
  uint64_t maxUnitSamples() const { return unit_samples_; }
  /// Most records in one slice, and most slices of one unit: a unit hands
  /// its records over every kSliceIterations presorted iterations (a
  /// naive unit at its end), so that they stay in cache.
  uint64_t sliceRecords() const { return slice_records_; }
  uint64_t maxSlices() const { return (unit_samples_ + slice_records_ - 1) / slice_records_; }
  /// Bytes of a UnitWorkspace (for the memory budget).
  uint64_t workspaceBytes() const;
  /// Bytes of the tables this object holds.
  uint64_t tableBytes() const;
  void prepareWorkspace(UnitWorkspace& ws) const;

  /// Runs unit `u`; its records go to `sink` in at most maxSlices() slices
  /// (the slices depend only on the unit, not on who runs it).
  UnitStats runUnit(uint64_t u, UnitWorkspace& ws, RecordSink& sink) const;

  /// Adds `records` to `buckets` (the whole histogram, row-major) in order,
  /// as rect.c does: colour × weight, count += 255 × weight.
  void accumulate(const PlotRecord* records, uint64_t n, FlameBucket* buckets) const;

 private:
  enum class Kernel : uint8_t { kGeneric, kNone, kLinear, kSpherical, kLinearSpherical, kTermMajor };
  struct Run {
    uint16_t xform;
    uint16_t begin, end;
  };

  UnitStats runNaive(uint64_t u, UnitWorkspace& ws, RecordSink& sink) const;
  UnitStats runPresorted(uint64_t u, UnitWorkspace& ws, RecordSink& sink) const;
  /// Applies iterated xform `xf` to points [begin, end) of (x, y, c) in place;
  /// appends the slots that gave bad values to ws.bad_slots.
  void applyBatch(int xf, float* x, float* y, float* c, uint32_t begin, uint32_t end, PgFlameRng* rng,
                  std::vector<uint32_t>& bad_slots) const;
  /// kTermMajor: the precalculations of every point, then each term over
  /// every point (an xform whose terms draw no random numbers).
  bool termMajorBatch(const PgFlameXform& xf, float* x, float* y, float* c, uint32_t n) const;
  uint16_t choose(int row, PgFlameRng* rng) const;
  /// One chaos-game step of `p` from selection row `row` with flam3's
  /// retries, `consecutive` bad values already seen; returns the xform.
  uint16_t stepWithRetries(PgFlamePoint& p, int row, int consecutive, PgFlameRng* rng, uint64_t& bad) const;
  /// The final xform on a plotted copy (flam3: a bad result becomes a uniform point).
  void applyFinal(PgFlamePoint& p, PgFlameRng* rng) const;
  /// Writes the records of points k < count that are plotted; returns how many.
  uint64_t plotPoints(const float* px, const float* py, const float* pc, const uint16_t* xf, uint32_t count,
                      UnitWorkspace& ws, PlotRecord* out) const;
  /// Plots slots of the population (all, or `slots[0..count)`).
  uint64_t plotPopulation(UnitWorkspace& ws, const uint16_t* slots, uint32_t count, PgFlameRng* rng,
                          PlotRecord* out) const;

  const ChaosProgram& program_;
  const PgFlameXform* xforms_;
  const PgFlameTerm* terms_;
  const float* params_;
  int xform_count_;
  bool has_final_;
  float final_opacity_ = 0;
  std::vector<Kernel> kernel_;
  std::vector<float> linear_weight_, spherical_weight_;
  void (*const* term_loops_)(float, const TermBatch&) = nullptr;  // per variation, for this CPU
  FlameMethod method_;
  uint64_t seed_;
  int fuse_;
  // Histogram mapping: cell x = m[0] x + m[1] y + m[2], cell y = m[3] x + m[4] y + m[5].
  float map_[6];
  float width_f_, height_f_;
  uint32_t width_, height_;
  FlamePaletteMode palette_mode_;
  uint64_t total_samples_, unit_samples_, unit_count_, slice_records_;
  std::vector<std::vector<Run>> runs_;  // presorted, no xaos: runs per offset
  std::vector<uint16_t> permutations_;  // kPermutations × kPopulation
};

}  // namespace procgen::flame
