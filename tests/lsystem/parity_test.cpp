// Backend parity for L-systems (issue 4): one test body runs on every backend
// variant — serial, cpu×1, cpu×2, cpu×7 and cpu with tiny forced chunks — and
// compares against the serial engine (itself checked against independent
// references in examples_reference_test.cpp):
//  - derivation: the final strings are identical, symbol by symbol and
//    parameter by parameter (bit patterns, so NaN and -0 count), for every
//    shipped example (n capped so the test stays fast), seeds 1..20 for the
//    stochastic ones, and for randomly generated grammars (parametric,
//    context-sensitive with brackets in the right context, stochastic,
//    conditions with ran(), decomposition, '%' cuts, #ignore);
//  - stages: the cpu runner's bracket partners and cut pass against their
//    serial twins on random strings, unmatched brackets included.
// Tiny chunks (1, 3 and 7 modules) make every context, bracket pair and cut
// straddle chunk borders.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "lsystem/derive_stages.hpp"
#include "lsystem/pass_runner.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"
#include "procgen/opencl.hpp"
#if PROCGEN_HAVE_TBB
#include "cpu/executor.hpp"
#endif

namespace {

namespace fs = std::filesystem;
using procgen::Backend;
using procgen::ModuleString;

// ---------------------------------------------------------------------------
// Backend variants

struct Variant {
  const char* name;
  Backend backend;
  int threads;
  uint64_t chunk;  ///< forced cpu chunk size in modules; 0 = the default policy
};

const Variant kVariants[] = {
    {"serial", Backend::kSerial, 1, 0}, {"cpu1", Backend::kCpu, 1, 0},
    {"cpu2", Backend::kCpu, 2, 0},      {"cpu7", Backend::kCpu, 7, 0},
    {"cpu2_chunk3", Backend::kCpu, 2, 3}, {"cpu7_chunk1", Backend::kCpu, 7, 1},
    {"cpu3_chunk7", Backend::kCpu, 3, 7},
    {"opencl", Backend::kOpenCL, 1, 0},  // the default device (PoCL in CI); skips without one
};

/// The opencl backend's float tolerance (relative): OpenCL C's sin, cos, tan,
/// asin, acos, atan, atan2, exp, log and pow are not required to round like the
/// host's libm (PoCL differs by 1 ulp in ~1% of arguments); + - * / and sqrt
/// are exact (-cl-fp32-correctly-rounded-divide-sqrt), so parameters computed
/// without those functions, and every symbol, still compare bit for bit.
constexpr double kOpenCLParamTolerance = 1e-5;

std::string variantName(const testing::TestParamInfo<Variant>& info) { return info.param.name; }

/// Sets the cpu chunk override for the lifetime of a test body.
class ChunkScope {
 public:
  explicit ChunkScope(uint64_t chunk) {
#if PROCGEN_HAVE_TBB
    procgen::detail::setCpuChunkOverrideForTesting(chunk);
#endif
  }
  ~ChunkScope() {
#if PROCGEN_HAVE_TBB
    procgen::detail::setCpuChunkOverrideForTesting(0);
#endif
  }
};

class Parity : public testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    if (!procgen::backendAvailable(GetParam().backend))
      GTEST_SKIP() << "backend '" << procgen::backendName(GetParam().backend)
                   << "' not built (no oneTBB)";
    if (GetParam().backend == Backend::kOpenCL) {
      if (procgen::openclDevices().empty()) GTEST_SKIP() << procgen::openclStatus();
    }
  }
  double paramTolerance() const { return GetParam().backend == Backend::kOpenCL ? kOpenCLParamTolerance : 0.0; }
  /// Whether geometry the cpu backend draws bit-exactly (the work-queue path)
  /// must be bit-exact here too. Not on opencl: its turtle calls the device's
  /// sin/cos (turns with a parameter, tropism), which OpenCL C does not require
  /// to round like the host's; there the stated coordinate tolerance applies.
  bool exactAllowed() const { return GetParam().backend != Backend::kOpenCL; }
  procgen::Execution execution() const {
    procgen::Execution e;
    e.backend = GetParam().backend;
    e.threads = GetParam().threads;
    return e;
  }
};

// ---------------------------------------------------------------------------
// Comparison

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

bool paramsAgree(float got, float want, double tolerance) {
  if (bits(got) == bits(want)) return true;
  if (tolerance == 0 || std::isnan(got) || std::isnan(want)) return false;
  const double g = got, w = want;
  return std::abs(g - w) <= tolerance * std::max({1.0, std::abs(g), std::abs(w)});
}

