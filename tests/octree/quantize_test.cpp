// Octree colour quantization (procgen/quantize.hpp) against properties checked
// plainly here: few colours come back unchanged; K = 1 is the mean colour;
// the palette has at most K entries, each the rounded mean of the pixels that
// got it, and the pixels of one entry form one octree cell of the colour cube
// holding no other entry's colour; the error does not grow with K (bound
// derived below); dithering keeps the palette and tracks local means better;
// every backend gives the same indices.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "common/backends.hpp"
#include "procgen/error.hpp"
#include "procgen/quantize.hpp"

namespace {

using namespace procgen;

struct Picture {
  std::vector<uint8_t> pixels;
  int width = 0, height = 0, channels = 3;
  ImageView view() const { return {pixels.data(), width, height, channels, 8, 0}; }
};

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

Picture noisePicture(int w, int h, int channels, uint64_t seed) {
  Picture p{std::vector<uint8_t>(size_t(w) * h * channels), w, h, channels};
  for (size_t i = 0; i < p.pixels.size(); ++i) p.pixels[i] = uint8_t(mix(seed + i));
  return p;
}

/// A smooth picture with w·h distinct colours (for w, h <= 64).
Picture gradient(int w, int h) {
  Picture p{std::vector<uint8_t>(size_t(w) * h * 3), w, h, 3};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* q = &p.pixels[(size_t(y) * w + x) * 3];
      q[0] = uint8_t(x * 4), q[1] = uint8_t(y * 4), q[2] = uint8_t((x + y) * 2);
    }
  return p;
}

/// The colour's 24-bit octree key, bit by bit: bit 3i = R bit i, 3i+1 = G, 3i+2 = B.
uint32_t refKey(const uint8_t* c) {
  uint32_t k = 0;
  for (int bit = 0; bit < 8; ++bit)
    for (int a = 0; a < 3; ++a) k |= uint32_t((c[a] >> bit) & 1) << (3 * bit + a);
  return k;
}

QuantizedImage quantize(const Picture& p, uint32_t k, bool dither = false, const Execution& e = {}) {
  QuantizeOptions o;
  o.colors = k;
  o.dither = dither;
  return quantizeOctree(p.view(), o, e);
}

double mse(const Picture& p, const QuantizedImage& q) {
  const std::vector<uint8_t> out = expandQuantized(q);
  return imageMeanSquaredError(p.view(), {out.data(), q.width, q.height, q.has_alpha ? 4 : 3, 8, 0});
}

TEST(QuantizeOctree, FewColoursComeBackUnchanged) {
  for (int channels : {3, 4}) {
    Picture p = noisePicture(23, 17, channels, 5);
    // Reduce to 37 distinct colours (alpha stays random).
    for (size_t i = 0; i < size_t(p.width) * p.height; ++i) {
      const uint64_t c = mix(i) % 37;
      for (int a = 0; a < 3; ++a) p.pixels[i * channels + a] = uint8_t(mix(c * 3 + a));
    }
    for (uint32_t k : {37u, 38u, 256u, 1u << 24}) {
      const QuantizedImage q = quantize(p, k);
      EXPECT_EQ(q.unique_input_colors, 37u);
      EXPECT_EQ(q.colors(), 37u);
      EXPECT_EQ(expandQuantized(q), p.pixels);
      EXPECT_EQ(mse(p, q), 0.0);
    }
    EXPECT_LT(quantize(p, 36).colors(), 37u);
  }
}

TEST(QuantizeOctree, OneColourIsTheRoundedMean) {
  for (const Picture& p : {noisePicture(31, 9, 3, 1), gradient(40, 30), noisePicture(8, 8, 4, 2)}) {
    uint64_t sum[3] = {0, 0, 0};
    const uint64_t n = uint64_t(p.width) * p.height;
    for (uint64_t i = 0; i < n; ++i)
      for (int a = 0; a < 3; ++a) sum[a] += p.pixels[i * p.channels + a];
    const QuantizedImage q = quantize(p, 1);
    ASSERT_EQ(q.colors(), 1u);
    for (int a = 0; a < 3; ++a) EXPECT_EQ(q.palette[a], uint8_t(std::floor(double(sum[a]) / double(n) + 0.5)));
    for (uint32_t i : q.indices) EXPECT_EQ(i, 0u);
  }
}

