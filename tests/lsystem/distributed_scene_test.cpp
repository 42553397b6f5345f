// Scenes over MPI ranks (docs/scaling.md "Scenes"), in one process:
//  - partitionByCost against brute force on small random inputs: every
//    instance in exactly one range, ranges contiguous in rank order, the
//    largest range cost the optimum over all contiguous partitions and
//    within the stated bound of the optimum over all assignments;
//  - partitionByCost with rank 0's extra work (root_extra) against brute
//    force: the optimum over contiguous partitions counting rank 0's range
//    plus the extra;
//  - predictSceneCosts against derive(): exact for D0L and for parametric
//    systems without conditions, the expectation (Monte Carlo over seeds)
//    for a stochastic one; predictSceneWork's parameters and segments
//    against the derived strings (parameters counted module by module over
//    every step, F and G of the final string);
//  - ranges derived and drawn alone join into deriveScene/interpretScene of
//    the whole scene, bit for bit (what rank 0 gathers);
//  - runSceneOnRanks on one rank: the whole scene's outputs and figures;
//  - glTF parts: the index joining the parts' JSON, loaded by tinygltf with
//    its external buffers, holds the same meshes and bytes as the one-file glb.
#include <gtest/gtest.h>
#include <tiny_gltf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "common/cli_run.hpp"
#include "common/lsystem_helpers.hpp"
#include "procgen/io.hpp"
#include "procgen/lsystem.hpp"
#include "procgen/scene.hpp"

namespace {

namespace fs = std::filesystem;
using procgen::Backend;
using procgen::Execution;
using procgen::LSystemSceneRange;

const fs::path kExamples = procgen::test::examplesDir();

uint64_t rangeCost(const std::vector<uint64_t>& costs, LSystemSceneRange r) {
  uint64_t sum = 0;
  for (size_t i = r.first; i < r.last; ++i) sum += costs[i];
  return sum;
}

/// The best largest-block cost over every way to cut `costs` into `ranks` contiguous (possibly empty) blocks.
uint64_t bestContiguous(const std::vector<uint64_t>& costs, int ranks) {
  uint64_t best = UINT64_MAX;
  std::function<void(size_t, int, uint64_t)> cut = [&](size_t begin, int left, uint64_t worst) {
    if (left == 1) {
      uint64_t sum = 0;
      for (size_t i = begin; i < costs.size(); ++i) sum += costs[i];
      best = std::min(best, std::max(worst, sum));
      return;
    }
    uint64_t sum = 0;
    for (size_t end = begin;; ++end) {
      cut(end, left - 1, std::max(worst, sum));
      if (end == costs.size()) break;
      sum += costs[end];
    }
  };
  cut(0, ranks, 0);
  return best;
}

/// The best largest-rank cost over every assignment of items to ranks (ranks^n of them).
uint64_t bestAssignment(const std::vector<uint64_t>& costs, int ranks) {
  uint64_t best = UINT64_MAX;
  std::vector<uint64_t> load(size_t(ranks), 0);
  std::function<void(size_t)> place = [&](size_t i) {
    if (i == costs.size()) {
      best = std::min(best, *std::max_element(load.begin(), load.end()));
      return;
    }
    for (int r = 0; r < ranks; ++r) {
      load[size_t(r)] += costs[i];
      place(i + 1);
      load[size_t(r)] -= costs[i];
    }
  };
  place(0);
  return best;
}

TEST(DistributedScenePartition, OptimalContiguousAndWithinBoundOfBestAssignment) {
  std::mt19937_64 rng(21);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = rng() % 9;  // 0..8 instances
    const int ranks = 1 + int(rng() % 4);
    std::vector<uint64_t> costs(n);
    for (uint64_t& c : costs) c = rng() % 4 == 0 ? 0 : rng() % (trial % 2 ? 100 : 100000);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": n " + std::to_string(n) + ", ranks " +
                 std::to_string(ranks));
    const std::vector<LSystemSceneRange> ranges = procgen::partitionByCost(costs, ranks);
    ASSERT_EQ(ranges.size(), size_t(ranks));
    // Every instance once, in rank order: rank r's range starts where r-1's ends.
    EXPECT_EQ(ranges.front().first, 0u);
    EXPECT_EQ(ranges.back().last, n);
    for (int r = 0; r < ranks; ++r) {
      EXPECT_LE(ranges[size_t(r)].first, ranges[size_t(r)].last);
      if (r > 0) {
        EXPECT_EQ(ranges[size_t(r)].first, ranges[size_t(r - 1)].last);
      }
    }
    uint64_t worst = 0, total = 0, largest = 0;
    for (const LSystemSceneRange& r : ranges) worst = std::max(worst, rangeCost(costs, r));
    for (uint64_t c : costs) {
      total += c;
      largest = std::max(largest, c);
    }
    EXPECT_EQ(worst, bestContiguous(costs, ranks));
    const uint64_t best = bestAssignment(costs, ranks);
    EXPECT_LE(worst, best + largest);
    EXPECT_LE(worst, (total + uint64_t(ranks) - 1) / uint64_t(ranks) + largest);
    // Deterministic: the same ranges again.
    const std::vector<LSystemSceneRange> again = procgen::partitionByCost(costs, ranks);
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(again[size_t(r)].first, ranges[size_t(r)].first);
      EXPECT_EQ(again[size_t(r)].last, ranges[size_t(r)].last);
    }
  }
}

