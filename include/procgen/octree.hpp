// procgen octree: octrees over point sets, built bottom-up from Morton keys
// and top-down by partitioning, and the queries the seed answers on them.
//
// Paper: Ajmera, Goradia, Chandran, Aluru, "Fast, parallel, GPU-based
// construction of space filling curves and octrees"
// (shared/seeds/004_ce32dc12e32b896e.txt): §3 Morton keys and the compressed
// octree, §4 the parallel bottom-up build (leaves, LCAs of adjacent leaves,
// post-order, parent links, chain nodes), §5 the parallel top-down build
// (level-by-level partitioning, next-level offsets by prefix sums), and the
// queries listed at the end of §4. docs/octree.md describes the layouts.
//
// Conventions shared by every function here:
//  - points are caller-owned flat arrays x0 y0 z0 x1 y1 z1 … of float or
//    double (OctreePoints); at most kOctreeMaxPoints points (32-bit indices);
//  - the tree is returned by value (std::vector members); query outputs are
//    caller-owned where their size is known (locate, kNN) and returned CSR
//    arrays where it is not (radius, box);
//  - every result is bit-exact and identical on every backend and thread
//    count: keys are integers from double arithmetic without fast-math, the
//    sort is stable and every parallel stage writes at offsets given by
//    ordered prefix sums;
//  - functions are thread-safe for distinct outputs (no global state);
//  - Backend::kCpu throws BackendUnavailableError when the build has no
//    oneTBB; Backend::kOpenCL runs every function here on the device
//    (src/octree/opencl/, docs/octree.md "opencl") with the same results,
//    and throws BackendUnavailableError when the build has no OpenCL, there
//    is no device, or the device has no double precision (cl_khr_fp64,
//    named in the message); Gaussian and Plummer points are drawn on the
//    host there (generatePoints).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "procgen/backend.hpp"
#include "procgen/memory.hpp"

namespace procgen {

/// Levels below the root: keys have 21 bits per axis, leaves are at most at level 21.
inline constexpr int kOctreeMaxLevel = 21;
/// "No node / no point" in index outputs.
inline constexpr uint32_t kOctreeNone = 0xffffffffu;
/// Largest point count (indices are 32-bit; kOctreeNone is reserved).
inline constexpr uint64_t kOctreeMaxPoints = 0xfffffffeu;

/// A caller's points: exactly one of xyz32 / xyz64 is non-null and holds
/// 3 × count values, x y z per point. The view does not own the array.
struct OctreePoints {
  const float* xyz32 = nullptr;
  const double* xyz64 = nullptr;
  uint64_t count = 0;

