// `procgen noise` end to end (issue 17 point 5): the stats keys, every
// documented flag's effect, `--at` against the grid value at the same point,
// 16- and 8-bit PNG heightmaps decoded by libpng against the raw floats,
// the raw file and its sidecar, meshes, and bad input: exit codes, a message,
// and no file written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cli_run.hpp"
#include "common/png_decode.hpp"
#include "procgen/backend.hpp"
#include "procgen/volume.hpp"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using procgen::test::runProcgen;
using procgen::test::slurp;

class CliNoise : public procgen::test::ScratchDirTest {
 protected:
  // Runs `procgen noise ARGS` in dir_; expects exit `code`.
  void run(const std::string& args, int code = 0) {
    last_code_ = runProcgen("noise " + args, dir_ / "err.txt", dir_ / "out.txt");
    ASSERT_EQ(last_code_, code) << args << "\n" << slurp(dir_ / "err.txt");
  }
  Json stats(const std::string& args) {
    run(args + " -q --stats-json " + (dir_ / "s.json").string());
    return Json::parse(slurp(dir_ / "s.json"));
  }
  std::vector<float> raw(const std::string& args) {
    run(args + " -q -o " + (dir_ / "f.raw").string());
    const std::string bytes = slurp(dir_ / "f.raw");
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), v.size() * 4);
    return v;
  }
  std::string err() { return slurp(dir_ / "err.txt"); }
  int last_code_ = 0;
};

TEST_F(CliNoise, StatsHaveEveryDocumentedKey) {
  const Json j = stats("perlin --size 20 -o " + (dir_ / "t.obj").string());
  for (const char* key : {"type", "dims", "size", "points", "octaves", "frequency", "seed", "min", "max", "mean",
                          "checksum", "gen_ms", "mpts_per_s", "backend", "threads", "vertices", "triangles"})
    EXPECT_TRUE(j.contains(key)) << key << "\n" << j.dump();
  // The defaults: a 3D fBm field of 5 octaves at the non-dyadic frequency 0.0173.
  EXPECT_EQ(j["type"], "perlin");
  EXPECT_EQ(j["dims"], 3);
  EXPECT_EQ(j["size"], Json::array({20, 20, 20}));
  EXPECT_EQ(j["points"], 8000);
  EXPECT_EQ(j["octaves"], 5);
  EXPECT_DOUBLE_EQ(j["frequency"].get<double>(), 0.0173);
  EXPECT_EQ(j["backend"], "serial");
  EXPECT_EQ(j["checksum"].get<std::string>().size(), 16u);
  EXPECT_GE(j["min"].get<double>(), -1.0);
  EXPECT_LE(j["max"].get<double>(), 1.0);
  EXPECT_LE(j["min"].get<double>(), j["mean"].get<double>());
  EXPECT_LE(j["mean"].get<double>(), j["max"].get<double>());
  EXPECT_GT(j["triangles"].get<int>(), 0);
  const std::string obj = slurp(dir_ / "t.obj");
  EXPECT_NE(obj.find("\nvn "), std::string::npos);
}

TEST_F(CliNoise, RawAndSidecarDescribeTheField) {
  const Json j = stats("value --dims 2 --size 12x7 --seed 9 -o " + (dir_ / "f.raw").string());
  const std::string bytes = slurp(dir_ / "f.raw");
  ASSERT_EQ(bytes.size(), 12u * 7u * 4u);
  std::vector<float> v(12 * 7);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  float lo = INFINITY, hi = -INFINITY;
  for (float x : v) lo = std::min(lo, x), hi = std::max(hi, x);
  EXPECT_EQ(lo, j["min"].get<float>());
  EXPECT_EQ(hi, j["max"].get<float>());
  const Json side = Json::parse(slurp(dir_ / "f.json"));
  EXPECT_EQ(side["data_file"], "f.raw");
  EXPECT_EQ(side["element_type"], "float32");
  EXPECT_EQ(side["byte_order"], "little_endian");
  EXPECT_EQ(side["dims"], Json::array({12, 7, 1}));
  EXPECT_EQ(side["value_range"][0].get<float>(), lo);
  EXPECT_EQ(side["noise"]["type"], "value");
  EXPECT_EQ(side["noise"]["seed"], 9);
  EXPECT_EQ(side["noise"]["size"], Json::array({12, 7}));
  EXPECT_TRUE(fs::exists(dir_ / "f.nhdr"));
}

