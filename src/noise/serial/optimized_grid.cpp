// The optimized noise grid: the block kernels (shared with the cpu stage) and
// the serial stage that runs them in order.
//
// Paper (shared/seeds/001_191daa7b81372e37.txt) §4.2 (gradients computed once
// per work-group and shared) and §4.3 (the dot products split per axis and
// cached), done by one core over a block of rows instead of by a work-group;
// see grid_optimized.hpp for the stages and docs/noise.md, "The grid path".
//
// A row (fixed y, z, w) of one octave is evaluated in one of two ways:
//  - coefficient mode, when a lattice cell holds several points of the row
//    (lattice step along x ≤ 0.75): for every cell, the 2^D corner gradients
//    become the four coefficients of the row inside that cell,
//        value(f) = A + B·f + C·u + D·u·f       (f fraction, u = fade(f)),
//    computed SIMD across cells (from per-cell polynomials in the last
//    axis's fraction and fade); every point then picks its cell's
//    coefficients with a permute and costs three multiply-adds;
//  - lane mode otherwise: every SIMD lane evaluates its own point with the
//    per-point arithmetic of perlin.h / value.h, regrouped (the dot product
//    as fma(tx, g_x, rest)) and fused, reading the cached hash prefixes and
//    per-axis tables (3D Perlin with 16 lanes: gradient tables per row).
// The fractal sum then folds the octave into the row as fractal.h does.
// Multiply-adds are fused explicitly (fmadd) at the same operations on every
// instruction set — one FMA instruction in the AVX-512 and AVX2 kernels, a
// correctly rounded fmaf per lane in the baseline one — and nowhere else (this
// file is built with -ffp-contract=off), so the three kernels give the same bits.
#include <algorithm>
#include <atomic>
#include <cstring>

// declares the x86 builtins of every instruction set (fmadd, lookup32)
#include <immintrin.h>

#include "noise/grid_optimized.hpp"

// The vector helpers are always inlined into the per-ISA kernels; GCC's note
// about the ABI of passing wide vectors by value does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace procgen::detail {

