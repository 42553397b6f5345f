// Decodes written PNGs with libpng and checks pixels against coverage and
// geometry derived by hand: where the fitted model must land, areas, order.
#include <png.h>

#include "io/io_test_util.hpp"

namespace procgen::iotest {
namespace {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  const uint8_t* at(int x, int y) const { return &rgb[(size_t(y) * width + x) * 3]; }
};

Image decode(const std::filesystem::path& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  Image out;
  if (!png_image_begin_read_from_file(&image, path.string().c_str())) {
    ADD_FAILURE() << image.message;
    return out;
  }
  image.format = PNG_FORMAT_RGB;
  out.width = int(image.width);
  out.height = int(image.height);
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  EXPECT_TRUE(png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr)) << image.message;
  return out;
}

std::array<int, 3> bytes(Vec3 c) {
  return {int(std::lround(c.x * 255)), int(std::lround(c.y * 255)), int(std::lround(c.z * 255))};
}

// Fraction of `color` painted over `background` at a pixel, from the channel
// with the largest contrast.
double coverage(const Image& img, int x, int y, Vec3 color, Vec3 background) {
  auto c = bytes(color), b = bytes(background);
  int best = 0;
  for (int k = 1; k < 3; ++k)
    if (std::abs(c[k] - b[k]) > std::abs(c[best] - b[best])) best = k;
  return double(b[best] - img.at(x, y)[best]) / double(b[best] - c[best]);
}

bool isColor(const Image& img, int x, int y, Vec3 color, int tolerance = 1) {
  auto c = bytes(color);
  for (int k = 0; k < 3; ++k)
    if (std::abs(img.at(x, y)[k] - c[k]) > tolerance) return false;
  return true;
}

double totalCoverage(const Image& img, Vec3 color, Vec3 background) {
  double sum = 0;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) sum += coverage(img, x, y, color, background);
  return sum;
}

TEST(PngWriter, ThickHorizontalSegmentIsFittedAndCovered) {
  TempDir dir;
  Geometry g;
  g.segments.push_back(makeSegment({0, 0, 0}, {10, 0, 0}, 1.0f, 0));
  WriteOptions options;
  options.width = options.height = 200;
  writeGeometry(g, dir / "line.png", options);
  Image img = decode(dir / "line.png");
  ASSERT_EQ(img.width, 200);
  ASSERT_EQ(img.height, 200);
  const Vec3 color = paletteColor(0), bg = options.background;
  // By hand: the capsule spans 11 × 1 model units; margin 0.02·200 + 0.5 = 4.5 px;
  // scale = 191/11 px per unit; centred at (100, 100); radius 0.5·scale ≈ 8.68 px.
  const double scale = 191.0 / 11.0, r = 0.5 * scale;
  EXPECT_TRUE(isColor(img, 100, 100, color));
  for (int y = 93; y <= 106; ++y) EXPECT_TRUE(isColor(img, 100, y, color)) << y;
  for (int y : {0, 50, 89, 111, 150, 199}) EXPECT_TRUE(isColor(img, 100, y, bg)) << y;
  for (auto [x, y] : {std::pair{0, 0}, {199, 0}, {0, 199}, {199, 199}})
    EXPECT_TRUE(isColor(img, x, y, bg));
  // The model touches the margins: first/last painted columns of the middle row.
  int first = -1, last = -1;
  for (int x = 0; x < 200; ++x)
    if (coverage(img, x, 100, color, bg) > 0.02) {
      if (first < 0) first = x;
      last = x;
    }
  EXPECT_NEAR(first, 4, 1);
  EXPECT_NEAR(last, 195, 1);
  // Anti-aliased total matches the capsule's area in pixels within 1%.
  const double area = 2 * r * (10 * scale) + M_PI * r * r;
  EXPECT_NEAR(totalCoverage(img, color, bg), area, 0.01 * area);
}

