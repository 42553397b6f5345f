// Golden files of treebox (tests/common/golden.hpp; regenerate with
// PROCGEN_UPDATE_GOLDEN=1), from the serial backend only: parentheses
// statistics and checksums of random sequences, and tree bounding boxes of
// random box trees (a small one in full, larger ones hashed). They catch
// unintended changes (of the generators too); correctness is checked against
// the textbook references in match_parens_test.cpp and tree_bbox_test.cpp.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "common/golden.hpp"
#include "procgen/treebox.hpp"

namespace procgen {
namespace {

std::string hex(uint64_t h) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

TEST(GoldenTreebox, RandomParentheses) {
  std::ostringstream out;
  out << "# matchSymbols (serial) over randomParentheses(n, seed, p)\n"
         "# (tests/treebox/golden_test.cpp; PROCGEN_UPDATE_GOLDEN=1 rewrites).\n";
  for (const uint64_t n : {uint64_t{1}, uint64_t{1000}, uint64_t{100003}})
    for (const uint64_t seed : {uint64_t{1}, uint64_t{2}})
      for (const double p : {0.5, 0.6}) {
        std::vector<uint8_t> s(n);
        randomParentheses(n, seed, p, s.data());
        std::vector<int64_t> out64(n);
        const MatchStats st = matchSymbols(s.data(), n, '(', ')', out64.data(), Execution{});
        out << "n=" << n << " seed=" << seed << " p=" << p << " input_fnv=" << hex(test::fnv1a(s.data(), n))
            << " unmatched_open=" << st.unmatched_open << " unmatched_close=" << st.unmatched_close
            << " max_depth=" << st.max_depth << " checksum=" << hex(matchChecksum(out64.data(), n)) << "\n";
      }
  test::expectGoldenText("treebox/parentheses.txt", out.str());
}

TEST(GoldenTreebox, RandomBoxTrees) {
  std::ostringstream out;
  out << "# treeBoundingBoxes (serial) of randomBoxTree(n, seed, dims)\n"
         "# (tests/treebox/golden_test.cpp; PROCGEN_UPDATE_GOLDEN=1 rewrites).\n";
  for (const int dims : {2, 3}) {
    const BoxTree small = randomBoxTree(24, 5, dims);
    std::vector<Box3> boxes(small.size());
    treeBoundingBoxes(small, boxes.data(), Execution{});
    out << "## randomBoxTree(24, 5, " << dims << ")\n" << writeBoxTree(small) << "## its boxes\n"
        << writeBoxTreeBoxes(small, boxes.data());
    for (const uint64_t n : {uint64_t{1000}, uint64_t{65537}}) {
      const BoxTree t = randomBoxTree(n, 7, dims);
      std::vector<Box3> b(t.size());
      treeBoundingBoxes(t, b.data(), Execution{});
      const std::string text = writeBoxTree(t);
      out << "n=" << n << " seed=7 dims=" << dims << " tree_fnv=" << hex(test::fnv1a(text.data(), text.size()))
          << " boxes_fnv=" << hex(test::fnv1a(b.data(), b.size() * sizeof(Box3))) << "\n";
    }
  }
  test::expectGoldenText("treebox/box-trees.txt", out.str());
}

}  // namespace
}  // namespace procgen