namespace {

// ---- vectors ----------------------------------------------------------------

template <int W>
struct Vec {
  typedef float F __attribute__((vector_size(4 * W)));
  typedef int32_t I __attribute__((vector_size(4 * W)));
  typedef uint32_t U __attribute__((vector_size(4 * W)));
};

template <class T, class S>
[[gnu::always_inline]] inline T load(const S* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T, class S>
[[gnu::always_inline]] inline void store(S* p, const T& v) {
  std::memcpy(p, &v, sizeof v);
}
/// s on every lane. 16 lanes through the broadcast builtin: GCC 12 compiles
/// a lane-by-lane fill (or s − 0, or 1·s) of a 16-lane vector in the flattened
/// AVX-512 kernel into one masked broadcast per lane.
template <class T>
[[gnu::always_inline]] inline T splat(float s) {
#if !defined(__clang__)
  if constexpr (sizeof(T) == 64) {
    typedef float F4 __attribute__((vector_size(16)));
    return __builtin_ia32_broadcastss512(F4{s, 0.0f, 0.0f, 0.0f}, T{}, static_cast<unsigned short>(0xffff));
  }
#endif
  T v;
  for (unsigned i = 0; i < sizeof v / sizeof s; ++i) v[i] = s;
  return v;
}

/// out[i] = v[idx[i]] (indices taken modulo the lane count, as GCC's
/// __builtin_shuffle does). clang has no variable-index shuffle builtin (its
/// __builtin_shufflevector takes constants), so it gets the lane loop, which
/// it turns into the same permute instruction.
template <class F, class I>
[[gnu::always_inline]] inline F permute(F v, I idx) {
#if defined(__clang__)
  constexpr int kLanes = sizeof(F) / sizeof(float);
  F r;
  for (int i = 0; i < kLanes; ++i) r[i] = v[idx[i] & (kLanes - 1)];
  return r;
#else
  return __builtin_shuffle(v, idx);
#endif
}

/// a·b + c rounded once, on every lane. One FMA instruction in the AVX-512 and
/// AVX2 kernels (bestIsa picks them only on CPUs with FMA); the baseline kernel
/// (4 lanes, any x86-64) calls fmaf per lane — emulated in software on a CPU
/// without FMA, slow there but correctly rounded, so the bits are the same.
/// The builtins, not the intrinsics: these helpers are inlined into the
/// target("avx512f") / target("avx2") kernels, and an intrinsic may not be
/// inlined into a function compiled without its target.
/// clang (the fuzzing and sanitizer builds) takes the lane loop everywhere:
/// it checks a target builtin against the helper, not against the kernel it
/// is inlined into, and vectorizes the loop of fmaf itself.
template <class F>
[[gnu::always_inline]] inline F fmadd(F a, F b, F c) {
  constexpr int kLanes = sizeof(F) / sizeof(float);
#if !defined(__clang__)
  if constexpr (kLanes == 16) {
    return __builtin_ia32_vfmaddps512_mask(a, b, c, static_cast<unsigned short>(0xffff), 4);
  } else if constexpr (kLanes == 8) {
    return __builtin_ia32_vfmaddps256(a, b, c);
  }
#endif
  F r;
  for (int i = 0; i < kLanes; ++i) r[i] = __builtin_fmaf(a[i], b[i], c[i]);
  return r;
}

/// out[i] = (idx[i] & 16 ? hi : lo)[idx[i] & 15]: a 32-entry table lookup
/// (AVX-512 vpermt2ps; 16 lanes only).
template <class F, class I>
[[gnu::always_inline]] inline F lookup32(F lo, I idx, F hi) {
  static_assert(sizeof(F) == 64);
#if defined(__clang__)
  F r;
  for (int i = 0; i < 16; ++i) r[i] = (idx[i] & 16) ? hi[idx[i] & 15] : lo[idx[i] & 15];
  return r;
#else
  return __builtin_ia32_vpermt2varps512_mask(idx, lo, hi, static_cast<unsigned short>(0xffff));
#endif
}

/// A vector stored around the cache (movntps); p 64-byte aligned.
template <class F>
[[gnu::always_inline]] inline void streamStore(float* p, F v) {
#if defined(__clang__)
  __builtin_nontemporal_store(v, reinterpret_cast<F*>(p));
#else
  if constexpr (sizeof(F) == 64) {
    __builtin_ia32_movntps512(p, v);
  } else if constexpr (sizeof(F) == 32) {
    __builtin_ia32_movntps256(p, v);
  } else {
    __builtin_ia32_movntps(p, v);
  }
#endif
}

/// Grids of at least this many bytes are written with streaming stores.
constexpr uint64_t kStreamingBytes = uint64_t{4} << 20;

/// pgNoiseHash (hash.h) on every lane.
template <class U>
[[gnu::always_inline]] inline U vhash(U x) {
  x = ((x >> 16) ^ x) * 0x45d9f3bu;
  x = ((x >> 16) ^ x) * 0x45d9f3bu;
  return (x >> 16) ^ x;
}

/// (f − corner bit)·g_d of perlin.h for lattice axis d of a corner with hash
/// h, given t = f − bit: the gradient component is ±1, ±√2 (2D) or 0, so the
/// product is t with the sign of hash bit d, scaled or zeroed.
template <int W, int E>
[[gnu::always_inline]] inline typename Vec<W>::F perlinTerm(typename Vec<W>::U h, typename Vec<W>::F t, int d) {
  using F = typename Vec<W>::F;
  using U = typename Vec<W>::U;
  using I = typename Vec<W>::I;
  const F zero = {};
  if constexpr (E == 2) {
    const U k = (h >> 2) & 3u;
    const F mag = (I)(k < 2u) ? splat<F>(1.0f) : ((I)(k == U{} + (2u + d)) ? splat<F>(1.41421356237f) : zero);
    t = t * mag;
  } else if constexpr (E == 3) {
    // (h >> 3) % 3 without a division: x·(1/3 mod 2^32) lands in three
    // disjoint ranges by x mod 3 (x < 2^29).
    const U m = (h >> 3) * 0xAAAAAAABu;
    // One compare each (GCC scalarizes an & of two AVX-512 compares).
    const I is_zero = d == 0   ? (I)(m <= 0x55555555u)
                      : d == 1 ? (I)(m >= 0xAAAAAAABu)
                               : (I)(m - 0x55555556u < 0x55555555u);
    t = is_zero ? zero : t;
  } else {
    const U k = (h >> 4) & 3u;
    t = (I)(k == U{} + static_cast<uint32_t>(d)) ? zero : t;
  }
  const U sign = (h << (31 - d)) & 0x80000000u;
  return (F)((U)t ^ sign);
}

/// pgNoiseHashToSigned on every lane.
template <int W>
[[gnu::always_inline]] inline typename Vec<W>::F hashToSigned(typename Vec<W>::U h) {
  using F = typename Vec<W>::F;
  using I = typename Vec<W>::I;
  return __builtin_convertvector((I)(h >> 8), F) * (1.0f / 8388608.0f) - 1.0f;
}

// ---- per-block state ----------------------------------------------------------

/// The scalars of the middle axes (all but x and the last) of a block, and of
/// the last axis of a row, at one octave.
struct AxisPoint {
  uint32_t c0 = 0, c1 = 0;
  float f = 0, u = 0;
};

struct BlockScratch {
  // per octave: hash prefixes, [combo][column or cell]
  std::vector<uint32_t> prefix;
  std::vector<size_t> prefix_at;  // offset of octave o in prefix
  std::vector<size_t> prefix_len;  // entries per combo at octave o
  // per octave, coefficient mode: the cells' polynomials (cellPolynomials) and
  // the cell along the last axis they belong to
  std::vector<float> poly;
  std::vector<size_t> poly_at;
  std::vector<uint32_t> poly_cell;
  std::vector<char> poly_valid;
  // per octave, lane mode: the hashes of the upper corners along the last
  // axis of the previous row (layout of prefix), and that row's upper cell
  std::vector<uint32_t> saved;
  std::vector<uint32_t> saved_cell;
  std::vector<char> saved_valid;
  // per row
  std::vector<float> acc, amp, coef;
};

// ---- the kernels --------------------------------------------------------------

template <int W, int E, bool kPerlin>
struct Kernel {
  using F = typename Vec<W>::F;
  using I = typename Vec<W>::I;
  using U = typename Vec<W>::U;
  static constexpr int kCorners = 1 << E;
  static constexpr int kPrefixCombos = 1 << (E - 1);  // bits of axes 0 .. E-2

  /// Perlin 3D with 16 lanes (AVX-512): a corner's dot product
  /// g·(f − corner) is computed as fma(tx, g_x, g_y·ty + g_z·tz) with tx the
  /// point's x offset and ty, tz the row's (the same for all its points). g_x
  /// and g_y·ty + g_z·tz depend on the corner's hash only through its three
  /// sign bits and the zeroed axis (h >> 3) % 3: 32 cases. A row builds the
  /// two 32-entry tables (g_x, and g_y·ty + g_z·tz per corner's y and z bits)
  /// with perlinTerm itself on one stand-in hash per case, so they hold the
  /// values the other kernels compute; a point then looks its corners up
  /// (vpermt2ps) instead of comparing and selecting per axis. Case index:
  /// the sign bits, plus the top two bits of m = (h >> 3)·(1/3 mod 2³²) times
  /// 8 — for x < 2²⁹, x·(1/3 mod 2³²) lies in [0, 2²⁹/3], [0x55555556,
  /// 0x60000000] or [0xAAAAAAAB, 0xB5555555] for x mod 3 = 0, 2, 1.
  static constexpr bool kTables = W == 16 && E == 3 && kPerlin;
  struct Perlin3Tables {
    F gx[2];     // [case >> 4]
    F yz[4][2];  // [corner's y and z bits][case >> 4]
  };
  static Perlin3Tables perlin3Tables(float fy, float fz) {
    Perlin3Tables t;
#pragma GCC unroll 2
    for (int half = 0; half < 2; ++half) {
      U stand_in;
      for (int j = 0; j < W; ++j) {
        const int k = half * W + j;
        const uint32_t zero_axis = (k >> 3) == 1 ? 2u : (k >> 3) == 2 ? 1u : 0u;
        stand_in[j] = static_cast<uint32_t>(k & 7) | zero_axis << 3;
      }
      t.gx[half] = perlinTerm<W, E>(stand_in, splat<F>(1.0f), 0);
      F ty[2], tz[2];
      for (int bit = 0; bit < 2; ++bit) {
        ty[bit] = perlinTerm<W, E>(stand_in, splat<F>(fy - static_cast<float>(bit)), 1);
        tz[bit] = perlinTerm<W, E>(stand_in, splat<F>(fz - static_cast<float>(bit)), 2);
      }
      for (int yz = 0; yz < 4; ++yz) t.yz[yz][half] = ty[yz & 1] + tz[yz >> 1];
    }
    return t;
  }

  /// Lane mode: the octave's noise at columns [i, i + W). Per corner: the
  /// dot product as fma(tx, g_x, Σ_{d≥1} g_d·t_d), then the lerps as fma.
  /// `tables`: perlin3Tables of the row when kTables (else unused).
  /// `saved` (layout of `prefix`): receives the hashes of the corners on the
  /// row's upper cell along the last axis; kReuse: they are those of this
  /// row's lower cell (the previous row's upper cell is this row's lower one,
  /// as at octave 6 of the benchmark, 1.1 cells per row), so that half of the
  /// corners skips its hash.
  template <bool kReuse>
  [[gnu::always_inline]] static F lanes(const float* xf, const float* xu, const uint32_t* prefix, size_t stride,
                                        size_t i, const AxisPoint* mid, const AxisPoint& last, float scale,
                                        const Perlin3Tables* tables, uint32_t* saved) {
    const F fx = load<F>(xf + i);
    F vals[kCorners];
#pragma GCC unroll 16
    for (int c = 0; c < kCorners; ++c) {
      // lower corners (c < kPrefixCombos) first: they read `saved` before the
      // upper ones overwrite it
      const size_t at = static_cast<size_t>(c & (kPrefixCombos - 1)) * stride + i;
      const bool upper = (c >> (E - 1)) & 1;
      U h;
      if (kReuse && !upper) {
        h = load<U>(saved + at);
      } else {
        h = vhash(load<U>(prefix + at) ^ (upper ? last.c1 : last.c0));
        if (upper) store(saved + at, h);
      }
      if constexpr (kTables) {
        const U m = (h >> 3) * 0xAAAAAAABu;
        // bits 3, 4 from m's top bits, the rest from h (vpermt2ps reads bits
        // 0..4 only): one bit-select, vpternlogd 0xE4 = (c ? a : b)
#if defined(__clang__)
        const I cases = (I)(((m >> 27) & 0x18u) | (h & ~0x18u));
#else
        const I cases = __builtin_ia32_pternlogd512_mask((I)(m >> 27), (I)h, (I)(U{} + 0x18u), 0xE4,
                                                         static_cast<unsigned short>(0xffff));
#endif
        vals[c] = fmadd(fx - static_cast<float>(c & 1), lookup32(tables->gx[0], cases, tables->gx[1]),
                        lookup32(tables->yz[c >> 1][0], cases, tables->yz[c >> 1][1]));
      } else if constexpr (kPerlin) {
        F rest = {};
#pragma GCC unroll 4
        for (int d = 1; d < E; ++d) {
          const float fd = d == E - 1 ? last.f : mid[d].f;
          const F term = perlinTerm<W, E>(h, splat<F>(fd - static_cast<float>((c >> d) & 1)), d);
          rest = d == 1 ? term : rest + term;
        }
        vals[c] = fmadd(fx - static_cast<float>(c & 1), perlinTerm<W, E>(h, splat<F>(1.0f), 0), rest);
      } else {
        vals[c] = hashToSigned<W>(h);
      }
    }
    const F ux = load<F>(xu + i);
#pragma GCC unroll 8
    for (int i2 = 0; i2 < kCorners / 2; ++i2) vals[i2] = fmadd(ux, vals[2 * i2 + 1] - vals[2 * i2], vals[2 * i2]);
#pragma GCC unroll 4
    for (int a = 1; a < E; ++a) {
      const F ua = splat<F>(a == E - 1 ? last.u : mid[a].u);
      const int half = kCorners >> (a + 1);
#pragma GCC unroll 8
      for (int i2 = 0; i2 < half; ++i2) vals[i2] = fmadd(ua, vals[2 * i2 + 1] - vals[2 * i2], vals[2 * i2]);
    }
    if constexpr (kPerlin) return vals[0] * scale;
    return vals[0];
  }

  /// Coefficient mode. Inside one cell a row's value is A + B·f + C·u + D·u·f
  /// (f the fraction along x, u its fade). With g the gradient of corner
  /// (a, m) — a its x bit, m its bits along the other axes — and e(a, m) the
  /// part of its dot product along those axes, interpolating along x and then
  /// with the weights W_m of the other axes:
  ///   A = Σ W_m e(0,m)   B = Σ W_m g_x(0,m)
  ///   C = Σ W_m (e(1,m) − e(0,m) − g_x(1,m))   D = Σ W_m (g_x(1,m) − g_x(0,m))
  /// (value noise: e is the node value, g_x = 0). Within a block the middle
  /// axes are fixed, so only the last axis's fraction fl and fade ul change
  /// from row to row, and every coefficient X is a polynomial in them:
  ///   X = P + Q·fl + ul·(R + S·fl)
  /// (e is affine in fl; Q = S = 0 for B, D and value noise).
  ///
  /// Step 1, cellPolynomials: P, Q, R, S of every coefficient for cells
  /// [k, k + W) into poly[k · kPolyArrays + (array) · W + lane] (a cell
  /// vector's arrays side by side: one pointer in step 2) — from the cells'
  /// corner hashes, once per block and cell along the last axis (the paper's
  /// gradients cached per work-group). `mid_weights`: the products of the
  /// middle axes' weights times the noise's scale, by corner bits.
  /// Arrays: Perlin A:P,Q,R,S B:P,R C:P,Q,R,S D:P,R; value A:P,R C:P,R.
  static constexpr int kPolyArrays = kPerlin ? 12 : 4;
  static constexpr int kMidCombos = 1 << (E - 2);
  [[gnu::always_inline]] static void cellPolynomials(const uint32_t* prefix, size_t stride, size_t k,
                                                     const AxisPoint* mid, const AxisPoint& last,
                                                     const float* mid_weights, float* poly) {
    // per last-axis bit: Σ over the middle corners of the weighted p and q of
    // A, B, C, D (x(fl) = p + q·fl)
    F pa[2] = {}, qa[2] = {}, pb[2] = {}, pc[2] = {}, qc[2] = {}, pd[2] = {};
#pragma GCC unroll 2
    for (int ml = 0; ml < 2; ++ml) {
#pragma GCC unroll 4
      for (int mm = 0; mm < kMidCombos; ++mm) {
        const F w = splat<F>(mid_weights[mm]);
        F p[2], q[2], gx[2];
#pragma GCC unroll 2
        for (int ax = 0; ax < 2; ++ax) {
          const int c = ax | (mm << 1) | (ml << (E - 1));
          const U hp = load<U>(prefix + static_cast<size_t>(c & (kPrefixCombos - 1)) * stride + k);
          const U h = vhash(hp ^ (ml ? last.c1 : last.c0));
          if constexpr (kPerlin) {
            gx[ax] = perlinTerm<W, E>(h, splat<F>(1.0f), 0);
            const F gl = perlinTerm<W, E>(h, splat<F>(1.0f), E - 1);
            F e_mid = {};
#pragma GCC unroll 4
            for (int d = 1; d < E - 1; ++d)
              e_mid += perlinTerm<W, E>(h, splat<F>(mid[d].f - static_cast<float>((c >> d) & 1)), d);
            // e = e_mid + gl·(fl − ml)
            p[ax] = ml ? e_mid - gl : e_mid;
            q[ax] = gl;
          } else {
            p[ax] = hashToSigned<W>(h);
          }
        }
        if constexpr (kPerlin) {
          pa[ml] = fmadd(w, p[0], pa[ml]);
          qa[ml] = fmadd(w, q[0], qa[ml]);
          pb[ml] = fmadd(w, gx[0], pb[ml]);
          pc[ml] = fmadd(w, p[1] - p[0] - gx[1], pc[ml]);
          qc[ml] = fmadd(w, q[1] - q[0], qc[ml]);
          pd[ml] = fmadd(w, gx[1] - gx[0], pd[ml]);
        } else {
          pa[ml] = fmadd(w, p[0], pa[ml]);
          pc[ml] = fmadd(w, p[1] - p[0], pc[ml]);
        }
      }
    }
    float* dst = poly + k * kPolyArrays;
    if constexpr (kPerlin) {
      const F arrays[kPolyArrays] = {pa[0], qa[0], pa[1] - pa[0], qa[1] - qa[0], pb[0], pb[1] - pb[0],
                                     pc[0], qc[0], pc[1] - pc[0], qc[1] - qc[0], pd[0], pd[1] - pd[0]};
#pragma GCC unroll 12
      for (int j = 0; j < kPolyArrays; ++j) store(dst + j * W, arrays[j]);
    } else {
      const F arrays[kPolyArrays] = {pa[0], pa[1] - pa[0], pc[0], pc[1] - pc[0]};
#pragma GCC unroll 4
      for (int j = 0; j < kPolyArrays; ++j) store(dst + j * W, arrays[j]);
    }
  }

  /// Step 2, once per row: A, B, C, D of cells [k, k + W) into coef (four
  /// arrays of `cells` entries each; value noise: A and C).
  [[gnu::always_inline]] static void cellCoefficients(const float* poly, size_t k, float fl, float ul, float* coef,
                                                      size_t cells) {
    const F f = splat<F>(fl);
    const F u = splat<F>(ul);
    const float* src = poly + k * kPolyArrays;
    auto at = [&](int j) { return load<F>(src + j * W); };
    if constexpr (kPerlin) {
      store(coef + k, fmadd(u, fmadd(at(3), f, at(2)), fmadd(at(1), f, at(0))));
      store(coef + cells + k, fmadd(u, at(5), at(4)));
      store(coef + 2 * cells + k, fmadd(u, fmadd(at(9), f, at(8)), fmadd(at(7), f, at(6))));
      store(coef + 3 * cells + k, fmadd(u, at(11), at(10)));
    } else {
      store(coef + k, fmadd(u, at(1), at(0)));
      store(coef + 2 * cells + k, fmadd(u, at(3), at(2)));
    }
  }

  /// Coefficient mode, second half: the octave's noise at columns [i, i + W).
  /// The coefficients were stored a moment ago, a vector at a time: a load
  /// that straddles two of those stores cannot be forwarded from them and
  /// waits until they reach the cache. 16 lanes read the two stored vectors
  /// around the window instead (its 16 points span at most 13 cells), keep
  /// them in `window` while the next columns fall in the same pair (loads,
  /// not arithmetic, bound this loop) and pick from 32 entries; fewer lanes
  /// load the unaligned window.
  struct Window {
    int32_t base = -1;
    F lo[4] = {}, hi[4] = {};  // A, B, C, D
  };
  [[gnu::always_inline]] static F fromCoefficients(const int32_t* ord, const float* xf, const float* xu, size_t i,
                                                   const float* coef, size_t cells, Window& window) {
    const F f = load<F>(xf + i);
    const F u = load<F>(xu + i);
    F v[4];
    if constexpr (W == 16) {
      const int32_t base = ord[i] & ~15;
      if (base != window.base) {
        window.base = base;
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          if (!kPerlin && (j & 1)) continue;  // value noise: A and C only
          window.lo[j] = load<F>(coef + j * cells + base);
          window.hi[j] = load<F>(coef + j * cells + base + 16);
        }
      }
      const I idx = load<I>(ord + i) - base;
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j)
        if (kPerlin || !(j & 1)) v[j] = lookup32(window.lo[j], idx, window.hi[j]);
    } else {
      const int32_t base = ord[i];
      const I idx = load<I>(ord + i) - base;
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j)
        if (kPerlin || !(j & 1)) v[j] = permute(load<F>(coef + j * cells + base), idx);
    }
    if constexpr (kPerlin) return fmadd(u, fmadd(v[3], f, v[2]), fmadd(v[1], f, v[0]));
    return fmadd(u, v[2], v[0]);
  }
};