// The leaves of an octree are disjoint cells: the colours of one palette entry
// lie in one cell (their longest common key prefix of whole digits), and no
// colour of another entry lies in it; the entry is the rounded mean of its pixels.
TEST(QuantizeOctree, PaletteIsAtMostKMeansOfDisjointCells) {
  const Picture p = noisePicture(61, 47, 3, 9);
  for (uint32_t k : {1u, 2u, 3u, 7u, 16u, 100u, 256u, 1000u}) {
    SCOPED_TRACE(k);
    const QuantizedImage q = quantize(p, k);
    ASSERT_GE(q.colors(), 1u);
    ASSERT_LE(q.colors(), k);
    const size_t n = q.indices.size();
    std::vector<uint64_t> sum(3 * q.colors(), 0), count(q.colors(), 0);
    std::vector<uint32_t> lo(q.colors(), UINT32_MAX), hi(q.colors(), 0);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t e = q.indices[i];
      ASSERT_LT(e, q.colors());
      for (int a = 0; a < 3; ++a) sum[3 * e + a] += p.pixels[3 * i + a];
      ++count[e];
      const uint32_t key = refKey(&p.pixels[3 * i]);
      lo[e] = std::min(lo[e], key), hi[e] = std::max(hi[e], key);
    }
    std::vector<std::pair<uint32_t, uint32_t>> cells;  // [begin, end) key range of each entry's cell
    for (uint32_t e = 0; e < q.colors(); ++e) {
      ASSERT_GT(count[e], 0u) << "palette entry " << e << " unused";
      for (int a = 0; a < 3; ++a)
        EXPECT_EQ(q.palette[3 * e + a], uint8_t(std::floor(double(sum[3 * e + a]) / double(count[e]) + 0.5)));
      int digits = 8;  // common prefix of whole digits of lo and hi
      while (digits > 0 && (lo[e] >> (3 * (8 - digits))) != (hi[e] >> (3 * (8 - digits)))) --digits;
      const uint32_t shift = 3 * (8 - digits);
      cells.push_back({(lo[e] >> shift) << shift, ((lo[e] >> shift) + 1) << shift});
    }
    for (size_t i = 0; i < n; ++i) {
      const uint32_t key = refKey(&p.pixels[3 * i]);
      for (uint32_t e = 0; e < q.colors(); ++e)
        if (e != q.indices[i]) {
          ASSERT_FALSE(cells[e].first <= key && key < cells[e].second) << "pixel " << i;
        }
    }
  }
}

// K1 < K2: the K2 leaves refine the K1 leaves (a level-L cell merged for K2 is
// merged for K1 too, or K2's level is deeper), and with exact means a finer
// partition never has a larger squared error. Rounding a mean to integers
// adds at most 3·0.5² per pixel over R, G, B, i.e. 0.25 to the MSE, hence
// mse(K2) <= mse(K1) + 0.25.
TEST(QuantizeOctree, ErrorDoesNotGrowWithK) {
  const Picture p = gradient(64, 64);
  double last = INFINITY;
  double at2 = 0, at256 = 0;
  for (uint32_t k : {1u, 2u, 3u, 4u, 6u, 8u, 16u, 32u, 50u, 64u, 128u, 256u, 512u, 1024u, 4096u}) {
    const double e = mse(p, quantize(p, k));
    EXPECT_LE(e, last + 0.25) << "K = " << k;
    last = e;
    if (k == 2) at2 = e;
    if (k == 256) at256 = e;
  }
  EXPECT_EQ(last, 0.0);  // 4096 distinct colours
  EXPECT_LT(at256, at2 / 20);
}

TEST(QuantizeOctree, DitherKeepsThePaletteAndLocalMeans) {
  const Picture p = gradient(64, 64);
  const QuantizedImage plain = quantize(p, 6), dithered = quantize(p, 6, true);
  EXPECT_EQ(plain.palette, dithered.palette);
  for (uint32_t e : dithered.indices) ASSERT_LT(e, dithered.colors());
  EXPECT_NE(plain.indices, dithered.indices);
  // Mean absolute error of 8×8 block means: error diffusion carries each
  // pixel's error to its neighbours, so blocks average closer to the input
  // (here about 12.7 against 23.4 without dithering; not to 0: six colours
  // do not span every input colour, and diffused values are clamped).
  auto blockError = [&](const QuantizedImage& q) {
    const std::vector<uint8_t> out = expandQuantized(q);
    double total = 0;
    for (int by = 0; by < 64; by += 8)
      for (int bx = 0; bx < 64; bx += 8)
        for (int a = 0; a < 3; ++a) {
          double d = 0;
          for (int y = by; y < by + 8; ++y)
            for (int x = bx; x < bx + 8; ++x) d += double(out[(size_t(y) * 64 + x) * 3 + a]) - p.pixels[(size_t(y) * 64 + x) * 3 + a];
          total += std::abs(d / 64);
        }
    return total / (64 * 3);
  };
  EXPECT_LT(blockError(dithered), blockError(plain));
}

