// `procgen flame` and `procgen flam3-render` end to end (issue 19 point 4):
// the stats keys and the sample count of their definition (quality × width ×
// height, as flam3), numbered outputs, PNG depth and channels decoded by
// libpng, identical pixels for the same seed on serial and cpu and at any
// --png-level, and
// flam3-render's environment interface checked against the equivalent
// `procgen flame` options (qs ≡ --quality, ss ≡ --size, isaac_seed ≡ --seed:
// same bytes). Bad input — malformed genomes, unknown variations, absurd
// sizes and qualities, a histogram over the memory budget — exits 2 (1 for
// bad options) and leaves no file. The genomes are the committed
// examples/flames/*.flam3 (640x360, quality 25, flam3-genome's output),
// edited here where a test needs a defect.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/cli_run.hpp"
#include "common/png_decode.hpp"
#include "procgen/backend.hpp"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using procgen::test::runProcgen;
using procgen::test::slurp;

const fs::path kExamples = fs::path(PROCGEN_SOURCE_DIR) / "examples" / "flames";

/// Small and fast: 64x36 (a tenth of the genomes' 640x360) at quality 5.
const std::string kSmall = " --size 64x36 --quality 5 ";

class CliFlame : public procgen::test::ScratchDirTest {
 protected:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  int run(const std::string& args, const std::string& env = "") {
    return runProcgen(args, dir_ / "err.txt", dir_ / "out.txt", env);
  }
  std::string err() const { return slurp(dir_ / "err.txt"); }
  std::string out() const { return slurp(dir_ / "out.txt"); }
  /// The files of the scratch directory other than the captured streams and the inputs (*.flam3).
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string n = e.path().filename().string();
      if (n != "err.txt" && n != "out.txt" && e.path().extension() != ".flam3") names.push_back(n);
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  procgen::test::Decoded png(const std::string& name) const {
    const std::string bytes = slurp(dir_ / name);
    return procgen::test::decode(std::vector<uint8_t>(bytes.begin(), bytes.end()));
  }
  /// A committed genome's text.
  static std::string genome(const std::string& name) { return slurp(kExamples / name); }
  /// Runs `args` expecting exit `code`, a diagnostic on stderr and no file written.
  void expectRefused(const std::string& args, int code, const std::string& in_message = "",
                     const std::string& env = "") {
    const std::vector<std::string> before = files();
    EXPECT_EQ(run(args, env), code) << env << " " << args << "\n" << err();
    EXPECT_NE(err().find("error"), std::string::npos) << err();
    if (!in_message.empty()) {
      EXPECT_NE(err().find(in_message), std::string::npos) << in_message << "\n" << err();
    }
    EXPECT_EQ(files(), before) << "a refused run writes nothing: " << args;
  }
};

