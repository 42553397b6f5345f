// `procgen lsystem` end to end (tools/procgen/cmd_lsystem.cpp): the command-line
// contract of issue 2 — exit codes, diagnostics, the stats JSON checked against
// the library called in-process on the same file, text output read back,
// several outputs, -n / --seed / --angle / --max-modules, and --help.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/cli_run.hpp"
#include "procgen/backend.hpp"
#include "procgen/lsystem.hpp"

namespace procgen {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using test::slurp;

fs::path example(const std::string& file) {
  return fs::path(PROCGEN_SOURCE_DIR) / "examples" / "lsystems" / file;
}

// A parametric model with branches, polygons and non-trivial floats.
const char* kLeafModel =
    "angle increment: 25\n"
    "Lsystem: 1\n"
    "derivation length: 4\n"
    "Axiom: A(1)\n"
    "A(x) --> F(x)[+A(x*0.7)][-{.f(x/3)+f(x/3)+f(x/3)}]A(x*0.9)\n"
    "endlsystem\n";

class CliLsystem : public test::ScratchDirTest {
 protected:
  /// Runs `procgen ARGS`; stdout and stderr land in out_ and err_.
  int run(const std::string& args) {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const int rc = test::runProcgen(args, err, out);
    out_ = slurp(out);
    err_ = slurp(err);
    return rc;
  }

  fs::path write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  /// Runs with --stats-json - and parses stdout as exactly one JSON object.
  json stats(const std::string& args) {
    const int rc = run(args + " --stats-json - --quiet");
    EXPECT_EQ(rc, 0) << err_;
    json j;
    try {
      j = json::parse(out_);  // throws on anything after the object
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what() << "\nstdout: " << out_;
    }
    EXPECT_TRUE(j.is_object()) << out_;
    return j;
  }