/// Empty when equal (parameters within `tolerance`, relative; 0 = bit-exact);
/// otherwise where and how the strings first differ.
std::string compareStrings(const ModuleString& got, const ModuleString& want, double tolerance = 0) {
  std::ostringstream out;
  if (got.symbols.size() != want.symbols.size())
    out << "length " << got.symbols.size() << " != serial " << want.symbols.size() << "; ";
  const size_t n = std::min(got.symbols.size(), want.symbols.size());
  for (size_t i = 0; i < n; ++i)
    if (got.symbols[i] != want.symbols[i]) {
      out << "symbol " << i << ": '" << got.symbols[i] << "' != serial '" << want.symbols[i] << "'; ";
      break;
    }
  if (got.param_offsets != want.param_offsets) out << "param_offsets differ; ";
  if (got.params.size() != want.params.size()) {
    out << "params " << got.params.size() << " != serial " << want.params.size() << "; ";
  } else {
    for (size_t k = 0; k < got.params.size(); ++k)
      if (!paramsAgree(got.params[k], want.params[k], tolerance)) {
        out << "param " << k << ": " << got.params[k] << " != serial " << want.params[k] << "; ";
        break;
      }
  }
  return out.str();
}

ModuleString deriveWith(const procgen::LSystem& lsystem, int n, uint64_t seed,
                        const procgen::Execution& execution, procgen::DeriveStats* stats = nullptr) {
  procgen::DeriveOptions options;
  options.iterations = n;
  options.seed = seed;
  options.execution = execution;
  return procgen::derive(lsystem, options, stats);
}