/// The fractal fold of fractal.h (pgNoiseFractalSum) for one octave's noise
/// n: acc += term · amp, then amp *= lerp(1, (term + 1)/2, weighted) · gain.
/// Unweighted (weighted_strength 0) the factor is exactly gain for every
/// point, so amp is one scalar per octave (`amp_scalar`), not an array.
/// FoldParams: the config's fields it reads, copied out of the config once
/// (stores into the rows could alias it, so the loop would reload them).
struct FoldParams {
  int fractal;
  float ping_pong_strength, weighted_strength, gain;
};
/// kPlain: an unweighted fBm (or no fractal), term = n — the common case,
/// compiled without the per-vector tests of the fractal type.
template <int W, bool kWeighted, bool kPlain = false>
[[gnu::always_inline]] inline void foldOctave(const FoldParams& cfg, typename Vec<W>::F n, float* acc_p,
                                              float* amp_p, float amp_scalar) {
  using F = typename Vec<W>::F;
  using I = typename Vec<W>::I;
  using U = typename Vec<W>::U;
  F term = n;
  const F absn = (F)((U)n & 0x7fffffffu);
  if constexpr (kPlain) {
    static_assert(!kWeighted);
  } else if (cfg.fractal == PG_FRACTAL_RIDGED) {
    term = 1.0f - 2.0f * absn;
  } else if (cfg.fractal == PG_FRACTAL_BILLOW) {
    term = 2.0f * absn - 1.0f;
  } else if (cfg.fractal == PG_FRACTAL_PINGPONG) {
    F t = (n + 1.0f) * cfg.ping_pong_strength;
    t -= __builtin_convertvector(__builtin_convertvector(t * 0.5f, I), F) * 2.0f;
    const F tri = (I)(t < 1.0f) ? t : 2.0f - t;
    term = 2.0f * tri - 1.0f;
  }
  if constexpr (kWeighted) {
    const F amp = load<F>(amp_p);
    store(acc_p, fmadd(term, amp, load<F>(acc_p)));
    const F weight = 1.0f + cfg.weighted_strength * ((term + 1.0f) * 0.5f - 1.0f);
    store(amp_p, amp * (weight * cfg.gain));
  } else {
    store(acc_p, fmadd(term, splat<F>(amp_scalar), load<F>(acc_p)));
  }
}

