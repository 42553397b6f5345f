// Tree bounding boxes against the reference of tests/common/box_tree_reference.hpp
// (clip regions passed down, leaf unions returned up) on every backend variant,
// and the box tree format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "common/box_tree_reference.hpp"
#include "procgen/error.hpp"
#include "procgen/treebox.hpp"
#include "treebox/match_internal.hpp"

namespace procgen {
namespace {

using test::referenceBoxes;

TEST(TreeBBox, HandDerived) {
  BoxTree s = parseBoxTree(
      "clip 0 0 10 10 {\n"
      "  leaf 5 5 20 20\n"
      "  blend {\n"
      "    leaf 1 1 2 2\n"
      "    clip 30 30 40 40 {\n"
      "      leaf 30 30 35 35\n"
      "    }\n"
      "  }\n"
      "}\n"
      "blend {\n"
      "}\n");
  std::vector<Box3> out(s.size());
  treeBoundingBoxes(s, out.data(), Execution{});
  EXPECT_EQ(out[1], (Box3{{5, 5, 0}, {10, 10, 0}}));  // clipped by the outer clip
  EXPECT_EQ(out[2], (Box3{{1, 1, 0}, {2, 2, 0}}));    // blend: the clipped-away leaf adds nothing
  EXPECT_TRUE(out[4].empty());                        // clip disjoint from its parent
  EXPECT_TRUE(out[5].empty());
  EXPECT_TRUE(out[9].empty());                        // blend without leaves
  EXPECT_EQ(out[10], out[9]);
}

TEST(TreeBBox, RandomScenesMatchRecursiveReference) {
  for (int dims : {2, 3}) {
    for (uint64_t n : {0, 1, 2, 10, 100, 1000, 20000}) {
      BoxTree s = randomBoxTree(n, 100 + n, dims);
      ASSERT_EQ(s.size(), n);
      std::vector<Box3> ref = referenceBoxes(s);
      for (const test::Variant& v : test::availableVariants()) {
        std::vector<Box3> out = test::poisoned<Box3>(n);
        treeBoundingBoxes(s, out.data(), v.execution());
        for (uint64_t i = 0; i < n; ++i)
          ASSERT_EQ(out[i], ref[i]) << "element " << i << " dims " << dims << " on " << v.name;
      }
    }
  }
}

#if PROCGEN_HAVE_TBB
// The cpu stage with 1, 2 and 7 threads and tiny chunks, so that groups span
// many chunks; deep nesting, flat scenes and random scenes.
TEST(TreeBBox, CpuThreadsAndTinyChunksMatchRecursiveReference) {
  std::vector<BoxTree> scenes;
  for (int dims : {2, 3})
    for (uint64_t n : {1, 2, 7, 64, 999, 5000}) scenes.push_back(randomBoxTree(n, 7 * n + dims, dims));
  // Deep: clip/blend groups nested 300 levels, a leaf at every level.
  BoxTree deep = randomBoxTree(0, 1, 2);
  for (int side = 0; side < 2; ++side)
    for (int i = 0; i < 300; ++i) {
      if (side == 0) {
        deep.kinds.push_back(i % 3 == 0 ? BoxTreeNodeKind::kBlend : BoxTreeNodeKind::kClip);
        deep.boxes.push_back(Box3{{float(i % 50), float(i % 40), 0}, {900.0f - i, 950.0f - i, 0}});
      } else {
        deep.kinds.push_back(BoxTreeNodeKind::kEnd);
        deep.boxes.push_back(emptyBox());
      }
      deep.kinds.push_back(BoxTreeNodeKind::kLeaf);
      deep.boxes.push_back(Box3{{float(3 * i % 997), float(7 * i % 991), 0},
                                {float(3 * i % 997) + 20, float(7 * i % 991) + 30, 0}});
    }
  scenes.push_back(deep);
  for (const BoxTree& s : scenes) {
    std::vector<Box3> ref = referenceBoxes(s);
    for (int threads : {1, 2, 7})
      for (uint64_t chunk : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{16}, uint64_t{1000}, uint64_t{1} << 14}) {
        std::vector<Box3> out = test::poisoned<Box3>(s.size());
        treebox_detail::treeBBoxCpu(s, out.data(), threads, chunk);
        for (uint64_t i = 0; i < s.size(); ++i)
          ASSERT_EQ(out[i], ref[i]) << "element " << i << " of " << s.size() << ", threads "
                                    << threads << ", chunk " << chunk;
      }
  }
}

TEST(TreeBBox, CpuRejectsUnbalancedScenes) {
  BoxTree s = parseBoxTree("blend {\n leaf 0 0 1 1\n}\n");
  s.kinds.pop_back();
  s.boxes.pop_back();
  std::vector<Box3> out(s.size());
  EXPECT_THROW(treeBoundingBoxes(s, out.data(), Execution{Backend::kCpu, 2}), std::invalid_argument);
}
#endif

TEST(BoxTreeFormat, RoundTrip) {
  for (int dims : {2, 3}) {
    BoxTree s = randomBoxTree(500, 9, dims);
    BoxTree back = parseBoxTree(writeBoxTree(s));
    EXPECT_EQ(back.dimensions, dims);
    ASSERT_EQ(back.kinds, s.kinds);
    for (size_t i = 0; i < s.size(); ++i) {
      if (s.kinds[i] == BoxTreeNodeKind::kLeaf || s.kinds[i] == BoxTreeNodeKind::kClip) {
        EXPECT_EQ(back.boxes[i], s.boxes[i]);
      }
    }
  }
}

void expectParseError(const std::string& text, int line, int column) {
  try {
    parseBoxTree(text, "x.boxtree");
    FAIL() << "no error for: " << text;
  } catch (const ParseError& e) {
    EXPECT_EQ(e.location().line, line) << e.what();
    EXPECT_EQ(e.location().column, column) << e.what();
    EXPECT_NE(std::string(e.what()).find("x.boxtree:"), std::string::npos);
  }
}

TEST(BoxTreeFormat, Errors) {
  expectParseError("leaf 0 0 1\n", 1, 1);              // 3 numbers
  expectParseError("leaf 0 0 1 1\n  }\n", 2, 3);       // unmatched close
  expectParseError("blend {\n  clip 0 0 1 1 {\n}\n", 1, 1);  // never closed
  expectParseError("leaf 0 0 1 1\nleaf 0 0 0 1 1 1\n", 2, 1);  // 2D then 3D
  expectParseError("leaf 0 0 q 1\n", 1, 10);
  expectParseError("leaf 2 0 1 1\n", 1, 6);            // min > max
  expectParseError("clip 0 0 1 1\n}\n", 1, 13);        // missing {
  expectParseError("# ok\nsquare 1\n", 2, 1);
}

}  // namespace
}  // namespace procgen