TEST_F(CliNoise, SixteenBitHeightmapRoundTrip) {
  run("perlin --dims 2 --size 33x17 --bits 16 -q -o " + (dir_ / "h.png").string() + " -o " + (dir_ / "h.raw").string());
  const std::string bytes = slurp(dir_ / "h.png");
  const procgen::test::Decoded png = procgen::test::decode(std::vector<uint8_t>(bytes.begin(), bytes.end()));
  ASSERT_TRUE(png.ok);
  EXPECT_EQ(png.width, 33u);
  EXPECT_EQ(png.height, 17u);
  EXPECT_EQ(png.bit_depth, 16);
  EXPECT_EQ(png.channels, 1);
  const std::string rb = slurp(dir_ / "h.raw");
  std::vector<float> v(33 * 17);
  ASSERT_EQ(rb.size(), v.size() * 4);
  std::memcpy(v.data(), rb.data(), rb.size());
  const float lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i)  // min..max maps linearly to 0..65535, row 0 = y 0
    ASSERT_EQ(png.samples[i], uint16_t(std::lround((double(v[i]) - lo) / (double(hi) - lo) * 65535.0))) << i;
  EXPECT_EQ(*std::min_element(png.samples.begin(), png.samples.end()), 0);
  EXPECT_EQ(*std::max_element(png.samples.begin(), png.samples.end()), 65535);

  run("perlin --dims 2 --size 33x17 -q -o " + (dir_ / "h8.png").string());
  const std::string b8 = slurp(dir_ / "h8.png");
  const procgen::test::Decoded p8 = procgen::test::decode(std::vector<uint8_t>(b8.begin(), b8.end()));
  ASSERT_TRUE(p8.ok);
  EXPECT_EQ(p8.bit_depth, 8);
  for (size_t i = 0; i < v.size(); ++i)
    ASSERT_EQ(p8.samples[i], uint16_t(std::lround((double(v[i]) - lo) / (double(hi) - lo) * 255.0))) << i;

  run("perlin --dims 2 --size 33x17 --colormap viridis -q -o " + (dir_ / "c.png").string());
  const std::string bc = slurp(dir_ / "c.png");
  const procgen::test::Decoded pc = procgen::test::decode(std::vector<uint8_t>(bc.begin(), bc.end()));
  ASSERT_TRUE(pc.ok);
  EXPECT_EQ(pc.channels, 3);
}

TEST_F(CliNoise, AtEqualsTheGridValue) {
  // Grid sample (3, 5, 2) of origin (-10, 4, 2.5), step 0.5 sits at (-8.5, 6.5, 3.5).
  const std::vector<float> grid = raw("simplex --naive --size 6x8x4 --origin -10,4,2.5 --step 0.5 --frequency 0.37");
  ASSERT_EQ(grid.size(), 6u * 8u * 4u);
  run("simplex --at -8.5,6.5,3.5 --frequency 0.37");
  const float at = std::stof(slurp(dir_ / "out.txt"));
  EXPECT_EQ(at, grid[3 + 6 * (5 + 8 * 2)]);

  // --gradient: the value, then d/dx d/dy d/dz; check against central differences.
  run("perlin --at 1.25,2.5,-3.75 --gradient --frequency 0.37");
  std::istringstream line(slurp(dir_ / "out.txt"));
  double v, g[3];
  line >> v >> g[0] >> g[1] >> g[2];
  ASSERT_FALSE(line.fail()) << slurp(dir_ / "out.txt");
  const double h = 1e-3;
  const double p[3] = {1.25, 2.5, -3.75};
  for (int d = 0; d < 3; ++d) {
    double a[3] = {p[0], p[1], p[2]}, b[3] = {p[0], p[1], p[2]};
    a[d] -= h;
    b[d] += h;
    auto at3 = [&](const double* q) {
      run("perlin --frequency 0.37 --at " + std::to_string(q[0]) + "," + std::to_string(q[1]) + "," + std::to_string(q[2]));
      return std::stod(slurp(dir_ / "out.txt"));
    };
    EXPECT_NEAR(g[d], (at3(b) - at3(a)) / (2 * h), 2e-2 * (1 + std::fabs(g[d]))) << d;
  }
}

