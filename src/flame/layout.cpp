// The camera and histogram geometry of a flame render, as flam3's
// render_rectangle (rect.c) sets it up: the spatial filter's width
// (filters.c flam3_create_spatial_filter), the gutter that both filters need
// beyond the image, the world bounds the histogram covers and the number of
// samples. Paper: shared/seeds/003_*.txt ("Rendering"); format notes:
// shared/reference/flam3/FLAM3_SPEC.md.
#include <cmath>
#include <numbers>
#include <string>

#include "flame/filters.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/flame_render.hpp"

namespace procgen {
namespace {

[[noreturn]] void usage(const std::string& message) { throw Error("flame: " + message, ExitCode::kUsage); }

bool finitePositive(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

FlameHistogramLayout flameHistogramLayout(const FlameGenome& genome, const FlameRenderOptions& options) {
  if (!finitePositive(options.size_scale)) usage("size scale must be positive and finite");
  if (!finitePositive(options.quality_scale)) usage("quality scale must be positive and finite");
  if ((options.width == 0) != (options.height == 0)) usage("give both width and height, or neither");
  if (options.width < 0 || options.height < 0) usage("width and height must be positive");

  FlameHistogramLayout layout;
  double scale = genome.scale;
  double width = genome.width, height = genome.height;
  if (options.width > 0) {
    // Scale follows the width, as flam3-render's ss does for both.
    scale *= static_cast<double>(options.width) / genome.width;
    width = options.width;
    height = options.height;
  }
  width = std::round(width * options.size_scale);
  height = std::round(height * options.size_scale);
  scale *= options.size_scale;
  constexpr double kMaxSide = 1 << 20;
  if (!(width >= 1 && height >= 1 && width <= kMaxSide && height <= kMaxSide))
    usage("image size " + std::to_string(width) + "x" + std::to_string(height) + " is out of range (1 .. 2^20)");
  layout.image_width = static_cast<int>(width);
  layout.image_height = static_cast<int>(height);

  int supersample = options.supersample.value_or(genome.supersample);
  if (supersample < 1 || supersample > 64) usage("supersample must be 1 .. 64");
  layout.supersample = supersample;

  double quality = options.quality.value_or(genome.quality) * options.quality_scale;
  if (!finitePositive(quality)) usage("quality must be positive and finite");
  if (!std::isfinite(genome.zoom) || std::fabs(genome.zoom) > 60) usage("zoom is out of range");
  const double zoom_factor = std::pow(2.0, genome.zoom);
  layout.pixels_per_unit = scale * zoom_factor;
  if (!finitePositive(layout.pixels_per_unit)) usage("scale must be positive and finite");
  layout.sample_density = quality * zoom_factor * zoom_factor;
  const double samples = layout.sample_density * width * height;
  if (!(samples >= 1 && samples < 1.8e19)) usage("quality × size gives no samples, or too many to count");
  layout.samples = static_cast<uint64_t>(samples);

  // Spatial filter width (flam3_create_spatial_filter; pixel aspect 1).
  if (!(genome.filter_radius >= 0) || !std::isfinite(genome.filter_radius) || genome.filter_radius > 1e4)
    usage("filter radius must be finite and ≥ 0");
  const double fw = 2.0 * flame::spatialFilterSupport(genome.filter_shape) * supersample * genome.filter_radius;
  int fwidth = static_cast<int>(fw) + 1;
  if ((fwidth ^ supersample) & 1) ++fwidth;  // same parity as the supersampling
  layout.spatial_filter_width = fwidth;
  int gutter = (fwidth - supersample) / 2;

  // Density estimation needs its own margin (rect.c max_gnm_de_fw).
  if (!(genome.estimator_radius >= 0) || genome.estimator_radius > 1e4)
    usage("estimator_radius must be finite and ≥ 0");
  int de_width = static_cast<int>(std::ceil(genome.estimator_radius)) * supersample;
  if (de_width > 0) de_width += supersample - 1;
  layout.de_max_width = de_width;
  if (de_width > gutter) gutter = de_width;
  layout.gutter = gutter;

  const uint64_t hist_w = static_cast<uint64_t>(width) * supersample + 2 * static_cast<uint64_t>(gutter);
  const uint64_t hist_h = static_cast<uint64_t>(height) * supersample + 2 * static_cast<uint64_t>(gutter);
  if (hist_w > INT32_MAX || hist_h > INT32_MAX) usage("the histogram would be wider than 2^31 cells");
  auto cells = checkedMul(hist_w, hist_h);
  auto bytes = cells ? checkedMul(*cells, sizeof(FlameBucket)) : std::nullopt;
  requireMemory("flame histogram", bytes ? *bytes : UINT64_MAX, options.memory_budget);
  layout.width = static_cast<int>(hist_w);
  layout.height = static_cast<int>(hist_h);

  // World bounds covered by the histogram (rect.c fic.bounds, no field shift).
  const double ppu = layout.pixels_per_unit;
  const double t0 = gutter / (supersample * ppu);
  const double corner0 = genome.center_x - width / ppu / 2.0;
  const double corner1 = genome.center_y - height / ppu / 2.0;
  layout.bounds[0] = corner0 - t0;
  layout.bounds[1] = corner1 - t0;
  layout.bounds[2] = corner0 + width / ppu + t0;
  layout.bounds[3] = corner1 + height / ppu + t0;
  layout.center_x = genome.center_x;
  layout.center_y = genome.center_y;
  layout.rotate_radians = genome.rotate * std::numbers::pi / 180.0;
  return layout;
}

}  // namespace procgen