TEST(PngWriter, SquarePolygonCoversItsInteriorWithAntialiasedEdges) {
  TempDir dir;
  Geometry g;
  addPolygon(g, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}}, 1);
  WriteOptions options;
  options.width = options.height = 100;
  writeGeometry(g, dir / "square.png", options);
  Image img = decode(dir / "square.png");
  const Vec3 color = paletteColor(1), bg = options.background;
  // Margin 2.5 px: the square spans pixels [2.5, 97.5] in x and y.
  for (int y = 3; y <= 96; y += 7)
    for (int x = 3; x <= 96; x += 7) EXPECT_TRUE(isColor(img, x, y, color)) << x << "," << y;
  for (auto [x, y] : {std::pair{0, 0}, {99, 0}, {0, 99}, {99, 99}, {1, 50}, {98, 50}})
    EXPECT_TRUE(isColor(img, x, y, bg)) << x << "," << y;
  // Edge pixels are half covered; corner pixels a quarter.
  EXPECT_NEAR(coverage(img, 2, 50, color, bg), 0.5, 0.02);
  EXPECT_NEAR(coverage(img, 97, 50, color, bg), 0.5, 0.02);
  EXPECT_NEAR(coverage(img, 50, 2, color, bg), 0.5, 0.02);
  EXPECT_NEAR(coverage(img, 2, 2, color, bg), 0.25, 0.02);
  EXPECT_NEAR(totalCoverage(img, color, bg), 95.0 * 95.0, 0.002 * 95 * 95);
}

TEST(PngWriter, TriangleAreaIsIndependentOfOrientation) {
  TempDir dir;
  WriteOptions options;
  options.width = 300;
  options.height = 200;
  std::vector<Vec3> tri{{0, 0, 0}, {3, 0.4f, 0}, {1.2f, 2, 0}};
  Geometry ccw, cw;
  addPolygon(ccw, tri, 2);
  addPolygon(cw, {tri[2], tri[1], tri[0]}, 2);
  writeGeometry(ccw, dir / "ccw.png", options);
  writeGeometry(cw, dir / "cw.png", options);
  Image a = decode(dir / "ccw.png"), b = decode(dir / "cw.png");
  EXPECT_EQ(a.rgb, b.rgb);
  // Fit by hand: bounds 3 × 2 units, margin 0.02·200 + 0.5 = 4.5 px → scale = min(291/3, 191/2).
  const double scale = std::min(291.0 / 3.0, 191.0 / 2.0);
  const double area = 0.5 * std::fabs(3.0 * 2.0 - 0.4 * 1.2) * scale * scale;
  EXPECT_NEAR(totalCoverage(a, paletteColor(2), options.background), area, 0.003 * area);
}

TEST(PngWriter, LaterSegmentsDrawOverEarlierOnes) {
  TempDir dir;
  Geometry g;
  g.segments.push_back(makeSegment({-1, 0, 0}, {1, 0, 0}, 0.2f, 5));
  g.segments.push_back(makeSegment({0, -1, 0}, {0, 1, 0}, 0.2f, 7));
  WriteOptions options;
  options.width = options.height = 101;
  writeGeometry(g, dir / "cross.png", options);
  Image img = decode(dir / "cross.png");
  EXPECT_TRUE(isColor(img, 50, 50, paletteColor(7)));
  EXPECT_TRUE(isColor(img, 20, 50, paletteColor(5)));
  EXPECT_TRUE(isColor(img, 50, 20, paletteColor(7)));
}

/// `g` written as a 120 × 120 PNG with the default options, decoded.
Image drawn120(const Geometry& g) {
  TempDir dir;
  WriteOptions options;
  options.width = options.height = 120;
  writeGeometry(g, dir / "drawn.png", options);
  return decode(dir / "drawn.png");
}

/// Pixels of `img` that are `color` (within one step a channel).
int pixelsOf(const Image& img, Vec3 color) {
  int n = 0;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) n += isColor(img, x, y, color);
  return n;
}

// A stroke far wider than the model (`--width 1e38`) covers the whole view,
// and the view is still fitted to the model (issue 16): the widths grow the
// bounds by at most the centre lines' extent. By hand: centre lines x in
// [0, 1], y = 0, extent 1; bounds x in [-1, 2], y in [-1, 1]; 120 × 120,
// margin 0.02·120 + 0.5 = 2.9 px, scale = 114.2 / 3 px per unit; the thin
// stroke (width 0.1: radius 1.9 px) on top runs from x = 60 − scale/2 to
// 60 + scale/2 along y = 60. The old fit (bounds ±5e37) made the thin stroke a
// dot and the wide one a disc inscribed in the image, corners left bare.
TEST(PngWriter, StrokeWiderThanTheModelCoversTheViewFittedToTheModel) {
  Geometry g;
  g.segments.push_back(makeSegment({0, 0, 0}, {1, 0, 0}, 1e38f, 1));
  g.segments.push_back(makeSegment({0, 0, 0}, {1, 0, 0}, 0.1f, 2));
  const Image img = drawn120(g);
  const Vec3 wide = paletteColor(1), thin = paletteColor(2);
  EXPECT_EQ(pixelsOf(img, WriteOptions().background), 0);
  for (auto [x, y] : {std::pair{0, 0}, {119, 0}, {0, 119}, {119, 119}, {25, 60}, {95, 60}, {60, 50}, {60, 70}})
    EXPECT_TRUE(isColor(img, x, y, wide)) << x << "," << y;
  for (auto [x, y] : {std::pair{45, 59}, {60, 60}, {75, 59}, {75, 60}}) EXPECT_TRUE(isColor(img, x, y, thin)) << x << "," << y;
  const double scale = 114.2 / 3.0, r = 0.05 * scale;
  const double area = scale * 2 * r + M_PI * r * r;
  EXPECT_NEAR(totalCoverage(img, thin, wide), area, 0.05 * area);
}

