// Octree colour quantization (include/procgen/quantize.hpp).
//
// Paper: M. Gervautz, W. Purgathofer, "A simple method for color quantization:
// octree quantization" (1988): an 8-level octree over the RGB bits, leaves
// reduced into their parents deepest first until at most K remain, palette =
// the leaves' mean colours. Motivated by the seed
// (shared/seeds/004_ce32dc12e32b896e.txt, "Color quantization for images").
//
// Stages:
//  1. keys: each pixel's colour as a Morton key (keys.h's interleave, 8 bits
//     per axis: the colour cube's level-l cell is key >> 3·(8 − l));
//  2. histogram: radix sort of (key, pixel) on the chosen backend
//     (primitives), runs of equal keys = the distinct colours in Morton order;
//  3. reduction over the histogram, not during insertion as in the paper's
//     memory-bounded variant, so the result does not depend on pixel order:
//     L = the deepest level with at most K cells; leaves start as the cells of
//     level L + 1; level-L cells with more than one child merge, fewest pixels
//     first (ties: smaller key), until at most K leaves remain;
//  4. palette = each leaf's mean colour (rounded half up), leaves in Morton
//     order; each pixel takes its leaf (or, dithering, the nearest palette
//     colour of its error-diffused value: Floyd and Steinberg, "An adaptive
//     algorithm for spatial greyscale", Proc. SID 17 (1976); over more than 64
//     colours the nearest is an octreeKnn query on the palette).
// Why not buildOctree: its root cube is the colours' bounding box and its
// leaves split by point count, so its cells do not fall on the RGB bit
// boundaries the method needs; the sorted keys are the colour octree already
// (every cell a contiguous run), so the key layout and the sort are shared and
// the tree stays implicit.
#include "procgen/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "octree/keys.h"
#include "procgen/octree.hpp"
#include "primitives/primitives.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/memory.hpp"

namespace procgen {
namespace {

constexpr uint32_t kMaxColors = 1u << 24;

[[noreturn]] void badView(const std::string& why) { throw Error("cannot quantize: " + why, ExitCode::kUsage); }

size_t checkedStride(const ImageView& v) {
  if (!v.pixels) badView("no pixels");
  if (v.width < 1 || v.height < 1) badView("size must be positive");
  if (v.bit_depth != 8 || (v.channels != 3 && v.channels != 4))
    badView("needs 8-bit RGB or RGBA pixels, got " + std::to_string(v.channels) + " channels of " +
            std::to_string(v.bit_depth) + " bits");
  const size_t row = size_t(v.width) * size_t(v.channels);
  const size_t stride = v.row_stride ? v.row_stride : row;
  if (stride < row) badView("row stride shorter than a row");
  return stride;
}

uint32_t colorKey(const uint8_t* p) { return uint32_t(pgOctreeEncode(p[0], p[1], p[2])); }

/// Nearest palette entry by squared RGB distance, ties by smaller index: a
/// scan of small palettes, procgen's octree kNN (k = 1, the same distance and
/// tie rule, exact on these integers) over large ones, so that dithering to
/// thousands of colours stays O(log K) per distinct value instead of O(K).
class NearestColour {
 public:
  explicit NearestColour(const std::vector<uint8_t>& palette) : palette_(palette) {
    if (palette.size() / 3 <= kScanColours) return;
    xyz_.assign(palette.begin(), palette.end());
    OctreeOptions o;
    o.leaf_size = 8;
    o.sorted_points = true;
    tree_ = buildOctree(OctreePoints::of(xyz_), o, Execution{});
  }
  uint32_t operator()(int r, int g, int b) const {
    if (xyz_.empty()) {
      uint32_t best = 0;
      int best_d = INT32_MAX;
      for (uint32_t k = 0; k < palette_.size() / 3; ++k) {
        const int dr = r - palette_[3 * k], dg = g - palette_[3 * k + 1], db = b - palette_[3 * k + 2];
        const int d = dr * dr + dg * dg + db * db;
        if (d < best_d) best_d = d, best = k;
      }
      return best;
    }
    const double q[3] = {double(r), double(g), double(b)};
    uint32_t best = 0;
    octreeKnn(tree_, OctreePoints::of(xyz_), q, 1, 1, &best, nullptr, Execution{});
    return best;
  }