/// The 1-based line of the first occurrence of `needle` in `text`.
int lineOfText(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  return at == std::string::npos ? 0
                                 : 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

/// `text` with the first `from` replaced by `to` (the test fails when absent).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST_F(CliFlame, StatsHaveExactlyTheDocumentedKeys) {
  const std::string args = "flame " + (kExamples / "linear.flam3").string() + " --index 0" + kSmall +
                           "-q -o " + path("a.png") + " --stats-json " + path("s.json");
  ASSERT_EQ(run(args), 0) << err();
  const Json j = Json::parse(slurp(dir_ / "s.json"));
  std::set<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.insert(key);
  EXPECT_EQ(keys, (std::set<std::string>{"flames", "width", "height", "samples", "iter_ms", "filter_ms",
                                         "total_ms", "msamples_per_s", "bad_values", "backend", "threads"}));
  EXPECT_EQ(j["flames"], 1);
  EXPECT_EQ(j["width"], 64);
  EXPECT_EQ(j["height"], 36);
  // samples: plotted points = quality × width × height (flam3's count); a
  // chaos game may round up to whole batches, so 1% is allowed.
  const double expected = 5.0 * 64 * 36;
  EXPECT_NEAR(j["samples"].get<double>(), expected, 0.01 * expected);
  EXPECT_EQ(j["backend"], "serial");
  EXPECT_EQ(j["threads"], 1);
  EXPECT_GE(j["bad_values"].get<int64_t>(), 0);
  const double iter_ms = j["iter_ms"].get<double>(), filter_ms = j["filter_ms"].get<double>();
  EXPECT_GE(iter_ms, 0.0);
  EXPECT_GE(filter_ms, 0.0);
  EXPECT_GE(j["total_ms"].get<double>(), iter_ms + filter_ms);
  if (iter_ms > 0) {
    EXPECT_NEAR(j["msamples_per_s"].get<double>(), j["samples"].get<double>() / (iter_ms * 1e3),
                1e-9 * j["msamples_per_s"].get<double>());
  }
  const procgen::test::Decoded image = png("a.png");
  ASSERT_TRUE(image.ok);
  EXPECT_EQ(image.width, 64u);
  EXPECT_EQ(image.height, 36u);
  EXPECT_EQ(image.bit_depth, 8);
  EXPECT_EQ(image.channels, 3);  // opaque over the background without --transparency

  // Statistics on stdout, the image in a file; the genome on stdin.
  ASSERT_EQ(run("flame - --index 1" + kSmall + "-q -o " + path("b.png") + " --stats-json - < " +
                (kExamples / "linear.flam3").string()),
            0)
      << err();
  EXPECT_EQ(Json::parse(out())["flames"], 1);
  EXPECT_TRUE(fs::exists(dir_ / "b.png"));
}

TEST_F(CliFlame, SeveralFlamesGetNumberedOutputs) {
  const std::string mixed = (kExamples / "mixed.flam3").string();
  ASSERT_EQ(run("flame " + mixed + kSmall + "-q -o " + path("out.png") + " --stats-json " + path("s.json")),
            0)
      << err();
  EXPECT_EQ(files(), (std::vector<std::string>{"out-00000.png", "out-00001.png", "s.json"}));
  EXPECT_EQ(Json::parse(slurp(dir_ / "s.json"))["flames"], 2);
  const double expected = 2 * 5.0 * 64 * 36;  // both flames' samples
  EXPECT_NEAR(Json::parse(slurp(dir_ / "s.json"))["samples"].get<double>(), expected, 0.01 * expected);
  for (const char* name : {"out-00000.png", "out-00001.png"}) {
    const procgen::test::Decoded image = png(name);
    ASSERT_TRUE(image.ok) << name;
    EXPECT_EQ(image.width, 64u);
    EXPECT_EQ(image.height, 36u);
  }
  // --index K: that flame alone, under the name given; the same pixels as its numbered twin.
  ASSERT_EQ(run("flame " + mixed + " --index 1" + kSmall + "-q -o " + path("one.png")), 0) << err();
  EXPECT_EQ(png("one.png").samples, png("out-00001.png").samples);
  EXPECT_NE(png("out-00000.png").samples, png("out-00001.png").samples);
  // An index past the end is bad input.
  expectRefused("flame " + mixed + " --index 2" + kSmall + "-q -o " + path("none.png"), 2);
}

TEST_F(CliFlame, DepthTransparencyAndSize) {
  const std::string linear = (kExamples / "linear.flam3").string();
  ASSERT_EQ(run("flame " + linear + " --index 0 --size 48x27 --quality 3 --bpc 16 --transparency -q -o " +
                path("t.png")),
            0)
      << err();
  const procgen::test::Decoded image = png("t.png");
  ASSERT_TRUE(image.ok);
  EXPECT_EQ(image.width, 48u);
  EXPECT_EQ(image.height, 27u);
  EXPECT_EQ(image.bit_depth, 16);
  EXPECT_EQ(image.channels, 4);
  // The genome's own size when --size is absent (640x360), at a tiny quality.
  ASSERT_EQ(run("flame " + linear + " --index 0 --quality 0.05 -q -o " + path("g.png")), 0) << err();
  EXPECT_EQ(png("g.png").width, 640u);
  EXPECT_EQ(png("g.png").height, 360u);
}