template <int W, int E, bool kPerlin>
NoiseRange runBlockDims(const OptimizedGrid& grid, uint64_t b, std::span<float> out) {
  using K = Kernel<W, E, kPerlin>;
  using F = typename Vec<W>::F;
  const NoiseSetup& s = grid.setup();
  const PgNoiseConfig& cfg = s.cfg;
  const int octaves = cfg.octaves;
  const uint64_t nx = s.size[0];
  const size_t padded = grid.paddedWidth();
  const int last_axis = E - 1;
  const uint64_t rows_per_block = grid.rowsPerBlock();
  const uint64_t last_blocks = (s.size[last_axis] + rows_per_block - 1) / rows_per_block;

  // Which middle indices and which rows of the last axis.
  uint64_t p = b / last_blocks;
  const uint64_t l_begin = (b % last_blocks) * rows_per_block;
  const uint64_t l_end = std::min<uint64_t>(s.size[last_axis], l_begin + rows_per_block);
  uint64_t index[4] = {0, 0, 0, 0};
  for (int d = 1; d < E - 1; ++d) {
    index[d] = p % s.size[d];
    p /= s.size[d];
  }

  // Per octave: the middle axes' split, and the hash prefixes
  // hash(… hash(hash(key ^ x) ^ y) … ) over axes 0 .. E-2 for every column
  // (lane mode) or every cell (coefficient mode) and every corner combination.
  thread_local BlockScratch scratch;
  AxisPoint mid[kMaxOctaves][4];
  scratch.prefix_at.assign(octaves, 0);
  scratch.prefix_len.assign(octaves, 0);
  size_t total = 0;
  for (int o = 0; o < octaves; ++o) {
    const auto& x = grid.table(o, 0);
    scratch.prefix_at[o] = total;
    scratch.prefix_len[o] = x.coefficients ? x.cell0.size() : padded;
    total += scratch.prefix_len[o] * K::kPrefixCombos;
  }
  scratch.prefix.resize(total);
  scratch.saved.resize(total);
  scratch.saved_cell.assign(octaves, 0);
  scratch.saved_valid.assign(octaves, 0);
  for (int o = 0; o < octaves; ++o) {
    const uint32_t key = pgNoiseSubKey(cfg.key, static_cast<pg_u32>(o));
    for (int d = 1; d < E - 1; ++d) {
      const auto& t = grid.table(o, d);
      mid[o][d] = {t.c0[index[d]], t.c1[index[d]], t.f[index[d]], t.u[index[d]]};
    }
    const auto& x = grid.table(o, 0);
    const size_t len = scratch.prefix_len[o];
    const uint32_t* x0 = x.coefficients ? x.cell0.data() : x.c0.data();
    const uint32_t* x1 = x.coefficients ? x.cell1.data() : x.c1.data();
    for (int combo = 0; combo < K::kPrefixCombos; ++combo) {
      uint32_t* dst = &scratch.prefix[scratch.prefix_at[o] + combo * len];
      for (size_t i = 0; i < len; ++i) {
        uint32_t h = pgNoiseHash(key ^ ((combo & 1) ? x1[i] : x0[i]));
        for (int d = 1; d < E - 1; ++d) h = pgNoiseHash(h ^ (((combo >> d) & 1) ? mid[o][d].c1 : mid[o][d].c0));
        dst[i] = h;
      }
    }
  }

  size_t max_cells = 0;  // padded
  scratch.poly_at.assign(octaves, 0);
  scratch.poly_cell.assign(octaves, 0);
  scratch.poly_valid.assign(octaves, 0);
  total = 0;
  for (int o = 0; o < octaves; ++o) {
    const auto& x = grid.table(o, 0);
    max_cells = std::max(max_cells, x.cell0.size());
    scratch.poly_at[o] = total;
    if (x.coefficients) total += x.cell0.size() * K::kPolyArrays;
  }
  scratch.poly.resize(total);
  scratch.acc.resize(padded);
  scratch.amp.resize(padded);
  scratch.coef.resize(4 * max_cells + W);
  const bool weighted = cfg.weighted_strength != 0.0f;
  const float scale = kPerlin ? pgPerlinScale(E) : 1.0f;
  const FoldParams fold{cfg.fractal, cfg.ping_pong_strength, cfg.weighted_strength, cfg.gain};
  const bool plain = !weighted && (cfg.fractal == PG_FRACTAL_FBM || cfg.fractal == PG_FRACTAL_NONE);

  F vmin = splat<F>(__builtin_inff()), vmax = splat<F>(-__builtin_inff());
  NoiseRange tail = emptyRange();
  // A grid larger than a few MiB bypasses the cache on its way out
  // (streaming stores): it would not stay cached anyway, and a plain store
  // first reads every line it writes — at one octave, with the rest of the
  // work almost free, that read is a third of the time. The threshold is
  // glibc memcpy's for large copies (¾ of a thread's share of the last-level
  // cache, a few MiB).
  const bool stream = static_cast<uint64_t>(out.size()) * sizeof(float) >= kStreamingBytes;
  for (uint64_t l = l_begin; l < l_end; ++l) {
    std::fill(scratch.acc.begin(), scratch.acc.end(), 0.0f);
    if (weighted) std::fill(scratch.amp.begin(), scratch.amp.end(), 1.0f);
    float amp = 1.0f;  // unweighted: the amplitude of octave o, as fractal.h computes it
    for (int o = 0; o < octaves; ++o) {
      const auto& x = grid.table(o, 0);
      const auto& lt = grid.table(o, last_axis);
      const AxisPoint last{lt.c0[l], lt.c1[l], lt.f[l], lt.u[l]};
      const uint32_t* prefix = &scratch.prefix[scratch.prefix_at[o]];
      const size_t stride = scratch.prefix_len[o];
      float* acc = scratch.acc.data();
      float* amps = scratch.amp.data();
      const float* xf = x.f.data();
      const float* xu = x.u.data();
      if (x.coefficients) {
        const size_t cells = stride;  // padded cell count
        const size_t used = (x.cell_count + W - 1) / W * W;
        float* poly = &scratch.poly[scratch.poly_at[o]];
        if (!scratch.poly_valid[o] || scratch.poly_cell[o] != last.c0) {
          // The weights of the middle axes' corner combinations (fixed in a
          // block), times the scale.
          float mid_weights[K::kMidCombos];
          for (int m = 0; m < K::kMidCombos; ++m) {
            float w = scale;
            for (int d = 1; d < E - 1; ++d) w *= ((m >> (d - 1)) & 1) ? mid[o][d].u : 1.0f - mid[o][d].u;
            mid_weights[m] = w;
          }
          for (size_t k = 0; k < used; k += W)
            K::cellPolynomials(prefix, stride, k, mid[o], last, mid_weights, poly);
          scratch.poly_valid[o] = 1;
          scratch.poly_cell[o] = last.c0;
        }
        float* coef = scratch.coef.data();
        for (size_t k = 0; k < used; k += W) K::cellCoefficients(poly, k, last.f, last.u, coef, cells);
        const int32_t* ord = x.ord.data();
        typename K::Window window;
        if (weighted) {
          for (size_t i = 0; i < padded; i += W)
            foldOctave<W, true>(fold, K::fromCoefficients(ord, xf, xu, i, coef, cells, window), acc + i, amps + i, 0.0f);
        } else if (plain) {
          for (size_t i = 0; i < padded; i += W)
            foldOctave<W, false, true>(fold, K::fromCoefficients(ord, xf, xu, i, coef, cells, window), acc + i, amps + i,
                                       amp);
        } else {
          for (size_t i = 0; i < padded; i += W)
            foldOctave<W, false>(fold, K::fromCoefficients(ord, xf, xu, i, coef, cells, window), acc + i, amps + i, amp);
        }
      } else {
        typename K::Perlin3Tables tables;
        if constexpr (K::kTables) tables = K::perlin3Tables(mid[o][1].f, last.f);
        uint32_t* saved = &scratch.saved[scratch.prefix_at[o]];
        auto row = [&]<bool kReuse>() {
          auto noise = [&](size_t i) {
            return K::template lanes<kReuse>(xf, xu, prefix, stride, i, mid[o], last, scale, &tables, saved);
          };
          if (weighted) {
            for (size_t i = 0; i < padded; i += W) foldOctave<W, true>(fold, noise(i), acc + i, amps + i, 0.0f);
          } else if (plain) {
            for (size_t i = 0; i < padded; i += W) foldOctave<W, false, true>(fold, noise(i), acc + i, amps + i, amp);
          } else {
            for (size_t i = 0; i < padded; i += W) foldOctave<W, false>(fold, noise(i), acc + i, amps + i, amp);
          }
        };
        if (scratch.saved_valid[o] && scratch.saved_cell[o] == last.c0) {
          row.template operator()<true>();
        } else {
          row.template operator()<false>();
        }
        scratch.saved_valid[o] = 1;
        scratch.saved_cell[o] = last.c1;
      }
      amp *= 1.0f * cfg.gain;
    }
    // Scale into [−1, 1], write, and track the range. Streaming: the
    // columns before the first 64-byte boundary and after the last whole
    // vector one by one, the vectors in between with streaming stores.
    index[last_axis] = l;
    float* dst = out.data() + nx * (index[1] + s.size[1] * (index[2] + s.size[2] * index[3]));
    const size_t head =
        stream ? std::min<size_t>(nx, ((64 - (reinterpret_cast<uintptr_t>(dst) & 63)) & 63) / sizeof(float)) : 0;
    const size_t body_end = head + (nx - head) / W * W;
    for (size_t i = head; i < body_end; i += W) {
      const F v = load<F>(&scratch.acc[i]) * cfg.fractal_bound;
      if (stream) {
        streamStore(dst + i, v);
      } else {
        store(dst + i, v);
      }
      vmin = v < vmin ? v : vmin;
      vmax = v > vmax ? v : vmax;
    }
    auto scalar = [&](size_t i) {
      const float v = scratch.acc[i] * cfg.fractal_bound;
      dst[i] = v;
      tail = combineRanges(tail, {v, v});
    };
    for (size_t i = 0; i < head; ++i) scalar(i);
    for (size_t i = body_end; i < nx; ++i) scalar(i);
  }
  // streaming stores are weakly ordered: visible before the caller (or the
  // thread joining the cpu stage) reads the grid
  if (stream) __builtin_ia32_sfence();
  NoiseRange r = tail;
  for (int i = 0; i < W; ++i) r = combineRanges(r, {vmin[i], vmax[i]});
  return r;
}

