// The studio's noise endpoints (src/studio/api_noise.cpp) over real HTTP: the
// field is generateNoise's bit for bit with the same parameters, the image is
// fieldToImage8's, the meshes are heightfieldMesh's and extractIsosurface's
// (positions within half a u16 quantum of their bounds), the files are the
// library's encoders' bytes; every bad parameter is a 400 naming the field,
// and oversized grids are refused before anything is allocated.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "procgen/error.hpp"
#include "procgen/image.hpp"
#include "procgen/io.hpp"
#include "procgen/mesh.hpp"
#include "procgen/noise.hpp"
#include "studio/studio_client.hpp"

namespace procgen {
namespace {

using nlohmann::json;
using studio_test::DecodedFrame;
using studio_test::decodeFrame;
using studio_test::HttpReply;
using studio_test::TestServer;

DecodedFrame frameOf(const HttpReply& reply) {
  EXPECT_EQ(reply.status, 200) << reply.body.substr(0, 400);
  EXPECT_EQ(reply.content_type, "application/octet-stream");
  return decodeFrame(reply.body);
}

std::vector<float> referenceField(const NoiseParams& params, const NoiseGrid& grid, const Execution& execution = {}) {
  std::vector<float> values(grid.points(), std::nanf(""));  // poison: an unwritten value fails
  generateNoise(params, grid, values, execution);
  return values;
}

/// Bit-for-bit equality (NaN-safe, -0 ≠ +0).
void expectSameBits(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  size_t differ = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) ++differ;
  EXPECT_EQ(differ, 0u) << "of " << got.size() << " values";
}

/// Checks a frame's mesh against `want`: positions dequantized from u16 within
/// half a quantum of the bounds, normals and indices exactly.
void expectSameMesh(const DecodedFrame& frame, const TriangleMesh& want) {
  ASSERT_EQ(frame.header["vertices"].get<size_t>(), want.vertexCount());
  ASSERT_EQ(frame.header["triangles"].get<size_t>(), want.triangleCount());
  EXPECT_EQ(frame.as<uint32_t>("indices"), want.indices);
  const std::vector<float> normals = frame.as<float>("normals");
  ASSERT_EQ(normals.size(), want.normals.size() * 3);
  for (size_t i = 0; i < want.normals.size(); ++i) {
    ASSERT_EQ(normals[3 * i], want.normals[i].x) << i;
    ASSERT_EQ(normals[3 * i + 1], want.normals[i].y) << i;
    ASSERT_EQ(normals[3 * i + 2], want.normals[i].z) << i;
  }
  const std::vector<uint16_t> q = frame.as<uint16_t>("positions");
  ASSERT_EQ(q.size(), want.positions.size() * 3);
  if (want.positions.empty()) {
    EXPECT_TRUE(frame.header["bounds"].is_null());
    return;
  }
  // The bounds, computed here by brute force.
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (const Vec3& p : want.positions) {
    const float c[3] = {p.x, p.y, p.z};
    for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], c[a]), hi[a] = std::max(hi[a], c[a]);
  }
  const json& bounds = frame.header["bounds"];
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(bounds[a].get<float>(), lo[a]);
    EXPECT_EQ(bounds[3 + a].get<float>(), hi[a]);
  }
  double worst = 0;
  for (size_t i = 0; i < want.positions.size(); ++i) {
    const float c[3] = {want.positions[i].x, want.positions[i].y, want.positions[i].z};
    for (int a = 0; a < 3; ++a) {
      const double extent = double(hi[a]) - lo[a];
      const double got = lo[a] + double(q[3 * i + size_t(a)]) / 65535.0 * extent;
      worst = std::max(worst, std::fabs(got - c[a]) / (extent > 0 ? extent / 65535.0 : 1.0));
    }
  }
  EXPECT_LE(worst, 0.5 + 1e-6) << "quanta";
}

std::string errorKind(const HttpReply& reply) { return reply.json()["error"]["kind"].get<std::string>(); }
std::string errorMessage(const HttpReply& reply) { return reply.json()["error"]["message"].get<std::string>(); }