TEST_F(CliFlame, SameSeedSamePixelsOnEveryCpuBackend) {
  const std::string base =
      "flame " + (kExamples / "trig.flam3").string() + " --index 0" + kSmall + "-q --seed 42 ";
  ASSERT_EQ(run(base + "-o " + path("serial.png")), 0) << err();
  ASSERT_EQ(run(base + "-o " + path("again.png")), 0) << err();
  EXPECT_EQ(slurp(dir_ / "serial.png"), slurp(dir_ / "again.png"));
  ASSERT_EQ(run("flame " + (kExamples / "trig.flam3").string() + " --index 0" + kSmall + "-q --seed 43 -o " +
                path("other.png")),
            0);
  EXPECT_NE(png("serial.png").samples, png("other.png").samples) << "the seed changes the chaos game";
  if (!procgen::backendAvailable(procgen::Backend::kCpu))
    GTEST_SKIP() << "no cpu backend (built without oneTBB)";
  for (int threads : {1, 2, 7}) {
    const std::string name = "cpu" + std::to_string(threads) + ".png";
    ASSERT_EQ(run(base + "--backend cpu --threads " + std::to_string(threads) + " -o " + path(name)), 0)
        << err();
    EXPECT_EQ(slurp(dir_ / name), slurp(dir_ / "serial.png")) << threads << " threads";
  }
}

TEST_F(CliFlame, PngLevelChangesTheBytesNotThePixels) {
  const std::string base = "flame " + (kExamples / "mixed.flam3").string() + " --index 0" + kSmall + "-q ";
  ASSERT_EQ(run(base + "-o " + path("default.png")), 0) << err();
  ASSERT_EQ(run(base + "--png-level 0 -o " + path("stored.png")), 0) << err();
  ASSERT_EQ(run(base + "--png-level 9 -o " + path("best.png")), 0) << err();
  const procgen::test::Decoded stored = png("stored.png");
  ASSERT_TRUE(stored.ok);
  EXPECT_EQ(png("default.png").samples, stored.samples);
  EXPECT_EQ(png("best.png").samples, stored.samples);
  // Level 0 stores the rows uncompressed: more bytes than the filtered image's pixels.
  EXPECT_GT(slurp(dir_ / "stored.png").size(), size_t{64 * 36 * 3});
  EXPECT_LT(slurp(dir_ / "best.png").size(), slurp(dir_ / "stored.png").size());
  for (const std::string bad : {"--png-level 10", "--png-level -1", "--png-level x"})
    expectRefused(base + bad + " -o " + path("x.png"), 1);
}

TEST_F(CliFlame, UnknownVariationNamesItAndItsLine) {
  const std::string text =
      replaced(genome("linear.flam3"), "linear=\"1\"", "linear=\"1\" notavariation=\"0.5\"");
  write("bad.flam3", text);
  const int line = lineOfText(text, "notavariation");
  ASSERT_GT(line, 1);
  expectRefused("flame " + path("bad.flam3") + kSmall + "-q -o " + path("x.png"), 2, "notavariation");
  EXPECT_NE(err().find("bad.flam3:" + std::to_string(line) + ":"), std::string::npos) << err();
  // --skip-unknown: flam3's behaviour, a warning and the flame renders.
  ASSERT_EQ(run("flame " + path("bad.flam3") + " --skip-unknown" + kSmall + "-q -o " + path("x.png")), 0)
      << err();
  EXPECT_NE(err().find("warning"), std::string::npos) << err();
  EXPECT_NE(err().find("notavariation"), std::string::npos) << err();
  EXPECT_TRUE(fs::exists(dir_ / "x-00000.png"));
  EXPECT_TRUE(fs::exists(dir_ / "x-00001.png"));
}