template <int W>
NoiseRange runBlockW(const OptimizedGrid& grid, uint64_t b, std::span<float> out) {
  const bool perlin = grid.setup().cfg.type == PG_NOISE_PERLIN;
  switch (grid.setup().lattice_dims) {
    case 2: return perlin ? runBlockDims<W, 2, true>(grid, b, out) : runBlockDims<W, 2, false>(grid, b, out);
    case 3: return perlin ? runBlockDims<W, 3, true>(grid, b, out) : runBlockDims<W, 3, false>(grid, b, out);
    default: return perlin ? runBlockDims<W, 4, true>(grid, b, out) : runBlockDims<W, 4, false>(grid, b, out);
  }
}

// One kernel per instruction set; `flatten` inlines the templates above into
// each, so each is compiled entirely for its target.
[[gnu::target("avx512f,fma"), gnu::flatten]] NoiseRange runBlockAvx512(const OptimizedGrid& grid, uint64_t b,
                                                                    std::span<float> out) {
  return runBlockW<16>(grid, b, out);
}
[[gnu::target("avx2,fma"), gnu::flatten]] NoiseRange runBlockAvx2(const OptimizedGrid& grid, uint64_t b,
                                                               std::span<float> out) {
  return runBlockW<8>(grid, b, out);
}
[[gnu::flatten]] NoiseRange runBlockBaseline(const OptimizedGrid& grid, uint64_t b, std::span<float> out) {
  return runBlockW<4>(grid, b, out);
}

