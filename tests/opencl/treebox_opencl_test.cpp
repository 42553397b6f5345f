// The opencl treebox stages against their serial twins and the textbook
// references (STYLE.md practices 6–7):
//  - match_parens.cl: random, unbalanced, deep, flat, only-plain and
//    only-close sequences at lengths 1, partition size ±1, partition² ±1 and
//    2^24, int32 and int64 outputs, statistics; with the default launch shape
//    and with tiny partitions (1, 8, 24 elements) so the partition scan, the
//    tree of partition minima (several levels) and the local item tree are all
//    crossed by short inputs;
//  - tree_bbox.cl: random 2D/3D scenes and deep clip chains against the
//    recursive reference and serial, bit for bit; unbalanced scenes throw what
//    serial throws;
//  - the CLI: --backend opencl prints what serial prints; a missing device
//    exits 3 with the runtime's message.
// Outputs are pre-filled with poison so unwritten elements fail. Every test
// skips with the reason when there is no OpenCL device.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "common/box_tree_reference.hpp"
#include "common/brackets.hpp"
#include "common/cli_run.hpp"
#include "opencl/runtime.hpp"
#include "procgen/opencl.hpp"
#include "procgen/treebox.hpp"
#include "treebox/match_internal.hpp"
#include "treebox/opencl/device_match.hpp"