TEST(StudioNoiseHeightmap, FieldIsGenerateNoiseBitForBitForEveryType) {
  TestServer server;
  for (const char* type : {"perlin", "simplex", "value", "cellular"}) {
    SCOPED_TRACE(type);
    auto reply = server.post("/api/noise/heightmap",
                             json{{"type", type}, {"fractal", "ridged"}, {"octaves", 4}, {"frequency", 0.031},
                                  {"lacunarity", 2.3}, {"gain", 0.45}, {"seed", 98765}, {"size", {96, 64}},
                                  {"backend", "serial"}}
                                 .dump());
    const DecodedFrame frame = frameOf(reply);
    NoiseParams params;
    params.type = *parseNoiseType(type);
    params.dims = 2;
    params.fractal = FractalType::kRidged;
    params.octaves = 4;
    params.frequency = 0.031;
    params.lacunarity = float(2.3);
    params.gain = float(0.45);
    params.seed = 98765;
    NoiseGrid grid;
    grid.size = {96, 64, 1, 1};
    const std::vector<float> want = referenceField(params, grid);
    expectSameBits(frame.as<float>("field"), want);
    EXPECT_EQ(frame.header["width"], 96);
    EXPECT_EQ(frame.header["height"], 64);
    EXPECT_EQ(frame.header["min"].get<float>(), *std::min_element(want.begin(), want.end()));
    EXPECT_EQ(frame.header["max"].get<float>(), *std::max_element(want.begin(), want.end()));
    EXPECT_EQ(frame.header["backend"], "serial");
    EXPECT_GE(frame.header["timings"]["noise_ms"].get<double>(), 0.0);
  }
}

TEST(StudioNoiseHeightmap, CpuBackendAndDefaultsMatchTheLibrary) {
  if (!backendAvailable(Backend::kCpu)) GTEST_SKIP() << "built without TBB";
  TestServer server;
  // Only size and seed given: every other parameter is the library's default.
  const DecodedFrame frame = frameOf(server.post("/api/noise/heightmap", R"({"size": 200, "seed": "7", "threads": 2})"));
  NoiseParams params;
  params.dims = 2;
  params.seed = 7;
  NoiseGrid grid;
  grid.size = {200, 200, 1, 1};
  expectSameBits(frame.as<float>("field"), referenceField(params, grid));
  EXPECT_EQ(frame.header["backend"], "cpu");
  EXPECT_EQ(frame.header["threads"], 2);
}

TEST(StudioNoiseHeightmap, ImageIsTheColourMapOfTheFieldAsRgba) {
  TestServer server;
  for (const char* map : {"gray", "terrain"}) {
    SCOPED_TRACE(map);
    const DecodedFrame frame =
        frameOf(server.post("/api/noise/heightmap", json{{"size", {40, 30}}, {"colormap", map}, {"seed", 3}}.dump()));
    const std::vector<float> field = frame.as<float>("field");
    const FieldImage8 want = fieldToImage8(field.data(), 40, 30, *parseColorMap(map));
    const std::vector<uint8_t> rgba = frame.as<uint8_t>("rgba");
    ASSERT_EQ(rgba.size(), 40u * 30u * 4u);
    for (size_t i = 0; i < 40 * 30; ++i) {
      for (int c = 0; c < 3; ++c)
        ASSERT_EQ(rgba[4 * i + size_t(c)], want.pixels[i * size_t(want.channels) + size_t(want.channels == 1 ? 0 : c)]) << i;
      ASSERT_EQ(rgba[4 * i + 3], 255);
    }
  }
  // The full range [-1, 1]: a value of 0 is mid-gray whatever the field's range.
  const DecodedFrame full = frameOf(
      server.post("/api/noise/heightmap", R"({"size": 16, "colormap": "gray", "range": "full", "octaves": 1})"));
  EXPECT_EQ(full.header["colormap_range"], json::array({-1.0, 1.0}));
  const std::vector<float> field = full.as<float>("field");
  const std::vector<uint8_t> rgba = full.as<uint8_t>("rgba");
  for (size_t i = 0; i < field.size(); ++i)
    ASSERT_EQ(rgba[4 * i], uint8_t(std::lround(255.0 * std::clamp((field[i] + 1.0) / 2.0, 0.0, 1.0)))) << i;
}