TEST(DistributedScenePartition, RankZeroKeepsTheRemainder) {
  // Bottleneck 2: the last rank takes two items, rank 0 the one left.
  const std::vector<uint64_t> costs{1, 1, 1};
  const auto ranges = procgen::partitionByCost(costs, 2);
  EXPECT_EQ(ranges[0].first, 0u);
  EXPECT_EQ(ranges[0].last, 1u);
  EXPECT_EQ(ranges[1].last, 3u);
  // More ranks than instances: the first ranks are empty.
  const auto many = procgen::partitionByCost(costs, 5);
  EXPECT_EQ(many[0].size() + many[1].size(), 0u);
  for (int r = 2; r < 5; ++r) EXPECT_EQ(many[size_t(r)].size(), 1u);
  EXPECT_THROW(procgen::partitionByCost(costs, 0), procgen::Error);
}

/// The best largest cost over every cut into `ranks` contiguous blocks, block 0 counted with `extra`.
uint64_t bestContiguousWithRootExtra(const std::vector<uint64_t>& costs, int ranks, uint64_t extra) {
  uint64_t best = UINT64_MAX;
  std::function<void(size_t, int, uint64_t)> cut = [&](size_t begin, int rank, uint64_t worst) {
    uint64_t sum = rank == 0 ? extra : 0;
    if (rank == ranks - 1) {
      for (size_t i = begin; i < costs.size(); ++i) sum += costs[i];
      best = std::min(best, std::max(worst, sum));
      return;
    }
    for (size_t end = begin;; ++end) {
      cut(end, rank + 1, std::max(worst, sum));
      if (end == costs.size()) break;
      sum += costs[end];
    }
  };
  cut(0, 0, 0);
  return best;
}

TEST(DistributedScenePartition, RootExtraWorkIsCountedOnRankZeroOnly) {
  std::mt19937_64 rng(22);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = rng() % 9;
    const int ranks = 1 + int(rng() % 4);
    std::vector<uint64_t> costs(n);
    for (uint64_t& c : costs) c = rng() % 100;
    const uint64_t extra = trial % 3 == 0 ? 0 : rng() % 300;
    SCOPED_TRACE("trial " + std::to_string(trial) + ": n " + std::to_string(n) + ", ranks " +
                 std::to_string(ranks) + ", extra " + std::to_string(extra));
    const std::vector<LSystemSceneRange> ranges = procgen::partitionByCost(costs, ranks, extra);
    ASSERT_EQ(ranges.size(), size_t(ranks));
    EXPECT_EQ(ranges.front().first, 0u);
    EXPECT_EQ(ranges.back().last, n);
    for (int r = 1; r < ranks; ++r) EXPECT_EQ(ranges[size_t(r)].first, ranges[size_t(r - 1)].last);
    uint64_t worst = 0;
    for (int r = 0; r < ranks; ++r)
      worst = std::max(worst, rangeCost(costs, ranges[size_t(r)]) + (r == 0 ? extra : 0));
    EXPECT_EQ(worst, bestContiguousWithRootExtra(costs, ranks, extra));
    if (extra == 0) {  // the partition without extra work, range for range
      const std::vector<LSystemSceneRange> plain = procgen::partitionByCost(costs, ranks);
      for (int r = 0; r < ranks; ++r) {
        EXPECT_EQ(ranges[size_t(r)].first, plain[size_t(r)].first);
        EXPECT_EQ(ranges[size_t(r)].last, plain[size_t(r)].last);
      }
    }
  }
  // By hand: four items of 10 on two ranks; rank 0's extra 20 leaves it one item.
  const std::vector<uint64_t> four{10, 10, 10, 10};
  const auto ranges = procgen::partitionByCost(four, 2, 20);
  EXPECT_EQ(ranges[0].last, 1u);
  EXPECT_EQ(ranges[1].first, 1u);
  // Extra work larger than everything else: rank 0 takes nothing.
  EXPECT_EQ(procgen::partitionByCost(four, 2, 1000)[0].size(), 0u);
}