TEST_F(CliNoise, OriginAndStepSelectTheSamePoints) {
  const std::vector<float> big = raw("perlin --naive --dims 2 --size 8x8");
  const std::vector<float> shifted = raw("perlin --naive --dims 2 --size 4x4 --origin 4,2");
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) EXPECT_EQ(shifted[size_t(x + 4 * y)], big[size_t(x + 4 + 8 * (y + 2))]);
  const std::vector<float> coarse = raw("perlin --naive --dims 2 --size 4x4 --step 2");
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) EXPECT_EQ(coarse[size_t(x + 4 * y)], big[size_t(2 * x + 8 * 2 * y)]);
}

TEST_F(CliNoise, EveryFieldFlagChangesTheField) {
  const std::string base = "perlin --size 16x16x4";
  const std::string c0 = stats(base)["checksum"];
  for (const char* flag : {"--seed 7", "--frequency 0.05", "--fractal none", "--fractal ridged", "--fractal billow",
                           "--fractal pingpong", "--octaves 2", "--lacunarity 2.5", "--gain 0.7", "--warp 20",
                           "--time 3", "--tile", "--weighted-strength 0.5", "--origin 1,2,3", "--step 0.5"})
    EXPECT_NE(stats(base + " " + flag)["checksum"], c0) << flag;
  const std::string cell = "cellular --size 16x16x4";
  const std::string c1 = stats(cell)["checksum"];
  for (const char* flag : {"--cellular-distance manhattan", "--cellular-distance chebyshev", "--cellular-distance sq",
                           "--cellular-return f2", "--cellular-return f2-f1", "--cellular-return value", "--jitter 0.3"})
    EXPECT_NE(stats(cell + " " + flag)["checksum"], c1) << flag;
  // --dims/--size: the number of points.
  EXPECT_EQ(stats("value --dims 4 --size 3x4x5x6")["points"], 360);
  EXPECT_EQ(stats("value --dims 2 --size 9")["points"], 81);
}

TEST_F(CliNoise, BackendsAndNaiveAgree) {
  const Json serial = stats("perlin --size 24x20x12");
  if (procgen::backendAvailable(procgen::Backend::kCpu)) {
    const Json cpu = stats("perlin --size 24x20x12 --backend cpu --threads 2");
    EXPECT_EQ(cpu["checksum"], serial["checksum"]);
    EXPECT_EQ(cpu["threads"], 2);
    EXPECT_EQ(cpu["backend"], "cpu");
  }
  const std::vector<float> fast = raw("perlin --size 24x20x12");
  const std::vector<float> naive = raw("perlin --size 24x20x12 --naive");
  ASSERT_EQ(fast.size(), naive.size());
  for (size_t i = 0; i < fast.size(); ++i) ASSERT_NEAR(fast[i], naive[i], 1e-4) << i;
}

TEST_F(CliNoise, ThresholdMovesTheSurfaceAndMeshesAreWritten) {
  const Json a = stats("perlin --size 20 --threshold 0 -o " + (dir_ / "a.ply").string());
  const Json b = stats("perlin --size 20 --threshold 0.2 -o " + (dir_ / "b.ply").string());
  EXPECT_NE(a["triangles"], b["triangles"]);
  // A 2D field makes a terrain grid: one vertex per sample.
  const Json t = stats("perlin --dims 2 --size 10x6 -o " + (dir_ / "t.glb").string() + " -o " + (dir_ / "t.obj").string());
  EXPECT_EQ(t["vertices"], 60);
  EXPECT_EQ(t["triangles"], 2 * 9 * 5);
  EXPECT_TRUE(fs::file_size(dir_ / "t.glb") > 0);
  // A 3D PNG is a shaded render of the iso-surface.
  run("perlin --size 16 -q --image-size 64,48 -o " + (dir_ / "r.png").string());
  const std::string bytes = slurp(dir_ / "r.png");
  const procgen::test::Decoded png = procgen::test::decode(std::vector<uint8_t>(bytes.begin(), bytes.end()));
  ASSERT_TRUE(png.ok);
  EXPECT_EQ(png.width, 64u);
  EXPECT_EQ(png.channels, 3);
}