TEST(StudioNoiseHeightmap, MeshIsTheHeightfieldMeshOfTheField) {
  TestServer server;
  const DecodedFrame frame = frameOf(server.post(
      "/api/noise/heightmap", R"({"size": [33, 20], "mesh": true, "height_scale": 9.5, "step": 0.5, "seed": 11})"));
  const std::vector<float> field = frame.as<float>("field");
  HeightfieldOptions options;
  options.spacing = 0.5;
  options.height_scale = 9.5;
  const TriangleMesh want = heightfieldMesh(field.data(), 33, 20, options);
  expectSameMesh(frame, want);
  EXPECT_EQ(want.triangleCount(), 2u * 32u * 19u);  // the grid's squares, two triangles each
}

TEST(StudioNoiseTerrain, MeshIsExtractIsosurfaceOfGenerateNoise) {
  TestServer server;
  for (double threshold : {0.0, 0.3, -0.25}) {
    SCOPED_TRACE(threshold);
    const DecodedFrame frame = frameOf(server.post(
        "/api/noise/terrain", json{{"type", "perlin"}, {"octaves", 3}, {"frequency", 0.07}, {"seed", 5},
                                   {"size", {24, 16, 20}}, {"threshold", threshold}, {"backend", "serial"}}
                                  .dump()));
    NoiseParams params;
    params.octaves = 3;
    params.frequency = 0.07;
    params.seed = 5;
    NoiseGrid grid;
    grid.size = {24, 16, 20, 1};
    const std::vector<float> field = referenceField(params, grid);
    IsosurfaceOptions iso;
    iso.threshold = float(threshold);
    iso.close_boundary = true;
    const TriangleMesh want = extractIsosurface({field.data(), {24, 16, 20}}, iso);
    ASSERT_GT(want.triangleCount(), 0u);
    expectSameMesh(frame, want);
    // Vertex colours: the terrain colour map at the height within the mesh's y range.
    const std::vector<uint8_t> colors = frame.as<uint8_t>("colors");
    ASSERT_EQ(colors.size(), want.vertexCount() * 3);
    const Bounds b = want.bounds();
    for (size_t i = 0; i < want.vertexCount(); ++i) {
      const auto c = colorMapColor(ColorMap::kTerrain, (want.positions[i].y - b.min.y) / (b.max.y - b.min.y));
      for (int k = 0; k < 3; ++k) ASSERT_EQ(colors[3 * i + size_t(k)], uint8_t(std::lround(255.0f * c[size_t(k)]))) << i;
    }
    EXPECT_EQ(frame.header["kind"], "noise.terrain");
    EXPECT_EQ(frame.header["size"], json::array({24, 16, 20}));
    for (const char* stage : {"noise_ms", "mesh_ms", "total_ms"})
      EXPECT_GE(frame.header["timings"][stage].get<double>(), 0.0) << stage;
  }
}

TEST(StudioNoiseTerrain, OpenBoundaryAndAnEmptySurface) {
  TestServer server;
  NoiseParams params;
  params.type = NoiseType::kCellular;
  params.fractal = FractalType::kNone;
  params.frequency = 0.1;
  NoiseGrid grid;
  grid.size = {20, 20, 20, 1};
  const std::vector<float> field = referenceField(params, grid);
  IsosurfaceOptions iso;
  iso.threshold = -0.5f;
  const TriangleMesh want = extractIsosurface({field.data(), {20, 20, 20}}, iso);
  expectSameMesh(frameOf(server.post("/api/noise/terrain", R"({"type": "cellular", "fractal": "none", "frequency": 0.1,
      "size": 20, "threshold": -0.5, "close_boundary": false, "colormap": "none"})")),
                 want);
  // Above every value (all types are in [-1, 1]): nothing is solid.
  const DecodedFrame empty = frameOf(server.post("/api/noise/terrain", R"({"size": 16, "threshold": 1.5})"));
  EXPECT_EQ(empty.header["vertices"], 0);
  EXPECT_EQ(empty.header["triangles"], 0);
  EXPECT_TRUE(empty.header["bounds"].is_null());
  EXPECT_EQ(empty.buffers.at("positions").size(), 0u);
}