  std::string out_, err_;
};

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// ---------------------------------------------------------------------------
// Exit codes.

TEST_F(CliLsystem, OkAndUsageErrors) {
  const std::string model = example("koch-island.l").string();
  EXPECT_EQ(run("lsystem " + model + " -n 1 --quiet"), 0) << err_;
  EXPECT_EQ(err_, "");  // --quiet: no summary
  EXPECT_EQ(run("lsystem " + model + " --no-such-flag"), 1);
  EXPECT_NE(err_.find("error:"), std::string::npos) << err_;
  EXPECT_EQ(run("lsystem"), 1);                                  // FILE missing
  EXPECT_EQ(run("lsystem " + model + " -n"), 1);                 // -n without a value
  EXPECT_EQ(run("lsystem " + model + " -n -3"), 1);              // negative steps
  EXPECT_EQ(run("lsystem " + model + " --backend gpu"), 1);      // not a backend name
  EXPECT_EQ(run("lsystem " + model + " -o out.xyz"), 1);         // unknown output type
  EXPECT_EQ(run("nosuchcommand"), 1);
}

// A malformed file: file:line:col: error:, the offending line and a caret
// under the offending byte. "A(x) --> B(y)": y is column 12.
TEST_F(CliLsystem, MalformedFileIsBadInputWithDiagnostic) {
  const fs::path bad = write("bad.l", "Axiom: A\nA(x) --> B(y)\n");
  EXPECT_EQ(run("lsystem " + bad.string()), 2);
  EXPECT_NE(err_.find("bad.l:2:12: error:"), std::string::npos) << err_;
  const size_t line_at = err_.find("A(x) --> B(y)\n");
  ASSERT_NE(line_at, std::string::npos) << err_;
  const size_t line_start = err_.rfind('\n', line_at) + 1;  // npos + 1 == 0 at the start
  const size_t caret_line = err_.find('\n', line_at) + 1;
  const size_t caret = err_.find('^', caret_line);
  ASSERT_NE(caret, std::string::npos) << err_;
  EXPECT_EQ(caret - caret_line, (line_at - line_start) + 11) << err_;  // under the y
  EXPECT_EQ(err_.find('\n', caret_line), caret + 1) << err_;  // the caret ends its line
  EXPECT_EQ(out_, "");

  // Other bad inputs: a lexical error, an empty file, binary junk.
  EXPECT_EQ(run("lsystem " + write("b2.l", "Axiom: F\nF --> F(1\n").string()), 2);
  EXPECT_NE(err_.find("b2.l:2:"), std::string::npos) << err_;
  EXPECT_EQ(run("lsystem " + write("b3.l", "").string()), 2);
  EXPECT_EQ(run("lsystem " + write("b4.l", std::string("Axiom: F\n\x01\x02\xff\n", 13)).string()), 2);
  EXPECT_NE(err_.find("b4.l:2:"), std::string::npos) << err_;
}

// docs/lsystem-language.md: "An unreadable file is a procgen::Error naming the
// path (also status 2)" — bad input, like a malformed file.
TEST_F(CliLsystem, MissingOrUnreadableFileIsBadInput) {
  EXPECT_EQ(run("lsystem " + (dir_ / "missing.l").string()), 2) << err_;
  EXPECT_NE(err_.find("missing.l"), std::string::npos) << err_;
  EXPECT_EQ(run("lsystem " + dir_.string()), 2) << err_;  // a directory cannot be read as a model
}

// Exit code 3 is checked on every machine: where OpenCL works, a device index
// that does not exist (PROCGEN_OPENCL_DEVICE, honoured by src/opencl/runtime.cpp,
// or --device) makes the backend unavailable; without OpenCL the backend is
// unavailable anyway.
TEST_F(CliLsystem, BackendUnavailable) {
  const std::string model = example("koch-island.l").string();
  const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
  for (const std::string env : {"PROCGEN_OPENCL_DEVICE=9999", "PROCGEN_OPENCL_DEVICE=not-a-number"}) {
    SCOPED_TRACE(env);
    const int rc = test::runProcgen("lsystem " + model + " -n 1 --backend opencl --quiet -o " +
                                        (dir_ / "k.txt").string(), err, out, env);
    err_ = slurp(err);
    EXPECT_EQ(rc, 3) << err_;
    std::string lower = err_;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_NE(lower.find("opencl"), std::string::npos) << err_;
    EXPECT_NE(err_.find("error:"), std::string::npos) << err_;
    EXPECT_FALSE(fs::exists(dir_ / "k.txt"));
  }
  EXPECT_EQ(run("lsystem " + model + " -n 1 --backend opencl --device 9999 --quiet"), 3) << err_;
  EXPECT_NE(err_.find("error:"), std::string::npos) << err_;
  // The same model on a backend that exists here runs.
  EXPECT_EQ(run("lsystem " + model + " -n 1 --backend serial --quiet"), 0) << err_;
}

TEST_F(CliLsystem, OutputErrors) {
  const std::string model = example("koch-island.l").string();
  EXPECT_EQ(run("lsystem " + model + " -n 1 -o /nonexistent/dir/x.obj"), 4) << err_;
  EXPECT_NE(err_.find("/nonexistent/dir/x.obj"), std::string::npos) << err_;
  EXPECT_EQ(run("lsystem " + model + " -n 1 -o /nonexistent/dir/x.txt"), 4) << err_;
  EXPECT_EQ(run("lsystem " + model + " -n 1 -o /nonexistent/dir/x.png"), 4) << err_;
  EXPECT_EQ(run("lsystem " + model + " -n 1 --stats-json /nonexistent/dir/s.json"), 4) << err_;
}

// Koch island n=2 makes 59 modules at step 1 (see IterationsOverride), so a
// limit of 10 stops step 1 before it allocates.
TEST_F(CliLsystem, MaxModulesGivesAClearError) {
  const std::string model = example("koch-island.l").string();
  const int rc = run("lsystem " + model + " -n 2 --max-modules 10");
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err_.find("error:"), std::string::npos) << err_;
  EXPECT_NE(err_.find("step 1"), std::string::npos) << err_;
  EXPECT_NE(err_.find("59"), std::string::npos) << err_;
  // Exactly enough is fine.
  json j = stats("lsystem " + model + " -n 2 --max-modules 475");
  EXPECT_EQ(j.value("modules", 0u), 475u);
}

// ---------------------------------------------------------------------------
// Stats JSON and outputs.