// A stroke that covers the whole image hides the strokes before it and none
// after it (the writer starts drawing at the last such stroke).
TEST(PngWriter, StrokeCoveringTheImageHidesOnlyEarlierStrokes) {
  Geometry g;
  g.segments.push_back(makeSegment({0, 0, 0}, {1, 0, 0}, 0.1f, 2));
  g.segments.push_back(makeSegment({0, 0, 0}, {1, 0, 0}, 1e38f, 1));
  g.segments.push_back(makeSegment({0.5f, -0.5f, 0}, {0.5f, 0.5f, 0}, 0.1f, 3));
  g.segments.push_back(makeSegment({0, 0, 0}, {1, 0, 0}, 1e30f, 4));  // wide, but not the last
  g.segments.push_back(makeSegment({0.5f, -0.5f, 0}, {0.5f, 0.5f, 0}, 0.1f, 3));
  const Image img = drawn120(g);
  const Vec3 covering = paletteColor(4), after = paletteColor(3);
  EXPECT_EQ(pixelsOf(img, WriteOptions().background), 0);
  EXPECT_EQ(pixelsOf(img, paletteColor(2)), 0);
  EXPECT_EQ(pixelsOf(img, paletteColor(1)), 0);
  for (auto [x, y] : {std::pair{0, 0}, {119, 119}, {20, 60}, {100, 60}}) EXPECT_TRUE(isColor(img, x, y, covering));
  for (int y : {45, 60, 75}) EXPECT_TRUE(isColor(img, 59, y, after) || isColor(img, 60, y, after)) << y;
}

TEST(PngWriter, HairlinesAreAtLeastMinLinePxWide) {
  TempDir dir;
  Geometry g;
  g.segments.push_back(makeSegment({0, 0, 0}, {1, 1, 0}, 1e-7f, 0));
  g.segments.push_back(makeSegment({0, 1, 0}, {1, 0, 0}, 1e-7f, 0));
  WriteOptions options;
  options.width = options.height = 128;
  options.min_line_px = 3.0f;
  writeGeometry(g, dir / "hair.png", options);
  Image img = decode(dir / "hair.png");
  const Vec3 color = paletteColor(0), bg = options.background;
  // Two diagonals of L px drawn as 3 px capsules, crossing at right angles
  // (their overlap is a 3×3 square): margin = 0.02·128 + 1.5 px.
  const double margin = 0.02 * 128 + 1.5, len = (128 - 2 * margin) * std::sqrt(2.0);
  const double expected = 2 * (3 * len + M_PI * 1.5 * 1.5) - 9;
  EXPECT_NEAR(totalCoverage(img, color, bg), expected, 0.03 * expected);
  EXPECT_TRUE(isColor(img, 64, 64, color));
}

TEST(PngWriter, SideViewTurnsDepthIntoWidth) {
  TempDir dir;
  Geometry g;
  g.segments.push_back(makeSegment({0, 0, 0}, {0, 0, 4}, 0.5f, 0));
  WriteOptions options;
  options.width = options.height = 100;
  options.projection = Projection::kSide;
  writeGeometry(g, dir / "side.png", options);
  Image img = decode(dir / "side.png");
  const Vec3 color = paletteColor(0);
  // Along Z becomes horizontal: the middle row is painted end to end, the middle column only near the centre.
  EXPECT_TRUE(isColor(img, 10, 50, color));
  EXPECT_TRUE(isColor(img, 89, 50, color));
  EXPECT_TRUE(isColor(img, 50, 30, options.background));
  options.projection = Projection::kFront;
  writeGeometry(g, dir / "front.png", options);
  Image front = decode(dir / "front.png");
  // Front view sees a dot (a disc of the line's radius) fitted to the image.
  EXPECT_TRUE(isColor(front, 50, 50, color));
  EXPECT_TRUE(isColor(front, 2, 2, options.background));
}