TEST(StudioNoiseExport, FilesAreTheLibraryEncodersBytes) {
  TestServer server;
  const char* params = R"("size": [50, 40], "seed": 21, "colormap": "viridis")";
  NoiseParams noise;
  noise.dims = 2;
  noise.seed = 21;
  NoiseGrid grid;
  grid.size = {50, 40, 1, 1};
  const std::vector<float> field = referenceField(noise, grid);

  auto png = server.post("/api/noise/export", std::string("{") + params + R"(, "format": "png"})");
  ASSERT_EQ(png.status, 200) << png.body;
  EXPECT_EQ(png.content_type, "image/png");
  EXPECT_NE(png.headers["Content-Disposition"].find("noise-perlin-2d-seed21.png"), std::string::npos);
  PngOptions srgb;
  srgb.srgb = true;
  const std::vector<uint8_t> want_png = encodePng(fieldToImage8(field.data(), 50, 40, ColorMap::kViridis).view(), srgb);
  EXPECT_EQ(png.body, std::string(want_png.begin(), want_png.end()));

  auto png16 = server.post("/api/noise/export", std::string("{") + params + R"(, "format": "png16"})");
  ASSERT_EQ(png16.status, 200) << png16.body;
  const std::vector<uint8_t> want16 = encodePng(heightmapToGray16(field.data(), 50, 40).view());
  EXPECT_EQ(png16.body, std::string(want16.begin(), want16.end()));

  auto glb = server.post("/api/noise/export", R"({"dims": 3, "size": 20, "frequency": 0.08, "format": "glb"})");
  ASSERT_EQ(glb.status, 200) << glb.body;
  NoiseParams noise3;
  noise3.frequency = 0.08;
  NoiseGrid grid3;
  grid3.size = {20, 20, 20, 1};
  const std::vector<float> volume = referenceField(noise3, grid3);
  IsosurfaceOptions iso;
  iso.close_boundary = true;
  const std::vector<uint8_t> want_glb =
      encodeMesh(extractIsosurface({volume.data(), {20, 20, 20}}, iso), GeometryFormat::kGlb);
  EXPECT_EQ(glb.body, std::string(want_glb.begin(), want_glb.end()));
  EXPECT_EQ(glb.body.substr(0, 4), "glTF");

  auto obj = server.post("/api/noise/export", R"({"size": 8, "format": "obj"})");
  ASSERT_EQ(obj.status, 200) << obj.body;
  EXPECT_NE(obj.body.find("\nf "), std::string::npos);
}

