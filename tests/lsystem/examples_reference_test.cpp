// Reference tests for the shipped models (examples/lsystems/*.l): procgen's
// derivation is compared against straightforward rewriting written here from
// the productions of "The Algorithmic Beauty of Plants" (ABOP), without
// procgen's parser, tables or matcher:
//  - D0L models: a std::map<char, std::string> rewriting loop, and a per-letter
//    count recurrence (count vector x production matrix, uint64) for lengths;
//  - parametric models: hand-coded rewriting of {letter, params} structs with
//    the book's expressions evaluated in float;
//  - Fig. 1.31 (Hogeweg & Hesper): the context rules coded by hand, with
//    #ignore: +-F and bracket-aware left/right contexts (cpfg rules);
//  - Fig. 1.27 (stochastic): determinism per seed, and the production counts
//    recovered from the output are within 5 sigma of the probabilities.
// Where the paper (Lipp et al., Table 2) gives a module count that these
// models reproduce, it is asserted as an external check of the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/reference_lsystem.hpp"
#include "procgen/lsystem.hpp"

namespace {

namespace fs = std::filesystem;

fs::path examplePath(const std::string& file) {
  return fs::path(PROCGEN_SOURCE_DIR) / "examples" / "lsystems" / file;
}

using Rules = std::map<char, std::string>;

std::string rewrite(std::string word, const Rules& rules, int steps) {
  for (int step = 0; step < steps; ++step) {
    std::string next;
    next.reserve(word.size() * 4);
    for (char c : word) {
      auto it = rules.find(c);
      if (it == rules.end()) {
        next.push_back(c);
      } else {
        next += it->second;
      }
    }
    word = std::move(next);
  }
  return word;
}

/// Length after each of steps 1..n from per-letter counts: cheap at any n
/// because it never builds the string.
std::vector<uint64_t> lengthsByRecurrence(const std::string& axiom, const Rules& rules,
                                          int steps) {
  std::array<uint64_t, 256> count{};
  for (char c : axiom) ++count[static_cast<uint8_t>(c)];
  std::vector<uint64_t> lengths;
  for (int step = 0; step < steps; ++step) {
    std::array<uint64_t, 256> next{};
    for (int c = 0; c < 256; ++c) {
      if (count[c] == 0) continue;
      auto it = rules.find(static_cast<char>(c));
      if (it == rules.end()) {
        next[c] += count[c];
      } else {
        for (char s : it->second) next[static_cast<uint8_t>(s)] += count[c];
      }
    }
    count = next;
    lengths.push_back(std::accumulate(count.begin(), count.end(), uint64_t{0}));
  }
  return lengths;
}

uint64_t sum(const std::vector<uint64_t>& v) {
  return std::accumulate(v.begin(), v.end(), uint64_t{0});
}

struct Derived {
  procgen::ModuleString string;
  procgen::DeriveStats stats;
};

Derived deriveExample(const std::string& file, int iterations, uint64_t seed = 1) {
  procgen::LSystem lsystem = procgen::LSystem::fromFile(examplePath(file));
  procgen::DeriveOptions options;
  options.iterations = iterations;
  options.seed = seed;
  Derived d;
  d.string = procgen::derive(lsystem, options, &d.stats);
  return d;
}

/// First index where two texts differ, with a little context, for messages.
std::string firstDifference(const std::string& got, const std::string& want) {
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  size_t from = i < 20 ? 0 : i - 20;
  std::ostringstream out;
  out << "first difference at char " << i << " (got length " << got.size() << ", want "
      << want.size() << "): got \"" << got.substr(from, 60) << "\" want \""
      << want.substr(from, 60) << "\"";
  return out.str();
}

void expectD0L(const std::string& file, const std::string& axiom, const Rules& rules, int n) {
  SCOPED_TRACE(file + " n=" + std::to_string(n));
  Derived d = deriveExample(file, n);
  const std::string want = rewrite(axiom, rules, n);
  const std::string got = procgen::toText(d.string);
  EXPECT_TRUE(got == want) << firstDifference(got, want);
  const std::vector<uint64_t> lengths = lengthsByRecurrence(axiom, rules, n);
  ASSERT_EQ(lengths.back(), want.size()) << "reference rewriting and recurrence disagree";
  EXPECT_EQ(d.stats.modules, lengths.back());
  EXPECT_EQ(d.stats.step_modules, lengths);
  EXPECT_EQ(d.stats.modules_total, sum(lengths));
}

// ---------------------------------------------------------------------------
// Every shipped model parses and carries the derivation length of its figure.

struct ExampleEntry {
  const char* file;
  int derivation_length;
};

constexpr ExampleEntry kExamples[] = {
    {"hilbert3d.l", 6},        {"koch-curve.l", 7},       {"row-of-trees.l", 10},
    {"plant-2d.l", 7},         {"tree-3d.l", 10},         {"plant-stochastic.l", 11},
    {"plant-context.l", 30},   {"plant-1.24a.l", 5},      {"plant-1.24b.l", 5},
    {"plant-1.24d.l", 7},      {"plant-1.24e.l", 7},      {"plant-1.24f.l", 5},
    {"context-1.31a.l", 30},   {"context-1.31c.l", 26},   {"context-1.31d.l", 24},
    {"context-1.31e.l", 26},   {"monopodial-tree.l", 10}, {"sympodial-tree.l", 10},
    {"koch-island.l", 3},      {"dragon-curve.l", 10},    {"sierpinski-gasket.l", 6},
};

TEST(ExamplesReference, EveryModelParsesWithItsDerivationLength) {
  std::set<std::string> listed;
  for (const ExampleEntry& e : kExamples) {
    SCOPED_TRACE(e.file);
    listed.insert(e.file);
    procgen::LSystem lsystem = procgen::LSystem::fromFile(examplePath(e.file));
    EXPECT_EQ(lsystem.derivationLength(), e.derivation_length);
  }
  for (const auto& entry : fs::directory_iterator(examplePath(""))) {
    if (entry.path().extension() != ".l") continue;
    EXPECT_TRUE(listed.count(entry.path().filename().string()))
        << entry.path() << " is shipped but has no reference test entry";
  }
}

TEST(ExamplesReference, ViewSettingsOfTheTreeAreTheBooks) {
  procgen::LSystem tree = procgen::LSystem::fromFile(examplePath("tree-3d.l"));
  EXPECT_FLOAT_EQ(tree.view().elasticity, 0.14f);
  EXPECT_FLOAT_EQ(tree.view().tropism.x, 0.0f);
  EXPECT_FLOAT_EQ(tree.view().tropism.y, -1.0f);
  EXPECT_FLOAT_EQ(tree.view().tropism.z, 0.0f);
  procgen::LSystem plant = procgen::LSystem::fromFile(examplePath("plant-2d.l"));
  EXPECT_FLOAT_EQ(plant.view().angle_deg, 22.5f);
  procgen::LSystem row = procgen::LSystem::fromFile(examplePath("row-of-trees.l"));
  EXPECT_FLOAT_EQ(row.view().angle_deg, 86.0f);
}

// ---------------------------------------------------------------------------
// D0L models (ABOP Chapter 1), compared as exact strings at the paper's n.

const Rules kHilbert3d = {
    {'A', "B-F+CFC+F-D&F^D-F+&&CFC+F+B//"},
    {'B', "A&F^CFB^F^D^^-F-D^|F^B|FC^F^A//"},
    {'C', "|D^|F^B-F+C^F^A&&FA&F^C+F+B^F^D//"},
    {'D', "|CFB-F+B|FA&F^A&&FB-F+B|FC//"},
};
const Rules kPlant2d = {{'F', "FF-[-F+F+F]+[+F-F-F]"}};

TEST(ExamplesReference, Hilbert3dMatchesRewriting) {
  expectD0L("hilbert3d.l", "A", kHilbert3d, 2);
  expectD0L("hilbert3d.l", "A", kHilbert3d, 6);
  // Lipp et al. Table 2: "Hilbert 3D, 6 | 1,266,864 modules" is the sum of the
  // lengths produced by steps 1..6.
  EXPECT_EQ(sum(lengthsByRecurrence("A", kHilbert3d, 6)), 1266864u);
  EXPECT_EQ(deriveExample("hilbert3d.l", 6).stats.modules_total, 1266864u);
}

TEST(ExamplesReference, KochCurveMatchesRewriting) {
  expectD0L("koch-curve.l", "F-F-F-F", {{'F', "FF-F--F-F"}}, 7);
}

TEST(ExamplesReference, Plant2dMatchesRewriting) {
  expectD0L("plant-2d.l", "F", kPlant2d, 3);
  expectD0L("plant-2d.l", "F", kPlant2d, 7);
  // Closed form: 8^n F and 12 (8^n - 1) / 7 other modules.
  EXPECT_EQ(deriveExample("plant-2d.l", 7).stats.modules,
            2097152u + 12u * (2097152u - 1u) / 7u);
  // Lipp et al. Table 2: "2D plant, 7 | 813,169" is the sum of the lengths of
  // the strings of steps 0..6 (axiom included).
  EXPECT_EQ(1 + sum(lengthsByRecurrence("F", kPlant2d, 6)), 813169u);
}

TEST(ExamplesReference, Fig124PlantsMatchRewriting) {
  expectD0L("plant-1.24a.l", "F", {{'F', "F[+F]F[-F]F"}}, 5);
  expectD0L("plant-1.24b.l", "F", {{'F', "F[+F]F[-F][F]"}}, 5);
  expectD0L("plant-1.24d.l", "X", {{'X', "F[+X]F[-X]+X"}, {'F', "FF"}}, 7);
  expectD0L("plant-1.24e.l", "X", {{'X', "F[+X][-X]FX"}, {'F', "FF"}}, 7);
  expectD0L("plant-1.24f.l", "X", {{'X', "F-[[X]+X]+F[+FX]-X"}, {'F', "FF"}}, 5);
}

TEST(ExamplesReference, EdgeRewritingCurvesMatchRewriting) {
  expectD0L("koch-island.l", "F-F-F-F", {{'F', "F-F+F+FF-F-F+F"}}, 3);
  expectD0L("dragon-curve.l", "L", {{'L', "L+R+"}, {'R', "-L-R"}}, 10);
  expectD0L("sierpinski-gasket.l", "R", {{'L', "R+L+R"}, {'R', "L-R-L"}}, 6);
}

// ---------------------------------------------------------------------------
// Parametric models: hand-coded rewriting of {letter, params}.

struct Module {
  char symbol;
  std::vector<float> params;
};
using Word = std::vector<Module>;

Word parametricRewrite(Word word, int steps,
                       const std::function<bool(const Module&, Word&)>& produce) {
  for (int step = 0; step < steps; ++step) {
    Word next;
    next.reserve(word.size() * 4);
    for (const Module& m : word) {
      if (!produce(m, next)) next.push_back(m);
    }
    word = std::move(next);
  }
  return word;
}

bool closeEnough(float got, float want) {
  return std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want));
}