class DistributedSceneTest : public procgen::test::ScratchDirTest {
 protected:
  fs::path write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  procgen::LSystemScene scene(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    return procgen::LSystemScene::fromText(text, "t.scene", dir_);
  }
};

/// What derive() reports for the instance alone: the modules of every step plus the final string.
uint64_t derivedCost(const procgen::LSystemScene& s, size_t k, uint64_t seed) {
  procgen::DeriveOptions options;
  options.iterations = s.instances[k].iterations;
  options.seed = seed;
  procgen::DeriveStats stats;
  procgen::derive(s.instances[k].lsystem, options, &stats);
  return stats.modules_total + stats.modules;
}

TEST_F(DistributedSceneTest, PredictedCostsAreExactForD0LAndTheMeanForStochastic) {
  write("erase.l", "Lsystem: 1\nderivation length: 3\nAxiom: AAB\nA --> \nB --> BA\nendlsystem\n");
  const procgen::LSystemScene s =
      scene({(kExamples / "plant-2d.l").string() + " n=4", (kExamples / "koch-curve.l").string() + " n=3",
             (kExamples / "tree-3d.l").string() + " n=5", (kExamples / "hilbert3d.l").string() + " n=2",
             "erase.l", (kExamples / "plant-stochastic.l").string() + " n=5"});
  const std::vector<uint64_t> predicted = procgen::predictSceneCosts(s, procgen::DeriveOptions{});
  ASSERT_EQ(predicted.size(), s.instances.size());
  for (size_t k = 0; k + 1 < s.instances.size(); ++k)
    EXPECT_EQ(predicted[k], derivedCost(s, k, 1)) << "instance " << k;
  // Stochastic: F becomes 5, 3 or 3 Fs (+ brackets) with probabilities .33/.33/.34; the
  // prediction is the expectation, which the mean over many seeds approaches.
  double mean = 0;
  const int seeds = 400;
  for (int seed = 1; seed <= seeds; ++seed)
    mean += double(derivedCost(s, s.instances.size() - 1, uint64_t(seed)));
  mean /= seeds;
  EXPECT_NEAR(double(predicted.back()), mean, 0.05 * mean);
  // -n overrides every instance, as in deriveScene.
  procgen::DeriveOptions two;
  two.iterations = 2;
  const std::vector<uint64_t> at_two = procgen::predictSceneCosts(s, two);
  procgen::DeriveOptions options;
  options.iterations = 2;
  procgen::DeriveStats stats;
  procgen::derive(s.instances[0].lsystem, options, &stats);
  EXPECT_EQ(at_two[0], stats.modules_total + stats.modules);
}

/// Parameters of a derived string (all modules).
double paramsOf(const procgen::ModuleString& s) { return double(s.params.size()); }