namespace procgen {
namespace {

namespace fs = std::filesystem;
using treebox_detail::OpenCLMatchShape;

// The kernels build with -Werror and an empty warning log, with every option
// set the host uses (and the L-system kernel that shares opencl/min_tree.h).
TEST(OpenCLTreebox, KernelsBuildWithoutWarnings) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  opencl::Context& ctx = opencl::Context::get();
  const std::pair<const char*, const char*> builds[] = {
      {"treebox/opencl/match_parens.cl", "-DPG_INDEX_T=int -DPG_K=32"},
      {"treebox/opencl/match_parens.cl", "-DPG_INDEX_T=long -DPG_K=3"},
      {"treebox/opencl/tree_bbox.cl", ""},
      {"lsystem/opencl/bracket_partners.cl", ""}};
  for (const auto& [name, options] : builds) {
    SCOPED_TRACE(std::string(name) + " " + options);
    std::string log;
    cl_program p = ctx.buildSource(opencl::expandIncludes(name), std::string("-Werror ") + options, &log);
    clReleaseProgram(p);
    EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  }
}

// ---- parentheses ----------------------------------------------------------

using Reference = test::MatchReference;

enum Shape { kRandom, kUnbalanced, kDeep, kFlat, kPlain, kCloses, kSawtooth };
const char* const kShapeNames[] = {"random", "unbalanced", "deep", "flat", "plain", "closes", "sawtooth"};

std::vector<uint8_t> sequence(Shape shape, uint64_t n, uint32_t seed) {
  std::vector<uint8_t> s(n);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pct(0, 99);
  for (uint64_t i = 0; i < n; ++i) {
    switch (shape) {
      case kRandom: {  // balanced where possible: randomParentheses with plain elements mixed in
        const int r = pct(rng);
        s[i] = r < 40 ? '(' : r < 80 ? ')' : 'x';
        break;
      }
      case kUnbalanced: {  // closes dominate at the start, opens at the end
        const int r = pct(rng);
        const bool late = i > n / 2;
        s[i] = r < (late ? 60 : 25) ? '(' : r < 85 ? ')' : 'x';
        break;
      }
      case kDeep: s[i] = i < n / 2 ? '(' : ')'; break;
      case kFlat: s[i] = (i & 1) ? ')' : '('; break;
      case kPlain: s[i] = 'x'; break;
      case kCloses: s[i] = ')'; break;
      case kSawtooth: s[i] = (i / 1000) % 2 == 0 ? '(' : ')'; break;
    }
  }
  if (shape == kRandom && n > 0) {
    std::vector<uint8_t> p(n);
    randomParentheses(n, seed, 0.5, p.data());
    for (uint64_t i = 0; i < n; ++i)
      if (s[i] != 'x') s[i] = p[i];
  }
  return s;
}

template <typename Index>
MatchStats runOpenCL(const std::vector<uint8_t>& s, OpenCLMatchShape shape, std::vector<Index>& out) {
  out = test::poisoned<Index>(s.size());
  return treebox_detail::matchParensOpenCL(s.data(), s.size(), '(', ')', out.data(), -1, true, shape);
}

void expectStats(const MatchStats& got, const MatchStats& want) {
  EXPECT_EQ(got.elements, want.elements);
  EXPECT_EQ(got.unmatched_open, want.unmatched_open);
  EXPECT_EQ(got.unmatched_close, want.unmatched_close);
  EXPECT_EQ(got.max_depth, want.max_depth);
}

// opencl (int32 and int64) == serial == textbook, statistics included.
void expectParity(const std::vector<uint8_t>& s, OpenCLMatchShape shape, bool textbook_too) {
  std::vector<int64_t> want(s.size(), -7);
  const MatchStats want_stats =
      treebox_detail::matchParensSerial(s.data(), s.size(), '(', ')', want.data(), true);
  if (textbook_too) {
    const Reference ref = test::textbookMatch(s, '(', ')');
    ASSERT_EQ(want, ref.out) << "serial disagrees with the textbook stack";
    expectStats(want_stats, ref.stats);
  }
  std::vector<int32_t> got32;
  std::vector<int64_t> got64;
  expectStats(runOpenCL(s, shape, got32), want_stats);
  expectStats(runOpenCL(s, shape, got64), want_stats);
  for (size_t i = 0; i < s.size(); ++i) {
    ASSERT_EQ(got32[i], want[i]) << "int32 element " << i;
    ASSERT_EQ(got64[i], want[i]) << "int64 element " << i;
  }
}

struct NamedShape {
  const char* name;
  OpenCLMatchShape shape;
};

// Tiny partitions: many partitions (so several levels of partition minima)
// on short inputs; k = 3 is not a power of two; wg = 1 leaves every
// lookup to the global tree.
const NamedShape kTinyShapes[] = {{"wg1_k1", {1, 1}}, {"wg4_k2", {4, 2}}, {"wg8_k3", {8, 3}}};

TEST(OpenCLTreebox, TinyPartitionsEveryShapeAndLength) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  for (const NamedShape& ns : kTinyShapes) {
    const uint64_t p = treebox_detail::openclPartitionSize(-1, ns.shape);
    ASSERT_EQ(p, uint64_t{ns.shape.work_group} * ns.shape.per_item);
    std::vector<uint64_t> lengths = {1, 2, 3, p - 1, p, p + 1, p * p - 1, p * p, p * p + 1,
                                     32 * p + 1, 1000, 33 * 33 * p + 5};
    for (uint64_t n : lengths) {
      if (n == 0) continue;
      for (int shape = kRandom; shape <= kSawtooth; ++shape) {
        SCOPED_TRACE(std::string(ns.name) + " n=" + std::to_string(n) + " " + kShapeNames[shape]);
        expectParity(sequence(static_cast<Shape>(shape), n, static_cast<uint32_t>(n * 7 + shape)),
                     ns.shape, true);
      }
    }
  }
}

TEST(OpenCLTreebox, DefaultShapeAroundPartitionAndItsSquare) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  const uint64_t p = treebox_detail::openclPartitionSize(-1);
  for (uint64_t n : {uint64_t{1}, p - 1, p, p + 1, 3 * p + 17, p * 64 + 1}) {
    for (int shape = kRandom; shape <= kSawtooth; ++shape) {
      SCOPED_TRACE("n=" + std::to_string(n) + " " + kShapeNames[shape]);
      expectParity(sequence(static_cast<Shape>(shape), n, static_cast<uint32_t>(n + shape)), {}, true);
    }
  }
  // The paper's limits, n = w² (here partition²) and past them, are crossed
  // by the 2^24 test below when partition² <= 2^24 (the default is 4096).
  const uint64_t sq = p * p;
  if (sq <= (uint64_t{1} << 22)) {
    for (uint64_t n : {sq - 1, sq, sq + 1}) {
      SCOPED_TRACE("n=" + std::to_string(n));
      expectParity(sequence(kRandom, n, 5), {}, false);
      expectParity(sequence(kDeep, n, 5), {}, false);
    }
  }
}