// The AVX-512 and AVX2 kernels fuse multiply-adds with FMA instructions, so
// they need FMA too (every CPU with AVX2 so far has it; a VM may hide it).
int bestIsa() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("fma")) return 1;
  if (__builtin_cpu_supports("avx512f")) return 3;
  if (__builtin_cpu_supports("avx2")) return 2;
  return 1;
}

std::atomic<int> g_isa{0};

int activeIsa() {
  int isa = g_isa.load(std::memory_order_relaxed);
  if (isa == 0) {
    isa = bestIsa();
    g_isa.store(isa, std::memory_order_relaxed);
  }
  return isa;
}

}  // namespace

int setOptimizedGridIsaForTesting(int isa) {
  const int best = bestIsa();
  g_isa.store(isa <= 0 || isa > best ? best : isa, std::memory_order_relaxed);
  return g_isa.load(std::memory_order_relaxed);
}

bool OptimizedGrid::handles(const NoiseSetup& setup) {
  return (setup.cfg.type == PG_NOISE_PERLIN || setup.cfg.type == PG_NOISE_VALUE) && setup.cfg.warp == PG_WARP_NONE;
}

OptimizedGrid::OptimizedGrid(const NoiseSetup& setup) : OptimizedGrid(setup, kTablesLater) {
  for (uint64_t job = 0; job < tableJobs(); ++job) buildTable(job);
}