TEST_F(DistributedSceneTest, PredictedWorkCountsParametersAndSegmentsExactlyForD0L) {
  // Parametric D0L (tree-3d: every production unconditional, context-free) and a
  // non-parametric one with G, a symbol without productions carrying its
  // parameter through every step (K), and a production erasing parameters.
  write("pd0l.l",
        "Lsystem: 1\nderivation length: 4\nAxiom: A(1)K(2,3)G\n"
        "A(x) --> F(x)[+(30)A(x*2)]G(x)B\nB --> F(1)A(2)\nF(x) --> F(x+1)\nendlsystem\n");
  const procgen::LSystemScene s =
      scene({(kExamples / "tree-3d.l").string() + " n=5", "pd0l.l n=4", (kExamples / "plant-2d.l").string() + " n=3"});
  const std::vector<procgen::SceneInstanceWork> work = procgen::predictSceneWork(s, procgen::DeriveOptions{});
  const std::vector<uint64_t> costs = procgen::predictSceneCosts(s, procgen::DeriveOptions{});
  ASSERT_EQ(work.size(), s.instances.size());
  for (size_t k = 0; k < s.instances.size(); ++k) {
    SCOPED_TRACE("instance " + std::to_string(k));
    const int iterations = *s.instances[k].iterations;
    double modules_written = 0, params_written = 0;
    procgen::ModuleString last;
    for (int step = 1; step <= iterations; ++step) {  // every step's string, derived from the axiom
      procgen::DeriveOptions options;
      options.iterations = step;
      last = procgen::derive(s.instances[k].lsystem, options);
      modules_written += double(last.size());
      params_written += paramsOf(last);
    }
    double segments = 0;
    for (uint8_t c : last.symbols) segments += c == 'F' || c == 'G';
    EXPECT_EQ(work[k].modules_written, modules_written);
    EXPECT_EQ(work[k].params_written, params_written);
    EXPECT_EQ(work[k].modules, double(last.size()));
    EXPECT_EQ(work[k].params, paramsOf(last));
    EXPECT_EQ(work[k].segments, segments);
    EXPECT_EQ(double(costs[k]), modules_written + double(last.size()));  // predictSceneCosts: the modules
  }
  EXPECT_GT(work[0].params, 0);
  EXPECT_EQ(work[2].params_written, 0);
  // The predicted times grow with the work and count the string hashes only when asked for.
  const std::vector<uint64_t> plain = procgen::predictSceneTimes(work, false);
  const std::vector<uint64_t> hashed = procgen::predictSceneTimes(work, true);
  for (size_t k = 0; k < work.size(); ++k) EXPECT_GT(hashed[k], plain[k]);
  EXPECT_EQ(procgen::predictSceneTimes(std::vector<procgen::SceneInstanceWork>(1), true)[0], 0u);
  EXPECT_GT(procgen::predictSceneJoinTime(work), procgen::predictSceneJoinTime(std::span(work).first(1)));
}

TEST_F(DistributedSceneTest, RangesJoinIntoTheWholeScene) {
  write("leaf.l",
        "Lsystem: 1\nderivation length: 3\nAxiom: A\nA --> F[+L]F[-L]A\nL --> {.F+F.F.}\nendlsystem\n");
  write("hom.l",
        "Lsystem: 1\nderivation length: 3\nAxiom: A\nA --> A[+A]A\nhomomorphism:\nA --> F[-F]\nendlsystem\n");
  write("par.l",
        "Lsystem: 1\nderivation length: 6\nAxiom: A(1)\n"
        "A(x) : x < 4 --> F(x)[+A(x+1)]A(x*1.5)\nA(x) : x >= 4 --> F(x)\nendlsystem\n");
  const procgen::LSystemScene s =
      scene({"leaf.l at=1,0,0", (kExamples / "plant-stochastic.l").string() + " n=4 rotate=0,30,0",
             "hom.l scale=2", (kExamples / "tree-3d.l").string() + " n=4", "par.l",
             (kExamples / "plant-context.l").string() + " n=5", "leaf.l rotate=10,20,30 seed=5"});
  std::vector<procgen::test::Variant> variants = procgen::test::availableVariants(
      {procgen::test::makeVariant(Backend::kSerial, 1), procgen::test::makeVariant(Backend::kCpu, 2)});
  for (const procgen::test::Variant& v : variants) {
    SCOPED_TRACE(v.name);
    procgen::DeriveOptions options;
    options.seed = 7;
    options.execution = v.execution();
    const procgen::LSystemSceneDerivation whole = procgen::deriveScene(s, options);
    const procgen::Geometry want = procgen::interpretScene(s, whole, v.execution(), 7);
    ASSERT_GT(want.polygonCount(), 0u);
    for (int ranks : {2, 3, 7}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks");
      const auto ranges = procgen::partitionByCost(procgen::predictSceneCosts(s, options), ranks);
      procgen::Geometry got;
      uint64_t hash = 1469598103934665603ull;
      for (const LSystemSceneRange& r : ranges) {
        const procgen::LSystemSceneDerivation part = procgen::deriveSceneRange(s, r, options);
        ASSERT_EQ(part.instances(), r.size());
        for (size_t k = 0; k < r.size(); ++k) {
          EXPECT_EQ(part.stats[k].modules, whole.stats[r.first + k].modules);
          EXPECT_EQ(part.stats[k].modules_total, whole.stats[r.first + k].modules_total);
          EXPECT_EQ(procgen::stringHash(part.instanceString(k, s)),
                    procgen::stringHash(whole.instanceString(r.first + k, s)));
        }
        hash = procgen::stringHash(part.string, hash);
        const procgen::Geometry g =
            procgen::interpretSceneRange(s, part, whole.string.size(), v.execution(), 7);
        const uint64_t v0 = got.polygon_vertices.size();
        for (const procgen::Segment& seg : g.segments) got.segments.push_back(seg);
        got.polygon_vertices.insert(got.polygon_vertices.end(), g.polygon_vertices.begin(),
                                    g.polygon_vertices.end());
        for (size_t p = 1; p < g.polygon_offsets.size(); ++p)
          got.polygon_offsets.push_back(v0 + g.polygon_offsets[p]);
        got.polygon_colors.insert(got.polygon_colors.end(), g.polygon_colors.begin(), g.polygon_colors.end());
        got.polygon_instances.insert(got.polygon_instances.end(), g.polygon_instances.begin(),
                                     g.polygon_instances.end());
      }
      EXPECT_EQ(hash, procgen::stringHash(whole.string));
      ASSERT_EQ(got.segments.size(), want.segments.size());
      EXPECT_EQ(std::memcmp(got.segments.data(), want.segments.data(),
                            want.segments.size() * sizeof(procgen::Segment)),
                0);
      ASSERT_EQ(got.polygon_vertices.size(), want.polygon_vertices.size());
      EXPECT_EQ(std::memcmp(got.polygon_vertices.data(), want.polygon_vertices.data(),
                            want.polygon_vertices.size() * sizeof(procgen::Vec3)),
                0);
      EXPECT_EQ(got.polygon_offsets, want.polygon_offsets);
      EXPECT_EQ(got.polygon_colors, want.polygon_colors);
      EXPECT_EQ(got.polygon_instances, want.polygon_instances);
    }
  }
}