TEST_F(CliLsystem, StatsJsonMatchesTheLibrary) {
  const fs::path model = write("leaf.l", kLeafModel);
  json j = stats("lsystem " + model.string());
  for (const char* key : {"modules", "modules_total", "iterations", "derive_ms", "interpret_ms", "segments",
                          "polygons", "bbox", "string_hash", "backend", "threads"})
    EXPECT_TRUE(j.contains(key)) << key << " missing in " << out_;

  LSystem l = LSystem::fromFile(model);
  DeriveOptions d;
  DeriveStats ds;
  const ModuleString s = derive(l, d, &ds);
  InterpretOptions io;
  io.view = l.view();
  const Geometry g = interpret(l, s, io);
  ASSERT_GT(g.segments.size(), 0u);
  ASSERT_GT(g.polygonCount(), 0u);

  EXPECT_EQ(j["modules"].get<uint64_t>(), s.size());
  EXPECT_EQ(j["modules_total"].get<uint64_t>(), ds.modules_total);
  EXPECT_EQ(j["iterations"].get<int>(), 4);  // the file's derivation length
  EXPECT_EQ(j["segments"].get<uint64_t>(), g.segments.size());
  EXPECT_EQ(j["polygons"].get<uint64_t>(), g.polygonCount());
  EXPECT_EQ(j["string_hash"].get<std::string>(), hex(stringHash(s)));
  EXPECT_EQ(j["backend"].get<std::string>(), "serial");
  EXPECT_EQ(j["threads"].get<int>(), 1);
  EXPECT_GE(j["derive_ms"].get<double>(), 0.0);
  EXPECT_GE(j["interpret_ms"].get<double>(), 0.0);
  const Bounds b = g.bounds();
  ASSERT_TRUE(j["bbox"].is_array());
  ASSERT_EQ(j["bbox"].size(), 6u);
  const float want[6] = {b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z};
  for (size_t k = 0; k < 6; ++k)
    EXPECT_NEAR(j["bbox"][k].get<double>(), want[k], 1e-6 * (1 + std::abs(want[k]))) << k;
  // modules_total is the sum of the lengths after steps 1..n.
  uint64_t total = 0;
  for (uint64_t m : ds.step_modules) total += m;
  EXPECT_EQ(j["modules_total"].get<uint64_t>(), total);

  // Stats to a file carry the same numbers.
  const fs::path sj = dir_ / "stats.json";
  ASSERT_EQ(run("lsystem " + model.string() + " --quiet --stats-json " + sj.string()), 0) << err_;
  json f = json::parse(slurp(sj));
  EXPECT_EQ(f["string_hash"], j["string_hash"]);
  EXPECT_EQ(f["segments"], j["segments"]);
}

