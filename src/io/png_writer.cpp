// PNG preview: the model projected (WriteOptions::projection), fitted to the
// image with a 2% margin, segments then polygons drawn in string order by the
// anti-aliased rasterizer (raster.hpp), written as 8-bit sRGB with libpng.
#include <png.h>

#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "io/mesh_common.hpp"
#include "io/projection.hpp"
#include "io/raster.hpp"
#include "io/writers.hpp"
#include "procgen/error.hpp"

namespace procgen::io {
namespace {

struct PngFailure {
  char message[256] = "libpng error";
};

void pngError(png_structp png, png_const_charp message) {
  auto* failure = static_cast<PngFailure*>(png_get_error_ptr(png));
  std::snprintf(failure->message, sizeof failure->message, "%s", message);
  png_longjmp(png, 1);
}

void pngWarning(png_structp, png_const_charp) {}

// Kept apart from C++ objects with destructors: longjmp must not skip them.
bool encodePng(std::FILE* file, int width, int height, const uint8_t* rgb, PngFailure& failure) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &failure, pngError, pngWarning);
  if (!png) return false;
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, info ? &info : nullptr);
    return false;
  }
  png_init_io(png, file);
  // Previews are rewritten often; level 6 with the default filters is a good trade.
  png_set_compression_level(png, 6);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_set_sRGB(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
  png_write_info(png, info);
  for (int y = 0; y < height; ++y)
    png_write_row(png, const_cast<png_bytep>(rgb + size_t(y) * size_t(width) * 3));
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

void writePng(const Geometry& geometry, const std::filesystem::path& path,
              const WriteOptions& options) {
  const int width = options.width, height = options.height;
  const Projection proj = options.projection;
  // Open first: a bad path should fail before the rendering work.
  std::FILE* file = std::fopen(path.string().c_str(), "wb");
  if (!file)
    throw OutputError("cannot open '" + path.string() + "' for writing: " + std::strerror(errno));

  Raster raster(width, height, options.background);
  Vec2 lo, hi;
  if (projectedBounds(geometry, proj, lo, hi)) {
    const float margin = 0.02f * std::min(width, height) + 0.5f * options.min_line_px;
    const PixelView view = fitPixelView(lo, hi, width, height, margin);
    const float min_radius = 0.5f * options.min_line_px;
    for (const Segment& s : geometry.segments) {
      const float radius = std::max(0.5f * std::fabs(s.width) * view.scale, min_radius);
      Vec3 color = paletteColor(s.color);
      raster.drawSegment(view.toPixel(project(proj, s.start)), view.toPixel(project(proj, s.end)),
                         radius, color);
    }
    std::vector<Vec2> points;
    for (size_t p = 0; p < geometry.polygonCount(); ++p) {
      if (!drawablePolygon(geometry, p)) continue;
      points.clear();
      for (uint64_t v = geometry.polygon_offsets[p]; v < geometry.polygon_offsets[p + 1]; ++v)
        points.push_back(view.toPixel(project(proj, geometry.polygon_vertices[v])));
      raster.fillPolygon(points.data(), points.size(), paletteColor(geometry.polygon_colors[p]));
    }
  }
  std::vector<uint8_t> rgb = raster.toRgb8();

  PngFailure failure;
  const bool encoded = encodePng(file, width, height, rgb.data(), failure);
  const bool flushed = std::fflush(file) == 0 && !std::ferror(file);
  const int err = errno;
  const bool closed = std::fclose(file) == 0;
  if (!encoded)
    throw OutputError("cannot write '" + path.string() + "': " + failure.message);
  if (!flushed || !closed)
    throw OutputError("cannot write '" + path.string() + "': " + std::strerror(err));
}

}  // namespace procgen::io