// runSceneOnRanks in one process (one rank: the MPI runs are tests/mpi's):
// its geometry, text, totals, per-instance figures and whole-string hash are
// those of deriveScene + interpretScene of the whole scene and of derive()
// for each instance alone; its write callback sees the outputs before
// returning; each geometry target leaves the geometry where it says.
TEST_F(DistributedSceneTest, RunOnOneRankIsTheWholeSceneWithItsFigures) {
  write("leaf.l",
        "Lsystem: 1\nderivation length: 3\nAxiom: A\nA --> F[+L]F[-L]A\nL --> {.F+F.F.}\nendlsystem\n");
  const procgen::LSystemScene s =
      scene({"leaf.l at=1,0,0", (kExamples / "plant-stochastic.l").string() + " n=4 rotate=0,30,0",
             (kExamples / "tree-3d.l").string() + " n=4", "leaf.l rotate=10,20,30 seed=5"});
  for (const procgen::test::Variant& v : procgen::test::availableVariants(
           {procgen::test::makeVariant(Backend::kSerial, 1), procgen::test::makeVariant(Backend::kCpu, 2)})) {
    SCOPED_TRACE(v.name);
    procgen::DeriveOptions derive;
    derive.seed = 7;
    derive.execution = v.execution();
    const procgen::LSystemSceneDerivation whole = procgen::deriveScene(s, derive);
    const procgen::Geometry want = procgen::interpretScene(s, whole, v.execution(), 7);
    ASSERT_GT(want.polygonCount(), 0u);

    procgen::SceneRunOptions options;
    options.derive = derive;
    options.text = true;
    options.statistics = true;
    int writes = 0;
    size_t written_segments = 0;
    options.write = [&](const procgen::SceneRun& run) {
      ++writes;
      written_segments = run.geometry.segments.size();
    };
    const procgen::SceneRun run = procgen::runSceneOnRanks(s, options);
    EXPECT_EQ(writes, 1);
    EXPECT_EQ(written_segments, want.segments.size());
    ASSERT_EQ(run.geometry.segments.size(), want.segments.size());
    EXPECT_EQ(std::memcmp(run.geometry.segments.data(), want.segments.data(),
                          want.segments.size() * sizeof(procgen::Segment)),
              0);
    EXPECT_EQ(run.geometry.polygon_offsets, want.polygon_offsets);
    EXPECT_EQ(run.geometry.polygon_instances, want.polygon_instances);
    EXPECT_EQ(run.text, procgen::toText(whole.string));
    EXPECT_EQ(run.string_hash, procgen::stringHash(whole.string));
    EXPECT_EQ(run.instances, s.instances.size());
    EXPECT_EQ(run.modules, whole.string.size());
    EXPECT_EQ(run.segments, want.segments.size());
    EXPECT_EQ(run.polygons, want.polygonCount());
    const procgen::Bounds box = want.bounds();
    EXPECT_EQ(run.bounds.min.x, box.min.x);
    EXPECT_EQ(run.bounds.max.z, box.max.z);
    ASSERT_EQ(run.per_instance.size(), s.instances.size());
    uint64_t modules_total = 0;
    for (size_t k = 0; k < s.instances.size(); ++k) {
      SCOPED_TRACE("instance " + std::to_string(k));
      const procgen::SceneInstanceFigures& f = run.per_instance[k];
      procgen::DeriveOptions alone;  // the instance by itself: its own seed, else the base seed + its index
      alone.iterations = s.instances[k].iterations;
      alone.seed = s.instances[k].seed.value_or(7 + k);
      procgen::DeriveStats stats;
      const procgen::ModuleString string = procgen::derive(s.instances[k].lsystem, alone, &stats);
      EXPECT_EQ(f.string_hash, procgen::stringHash(string));
      EXPECT_EQ(f.modules, stats.modules);
      EXPECT_EQ(f.modules_total, stats.modules_total);
      EXPECT_EQ(f.iterations, stats.iterations);
      modules_total += stats.modules_total;
      uint64_t segments = 0, polygons = 0;
      for (const procgen::Segment& seg : want.segments) segments += seg.instance == int32_t(k);
      for (int32_t id : want.polygon_instances) polygons += id == int32_t(k);
      EXPECT_EQ(f.segments, segments);
      EXPECT_EQ(f.polygons, polygons);
    }
    EXPECT_EQ(run.modules_total, modules_total);
    // One rank's timeline: its start and the end of each phase, in order.
    ASSERT_EQ(run.timeline_ms.size(), procgen::SceneRun::kPhaseCount + 1);
    EXPECT_TRUE(std::is_sorted(run.timeline_ms.begin(), run.timeline_ms.end()));
    EXPECT_EQ(run.timeline_cpu_ms.size(), run.timeline_ms.size());

    // Without statistics or text, and with each rank's own geometry (one rank: all of it).
    procgen::SceneRunOptions plain;
    plain.derive = derive;
    plain.geometry = procgen::SceneGeometryTarget::kPerRank;
    const procgen::SceneRun own = procgen::runSceneOnRanks(s, plain);
    EXPECT_EQ(own.geometry.segments.size(), want.segments.size());
    EXPECT_TRUE(own.text.empty());
    EXPECT_TRUE(own.per_instance.empty());
    EXPECT_TRUE(own.timeline_ms.empty());
    EXPECT_EQ(own.segments, want.segments.size());  // the totals still
    plain.geometry = procgen::SceneGeometryTarget::kNone;
    const procgen::SceneRun none = procgen::runSceneOnRanks(s, plain);
    EXPECT_TRUE(none.geometry.segments.empty());
    EXPECT_EQ(none.segments, want.segments.size());
  }
}

