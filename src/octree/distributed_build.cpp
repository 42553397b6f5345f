// The octree over the ranks of an MPI job (include/procgen/octree.hpp,
// "Distributed build"; docs/scaling.md "Octrees").
//
// Paper: Keller, Cavelan, Cabezón, Mayer, Ciorba, "Cornerstone: Octree
// Construction Algorithms for Scalable Particle Simulations" (PASC 2023):
// §3 the octree as a sorted array of leaf keys, ranks owning contiguous key
// ranges that follow leaf borders; §4 the global tree from per-rank counts
// (here: allreduced counts of the few cells that cross the borders) and the
// exchange of the particles to the owners of their keys. The tree itself is
// the bucketed bottom-up tree of the seed (shared/seeds/004, §4 generalized,
// build_impl.hpp), identical to one process's:
//
//   1. the root cube from allreduced bounds; keys of the own block; a local
//      stable radix sort of (key, global index);
//   2. splitters: regular samples of every rank's sorted keys (an allreduce of
//      a row per rank), the sorted samples at q·S/R; each moved to the first
//      key of the leaf containing it, found from the global counts of its 22
//      ancestor cells (one allreduce for all splitters) — the leaf rule
//      (internal iff more than leaf_size points, above max_depth) needs only
//      those counts, so no leaf and no run of equal keys crosses a border;
//   3. the records (key, index, x y z) exchanged to the owners (allToAll),
//      re-sorted by key (stable: the senders' blocks come in index order);
//   4. each rank finds the internal cells wholly inside its range by the
//      window rule on its slice; the cells crossing a border are ancestors of
//      the splitters, known to every rank from step 2;
//   5. rank 0 gathers the sorted keys, indices (and coordinates when an
//      output needs them) and the internal cells, and writes the level-order
//      nodes as the one-process build does (writeBucketedNodes).
// Queries are routed (octreeKnnDistributed etc.): each rank answers on a tree
// of its own points those queries whose ball or box reaches its points' box.
#include "octree/distributed_build.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>

#include "octree/build_impl.hpp"
#include "octree/keys.h"
#include "octree/points.h"
#include "octree/stages.hpp"
#include "primitives/primitives.hpp"
#include "procgen/distributed.hpp"

