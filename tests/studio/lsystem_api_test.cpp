// The studio's L-system endpoints (src/studio/api_lsystem.cpp) over real HTTP:
// the geometry frame against derive() + interpret() called directly (counts,
// bounds, positions within one quantization step, palette colours, fan
// triangles), #define overrides against the same edit made by hand, parse
// errors at the user's line:col, budget errors, bad parameters, and exports
// byte-identical to the library's encoders.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "procgen/io.hpp"
#include "procgen/lsystem.hpp"
#include "studio/api.hpp"
#include "studio/studio_client.hpp"

namespace procgen {
namespace {

using studio_test::DecodedFrame;
using studio_test::decodeFrame;
using studio_test::HttpReply;
using studio_test::TestServer;
using json = nlohmann::json;

std::string readExample(const std::string& name) {
  std::ifstream in(std::filesystem::path(PROCGEN_SOURCE_DIR) / "examples" / "lsystems" / name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Koch curve, ABOP Fig. 1.9-style: F → F+F-F-F+F gives 5^n segments (hand-derived).
const char* kKoch =
    "angle increment: 90\n"
    "Lsystem: 1\n"
    "derivation length: 3\n"
    "Axiom: F\n"
    "F --> F+F-F-F+F\n"
    "endlsystem\n";

// Two #defines used by a parametric production; a leaf polygon in colour 2.
const char* kParametric =
    "#define len 2.5   // step\n"
    "#define turn 30\n"
    "Lsystem: 1\n"
    "derivation length: 4\n"
    "Axiom: A(1)\n"
    "A(x) --> F(len*x)[+(turn)'(1)A(x*0.7)][-(turn)A(x*0.7)]'(2){.f(1).+(60)f(1).+(60)f(1).}\n"
    "endlsystem\n";

std::string request(const std::string& text, json extra = json::object()) {
  extra["text"] = text;
  if (!extra.contains("backend")) extra["backend"] = "serial";
  return extra.dump();
}

/// What the endpoint should compute: the library called directly.
Geometry directGeometry(const std::string& text, int iterations, uint64_t seed = 1, Backend backend = Backend::kSerial) {
  LSystem l = LSystem::fromText(text, "model.l");
  DeriveOptions d;
  d.iterations = iterations;
  d.seed = seed;
  d.execution.backend = backend;
  ModuleString s = derive(l, d);
  InterpretOptions i;
  i.view = l.view();
  i.seed = seed;
  i.execution.backend = backend;
  return interpret(l, s, i);
}

/// Checks the frame's segments and polygons against `g` within one quantization step.
void expectFrameMatches(const DecodedFrame& frame, const Geometry& g) {
  const json& h = frame.header;
  ASSERT_EQ(h["segments"].get<size_t>(), g.segments.size());
  ASSERT_EQ(h["polygons"].get<size_t>(), g.polygonCount());
  const Bounds b = g.bounds();
  const std::vector<float> bounds = h["bounds"].get<std::vector<float>>();
  ASSERT_EQ(bounds.size(), 6u);
  EXPECT_EQ(bounds[0], b.min.x);
  EXPECT_EQ(bounds[1], b.min.y);
  EXPECT_EQ(bounds[2], b.min.z);
  EXPECT_EQ(bounds[3], b.max.x);
  EXPECT_EQ(bounds[4], b.max.y);
  EXPECT_EQ(bounds[5], b.max.z);
  const float lo[3] = {b.min.x, b.min.y, b.min.z}, hi[3] = {b.max.x, b.max.y, b.max.z};
  auto dequantized = [&](uint16_t q, int k) { return lo[k] + (hi[k] - lo[k]) * (q / 65535.0); };
  auto within = [&](const Vec3& v, const uint16_t* q) {
    const float p[3] = {v.x, v.y, v.z};
    for (int k = 0; k < 3; ++k) {
      double step = (hi[k] - lo[k]) / 65535.0;
      // Half a step from rounding, plus float rounding at the bounds' magnitude.
      const double slack = 1e-6 * (1 + std::abs(lo[k]) + std::abs(hi[k]));
      if (std::abs(dequantized(q[k], k) - p[k]) > 0.5 * step + slack) return false;
    }
    return true;
  };
  // x, y only when the model is flat in z (then every z is 0); else x, y, z.
  const bool flat = b.min.z == 0.0f && b.max.z == 0.0f && !g.segments.empty();
  ASSERT_EQ(h["segment_position_components"], flat ? 2 : 3);
  std::vector<uint16_t> positions = frame.as<uint16_t>("segment_positions");
  if (flat) {
    ASSERT_EQ(positions.size(), g.segments.size() * 4);
    std::vector<uint16_t> xyz;
    for (size_t v = 0; v < positions.size(); v += 2) xyz.insert(xyz.end(), {positions[v], positions[v + 1], 0});
    positions = xyz;
  }
  ASSERT_EQ(positions.size(), g.segments.size() * 6);
  // One colour for all: in the header; else per vertex (2 per segment).
  const bool one_color = h.contains("segment_color");
  const auto colors = one_color ? std::vector<uint8_t>() : frame.as<uint8_t>("segment_colors");
  if (!one_color) {
    ASSERT_EQ(colors.size(), g.segments.size() * 6);
  }
  for (size_t i = 0; i < g.segments.size(); ++i) {
    ASSERT_TRUE(within(g.segments[i].start, &positions[6 * i])) << "segment " << i << " start";
    ASSERT_TRUE(within(g.segments[i].end, &positions[6 * i + 3]))
        << "segment " << i << " end " << g.segments[i].end.x << " " << g.segments[i].end.y << " " << g.segments[i].end.z
        << " q " << positions[6 * i + 3] << " " << positions[6 * i + 4] << " " << positions[6 * i + 5] << " bounds "
        << h["bounds"];
    const Vec3 c = paletteColor(g.segments[i].color);
    for (int v = 0; v < 2; ++v) {
      for (int k = 0; k < 3; ++k) {
        const double got = one_color ? h["segment_color"][k].get<double>() : colors[6 * i + 3 * v + k];
        ASSERT_NEAR(got, (k == 0 ? c.x : k == 1 ? c.y : c.z) * 255, 0.5) << "segment " << i;
      }
    }
  }
  if (g.polygonCount() == 0) return;
  const auto vertices = frame.as<uint16_t>("polygon_positions");
  const auto indices = frame.as<uint32_t>("polygon_indices");
  ASSERT_EQ(vertices.size(), g.polygon_vertices.size() * 3);
  for (size_t v = 0; v < g.polygon_vertices.size(); ++v) ASSERT_TRUE(within(g.polygon_vertices[v], &vertices[3 * v]));
  // A fan per polygon: n − 2 triangles, each with the polygon's first vertex.
  size_t t = 0;
  for (size_t p = 0; p < g.polygonCount(); ++p) {
    const uint64_t first = g.polygon_offsets[p], n = g.polygon_offsets[p + 1] - first;
    for (uint64_t k = 1; k + 1 < n; ++k, ++t) {
      ASSERT_LT(3 * t + 2, indices.size());
      EXPECT_EQ(indices[3 * t], first);
      EXPECT_EQ(indices[3 * t + 1], first + k);
      EXPECT_EQ(indices[3 * t + 2], first + k + 1);
    }
  }
  EXPECT_EQ(indices.size(), 3 * t);
}

TEST(StudioLsystem, KochFrameHoldsFivePowerNSegmentsMatchingTheLibrary) {
  TestServer server;
  HttpReply reply = server.post("/api/lsystem/geometry", request(kKoch, {{"iterations", 4}}));
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.content_type, "application/octet-stream");
  DecodedFrame frame = decodeFrame(reply.body);
  const json& h = frame.header;
  EXPECT_EQ(h["segments"], 625);  // 5^4
  EXPECT_EQ(h["iterations"], 4);
  EXPECT_EQ(h["angle"], 90);
  // F+F-F-F+F: 9 modules per F, 5 of them F: 1 → 9 → 45+4·… Each step maps a
  // string of f F's and o others to 9f + o modules with 5f F's.
  uint64_t f = 1, other = 0;
  std::vector<uint64_t> steps;
  for (int i = 0; i < 4; ++i) {
    other += 4 * f;
    f *= 5;
    steps.push_back(f + other);
  }
  EXPECT_EQ(h["modules"], steps.back());
  EXPECT_EQ(h["step_modules"].get<std::vector<uint64_t>>(), steps);
  EXPECT_EQ(h["file"]["derivation_length"], 3);
  EXPECT_EQ(h["file"]["angle"], 90);
  EXPECT_TRUE(h["file"]["seed"].is_null());
  EXPECT_TRUE(h["file"]["defines"].empty());
  for (const char* stage : {"parse_ms", "derive_ms", "interpret_ms", "encode_ms", "total_ms"})
    EXPECT_GE(h["timings"][stage].get<double>(), 0.0) << stage;
  EXPECT_EQ(frame.buffers.count("segment_colors"), 0u) << "one colour: in the header";
  expectFrameMatches(frame, directGeometry(kKoch, 4));
}

TEST(StudioLsystem, ParametricFrameWithPolygonsMatchesTheLibraryOnEveryBackend) {
  TestServer server;
  const Geometry expected = directGeometry(kParametric, 4);
  ASSERT_GT(expected.polygonCount(), 0u);
  for (const char* backend : {"serial", "cpu"}) {
    if (!backendAvailable(*parseBackend(backend))) continue;
    HttpReply reply = server.post("/api/lsystem/geometry", request(kParametric, {{"backend", backend}}));
    ASSERT_EQ(reply.status, 200) << reply.body;
    DecodedFrame frame = decodeFrame(reply.body);
    EXPECT_EQ(frame.header["backend"], backend);
    EXPECT_EQ(frame.buffers.count("segment_colors"), 1u) << "two segment colours: per-vertex colours";
    expectFrameMatches(frame, expected);
    // The file's defines, with their values, for the page's sliders.
    EXPECT_EQ(frame.header["file"]["defines"],
              json::parse(R"([{"name": "len", "value": 2.5}, {"name": "turn", "value": 30}])"));
  }
}

TEST(StudioLsystem, HilbertAtThePapersSizeMatchesTheLibrary) {
  TestServer server;
  const std::string text = readExample("hilbert3d.l");
  HttpReply reply = server.post("/api/lsystem/geometry", request(text));
  ASSERT_EQ(reply.status, 200) << reply.body;
  DecodedFrame frame = decodeFrame(reply.body);
  // 8^6 cells visited: 8^6 − 1 unit steps.
  EXPECT_EQ(frame.header["segments"], 262143);
  expectFrameMatches(frame, directGeometry(text, 6));
}

TEST(StudioLsystem, IterationsAngleAndSeedOverrideTheFile) {
  TestServer server;
  HttpReply reply = server.post("/api/lsystem/geometry", request(kKoch, {{"iterations", 2}, {"angle", 60}}));
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(decodeFrame(reply.body).header["angle"], 60);
  std::string by_hand = kKoch;
  by_hand.replace(by_hand.find("90"), 2, "60");
  expectFrameMatches(decodeFrame(reply.body), directGeometry(by_hand, 2));

  const std::string stochastic = readExample("plant-stochastic.l");
  HttpReply seeded = server.post("/api/lsystem/geometry", request(stochastic, {{"iterations", 4}, {"seed", 7}}));
  ASSERT_EQ(seeded.status, 200) << seeded.body;
  EXPECT_EQ(decodeFrame(seeded.body).header["seed"], "7");
  expectFrameMatches(decodeFrame(seeded.body), directGeometry(stochastic, 4, 7));
}

TEST(StudioLsystem, DefineOverridesMatchEditingTheTextByHand) {
  TestServer server;
  HttpReply reply = server.post("/api/lsystem/geometry",
                                request(kParametric, {{"defines", {{"len", 1.25}, {"turn", -45}}}}));
  ASSERT_EQ(reply.status, 200) << reply.body;
  std::string by_hand = kParametric;
  by_hand.replace(by_hand.find("2.5"), 3, "1.25");
  by_hand.replace(by_hand.find("30"), 2, "-45");
  DecodedFrame frame = decodeFrame(reply.body);
  expectFrameMatches(frame, directGeometry(by_hand, 4));
  EXPECT_EQ(frame.header["file"]["defines"],
            json::parse(R"([{"name": "len", "value": 1.25}, {"name": "turn", "value": -45}])"));
}

TEST(StudioLsystem, ParseErrorsPointAtTheUsersTextEvenWithDefineOverrides) {
  TestServer server;
  // Line 6, column 12: the unknown name 'y' (docs/lsystem-language.md's example kind).
  std::string text = kParametric;
  text.replace(text.find("F(len*x)"), 8, "F(len*y)");
  const size_t line_start = text.find("A(x) -->");
  const int column = static_cast<int>(text.find("y)", line_start) - line_start) + 1;
  for (json defines : {json::object(), json{{"len", 123456.5}}, json{{"turn", 1}}}) {
    HttpReply reply = server.post("/api/lsystem/geometry", request(text, {{"defines", defines}}));
    ASSERT_EQ(reply.status, 422) << reply.body;
    json error = reply.json()["error"];
    EXPECT_EQ(error["kind"], "parse");
    EXPECT_EQ(error["line"], 6) << defines;
    EXPECT_EQ(error["column"], column) << defines;
    EXPECT_NE(error["message"].get<std::string>().find("'y'"), std::string::npos);
  }
  // An error on the #define line itself, after a shorter override, keeps its line.
  std::string bad_define = "#define a 18.95 +\n" + std::string(kKoch);
  HttpReply reply = server.post("/api/lsystem/geometry", request(bad_define, {{"defines", {{"a", 1}}}}));
  ASSERT_EQ(reply.status, 200) << "the override replaces the whole (bad) value: " << reply.body;
  HttpReply plain = server.post("/api/lsystem/geometry", request(bad_define));
  ASSERT_EQ(plain.status, 422);
  EXPECT_EQ(plain.json()["error"]["line"], 1);
  // A missing arrow target on line 5.
  std::string broken = kKoch;
  broken.replace(broken.find("F --> F+F"), 9, "F --> F+(");
  HttpReply parse = server.post("/api/lsystem/geometry", request(broken));
  ASSERT_EQ(parse.status, 422);
  EXPECT_EQ(parse.json()["error"]["kind"], "parse");
  EXPECT_EQ(parse.json()["error"]["line"], 5);
}

TEST(StudioLsystem, AnOversizedDerivationIsRefusedWithABudgetError) {
  StudioOptions options = TestServer::quietOptions();
  options.memory_budget = 64ull << 20;
  TestServer server(options);
  HttpReply reply = server.post("/api/lsystem/geometry", request(kKoch, {{"iterations", 30}}));
  ASSERT_EQ(reply.status, 422) << reply.body;
  EXPECT_EQ(reply.json()["error"]["kind"], "budget");
  // The server still answers, with the model at a sane size.
  EXPECT_EQ(server.post("/api/lsystem/geometry", request(kKoch)).status, 200);
}

TEST(StudioLsystem, BadParametersAre400s) {
  TestServer server;
  auto status = [&](const std::string& body) { return server.post("/api/lsystem/geometry", body).status; };
  auto kind = [&](const std::string& body) { return server.post("/api/lsystem/geometry", body).json()["error"]["kind"]; };
  EXPECT_EQ(status("{not json"), 400);
  EXPECT_EQ(status("[1, 2]"), 400);
  EXPECT_EQ(status("{}"), 400);  // no text
  EXPECT_EQ(kind("{}"), "request");
  EXPECT_EQ(status(R"({"text": 5})"), 400);
  EXPECT_EQ(status(request(kKoch, {{"iterations", -1}})), 400);
  EXPECT_EQ(status(request(kKoch, {{"iterations", 2.5}})), 400);
  EXPECT_EQ(status(request(kKoch, {{"iterations", "many"}})), 400);
  EXPECT_EQ(status(request(kKoch, {{"angle", 1e9}})), 400);
  EXPECT_EQ(status(request(kKoch, {{"seed", -3}})), 400);
  EXPECT_EQ(status(request(kKoch, {{"backend", "gpu"}})), 400);
  EXPECT_EQ(status(request(kKoch, {{"threads", 0}})), 400);
  EXPECT_EQ(status(request(kKoch, {{"defines", {1, 2}}})), 400);
  EXPECT_EQ(status(request(kParametric, {{"defines", {{"len", "long"}}}})), 400);
  EXPECT_EQ(status(request(kParametric, {{"defines", {{"len", 1e39}}}})), 400);
  EXPECT_EQ(status(request(kParametric, {{"defines", {{"nosuch", 1}}}})), 400);
  EXPECT_EQ(status(request(kParametric, {{"defines", {{"a b", 1}}}})), 400);
  EXPECT_EQ(status(request(std::string((1 << 20) + 1, ' '))), 400);  // over 1 MB of text
  EXPECT_EQ(server.post("/api/lsystem/export", request(kKoch, {{"format", "dxf"}})).status, 400);
  EXPECT_EQ(server.post("/api/lsystem/export", request(kKoch, {{"format", "png"}, {"width", 5}})).status, 400);
  // Garbage text is a parse error, not a crash.
  EXPECT_EQ(status(R"({"text": "\u0001\u00ff{}-->\n\n", "backend": "serial"})"), 422);
  EXPECT_EQ(status("{\"text\": \"\xff\xfe\"}"), 400);  // not UTF-8: not JSON
}

TEST(StudioLsystem, ExportsAreByteIdenticalToTheLibrarysEncoders) {
  TestServer server;
  const Geometry g = directGeometry(kParametric, 4);
  struct Case {
    const char* format;
    GeometryFormat encoder;
    const char* content_type;
  };
  for (const Case& c : {Case{"glb", GeometryFormat::kGlb, "model/gltf-binary"},
                        Case{"obj", GeometryFormat::kObj, "text/plain"},
                        Case{"ply", GeometryFormat::kPly, "application/octet-stream"},
                        Case{"svg", GeometryFormat::kSvg, "image/svg+xml"},
                        Case{"png", GeometryFormat::kPng, "image/png"}}) {
    HttpReply reply = server.post("/api/lsystem/export",
                                  request(kParametric, {{"format", c.format}, {"name", "my plant"}, {"width", 320}, {"height", 200}}));
    ASSERT_EQ(reply.status, 200) << c.format << ": " << reply.body;
    WriteOptions options;
    options.width = 320;
    options.height = 200;
    const std::vector<uint8_t> expected = encodeGeometry(g, c.encoder, options);
    EXPECT_EQ(reply.body, std::string(expected.begin(), expected.end())) << c.format;
    EXPECT_EQ(reply.content_type.rfind(c.content_type, 0), 0u) << reply.content_type;
    EXPECT_EQ(reply.headers["Content-Disposition"], std::string("attachment; filename=\"myplant.") + c.format + "\"");
  }
  // Names keep inner dots, lose path separators, quotes and leading dots.
  for (const auto& [name, file] : std::vector<std::pair<std::string, std::string>>{
           {"plant-1.24f", "plant-1.24f.png"}, {"../../etc/x\"y", "etcxy.png"}, {"", "lsystem.png"}}) {
    HttpReply reply = server.post("/api/lsystem/export", request(kKoch, {{"format", "png"}, {"name", name}, {"width", 16}, {"height", 16}}));
    ASSERT_EQ(reply.status, 200);
    EXPECT_EQ(reply.headers["Content-Disposition"], "attachment; filename=\"" + file + "\"");
  }
}

// --- POST /api/lsystem/stream: a preview at the client's view, then the full frame

/// A view looking straight down at the xy plane: clip = ((x − cx)·s, (y − cy)·s, 0, 1),
/// written by hand (column-major), so `width` pixels span 2/s model units.
json flatView(const Bounds& b, int width, int height) {
  const double cx = (b.min.x + b.max.x) / 2, cy = (b.min.y + b.max.y) / 2;
  const double s = 1.8 / std::max(b.max.x - b.min.x, b.max.y - b.min.y);  // the model fills 90 % of the view
  const double sx = s * height / width;  // square pixels
  return {{"width", width},
          {"height", height},
          {"matrix", {sx, 0, 0, 0, 0, s, 0, 0, 0, 0, 1, 0, -cx * sx, -cy * s, 0, 1}}};
}

/// The frame's segments as model coordinates (x, y), from its u16 positions.
std::vector<std::array<double, 4>> frameSegments2d(const DecodedFrame& frame) {
  const std::vector<float> b = frame.header["bounds"].get<std::vector<float>>();
  const int components = frame.header["segment_position_components"];
  const std::vector<uint16_t> q = frame.as<uint16_t>("segment_positions");
  std::vector<std::array<double, 4>> out;
  for (size_t i = 0; i + 2 * components <= q.size(); i += 2 * components) {
    auto x = [&](uint16_t v) { return b[0] + (b[3] - b[0]) * (v / 65535.0); };
    auto y = [&](uint16_t v) { return b[1] + (b[4] - b[1]) * (v / 65535.0); };
    out.push_back({x(q[i]), y(q[i + 1]), x(q[i + components]), y(q[i + components + 1])});
  }
  return out;
}

/// The pixels of a width × height view (flatView's) that segments pass
/// through, sampled every 1/8 pixel: a brute-force rasterizer.
std::vector<bool> coveredPixels(const std::vector<std::array<double, 4>>& segments, const json& view) {
  const int w = view["width"], h = view["height"];
  const std::vector<double> m = view["matrix"].get<std::vector<double>>();
  std::vector<bool> covered(static_cast<size_t>(w * h), false);
  auto pixel = [&](double x, double y) {
    return std::array<double, 2>{(m[0] * x + m[12] + 1) / 2 * w, (1 - (m[5] * y + m[13])) / 2 * h};
  };
  for (const auto& s : segments) {
    const auto a = pixel(s[0], s[1]), b = pixel(s[2], s[3]);
    const int steps = 1 + static_cast<int>(8 * std::hypot(b[0] - a[0], b[1] - a[1]));
    for (int k = 0; k <= steps; ++k) {
      const double t = static_cast<double>(k) / steps;
      const int px = static_cast<int>(std::floor(a[0] + t * (b[0] - a[0])));
      const int py = static_cast<int>(std::floor(a[1] + t * (b[1] - a[1])));
      if (px >= 0 && py >= 0 && px < w && py < h) covered[static_cast<size_t>(py * w + px)] = true;
    }
  }
  return covered;
}

/// Pixels of `a` with no pixel of `b` within `radius` (Chebyshev distance).
size_t pixelsFarFrom(const std::vector<bool>& a, const std::vector<bool>& b, int w, int h, int radius) {
  size_t far = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (!a[static_cast<size_t>(y * w + x)]) continue;
      bool near = false;
      for (int dy = -radius; dy <= radius && !near; ++dy)
        for (int dx = -radius; dx <= radius && !near; ++dx) {
          const int u = x + dx, v = y + dy;
          near = u >= 0 && v >= 0 && u < w && v < h && b[static_cast<size_t>(v * w + u)];
        }
      far += !near;
    }
  return far;
}

TEST(StudioLsystem, StreamSendsAPreviewAtTheViewThenTheFullFrame) {
  TestServer server;
  const std::string text = readExample("plant-2d.l");
  const Geometry expected = directGeometry(text, 7);
  ASSERT_EQ(expected.segments.size(), 2097152u);  // 8^7: F → 8 F's (the paper's size)
  const json view = flatView(expected.bounds(), 240, 180);
  HttpReply reply = server.post("/api/lsystem/stream", request(text, {{"iterations", 7}, {"view", view}}));
  ASSERT_EQ(reply.status, 200) << reply.body;
  const std::vector<DecodedFrame> frames = studio_test::decodeFrames(reply.body);
  ASSERT_EQ(frames.size(), 2u);
  const DecodedFrame &preview = frames[0], &full = frames[1];
  EXPECT_EQ(preview.header["final"], false);
  EXPECT_EQ(full.header["final"], true);
  expectFrameMatches(full, expected);
  // The preview: the model's counts and bounds, fewer segments, every input
  // segment accounted for (merged, dropped short, covered or kept).
  EXPECT_EQ(preview.header["segments"], 2097152);
  EXPECT_EQ(preview.header["bounds"], full.header["bounds"]);
  const json& lod = preview.header["lod"];
  const uint64_t kept = lod["segments"];
  EXPECT_LT(kept, 2097152u * 6 / 10);
  EXPECT_EQ(lod["merged"].get<uint64_t>() + lod["dropped_short"].get<uint64_t>() + lod["covered"].get<uint64_t>() + kept,
            2097152u);
  EXPECT_EQ(lod["cell"], 0.5);
  const auto preview_segments = frameSegments2d(preview);
  ASSERT_EQ(preview_segments.size(), kept);
  // At the view, the preview draws where the model draws: every pixel one
  // covers is within 2 pixels of one the other covers (the grid is half a
  // pixel; merged vertices and duplicates move a line by at most a cell
  // diagonal per end), by a brute-force rasterization of both.
  std::vector<std::array<double, 4>> model_segments;
  for (const Segment& s : expected.segments) model_segments.push_back({s.start.x, s.start.y, s.end.x, s.end.y});
  const std::vector<bool> drawn = coveredPixels(model_segments, view), previewed = coveredPixels(preview_segments, view);
  EXPECT_EQ(pixelsFarFrom(previewed, drawn, 240, 180, 2), 0u);
  EXPECT_EQ(pixelsFarFrom(drawn, previewed, 240, 180, 2), 0u);
  EXPECT_GT(std::count(drawn.begin(), drawn.end(), true), 1000);
}

// The preview is discrete output: the same pieces for every backend and
// thread count (fixed blocks and bands, not per-thread ones), and its header
// holds the full frame's one colour and bounds (found in the preview's own
// pass over the segments).
TEST(StudioLsystem, StreamPreviewDoesNotDependOnBackendOrThreads) {
  TestServer server;
  const std::string text = readExample("plant-2d.l");
  const Geometry expected = directGeometry(text, 7);
  const json view = flatView(expected.bounds(), 320, 240);
  std::vector<std::string> positions;
  for (const json& execution : {json{{"backend", "serial"}}, json{{"backend", "cpu"}, {"threads", 1}},
                                json{{"backend", "cpu"}, {"threads", 2}}}) {  // at most the hardware threads
    json extra = execution;
    extra["iterations"] = 7;
    extra["view"] = view;
    HttpReply reply = server.post("/api/lsystem/stream", request(text, extra));
    ASSERT_EQ(reply.status, 200) << reply.body;
    const std::vector<DecodedFrame> frames = studio_test::decodeFrames(reply.body);
    ASSERT_EQ(frames.size(), 2u) << execution;
    const DecodedFrame &preview = frames[0], &full = frames[1];
    EXPECT_EQ(preview.header["segment_color"], full.header["segment_color"]) << execution;
    EXPECT_FALSE(preview.header["segment_color"].is_null()) << execution;  // one colour: none per vertex
    EXPECT_EQ(preview.buffers.count("segment_colors"), 0u) << execution;
    // The bounds are the library's Geometry::bounds(), exactly.
    const Bounds b = expected.bounds();
    EXPECT_EQ(preview.header["bounds"].get<std::vector<float>>(),
              (std::vector<float>{b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z})) << execution;
    EXPECT_EQ(preview.header["segment_position_components"], 2) << execution;
    positions.push_back(preview.buffers.at("segment_positions"));
    EXPECT_EQ(positions.back(), positions.front()) << execution;
  }
}

// The preview's chain pass runs 16 segments at a time with AVX-512 where the
// CPU has it: the same frames as the scalar pass, at views that take each of
// its paths — chains merged within a cell (coarse cells: the kernel's anchors
// found by iterating to a fixed point), pieces off the grid (zoomed in), ends
// behind the camera (a projective w through the model).
TEST(StudioLsystem, StreamPreviewIsTheSameWithTheVectorPass) {
  if (procgen::studio::setPreviewIsaForTesting(2) < 2) GTEST_SKIP() << "no AVX-512 on this CPU";
  TestServer server;
  const std::string text = readExample("plant-2d.l");
  const Geometry expected = directGeometry(text, 7);
  const Bounds b = expected.bounds();
  std::vector<json> views;
  views.push_back(flatView(b, 320, 240));
  json coarse = flatView(b, 320, 240);
  coarse["cell"] = 8;
  views.push_back(coarse);
  json zoomed = flatView(b, 320, 240);
  for (int k : {0, 5}) zoomed["matrix"][k] = zoomed["matrix"][k].get<double>() * 3;
  views.push_back(zoomed);
  json behind = flatView(b, 320, 240);
  behind["matrix"][3] = 1.5 / (b.max.x - b.min.x);  // w = 1.5 (x − min.x)/width − 0.5: below 0 in the left third
  behind["matrix"][15] = -1.5 * b.min.x / (b.max.x - b.min.x) - 0.5;
  views.push_back(behind);
  uint64_t merged = 0, covered = 0;
  for (const json& view : views) {
    std::vector<std::string> bodies;
    std::vector<json> lods;
    for (int isa : {1, 2}) {
      ASSERT_EQ(procgen::studio::setPreviewIsaForTesting(isa), isa);
      HttpReply reply = server.post("/api/lsystem/stream", request(text, {{"iterations", 7}, {"view", view}}));
      ASSERT_EQ(reply.status, 200) << reply.body;
      const std::vector<DecodedFrame> frames = studio_test::decodeFrames(reply.body);
      ASSERT_FALSE(frames.empty());
      bodies.push_back(frames[0].buffers.at("segment_positions"));
      lods.push_back(frames[0].header.value("lod", json()));
      EXPECT_EQ(frames[0].header["bounds"], frames.back().header["bounds"]) << view;
    }
    EXPECT_EQ(lods[0], lods[1]) << view;
    EXPECT_TRUE(bodies[0] == bodies[1]) << view;
    if (lods[0].is_object()) merged += lods[0]["merged"].get<uint64_t>(), covered += lods[0]["covered"].get<uint64_t>();
  }
  procgen::studio::setPreviewIsaForTesting(0);
  EXPECT_GT(merged, 0u);  // the views reached merging lanes (more than one round of the kernel)
  EXPECT_GT(covered, 0u);
}

TEST(StudioLsystem, StreamSendsOnlyTheFullFrameForASmallModelOrWithoutAView) {
  TestServer server;
  const Geometry koch = directGeometry(kKoch, 4);
  HttpReply reply = server.post("/api/lsystem/stream", request(kKoch, {{"iterations", 4}, {"view", flatView(koch.bounds(), 400, 300)}}));
  ASSERT_EQ(reply.status, 200) << reply.body;
  std::vector<DecodedFrame> frames = studio_test::decodeFrames(reply.body);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].header["final"], true);
  expectFrameMatches(frames[0], koch);
  const std::string plant = readExample("plant-2d.l");
  reply = server.post("/api/lsystem/stream", request(plant, {{"iterations", 7}}));
  ASSERT_EQ(reply.status, 200) << reply.body;
  frames = studio_test::decodeFrames(reply.body);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].header["segments"], 2097152);
  // Below a million segments (the Hilbert 3D curve's 262 143), no preview even with a view.
  const std::string hilbert = readExample("hilbert3d.l");
  reply = server.post("/api/lsystem/stream", request(hilbert, {{"view", flatView(Bounds{{0, 0, 0}, {63, 63, 63}}, 400, 300)}}));
  ASSERT_EQ(reply.status, 200) << reply.body;
  frames = studio_test::decodeFrames(reply.body);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].header["segments"], 262143);
}

TEST(StudioLsystem, StreamRefusesABadViewAndParseErrorsBeforeItsFirstFrame) {
  TestServer server;
  json bad = {{"width", 400}, {"height", 300}, {"matrix", {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0}}};  // 15 numbers
  HttpReply reply = server.post("/api/lsystem/stream", request(kKoch, {{"view", bad}}));
  EXPECT_EQ(reply.status, 400);
  EXPECT_NE(reply.json()["error"]["message"].get<std::string>().find("view.matrix"), std::string::npos) << reply.body;
  bad = {{"height", 300}, {"matrix", json::array()}};
  EXPECT_EQ(server.post("/api/lsystem/stream", request(kKoch, {{"view", bad}})).status, 400);
  reply = server.post("/api/lsystem/stream", request("Axiom: F\nF --> F(\n"));
  EXPECT_EQ(reply.status, 422);
  EXPECT_EQ(reply.json()["error"]["kind"], "parse");
  EXPECT_EQ(reply.json()["error"]["line"], 2);
}

}  // namespace
}  // namespace procgen