void expectSameWord(const procgen::ModuleString& got, const Word& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(static_cast<char>(got.symbols[i]), want[i].symbol) << "module " << i;
    ASSERT_EQ(got.paramCount(i), want[i].params.size()) << "module " << i;
    for (size_t k = 0; k < want[i].params.size(); ++k) {
      const float g = got.params[got.param_offsets[i] + k];
      ASSERT_TRUE(closeEnough(g, want[i].params[k]))
          << "module " << i << " '" << want[i].symbol << "' parameter " << k << ": got " << g
          << ", want " << want[i].params[k];
    }
  }
}

// ABOP p. 47: #define c 1, p 0.3, q c-p, h (p*q)^0.5; F(x) -> F(x*p)+F(x*h)--F(x*h)+F(x*q).
bool rowOfTrees(const Module& m, Word& out) {
  if (m.symbol != 'F' || m.params.size() != 1) return false;
  const float c = 1.0f, p = 0.3f, q = c - p, h = std::pow(p * q, 0.5f);
  const float x = m.params[0];
  out.push_back({'F', {x * p}});
  out.push_back({'+', {}});
  out.push_back({'F', {x * h}});
  out.push_back({'-', {}});
  out.push_back({'-', {}});
  out.push_back({'F', {x * h}});
  out.push_back({'+', {}});
  out.push_back({'F', {x * q}});
  return true;
}