TEST_F(CliFlame, MalformedGenomesExitTwoAndWriteNothing) {
  const std::string good = genome("linear.flam3");
  const std::string out = kSmall + "-q -o " + path("x.png") + " --stats-json " + path("s.json");
  // Truncated in the middle of the first flame's xforms.
  write("cut.flam3", good.substr(0, good.find("<xform") + 20));
  expectRefused("flame " + path("cut.flam3") + out, 2, "cut.flam3:");
  // Not a number where one is needed.
  write("nan.flam3", replaced(good, "size=\"640 360\"", "size=\"640 abc\""));
  expectRefused("flame " + path("nan.flam3") + out, 2, "nan.flam3:");
  // No <flame> at all.
  write("empty.flam3", "<pick version=\"FLAM3-LNX-3.1.1\">\n</pick>\n");
  expectRefused("flame " + path("empty.flam3") + out, 2, "empty.flam3:");
  // The second flame is broken: the first, valid one is not written either.
  const size_t second = good.find("<flame", good.find("<flame") + 1);
  ASSERT_NE(second, std::string::npos);
  std::string late = good;
  late.replace(late.find("linear=\"1\"", second), 10, "linear=\"1\" bogus_variation=\"1\"");
  write("late.flam3", late);
  expectRefused("flame " + path("late.flam3") + out, 2, "bogus_variation");
  // A missing file, and a directory.
  expectRefused("flame " + path("missing.flam3") + out, 2);
  fs::create_directories(dir_ / "d.flam3");
  EXPECT_EQ(run("flame " + path("d.flam3") + out), 2);
}

TEST_F(CliFlame, AbsurdSizesAndQualitiesExitTwoBeforeAllocating) {
  const std::string linear = (kExamples / "linear.flam3").string();
  const std::string out = " -q -o " + path("x.png") + " --stats-json " + path("s.json");
  // 10^10 cells of 20 bytes: far over any memory budget, refused before allocating.
  expectRefused("flame " + linear + " --index 0 --size 100000x100000 --quality 1" + out, 2, "memory budget");
  // Within reach of the machine but over the given budget.
  expectRefused("flame " + linear + " --index 0 --size 4000x4000 --quality 1 --memory-budget 64M" + out, 2,
                "memory budget");
  // A quality whose sample count does not fit 64 bits.
  expectRefused("flame " + linear + " --index 0 --quality 1e30" + out, 2);
  // The same absurdities written in the genome.
  write("huge.flam3", replaced(genome("linear.flam3"), "size=\"640 360\"", "size=\"100000 100000\""));
  expectRefused("flame " + path("huge.flam3") + " --index 0" + out, 2, "huge.flam3:");
  write("q.flam3", replaced(genome("linear.flam3"), "quality=\"25\"", "quality=\"1e30\""));
  expectRefused("flame " + path("q.flam3") + " --index 0" + out, 2, "q.flam3:");
  write("neg.flam3", replaced(genome("linear.flam3"), "quality=\"25\"", "quality=\"-3\""));
  expectRefused("flame " + path("neg.flam3") + " --index 0" + out, 2, "neg.flam3:");
}

TEST_F(CliFlame, BadOptionsAreUsageErrors) {
  const std::string linear = (kExamples / "linear.flam3").string() + " --index 0 ";
  for (const std::string& bad :
       {std::string("--quality -1"), std::string("--quality nan"), std::string("--size 0x10"),
        std::string("--size 64"), std::string("--size 2000000x10"), std::string("--bpc 12"),
        std::string("--method random"), std::string("--supersample 0"), std::string("--seed -1")})
    expectRefused("flame " + linear + bad + " -q -o " + path("x.png"), 1);
  expectRefused("flame " + linear + kSmall + "-q -o " + path("x.jpg"), 1);
  expectRefused("flame " + linear + kSmall + "-q", 1);  // no -o
}

// --- procgen flam3-render ------------------------------------------------