// A right triangle with its right angle at the model's origin, legs along +X
// and +Y: drawn upright, it fills the image's lower-left half. Any flip (rows
// written bottom up, x mirrored) moves the painted half. By hand: 100×100,
// margin 0.02·100 + 0.5 = 2.5 px, scale 95 px per unit, model (x, y) at pixel
// (2.5 + 95x, 97.5 − 95y); the pixel (px, py) centre is inside when
// (px − 2) + (97 − py) < 95.
TEST(PngWriter, AsymmetricTriangleIsUprightNotMirrored) {
  TempDir dir;
  Geometry g;
  addPolygon(g, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 3);
  WriteOptions options;
  options.width = options.height = 100;
  writeGeometry(g, dir / "tri.png", options);
  Image img = decode(dir / "tri.png");
  ASSERT_EQ(img.width, 100);
  const Vec3 color = paletteColor(3), bg = options.background;
  auto inside = [](int px, int py) { return (px - 2) + (97 - py) < 95; };
  for (auto [x, y] : {std::pair{5, 94}, {5, 10}, {90, 94}, {40, 50}, {94, 5}, {90, 10}, {60, 30}, {5, 1}}) {
    const bool want = inside(x, y);
    EXPECT_TRUE(isColor(img, x, y, want ? color : bg)) << x << "," << y << (want ? " painted" : " background");
  }
  // Every painted pixel lies on the lower-left side of the hypotenuse.
  for (int y = 0; y < 100; ++y)
    for (int x = 0; x < 100; ++x)
      if ((x - 2) + (97 - y) > 96) {
        ASSERT_TRUE(isColor(img, x, y, bg)) << x << "," << y;
      }
}

// The iso view puts +Y straight up and +X down to the right: a segment from
// the origin along +Y is a vertical bar in the upper half, one along +X runs
// to the lower right (screen direction (1/√2, −1/√6) → pixel direction (+, +)).
TEST(PngWriter, IsoViewKeepsYUpAndSendsXDownRight) {
  TempDir dir;
  Geometry g;
  g.segments.push_back(makeSegment({0, 0, 0}, {0, 1, 0}, 0.05f, 5));
  g.segments.push_back(makeSegment({0, 0, 0}, {1, 0, 0}, 0.05f, 7));
  WriteOptions options;
  options.width = options.height = 200;
  options.projection = Projection::kIso;
  writeGeometry(g, dir / "iso.png", options);
  Image img = decode(dir / "iso.png");
  // By hand: screen points O (0,0), Y (0, 0.8165), X (0.7071, -0.4082); bounds
  // grown by the radius 0.025: u in [-0.025, 0.7321], v in [-0.4332, 0.8415],
  // extents 0.7571 × 1.2747; margin 4.5 px, scale 191/1.2747 = 149.8 px/unit,
  // centre (0.3536, 0.2041) at pixel (100, 100).
  const double scale = 191.0 / (0.8165 + 0.025 + 0.4082 + 0.025);
  auto pixel = [&](double u, double v) {
    return std::pair{int(std::floor(100 + (u - 0.35355) * scale)), int(std::floor(100 - (v - 0.20412) * scale))};
  };
  const auto [yx, yy] = pixel(0, 0.6);        // on the +Y bar
  const auto [xx, xy] = pixel(0.55, -0.3175);  // on the +X segment (t = 0.7778)
  EXPECT_TRUE(isColor(img, yx, yy, paletteColor(5), 8)) << yx << "," << yy;
  EXPECT_TRUE(isColor(img, xx, xy, paletteColor(7), 8)) << xx << "," << xy;
  // Mirror images of those points stay background.
  const auto [mx, my] = pixel(0, -0.2);
  EXPECT_TRUE(isColor(img, mx, my, options.background)) << mx << "," << my;
  const auto [nx, ny] = pixel(0.55, 0.3175);
  EXPECT_TRUE(isColor(img, nx, ny, options.background)) << nx << "," << ny;
}

}  // namespace
}  // namespace procgen::iotest