TEST(ExamplesReference, RowOfTreesMatchesRewriting) {
  for (int n : {1, 2, 6}) {
    SCOPED_TRACE("row-of-trees.l n=" + std::to_string(n));
    Derived d = deriveExample("row-of-trees.l", n);
    expectSameWord(d.string, parametricRewrite({{'F', {1.0f}}}, n, rowOfTrees));
  }
  // Letter counts do not depend on the parameters: F -> F+F--F+F.
  const Rules letters = {{'F', "F+F--F+F"}};
  const std::vector<uint64_t> lengths = lengthsByRecurrence("F", letters, 10);
  Derived d = deriveExample("row-of-trees.l", 10);
  EXPECT_EQ(d.stats.modules, lengths.back());
  EXPECT_EQ(d.stats.step_modules, lengths);
  EXPECT_EQ(d.stats.modules_total, sum(lengths));
  // Lipp et al. Table 2: "row of trees, 10 | 815,545" = lengths of steps 0..9.
  EXPECT_EQ(1 + sum(lengthsByRecurrence("F", letters, 9)), 815545u);
}

// ABOP Fig. 2.8 b: d1 = d2 = 137.5, a = 18.95, lr = 1.109, vr = 1.732.
bool ternaryTree(const Module& m, Word& out) {
  const float d1 = 137.5f, d2 = 137.5f, a = 18.95f, lr = 1.109f, vr = 1.732f;
  if (m.symbol == 'A' && m.params.empty()) {
    out.push_back({'!', {vr}});
    out.push_back({'F', {50.0f}});
    for (int branch = 0; branch < 3; ++branch) {
      if (branch == 1) out.push_back({'/', {d1}});
      if (branch == 2) out.push_back({'/', {d2}});
      out.push_back({'[', {}});
      out.push_back({'&', {a}});
      out.push_back({'F', {50.0f}});
      out.push_back({'A', {}});
      out.push_back({']', {}});
    }
    return true;
  }
  if (m.symbol == 'F' && m.params.size() == 1) {
    out.push_back({'F', {m.params[0] * lr}});
    return true;
  }
  if (m.symbol == '!' && m.params.size() == 1) {
    out.push_back({'!', {m.params[0] * vr}});
    return true;
  }
  return false;
}