TEST_F(CliFlame, Flam3RenderPrefixQsSsAndSeedMatchTheFlameOptions) {
  const std::string linear = (kExamples / "linear.flam3").string();
  // ss = 0.1: 640x360 → 64x36 with the scale × 0.1, as --size 64x36; qs = 0.2: quality 25 → 5.
  ASSERT_EQ(
      run("flam3-render < " + linear, "ss=0.1 qs=0.2 isaac_seed=9 nthreads=2 verbose=0 prefix=" + path("p.")),
      0)
      << err();
  EXPECT_EQ(files(), (std::vector<std::string>{"p.00000.png", "p.00001.png"}));
  ASSERT_EQ(run("flame " + linear + kSmall + "--seed 9 -q -o " + path("ref.png")), 0) << err();
  EXPECT_EQ(png("p.00000.png").samples, png("ref-00000.png").samples);
  EXPECT_EQ(png("p.00001.png").samples, png("ref-00001.png").samples);
  // qs changes the quality: another image.
  ASSERT_EQ(
      run("flam3-render", "in=" + linear + " ss=0.1 qs=0.4 isaac_seed=9 verbose=0 prefix=" + path("q.")), 0)
      << err();
  EXPECT_NE(png("q.00000.png").samples, png("p.00000.png").samples);
  // Without isaac_seed, seed is the seed.
  ASSERT_EQ(run("flam3-render < " + linear, "ss=0.1 qs=0.2 seed=9 verbose=0 prefix=" + path("s.")), 0)
      << err();
  EXPECT_EQ(slurp(dir_ / "s.00000.png"), slurp(dir_ / "p.00000.png"));
}

TEST_F(CliFlame, Flam3RenderOutBpcTransparencyAndNames) {
  const std::string linear = (kExamples / "linear.flam3").string();
  const std::string small = "ss=0.1 qs=0.2 verbose=0 ";
  // out= with two flames: only the last is kept (flam3-render overwrites), i.e. flame 1.
  ASSERT_EQ(run("flam3-render < " + linear, small + "isaac_seed=3 out=" + path("o.png")), 0) << err();
  EXPECT_EQ(files(), std::vector<std::string>{"o.png"});
  ASSERT_EQ(run("flame " + linear + " --index 1" + kSmall + "--seed 3 -q -o " + path("one.png")), 0) << err();
  EXPECT_EQ(png("o.png").samples, png("one.png").samples);
  // bpc=16 and transparency=1.
  ASSERT_EQ(run("flam3-render < " + linear, small + "bpc=16 transparency=1 prefix=" + path("t.")), 0)
      << err();
  for (const char* name : {"t.00000.png", "t.00001.png"}) {
    const procgen::test::Decoded image = png(name);
    ASSERT_TRUE(image.ok);
    EXPECT_EQ(image.bit_depth, 16);
    EXPECT_EQ(image.channels, 4);
    EXPECT_EQ(image.width, 64u);
  }
  ASSERT_EQ(run("flam3-render < " + linear, small + "prefix=" + path("e.")), 0) << err();
  EXPECT_EQ(png("e.00000.png").bit_depth, 8);
  EXPECT_EQ(png("e.00000.png").channels, 3);
  // name_enable=1: NAME.png in the working directory for named flames, the number otherwise.
  write("named.flam3", replaced(genome("linear.flam3"), "<flame ", "<flame name=\"alpha\" "));
  fs::create_directories(dir_ / "w");
  ASSERT_EQ(
      run("flam3-render < " + path("named.flam3"), "cd " + path("w") + " && " + small + "name_enable=1"), 0)
      << err();
  EXPECT_TRUE(fs::exists(dir_ / "w" / "alpha.png"));
  EXPECT_TRUE(fs::exists(dir_ / "w" / "00001.png"));
}