// 2^24 = the default partition² (4096²), and a deep one one longer (depth
// 2^23, far past "depth <= w"). Compared against serial, itself checked
// against the textbook stack on every shorter input here and in tests/treebox.
TEST(OpenCLTreebox, Length2To24) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  const uint64_t n = uint64_t{1} << 24;
  expectParity(sequence(kRandom, n, 24), {}, false);
  expectParity(sequence(kDeep, n + 1, 24), {}, false);
}

TEST(OpenCLTreebox, PublicEntryPoints) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  const Execution ex{Backend::kOpenCL, 0, -1};
  std::vector<uint8_t> s = sequence(kUnbalanced, 100000, 3);
  for (auto& c : s) c = c == '(' ? '[' : c == ')' ? ']' : c;
  const Reference ref = test::textbookMatch(s, '[', ']');
  std::vector<int64_t> out(s.size(), 77);
  matchBrackets(s.data(), s.size(), '[', ']', out.data(), ex);
  EXPECT_EQ(out, ref.out);
  std::vector<ParenKind> kinds(s.size());
  for (size_t i = 0; i < s.size(); ++i)
    kinds[i] = s[i] == '[' ? ParenKind::kOpen : s[i] == ']' ? ParenKind::kClose : ParenKind::kOther;
  std::vector<int32_t> out32(s.size(), 77);
  expectStats(matchParentheses(kinds.data(), kinds.size(), out32.data(), ex), ref.stats);
  for (size_t i = 0; i < s.size(); ++i) ASSERT_EQ(out32[i], ref.out[i]) << i;
  // n = 0 writes nothing and reports nothing.
  expectStats(matchSymbols(s.data(), 0, '[', ']', out32.data(), ex), MatchStats{});
  EXPECT_THROW(matchSymbols(s.data(), 4, '(', ')', out32.data(), Execution{Backend::kOpenCL, 0, 99}),
               BackendUnavailableError);
}

// ---- tree bounding boxes --------------------------------------------------

using test::referenceBoxes;

bool sameBits(const Box3& a, const Box3& b) { return std::memcmp(&a, &b, sizeof(Box3)) == 0; }

void expectBoxes(const BoxTree& scene, OpenCLMatchShape shape) {
  const std::vector<Box3> ref = referenceBoxes(scene);
  std::vector<Box3> serial = test::poisoned<Box3>(scene.size());
  treebox_detail::treeBBoxSerial(scene, serial.data());
  std::vector<Box3> got = test::poisoned<Box3>(scene.size());
  treebox_detail::treeBBoxOpenCL(scene, got.data(), -1, shape);
  for (size_t i = 0; i < scene.size(); ++i) {
    ASSERT_TRUE(ref[i] == serial[i]) << "serial vs reference, element " << i;
    ASSERT_TRUE(sameBits(got[i], serial[i])) << "opencl vs serial, element " << i;
  }
}

TEST(OpenCLTreebox, BBoxRandomScenesMatchReferenceAndSerial) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  for (uint64_t n : {1, 2, 3, 10, 31, 32, 33, 100, 1025, 5000, 100000, 300001}) {
    for (int dims : {2, 3}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " dims=" + std::to_string(dims));
      const BoxTree scene = randomBoxTree(n, n * 3 + dims, dims);
      expectBoxes(scene, {});
      if (n <= 5000)
        for (const NamedShape& ns : kTinyShapes) expectBoxes(scene, ns.shape);
    }
  }
}

// Deep chains: nested clips (each a little smaller, some disjoint so results
// go empty) and blends around leaves at every level; depth far past any
// partition.
TEST(OpenCLTreebox, BBoxDeepNesting) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  for (uint64_t depth : {1, 2, 3, 100, 5000, 70000}) {
    BoxTree s;
    std::mt19937 rng(static_cast<uint32_t>(depth));
    std::uniform_real_distribution<float> u(0, 1000);
    auto box = [&] {
      float x0 = u(rng), y0 = u(rng), x1 = u(rng), y1 = u(rng);
      return Box3{{std::min(x0, x1), std::min(y0, y1), 0}, {std::max(x0, x1), std::max(y0, y1), 0}};
    };
    for (uint64_t d = 0; d < depth; ++d) {
      const bool clip = d % 3 != 1;
      s.kinds.push_back(clip ? BoxTreeNodeKind::kClip : BoxTreeNodeKind::kBlend);
      const float x0 = d % 7 == 6 ? 3000.f : 0.001f * static_cast<float>(d);  // 3000: disjoint, empty below
      s.boxes.push_back(clip ? Box3{{x0, -1.f, 0}, {2000.f - 0.001f * static_cast<float>(d), 2000.f, 0}}
                             : Box3{});
      s.kinds.push_back(BoxTreeNodeKind::kLeaf);
      s.boxes.push_back(box());
    }
    for (uint64_t d = 0; d < depth; ++d) {
      s.kinds.push_back(BoxTreeNodeKind::kEnd);
      s.boxes.push_back(Box3{});
    }
    SCOPED_TRACE("depth=" + std::to_string(depth));
    expectBoxes(s, {});
    if (depth <= 5000) expectBoxes(s, {4, 2});
  }
}

