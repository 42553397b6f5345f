// The chaos game's work units (flame/chaos_game.hpp): flam3's iteration
// (flam3.c flam3_iterate, rect.c iter_thread) as a naive orbit and as the
// paper's presorted population (shared/seeds/003_*.txt §2–3).
#include "flame/chaos_game.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "flame/flame_math.hpp"
#include "procgen/error.hpp"

namespace procgen::flame {

// One variation term over a batch: (sx, sy) += weight × variation V at each
// point's precalculations, pgFlameVariation inlined with V constant (flatten)
// so that its switch folds away. Variations that draw are never given here
// (no generator: nullptr).
struct TermBatch {
  const float *tx, *ty, *r2, *r, *atan_xy, *sina, *cosa, *atan_yx;
  const float* prm;
  const float* affine;
  float *sx, *sy;
  uint32_t n;
};

namespace {

std::atomic<bool> batch_kernels_enabled{true};

constexpr uint32_t kOutside = 0xffffffffu;  // not a cell: cells < 2^32 − 1 (iterate.cpp)

// Variation indices of the kernels written out below (flam3's order).
constexpr pg_u32 kLinearVariation = 0;
constexpr pg_u32 kSphericalVariation = 2;

bool isBad(float x, float y) {
  return !(std::fabs(x) <= PG_FLAME_BAD_VALUE_LIMIT && std::fabs(y) <= PG_FLAME_BAD_VALUE_LIMIT);
}

// One xform made of linear and/or spherical terms over a batch of points, in
// the arithmetic of flam3's apply_xform (colour blend, pre-affine, the terms
// in index order, post-affine): the same operations as pgFlameApplyXform, in
// a loop without calls or branches that the compiler vectorises. Returns
// whether any point went bad.
template <bool kLinear, bool kSpherical, bool kPost>
bool simpleBatch(const PgFlameXform& xf, float linear_weight, float spherical_weight, float* __restrict x,
                 float* __restrict y, float* __restrict c, uint32_t n) {
  const float a0 = xf.affine[0], a1 = xf.affine[1], a2 = xf.affine[2];
  const float a3 = xf.affine[3], a4 = xf.affine[4], a5 = xf.affine[5];
  const float p0 = xf.post[0], p1 = xf.post[1], p2 = xf.post[2];
  const float p3 = xf.post[3], p4 = xf.post[4], p5 = xf.post[5];
  const float colour_term = xf.color_speed * xf.color, keep = 1.0f - xf.color_speed;
  int bad = 0;
  for (uint32_t j = 0; j < n; ++j) {
    c[j] = colour_term + keep * c[j];
    const float tx = a0 * x[j] + a1 * y[j] + a2;
    const float ty = a3 * x[j] + a4 * y[j] + a5;
    float sx = 0.0f, sy = 0.0f;
    if constexpr (kLinear) {
      sx += linear_weight * tx;
      sy += linear_weight * ty;
    }
    if constexpr (kSpherical) {
      const float s = spherical_weight / ((tx * tx + ty * ty) + 1e-10f);
      sx += s * tx;
      sy += s * ty;
    }
    if constexpr (kPost) {
      const float px = p0 * sx + p1 * sy + p2;
      const float py = p3 * sx + p4 * sy + p5;
      sx = px;
      sy = py;
    }
    x[j] = sx;
    y[j] = sy;
    bad |= !(int(std::fabs(sx) <= PG_FLAME_BAD_VALUE_LIMIT) & int(std::fabs(sy) <= PG_FLAME_BAD_VALUE_LIMIT));
  }
  return bad != 0;
}

template <bool kLinear, bool kSpherical>
bool simpleBatchPost(const PgFlameXform& xf, float lw, float sw, float* x, float* y, float* c, uint32_t n) {
  return xf.has_post ? simpleBatch<kLinear, kSpherical, true>(xf, lw, sw, x, y, c, n)
                     : simpleBatch<kLinear, kSpherical, false>(xf, lw, sw, x, y, c, n);
}

template <pg_u32 V>
[[gnu::always_inline]] inline void termLoopBody(float weight, const TermBatch& b) {
  const float *__restrict tx = b.tx, *__restrict ty = b.ty, *__restrict r2 = b.r2, *__restrict r = b.r;
  const float *__restrict atan_xy = b.atan_xy, *__restrict sina = b.sina, *__restrict cosa = b.cosa;
  const float *__restrict atan_yx = b.atan_yx, *__restrict prm = b.prm, *__restrict affine = b.affine;
  float *__restrict sx = b.sx, *__restrict sy = b.sy;
  for (uint32_t j = 0; j < b.n; ++j) {
    PgFlameVarInput in;
    in.tx = tx[j];
    in.ty = ty[j];
    in.r2 = r2[j];
    in.r = r[j];
    in.atan_xy = atan_xy[j];
    in.sina = sina[j];
    in.cosa = cosa[j];
    in.atan_yx = atan_yx[j];
    const PgFlameVec2 d = pgFlameVariation(V, weight, &in, prm, affine, nullptr);
    sx[j] += d.x;
    sy[j] += d.y;
  }
}

// The same loop for plain x86-64, AVX2 and AVX-512: variations built from
// arithmetic, sqrt and flame_math.hpp's functions vectorise (no control flow:
// this file is compiled with -fno-trapping-math, and -ffp-contract=off keeps
// the AVX-512 variant free of FMA, so every variant gives the same bits —
// CMakeLists.txt); those calling libm stay scalar.
template <pg_u32 V>
[[gnu::flatten]] void termLoop(float weight, const TermBatch& b) {
  termLoopBody<V>(weight, b);
}
template <pg_u32 V>
[[gnu::flatten, gnu::target("avx2")]] void termLoopAvx2(float weight, const TermBatch& b) {
  termLoopBody<V>(weight, b);
}
template <pg_u32 V>
[[gnu::flatten, gnu::target("avx512f")]] void termLoopAvx512(float weight, const TermBatch& b) {
  termLoopBody<V>(weight, b);
}

using TermLoop = void (*)(float, const TermBatch&);
constexpr pg_u32 kVariationCount = kFlameVariationCount;
using TermLoops = std::array<TermLoop, kVariationCount>;

template <pg_u32... V>
constexpr std::array<TermLoops, 3> termLoopTables(std::integer_sequence<pg_u32, V...>) {
  return {TermLoops{&termLoop<V>...}, TermLoops{&termLoopAvx2<V>...}, TermLoops{&termLoopAvx512<V>...}};
}
constexpr std::array<TermLoops, 3> kTermLoopTables =
    termLoopTables(std::make_integer_sequence<pg_u32, kVariationCount>{});
std::atomic<int> term_loop_isa{math::bestVectorIsa()};

// flam3's palette coordinate → 16-bit fixed point: floor(c × 65536) clamped,
// so that (code >> 8) is rect.c's step index (int)(c × 256) clamped to 0..255.
uint16_t colourCode(float c) {
  float v = c * 65536.0f;
  v = v >= 0.0f ? v : 0.0f;  // NaN → 0
  v = v < 65535.0f ? v : 65535.0f;
  return static_cast<uint16_t>(static_cast<int32_t>(v));
}

}  // namespace

void setFlameBatchKernelsForTesting(bool enabled) {
  batch_kernels_enabled = enabled;
}

int flameVectorIsaForTesting() {
  return term_loop_isa;
}

void setFlameVectorIsaForTesting(int isa) {
  if (isa < 0 || isa > math::bestVectorIsa()) throw Error("flame: this CPU does not run vector variant " + std::to_string(isa));
  term_loop_isa = isa;
}

ChaosGame::ChaosGame(const ChaosProgram& program, const FlameHistogramLayout& layout,
                     const FlameRenderOptions& options)
    : program_(program),
      xforms_(program.table.xforms.data()),
      terms_(program.table.terms.data()),
      params_(program.table.params.data()),
      xform_count_(program.table.iterated_count),
      has_final_(program.table.has_final),
      method_(options.method),
      seed_(options.seed),
      fuse_(options.earlyclip ? kFuseEarlyclip : kFuse),
      palette_mode_(program.palette_mode),
      total_samples_(layout.samples) {
  term_loops_ = kTermLoopTables[static_cast<size_t>(term_loop_isa.load())].data();
  if (has_final_) final_opacity_ = xforms_[xform_count_].opacity;
  // The kernel of every xform, the final one included.
  for (size_t i = 0; i < program.table.xforms.size(); ++i) {
    const PgFlameXform& xf = xforms_[i];
    float lw = 0, sw = 0;
    Kernel k = Kernel::kGeneric;
    const PgFlameTerm* t = terms_ + xf.term_begin;
    if (!batch_kernels_enabled) {
      // every xform point by point
    } else if (xf.term_count == 0) {
      k = Kernel::kNone;
    } else if (xf.term_count == 1 && t[0].variation == kLinearVariation) {
      k = Kernel::kLinear;
      lw = t[0].weight;
    } else if (xf.term_count == 1 && t[0].variation == kSphericalVariation) {
      k = Kernel::kSpherical;
      sw = t[0].weight;
    } else if (xf.term_count == 2 && t[0].variation == kLinearVariation &&
               t[1].variation == kSphericalVariation) {
      k = Kernel::kLinearSpherical;  // in this order, as pgFlameApplyXform adds them
      lw = t[0].weight;
      sw = t[1].weight;
    } else if (!(xf.flags & PG_FLAME_HAS_PRE_BLUR)) {
      bool draws = false, known = true;
      for (pg_u32 i = 0; i < xf.term_count; ++i) {
        draws = draws || pgFlameVariationDraws(t[i].variation);
        known = known && t[i].variation < kVariationCount;
      }
      if (!draws && known) k = Kernel::kTermMajor;
    }
    kernel_.push_back(k);
    linear_weight_.push_back(lw);
    spherical_weight_.push_back(sw);
  }

  // rect.c: rotate about the centre, then (p − bounds) × (cells / world size).
  width_ = static_cast<uint32_t>(layout.width);
  height_ = static_cast<uint32_t>(layout.height);
  // The largest floats whose truncation stays inside (exact below 2^24).
  width_f_ = static_cast<float>(layout.width);
  while (static_cast<uint64_t>(width_f_) > width_) width_f_ = std::nextafter(width_f_, 0.0f);
  height_f_ = static_cast<float>(layout.height);
  while (static_cast<uint64_t>(height_f_) > height_) height_f_ = std::nextafter(height_f_, 0.0f);
  const double sx = layout.width / (layout.bounds[2] - layout.bounds[0]);
  const double sy = layout.height / (layout.bounds[3] - layout.bounds[1]);
  double cs = 1.0, sn = 0.0;
  if (layout.rotate_radians != 0.0) {
    cs = std::cos(layout.rotate_radians);
    sn = std::sin(layout.rotate_radians);
  }
  const double cx = layout.center_x, cy = layout.center_y;
  map_[0] = static_cast<float>(sx * cs);
  map_[1] = static_cast<float>(-sx * sn);
  map_[2] = static_cast<float>(sx * (cx - cx * cs + cy * sn - layout.bounds[0]));
  map_[3] = static_cast<float>(sy * sn);
  map_[4] = static_cast<float>(sy * cs);
  map_[5] = static_cast<float>(sy * (cy - cx * sn - cy * cs - layout.bounds[1]));

  unit_samples_ = method_ == FlameMethod::kNaive ? kNaiveUnitSamples : kPopulation * kPresortedIterations;
  unit_count_ = (total_samples_ + unit_samples_ - 1) / unit_samples_;
  slice_records_ = method_ == FlameMethod::kNaive ? unit_samples_ : kPopulation * kSliceIterations;

  if (method_ == FlameMethod::kPresorted) {
    if (!program.has_xaos) {
      // Slot j takes selection entry offset + j·kSlotStride; the row is
      // sorted by xform (flam3's cumulative walk), so each xform is a run.
      runs_.resize(kSlotStride);
      for (int offset = 0; offset < kSlotStride; ++offset) {
        std::vector<Run>& runs = runs_[static_cast<size_t>(offset)];
        for (int j = 0; j < kPopulation; ++j) {
          const uint16_t xf = program.selection[static_cast<size_t>(offset + j * kSlotStride)];
          if (runs.empty() || runs.back().xform != xf)
            runs.push_back({xf, static_cast<uint16_t>(j), static_cast<uint16_t>(j + 1)});
          else
            runs.back().end = static_cast<uint16_t>(j + 1);
        }
      }
    }
    // The paper's fixed set of random permutations (Fisher–Yates), from the seed.
    permutations_.resize(static_cast<size_t>(kPermutations) * kPopulation);
    for (int k = 0; k < kPermutations; ++k) {
      PgFlameRng rng;
      pgFlameRngInit(&rng, seed_, kPermutationStream + static_cast<uint64_t>(k));
      uint16_t* perm = &permutations_[static_cast<size_t>(k) * kPopulation];
      for (int j = 0; j < kPopulation; ++j) perm[j] = static_cast<uint16_t>(j);
      for (uint32_t j = kPopulation - 1; j > 0; --j) {
        const uint32_t r = static_cast<uint32_t>((uint64_t{pgFlameRandU32(&rng)} * (j + 1)) >> 32);
        std::swap(perm[j], perm[r]);
      }
    }
  }
}

uint64_t ChaosGame::workspaceBytes() const {
  const uint64_t n = kPopulation;
  return n * (9 * sizeof(float) + 6 * sizeof(uint16_t) + 2 * sizeof(uint32_t)) +
         static_cast<uint64_t>(xform_count_) * 4 + slice_records_ * sizeof(PlotRecord);
}

uint64_t ChaosGame::tableBytes() const {
  return permutations_.size() * 2 + runs_.size() * kPopulation * sizeof(Run);
}

void ChaosGame::prepareWorkspace(UnitWorkspace& ws) const {
  const size_t n = kPopulation;
  for (std::vector<float>* v : {&ws.ax, &ws.ay, &ws.ac, &ws.bx, &ws.by, &ws.bc, &ws.fx, &ws.fy, &ws.fc})
    v->resize(n);
  for (std::vector<uint16_t>* v : {&ws.a_row, &ws.b_row, &ws.b_xform, &ws.next_xform}) v->resize(n);
  ws.cells.resize(n);
  ws.codes.resize(n);
  ws.f_xform.resize(n);
  ws.counts.resize(static_cast<size_t>(xform_count_) + 1);
  ws.bad_slots.reserve(n);
  ws.records.resize(slice_records_);
}

uint16_t ChaosGame::choose(int row, PgFlameRng* rng) const {
  return program_
      .selection[static_cast<size_t>(row) * kSelectionGrain + (pgFlameRandU32(rng) & (kSelectionGrain - 1))];
}

uint16_t ChaosGame::stepWithRetries(PgFlamePoint& p, int row, int consecutive, PgFlameRng* rng,
                                    uint64_t& bad) const {
  for (;;) {
    const uint16_t fn = choose(row, rng);
    PgFlamePoint q = p;
    if (pgFlameApplyXform(&xforms_[fn], terms_, params_, &q, rng)) {
      p = q;
      return fn;
    }
    // apply_xform: a bad value becomes a uniform point (colour as blended).
    ++bad;
    q.x = pgFlameRand11(rng);
    q.y = pgFlameRand11(rng);
    p = q;
    if (++consecutive >= kBadValueRetries) return fn;
  }
}

void ChaosGame::applyFinal(PgFlamePoint& p, PgFlameRng* rng) const {
  if (final_opacity_ != 1.0f && !(pgFlameRand01(rng) < final_opacity_)) return;
  if (!pgFlameApplyXform(&xforms_[xform_count_], terms_, params_, &p, rng)) {
    p.x = pgFlameRand11(rng);
    p.y = pgFlameRand11(rng);
  }
}

uint64_t ChaosGame::plotPoints(const float* px, const float* py, const float* pc, const uint16_t* xf,
                               uint32_t count, UnitWorkspace& ws, PlotRecord* out) const {
  // Locals, so that the stores do not make the compiler reload them.
  const float m0 = map_[0], m1 = map_[1], m2 = map_[2], m3 = map_[3], m4 = map_[4], m5 = map_[5];
  const float width_f = width_f_, height_f = height_f_;
  const uint32_t width = width_;
  const float* weight = program_.plot_weights.data();
  uint32_t* __restrict cells = ws.cells.data();
  uint16_t* __restrict codes = ws.codes.data();
  // Pass 1, vectorised: the cell of each point (rect.c: rotation about the
  // centre, then (p − bounds) × cells per unit), kOutside when it falls
  // outside the histogram.
  for (uint32_t k = 0; k < count; ++k) {
    const float fx = m0 * px[k] + m1 * py[k] + m2;
    const float fy = m3 * px[k] + m4 * py[k] + m5;
    const bool inside = (fx >= 0.0f) & (fx < width_f) & (fy >= 0.0f) & (fy < height_f);
    const int32_t ix = static_cast<int32_t>(inside ? fx : 0.0f),
                  iy = static_cast<int32_t>(inside ? fy : 0.0f);
    const uint32_t cell = static_cast<uint32_t>(iy) * width + static_cast<uint32_t>(ix);
    cells[k] = inside ? cell : kOutside;
    codes[k] = colourCode(pc[k]);
  }
  // Pass 2: keep the points inside with a non-zero weight (rect.c: "Skip if
  // invisible"), branch-free.
  uint64_t written = 0;
  for (uint32_t k = 0; k < count; ++k) {
    // One 8-byte store (the struct's layout, little-endian x86 or not).
    const PlotRecord r{cells[k], codes[k], xf[k]};
    uint64_t bits;
    std::memcpy(&bits, &r, sizeof bits);
    std::memcpy(out + written, &bits, sizeof bits);
    written += (cells[k] != kOutside) & (weight[xf[k]] != 0.0f);
  }
  return written;
}

UnitStats ChaosGame::runUnit(uint64_t u, UnitWorkspace& ws, RecordSink& sink) const {
  return method_ == FlameMethod::kNaive ? runNaive(u, ws, sink) : runPresorted(u, ws, sink);
}

UnitStats ChaosGame::runNaive(uint64_t u, UnitWorkspace& ws, RecordSink& sink) const {
  PgFlameRng rng;
  pgFlameRngInit(&rng, seed_, u);
  UnitStats stats;
  const uint64_t n = unitSamples(u);
  PgFlamePoint p;
  p.x = pgFlameRand11(&rng);
  p.y = pgFlameRand11(&rng);
  p.color = pgFlameRand01(&rng);
  int row = 0;
  PlotRecord* out = ws.records.data();
  uint64_t written = 0;
  for (int i = 0; i < fuse_; ++i) {
    const uint16_t fn = stepWithRetries(p, row, 0, &rng, stats.bad_values);
    if (program_.has_xaos) row = fn + 1;
  }
  for (uint64_t i = 0; i < n; ++i) {
    uint16_t fn = stepWithRetries(p, row, 0, &rng, stats.bad_values);
    if (program_.has_xaos) row = fn + 1;
    if (program_.plot_weights[fn] == 0.0f) continue;
    PgFlamePoint q = p;
    if (has_final_) applyFinal(q, &rng);
    written += plotPoints(&q.x, &q.y, &q.color, &fn, 1, ws, out + written);
  }
  sink.take(out, written);
  stats.records = written;
  stats.samples = n;
  stats.iterations = static_cast<double>(n + static_cast<uint64_t>(fuse_));
  return stats;
}

void ChaosGame::applyBatch(int xf, float* x, float* y, float* c, uint32_t begin, uint32_t end,
                           PgFlameRng* rng, std::vector<uint32_t>& bad_slots) const {
  const PgFlameXform& xform = xforms_[xf];
  const float lw = linear_weight_[static_cast<size_t>(xf)], sw = spherical_weight_[static_cast<size_t>(xf)];
  const uint32_t n = end - begin;
  x += begin;
  y += begin;
  c += begin;
  bool any_bad = false;
  switch (kernel_[static_cast<size_t>(xf)]) {
    case Kernel::kNone:
      any_bad = simpleBatchPost<false, false>(xform, lw, sw, x, y, c, n);
      break;
    case Kernel::kLinear:
      any_bad = simpleBatchPost<true, false>(xform, lw, sw, x, y, c, n);
      break;
    case Kernel::kSpherical:
      any_bad = simpleBatchPost<false, true>(xform, lw, sw, x, y, c, n);
      break;
    case Kernel::kLinearSpherical:
      any_bad = simpleBatchPost<true, true>(xform, lw, sw, x, y, c, n);
      break;
    case Kernel::kTermMajor:
      any_bad = termMajorBatch(xform, x, y, c, n);
      break;
    case Kernel::kGeneric:
      for (uint32_t j = 0; j < n; ++j) {
        PgFlamePoint p{x[j], y[j], c[j]};
        if (!pgFlameApplyXform(&xform, terms_, params_, &p, rng)) bad_slots.push_back(begin + j);
        x[j] = p.x;
        y[j] = p.y;
        c[j] = p.color;
      }
      return;
  }
  if (any_bad)
    for (uint32_t j = 0; j < n; ++j)
      if (isBad(x[j], y[j])) bad_slots.push_back(begin + j);
}

bool ChaosGame::termMajorBatch(const PgFlameXform& xf, float* x, float* y, float* c, uint32_t n) const {
  // pgFlameApplyXform's steps, each over the batch (n ≤ kPopulation). The
  // loops run over n rounded up to a whole number of 16-float vectors, the
  // padding lanes at the point (0.5, 0.5) (finite for every variation), so
  // that no scalar remainder loop follows the vector one — batches are
  // ~128/xforms points; padding cut trig.flam3's serial time by 15%. The
  // padding's results are dropped.
  constexpr uint32_t kLanes = 16;
  static_assert(kPopulation % kLanes == 0);
  const uint32_t m = (n + kLanes - 1) / kLanes * kLanes;
  alignas(64) float tx[kPopulation], ty[kPopulation], r2[kPopulation], r[kPopulation], atan_xy[kPopulation];
  alignas(64) float sina[kPopulation], cosa[kPopulation], atan_yx[kPopulation], sx[kPopulation], sy[kPopulation];
  const float a0 = xf.affine[0], a1 = xf.affine[1], a2 = xf.affine[2];
  const float a3 = xf.affine[3], a4 = xf.affine[4], a5 = xf.affine[5];
  const float colour_term = xf.color_speed * xf.color, keep = 1.0f - xf.color_speed;
  const pg_u32 flags = xf.flags;
  for (uint32_t j = 0; j < n; ++j) {
    c[j] = colour_term + keep * c[j];
    tx[j] = a0 * x[j] + a1 * y[j] + a2;
    ty[j] = a3 * x[j] + a4 * y[j] + a5;
  }
  std::fill(tx + n, tx + m, 0.5f);
  std::fill(ty + n, ty + m, 0.5f);
  for (uint32_t j = 0; j < m; ++j) {
    r2[j] = tx[j] * tx[j] + ty[j] * ty[j];
    sx[j] = 0.0f;
    sy[j] = 0.0f;
  }
  const bool need_r = flags & (PG_FLAME_NEEDS_R | PG_FLAME_NEEDS_ANGLES);
  for (uint32_t j = 0; j < m; ++j) r[j] = need_r ? PG_SQRT(r2[j]) : 0.0f;
  if (flags & PG_FLAME_NEEDS_ATAN_XY) {
    math::atan2Batch(tx, ty, atan_xy, m);  // the bits of PG_FLAME_ATAN2, vectorised
  } else {
    std::fill(atan_xy, atan_xy + m, 0.0f);
  }
  if (flags & PG_FLAME_NEEDS_ANGLES) {
    for (uint32_t j = 0; j < m; ++j) {
      sina[j] = tx[j] / r[j];
      cosa[j] = ty[j] / r[j];
    }
  } else {
    std::fill(sina, sina + m, 0.0f);
    std::fill(cosa, cosa + m, 0.0f);
  }
  if (flags & PG_FLAME_NEEDS_ATAN_YX) {
    math::atan2Batch(ty, tx, atan_yx, m);
  } else {
    std::fill(atan_yx, atan_yx + m, 0.0f);
  }
  const TermBatch batch{tx, ty, r2, r, atan_xy, sina, cosa, atan_yx, params_ + xf.param_begin, xf.affine, sx, sy, m};
  for (pg_u32 i = 0; i < xf.term_count; ++i) {
    const PgFlameTerm t = terms_[xf.term_begin + i];
    term_loops_[t.variation](t.weight, batch);
  }
  const float p0 = xf.post[0], p1 = xf.post[1], p2 = xf.post[2];
  const float p3 = xf.post[3], p4 = xf.post[4], p5 = xf.post[5];
  const bool post = xf.has_post;
  int bad = 0;
  for (uint32_t j = 0; j < n; ++j) {
    float px = sx[j], py = sy[j];
    if (post) {
      px = p0 * sx[j] + p1 * sy[j] + p2;
      py = p3 * sx[j] + p4 * sy[j] + p5;
    }
    x[j] = px;
    y[j] = py;
    bad |= !(int(std::fabs(px) <= PG_FLAME_BAD_VALUE_LIMIT) & int(std::fabs(py) <= PG_FLAME_BAD_VALUE_LIMIT));
  }
  return bad != 0;
}

uint64_t ChaosGame::plotPopulation(UnitWorkspace& ws, const uint16_t* slots, uint32_t count, PgFlameRng* rng,
                                   PlotRecord* out) const {
  // The points to plot, contiguous in (fx, fy, fc, f_xform) — a copy, as the
  // final xform applies to the plotted point only and the orbit goes on from
  // the iterated one.
  float* px = ws.fx.data();
  float* py = ws.fy.data();
  float* pc = ws.fc.data();
  const uint16_t* xf = ws.b_xform.data();
  if (slots) {
    for (uint32_t k = 0; k < count; ++k) {
      px[k] = ws.bx[slots[k]];
      py[k] = ws.by[slots[k]];
      pc[k] = ws.bc[slots[k]];
      ws.f_xform[k] = ws.b_xform[slots[k]];
    }
    xf = ws.f_xform.data();
  } else if (has_final_) {
    std::copy(ws.bx.begin(), ws.bx.begin() + count, px);
    std::copy(ws.by.begin(), ws.by.begin() + count, py);
    std::copy(ws.bc.begin(), ws.bc.begin() + count, pc);
  } else {
    return plotPoints(ws.bx.data(), ws.by.data(), ws.bc.data(), xf, count, ws, out);
  }
  if (has_final_) {
    // One batch over every point; flam3 applies the final xform with
    // probability = its opacity, so a point keeps the result when its draw
    // falls below the opacity, and a kept bad result becomes a uniform point.
    ws.bad_slots.clear();
    applyBatch(xform_count_, px, py, pc, 0, count, rng, ws.bad_slots);
    if (final_opacity_ == 1.0f) {
      for (uint32_t j : ws.bad_slots) {
        px[j] = pgFlameRand11(rng);
        py[j] = pgFlameRand11(rng);
      }
    } else {
      const uint32_t* bad = ws.bad_slots.data();
      const uint32_t* bad_end = bad + ws.bad_slots.size();
      const float* iterated_x = ws.bx.data();
      const float* iterated_y = ws.by.data();
      const float* iterated_c = ws.bc.data();
      // 16-bit draws, two per random number: applied with probability
      // ceil(opacity · 2^16) / 2^16 (flam3: a 28-bit draw below the opacity).
      const uint32_t threshold =
          static_cast<uint32_t>(std::ceil(static_cast<double>(final_opacity_) * 65536.0));
      uint32_t bits = 0;
      for (uint32_t k = 0; k < count; ++k) {
        const bool was_bad = bad != bad_end && *bad == k;
        bad += was_bad;
        if ((k & 1) == 0) bits = pgFlameRandU32(rng);
        // Branch-free choice (the draw is random: a branch would mispredict).
        const bool applied = ((bits >> (16 * (k & 1))) & 0xffff) < threshold;
        const uint32_t j = slots ? slots[k] : k;  // not applied: the iterated point
        px[k] = applied ? px[k] : iterated_x[j];
        py[k] = applied ? py[k] : iterated_y[j];
        pc[k] = applied ? pc[k] : iterated_c[j];
        if (applied && was_bad) {
          px[k] = pgFlameRand11(rng);
          py[k] = pgFlameRand11(rng);
        }
      }
    }
  }
  return plotPoints(px, py, pc, xf, count, ws, out);
}

UnitStats ChaosGame::runPresorted(uint64_t u, UnitWorkspace& ws, RecordSink& sink) const {
  PgFlameRng rng;
  pgFlameRngInit(&rng, seed_, u);
  UnitStats stats;
  const uint64_t n = unitSamples(u);
  constexpr uint32_t kN = kPopulation;
  const uint64_t plotted_iterations = (n + kN - 1) / kN;
  const uint32_t last_count = static_cast<uint32_t>(n - (plotted_iterations - 1) * kN);
  const uint64_t total_iterations = static_cast<uint64_t>(fuse_) + plotted_iterations;

  float *ax = ws.ax.data(), *ay = ws.ay.data(), *ac = ws.ac.data();
  float *bx = ws.bx.data(), *by = ws.by.data(), *bc = ws.bc.data();
  for (uint32_t j = 0; j < kN; ++j) {
    ax[j] = pgFlameRand11(&rng);
    ay[j] = pgFlameRand11(&rng);
    ac[j] = pgFlameRand01(&rng);
  }
  std::fill(ws.a_row.begin(), ws.a_row.end(), uint16_t{0});
  const bool xaos = program_.has_xaos;
  PlotRecord* out = ws.records.data();
  uint64_t written = 0, slice_written = 0;

  for (uint64_t t = 0; t < total_iterations; ++t) {
    ws.bad_slots.clear();
    const uint32_t r = pgFlameRandU32(&rng);
    if (!xaos) {
      // The paper's step: a random permutation moves the points to the slots,
      // each run of slots applies its one xform.
      const uint16_t* perm = &permutations_[static_cast<size_t>(r / kSlotStride % kPermutations) * kN];
      for (uint32_t j = 0; j < kN; ++j) {
        const uint32_t s = perm[j];
        bx[j] = ax[s];
        by[j] = ay[s];
        bc[j] = ac[s];
      }
      for (const Run& run : runs_[r % kSlotStride]) {
        applyBatch(run.xform, bx, by, bc, run.begin, run.end, &rng, ws.bad_slots);
        std::fill(ws.b_xform.begin() + run.begin, ws.b_xform.begin() + run.end, run.xform);
      }
    } else {
      // xaos: each point draws its next xform from its previous xform's row,
      // then the points are grouped by xform (a counting sort) and each group
      // is one batch.
      uint32_t* counts = ws.counts.data();
      std::fill(ws.counts.begin(), ws.counts.end(), 0u);
      uint16_t* next = ws.next_xform.data();
      const uint16_t* rows = ws.a_row.data();
      for (uint32_t j = 0; j < kN; j += 2) {
        const uint32_t bits = pgFlameRandU32(&rng);
        next[j] = program_.selection[size_t{rows[j]} * kSelectionGrain + (bits & (kSelectionGrain - 1))];
        next[j + 1] =
            program_
                .selection[size_t{rows[j + 1]} * kSelectionGrain + ((bits >> 16) & (kSelectionGrain - 1))];
        ++counts[next[j]];
        ++counts[next[j + 1]];
      }
      uint32_t start = 0;
      for (int i = 0; i < xform_count_; ++i) {
        const uint32_t c = counts[i];
        counts[i] = start;
        start += c;
      }
      for (uint32_t j = 0; j < kN; ++j) {
        const uint32_t s = counts[next[j]]++;
        bx[s] = ax[j];
        by[s] = ay[j];
        bc[s] = ac[j];
        ws.b_row[s] = rows[j];
        ws.b_xform[s] = next[j];
      }
      uint32_t begin = 0;
      for (int i = 0; i < xform_count_; ++i) {
        const uint32_t end = counts[i];
        if (end > begin) applyBatch(i, bx, by, bc, begin, end, &rng, ws.bad_slots);
        begin = end;
      }
    }
    // Bad values: flam3's retries, point by point (the batch's try was the first).
    for (uint32_t j : ws.bad_slots) {
      ++stats.bad_values;
      PgFlamePoint p{pgFlameRand11(&rng), pgFlameRand11(&rng), bc[j]};
      const int row = xaos ? ws.b_row[j] : 0;
      ws.b_xform[j] = stepWithRetries(p, row, 1, &rng, stats.bad_values);
      bx[j] = p.x;
      by[j] = p.y;
      bc[j] = p.color;
    }
    if (xaos)
      for (uint32_t j = 0; j < kN; ++j) ws.b_row[j] = static_cast<uint16_t>(ws.b_xform[j] + 1);

    if (t >= static_cast<uint64_t>(fuse_)) {
      if (t + 1 < total_iterations || last_count == kN) {
        slice_written += plotPopulation(ws, nullptr, kN, &rng, out + slice_written);
      } else {
        // A partial last iteration plots a random subset of the slots (the
        // first slots would all belong to the first xform).
        const uint16_t* subset =
            &permutations_[static_cast<size_t>(r / (kSlotStride * kPermutations) % kPermutations) * kN];
        slice_written += plotPopulation(ws, subset, last_count, &rng, out + slice_written);
      }
      const uint64_t plotted = t + 1 - static_cast<uint64_t>(fuse_);
      if (plotted % kSliceIterations == 0 || t + 1 == total_iterations) {
        sink.take(out, slice_written);
        written += slice_written;
        slice_written = 0;
      }
    }
    std::swap(ax, bx);
    std::swap(ay, by);
    std::swap(ac, bc);
    ws.ax.swap(ws.bx);
    ws.ay.swap(ws.by);
    ws.ac.swap(ws.bc);
    ws.a_row.swap(ws.b_row);
  }
  stats.records = written;
  stats.samples = n;
  stats.iterations = static_cast<double>(total_iterations) * kN;
  return stats;
}

namespace {

// bucket (r, g, b, a) += w × colour; count += w × 255 — four lanes at once
// where SSE is there (the same IEEE products and sums as the scalar lanes).
// Records ahead of the one being added whose bucket is fetched meanwhile.
constexpr uint64_t kPrefetchAhead = 64;

inline void addToBucket(FlameBucket& bucket, float w, const float* colour) {
#if defined(__SSE2__)
  const __m128 sum = _mm_add_ps(_mm_loadu_ps(&bucket.red), _mm_mul_ps(_mm_set1_ps(w), _mm_loadu_ps(colour)));
  _mm_storeu_ps(&bucket.red, sum);
#else
  bucket.red += w * colour[0];
  bucket.green += w * colour[1];
  bucket.blue += w * colour[2];
  bucket.alpha += w * colour[3];
#endif
  bucket.count += w * 255.0f;
}

}  // namespace

void ChaosGame::accumulate(const PlotRecord* records, uint64_t n, FlameBucket* buckets) const {
  static_assert(offsetof(FlameBucket, alpha) == offsetof(FlameBucket, red) + 3 * sizeof(float));
  const float* palette = program_.palette.data();
  const float* weight = program_.plot_weights.data();
  if (palette_mode_ == FlamePaletteMode::kStep) {
    for (uint64_t k = 0; k < n; ++k) {
      if (k + kPrefetchAhead < n) __builtin_prefetch(&buckets[records[k + kPrefetchAhead].cell], 1);
      const PlotRecord r = records[k];
      addToBucket(buckets[r.cell], weight[r.xform], palette + (r.colour >> 8) * 4);
    }
  } else {
    // rect.c linear mode: interpolate entries i and i + 1 (i ≤ 254; at the top, entry 255).
    for (uint64_t k = 0; k < n; ++k) {
      if (k + kPrefetchAhead < n) __builtin_prefetch(&buckets[records[k + kPrefetchAhead].cell], 1);
      const PlotRecord r = records[k];
      uint32_t i = r.colour >> 8;
      float frac = static_cast<float>(r.colour & 255) * (1.0f / 256.0f);
      if (i >= 255) {
        i = 254;
        frac = 1.0f;
      }
      const float* lo = palette + i * 4;
      const float* hi = lo + 4;
      const float keep = 1.0f - frac;
      float colour[4];
      for (int ch = 0; ch < 4; ++ch) colour[ch] = lo[ch] * keep + hi[ch] * frac;
      addToBucket(buckets[r.cell], weight[r.xform], colour);
    }
  }
}

}  // namespace procgen::flame