TEST_F(CliFlame, Flam3RenderArgumentsPrintHelpAndBadVariablesFail) {
  const std::string linear = (kExamples / "linear.flam3").string();
  for (const std::string& args : {std::string("--help"), std::string("x"), std::string("-h")}) {
    ASSERT_EQ(run("flam3-render " + args + " < " + linear, "prefix=" + path("h.")), 0) << err();
    EXPECT_NE(out().find("qs"), std::string::npos) << out();
    EXPECT_NE(out().find("isaac_seed"), std::string::npos) << out();
    EXPECT_EQ(files(), std::vector<std::string>{}) << "help renders nothing";
  }
  const std::string small = "ss=0.1 qs=0.2 verbose=0 prefix=" + path("b.") + " ";
  for (const std::string& env :
       {std::string("format=jpg"), std::string("format=ppm"), std::string("format=bmp"),
        std::string("bpc=12"), std::string("qs=abc"), std::string("ss=0"), std::string("nthreads=-1"),
        std::string("pixel_aspect=0.9")})
    expectRefused("flam3-render < " + linear, 1, "", small + env);
  // An unknown variation: flam3-render warns and ignores it, and so does this interface.
  write("unknown.flam3",
        replaced(genome("linear.flam3"), "linear=\"1\"", "linear=\"1\" notavariation=\"0.5\""));
  ASSERT_EQ(run("flam3-render < " + path("unknown.flam3"), small), 0) << err();
  EXPECT_NE(err().find("notavariation"), std::string::npos) << err();
  EXPECT_TRUE(fs::exists(dir_ / "b.00000.png"));
  fs::remove(dir_ / "b.00000.png");
  fs::remove(dir_ / "b.00001.png");
  // A malformed genome on stdin: exit 2, nothing written.
  write("cut.flam3", genome("linear.flam3").substr(0, 300));
  EXPECT_EQ(run("flam3-render < " + path("cut.flam3"), small), 2);
  EXPECT_EQ(files(), std::vector<std::string>{});
}

// --- procgen bench flame ------------------------------------------------

TEST_F(CliFlame, BenchFlameReportsEveryClassAndColumn) {
  // Tiny: 64x36 at quality 2, one round, one fresh process per cold cell.
  ASSERT_EQ(
      run("bench flame --size 64x36 --quality 2 --repeat 1 --cold-runs 1 --threads 1 --backends cpu --json " +
          path("b.json")),
      0)
      << err();
  const Json j = Json::parse(slurp(dir_ / "b.json"));
  EXPECT_EQ(j["width"], 64);
  EXPECT_EQ(j["height"], 36);
  const size_t columns = j["columns"].size();
  EXPECT_EQ(columns, procgen::backendAvailable(procgen::Backend::kCpu) ? 2u : 1u);  // serial, cpu x1
  ASSERT_EQ(j["classes"].size(), 3u);
  const char* names[] = {"linear", "mixed", "trig"};
  for (size_t c = 0; c < 3; ++c) {
    const Json& row = j["classes"][c];
    EXPECT_EQ(row["class"], names[c]);
    EXPECT_EQ(row["flames"], 2);
    EXPECT_EQ(row["samples"], 2 * 2 * 64 * 36);  // two flames, quality × width × height each
    ASSERT_EQ(row["msamples_per_s"].size(), columns);
    ASSERT_EQ(row["cold_wall_ms"].size(), columns);
    for (size_t k = 0; k < columns; ++k) {
      EXPECT_GT(row["render_ms"][k].get<double>(), 0.0);
      EXPECT_GT(row["cold_wall_ms"][k].get<double>(), 0.0);
    }
    // The peer figures exist exactly when flam3-render is installed.
    EXPECT_EQ(row.contains("flam3_render_ms"), j["peer"].get<bool>());
    if (j["peer"].get<bool>()) {
      EXPECT_GT(row["flam3_render_ms"].get<double>(), 0.0);
      EXPECT_GT(row["procgen_flam3_render_ms"].get<double>(), 0.0);
    }
  }
  EXPECT_NE(out().find("| linear |"), std::string::npos) << out();
  // A file whose flames cannot be scaled to the size by flam3-render's ss.
  if (fs::exists("/usr/share/flam3/test.flam3") && fs::exists("/usr/share/flam3/flam3-palettes.xml"))
    expectRefused("bench flame /usr/share/flam3/test.flam3 --size 64x36 --repeat 1 --cold-runs 0 --no-peer",
                  1, "aspect");
}

}  // namespace