TEST(ExamplesReference, Tree3dMatchesRewriting) {
  const Word axiom = {{'!', {1.0f}}, {'F', {200.0f}}, {'/', {45.0f}}, {'A', {}}};
  for (int n : {1, 2, 5}) {
    SCOPED_TRACE("tree-3d.l n=" + std::to_string(n));
    Derived d = deriveExample("tree-3d.l", n);
    expectSameWord(d.string, parametricRewrite(axiom, n, ternaryTree));
  }
  const Rules letters = {{'A', "!F[&FA]/[&FA]/[&FA]"}};
  const std::vector<uint64_t> lengths = lengthsByRecurrence("!F/A", letters, 10);
  Derived d = deriveExample("tree-3d.l", 10);
  EXPECT_EQ(d.stats.modules, lengths.back());
  EXPECT_EQ(d.stats.modules, 531436u);  // 3^10 A + 3 + 16 (3^10 - 1) / 2
  EXPECT_EQ(d.stats.step_modules, lengths);
  EXPECT_EQ(d.stats.modules_total, sum(lengths));
}

// ABOP Fig. 2.6 a (Honda): r1 0.9, r2 0.6, a0 45, a2 45, d 137.5, wr 0.707.
bool monopodial(const Module& m, Word& out) {
  const float r1 = 0.9f, r2 = 0.6f, a0 = 45.0f, a2 = 45.0f, d = 137.5f, wr = 0.707f;
  if (m.params.size() != 2 || (m.symbol != 'A' && m.symbol != 'B' && m.symbol != 'C')) {
    return false;
  }
  const float l = m.params[0], w = m.params[1];
  out.push_back({'!', {w}});
  out.push_back({'F', {l}});
  out.push_back({'[', {}});
  if (m.symbol == 'A') {
    out.push_back({'&', {a0}});
    out.push_back({'B', {l * r2, w * wr}});
    out.push_back({']', {}});
    out.push_back({'/', {d}});
    out.push_back({'A', {l * r1, w * wr}});
  } else {
    const char other = m.symbol == 'B' ? 'C' : 'B';
    out.push_back({m.symbol == 'B' ? '-' : '+', {a2}});
    out.push_back({'$', {}});
    out.push_back({other, {l * r2, w * wr}});
    out.push_back({']', {}});
    out.push_back({other, {l * r1, w * wr}});
  }
  return true;
}