 private:
  static constexpr size_t kScanColours = 64;
  const std::vector<uint8_t>& palette_;
  std::vector<double> xyz_;
  Octree tree_;
};

/// Floyd–Steinberg over the whole image in raster order; errors in 1/16 units.
void dither(const ImageView& v, size_t stride, QuantizedImage& q) {
  const size_t w = size_t(v.width);
  std::vector<int32_t> cur(3 * (w + 2), 0), next(3 * (w + 2), 0);
  std::unordered_map<uint32_t, uint32_t> cache;
  const NearestColour nearest(q.palette);
  const auto* base = static_cast<const uint8_t*>(v.pixels);
  for (size_t y = 0; y < size_t(v.height); ++y) {
    const uint8_t* row = base + y * stride;
    for (size_t x = 0; x < w; ++x) {
      int value[3];
      for (int c = 0; c < 3; ++c)
        value[c] = std::clamp(int(row[x * size_t(v.channels) + c]) + ((cur[3 * (x + 1) + c] + 8) >> 4), 0, 255);
      const uint32_t key = uint32_t(value[0]) << 16 | uint32_t(value[1]) << 8 | uint32_t(value[2]);
      auto [it, fresh] = cache.try_emplace(key, 0);
      if (fresh) it->second = nearest(value[0], value[1], value[2]);
      const uint32_t k = it->second;
      q.indices[y * w + x] = k;
      for (int c = 0; c < 3; ++c) {
        const int32_t e = value[c] - int(q.palette[3 * k + c]);
        cur[3 * (x + 2) + c] += 7 * e;
        next[3 * x + c] += 3 * e;
        next[3 * (x + 1) + c] += 5 * e;
        next[3 * (x + 2) + c] += e;
      }
    }
    std::swap(cur, next);
    std::fill(next.begin(), next.end(), 0);
  }
}

}  // namespace

QuantizedImage quantizeOctree(const ImageView& image, const QuantizeOptions& options, const Execution& execution) {
  const size_t stride = checkedStride(image);
  if (options.colors < 1 || options.colors > kMaxColors)
    throw Error("colors must be in 1..16777216, got " + std::to_string(options.colors), ExitCode::kUsage);
  const uint64_t w = uint64_t(image.width), n = w * uint64_t(image.height);
  if (n > kMaxColors * 256ull - 1) throw Error("cannot quantize more than 2^32 - 1 pixels");
  // Per pixel: key, value, the sort's scratch (key + value), index, alpha
  // (21 bytes); per distinct colour (at most one per pixel): key, run start,
  // leaf and cell (16 bytes).
  requireMemory("colour quantization", checkedMul(n, 37).value_or(UINT64_MAX), options.memory_budget);
  const auto* base = static_cast<const uint8_t*>(image.pixels);
  const int ch = image.channels;

  QuantizedImage q;
  q.width = image.width;
  q.height = image.height;
  q.has_alpha = ch == 4;
  q.indices.resize(n);
  if (q.has_alpha) q.alpha.resize(n);

  // 1–2. Keys and the histogram.
  OverwriteVector<uint32_t> keys(n), values(n);
  for (uint64_t y = 0; y < uint64_t(image.height); ++y)
    for (uint64_t x = 0; x < w; ++x) {
      const uint8_t* p = base + y * stride + x * uint64_t(ch);
      keys[y * w + x] = colorKey(p);
      values[y * w + x] = uint32_t(y * w + x);
      if (q.has_alpha) q.alpha[y * w + x] = p[3];
    }
  {
    primitives::RadixScratch scratch;
    primitives::radixSort(execution, keys.data(), values.data(), n, scratch);
  }
  std::vector<uint32_t> unique_key;     // distinct colours, Morton order
  std::vector<uint32_t> run_begin;      // first sorted position of each (n < 2^32)
  for (uint64_t j = 0; j < n; ++j) {
    if (j == 0 || keys[j] != keys[j - 1]) {
      unique_key.push_back(keys[j]);
      run_begin.push_back(uint32_t(j));
    }
  }
  const uint64_t unique = unique_key.size();
  q.unique_input_colors = unique;
  run_begin.push_back(uint32_t(n));
  auto pixelsOf = [&](uint64_t u) { return uint64_t(run_begin[u + 1] - run_begin[u]); };

  // 3. The leaf of every distinct colour.
  std::vector<uint32_t> leaf_of(unique);
  uint32_t leaves = 0;
  if (unique <= options.colors) {
    for (uint64_t u = 0; u < unique; ++u) leaf_of[u] = uint32_t(u);
    leaves = uint32_t(unique);
  } else {
    // Cells per level (level 8 = the distinct colours).
    auto cellsAt = [&](int level) {
      const int shift = 3 * (8 - level);
      uint64_t cells = 0;
      for (uint64_t u = 0; u < unique; ++u) cells += u == 0 || (unique_key[u] >> shift) != (unique_key[u - 1] >> shift);
      return cells;
    };
    int level = 7;
    while (cellsAt(level) > options.colors) --level;  // level 0 has one cell <= K
    const int shift = 3 * (8 - level), child_shift = shift - 3;
    // Level-`level` cells: pixel count and number of children (level + 1 cells).
    struct Cell {
      uint32_t prefix;
      uint64_t pixels = 0;
      uint32_t children = 0;
    };
    std::vector<Cell> cells;
    std::vector<uint32_t> cell_of(unique);
    uint64_t leaf_count = 0;  // level + 1 cells
    for (uint64_t u = 0; u < unique; ++u) {
      const uint32_t prefix = unique_key[u] >> shift;
      if (cells.empty() || cells.back().prefix != prefix) cells.push_back({prefix});
      const bool new_child = u == 0 || (unique_key[u] >> child_shift) != (unique_key[u - 1] >> child_shift);
      cells.back().children += new_child;
      leaf_count += new_child;
      cells.back().pixels += pixelsOf(u);
      cell_of[u] = uint32_t(cells.size() - 1);
    }
    std::vector<uint32_t> candidates;
    for (uint32_t c = 0; c < cells.size(); ++c)
      if (cells[c].children > 1) candidates.push_back(c);
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](uint32_t a, uint32_t b) { return cells[a].pixels < cells[b].pixels; });  // ties: key order
    std::vector<uint8_t> merged(cells.size(), 0);
    for (uint32_t c : candidates) {
      if (leaf_count <= options.colors) break;
      merged[c] = 1;
      leaf_count -= cells[c].children - 1;
    }
    // Leaves in Morton order: a merged cell is one leaf, else each child is.
    uint64_t last = UINT64_MAX;
    for (uint64_t u = 0; u < unique; ++u) {
      const uint32_t c = cell_of[u];
      const uint64_t id = merged[c] ? (uint64_t(1) << 40 | c) : (unique_key[u] >> child_shift);
      if (id != last) ++leaves, last = id;
      leaf_of[u] = leaves - 1;
    }
  }

  // 4. Palette: mean colour of each leaf, half up.
  std::vector<uint64_t> sum(3 * uint64_t(leaves), 0), count(leaves, 0);
  for (uint64_t u = 0; u < unique; ++u) {
    const uint32_t key = unique_key[u], l = leaf_of[u];
    const uint32_t rgb[3] = {pgOctreeCompact(key), pgOctreeCompact(uint64_t(key) >> 1), pgOctreeCompact(uint64_t(key) >> 2)};
    for (int c = 0; c < 3; ++c) sum[3 * l + c] += pixelsOf(u) * rgb[c];
    count[l] += pixelsOf(u);
  }
  q.palette.resize(3 * uint64_t(leaves));
  for (uint32_t l = 0; l < leaves; ++l)
    for (int c = 0; c < 3; ++c) q.palette[3 * l + c] = uint8_t((2 * sum[3 * l + c] + count[l]) / (2 * count[l]));

  if (options.dither) {
    dither(image, stride, q);
  } else {
    for (uint64_t u = 0; u < unique; ++u)
      for (uint64_t j = run_begin[u]; j < run_begin[u + 1]; ++j) q.indices[values[j]] = leaf_of[u];
  }
  return q;
}

