// Per-branch bounds against a brute-force reference written here: for every
// '[' at i with partner j (textbook stack), the union of the end points of
// the segments and the vertices of the polygons produced by modules in
// (i, j). Which module produced a segment is found by a separate replay
// (F/G outside polygons; a polygon belongs to its '{'). Also the serial
// bracket partners (now from treebox matching) against the textbook stack.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "common/brackets.hpp"
#include "lsystem/derive_stages.hpp"
#include "procgen/error.hpp"
#include "procgen/lsystem.hpp"

namespace procgen {
namespace {

std::vector<int64_t> textbookPartners(const ModuleString& s) {
  return test::textbookPartners(s.symbols.data(), s.size());
}

std::vector<BranchBounds> reference(const ModuleString& s, const Geometry& g) {
  // Producer module of every segment and polygon.
  std::vector<uint64_t> seg_module, poly_module;
  std::vector<std::pair<uint64_t, int>> polys;  // '{' position, vertex count
  for (uint64_t i = 0; i < s.size(); ++i) {
    const uint8_t c = s.symbols[i];
    if ((c == 'F' || c == 'G') && polys.empty()) seg_module.push_back(i);
    else if ((c == 'F' || c == 'f' || c == '.') && !polys.empty()) ++polys.back().second;
    else if (c == '{') polys.push_back({i, 0});
    else if (c == '}' && !polys.empty()) {
      if (polys.back().second >= 3) poly_module.push_back(polys.back().first);
      polys.pop_back();
    }
  }
  std::vector<int64_t> partner = textbookPartners(s);
  std::vector<BranchBounds> out;
  int32_t depth = 0;
  for (uint64_t i = 0; i < s.size(); ++i) {
    if (s.symbols[i] == ']' && partner[i] >= 0) --depth;
    if (s.symbols[i] != '[') continue;
    ++depth;
    const uint64_t end = partner[i] < 0 ? s.size() : static_cast<uint64_t>(partner[i]);
    BranchBounds b;
    b.begin = i;
    b.depth = depth;
    for (size_t k = 0; k < seg_module.size(); ++k)
      if (seg_module[k] > i && seg_module[k] < end) {
        b.bounds.add(g.segments[k].start);
        b.bounds.add(g.segments[k].end);
      }
    for (size_t k = 0; k < poly_module.size(); ++k)
      if (poly_module[k] > i && poly_module[k] < end)
        for (uint64_t v = g.polygon_offsets[k]; v < g.polygon_offsets[k + 1]; ++v)
          b.bounds.add(g.polygon_vertices[v]);
    out.push_back(b);
  }
  return out;
}

void expectBranchBounds(const std::string& text) {
  LSystem ls = LSystem::fromText(text, "test.l");
  DeriveOptions d;
  ModuleString s = derive(ls, d);
  InterpretOptions io;
  io.view = ls.view();
  Geometry g = interpret(ls, s, io);
  std::vector<BranchBounds> ref = reference(s, g);
  for (const test::Variant& v : test::availableVariants()) {
    std::vector<BranchBounds> got = branchBounds(ls, s, g, v.execution());
    ASSERT_EQ(got.size(), ref.size());
    for (size_t k = 0; k < ref.size(); ++k) {
      SCOPED_TRACE("branch " + std::to_string(k) + " on " + v.name);
      EXPECT_EQ(got[k].begin, ref[k].begin);
      EXPECT_EQ(got[k].depth, ref[k].depth);
      ASSERT_EQ(got[k].bounds.empty(), ref[k].bounds.empty());
      if (ref[k].bounds.empty()) continue;
      EXPECT_EQ(got[k].bounds.min.x, ref[k].bounds.min.x);
      EXPECT_EQ(got[k].bounds.min.y, ref[k].bounds.min.y);
      EXPECT_EQ(got[k].bounds.min.z, ref[k].bounds.min.z);
      EXPECT_EQ(got[k].bounds.max.x, ref[k].bounds.max.x);
      EXPECT_EQ(got[k].bounds.max.y, ref[k].bounds.max.y);
      EXPECT_EQ(got[k].bounds.max.z, ref[k].bounds.max.z);
    }
  }
}

TEST(BranchBounds, BracketedPlant) {
  expectBranchBounds(
      "angle increment: 25.7\nLsystem: 1\nderivation length: 4\nAxiom: F\n"
      "F --> F[+F]F[-F]F\nendlsystem\n");
}

TEST(BranchBounds, PolygonsEmptyBranchesAndUnbalancedBrackets) {
  // Leaves drawn as polygons, a branch that draws nothing ([+f]), a branch
  // that only moves, an unclosed '[' and a stray ']'.
  expectBranchBounds(
      "angle increment: 30\nLsystem: 1\nderivation length: 3\nAxiom: ]A\n"
      "A --> F[+A][-{.f+f+f.}]F[+f][&G[^F]]A\nendlsystem\n");
  expectBranchBounds(
      "angle increment: 45\nLsystem: 1\nderivation length: 2\nAxiom: F[+F[-F\n"
      "F --> F[+F]F\nendlsystem\n");
}

TEST(BranchBounds, RefusesHomomorphism) {
  LSystem ls = LSystem::fromText(
      "Lsystem: 1\nderivation length: 1\nAxiom: A\nA --> A[A]\n"
      "homomorphism:\nA --> F\nendlsystem\n",
      "h.l");
  ModuleString s = derive(ls, DeriveOptions{});
  InterpretOptions io;
  Geometry g = interpret(ls, s, io);
  EXPECT_THROW(branchBounds(ls, s, g, Execution{}), Error);
}

TEST(BracketPartners, SerialMatchesTextbookStack) {
  std::mt19937 rng(5);
  for (int len : {0, 1, 2, 50, 1000, 70000}) {
    ModuleString s;
    for (int i = 0; i < len; ++i) {
      const uint32_t r = rng() % 7;
      s.symbols.push_back(r == 0 ? '[' : r == 1 ? ']' : 'F');
    }
    if (len == 70000)  // deep: one long chain of branches
      for (int i = 0; i < len; ++i) s.symbols[static_cast<size_t>(i)] = i < len / 2 ? '[' : ']';
    std::vector<int64_t> got = test::poisoned<int64_t>(s.size());
    detail::bracketPartnersSerial(s.symbols.data(), s.size(), got.data());
    std::vector<int64_t> want = textbookPartners(s);
    for (uint64_t i = 0; i < s.size(); ++i) {
      if (s.symbols[i] == '[' || s.symbols[i] == ']') {
        ASSERT_EQ(got[i], want[i]) << "at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace procgen