/// Floyd–Steinberg as quantize.hpp states it, written plainly: errors in
/// sixteenths, value = clamp(input + ⌊(error + 8)/16⌋), nearest entry by a
/// scan (ties: smaller index), 7/3/5/1 to the right, below-left, below, below-right.
std::vector<uint32_t> refDither(const Picture& p, const std::vector<uint8_t>& palette) {
  const int w = p.width, h = p.height;
  std::vector<int64_t> err(size_t(w) * h * 3, 0);
  std::vector<uint32_t> out(size_t(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const size_t i = size_t(y) * w + x;
      int64_t v[3];
      for (int a = 0; a < 3; ++a)
        v[a] = std::clamp<int64_t>(p.pixels[i * p.channels + a] + int64_t(std::floor((err[3 * i + a] + 8) / 16.0)), 0, 255);
      uint32_t best = 0;
      int64_t best_d = INT64_MAX;
      for (uint32_t k = 0; k < palette.size() / 3; ++k) {
        int64_t d = 0;
        for (int a = 0; a < 3; ++a) d += (v[a] - palette[3 * k + a]) * (v[a] - palette[3 * k + a]);
        if (d < best_d) best_d = d, best = k;
      }
      out[i] = best;
      const int dx[4] = {1, -1, 0, 1}, dy[4] = {0, 1, 1, 1}, weight[4] = {7, 3, 5, 1};
      for (int t = 0; t < 4; ++t) {
        const int nx = x + dx[t], ny = y + dy[t];
        if (nx < 0 || nx >= w || ny >= h) continue;
        for (int a = 0; a < 3; ++a) err[3 * (size_t(ny) * w + nx) + a] += weight[t] * (v[a] - palette[3 * best + a]);
      }
    }
  return out;
}

// Small palettes are scanned, large ones searched with octreeKnn: both must
// pick what the plain scan picks.
TEST(QuantizeOctree, DitherMatchesAPlainFloydSteinberg) {
  const Picture p = noisePicture(64, 48, 3, 21);
  for (uint32_t k : {2u, 6u, 64u, 300u, 1000u}) {
    SCOPED_TRACE(k);
    const QuantizedImage q = quantize(p, k, true);
    if (k >= 300) {
      EXPECT_GT(q.colors(), 64u);  // the octreeKnn path
    }
    EXPECT_EQ(q.indices, refDither(p, q.palette));
  }
}

TEST(QuantizeOctree, SameOnEveryBackendAndPixelOrder) {
  const Picture p = noisePicture(97, 41, 4, 3);
  const QuantizedImage want = quantize(p, 50);
  for (const test::Variant& v : test::availableVariants()) {
    SCOPED_TRACE(v.name);
    const QuantizedImage got = quantize(p, 50, false, v.execution());
    EXPECT_EQ(got.palette, want.palette);
    EXPECT_EQ(got.indices, want.indices);
    EXPECT_EQ(got.alpha, want.alpha);
  }
  // The histogram is built before reducing: pixel order does not matter.
  Picture flipped = p;
  const size_t n = size_t(p.width) * p.height;
  for (size_t i = 0; i < n; ++i)
    std::copy_n(&p.pixels[(n - 1 - i) * 4], 4, &flipped.pixels[i * 4]);
  const QuantizedImage f = quantize(flipped, 50);
  EXPECT_EQ(f.palette, want.palette);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(f.indices[i], want.indices[n - 1 - i]);
}

TEST(QuantizeOctree, RefusesBadViewsAndCounts) {
  const uint16_t deep[12] = {};
  EXPECT_THROW(quantizeOctree(ImageView{deep, 2, 2, 3, 16, 0}, {}, {}), Error);
  const uint8_t gray[4] = {};
  EXPECT_THROW(quantizeOctree(ImageView{gray, 2, 2, 1, 8, 0}, {}, {}), Error);
  const Picture p = noisePicture(4, 4, 3, 1);
  QuantizeOptions zero;
  zero.colors = 0;
  try {
    quantizeOctree(p.view(), zero, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exitCode(), ExitCode::kUsage);
  }
  QuantizeOptions tiny;
  tiny.memory_budget = 64;
  EXPECT_THROW(quantizeOctree(p.view(), tiny, {}), ResourceError);
}

}  // namespace