TEST_F(CliNoise, BadInputFailsWithACodeAndWritesNothing) {
  const std::string out = " -o " + (dir_ / "x.png").string() + " -o " + (dir_ / "x.raw").string() +
                          " --stats-json " + (dir_ / "x.json").string();
  struct Case {
    std::string args;
    int code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"fractal", 1, "unknown noise type"},
      {"perlin --bogus", 1, "bogus"},
      {"perlin --frequency nan", 1, "frequency"},
      {"perlin --gain inf", 1, "gain"},
      {"perlin --origin 1,nan,2", 1, "--origin"},
      {"perlin --octaves 0", 1, "octaves"},
      {"perlin --octaves 17", 1, "octaves"},
      {"perlin --dims 5", 1, "--dims"},
      {"perlin --dims 3 --size 4x4", 1, "--dims"},
      {"perlin --size 0", 1, "at least 1"},
      {"perlin --size 99999999999999999999", 2, "overflows"},
      {"perlin --size 4294967296x4294967296x4294967296", 2, "overflows"},
      {"perlin --size 100000x100000x100000", 2, "memory budget"},
      {"perlin --bits 12", 1, "--bits"},
      {"perlin --dims 2 --size 8 --colormap jet", 1, "colormap"},
      {"perlin --dims 4 --size 4", 1, "4D"},
      {"cellular --dims 4 --size 4", 1, "cellular"},
      {"perlin --fractal fancy", 1, "fractal"},
      {"perlin --cellular-distance far", 1, "cellular-distance"},
      {"perlin --at 1,2", 1, "--at"},
      {"value --at 1,2,3 --gradient", 1, "--at"},
      {"perlin --threshold nan", 1, "--threshold"},
      {"perlin --step 0", 1, "--step"},
  };
  for (const Case& c : cases) {
    run(c.args + out, c.code);
    EXPECT_NE(err().find(c.message), std::string::npos) << c.args << "\n" << err();
    for (const char* f : {"x.png", "x.raw", "x.json", "x.nhdr"}) EXPECT_FALSE(fs::exists(dir_ / f)) << c.args << " wrote " << f;
  }
  run("value --at 1,2,3 --gradient", 1);
  EXPECT_NE(err().find("gradient"), std::string::npos) << err();
  // .vdb: refused where the build has no OpenVDB; a 4D field never has one.
  // (tests/io/vdb_writer_test.cpp reads back what a build with OpenVDB writes.)
  if (!procgen::volumeVdbAvailable()) {
    run("perlin --size 8 -o " + (dir_ / "x.vdb").string(), 1);
    EXPECT_NE(err().find("OpenVDB"), std::string::npos) << err();
    EXPECT_FALSE(fs::exists(dir_ / "x.vdb"));
  }
  run("perlin --dims 4 --size 4 -o " + (dir_ / "x.vdb").string(), 1);
  EXPECT_FALSE(fs::exists(dir_ / "x.vdb"));
  run("perlin --size 8 -o " + (dir_ / "x.svg").string(), 1);
  EXPECT_FALSE(fs::exists(dir_ / "x.svg"));
}

// `procgen bench noise`: one row per octave count, the naive column first,
// cold figures from fresh processes, and the same rows in the JSON.
TEST_F(CliNoise, BenchNoisePrintsTheSeedsTable) {
  const fs::path json = dir_ / "bench.json";
  ASSERT_EQ(runProcgen("bench noise --size 16 --octaves 1,3 --repeat 1 --cold-runs 1 --threads 1 --json " + json.string(),
                       dir_ / "err.txt", dir_ / "out.txt"),
            0)
      << err();
  const std::string table = slurp(dir_ / "out.txt");
  EXPECT_NE(table.find("| octaves | naive ms | serial ms |"), std::string::npos) << table;
  EXPECT_NE(table.find("\n| 1 | "), std::string::npos) << table;
  EXPECT_NE(table.find("\n| 3 | "), std::string::npos) << table;
  EXPECT_NE(table.find("| 3 | naive | "), std::string::npos) << table;  // the cold table
  const Json j = Json::parse(slurp(json));
  EXPECT_EQ(j["points"], 16 * 16 * 16);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][1]["octaves"], 3);
  for (const Json& ms : j["rows"][1]["ms"]) EXPECT_GT(ms.get<double>(), 0.0) << j.dump();
  for (const Json& ms : j["rows"][1]["cold_ms"]) EXPECT_GT(ms.get<double>(), 0.0) << j.dump();
}

}  // namespace