OptimizedGrid::OptimizedGrid(const NoiseSetup& setup, TablesLater) : setup_(setup) {
  const int dims = setup.lattice_dims;
  padded_ = (setup.size[0] + 15) / 16 * 16;
  tables_.resize(static_cast<size_t>(setup.cfg.octaves) * 4);
  table_jobs_ = static_cast<uint64_t>(setup.cfg.octaves) * static_cast<uint64_t>(dims);
  // Blocks: every index along the middle axes, times runs of rows along the
  // last axis; at least 64 blocks where the grid allows, for the cpu stage.
  const int last = dims - 1;
  prefix_count_ = 1;
  for (int d = 1; d < last; ++d) prefix_count_ *= setup.size[d];
  const uint64_t want = std::max<uint64_t>(1, (64 + prefix_count_ - 1) / prefix_count_);
  const uint64_t runs = std::min<uint64_t>(setup.size[last], want);
  rows_per_block_ = (setup.size[last] + runs - 1) / runs;
  block_count_ = prefix_count_ * ((setup.size[last] + rows_per_block_ - 1) / rows_per_block_);
}

void OptimizedGrid::buildTable(uint64_t job) {
  const NoiseSetup& setup = setup_;
  const uint64_t dims = static_cast<uint64_t>(setup.lattice_dims);
  const int o = static_cast<int>(job / dims);
  const int d = static_cast<int>(job % dims);
  const uint64_t nx = setup.size[0];
  AxisTable& t = tables_[o * 4 + d];
  const uint64_t n = setup.size[d];
  const size_t len = d == 0 ? padded_ : n;
  t.c0.resize(len);
  t.c1.resize(len);
  t.f.resize(len);
  t.u.resize(len);
  const int32_t period = setup.cfg.period[o][d];
  for (size_t i = 0; i < len; ++i) {
    const uint64_t at = std::min<uint64_t>(i, n - 1);  // padding repeats the last column
    if (i > 0 && at == i - 1) {
      t.c0[i] = t.c0[i - 1];
      t.c1[i] = t.c1[i - 1];
      t.f[i] = t.f[i - 1];
      t.u[i] = t.u[i - 1];
      continue;
    }
    splitLatticeCoordinate(setup, o, d, setup.fieldCoordinate(d, at), t.c0[i], t.f[i]);
    t.c1[i] = pgNoiseNext(t.c0[i], period);
    t.u[i] = pgNoiseFade(t.f[i]);
  }
  if (d != 0) return;
  // Coefficient mode when the lattice step along x is at most 0.75 cells
  // (then neighbouring columns are at most one cell apart, and a cell
  // holds 4/3 points or more) and a row holds more than one vector.
  const double cell_step = setup.step * setup.scale[o][0];
  t.coefficients = cell_step <= 0.75 && nx >= 16;
  if (!t.coefficients) return;
  t.ord.resize(len);
  int32_t ord = 0;
  t.cell0.assign(1, t.c0[0]);
  t.cell1.assign(1, t.c1[0]);
  for (size_t i = 0; i < len; ++i) {
    if (i > 0 && t.c0[i] != t.c0[i - 1]) {
      ++ord;
      t.cell0.push_back(t.c0[i]);
      t.cell1.push_back(t.c1[i]);
    }
    t.ord[i] = ord;
  }
  // Pad the cells to whole vectors plus one, so that every column's
  // window of 16 cells stays inside.
  t.cell_count = t.cell0.size();
  const size_t cells = (t.cell0.size() + 15) / 16 * 16 + 16;
  t.cell0.resize(cells, t.cell0.back());
  t.cell1.resize(cells, t.cell1.back());
}

NoiseRange OptimizedGrid::runBlock(uint64_t b, std::span<float> out) const {
  switch (activeIsa()) {
    case 3: return runBlockAvx512(*this, b, out);
    case 2: return runBlockAvx2(*this, b, out);
    default: return runBlockBaseline(*this, b, out);
  }
}

NoiseRange serialOptimizedGrid(const NoiseSetup& setup, std::span<float> out) {
  if (!OptimizedGrid::handles(setup)) return naiveRows(setup, 0, setup.rows(), out);
  const OptimizedGrid grid(setup);
  NoiseRange r = emptyRange();
  for (uint64_t b = 0; b < grid.blockCount(); ++b) r = combineRanges(r, grid.runBlock(b, out));
  return r;
}

}  // namespace procgen::detail
