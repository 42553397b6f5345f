// procgen quantize: octree colour quantization of 8-bit RGB(A) images to at
// most K colours (issue 18 point 6), and palette PNG output.
//
// Paper: M. Gervautz, W. Purgathofer, "A simple method for color quantization:
// octree quantization", New Trends in Computer Graphics (1988) — colours are
// the leaves of an 8-level octree whose level-l digit is bit 7 − l of R, G and
// B; leaves are merged into their parent, deepest level first, until at most K
// remain; the palette is the mean colour of each leaf. The seed
// (shared/seeds/004_ce32dc12e32b896e.txt, "Color quantization for images")
// motivates octrees with it. docs/octree.md, "Colour quantization", states
// exactly what is implemented; in short:
//  - key of a colour = keys.h's Morton interleave of (R, G, B) (bit 3i = R bit
//    i, 3i+1 = G, 3i+2 = B), so a level-l cell of the colour cube [0, 256)^3 is
//    key >> 3·(8 − l) — the 21-level point octree's digits, 8 levels deep;
//  - the histogram is built from the whole image first (radix sort of the
//    keys), so the result does not depend on pixel order;
//  - with L the deepest level whose cells number <= K, the leaves start as the
//    cells of level L + 1 and the level-L cells with more than one child are
//    merged, fewest pixels first (ties: smaller key), until at most K remain;
//  - palette entry = the leaf's mean colour rounded to nearest (half up), in
//    Morton order of the leaves; alpha is copied unchanged.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "procgen/backend.hpp"
#include "procgen/image.hpp"
#include "procgen/output.hpp"

namespace procgen {

struct QuantizeOptions {
  /// Most colours in the palette, 1 .. 2^24.
  uint32_t colors = 256;
  /// Floyd–Steinberg error diffusion (weights 7, 3, 5, 1 / 16, left to right,
  /// top to bottom; the nearest palette colour by squared RGB distance, ties
  /// by smaller index; a scan up to 64 colours, octreeKnn over more). Off:
  /// each pixel takes its leaf's colour.
  bool dither = false;
  /// Bytes the call may allocate (budget.hpp; 0 = half the physical memory).
  uint64_t memory_budget = 0;
};

/// An image as palette indices.
struct QuantizedImage {
  int width = 0;
  int height = 0;
  bool has_alpha = false;
  std::vector<uint8_t> palette;   ///< R G B per colour, 3 × colors()
  std::vector<uint32_t> indices;  ///< per pixel, row-major, top row first
  std::vector<uint8_t> alpha;     ///< per pixel when has_alpha
  uint64_t unique_input_colors = 0;  ///< distinct RGB triples of the input
  uint32_t colors() const { return uint32_t(palette.size() / 3); }
};

/// Quantizes `image` (8-bit, 3 or 4 channels, any row stride) to at most
/// options.colors colours. An image with at most K distinct colours comes
/// back unchanged (every colour is its own leaf). Throws Error(kUsage) for a
/// view that is not 8-bit RGB/RGBA or colors outside 1..2^24, ResourceError
/// before allocating beyond the budget (37 bytes per pixel, the most an
/// image of all-distinct colours needs). The sort
/// runs on `execution`'s backend; the result is the same on every backend
/// and thread count. Complexity: O(pixels) besides the sort, plus a nearest
/// search (O(min(K, 64)) or an octree query) per distinct dithered value.
QuantizedImage quantizeOctree(const ImageView& image, const QuantizeOptions& options, const Execution& execution);

/// The quantized image as 8-bit RGB (RGBA when it has alpha) pixels, packed.
std::vector<uint8_t> expandQuantized(const QuantizedImage& image);

/// Mean squared error over the R, G, B samples of two 8-bit images of the
/// same size (3 or 4 channels each; alpha ignored), on the 0..255 scale.
double imageMeanSquaredError(const ImageView& a, const ImageView& b);

/// PSNR in dB for 8-bit samples: 10 log10(255² / mse); infinity when mse = 0.
double peakSignalToNoise(double mse);

/// Encodes `image` as a PNG into `sink`: an 8-bit palette PNG when it fits in
/// 256 entries — with alpha, one entry per distinct (colour, alpha) pair and
/// a tRNS chunk — else 8-bit RGB or RGBA. Returns the PNG colour type written
/// (3 palette, 2 RGB, 6 RGBA). Throws as encodePng.
int encodeQuantizedPng(const QuantizedImage& image, ByteSink& sink, const PngOptions& options = {});

}  // namespace procgen