  static OctreePoints of(const float* xyz, uint64_t n) { return {xyz, nullptr, n}; }
  static OctreePoints of(const double* xyz, uint64_t n) { return {nullptr, xyz, n}; }
  static OctreePoints of(const std::vector<double>& xyz) { return {nullptr, xyz.data(), xyz.size() / 3}; }
  /// Coordinate `axis` (0 x, 1 y, 2 z) of point i, widened to double.
  double coord(uint64_t i, int axis) const {
    return xyz64 ? xyz64[3 * i + axis] : static_cast<double>(xyz32[3 * i + axis]);
  }
};

/// The root cube [min, min + side)^3: min = the points' bounding-box minimum,
/// side = its largest extent (0 when all points are equal).
struct OctreeCube {
  double min[3] = {0, 0, 0};
  double side = 0;
};

/// Computes the root cube. Throws Error (ExitCode::kBadInput) when there are
/// no points, more than kOctreeMaxPoints, or a coordinate is NaN or infinite
/// (the message names the first such point: "point 17: coordinate y is NaN").
/// O(n); min/max only, so bit-exact on every backend.
OctreeCube octreeRootCube(const OctreePoints& points, const Execution& execution);

/// keys[i] = the 63-bit Morton key of point i in `cube` (src/octree/keys.h:
/// q = min(⌊(p − min)/side · 2^21⌋, 2^21 − 1) per axis in double precision,
/// bit 3i = x bit i, 3i+1 = y, 3i+2 = z; all keys 0 when side = 0).
/// Precondition: keys holds points.count elements. O(n).
void octreeKeys(const OctreePoints& points, const OctreeCube& cube, uint64_t* keys, const Execution& execution);

enum class OctreeMethod {
  kBottomUp,  ///< seed §4: Morton keys, radix sort, nodes from adjacent keys
  kTopDown,   ///< seed §5: level-by-level partitioning of the points
};

enum class OctreeSplit {
  kCube,  ///< split at the cell's mid-planes (the quantized key's bits)
  kData,  ///< top-down only: split at the centre of the node's point bounds (docs/octree.md)
};

enum class OctreeLayout {
  /// Breadth-first: root first, then level 1, …; within a level in Morton
  /// (cube) or path (data) order; the 8 children of an internal node are
  /// consecutive, first_child + digit. Bucketed and top-down trees.
  kLevelOrder,
  /// The seed's §4 post-order (children before parents, Morton order among
  /// disjoint cells); children are not consecutive, parent links are given.
  /// Compressed and full trees.
  kPostOrder,
};

struct OctreeOptions {
  OctreeMethod method = OctreeMethod::kBottomUp;
  OctreeSplit split = OctreeSplit::kCube;
  /// Bucketed and top-down: a node is split iff it holds more than leaf_size
  /// points and its level is below max_depth. >= 1.
  uint32_t leaf_size = 16;
  /// Deepest level, 0..21. When the root cube has side 0 (all points equal,
  /// one point) every method builds the one-leaf tree (as if max_depth = 0).
  int max_depth = kOctreeMaxLevel;
  /// Bottom-up only: the seed's §4 compressed octree (leaves = the distinct
  /// cells at max_depth, internal nodes = LCAs of Morton-adjacent leaves;
  /// leaf_size ignored), in post-order.
  bool compressed = false;
  /// With compressed: add the chain nodes between every node and its parent
  /// (and above the compressed root up to level 0), seed §4 step 4.
  bool full = false;
  /// Keep a copy of the points in `order` order (Octree::xyz, 24 bytes per
  /// point): the queries then read each leaf's points contiguously instead
  /// of gathering them from the caller's array (several times faster kNN on
  /// 10^6 points). Off by default: the build itself does not need it.
  bool sorted_points = false;
  /// Bytes the build may allocate (budget.hpp; 0 = defaultMemoryBudget()).
  uint64_t memory_budget = 0;
};

/// Counts of the CLI contract (issue 18 point 8).
struct OctreeStats {
  uint64_t nodes = 0;         ///< internal + leaves
  uint64_t internal = 0;      ///< nodes with children (chain nodes included)
  uint64_t leaves = 0;        ///< nodes without children, empty ones included
  uint64_t empty_leaves = 0;  ///< leaves holding no point
  uint64_t chain_nodes = 0;   ///< full trees: nodes with exactly one child added by step 4
  int depth = 0;              ///< deepest level of any node
};

/// The tree's arrays: OverwriteVector (memory.hpp) — huge-page blocks, resize
/// without zero-filling — because a build writes every element exactly once.
template <typename T>
using OctreeArray = OverwriteVector<T>;

/// An octree. Node i has level[i], prefix[i] (the cell's Morton prefix; for
/// OctreeSplit::kData the path of child digits from the root, same bits),
/// parent[i] (kOctreeNone for the root), and the points
/// order[begin[i] .. end[i]) (indices into the input). Points of a node are
/// consecutive in `order`; `keys[j]` is the Morton key of point order[j].
struct Octree {
  OctreeLayout layout = OctreeLayout::kLevelOrder;
  OctreeOptions options;
  OctreeCube cube;
  OctreeStats stats;
  uint64_t point_count = 0;
  uint32_t root = 0;  ///< 0 in level order, the last node in post-order

  OctreeArray<uint8_t> level;
  OctreeArray<uint64_t> prefix;
  OctreeArray<uint32_t> parent;
  /// Level order: first of the 8 children, kOctreeNone for leaves. Post-order:
  /// the number of children is child_count[i] and first_child is empty.
  OctreeArray<uint32_t> first_child;
  OctreeArray<uint8_t> child_count;  ///< post-order only
  OctreeArray<uint8_t> chain;        ///< full trees only: 1 for the chain nodes of step 4
  OctreeArray<uint32_t> begin, end;
  OctreeArray<uint32_t> order;
  OctreeArray<uint64_t> keys;
  /// With OctreeOptions::sorted_points: x y z of point order[j] at 3j (double).
  OctreeArray<double> xyz;
  /// OctreeSplit::kData only, 3 per node: the split point of internal nodes
  /// (NaN for leaves), and per node the axes in partition order packed as
  /// axis0 | axis1 << 2 | axis2 << 4 (the child digit's bit 2 is axis0's side).
  OctreeArray<double> split_center;
  OctreeArray<uint8_t> split_axes;