std::vector<uint8_t> expandQuantized(const QuantizedImage& q) {
  const int ch = q.has_alpha ? 4 : 3;
  std::vector<uint8_t> out(q.indices.size() * size_t(ch));
  for (size_t i = 0; i < q.indices.size(); ++i) {
    for (int c = 0; c < 3; ++c) out[i * ch + c] = q.palette[3 * size_t(q.indices[i]) + c];
    if (q.has_alpha) out[i * ch + 3] = q.alpha[i];
  }
  return out;
}

double imageMeanSquaredError(const ImageView& a, const ImageView& b) {
  const size_t sa = checkedStride(a), sb = checkedStride(b);
  if (a.width != b.width || a.height != b.height) badView("images of different sizes");
  uint64_t sum = 0;
  for (int y = 0; y < a.height; ++y) {
    const auto* ra = static_cast<const uint8_t*>(a.pixels) + size_t(y) * sa;
    const auto* rb = static_cast<const uint8_t*>(b.pixels) + size_t(y) * sb;
    for (int x = 0; x < a.width; ++x)
      for (int c = 0; c < 3; ++c) {
        const int64_t d = int64_t(ra[size_t(x) * a.channels + c]) - int64_t(rb[size_t(x) * b.channels + c]);
        sum += uint64_t(d * d);
      }
  }
  return double(sum) / (3.0 * double(a.width) * double(a.height));
}

double peakSignalToNoise(double mse) { return mse > 0 ? 10.0 * std::log10(255.0 * 255.0 / mse) : INFINITY; }

}  // namespace procgen