TEST(StudioNoiseErrors, BadParametersAre400sNamingTheField) {
  TestServer server;
  struct Case {
    const char* path;
    const char* body;
    const char* names;  // what the message must contain
  };
  const Case cases[] = {
      {"/api/noise/heightmap", "{\"size\": ", "not valid JSON"},
      {"/api/noise/heightmap", "[1, 2]", "JSON object"},
      {"/api/noise/heightmap", R"({"type": "worley"})", "'type'"},
      {"/api/noise/heightmap", R"({"type": 3})", "'type'"},
      {"/api/noise/heightmap", R"({"fractal": "fbmx"})", "'fractal'"},
      {"/api/noise/heightmap", R"({"octaves": 0})", "'octaves'"},
      {"/api/noise/heightmap", R"({"octaves": 17})", "'octaves'"},
      {"/api/noise/heightmap", R"({"octaves": 2.5})", "'octaves'"},
      {"/api/noise/heightmap", R"({"octaves": "many"})", "'octaves'"},
      {"/api/noise/heightmap", R"({"frequency": 0})", "'frequency'"},
      {"/api/noise/heightmap", R"({"frequency": -1})", "'frequency'"},
      {"/api/noise/heightmap", R"({"lacunarity": 1e9})", "'lacunarity'"},
      {"/api/noise/heightmap", R"({"gain": "half"})", "'gain'"},
      {"/api/noise/heightmap", R"({"seed": -1})", "'seed'"},
      {"/api/noise/heightmap", R"({"seed": 1.5})", "'seed'"},
      {"/api/noise/heightmap", R"({"size": 1})", "'size'"},
      {"/api/noise/heightmap", R"({"size": [64]})", "'size'"},
      {"/api/noise/heightmap", R"({"size": [64, 64.5]})", "'size'"},
      {"/api/noise/heightmap", R"({"size": [64, "x"]})", "'size'"},
      {"/api/noise/heightmap", R"({"colormap": "jet"})", "'colormap'"},
      {"/api/noise/heightmap", R"({"backend": "gpu"})", "'backend'"},
      {"/api/noise/heightmap", R"({"threads": 0})", "'threads'"},
      {"/api/noise/heightmap", R"({"jitter": 2})", "'jitter'"},
      {"/api/noise/heightmap", R"({"origin": [1, 2, 3]})", "'origin'"},
      {"/api/noise/heightmap", R"({"mesh": "yes"})", "'mesh'"},
      {"/api/noise/heightmap", R"({"mesh": true, "size": 2048})", "'size'"},
      // The library's own checks, after the request's: its message names them.
      {"/api/noise/heightmap", R"({"type": "simplex", "tile": true})", "simplex noise cannot tile"},
      {"/api/noise/heightmap", R"({"origin": [3e9, 0], "frequency": 1})", "2^31 lattice cells"},
      {"/api/noise/terrain", R"({"type": "cellular", "time": 1})", "cellular noise is 2D or 3D"},
      {"/api/noise/terrain", R"({"threshold": "high"})", "'threshold'"},
      {"/api/noise/terrain", R"({"threshold": 5})", "'threshold'"},
      {"/api/noise/terrain", R"({"size": [16, 16]})", "'size'"},
      {"/api/noise/export", R"({"format": "tiff"})", "'format'"},
      {"/api/noise/export", R"({"dims": 3, "format": "png"})", "'format'"},
      {"/api/noise/export", R"({"dims": 4})", "'dims'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.path) + " " + c.body);
    const HttpReply reply = server.post(c.path, c.body);
    EXPECT_EQ(reply.status, 400);
    EXPECT_EQ(errorKind(reply), "request");
    EXPECT_NE(errorMessage(reply).find(c.names), std::string::npos) << errorMessage(reply);
  }
  EXPECT_EQ(server.get("/api/info").status, 200);  // still serving
}

TEST(StudioNoiseErrors, OversizedGridsAreRefusedBeforeAllocating) {
  TestServer server;
  // Beyond the per-axis bounds: refused by the request check, whatever the budget.
  for (const char* body : {R"({"size": 2049})", R"({"size": [100000000, 100000000]})", R"({"size": 1e300})"}) {
    const HttpReply reply = server.post("/api/noise/heightmap", body);
    EXPECT_EQ(reply.status, 400) << body;
    EXPECT_NE(errorMessage(reply).find("'size'"), std::string::npos) << errorMessage(reply);
  }
  const HttpReply cube = server.post("/api/noise/terrain", R"({"size": [257, 16, 16]})");
  EXPECT_EQ(cube.status, 400);
  EXPECT_NE(errorMessage(cube).find("[2, 256]"), std::string::npos) << errorMessage(cube);

  // Within the bounds but over the job's memory budget: 422 "budget", named
  // stage, before the field is allocated (a 1 MiB budget; 512² floats are 1 MiB).
  StudioOptions options = TestServer::quietOptions();
  options.memory_budget = 1 << 20;
  TestServer small(options);
  const HttpReply budget = small.post("/api/noise/heightmap", R"({"size": 512})");
  EXPECT_EQ(budget.status, 422);
  EXPECT_EQ(errorKind(budget), "budget");
  EXPECT_NE(errorMessage(budget).find("noise field"), std::string::npos) << errorMessage(budget);
  const HttpReply volume = small.post("/api/noise/terrain", R"({"size": 128})");
  EXPECT_EQ(volume.status, 422);
  EXPECT_EQ(errorKind(volume), "budget");
  // A small one still fits.
  EXPECT_EQ(small.post("/api/noise/heightmap", R"({"size": 64})").status, 200);
}

TEST(StudioNoiseHeightmap, OpenclFieldIsTheLibrarysOpenclField) {
  if (!backendAvailable(Backend::kOpenCL)) GTEST_SKIP() << "built without OpenCL";
  NoiseParams params;
  params.dims = 2;
  params.octaves = 3;
  NoiseGrid grid;
  grid.size = {64, 48, 1, 1};
  Execution opencl;
  opencl.backend = Backend::kOpenCL;
  std::vector<float> want;
  try {
    want = referenceField(params, grid, opencl);
  } catch (const BackendUnavailableError& e) {
    GTEST_SKIP() << "no OpenCL device: " << e.what();
  }
  TestServer server;
  const DecodedFrame frame =
      frameOf(server.post("/api/noise/heightmap", R"({"size": [64, 48], "octaves": 3, "backend": "opencl"})"));
  EXPECT_EQ(frame.header["backend"], "opencl");
  expectSameBits(frame.as<float>("field"), want);
  // And within the documented tolerance of the serial reference.
  const std::vector<float> serial = referenceField(params, grid);
  const std::vector<float> got = frame.as<float>("field");
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], serial[i], kNoiseOpenCLTolerance) << i;
}