namespace procgen {
namespace octree_impl {

void countAncestorCells(const uint64_t* K, uint64_t n, uint64_t key, uint64_t* in, uint64_t* below) {
  for (int l = 0; l < kCellLevels; ++l) {
    const uint64_t prefix = pgOctreePrefix(key, l);
    const uint64_t b = firstAtLeast(K, 0, n, pgOctreeCellBegin(l, prefix));
    const uint64_t e = firstAtLeast(K, b, n, pgOctreeCellEnd(l, prefix));
    in[l] = e - b;
    below[l] = b;
  }
}

std::vector<InternalCell> rangeInternalCells(const uint64_t* K, uint64_t n, uint32_t leaf_size, int depth_limit,
                                             uint64_t range_begin, uint64_t range_end, uint64_t first_position) {
  std::vector<InternalCell> cells;
  int lo = 0, hi = -1;
  for (uint64_t i = 0; i < n; ++i) {
    if (!bucketedOwnedLevels(K, n, leaf_size, depth_limit, i, lo, hi)) continue;
    for (int l = lo; l <= hi; ++l) {
      const uint64_t prefix = pgOctreePrefix(K[i], l);
      if (pgOctreeCellBegin(l, prefix) < range_begin || pgOctreeCellEnd(l, prefix) > range_end) continue;
      cells.push_back({prefix, static_cast<uint32_t>(first_position + i), static_cast<uint32_t>(l)});
    }
  }
  return cells;
}

void crossingCells(uint64_t tentative, int leaf_level, uint64_t aligned, const uint64_t* below,
                   std::vector<InternalCell>& out) {
  for (int l = 0; l < leaf_level; ++l) {
    const uint64_t prefix = pgOctreePrefix(tentative, l);
    if (pgOctreeCellBegin(l, prefix) < aligned)
      out.push_back({prefix, static_cast<uint32_t>(below[l]), static_cast<uint32_t>(l)});
  }
}

}  // namespace octree_impl

using namespace octree_impl;

namespace {

constexpr uint32_t kSamplesPerRank = 64;

template <typename Array>
std::span<const uint8_t> bytesOf(const Array& v) {
  return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(v[0])};
}

template <typename T>
std::vector<T> valuesOf(const std::vector<uint8_t>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

/// A failure every rank detects at the same point: `reporter` prints it, the
/// others stop quietly (no rank calls distributed::fail, which would wait
/// for an agreement the others never join).
[[noreturn]] void failEverywhere(const std::string& message, bool reporter) {
  if (!distributed::active()) throw Error(message);
  throw distributed::PeerFailure(ExitCode::kBadInput, reporter ? message : "");
}

/// The root cube of all ranks' points (octree.hpp octreeRootCube, the same
/// messages): bounds and the first non-finite point by allreduce.
OctreeCube globalRootCube(const OctreePoints& points, uint64_t first, uint64_t total) {
  if (total == 0) failEverywhere("octree: no points", distributed::isRoot());
  if (total > kOctreeMaxPoints)
    failEverywhere("octree: " + std::to_string(total) + " points, more than the " +
                       std::to_string(kOctreeMaxPoints) + " an octree indexes",
                   distributed::isRoot());
  double bounds[6];  // lo x y z, −hi x y z: one min-reduction
  std::fill(bounds, bounds + 6, std::numeric_limits<double>::infinity());
  uint64_t bad[1] = {total};
  for (uint64_t i = 0; i < points.count; ++i)
    for (int a = 0; a < 3; ++a) {
      const double v = points.coord(i, a);
      if (!std::isfinite(v)) {
        bad[0] = std::min(bad[0], first + i);
        continue;
      }
      bounds[a] = std::min(bounds[a], v);
      bounds[3 + a] = std::min(bounds[3 + a], -v);
    }
  distributed::allReduce(std::span<uint64_t>(bad, 1), distributed::ReduceOp::kMin);
  if (bad[0] < total) {
    const bool mine = bad[0] >= first && bad[0] < first + points.count;
    std::string message;
    for (int a = 0; a < 3 && mine && message.empty(); ++a) {
      const double v = points.coord(bad[0] - first, a);
      if (!std::isfinite(v))
        message = "point " + std::to_string(bad[0]) + ": coordinate " + "xyz"[a] + " is " +
                  (std::isnan(v) ? "NaN" : "infinite");
    }
    failEverywhere(message, mine);
  }
  distributed::allReduce(std::span<double>(bounds, 6), distributed::ReduceOp::kMin);
  const double hi[3] = {-bounds[3], -bounds[4], -bounds[5]};
  const OctreeCube cube = cubeFromBounds(bounds, hi);
  if (!std::isfinite(cube.side))
    failEverywhere("octree: the points' extent overflows a double (coordinates too far apart)", distributed::isRoot());
  return cube;
}

/// The record a rank sends to the owner of a point's key: key (8 bytes),
/// global index (4, then 4 of padding) and, when the owner needs them
/// (queries, sorted coordinates, previews), x y z (24).
constexpr uint64_t kRecordBase = 16, kRecordWithXyz = 40;

}  // namespace

std::vector<uint64_t> octreeSampleKeys(const uint64_t* sorted_keys, uint64_t n, uint32_t count) {
  std::vector<uint64_t> samples;
  if (n == 0) return samples;
  for (uint32_t j = 0; j < count; ++j) samples.push_back(sorted_keys[(2 * uint64_t(j) + 1) * n / (2 * uint64_t(count))]);
  return samples;
}

std::vector<uint64_t> octreeSampleSplitters(std::vector<uint64_t> samples, int ranks) {
  std::sort(samples.begin(), samples.end());
  std::vector<uint64_t> splitters(size_t(std::max(ranks - 1, 0)), 0);
  if (samples.empty()) return splitters;
  for (int q = 1; q < ranks; ++q) splitters[size_t(q - 1)] = samples[uint64_t(q) * samples.size() / uint64_t(ranks)];
  return splitters;
}

int octreeSplitterLeafLevel(const uint64_t* cell_counts, uint32_t leaf_size, int depth_limit) {
  int l = 0;
  while (l < kCellLevels - 1 && l < depth_limit && cell_counts[l] > leaf_size) ++l;
  return l;
}

uint64_t octreeAlignSplitter(uint64_t splitter, int leaf_level) {
  return pgOctreeCellBegin(leaf_level, pgOctreePrefix(splitter, leaf_level));
}

void generatePointRange(PointDistribution distribution, uint64_t first, uint64_t count, uint64_t seed, double* xyz) {
  for (uint64_t i = 0; i < count; ++i)
    pgPointsGenerate(static_cast<pg_i32>(distribution), seed, first + i, xyz + 3 * i);
}

DistributedOctree buildOctreeDistributed(const OctreePoints& points, uint64_t first, uint64_t total,
                                         const OctreeOptions& options, const DistributedOctreeOptions& wanted,
                                         const Execution& execution) {
  if (options.method != OctreeMethod::kBottomUp || options.compressed || options.split != OctreeSplit::kCube)
    throw std::invalid_argument("buildOctreeDistributed: builds the bucketed bottom-up cube tree only");
  if (options.leaf_size == 0 || options.max_depth < 0 || options.max_depth > kOctreeMaxLevel)
    throw std::invalid_argument("buildOctreeDistributed: leaf_size >= 1, max_depth in 0..21");
  const int R = distributed::size(), me = distributed::rank();
  const uint64_t n = points.count;
  DistributedOctree d;
  d.cube = globalRootCube(points, first, total);
  const int D = d.cube.side > 0 ? options.max_depth : 0;
  const uint32_t s = options.leaf_size;

  // 1. Keys of the own block, sorted with their global indices (stable, so
  //    equal keys stay in index order).
  requireMemory("octree keys", n * 48, options.memory_budget);
  // (OctreeArray: no zero-filling, large pages — as the one-process build's arrays.)
  OctreeArray<uint64_t> keys(n);
  OctreeArray<uint32_t> index(n);
  if (n) octreeKeys(points, d.cube, keys.data(), execution);
  std::iota(index.begin(), index.end(), static_cast<uint32_t>(first));
  primitives::RadixScratch scratch;
  primitives::radixSort(execution, keys.data(), index.data(), n, scratch);

  // 2. Splitters: samples of every rank (a row each; the max key marks none).
  std::vector<uint64_t> all_samples(size_t(R) * kSamplesPerRank, UINT64_MAX);
  const std::vector<uint64_t> own_samples = octreeSampleKeys(keys.data(), n, kSamplesPerRank);
  std::copy(own_samples.begin(), own_samples.end(), all_samples.begin() + int64_t(me) * kSamplesPerRank);
  distributed::allReduce(std::span<uint64_t>(all_samples), distributed::ReduceOp::kMin);
  all_samples.erase(std::remove(all_samples.begin(), all_samples.end(), UINT64_MAX), all_samples.end());
  const std::vector<uint64_t> tentative = octreeSampleSplitters(std::move(all_samples), R);
  // The ancestor cells of every tentative splitter: counts inside and before, summed.
  std::vector<uint64_t> counts(tentative.size() * 2 * kCellLevels);
  for (size_t q = 0; q < tentative.size(); ++q)
    countAncestorCells(keys.data(), n, tentative[q], &counts[q * 2 * kCellLevels], &counts[(q * 2 + 1) * kCellLevels]);
  distributed::allReduce(std::span<uint64_t>(counts), distributed::ReduceOp::kSum);
  d.splitters.assign(size_t(R) + 1, 0);
  d.splitters[size_t(R)] = kKeyEnd;
  std::vector<InternalCell> crossing;
  for (size_t q = 0; q < tentative.size(); ++q) {
    const int leaf_level = octreeSplitterLeafLevel(&counts[q * 2 * kCellLevels], s, D);
    d.splitters[q + 1] = octreeAlignSplitter(tentative[q], leaf_level);
    crossingCells(tentative[q], leaf_level, d.splitters[q + 1], &counts[(q * 2 + 1) * kCellLevels], crossing);
  }
  std::sort(crossing.begin(), crossing.end());
  crossing.erase(std::unique(crossing.begin(), crossing.end()), crossing.end());

  // 3. The exchange: records in key order, cut at the splitters.
  std::vector<uint64_t> send_offsets(size_t(R) + 1, 0);
  for (int r = 1; r < R; ++r) send_offsets[size_t(r)] = firstAtLeast(keys.data(), 0, n, d.splitters[size_t(r)]);
  send_offsets[size_t(R)] = n;
  const bool with_xyz = options.sorted_points || wanted.gather_points;
  const uint64_t stride = with_xyz || wanted.local_tree ? kRecordWithXyz : kRecordBase;
  requireMemory("octree point records", n * stride, options.memory_budget);
  OctreeArray<uint8_t> records(n * stride);
  for (uint64_t j = 0; j < n; ++j) {
    uint8_t* rec = records.data() + j * stride;
    const uint32_t pad = 0;
    std::memcpy(rec, &keys[j], 8);
    std::memcpy(rec + 8, &index[j], 4);
    std::memcpy(rec + 12, &pad, 4);
    for (int a = 0; stride == kRecordWithXyz && a < 3; ++a) {
      const double v = points.coord(index[j] - first, a);
      std::memcpy(rec + 16 + 8 * a, &v, 8);
    }
  }
  for (uint64_t& o : send_offsets) o *= stride;
  std::vector<uint64_t> received_offsets;
  std::vector<uint8_t> received = distributed::allToAll(bytesOf(records), send_offsets, received_offsets);
  records = {};
  keys = {};
  index = {};
  const uint64_t mine = received.size() / stride;
  requireMemory("octree received points", mine * 64, options.memory_budget);
  OctreeArray<uint64_t> rkeys(mine);
  OctreeArray<uint32_t> perm(mine);
  for (uint64_t j = 0; j < mine; ++j) {
    std::memcpy(&rkeys[j], received.data() + j * stride, sizeof(uint64_t));
    perm[j] = static_cast<uint32_t>(j);
  }
  // One sorted run per sender; with a single non-empty run (one rank, or
  // blocks already in key order) it is sorted already.
  int runs = 0;
  for (int r = 0; r < R; ++r) runs += received_offsets[size_t(r) + 1] > received_offsets[size_t(r)] ? 1 : 0;
  if (runs > 1) primitives::radixSort(execution, rkeys.data(), perm.data(), mine, scratch);
  OctreeArray<uint32_t> rindex(mine);
  OctreeArray<double> rxyz(stride == kRecordWithXyz ? 3 * mine : 0);
  for (uint64_t j = 0; j < mine; ++j) {
    const uint8_t* rec = received.data() + uint64_t(perm[j]) * stride;
    std::memcpy(&rindex[j], rec + 8, 4);
    if (stride == kRecordWithXyz) std::memcpy(&rxyz[3 * j], rec + 16, 24);
  }
  received = {};

  // 4. Global positions of the own slice, and the internal cells inside the range.
  std::vector<uint64_t> slice_sizes(size_t(R), 0);
  slice_sizes[size_t(me)] = mine;
  distributed::allReduce(std::span<uint64_t>(slice_sizes), distributed::ReduceOp::kSum);
  const uint64_t position = std::accumulate(slice_sizes.begin(), slice_sizes.begin() + me, uint64_t{0});
  const std::vector<InternalCell> own_cells = rangeInternalCells(
      rkeys.data(), mine, s, D, d.splitters[size_t(me)], d.splitters[size_t(me) + 1], position);

  // 5. Rank 0 assembles the tree.
  std::vector<uint8_t> all_cells = distributed::gather(bytesOf(own_cells), 0);
  std::vector<uint8_t> all_keys = distributed::gather(bytesOf(rkeys), 0);
  std::vector<uint8_t> all_index = distributed::gather(bytesOf(rindex), 0);
  std::vector<uint8_t> all_xyz;
  if (with_xyz) all_xyz = distributed::gather(bytesOf(rxyz), 0);
  if (distributed::isRoot()) {
    Octree& t = d.tree;
    t.options = options;
    t.cube = d.cube;
    t.point_count = total;
    t.layout = OctreeLayout::kLevelOrder;
    t.keys.resize(total);
    t.order.resize(total);
    std::memcpy(t.keys.data(), all_keys.data(), total * sizeof(uint64_t));
    std::memcpy(t.order.data(), all_index.data(), total * sizeof(uint32_t));
    all_keys = {};
    all_index = {};
    std::vector<InternalCell> cells = valuesOf<InternalCell>(all_cells);
    cells.insert(cells.end(), crossing.begin(), crossing.end());
    std::sort(cells.begin(), cells.end());
    std::vector<uint64_t> level_start(kCellLevels + 1, 0);
    OctreeArray<uint64_t> ipref(cells.size());
    OctreeArray<uint32_t> iowner(cells.size());
    for (size_t c = 0; c < cells.size(); ++c) {
      ipref[c] = cells[c].prefix;
      iowner[c] = cells[c].first;
      ++level_start[cells[c].level + 1];
    }
    for (int l = 0; l < kCellLevels; ++l) level_start[size_t(l) + 1] += level_start[size_t(l)];
    serial::writeBucketedNodes(t, D, s, ipref, iowner, level_start, options.memory_budget);
    if (options.sorted_points) {
      t.xyz.resize(3 * total);
      std::memcpy(t.xyz.data(), all_xyz.data(), 3 * total * sizeof(double));
    }
    if (wanted.gather_points) {
      d.points.resize(3 * total);
      for (uint64_t j = 0; j < total; ++j)
        for (int a = 0; a < 3; ++a) d.points[3 * uint64_t(t.order[j]) + a] = *reinterpret_cast<const double*>(
            all_xyz.data() + (3 * j + a) * sizeof(double));
    }
  }

  // For the queries: the own points by global index (so that a local index
  // order is the global one: ties in the queries go to the smaller index as
  // in one process), their box on every rank, and their tree.
  if (!wanted.local_tree) return d;
  for (uint64_t j = 0; j < mine; ++j) perm[j] = static_cast<uint32_t>(j);
  primitives::radixSort(execution, rindex.data(), perm.data(), mine, scratch);
  d.local_index = std::move(rindex);
  d.local_xyz.resize(3 * mine);
  d.rank_bounds.assign(size_t(R) * 6, std::numeric_limits<double>::infinity());
  double* box = &d.rank_bounds[size_t(me) * 6];  // lo, −hi (min-reduced)
  for (uint64_t j = 0; j < mine; ++j)
    for (int a = 0; a < 3; ++a) {
      const double v = rxyz[3 * uint64_t(perm[j]) + a];
      d.local_xyz[3 * j + a] = v;
      box[a] = std::min(box[a], v);
      box[3 + a] = std::min(box[3 + a], -v);
    }
  distributed::allReduce(std::span<double>(d.rank_bounds), distributed::ReduceOp::kMin);
  for (int r = 0; r < R; ++r)
    for (int a = 3; a < 6; ++a) d.rank_bounds[size_t(r) * 6 + a] = -d.rank_bounds[size_t(r) * 6 + a];
  if (mine) {
    OctreeOptions local = options;
    local.sorted_points = true;
    d.local_tree = buildOctree(OctreePoints::of(d.local_xyz.data(), mine), local, execution);
  }
  return d;
}

// ---------------------------------------------------------------------------
// Routed queries
// ---------------------------------------------------------------------------

namespace {

/// One partial answer: query, global point index, squared distance.
struct Answer {
  uint64_t query;
  uint32_t index, pad;
  double d2;
  bool operator<(const Answer& o) const {
    if (query != o.query) return query < o.query;
    if (d2 != o.d2) return d2 < o.d2;
    return index < o.index;
  }
};

/// Squared distance from q to the box lo..hi, in the queries' arithmetic
/// (query_impl.hpp dist2To): never more than the distance computed to any
/// point inside, since rounding is monotone — so it prunes exactly.
double boxDist2(const double* box, const double* q) {
  double d[3];
  for (int a = 0; a < 3; ++a) d[a] = q[a] < box[a] ? box[a] - q[a] : (q[a] > box[3 + a] ? q[a] - box[3 + a] : 0.0);
  return d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
}

bool hasPoints(const DistributedOctree& t) { return !t.local_index.empty(); }

OctreePoints localPoints(const DistributedOctree& t) {
  return OctreePoints::of(t.local_xyz.data(), t.local_index.size());
}

double localDist2(const DistributedOctree& t, uint32_t local, const double* q) {
  const double* p = &t.local_xyz[3 * uint64_t(local)];
  const double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
  return dx * dx + dy * dy + dz * dz;
}

/// Rank 0: every rank's answers, sorted by (query, distance², index) — by
/// a counting sort on the query, then each query's few answers.
std::vector<Answer> gatherAnswers(const std::vector<Answer>& answers, uint64_t m) {
  const std::vector<Answer> gathered = valuesOf<Answer>(distributed::gather(bytesOf(answers), 0));
  std::vector<uint64_t> start(m + 1, 0);
  for (const Answer& a : gathered) ++start[a.query + 1];
  for (uint64_t q = 0; q < m; ++q) start[q + 1] += start[q];
  std::vector<Answer> all(gathered.size());
  std::vector<uint64_t> at(start.begin(), start.end() - 1);
  for (const Answer& a : gathered) all[at[a.query]++] = a;
  for (uint64_t q = 0; q < m; ++q) std::sort(all.begin() + int64_t(start[q]), all.begin() + int64_t(start[q + 1]));
  return all;
}

/// The queries (of `which`) this rank answers, as a packed array of points.
std::vector<double> pick(const double* xyz, uint32_t stride, const std::vector<uint64_t>& which) {
  std::vector<double> out(which.size() * stride);
  for (size_t i = 0; i < which.size(); ++i) std::copy_n(xyz + which[i] * stride, stride, &out[i * stride]);
  return out;
}

OctreeQueryResult toResult(const std::vector<Answer>& all, uint64_t m) {
  OctreeQueryResult r;
  r.offsets.assign(m + 1, 0);
  for (const Answer& a : all) ++r.offsets[a.query + 1];
  for (uint64_t q = 0; q < m; ++q) r.offsets[q + 1] += r.offsets[q];
  r.indices.reserve(all.size());
  for (const Answer& a : all) r.indices.push_back(a.index);
  return r;
}

}  // namespace

void octreeKnnDistributed(const DistributedOctree& t, const double* xyz, uint64_t m, uint32_t k, uint32_t* out,
                          const Execution& execution) {
  const int R = distributed::size(), me = distributed::rank();
  const double* own_box = &t.rank_bounds[size_t(me) * 6];
  auto finite = [&](uint64_t q) {
    return std::isfinite(xyz[3 * q]) && std::isfinite(xyz[3 * q + 1]) && std::isfinite(xyz[3 * q + 2]);
  };
  auto owner = [&](uint64_t q) {
    const uint64_t key = pgOctreeKey(xyz[3 * q], xyz[3 * q + 1], xyz[3 * q + 2], t.cube.min[0], t.cube.min[1],
                                     t.cube.min[2], t.cube.side);
    const auto it = std::upper_bound(t.splitters.begin() + 1, t.splitters.begin() + R, key);
    return static_cast<int>(it - (t.splitters.begin() + 1));
  };
  std::vector<Answer> answers;
  // Phase 1: the owner of each query's key answers it; its k-th distance
  // (infinite with fewer than k points) bounds everyone else's search.
  std::vector<uint64_t> owned;
  for (uint64_t q = 0; q < m; ++q)
    if (finite(q) && owner(q) == me) owned.push_back(q);
  if (!owned.empty() && hasPoints(t)) {
    const std::vector<double> q = pick(xyz, 3, owned);
    std::vector<uint32_t> found(owned.size() * k);
    std::vector<double> dist2(owned.size() * k);
    octreeKnn(t.local_tree, localPoints(t), q.data(), owned.size(), k, found.data(), dist2.data(), execution);
    for (size_t i = 0; i < owned.size(); ++i)
      for (uint32_t j = 0; j < k && found[i * k + j] != kOctreeNone; ++j)
        answers.push_back({owned[i], t.local_index[found[i * k + j]], 0, dist2[i * k + j]});
  }
  std::vector<double> bound(m, std::numeric_limits<double>::infinity());
  {
    std::vector<uint32_t> got(m, 0);  // the owner's answers per query, nearest first
    for (const Answer& a : answers)
      if (++got[a.query] == k) bound[a.query] = a.d2;
  }
  distributed::allReduce(std::span<double>(bound), distributed::ReduceOp::kMin);
  // Phase 2: the other ranks whose points' box is within the bound, by a
  // search bounded from the start (a radius query of the bound: a kNN
  // descent from an empty region of this rank would wander far before its
  // own bound shrinks), at most k of their points within the bound each.
  // Queries with an infinite bound (their owner has fewer than k points)
  // take a plain kNN.
  std::vector<uint64_t> bounded, unbounded;
  for (uint64_t q = 0; q < m; ++q)
    if (hasPoints(t) && finite(q) && owner(q) != me && boxDist2(own_box, xyz + 3 * q) <= bound[q])
      (std::isfinite(bound[q]) ? bounded : unbounded).push_back(q);
  for (const uint64_t q : bounded) {
    // The radius whose square (as the radius query computes it) is at least the bound.
    const double r = std::nextafter(std::sqrt(bound[q]), std::numeric_limits<double>::infinity());
    const OctreeQueryResult near = octreeRadius(t.local_tree, localPoints(t), xyz + 3 * q, 1, r, execution);
    for (uint64_t j = 0; j < near.indices.size() && j < k; ++j) {
      const double d2 = localDist2(t, near.indices[j], xyz + 3 * q);
      if (d2 > bound[q]) break;
      answers.push_back({q, t.local_index[near.indices[j]], 0, d2});
    }
  }
  if (!unbounded.empty()) {
    const std::vector<double> q = pick(xyz, 3, unbounded);
    std::vector<uint32_t> found(unbounded.size() * k);
    std::vector<double> dist2(unbounded.size() * k);
    octreeKnn(t.local_tree, localPoints(t), q.data(), unbounded.size(), k, found.data(), dist2.data(), execution);
    for (size_t i = 0; i < unbounded.size(); ++i)
      for (uint32_t j = 0; j < k && found[i * k + j] != kOctreeNone; ++j)
        answers.push_back({unbounded[i], t.local_index[found[i * k + j]], 0, dist2[i * k + j]});
  }
  const std::vector<Answer> all = gatherAnswers(answers, m);
  if (!distributed::isRoot()) return;
  std::fill(out, out + m * k, kOctreeNone);
  uint64_t q = UINT64_MAX, taken = 0;
  for (const Answer& a : all) {
    if (a.query != q) q = a.query, taken = 0;
    if (taken < k) out[q * k + taken++] = a.index;
  }
}

OctreeQueryResult octreeRadiusDistributed(const DistributedOctree& t, const double* xyz, uint64_t m, double radius,
                                          const Execution& execution) {
  const double* own_box = &t.rank_bounds[size_t(distributed::rank()) * 6];
  const double r2 = radius * radius;
  std::vector<uint64_t> which;
  if (hasPoints(t) && radius >= 0)
    for (uint64_t q = 0; q < m; ++q)
      if (boxDist2(own_box, xyz + 3 * q) <= r2) which.push_back(q);
  std::vector<Answer> answers;
  if (!which.empty()) {
    const std::vector<double> q = pick(xyz, 3, which);
    const OctreeQueryResult local = octreeRadius(t.local_tree, localPoints(t), q.data(), which.size(), radius, execution);
    for (size_t i = 0; i < which.size(); ++i)
      for (uint64_t j = local.offsets[i]; j < local.offsets[i + 1]; ++j)
        answers.push_back(
            {which[i], t.local_index[local.indices[j]], 0, localDist2(t, local.indices[j], &q[3 * i])});
  }
  const std::vector<Answer> all = gatherAnswers(answers, m);
  return distributed::isRoot() ? toResult(all, m) : OctreeQueryResult{};
}

OctreeQueryResult octreeBoxDistributed(const DistributedOctree& t, const double* boxes, uint64_t m,
                                       const Execution& execution) {
  const double* own_box = &t.rank_bounds[size_t(distributed::rank()) * 6];
  std::vector<uint64_t> which;
  if (hasPoints(t))
    for (uint64_t q = 0; q < m; ++q) {
      bool meets = true;
      for (int a = 0; a < 3; ++a) meets = meets && boxes[6 * q + a] <= own_box[3 + a] && own_box[a] <= boxes[6 * q + 3 + a];
      if (meets) which.push_back(q);
    }
  std::vector<Answer> answers;
  if (!which.empty()) {
    const std::vector<double> b = pick(boxes, 6, which);
    const OctreeQueryResult local = octreeBox(t.local_tree, localPoints(t), b.data(), which.size(), execution);
    for (size_t i = 0; i < which.size(); ++i)
      for (uint64_t j = local.offsets[i]; j < local.offsets[i + 1]; ++j)
        answers.push_back({which[i], t.local_index[local.indices[j]], 0, 0.0});
  }
  const std::vector<Answer> all = gatherAnswers(answers, m);
  return distributed::isRoot() ? toResult(all, m) : OctreeQueryResult{};
}

}  // namespace procgen