/// The bytes an accessor covers (tightly packed: procgen writes no strides).
std::vector<unsigned char> accessorBytes(const tinygltf::Model& m, int id) {
  const tinygltf::Accessor& a = m.accessors[size_t(id)];
  const tinygltf::BufferView& v = m.bufferViews[size_t(a.bufferView)];
  const std::vector<unsigned char>& data = m.buffers[size_t(v.buffer)].data;
  const size_t bytes = a.count * size_t(tinygltf::GetComponentSizeInBytes(uint32_t(a.componentType))) *
                       size_t(tinygltf::GetNumComponentsInType(uint32_t(a.type)));
  EXPECT_EQ(bytes, v.byteLength);
  return {data.begin() + long(v.byteOffset + a.byteOffset),
          data.begin() + long(v.byteOffset + a.byteOffset + bytes)};
}

TEST_F(DistributedSceneTest, GltfPartsHoldTheOneFileGeometry) {
  write("leaf.l",
        "Lsystem: 1\nderivation length: 3\nAxiom: A\nA --> F[+L]F[-L]A\nL --> {.F+F.F.}\nendlsystem\n");
  const procgen::LSystemScene s = scene({"leaf.l", (kExamples / "plant-2d.l").string() + " n=3",
                                         (kExamples / "tree-3d.l").string() + " n=4", "leaf.l at=5,0,0",
                                         (kExamples / "koch-curve.l").string() + " n=2"});
  for (bool cylinders : {false, true}) {
    SCOPED_TRACE(cylinders ? "tubes" : "lines");
    procgen::WriteOptions write_options;
    write_options.cylinders = cylinders;
    const procgen::LSystemSceneDerivation whole = procgen::deriveScene(s, {});
    const procgen::Geometry geometry = procgen::interpretScene(s, whole, Execution{});
    const std::vector<uint8_t> glb =
        procgen::encodeGeometry(geometry, procgen::GeometryFormat::kGlb, write_options);
    tinygltf::TinyGLTF loader;
    tinygltf::Model want, got;
    std::string err, warn;
    ASSERT_TRUE(loader.LoadBinaryFromMemory(&want, &err, &warn, glb.data(), unsigned(glb.size()))) << err;
    for (int ranks : {1, 2, 4}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks");
      const auto ranges = procgen::partitionByCost(procgen::predictSceneCosts(s, {}), ranks);
      std::vector<std::string> jsons, uris;
      for (size_t r = 0; r < ranges.size(); ++r) {
        const procgen::LSystemSceneDerivation part = procgen::deriveSceneRange(s, ranges[r], {});
        const procgen::Geometry g = procgen::interpretSceneRange(s, part, whole.string.size(), Execution{});
        const procgen::GlbChunks chunks =
            procgen::splitGlb(procgen::encodeGeometry(g, procgen::GeometryFormat::kGlb, write_options));
        uris.push_back("p.part-" + std::to_string(r) + ".bin");
        std::ofstream(dir_ / uris.back(), std::ios::binary)
            .write(reinterpret_cast<const char*>(chunks.bin.data()), std::streamsize(chunks.bin.size()));
        jsons.push_back(chunks.json);
      }
      write("p.gltf", procgen::mergeGltfParts(jsons, uris));
      got = tinygltf::Model{};
      ASSERT_TRUE(loader.LoadASCIIFromFile(&got, &err, &warn, (dir_ / "p.gltf").string())) << err;
      ASSERT_EQ(got.meshes.size(), want.meshes.size());
      ASSERT_EQ(got.scenes.size(), 1u);
      ASSERT_EQ(got.scenes[0].nodes.size(), want.scenes[0].nodes.size());
      for (size_t i = 0; i < want.scenes[0].nodes.size(); ++i) {
        const tinygltf::Node& wn = want.nodes[size_t(want.scenes[0].nodes[i])];
        const tinygltf::Node& gn = got.nodes[size_t(got.scenes[0].nodes[i])];
        EXPECT_EQ(gn.name, wn.name);
        const tinygltf::Mesh& wm = want.meshes[size_t(wn.mesh)];
        const tinygltf::Mesh& gm = got.meshes[size_t(gn.mesh)];
        EXPECT_EQ(gm.name, wm.name);
        ASSERT_EQ(gm.primitives.size(), wm.primitives.size());
        for (size_t p = 0; p < wm.primitives.size(); ++p) {
          const tinygltf::Primitive& wp = wm.primitives[p];
          const tinygltf::Primitive& gp = gm.primitives[p];
          EXPECT_EQ(gp.mode, wp.mode);
          EXPECT_EQ(gp.material, wp.material);
          ASSERT_EQ(gp.attributes.size(), wp.attributes.size());
          for (const auto& [name, id] : wp.attributes) {
            ASSERT_TRUE(gp.attributes.count(name)) << name;
            EXPECT_EQ(accessorBytes(got, gp.attributes.at(name)), accessorBytes(want, id))
                << wm.name << " " << name;
          }
          EXPECT_EQ(accessorBytes(got, gp.indices), accessorBytes(want, wp.indices)) << wm.name;
        }
      }
    }
  }
}

TEST(DistributedSceneGlb, SplitRejectsWhatIsNotAGlb) {
  const std::vector<uint8_t> text{'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l',
                                  'd', '!', 0,   0,   0,   0,   0,   0,   0,   0};
  EXPECT_THROW(procgen::splitGlb(text), procgen::Error);
  const std::vector<std::string> bad{"{not json"}, uri{"a.bin"};
  EXPECT_THROW(procgen::mergeGltfParts(bad, uri), procgen::Error);
}

}  // namespace
