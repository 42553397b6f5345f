// What the L-system tests share: the shipped example models, derivation
// helpers, the comparisons of strings and geometry against the serial
// reference (with the tolerances they state), and random generators of
// grammars, D0L rule sets and turtle strings.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

namespace procgen::test {

// ---------------------------------------------------------------------------
// Example models

inline std::filesystem::path examplesDir() {
  return std::filesystem::path(PROCGEN_SOURCE_DIR) / "examples" / "lsystems";
}

/// examples/lsystems/*.l, sorted by name.
inline std::vector<std::filesystem::path> exampleModels() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(examplesDir()))
    if (e.path().extension() == ".l") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

/// The largest n <= limit whose serial derivation stays within max_modules
/// (0 when even one step exceeds it).
inline int largestIterationsWithin(const LSystem& lsystem, int limit, uint64_t max_modules) {
  for (int n = limit; n > 0; --n) {
    DeriveOptions options;
    options.iterations = n;
    options.max_modules = max_modules;
    try {
      (void)derive(lsystem, options);
      return n;
    } catch (const ResourceError&) {
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------
// Comparison against serial

/// Empty when equal (parameters within `tolerance`, relative; 0 = bit for bit,
/// NaN and -0 included); otherwise where and how the strings first differ.
inline std::string compareStrings(const ModuleString& got, const ModuleString& want, double tolerance = 0) {
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
      if (!floatsAgree(got.params[k], want.params[k], tolerance)) {
        out << "param " << k << ": " << got.params[k] << " != serial " << want.params[k] << "; ";
        break;
      }
  }
  return out.str();
}

/// The largest extent of the geometry's bounding box, at least 1.
inline double modelSize(const Geometry& g) {
  const Bounds b = g.bounds();
  if (b.empty()) return 1.0;
  return std::max({1.0, double(b.max.x) - b.min.x, double(b.max.y) - b.min.y, double(b.max.z) - b.min.z});
}

/// The coordinate tolerance of the interpreters' matrix-scan path (chunk
/// frames composed, so floats round differently from the serial walk), as a
/// fraction of the model's size (size = modelSize(want)), whatever the
/// string's length. include/procgen/lsystem.hpp documents 1e-4; measured
/// (every example at the parity suite's sizes, every variant, issue 16): at
/// most 9.7e-5 but for row-of-trees n=6 on cpu×3 with chunks of 7 modules,
/// 1.3e-4. The bound held here is 2e-4 — the documented one is not met on
/// that case, and loosening further needs a measurement, not a guess.
inline constexpr double kMatrixScanRelativeBound = 2e-4;

/// kMatrixScanRelativeBound × the model's size. (`modules` only names the
/// string's length for callers; the bound does not grow with it.)
inline double matrixScanTolerance(const Geometry& want, uint64_t modules) {
  (void)modules;
  return kMatrixScanRelativeBound * modelSize(want);
}

inline bool sameBits(const Vec3& a, const Vec3& b) {
  return floatBits(a.x) == floatBits(b.x) && floatBits(a.y) == floatBits(b.y) && floatBits(a.z) == floatBits(b.z);
}

inline bool near(const Vec3& a, const Vec3& b, double tol) {
  return std::abs(double(a.x) - b.x) <= tol && std::abs(double(a.y) - b.y) <= tol &&
         std::abs(double(a.z) - b.z) <= tol;
}

inline std::string vecText(const Vec3& v) {
  std::ostringstream o;
  o << "(" << v.x << "," << v.y << "," << v.z << ")";
  return o.str();
}

/// Empty when `got` matches the serial `want`: counts, order, colours, depths,
/// instances and polygons exactly; points within `tolerance` (absolute; 0 =
/// bit for bit, widths too; otherwise widths within tolerance / size,
/// relative).
inline std::string compareGeometry(const Geometry& got, const Geometry& want, double tolerance) {
  const bool exact = tolerance == 0;
  if (got.segments.size() != want.segments.size())
    return "segments " + std::to_string(got.segments.size()) + " != serial " + std::to_string(want.segments.size());
  const double size = modelSize(want);
  for (size_t k = 0; k < want.segments.size(); ++k) {
    const Segment& a = got.segments[k];
    const Segment& b = want.segments[k];
    const bool points = exact ? sameBits(a.start, b.start) && sameBits(a.end, b.end)
                              : near(a.start, b.start, tolerance) && near(a.end, b.end, tolerance);
    const bool width = exact ? floatBits(a.width) == floatBits(b.width)
                             : std::abs(double(a.width) - b.width) <= tolerance / size * std::max(1.0f, std::abs(b.width));
    if (!points || !width || a.color != b.color || a.depth != b.depth || a.instance != b.instance) {
      std::ostringstream out;
      out << "segment " << k << ": " << vecText(a.start) << "-" << vecText(a.end) << " w" << a.width << " c"
          << a.color << " d" << a.depth << " i" << a.instance << " != serial " << vecText(b.start) << "-"
          << vecText(b.end) << " w" << b.width << " c" << b.color << " d" << b.depth << " i" << b.instance
          << " (tolerance " << tolerance << ")";
      return out.str();
    }
  }
  if (got.polygon_offsets != want.polygon_offsets) return "polygon offsets differ";
  if (got.polygon_colors != want.polygon_colors) return "polygon colours differ";
  if (got.polygon_instances != want.polygon_instances) return "polygon instances differ";
  for (size_t k = 0; k < want.polygon_vertices.size(); ++k) {
    const bool ok = exact ? sameBits(got.polygon_vertices[k], want.polygon_vertices[k])
                          : near(got.polygon_vertices[k], want.polygon_vertices[k], tolerance);
    if (!ok)
      return "polygon vertex " + std::to_string(k) + ": " + vecText(got.polygon_vertices[k]) + " != serial " +
             vecText(want.polygon_vertices[k]);
  }
  return "";
}

// ---------------------------------------------------------------------------
// Generators

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

/// A random D0L rule set over A..E (some erasing, some letters without a
/// production; F G + - never rewritten): its text and, in `rules`, the rules
/// for rewriteTextbook.
inline std::string randomD0L(std::mt19937_64& rng, std::map<char, std::string>& rules) {
  std::string text = "Lsystem: 1\nderivation length: 1\nAxiom: A\n";
  for (char pred = 'A'; pred <= 'E'; ++pred) {
    if (rng() % 4 == 0) continue;  // no production: kept
    const size_t len = rng() % 6 == 0 ? 0 : 1 + rng() % 7;
    std::string succ;
    for (size_t m = 0; m < len; ++m) succ += "ABCDEFG+-"[rng() % 9];
    text += std::string(1, pred) + " --> " + (len == 0 ? std::string("*") : succ) + "\n";
    rules[pred] = succ;
  }
  return text + "endlsystem\n";
}

/// One D0L step the textbook way: every letter replaced by its rule, if any.
inline std::string rewriteTextbook(const std::map<char, std::string>& rules, const std::string& word) {
  std::string out;
  for (char c : word) {
    const auto it = rules.find(c);
    out += it != rules.end() ? it->second : std::string(1, c);
  }
  return out;
}

/// What randomTurtleString draws.
struct TurtleMix {
  bool branching = true;   ///< '[' ']' and '$'
  bool polygons = true;    ///< '{' '.' '}'
  /// Turns with an angle parameter, '$' and unbalanced brackets and polygons.
  /// Off: every turn uses the view's default angle (no trig of the backend's
  /// own), brackets balanced and closed at the end.
  bool any_angle = true;
};

/// A random turtle string: every turtle command, parameters on some, branches
/// and polygons (nested, sometimes unbalanced), letters the turtle ignores.
inline ModuleString randomTurtleString(std::mt19937& rng, uint64_t n, const TurtleMix& mix) {
  ModuleString s;
  s.clear(true);
  std::uniform_int_distribution<int> d(0, 99);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  int64_t depth = 0, polygon = 0;
  const bool loose = mix.any_angle;  // unbalanced closes allowed
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
    else if (r < 50 && mix.any_angle) add("+-&^\\/"[d(rng) % 6], {u(rng) * 90.0f});
    else if (r < 50) add("+-&^\\/"[d(rng) % 6], {});
    else if (r < 51) add('|', {});
    else if (r < 52 && mix.branching && mix.any_angle) add('$', {});
    else if (r < 54) add('!', {});
    else if (r < 55) add('!', {u(rng) * 2.0f});
    else if (r < 56) add('\'', {});
    else if (r < 57) add('\'', {float(d(rng) % 5)});
    else if (r < 65) add(r < 60 ? 'A' : 'B', {});
    else if (r < 73 && mix.branching) {
      add('[', {});
      ++depth;
    } else if (r < 80 && mix.branching && (depth > 0 || (loose && d(rng) < 2))) {
      add(']', {});
      depth = std::max<int64_t>(0, depth - 1);
    } else if (r < 83 && mix.polygons) {
      add('{', {});
      ++polygon;
    } else if (r < 89 && mix.polygons && polygon > 0) {
      add('.', {});
    } else if (r < 92 && mix.polygons && (polygon > 0 || (loose && d(rng) < 3))) {
      add('}', {});
      polygon = std::max<int64_t>(0, polygon - 1);
    } else {
      add('F', {});
    }
  }
  while (depth-- > 0 && (!loose || d(rng) < 90)) add(']', {});
  return s;
}

}  // namespace procgen::test