TEST(OpenCLTreebox, BBoxRejectsWhatSerialRejects) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  const Execution ex{Backend::kOpenCL, 0, -1};
  auto message = [](const BoxTree& s, const Execution& e) -> std::string {
    std::vector<Box3> out(s.size());
    try {
      treeBoundingBoxes(s, out.data(), e);
    } catch (const std::invalid_argument& err) {
      return err.what();
    }
    return "no exception";
  };
  BoxTree base = parseBoxTree("blend {\n clip 0 0 5 5 {\n  leaf 0 0 1 1\n }\n leaf 1 1 2 2\n}\n");
  BoxTree unclosed = base;  // drop the last two ends: the clip at 1 is the innermost unclosed group
  unclosed.kinds.resize(unclosed.size() - 3);
  unclosed.boxes.resize(unclosed.size());
  BoxTree extra_end = base;
  extra_end.kinds.insert(extra_end.kinds.begin() + 1, BoxTreeNodeKind::kEnd);
  extra_end.boxes.insert(extra_end.boxes.begin() + 1, Box3{});
  extra_end.kinds.insert(extra_end.kinds.begin() + 1, BoxTreeNodeKind::kEnd);
  extra_end.boxes.insert(extra_end.boxes.begin() + 1, Box3{});
  BoxTree bad_kind = base;
  bad_kind.kinds[2] = static_cast<BoxTreeNodeKind>(9);
  for (const BoxTree* s : {&unclosed, &extra_end, &bad_kind}) {
    const std::string want = message(*s, Execution{});
    EXPECT_NE(want, "no exception");
    EXPECT_EQ(message(*s, ex), want);
  }
}

// ---- CLI ------------------------------------------------------------------

using procgen::test::runProcgen;
using procgen::test::slurp;

TEST(OpenCLTreebox, CliParensAndBBoxPrintWhatSerialPrints) {
  PROCGEN_SKIP_WITHOUT_OPENCL();
  const fs::path dir = fs::temp_directory_path() / ("procgen_ocl_treebox_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path err = dir / "err.txt";
  std::ofstream(dir / "in.txt") << "(a(b)c))(";
  for (const std::string& cmd : {"parens " + (dir / "in.txt").string(), std::string("parens --random 100000 --depth-bias 0.6"),
                                std::string("bbox --random 20000 --dims 3")}) {
    SCOPED_TRACE(cmd);
    ASSERT_EQ(runProcgen(cmd + " -o " + (dir / "serial.txt").string(), err), 0) << slurp(err);
    ASSERT_EQ(runProcgen(cmd + " --backend opencl --device 0 -o " + (dir / "opencl.txt").string(), err), 0)
        << slurp(err);
    EXPECT_EQ(slurp(dir / "opencl.txt"), slurp(dir / "serial.txt"));
  }
  // No such device, then no platform at all: exit 3 and the runtime's message.
  EXPECT_EQ(runProcgen("parens --random 10 --backend opencl --device 99", err), 3);
  EXPECT_NE(slurp(err).find("error:"), std::string::npos) << slurp(err);
  EXPECT_EQ(runProcgen("bbox --random 10 --backend opencl", err, {}, "OCL_ICD_VENDORS=/nonexistent OCL_ICD_FILENAMES="), 3);
  EXPECT_NE(slurp(err).find("pocl-opencl-icd"), std::string::npos) << slurp(err);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace procgen