  uint64_t size() const { return level.size(); }
  bool isLeaf(uint32_t node) const {
    return layout == OctreeLayout::kLevelOrder ? first_child[node] == kOctreeNone : child_count[node] == 0;
  }
};

/// Builds the octree of `points` (layouts above). Bucketed bottom-up (the
/// default): the cells of the sorted keys with more than leaf_size points
/// above max_depth are internal, each has all 8 children, the rest are
/// leaves — the same tree as top-down with OctreeSplit::kCube, node for node.
/// Throws as octreeRootCube, std::invalid_argument for bad options (leaf_size
/// 0, max_depth outside 0..21, kData with bottom-up, compressed with
/// top-down), ResourceError before allocating beyond the memory budget.
/// Work O(n · key digits) for the sort plus O(n) (bottom-up) or
/// O(n · depth) (top-down); extra memory about 24 bytes per point plus the
/// nodes (~25 bytes each). Identical on every backend and thread count,
/// except that top-down keeps input order inside a leaf where bottom-up
/// keeps key order (the same point sets).
Octree buildOctree(const OctreePoints& points, const OctreeOptions& options, const Execution& execution);

/// FNV-1a 64 over the leaves in Morton order (path order for kData), each as
/// 1 byte level then 8 bytes prefix little-endian (the CLI's `checksum`).
uint64_t octreeChecksum(const Octree& tree);

/// Leaf node ids in Morton order (a depth-first walk). O(nodes).
std::vector<uint32_t> octreeLeavesInOrder(const Octree& tree);

// ---------------------------------------------------------------------------
// Cells: the §4 queries on (level, prefix), independent of any tree
// ---------------------------------------------------------------------------

struct OctreeCell {
  int level = 0;
  uint64_t prefix = 0;
  bool operator==(const OctreeCell&) const = default;
};

/// The parent cell (precondition: level >= 1): drop the last 3 bits.
OctreeCell octreeCellParent(OctreeCell cell);
/// True iff `inner` is `outer` or lies inside it (outer's prefix is a prefix of inner's).
bool octreeCellContains(OctreeCell outer, OctreeCell inner);
/// The least common ancestor: the longest common prefix of whole digits.
OctreeCell octreeCellLca(OctreeCell a, OctreeCell b);
/// The child of `ancestor` containing `descendant` (precondition: ancestor
/// strictly contains descendant).
OctreeCell octreeChildToward(OctreeCell ancestor, OctreeCell descendant);
/// The cell at `level` containing a point's key.
OctreeCell octreeCellOfKey(uint64_t key, int level);

// ---------------------------------------------------------------------------
// Queries on level-order cube trees (bucketed bottom-up or top-down kCube);
// locate also works on kData trees. Query points are double x y z triples.
// ---------------------------------------------------------------------------

/// The leaf containing (x, y, z): the descent of the point's key (cube) or
/// of the split planes (data). kOctreeNone when the point is outside the root
/// cube [min, min + side) (or, for data trees, never: every point has a leaf)
/// or not finite. O(depth).
uint32_t octreeLocate(const Octree& tree, double x, double y, double z);
/// Batched: out[q] for the m queries xyz[3q..3q+3). Precondition: out holds m.
void octreeLocate(const Octree& tree, const double* xyz, uint64_t m, uint32_t* out, const Execution& execution);

/// The k nearest points to each query by squared Euclidean distance in
/// double (computed exactly as (px-qx)²+(py-qy)²+(pz-qz)² with the point
/// widened to double), ties by smaller index; out[q·k .. q·k + k) in
/// increasing (distance, index), padded with kOctreeNone when there are fewer
/// than k points; a query with a NaN or infinite coordinate gets only
/// padding. `points` must be the array the tree was built from.
/// dist2 (optional, m·k) receives the squared distances (inf for padding).
/// Branch-and-bound descent, children nearest first; cell boxes are widened
/// by side·2^-40 so rounding in the quantization never prunes a neighbour.
void octreeKnn(const Octree& tree, const OctreePoints& points, const double* xyz, uint64_t m, uint32_t k,
               uint32_t* out, double* dist2, const Execution& execution);

/// Variable-size results: query q's indices are indices[offsets[q] .. offsets[q+1]).
struct OctreeQueryResult {
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> indices;
};

/// Points with squared distance <= radius² to each query, in increasing
/// (distance, index).
OctreeQueryResult octreeRadius(const Octree& tree, const OctreePoints& points, const double* xyz, uint64_t m,
                               double radius, const Execution& execution);

/// Points inside the closed box [lo, hi] (per axis lo <= p <= hi), for one
/// box per query (boxes: x0 y0 z0 x1 y1 z1 per query), in increasing index.
OctreeQueryResult octreeBox(const Octree& tree, const OctreePoints& points, const double* boxes, uint64_t m,
                            const Execution& execution);

/// Leaf node ids of the subtree of `node`, in Morton order (any layout).
std::vector<uint32_t> octreeSubtreeLeaves(const Octree& tree, uint32_t node);

/// Contact kinds of neighbour finding (a mask: kFace | kEdge | kVertex).
inline constexpr uint8_t kOctreeFace = 1;    ///< the cells share a 2D patch
inline constexpr uint8_t kOctreeEdge = 2;    ///< they share only a segment
inline constexpr uint8_t kOctreeVertex = 4;  ///< they share only a point

struct OctreeNeighbour {
  uint32_t node;
  uint8_t kind;  ///< kOctreeFace, kOctreeEdge or kOctreeVertex
};

/// The leaves (empty ones included) whose closed cells touch the closed cell
/// of `node`, other than itself and its descendants, in Morton order, with the
/// kind of contact — the dimension of the intersection, computed exactly on
/// the integer cell coordinates — filtered by the mask `kinds`. Neighbours
/// may be larger or smaller than the node. Level-order cube trees (else
/// std::invalid_argument). O(depth · neighbours) for a typical leaf.
std::vector<OctreeNeighbour> octreeNeighbours(const Octree& tree, uint32_t node,
                                              uint8_t kinds = kOctreeFace | kOctreeEdge | kOctreeVertex);

/// Lowest common ancestor node of two nodes of the tree (by parent links).
uint32_t octreeLcaNode(const Octree& tree, uint32_t a, uint32_t b);

// ---------------------------------------------------------------------------
// Point generators (tests, benchmarks, `procgen octree --random N`)
// ---------------------------------------------------------------------------

enum class PointDistribution {
  kUniform,   ///< uniform in the unit cube [0, 1)^3
  kGaussian,  ///< standard normal per axis (Box–Muller)
  kPlummer,   ///< Plummer sphere, scale radius 1, mass fraction capped at 0.999 (r < 38.6)
};

/// Writes 3n doubles x y z. Point i depends only on (seed, i): Philox4x32-10
/// keyed by seed with counter (i, phase), so every backend and thread count
/// gives the same points (transcendental functions are the host libm's: the
/// opencl backend draws uniform points on the device and Gaussian and
/// Plummer points on the host, because OpenCL C's double log/sin/cos/pow
/// round differently).
void generatePoints(PointDistribution distribution, uint64_t n, uint64_t seed, double* xyz,
                    const Execution& execution);

/// "uniform", "gaussian", "plummer".
const char* pointDistributionName(PointDistribution distribution);

// ---------------------------------------------------------------------------
// Distributed build and queries over the ranks of `mpirun -n R`
// (procgen/distributed.hpp; docs/scaling.md "Octrees"; src/octree/distributed_build.cpp)
// ---------------------------------------------------------------------------

/// Writes the points first .. first + count − 1 of generatePoints(distribution,
/// ·, seed) into xyz (3·count doubles): one rank's block of a generated cloud.
/// Serial (host libm, as generatePoints' Gaussian and Plummer points).
void generatePointRange(PointDistribution distribution, uint64_t first, uint64_t count, uint64_t seed, double* xyz);

struct DistributedOctreeOptions {
  /// Rank 0 also receives every point (DistributedOctree::points), for outputs that draw them.
  bool gather_points = false;
  /// Each rank builds a tree over its own points (local_tree) for the routed queries.
  bool local_tree = false;
};

/// One rank's part of a distributed octree. Rank r owns the Morton keys
/// [splitters[r], splitters[r + 1]): a contiguous run of leaves of the global
/// tree (no leaf and no run of equal keys crosses a range border) and the
/// points with those keys.
struct DistributedOctree {
  /// Rank 0: the whole tree, identical to buildOctree over all points (node
  /// for node, order, keys, xyz, stats). Other ranks: empty.
  Octree tree;
  /// Rank 0 with gather_points: x y z of every point in input order.
  OctreeArray<double> points;
  OctreeCube cube;                  ///< on every rank
  std::vector<uint64_t> splitters;  ///< R + 1 key bounds, splitters[0] = 0, splitters[R] = 2^63
  std::vector<double> rank_bounds;  ///< 6 per rank: its points' lo x y z, hi x y z (lo > hi: no points)
  OctreeArray<double> local_xyz;    ///< this rank's points by increasing global index
  OctreeArray<uint32_t> local_index;///< their global indices
  Octree local_tree;                ///< over local_xyz (local_tree option, non-empty ranks)
};

/// Collective (every rank of the job; one process: R = 1). Builds the
/// bucketed bottom-up cube tree (options.method kBottomUp, not compressed,
/// kCube; else std::invalid_argument) of `total` points of which this rank
/// holds the block `points` = global indices first .. first + points.count − 1
/// (the ranks' blocks in rank order cover 0 .. total − 1). The cornerstone
/// scheme (Keller et al. 2023): keys from the global root cube (allreduce),
/// a local radix sort, splitters from every rank's regular samples, each
/// moved to the first key of the global leaf holding it (octreeAlignSplitter,
/// from allreduced counts of its ancestor cells), the points exchanged to
/// their owners (allToAll), each rank finding the internal cells inside its
/// range; the cells crossing a border are the shared top of the tree.
/// Rank 0 gathers the sorted keys, indices and internal cells and writes
/// the nodes. Throws as buildOctree (a bad point: the rank holding it
/// reports it, the others stop with distributed::PeerFailure).
DistributedOctree buildOctreeDistributed(const OctreePoints& points, uint64_t first, uint64_t total,
                                         const OctreeOptions& options, const DistributedOctreeOptions& distributed,
                                         const Execution& execution);

/// Collective queries on a DistributedOctree built with local_tree; every rank
/// passes the same m queries; the results, on rank 0 only, equal octreeKnn /
/// octreeRadius / octreeBox over all points (the same indices in the same
/// order). kNN: the rank owning a query's key answers it first, its k-th
/// distance bounds the search, and only the ranks whose points' box is within
/// that distance answer it too; radius and box: the ranks whose box meets the
/// ball or box. Partial answers (query, index, distance²) are merged on rank 0.
void octreeKnnDistributed(const DistributedOctree& tree, const double* xyz, uint64_t m, uint32_t k, uint32_t* out,
                          const Execution& execution);
OctreeQueryResult octreeRadiusDistributed(const DistributedOctree& tree, const double* xyz, uint64_t m,
                                          double radius, const Execution& execution);
OctreeQueryResult octreeBoxDistributed(const DistributedOctree& tree, const double* boxes, uint64_t m,
                                       const Execution& execution);

/// The splitter rule, pure (tests simulate R ranks with it). Regular samples:
/// `count` keys of the sorted keys[0..n) at (j + 1/2)·n/count (none when n = 0).
std::vector<uint64_t> octreeSampleKeys(const uint64_t* sorted_keys, uint64_t n, uint32_t count);
/// R − 1 tentative splitters from all ranks' samples: the sorted samples at
/// q·S/R, q = 1 .. R − 1 (all 0 without samples).
std::vector<uint64_t> octreeSampleSplitters(std::vector<uint64_t> samples, int ranks);
/// The leaf-boundary rule: given the global point counts of the 22 cells
/// containing `splitter` (levels 0 .. 21), the level of the bucketed tree's
/// leaf containing it (the first level whose cell holds at most leaf_size
/// points or is at depth_limit), and the splitter moved to that leaf's first
/// key — a leaf border, never inside a run of equal keys.
int octreeSplitterLeafLevel(const uint64_t* cell_counts, uint32_t leaf_size, int depth_limit);
uint64_t octreeAlignSplitter(uint64_t splitter, int leaf_level);

}  // namespace procgen