// The quadratic Koch island F-F-F-F, F -> F-F+F+FF-F-F+F (14 modules: 8 F, 6 turns):
//   n=0: 4 F + 3 turns = 7
//   n=1: 32 F, 3 + 4*6 = 27 turns: 59
//   n=2: 256 F, 27 + 32*6 = 219 turns: 475; modules_total = 59 + 475 = 534.
TEST_F(CliLsystem, IterationsOverride) {
  const std::string model = example("koch-island.l").string();
  json j = stats("lsystem " + model + " -n 2");
  EXPECT_EQ(j["iterations"].get<int>(), 2);
  EXPECT_EQ(j["modules"].get<uint64_t>(), 475u);
  EXPECT_EQ(j["modules_total"].get<uint64_t>(), 534u);
  EXPECT_EQ(j["segments"].get<uint64_t>(), 256u);
  j = stats("lsystem " + model + " -n 0");
  EXPECT_EQ(j["iterations"].get<int>(), 0);
  EXPECT_EQ(j["modules"].get<uint64_t>(), 7u);
  EXPECT_EQ(j["modules_total"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["segments"].get<uint64_t>(), 4u);
  j = stats("lsystem " + model + " --iterations 1");
  EXPECT_EQ(j["modules"].get<uint64_t>(), 59u);
}

TEST_F(CliLsystem, TextOutputIsCanonicalAndReadsBack) {
  const fs::path model = write("thirds.l", "Axiom: A(1)\nA(x) --> A(x/3)[B(x*0.1, -x)]A(x+0.7)\n");
  const fs::path txt = dir_ / "x.txt";
  ASSERT_EQ(run("lsystem " + model.string() + " -n 4 -o " + txt.string() + " --quiet"), 0) << err_;
  LSystem l = LSystem::fromFile(model);
  DeriveOptions d;
  d.iterations = 4;
  const ModuleString s = derive(l, d);
  std::string text = slurp(txt);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  text.pop_back();
  EXPECT_EQ(text, toText(s));
  const ModuleString back = parseModuleString(text);
  EXPECT_TRUE(back == s) << "parameters did not round-trip";
  EXPECT_EQ(stringHash(back), stringHash(s));

  // -o - prints the same text on stdout.
  ASSERT_EQ(run("lsystem " + model.string() + " -n 4 -o - --quiet"), 0) << err_;
  EXPECT_EQ(out_, toText(s) + "\n");
}

TEST_F(CliLsystem, SeveralOutputsAtOnce) {
  const fs::path model = write("leaf.l", kLeafModel);
  const fs::path txt = dir_ / "a.txt", obj = dir_ / "b.obj", ply = dir_ / "c.ply", svg = dir_ / "d.svg",
                 png = dir_ / "e.png", glb = dir_ / "f.glb";
  ASSERT_EQ(run("lsystem " + model.string() + " -n 3 --quiet -o " + txt.string() + " -o " + obj.string() +
                " --output " + ply.string() + " -o " + svg.string() + " -o " + png.string() + " -o " +
                glb.string()),
            0)
      << err_;
  for (const fs::path& p : {txt, obj, ply, svg, png, glb}) {
    ASSERT_TRUE(fs::exists(p)) << p;
    EXPECT_GT(fs::file_size(p), 0u) << p;
  }
  LSystem l = LSystem::fromFile(model);
  DeriveOptions d;
  d.iterations = 3;
  const ModuleString s = derive(l, d);
  EXPECT_EQ(slurp(txt), toText(s) + "\n");
  // The OBJ has line elements for the segments and faces for the polygons.
  const std::string o = slurp(obj);
  EXPECT_NE(o.find("\nl "), std::string::npos);
  EXPECT_NE(o.find("\nf "), std::string::npos);
  EXPECT_EQ(slurp(png).substr(1, 3), "PNG");
  EXPECT_EQ(slurp(glb).substr(0, 4), "glTF");
}

TEST_F(CliLsystem, SeedSelectsTheStochasticStream) {
  const std::string model = example("plant-stochastic.l").string() + " -n 4";
  const std::string h1 = stats("lsystem " + model + " --seed 1")["string_hash"];
  const std::string h2 = stats("lsystem " + model + " --seed 2")["string_hash"];
  const std::string h2again = stats("lsystem " + model + " --seed 2")["string_hash"];
  const std::string file_default = stats("lsystem " + model)["string_hash"];
  EXPECT_NE(h1, h2);
  EXPECT_EQ(h2, h2again);
  EXPECT_EQ(file_default, h1);  // the file says seed: 1
  // The CLI's seed is the library's seed.
  LSystem l = LSystem::fromFile(example("plant-stochastic.l"));
  DeriveOptions d;
  d.iterations = 4;
  d.seed = 2;
  EXPECT_EQ(h2, hex(stringHash(derive(l, d))));
  // A deterministic model does not depend on the seed.
  const std::string koch = example("koch-island.l").string() + " -n 2";
  EXPECT_EQ(stats("lsystem " + koch + " --seed 5")["string_hash"], stats("lsystem " + koch)["string_hash"]);
}

// --angle overrides the file's angle increment (koch-island.l says 90).
TEST_F(CliLsystem, AngleOverride) {
  const std::string model = example("koch-island.l").string() + " -n 1";
  json a90 = stats("lsystem " + model);
  json a60 = stats("lsystem " + model + " --angle 60");
  EXPECT_EQ(a90["string_hash"], a60["string_hash"]);  // drawing only
  EXPECT_NE(a90["bbox"], a60["bbox"]);
  LSystem l = LSystem::fromFile(example("koch-island.l"));
  DeriveOptions d;
  d.iterations = 1;
  InterpretOptions io;
  io.view = l.view();
  io.view.angle_deg = 60;
  const Bounds b = interpret(l, derive(l, d), io).bounds();
  const float want[6] = {b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z};
  for (size_t k = 0; k < 6; ++k)
    EXPECT_NEAR(a60["bbox"][k].get<double>(), want[k], 1e-6 * (1 + std::abs(want[k]))) << k;
}

TEST_F(CliLsystem, HelpMentionsTheDocumentedFlags) {
  ASSERT_EQ(run("--help"), 0);
  EXPECT_NE(out_.find("lsystem"), std::string::npos) << out_;
  EXPECT_NE(out_.find("Exit codes"), std::string::npos) << out_;
  ASSERT_EQ(run("lsystem --help"), 0);
  for (const char* flag : {"FILE", "-n", "--iterations", "--seed", "--angle", "--backend", "--threads", "-o",
                           "--stats-json", "--max-modules", "--quiet"})
    EXPECT_NE(out_.find(flag), std::string::npos) << flag << " not in:\n" << out_;
}

}  // namespace
}  // namespace procgen