// ABOP Fig. 2.7 (Aono & Kunii): r1 0.9, r2 0.7, a1 10, a2 60, wr 0.707.
bool sympodial(const Module& m, Word& out) {
  const float r1 = 0.9f, r2 = 0.7f, a1 = 10.0f, a2 = 60.0f, wr = 0.707f;
  if (m.params.size() != 2 || (m.symbol != 'A' && m.symbol != 'B')) return false;
  const float l = m.params[0], w = m.params[1];
  out.push_back({'!', {w}});
  out.push_back({'F', {l}});
  if (m.symbol == 'A') {
    out.push_back({'[', {}});
    out.push_back({'&', {a1}});
    out.push_back({'B', {l * r1, w * wr}});
    out.push_back({']', {}});
    out.push_back({'/', {180.0f}});
    out.push_back({'[', {}});
    out.push_back({'&', {a2}});
    out.push_back({'B', {l * r2, w * wr}});
    out.push_back({']', {}});
  } else {
    out.push_back({'[', {}});
    out.push_back({'+', {a1}});
    out.push_back({'$', {}});
    out.push_back({'B', {l * r1, w * wr}});
    out.push_back({']', {}});
    out.push_back({'[', {}});
    out.push_back({'-', {a2}});
    out.push_back({'$', {}});
    out.push_back({'B', {l * r2, w * wr}});
    out.push_back({']', {}});
  }
  return true;
}

TEST(ExamplesReference, MonopodialAndSympodialTreesMatchRewriting) {
  const Word axiom = {{'A', {1.0f, 10.0f}}};
  {
    SCOPED_TRACE("monopodial-tree.l n=10");
    expectSameWord(deriveExample("monopodial-tree.l", 10).string,
                   parametricRewrite(axiom, 10, monopodial));
  }
  {
    SCOPED_TRACE("sympodial-tree.l n=10");
    expectSameWord(deriveExample("sympodial-tree.l", 10).string,
                   parametricRewrite(axiom, 10, sympodial));
  }
}

// ---------------------------------------------------------------------------
// Fig. 1.31: context-sensitive signal propagation with #ignore: +-F.

bool ignoredInContext(char c) { return c == '+' || c == '-' || c == 'F'; }

char leftContext(const std::string& s, size_t i) { return procgen::test::leftContext(s, i, ignoredInContext); }
char rightContext(const std::string& s, size_t i) { return procgen::test::rightContext(s, i, ignoredInContext); }

/// successors[l*4 + m*2 + r] is the successor of m with left context l and
/// right context r (the book's eight rules in order 000, 001, ..., 111).
std::string hogewegStep(const std::string& s, const std::array<const char*, 8>& successors) {
  std::string out;
  out.reserve(s.size() * 2);
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '+') {
      out.push_back('-');
    } else if (c == '-') {
      out.push_back('+');
    } else if (c == '0' || c == '1') {
      const char l = leftContext(s, i), r = rightContext(s, i);
      if ((l == '0' || l == '1') && (r == '0' || r == '1')) {
        out += successors[(l - '0') * 4 + (c - '0') * 2 + (r - '0')];
      } else {
        out.push_back(c);
      }
    } else {
      out.push_back(c);
    }
  }
  return out;
}

void expectHogeweg(const std::string& file, const std::string& axiom, int n,
                   const std::array<const char*, 8>& successors) {
  SCOPED_TRACE(file + " n=" + std::to_string(n));
  std::string want = axiom;
  std::vector<uint64_t> lengths;
  for (int step = 0; step < n; ++step) {
    want = hogewegStep(want, successors);
    lengths.push_back(want.size());
  }
  Derived d = deriveExample(file, n);
  const std::string got = procgen::toText(d.string);
  EXPECT_TRUE(got == want) << firstDifference(got, want);
  EXPECT_EQ(d.stats.step_modules, lengths);
  EXPECT_EQ(d.stats.modules_total, sum(lengths));
}

TEST(ExamplesReference, ContextHelpersFollowBranches) {
  // Hand-derived on ABOP p. 32's shape: left context skips closed branches and
  // climbs out through '['; right context skips lateral branches, stops at ']'.
  const std::string s = "0[1F+]1[0]F-[1]0]";
  EXPECT_EQ(leftContext(s, 2), '0');    // '1' inside the branch: parent is '0'
  EXPECT_EQ(leftContext(s, 6), '0');    // after "[1F+]": skips the branch
  EXPECT_EQ(rightContext(s, 0), '1');   // skips "[1F+]"
  EXPECT_EQ(rightContext(s, 2), 0);     // branch ends
  EXPECT_EQ(rightContext(s, 6), '0');   // skips "[0]", "F-", "[1]"
  EXPECT_EQ(rightContext(s, 15), 0);    // unmatched ']' ends the search
}

