// procgen flames: rendering a genome (procgen/flame.hpp) to an image.
//
// Paper: "Fractal flames on the GPU" (Schied et al., shared/seeds/003_*.txt).
// Three stages, each callable on its own:
//   1. flameHistogramLayout — the camera: histogram size (supersampled, with
//      flam3's gutter for the filters), world bounds, sample count;
//   2. iterateFlame — the chaos game into the histogram. FlameMethod::kPresorted
//      is the paper's divergence-free method (points grouped by xform, the
//      point buffer permuted between iterations; SIMD batches of one xform on
//      the CPU); kNaive picks a random xform per point per iteration (the
//      paper's baseline and the reference);
//   3. toneMapFlame — flam3's density estimation, log-density scaling, spatial
//      filter, gamma/vibrancy/highlight_power/background → 8- or 16-bit RGBA.
//
// Determinism: the histogram depends only on (genome, options, seed): serial
// and cpu give bit-identical histograms at any thread count; opencl agrees
// within the image tolerance the tests state.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "procgen/backend.hpp"
#include "procgen/flame.hpp"

namespace procgen {

enum class FlameMethod : uint8_t { kPresorted, kNaive };

struct FlameRenderOptions {
  std::optional<double> quality;    ///< overrides the genome's `quality`
  double quality_scale = 1.0;       ///< flam3-render's `qs`: multiplies the quality
  /// Output size; 0 = the genome's. A different size rescales the camera as
  /// flam3-render's `ss` does: scale (pixels per unit) follows the width.
  int width = 0, height = 0;
  double size_scale = 1.0;          ///< flam3-render's `ss`: size and scale × ss
  std::optional<int> supersample;   ///< overrides the genome's
  uint64_t seed = 1;
  FlameMethod method = FlameMethod::kPresorted;
  bool earlyclip = false;           ///< flam3's earlyclip: gamma/clip before the spatial filter
  bool transparency = false;        ///< alpha from density (else opaque over the background)
  int bits_per_channel = 8;         ///< 8 or 16
  uint64_t memory_budget = 0;       ///< 0 = defaultMemoryBudget() (procgen/budget.hpp)
  /// Called now and then from the calling thread with the fraction done (0..1).
  std::function<void(double)> progress;
};

/// The resolved camera and histogram geometry of one render (flam3 rect.c).
struct FlameHistogramLayout {
  int image_width = 0, image_height = 0;  ///< output pixels
  int supersample = 1;
  int gutter = 0;                         ///< histogram cells beyond the image on every side
  int width = 0, height = 0;              ///< histogram cells: image × supersample + 2·gutter
  /// World rectangle covered by the histogram (gutter included), before the
  /// rotation about (center_x, center_y): x0, y0, x1, y1. Histogram row
  /// grows with world y (flam3: +y is down in the image).
  double bounds[4] = {0, 0, 0, 0};
  double center_x = 0, center_y = 0;
  double rotate_radians = 0;
  double pixels_per_unit = 0;             ///< output pixels per world unit (zoom and size applied)
  double sample_density = 0;              ///< quality × 4^zoom (× qs)
  uint64_t samples = 0;                   ///< plotted points: sample_density × image_width × image_height
  int spatial_filter_width = 0;           ///< flam3's fwidth (histogram cells)
  int de_max_width = 0;                   ///< flam3's max_gnm_de_fw
};

/// Resolves options against the genome. Throws Error (kUsage) for sizes,
/// qualities or supersampling that are not positive and finite; ResourceError
/// (exit 2) when the histogram would exceed the memory budget — before
/// anything is allocated.
FlameHistogramLayout flameHistogramLayout(const FlameGenome& genome, const FlameRenderOptions& options);

/// flam3's bucket: colour components (palette 0..255 × opacity), palette
/// alpha, and the hit count × 255 × opacity (rect.c, "b[0][0..4]").
struct FlameBucket {
  float red = 0, green = 0, blue = 0, alpha = 0, count = 0;
};

struct FlameHistogram {
  FlameHistogramLayout layout;
  std::vector<FlameBucket> buckets;  ///< layout.width × layout.height, row-major
  uint64_t samples = 0;              ///< points plotted (before opacity)
  uint64_t bad_values = 0;           ///< NaN / huge results replaced (flam3's badvals)
  double iterations = 0;             ///< chaos-game steps taken (fuse included)
};

/// Runs the chaos game. Throws as flameHistogramLayout, BackendUnavailableError.
FlameHistogram iterateFlame(const FlameGenome& genome, const FlameRenderOptions& options,
                            const Execution& execution);

/// An RGBA image, top row first, 8- or 16-bit samples (native uint16_t).
struct FlameImage {
  int width = 0, height = 0;
  int bits_per_channel = 8;
  int channels = 4;  ///< RGBA with transparency, else RGB
  std::vector<uint8_t> pixels8;
  std::vector<uint16_t> pixels16;
};

/// flam3's tone mapping of `histogram` (laid out for `genome` and `options`
/// by flameHistogramLayout): log density or density estimation, earlyclip,
/// the spatial filter, gamma/vibrancy/highlight_power/background; uses
/// options.earlyclip, transparency (RGBA, else RGB) and bits_per_channel.
/// Serial and cpu give identical bytes at any thread count; opencl runs the
/// cpu path on the host. Throws Error: kUsage when the histogram does not
/// match its layout or the genome's filter width, or bits are not 8/16;
/// kBadInput for genome values flam3 refuses; ResourceError over the budget.
/// docs/flames.md "Tone mapping" has the formulas.
FlameImage toneMapFlame(const FlameGenome& genome, const FlameHistogram& histogram,
                        const FlameRenderOptions& options, const Execution& execution);

struct FlameRenderStats {
  uint64_t samples = 0;
  uint64_t bad_values = 0;
  double iter_ms = 0, filter_ms = 0, total_ms = 0;
};

/// iterateFlame + toneMapFlame.
FlameImage renderFlame(const FlameGenome& genome, const FlameRenderOptions& options,
                       const Execution& execution, FlameRenderStats* stats = nullptr);

/// iterateFlame over the ranks of an MPI job (procgen/distributed.hpp):
/// collective. Each round of work units is split into contiguous blocks over
/// the ranks; every record goes to the rank owning its histogram band (an
/// all-to-all), which adds them in unit order; the bands are gathered on rank
/// 0. Rank 0's histogram is bit-identical to iterateFlame's on serial and
/// cpu for every rank count; the other ranks get the layout and the totals
/// with no buckets. Backends serial and cpu (opencl throws Error, kUsage).
/// One rank: iterateFlame. Communication: 8 bytes per plotted point
/// (docs/scaling.md). Throws as iterateFlame.
FlameHistogram iterateFlameAcrossRanks(const FlameGenome& genome, const FlameRenderOptions& options,
                                       const Execution& execution);

/// renderFlame over the ranks: iterateFlameAcrossRanks, then the tone mapping
/// on rank 0 (the image is empty on the other ranks); stats on every rank.
FlameImage renderFlameAcrossRanks(const FlameGenome& genome, const FlameRenderOptions& options,
                                  const Execution& execution, FlameRenderStats* stats = nullptr);

}  // namespace procgen