TEST(StudioNoiseErrors, AJobPastTheTimeLimitStopsBetweenStages) {
  StudioOptions options = TestServer::quietOptions();
  options.time_limit_seconds = 0.001;  // 256³ samples take longer than that to generate anywhere
  TestServer server(options);
  const HttpReply reply = server.post("/api/noise/terrain", R"({"size": 256, "backend": "serial"})");
  EXPECT_EQ(reply.status, 422);
  EXPECT_EQ(errorKind(reply), "time_limit");
}

TEST(StudioNoiseErrors, ANewerRequestOnTheChannelCancelsTheStaleTerrain) {
  TestServer server;
  // The stale job is big (a serial 256³ volume and its surface); the newer one
  // small. The stale one stops at its next check with 409. The newer request
  // must arrive while the stale one runs: a few tries absorb a slow start.
  bool cancelled = false;
  for (int attempt = 0; attempt < 5 && !cancelled; ++attempt) {
    HttpReply stale;
    std::thread first([&] {
      stale = server.post("/api/noise/terrain", R"({"size": 256, "backend": "serial"})", "client-a");
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const HttpReply fresh = server.post("/api/noise/terrain", R"({"size": 16})", "client-a");
    first.join();
    EXPECT_EQ(fresh.status, 200);
    if (stale.status == 409) {
      EXPECT_EQ(errorKind(stale), "cancelled");
      cancelled = true;
    } else {
      EXPECT_EQ(stale.status, 200);  // it finished before the newer one came
    }
  }
  EXPECT_TRUE(cancelled);
}

TEST(StudioNoiseErrors, AMissingBackendIsA422) {
  if (backendAvailable(Backend::kOpenCL)) GTEST_SKIP() << "opencl is built in";
  TestServer server;
  const HttpReply reply = server.post("/api/noise/terrain", R"({"size": 16, "backend": "opencl"})");
  EXPECT_EQ(reply.status, 422);
  EXPECT_EQ(errorKind(reply), "backend");
}

}  // namespace
}  // namespace procgen