TEST(ExamplesReference, PlantContextMatchesHandCodedContexts) {
  expectHogeweg("plant-context.l", "F1F1F1", 30,
                {"1", "1[-F1F1]", "1", "1", "0", "1F1", "1", "0"});
}

TEST(ExamplesReference, Fig131PlantsMatchHandCodedContexts) {
  expectHogeweg("context-1.31a.l", "F1F1F1", 30,
                {"0", "1[+F1F1]", "1", "1", "0", "1F1", "0", "0"});
  expectHogeweg("context-1.31c.l", "F1F1F1", 26,
                {"0", "1", "0", "1[+F1F1]", "0", "1F1", "0", "0"});
  expectHogeweg("context-1.31d.l", "F0F1F1", 24,
                {"1", "0", "0", "1F1", "1", "1[+F1F1]", "1", "0"});
  expectHogeweg("context-1.31e.l", "F1F1F1", 26,
                {"0", "1[-F1F1]", "1", "1", "0", "1F1", "1", "0"});
}

// ---------------------------------------------------------------------------
// Fig. 1.27: F -> F[+F]F[-F]F (.33) | F[+F]F (.33) | F[-F]F (.34).

TEST(ExamplesReference, StochasticPlantIsDeterministicPerSeed) {
  const std::string a = procgen::toText(deriveExample("plant-stochastic.l", 6, 1).string);
  const std::string b = procgen::toText(deriveExample("plant-stochastic.l", 6, 1).string);
  const std::string c = procgen::toText(deriveExample("plant-stochastic.l", 6, 2).string);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(ExamplesReference, StochasticPlantChoicesFollowTheProbabilities) {
  // Every rewrite of F adds brackets and turns that are never rewritten:
  // choice 1 adds "+" and "-", choice 2 "+", choice 3 "-"; so with R rewrites
  // in total, n1 + n2 = #'+', n1 + n3 = #'-', n1 + n2 + n3 = R. R is the sum of
  // the F counts of the strings of steps 0..n-1, and each string of step k has
  // F_k = 1 + 2 #'['_k and length 1 + 5 #'['_k.
  const int n = 11;
  Derived d = deriveExample("plant-stochastic.l", n, 7);
  const std::string text = procgen::toText(d.string);
  ASSERT_EQ(d.stats.step_modules.size(), static_cast<size_t>(n));
  uint64_t rewrites = 1;  // step 0: the axiom F
  for (int k = 0; k + 1 < n; ++k) {
    const uint64_t len = d.stats.step_modules[k];
    ASSERT_EQ((len - 1) % 5, 0u) << "step " << k + 1 << " length " << len;
    rewrites += 1 + 2 * (len - 1) / 5;
  }
  uint64_t plus = 0, minus = 0, open = 0, close = 0, f = 0;
  int depth = 0;
  for (char c : text) {
    plus += c == '+';
    minus += c == '-';
    open += c == '[';
    close += c == ']';
    f += c == 'F';
    depth += (c == '[') - (c == ']');
    ASSERT_GE(depth, 0);
  }
  ASSERT_EQ(text.size(), d.stats.modules);
  ASSERT_EQ(open, close);
  ASSERT_EQ(open, plus + minus);
  ASSERT_EQ(f, 1 + 2 * open);
  ASSERT_GE(plus + minus, rewrites);
  const uint64_t n1 = plus + minus - rewrites;
  ASSERT_LE(n1, plus);
  ASSERT_LE(n1, minus);
  const double counts[3] = {static_cast<double>(n1), static_cast<double>(plus - n1),
                            static_cast<double>(minus - n1)};
  const double probabilities[3] = {0.33, 0.33, 0.34};
  const double trials = static_cast<double>(rewrites);
  for (int i = 0; i < 3; ++i) {
    const double expected = trials * probabilities[i];
    const double sigma = std::sqrt(trials * probabilities[i] * (1.0 - probabilities[i]));
    EXPECT_LE(std::fabs(counts[i] - expected), 5.0 * sigma)
        << "production " << i + 1 << ": " << counts[i] << " of " << trials << " rewrites";
  }
}

}  // namespace
