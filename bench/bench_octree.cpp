// Octree build and query throughput (issue 18 "Done when"): points per
// second for the bucketed bottom-up (default), top-down cube and compressed
// builds at 10^6 and 1.6·10^7 uniform and Plummer points, serial vs cpu at 1
// and 2 threads; the Morton encode + radix sort alone as the floor of every
// bottom-up build; point location and 8-NN queries per second on 10^6
// points, leaf size 16. The points are generated once outside timing; every
// iteration builds a fresh tree (its allocations included, as a caller sees
// them). `bytes_per_point` is the build's accounted peak: keys + order +
// the sort's scratch (24 B) plus the node arrays, over the point count
// (the caller's input array not included).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "primitives/primitives.hpp"
#include "procgen/octree.hpp"

namespace {

using namespace procgen;

const std::vector<double>& cloud(int distribution, int64_t n) {
  static std::map<std::pair<int, int64_t>, std::vector<double>> cache;
  auto& v = cache[{distribution, n}];
  if (v.empty()) {
    v.resize(3 * static_cast<size_t>(n));
    generatePoints(static_cast<PointDistribution>(distribution), static_cast<uint64_t>(n), 1, v.data(),
                   Execution{backendAvailable(Backend::kCpu) ? Backend::kCpu : Backend::kSerial, 0});
  }
  return v;
}

int64_t pointCount(int64_t code) { return code == 16 ? 16000000 : 1000000; }

double accountedBytes(const Octree& t) {
  const double nodes = static_cast<double>(t.size());
  return 24.0 * static_cast<double>(t.point_count) + nodes * (1 + 8 + 4 + 4 + 4 + 4) +
         static_cast<double>(t.split_center.size() * 8 + t.chain.size());
}

// Args: distribution (0 uniform, 2 plummer), millions (1 or 16), threads, method (0 bucketed, 1 top-down, 2 compressed).
void BM_OctreeBuild(benchmark::State& state, Backend backend) {
  const int distribution = static_cast<int>(state.range(0));
  const int64_t n = pointCount(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  const int method = static_cast<int>(state.range(3));
  const std::vector<double>& xyz = cloud(distribution, n);
  OctreeOptions o;
  if (method == 1) o.method = OctreeMethod::kTopDown;
  if (method == 2) o.compressed = true;
  const Execution ex{backend, threads};
  double bytes = 0;
  uint64_t nodes = 0;
  for (auto _ : state) {
    Octree t = buildOctree(OctreePoints::of(xyz), o, ex);
    bytes = accountedBytes(t) / static_cast<double>(n);
    nodes = t.size();
    benchmark::DoNotOptimize(t.level.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["bytes_per_point"] = bytes;
  state.counters["nodes"] = static_cast<double>(nodes);
  static const char* methods[] = {"bucketed", "top-down", "compressed"};
  state.SetLabel(std::string(pointDistributionName(static_cast<PointDistribution>(distribution))) + " " +
                 methods[method]);
}

void buildArgs(benchmark::internal::Benchmark* b, bool cpu) {
  b->ArgNames({"dist", "M", "threads", "method"});
  for (int64_t millions : {1, 16})
    for (int dist : {0, 2})
      for (int method : {0, 1, 2})
        for (int t : cpu ? std::vector<int>{1, 2} : std::vector<int>{1}) {
          if (millions == 16 && method != 0) continue;
          b->Args({dist, millions, t, method});
        }
  b->Unit(benchmark::kMillisecond)->MinTime(0.3)->UseRealTime();
}

BENCHMARK_CAPTURE(BM_OctreeBuild, serial, Backend::kSerial)->Apply([](auto* b) { buildArgs(b, false); });
#if PROCGEN_HAVE_TBB
BENCHMARK_CAPTURE(BM_OctreeBuild, cpu, Backend::kCpu)->Apply([](auto* b) { buildArgs(b, true); });
#endif

// The floor of a bottom-up build: Morton keys and the primitives' radix sort.
void BM_OctreeKeysAndSort(benchmark::State& state, Backend backend) {
  const int64_t n = pointCount(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const std::vector<double>& xyz = cloud(0, n);
  const Execution ex{backend, threads};
  std::vector<uint64_t> keys(n);
  std::vector<uint32_t> order(n);
  primitives::RadixScratch scratch;
  const OctreeCube cube = octreeRootCube(OctreePoints::of(xyz), ex);
  for (auto _ : state) {
    octreeKeys(OctreePoints::of(xyz), cube, keys.data(), ex);
    for (int64_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
    primitives::radixSort(ex, keys.data(), order.data(), static_cast<uint64_t>(n), scratch);
    benchmark::DoNotOptimize(keys.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK_CAPTURE(BM_OctreeKeysAndSort, serial, Backend::kSerial)
    ->ArgNames({"M", "threads"})->Args({1, 1})->Args({16, 1})->Unit(benchmark::kMillisecond)->UseRealTime();
#if PROCGEN_HAVE_TBB
BENCHMARK_CAPTURE(BM_OctreeKeysAndSort, cpu, Backend::kCpu)
    ->ArgNames({"M", "threads"})->Args({1, 2})->Args({16, 2})->Unit(benchmark::kMillisecond)->UseRealTime();
#endif

/// The query tree over 10^6 uniform points, leaf size 16 unless given, with
/// or without its sorted copy of the points (OctreeOptions::sorted_points).
const Octree& queryTree(bool sorted_points = false, uint32_t leaf_size = 16) {
  static std::map<std::pair<bool, uint32_t>, Octree> trees;
  auto [it, fresh] = trees.try_emplace({sorted_points, leaf_size});
  if (fresh) {
    OctreeOptions o;
    o.sorted_points = sorted_points;
    o.leaf_size = leaf_size;
    it->second = buildOctree(OctreePoints::of(cloud(0, 1000000)), o, Execution{});
  }
  return it->second;
}

const std::vector<double>& queries(int64_t m) {
  static std::map<int64_t, std::vector<double>> cache;
  auto& v = cache[m];
  if (v.empty()) {
    v.resize(3 * static_cast<size_t>(m));
    generatePoints(PointDistribution::kUniform, static_cast<uint64_t>(m), 77, v.data(), Execution{});
  }
  return v;
}

// Args: threads. 10^6 uniform queries in the unit cube over 10^6 uniform points.
void BM_OctreeLocate(benchmark::State& state, Backend backend) {
  const Octree& t = queryTree();
  const int64_t m = 1000000;
  const std::vector<double>& q = queries(m);
  std::vector<uint32_t> out(m);
  const Execution ex{backend, static_cast<int>(state.range(0))};
  for (auto _ : state) {
    octreeLocate(t, q.data(), static_cast<uint64_t>(m), out.data(), ex);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * m);
}

// Args: threads, k, sorted (the tree keeps its sorted copy of the points),
// leaf (leaf size: 16 as the build target's tree; larger leaves make fewer
// nodes to descend for kNN). 10^5 queries.
void BM_OctreeKnn(benchmark::State& state, Backend backend) {
  const Octree& t = queryTree(state.range(2) != 0, static_cast<uint32_t>(state.range(3)));
  const int64_t m = 100000;
  const uint32_t k = static_cast<uint32_t>(state.range(1));
  const std::vector<double>& q = queries(m);
  std::vector<uint32_t> out(m * k);
  const Execution ex{backend, static_cast<int>(state.range(0))};
  for (auto _ : state) {
    octreeKnn(t, OctreePoints::of(cloud(0, 1000000)), q.data(), static_cast<uint64_t>(m), k, out.data(), nullptr, ex);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * m);
}

BENCHMARK_CAPTURE(BM_OctreeLocate, serial, Backend::kSerial)->ArgNames({"threads"})->Arg(1)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_OctreeKnn, serial, Backend::kSerial)
    ->ArgNames({"threads", "k", "sorted", "leaf"})
    ->Args({1, 8, 0, 16})
    ->Args({1, 8, 1, 16})
    ->Args({1, 8, 1, 32})
    ->Args({1, 8, 1, 64})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
#if PROCGEN_HAVE_TBB
BENCHMARK_CAPTURE(BM_OctreeLocate, cpu, Backend::kCpu)->ArgNames({"threads"})->Arg(2)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_OctreeKnn, cpu, Backend::kCpu)
    ->ArgNames({"threads", "k", "sorted", "leaf"})
    ->Args({2, 8, 0, 16})
    ->Args({2, 8, 1, 16})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
#endif

}  // namespace

#if PROCGEN_HAVE_PCL
// PCL's octree, the labelled peer (cmake -DPROCGEN_BENCH_PCL=ON with
// Debian's libpcl-dev; benchmark only). PCL subdivides to a fixed voxel
// size instead of a leaf capacity: resolution side/64 gives the level-6
// cells that hold the 10^6-point uniform cloud's leaves at leaf size 16.
// Points are converted to pcl::PointXYZ (float) outside the timing.
#include <pcl/common/common.h>  // getMinMax3D
#include <pcl/octree/octree_search.h>
#include <pcl/point_cloud.h>
#include <pcl/point_types.h>

namespace {  // the same unnamed namespace as above: cloud(), queries(), pointCount()

pcl::PointCloud<pcl::PointXYZ>::Ptr pclCloud(int distribution, int64_t n) {
  const std::vector<double>& xyz = cloud(distribution, n);
  pcl::PointCloud<pcl::PointXYZ>::Ptr c(new pcl::PointCloud<pcl::PointXYZ>);
  c->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    (*c)[i] = pcl::PointXYZ(static_cast<float>(xyz[3 * i]), static_cast<float>(xyz[3 * i + 1]),
                            static_cast<float>(xyz[3 * i + 2]));
  return c;
}

double pclResolution(const pcl::PointCloud<pcl::PointXYZ>& c) {
  pcl::PointXYZ lo, hi;
  pcl::getMinMax3D(c, lo, hi);
  return std::max({hi.x - lo.x, hi.y - lo.y, hi.z - lo.z}) / 64.0;
}

// Args: distribution (0 uniform, 2 plummer), millions (1 or 16). One thread (PCL's octree is serial).
void BM_PclOctreeBuild(benchmark::State& state) {
  const auto cloud = pclCloud(static_cast<int>(state.range(0)), pointCount(state.range(1)));
  const double resolution = pclResolution(*cloud);
  for (auto _ : state) {
    pcl::octree::OctreePointCloudSearch<pcl::PointXYZ> tree(resolution);
    tree.setInputCloud(cloud);
    tree.addPointsFromInputCloud();
    benchmark::DoNotOptimize(tree.getLeafCount());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(cloud->size()));
  state.SetLabel("PCL 1.x OctreePointCloudSearch, resolution side/64");
}
BENCHMARK(BM_PclOctreeBuild)
    ->ArgNames({"dist", "M"})
    ->Args({0, 1})
    ->Args({2, 1})
    ->Args({0, 16})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// 8-NN of 10^5 uniform queries on 10^6 uniform points, as BM_OctreeKnn.
void BM_PclOctreeKnn(benchmark::State& state) {
  const auto cloud = pclCloud(0, 1000000);
  pcl::octree::OctreePointCloudSearch<pcl::PointXYZ> tree(pclResolution(*cloud));
  tree.setInputCloud(cloud);
  tree.addPointsFromInputCloud();
  const std::vector<double>& q = queries(100000);
  std::vector<int> idx;
  std::vector<float> d2;
  for (auto _ : state) {
    for (int64_t i = 0; i < 100000; ++i) {
      const pcl::PointXYZ p(static_cast<float>(q[3 * i]), static_cast<float>(q[3 * i + 1]),
                            static_cast<float>(q[3 * i + 2]));
      tree.nearestKSearch(p, 8, idx, d2);
      benchmark::DoNotOptimize(idx.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * 100000);
}
BENCHMARK(BM_PclOctreeKnn)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
#endif  // PROCGEN_HAVE_PCL