/// The largest n <= limit whose derivation stays within max_modules.
int cappedIterations(const procgen::LSystem& lsystem, int limit, uint64_t max_modules) {
  for (int n = limit; n > 0; --n) {
    procgen::DeriveOptions options;
    options.iterations = n;
    options.max_modules = max_modules;
    try {
      procgen::derive(lsystem, options);
      return n;
    } catch (const procgen::ResourceError&) {
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------
// Shipped examples

std::vector<fs::path> exampleFiles() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(PROCGEN_SOURCE_DIR) / "examples" / "lsystems"))
    if (e.path().extension() == ".l") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

struct SerialCache {
  std::map<std::string, ModuleString> strings;
  const ModuleString& get(const std::string& key, const std::function<ModuleString()>& make) {
    auto it = strings.find(key);
    if (it == strings.end()) it = strings.emplace(key, make()).first;
    return it->second;
  }
};
SerialCache& serialCache() {
  static SerialCache cache;
  return cache;
}

procgen::Execution serialExecution() { return procgen::Execution{}; }

TEST_P(Parity, EveryExampleDerivesIdentically) {
  ASSERT_FALSE(exampleFiles().empty());
  // Tiny chunks cost a task per module or three: keep those strings smaller.
  const uint64_t max_modules = GetParam().chunk ? 60000 : 400000;
  for (const fs::path& file : exampleFiles()) {
    const procgen::LSystem lsystem = procgen::LSystem::fromFile(file);
    const bool stochastic = lsystem.data().productions.hasStochastic();
    const int n = cappedIterations(lsystem, lsystem.derivationLength(), max_modules);
    ASSERT_GT(n, 0) << file;
    const int seeds = stochastic ? 20 : 1;
    for (int seed = 1; seed <= seeds; ++seed) {
      SCOPED_TRACE(file.filename().string() + " n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      const std::string key = file.string() + "/" + std::to_string(n) + "/" + std::to_string(seed);
      const ModuleString& want =
          serialCache().get(key, [&] { return deriveWith(lsystem, n, seed, serialExecution()); });
      ChunkScope chunks(GetParam().chunk);
      procgen::DeriveStats stats;
      const ModuleString got = deriveWith(lsystem, n, seed, execution(), &stats);
      EXPECT_EQ(compareStrings(got, want, paramTolerance()), "");
      EXPECT_EQ(stats.modules, want.size());
      EXPECT_EQ(stats.threads, GetParam().backend == Backend::kSerial ? 1 : GetParam().threads);
    }
  }
}

// ---------------------------------------------------------------------------
// Random grammars

/// Writes a random L-system in the cpfg language: letters A-D (fixed parameter
/// counts when parametric), turtle symbols, brackets, '%', productions with
/// left and right (bracketed) contexts, conditions (with ran()), stochastic
/// groups and a decomposition table.
class GrammarGenerator {
 public:
  explicit GrammarGenerator(uint32_t seed) : rng_(seed) {}

  std::string generate() {
    parametric_ = coin(0.6);
    for (int l = 0; l < 4; ++l) arity_[l] = parametric_ ? pick(0, 2) : 0;
    std::ostringstream t;
    if (coin(0.5)) t << "#ignore: +-F\n";
    t << "Lsystem: 1\nderivation length: 6\n";
    allow_ran_ = false;  // the axiom's parameters are compile-time constants
    const std::string axiom = successor(3, 6) + letterModule({});
    allow_ran_ = true;
    t << "Axiom: " << axiom << "\n";
    for (int l = 0; l < 4; ++l) {
      const int alternatives = pick(1, 3);
      const bool stochastic = alternatives > 1 && coin(0.5);
      // Specific alternatives (contexts, conditions) first, usually a general
      // one last so that the string keeps growing.
      for (int a = 0; a < alternatives; ++a)
        t << production(l, stochastic, a + 1 < alternatives || coin(0.2), 1, 5) << "\n";
    }
    if (coin(0.4)) {
      t << "decomposition:\nmaximum depth: " << pick(1, 3) << "\n";
      const int count = pick(1, 2);
      for (int k = 0; k < count; ++k) t << production(pick(0, 3), false, true, 0, 2) << "\n";
    }
    t << "endlsystem\n";
    return t.str();
  }

 private:
  bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  char letter(int l) const { return static_cast<char>('A' + l); }

  /// A module with `arity` parameters bound to expressions over `formals`.
  std::string expression(const std::vector<std::string>& formals) {
    const std::string f = formals.empty() ? "1" : formals[static_cast<size_t>(pick(0, static_cast<int>(formals.size()) - 1))];
    switch (pick(0, 5)) {
      case 0: return f;
      case 1: return f + "*0.7+0.1";
      case 2: return allow_ran_ ? "ran(2)" : "0.5";
      case 3: return "(" + f + ">1 ? " + f + "-1 : " + f + "+0.5)";
      case 4: return std::to_string(pick(0, 3)) + ".25";
      default: return "sin(" + f + "*40)+" + f;
    }
  }

  std::string letterModule(const std::vector<std::string>& formals) {
    const int l = pick(0, 3);
    std::string m(1, letter(l));
    if (arity_[l]) {
      m += "(";
      for (int k = 0; k < arity_[l]; ++k) {
        if (k) m += ',';
        m += expression(formals);
      }
      m += ")";
    }
    return m;
  }

  std::string successorModule(const std::vector<std::string>& formals) {
    const int kind = pick(0, 99);
    if (kind < 55) return letterModule(formals);
    if (kind < 70) return parametric_ && coin(0.5) ? "F(" + expression(formals) + ")" : "F";
    if (kind < 97) return coin(0.5) ? "+" : "-";
    return "%";
  }

  /// A successor of min..max modules with balanced brackets, rarely an
  /// unbalanced one (the engines must agree on unmatched brackets too).
  std::string successor(int min, int max, const std::vector<std::string>& formals = {}) {
    std::string s;
    int depth = 0;
    const int length = pick(min, max);
    for (int i = 0; i < length; ++i) {
      if (coin(0.2)) {
        s += "[";
        ++depth;
      } else if (depth > 0 && coin(0.3)) {
        s += "]";
        --depth;
      }
      s += successorModule(formals);
    }
    if (min > 0 && s.find_first_of("ABCD") == std::string::npos) s += letterModule(formals);
    while (depth-- > 0) s += "]";
    if (coin(0.03)) s += coin(0.5) ? "]" : "[";
    return s;
  }

  /// Pattern module for letter l with fresh formals appended to `formals`.
  std::string pattern(int l, std::vector<std::string>& formals) {
    std::string m(1, letter(l));
    if (arity_[l]) {
      m += "(";
      for (int k = 0; k < arity_[l]; ++k) {
        std::string name = "v";
        name += std::to_string(formals.size());
        formals.push_back(name);
        if (k) m += ',';
        m += formals.back();
      }
      m += ")";
    }
    return m;
  }

  std::string production(int l, bool stochastic, bool specific, int min_successor, int max_successor) {
    std::vector<std::string> formals;
    std::string lc, rc;
    if (specific && coin(0.5)) {
      const int count = pick(1, 2);
      for (int k = 0; k < count; ++k) lc += pattern(pick(0, 3), formals);
    }
    const std::string pred = pattern(l, formals);
    if (specific && coin(0.5)) {
      rc = pattern(pick(0, 3), formals);
      if (coin(0.5)) rc = "[" + pattern(pick(0, 3), formals) + "]" + rc;
      else if (coin(0.3)) rc += "[" + pattern(pick(0, 3), formals) + "]";
    }
    std::string p;
    if (!lc.empty()) p += lc + " < ";
    p += pred;
    if (!rc.empty()) p += " > " + rc;
    if (specific && coin(0.4)) {
      if (!formals.empty() && coin(0.7)) p += " : " + formals[0] + " < 1.2";
      else p += " : ran(1) < 0.6";
    }
    const std::string succ = successor(min_successor, max_successor, formals);
    p += " --> " + (succ.empty() ? std::string("*") : succ);
    if (stochastic) p += " : " + std::to_string(pick(1, 5));
    return p;
  }

  std::mt19937 rng_;
  bool parametric_ = false;
  bool allow_ran_ = true;
  int arity_[4] = {};
};

TEST_P(Parity, RandomGrammarsDeriveIdentically) {
  const uint64_t max_modules = GetParam().chunk ? 6000 : 30000;
  int checked = 0;
  for (uint32_t g = 1; g <= 60; ++g) {
    const std::string text = GrammarGenerator(g).generate();
    SCOPED_TRACE("grammar " + std::to_string(g) + ":\n" + text);
    procgen::LSystem lsystem = procgen::LSystem::fromText(text, "random-" + std::to_string(g) + ".l");
    const int n = cappedIterations(lsystem, 10, max_modules);
    const bool stochastic = lsystem.data().productions.hasStochastic() ||
                            text.find("ran(") != std::string::npos;
    const int seeds = stochastic ? 20 : 1;
    for (int seed = 1; seed <= seeds; ++seed) {
      SCOPED_TRACE("n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      const ModuleString want = deriveWith(lsystem, n, seed, serialExecution());
      ChunkScope chunks(GetParam().chunk);
      const ModuleString got = deriveWith(lsystem, n, seed, execution());
      ASSERT_EQ(compareStrings(got, want, paramTolerance()), "");
      if (want.size() > 50) ++checked;
    }
  }
  // The generator must produce non-trivial strings, or this test checks little.
  EXPECT_GT(checked, 200);
}

// ---------------------------------------------------------------------------
// Interpretation: identical counts, order, colours, depths and instances.
// Branching strings (and strings with tropism or '$') take the work-queue
// path, which starts every item from an exact copy of the serial state, so
// there the geometry must be bit-identical. Non-branching strings take the
// matrix-scan path, whose frames are composed per chunk: coordinates must lie
// within size × (kGeometryTolerance + kRoundingPerModule × modules), size being
// the largest extent of the serial bounding box (at least 1). The second term
// is float rounding along the turtle's path, which both interpreters
// accumulate: the serial turtle itself is that far from a double-precision
// walk (row-of-trees n=7: 6e-4 of the size, 48k commands on one path).

constexpr double kGeometryTolerance = 1e-4;
constexpr double kRoundingPerModule = 1.0 / (1 << 22);

double modelSize(const procgen::Geometry& g) {
  const procgen::Bounds b = g.bounds();
  if (b.empty()) return 1.0;
  return std::max({1.0, double(b.max.x) - b.min.x, double(b.max.y) - b.min.y, double(b.max.z) - b.min.z});
}

bool near(const procgen::Vec3& a, const procgen::Vec3& b, double tol) {
  return std::abs(double(a.x) - b.x) <= tol && std::abs(double(a.y) - b.y) <= tol &&
         std::abs(double(a.z) - b.z) <= tol;
}

bool same(const procgen::Vec3& a, const procgen::Vec3& b) {
  return bits(a.x) == bits(b.x) && bits(a.y) == bits(b.y) && bits(a.z) == bits(b.z);
}

std::string vec(const procgen::Vec3& v) {
  std::ostringstream o;
  o << "(" << v.x << "," << v.y << "," << v.z << ")";
  return o.str();
}

/// Empty when `got` matches the serial `want`; `exact` demands identical floats.
std::string compareGeometry(const procgen::Geometry& got, const procgen::Geometry& want, bool exact,
                            uint64_t modules) {
  std::ostringstream out;
  const double tol = (kGeometryTolerance + kRoundingPerModule * static_cast<double>(modules)) * modelSize(want);
  if (got.segments.size() != want.segments.size())
    return "segments " + std::to_string(got.segments.size()) + " != serial " + std::to_string(want.segments.size());
  for (size_t k = 0; k < want.segments.size(); ++k) {
    const procgen::Segment& a = got.segments[k];
    const procgen::Segment& b = want.segments[k];
    const bool points = exact ? same(a.start, b.start) && same(a.end, b.end)
                              : near(a.start, b.start, tol) && near(a.end, b.end, tol);
    const bool width = exact ? bits(a.width) == bits(b.width)
                             : std::abs(double(a.width) - b.width) <= tol / modelSize(want) * std::max(1.0f, std::abs(b.width));
    if (!points || !width || a.color != b.color || a.depth != b.depth || a.instance != b.instance) {
      out << "segment " << k << ": " << vec(a.start) << "-" << vec(a.end) << " w" << a.width << " c" << a.color
          << " d" << a.depth << " != serial " << vec(b.start) << "-" << vec(b.end) << " w" << b.width << " c"
          << b.color << " d" << b.depth << " (tolerance " << tol << ")";
      return out.str();
    }
  }
  if (got.polygon_offsets != want.polygon_offsets) return "polygon offsets differ";
  if (got.polygon_colors != want.polygon_colors) return "polygon colours differ";
  if (got.polygon_instances != want.polygon_instances) return "polygon instances differ";
  for (size_t k = 0; k < want.polygon_vertices.size(); ++k) {
    const bool ok = exact ? same(got.polygon_vertices[k], want.polygon_vertices[k])
                          : near(got.polygon_vertices[k], want.polygon_vertices[k], tol);
    if (!ok)
      return "polygon vertex " + std::to_string(k) + ": " + vec(got.polygon_vertices[k]) + " != serial " +
             vec(want.polygon_vertices[k]);
  }
  return "";
}

bool hasBrackets(const ModuleString& s) {
  return std::find_if(s.symbols.begin(), s.symbols.end(), [](uint8_t c) { return c == '[' || c == ']'; }) !=
         s.symbols.end();
}

procgen::Geometry interpretWith(const procgen::LSystem& lsystem, const ModuleString& s,
                                const procgen::ViewSettings& view, uint64_t seed,
                                const procgen::Execution& execution) {
  procgen::InterpretOptions options;
  options.view = view;
  options.seed = seed;
  options.instance = 3;
  options.execution = execution;
  return procgen::interpret(lsystem, s, options);
}

TEST_P(Parity, EveryExampleInterpretsIdentically) {
  const uint64_t max_modules = GetParam().chunk ? 30000 : 300000;
  for (const fs::path& file : exampleFiles()) {
    const procgen::LSystem lsystem = procgen::LSystem::fromFile(file);
    const int n = cappedIterations(lsystem, lsystem.derivationLength(), max_modules);
    SCOPED_TRACE(file.filename().string() + " n=" + std::to_string(n));
    const ModuleString s = deriveWith(lsystem, n, 1, serialExecution());
    const procgen::Geometry want = interpretWith(lsystem, s, lsystem.view(), 1, serialExecution());
    ChunkScope chunks(GetParam().chunk);
    const procgen::Geometry got = interpretWith(lsystem, s, lsystem.view(), 1, execution());
    EXPECT_EQ(compareGeometry(got, want, exactAllowed() && (hasBrackets(s) || lsystem.view().elasticity != 0.0f),
                              s.size()),
              "");
  }
}

/// A random turtle string: every turtle command, parameters on some, branches
/// and polygons (nested, and sometimes unbalanced), letters the turtle ignores.
ModuleString randomTurtleString(std::mt19937& rng, uint64_t n, bool branching, bool polygons) {
  ModuleString s;
  s.clear(true);
  std::uniform_int_distribution<int> d(0, 99);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  int64_t depth = 0, polygon = 0;
  auto add = [&](uint8_t c, std::initializer_list<float> params) {
    s.symbols.push_back(c);
    s.params.insert(s.params.end(), params);
    s.param_offsets.push_back(s.params.size());
  };
  for (uint64_t i = 0; i < n; ++i) {
    const int r = d(rng);
    if (r < 25) add('F', {});
    else if (r < 30) add('F', {0.5f + u(rng)});
    else if (r < 33) add('G', {});
    else if (r < 36) add('f', {});
    else if (r < 38) add('g', {});
    else if (r < 46) add("+-&^\\/"[d(rng) % 6], {});
    else if (r < 50) add("+-&^\\/"[d(rng) % 6], {u(rng) * 90.0f});
    else if (r < 51) add('|', {});
    else if (r < 52 && branching) add('$', {});
    else if (r < 54) add('!', {});
    else if (r < 55) add('!', {u(rng) * 2.0f});
    else if (r < 56) add('\'', {});
    else if (r < 57) add('\'', {float(d(rng) % 5)});
    else if (r < 65) add(r < 60 ? 'A' : 'B', {});
    else if (r < 73 && branching) {
      add('[', {});
      ++depth;
    } else if (r < 80 && branching && (depth > 0 || d(rng) < 2)) {
      add(']', {});
      depth = std::max<int64_t>(0, depth - 1);
    } else if (r < 83 && polygons) {
      add('{', {});
      ++polygon;
    } else if (r < 89 && polygons && polygon > 0) {
      add('.', {});
    } else if (r < 92 && polygons && (polygon > 0 || d(rng) < 3)) {
      add('}', {});
      polygon = std::max<int64_t>(0, polygon - 1);
    } else {
      add('F', {});
    }
  }
  while (depth-- > 0 && d(rng) < 90) add(']', {});
  return s;
}

TEST_P(Parity, RandomTurtleStringsInterpretIdentically) {
  const procgen::LSystem lsystem = procgen::LSystem::fromText("Axiom: F\n");
  std::mt19937 rng(2024);
  const uint64_t sizes[] = {1, 10, 500, 5000, 40000};
  int case_index = 0;
  for (uint64_t n : sizes) {
    for (int variant = 0; variant < 8; ++variant, ++case_index) {
      const bool branching = variant & 1, polygons = variant & 2, tropism = variant & 4;
      if (GetParam().chunk && n > 5000) continue;
      const ModuleString s = randomTurtleString(rng, n, branching, polygons);
      procgen::ViewSettings view;
      view.angle_deg = 27.5f;
      view.width_factor = 0.9f;
      if (tropism) view.elasticity = 0.15f;
      SCOPED_TRACE("case " + std::to_string(case_index) + " n=" + std::to_string(n) + " branching=" +
                   std::to_string(branching) + " polygons=" + std::to_string(polygons) +
                   " tropism=" + std::to_string(tropism));
      const procgen::Geometry want = interpretWith(lsystem, s, view, 1, serialExecution());
      ChunkScope chunks(GetParam().chunk);
      const procgen::Geometry got = interpretWith(lsystem, s, view, 1, execution());
      // Linear path (no brackets, no '$', no tropism) composes frames: tolerance.
      const bool exact = exactAllowed() && (hasBrackets(s) || tropism ||
                                            std::find(s.symbols.begin(), s.symbols.end(), '$') != s.symbols.end());
      ASSERT_EQ(compareGeometry(got, want, exact, s.size()), "");
    }
  }
}

/// A polygon open across many count blocks, then plain drawing: the blocks
/// between '{' and '}' hold nothing but turtle moves, and the one holding '}'
/// has no other special symbol, so every way the count pass can skip a block
/// as "plain" is exercised at block borders.
TEST_P(Parity, LongPolygonsAcrossBlocksInterpretIdentically) {
  const procgen::LSystem lsystem = procgen::LSystem::fromText("Axiom: F\n");
  for (const uint64_t inside : {uint64_t{4}, uint64_t{2500}, uint64_t{9000}}) {
    ModuleString s;
    s.clear(true);
    auto add = [&](uint8_t c) {
      s.symbols.push_back(c);
      s.param_offsets.push_back(s.params.size());
    };
    add('F');
    add('{');
    for (uint64_t i = 0; i < inside; ++i) {
      add(i % 3 == 2 ? 'G' : 'F');
      add('+');
    }
    add('}');
    for (uint64_t i = 0; i < 5000; ++i) {
      add(i % 4 == 0 ? 'G' : 'F');
      add('-');
    }
    SCOPED_TRACE("inside=" + std::to_string(inside));
    procgen::ViewSettings view;
    view.angle_deg = 0.5f;
    const procgen::Geometry want = interpretWith(lsystem, s, view, 1, serialExecution());
    ASSERT_EQ(want.polygonCount(), 1u);
    ChunkScope chunks(GetParam().chunk);
    const procgen::Geometry got = interpretWith(lsystem, s, view, 1, execution());
    ASSERT_EQ(compareGeometry(got, want, false, s.size()), "");
  }
}

TEST_P(Parity, HomomorphismIsAppliedIdentically) {
  // Context-sensitive, parametric and random homomorphism successors, two
  // levels deep, over random strings of A(x), B and turtle commands.
  const procgen::LSystem lsystem = procgen::LSystem::fromText(
      "Lsystem: 1\n"
      "Axiom: B\n"
      "homomorphism:\n"
      "maximum depth: 2\n"
      "A(x) < B --> F(x)[+B]{.F.F.}\n"
      "A(x) : x > 0.5 --> F(x)+(ran(40))C(x*0.5)\n"
      "A(x) --> f(x)-F\n"
      "B > [A(y)] --> G[-F]\n"
      "B --> F!\n"
      "C(x) --> F(x)&F(x)\n"
      "endlsystem\n");
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (uint64_t n : {7, 300, 20000}) {
    for (int seed = 1; seed <= 5; ++seed) {
      ModuleString s;
      s.clear(true);
      int64_t depth = 0;
      for (uint64_t i = 0; i < n; ++i) {
        const int r = static_cast<int>(rng() % 10);
        uint8_t c = r < 3 ? 'A' : r < 5 ? 'B' : r < 6 ? '[' : r < 7 && depth > 0 ? ']' : r < 8 ? '+' : 'F';
        depth += c == '[' ? 1 : c == ']' ? -1 : 0;
        s.symbols.push_back(c);
        if (c == 'A') s.params.push_back(u(rng));
        s.param_offsets.push_back(s.params.size());
      }
      SCOPED_TRACE("n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      const procgen::Geometry want = interpretWith(lsystem, s, lsystem.view(), seed, serialExecution());
      ChunkScope chunks(GetParam().chunk);
      const procgen::Geometry got = interpretWith(lsystem, s, lsystem.view(), seed, execution());
      ASSERT_GT(want.segments.size(), n / 4);
      ASSERT_EQ(compareGeometry(got, want, exactAllowed() && hasBrackets(s), s.size()), "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Parity, testing::ValuesIn(kVariants), variantName);

// ---------------------------------------------------------------------------
// Stage parity: bracket partners and the cut pass against their serial twins.

#if PROCGEN_HAVE_TBB

/// Random module string over "AB[]%" with nesting, sometimes unbalanced.
ModuleString randomBracketString(std::mt19937& rng, uint64_t n, bool parametric, bool balanced) {
  ModuleString s;
  s.clear(parametric);
  int64_t depth = 0;
  std::uniform_int_distribution<int> d(0, 99);
  for (uint64_t i = 0; i < n; ++i) {
    const int r = d(rng);
    uint8_t c = r < 20 ? '[' : r < 40 ? ']' : r < 45 ? '%' : r < 75 ? 'A' : 'B';
    if (balanced && c == ']' && depth == 0) c = 'A';
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    s.symbols.push_back(c);
    if (parametric) {
      for (int k = 0; k < (c == 'A' ? 2 : c == 'B' ? 1 : 0); ++k) s.params.push_back(static_cast<float>(i) + 0.25f * k);
      s.param_offsets.push_back(s.params.size());
    }
  }
  return s;
}

TEST(CpuStages, BracketPartnersMatchSerial) {
  std::mt19937 rng(7);
  for (uint64_t chunk : {0, 1, 3, 64}) {
    ChunkScope scope(chunk);
    for (int threads : {1, 2, 7}) {
      auto runner = procgen::detail::makeCpuPassRunner(threads);
      EXPECT_EQ(runner->threads(), threads);
      for (uint64_t n : {0, 1, 2, 17, 1000, 200000}) {
        for (bool balanced : {true, false}) {
          const ModuleString s = randomBracketString(rng, n, false, balanced);
          std::vector<int64_t> want(n, -7), got(n, -7);
          procgen::detail::bracketPartnersSerial(s.symbols.data(), n, want.data());
          runner->bracketPartners(s.symbols.data(), n, got.data());
          for (uint64_t i = 0; i < n; ++i) {
            if (s.symbols[i] == '[' || s.symbols[i] == ']') {
              ASSERT_EQ(got[i], want[i]) << "i=" << i << " n=" << n << " chunk=" << chunk << " threads=" << threads;
            }
          }
        }
      }
    }
  }
}

TEST(CpuStages, CutMatchesSerial) {
  std::mt19937 rng(11);
  for (uint64_t chunk : {0, 1, 3, 64}) {
    ChunkScope scope(chunk);
    for (int threads : {1, 2, 7}) {
      auto runner = procgen::detail::makeCpuPassRunner(threads);
      for (uint64_t n : {0, 1, 5, 40, 1000, 100000}) {
        for (bool parametric : {false, true}) {
          for (bool balanced : {true, false}) {
            const ModuleString s = randomBracketString(rng, n, parametric, balanced);
            ModuleString want = s, got = s;
            const bool want_removed = procgen::detail::cutBranches(want);
            const bool got_removed = runner->cut(got);
            SCOPED_TRACE("n=" + std::to_string(n) + " chunk=" + std::to_string(chunk) +
                         " threads=" + std::to_string(threads) + " parametric=" + std::to_string(parametric));
            EXPECT_EQ(got_removed, want_removed);
            ASSERT_EQ(compareStrings(got, want), "");
          }
        }
      }
    }
  }
}

// The D0L fast path copies a whole 32-byte table row per module and lets the
// copy spill into the next modules' output; chunks written side by side must
// still come out exact. Successors of 1..40 modules (rows for <= 32, the
// per-module copy otherwise), chunks around the row width, against a textbook
// rewriting written here; both the count-then-rewrite and the one-pass forms.
TEST(CpuStages, D0LRewriteMatchesTextbookAcrossChunkBorders) {
  std::mt19937 rng(21);
  const std::string letters = "ABCF+-";
  for (int trial = 0; trial < 12; ++trial) {
    const int longest = trial % 2 == 0 ? 32 : 40;
    std::map<char, std::string> rules;
    std::string text = "Axiom: A\n";
    for (char c : std::string("ABC")) {
      std::string succ;
      const int len = 1 + static_cast<int>(rng() % static_cast<unsigned>(longest));
      for (int k = 0; k < len; ++k) succ += letters[rng() % letters.size()];
      rules[c] = succ;
      text += std::string(1, c) + " --> " + succ + "\n";
    }
    const procgen::LSystem l = procgen::LSystem::fromText(text, "d0l.l");
    const procgen::detail::D0LTable table = procgen::detail::makeD0LTable(l.data(), l.data().productions);
    ASSERT_TRUE(table.usable);
    EXPECT_EQ(table.padded.empty(), std::any_of(rules.begin(), rules.end(),
                                                [](const auto& r) { return r.second.size() > 32; }));
    std::string in;
    for (int i = 0; i < 5000; ++i) in += letters[rng() % letters.size()];
    std::string want;
    for (char c : in) want += rules.count(c) ? rules[c] : std::string(1, c);
    const auto* symbols = reinterpret_cast<const uint8_t*>(in.data());
    for (uint64_t chunk : {31, 32, 33, 34, 65, 100}) {
      ChunkScope scope(chunk);
      auto runner = procgen::detail::makeCpuPassRunner(2);
      const uint64_t total = runner->countD0L(table, symbols, in.size());
      ASSERT_EQ(total, want.size());
      std::string got(total, '?');
      runner->rewriteD0L(table, symbols, in.size(), reinterpret_cast<uint8_t*>(got.data()));
      ASSERT_EQ(got, want) << "chunk " << chunk << ", longest successor " << longest;
      // The one-pass form (each chunk counts, waits for its predecessor's
      // prefix, writes), into room for the longest possible output.
      for (int threads : {2, 7}) {
        auto fused = procgen::detail::makeCpuPassRunner(threads);
        std::string room(in.size() * table.max_length, '?');
        const uint64_t size =
            fused->countRewriteD0L(table, symbols, in.size(), reinterpret_cast<uint8_t*>(room.data()), 0);
        ASSERT_EQ(room.substr(0, size), want) << "one pass, chunk " << chunk << ", threads " << threads;
      }
    }
  }
}

TEST(CpuStages, SerialRunnerCutIsCutBranches) {
  std::mt19937 rng(3);
  auto runner = procgen::detail::makeSerialPassRunner();
  const ModuleString s = randomBracketString(rng, 5000, true, false);
  ModuleString a = s, b = s;
  EXPECT_EQ(runner->cut(a), procgen::detail::cutBranches(b));
  EXPECT_EQ(compareStrings(a, b), "");
}

#endif  // PROCGEN_HAVE_TBB

}  // namespace
