// The opencl twins of the octree stages (seed 004 §3–§5): host drivers of
// octree_build.cl and octree_queries.cl over the device primitives
// (primitives/opencl/device.hpp), on opencl::withState. Every array equals
// the serial twin's (build_impl.hpp, query_impl.hpp) bit for bit: the
// kernels run the same per-element logic (keys.h, points.h), the radix sort
// is stable, and every offset comes from an ordered prefix sum.
//
// What runs where (docs/octree.md "opencl"):
//   device  bounds per run, keys, the (key, index) radix sort, the bucketed
//           cell counts / level-major scan / cell prefixes / node ids /
//           children, the compressed leaf compaction / node counts / scan /
//           nodes / parents / child counts / chain nodes, the top-down split
//           flags / scan / partitions, the sorted copy, locate, kNN, radius
//           and box queries, uniform points;
//   host    the combination of the per-run bounds (one value per run),
//           the 23 level starts and node bases, the top-down level loop
//           (one scan and one split launch per level; the children's node
//           fields come back per level into the tree), the empty-leaf count,
//           the errors (delegated to the serial twin, which throws the same
//           message), and Gaussian and Plummer points (the device's double
//           transcendentals are not the host libm's; see generate).
// Device buffers are checked against the device's limits (opencl::Buffer);
// host arrays are asked of the memory budget first, as in the serial twin.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "octree/query_impl.hpp"
#include "octree/stages.hpp"
#include "primitives/opencl/device.hpp"
#include "procgen/budget.hpp"

namespace procgen::octree_impl::opencl {
namespace {

using procgen::opencl::Buffer;
using procgen::opencl::Context;
using procgen::opencl::Kernel;
namespace prim = procgen::primitives;

constexpr size_t kLocal = 64;
constexpr int kLevels = kOctreeMaxLevel + 1;  // levels 0..21
constexpr uint64_t kQueryBatch = uint64_t{1} << 20;  // queries or generated points per launch

/// Points per work item of the kernels that walk runs of consecutive points
/// (one cpu chunk each): at most ~4096 runs, at least 256 points per run.
uint64_t runLength(uint64_t n) { return std::max<uint64_t>(256, (n + 4095) / 4096); }

/// The kernels of both programs, built for one coordinate type.
struct Kernels {
  Kernels(Context& ctx, const std::string& coord) {
    const std::string options = "-DPG_COORD_T=" + coord;
    cl_program b = ctx.program("octree/opencl/octree_build.cl", options);
    cl_program q = ctx.program("octree/opencl/octree_queries.cl", options);
    bounds_runs = Kernel(b, "boundsRuns");
    compute_keys = Kernel(b, "computeKeys");
    gather_points = Kernel(b, "gatherPoints");
    gather_strided = Kernel(b, "gatherStrided");
    bucket_count = Kernel(b, "bucketCount");
    bucket_write = Kernel(b, "bucketWrite");
    bucket_node_ids = Kernel(b, "bucketNodeIds");
    bucket_children = Kernel(b, "bucketChildren");
    leaf_head_count = Kernel(b, "leafHeadCount");
    leaf_head_scatter = Kernel(b, "leafHeadScatter");
    compressed_count = Kernel(b, "compressedCount");
    compressed_write = Kernel(b, "compressedWrite");
    compressed_parents = Kernel(b, "compressedParents");
    count_children = Kernel(b, "countChildren");
    narrow_counts = Kernel(b, "narrowCounts");
    chain_grow = Kernel(b, "chainGrow");
    chain_write = Kernel(b, "chainWrite");
    top_down_flags = Kernel(b, "topDownFlags");
    top_down_split = Kernel(b, "topDownSplit");
    generate = Kernel(q, "generatePoints");
    locate = Kernel(q, "locate");
    knn = Kernel(q, "knn");
    range_query = Kernel(q, "rangeQuery");
  }
  Kernel bounds_runs, compute_keys, gather_points, gather_strided;
  Kernel bucket_count, bucket_write, bucket_node_ids, bucket_children;
  Kernel leaf_head_count, leaf_head_scatter, compressed_count, compressed_write, compressed_parents;
  Kernel count_children, narrow_counts, chain_grow, chain_write;
  Kernel top_down_flags, top_down_split;
  Kernel generate, locate, knn, range_query;
};

/// The per-device state (opencl::withState): primitives and kernels, the
/// kernels built on first use per coordinate type.
struct OctreeDevice {
  explicit OctreeDevice(Context& c)
      : ctx(c),
        sort(c, sizeof(uint64_t), true),
        scan64(c, prim::opencl::monoidInfo<prim::SumU64>()),
        scan32(c, prim::opencl::monoidInfo<prim::SumU32>()) {}

  /// Keys, bounds, distances and generators are double arithmetic.
  void requireDoubles(const char* what) {
    cl_device_fp_config fp = 0;
    procgen::opencl::check(clGetDeviceInfo(ctx.device(), CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, nullptr),
                           "clGetDeviceInfo(CL_DEVICE_DOUBLE_FP_CONFIG)");
    if (fp == 0)
      throw BackendUnavailableError(std::string(what) + ": the OpenCL device '" + ctx.info().name +
                                    "' has no double precision (cl_khr_fp64), which octree keys and distances need");
  }
  Kernels& kernels(bool floats) {
    std::unique_ptr<Kernels>& k = kernels_[floats ? 1 : 0];
    if (!k) k = std::make_unique<Kernels>(ctx, floats ? "float" : "double");
    return *k;
  }

  Context& ctx;
  prim::opencl::DeviceRadixSort sort;
  prim::opencl::DeviceScan scan64, scan32;

 private:
  std::unique_ptr<Kernels> kernels_[2];
};

template <typename Fn>
auto onDevice(int device, const char* what, Fn&& fn) {
  return procgen::opencl::withState<OctreeDevice>(device, [&](OctreeDevice& d) {
    d.requireDoubles(what);
    return fn(d);
  });
}

Buffer deviceBuffer(Context& ctx, const char* what, uint64_t bytes) {
  Buffer b(ctx, what);
  b.reserve(bytes);
  return b;
}

void fill32(Context& ctx, Buffer& b, uint32_t value, uint64_t count) {
  if (count == 0) return;
  procgen::opencl::check(clEnqueueFillBuffer(ctx.queue(), b.get(), &value, sizeof value, 0, count * sizeof value,
                                             0, nullptr, nullptr),
                         "clEnqueueFillBuffer");
}

template <typename T>
T readOne(const Buffer& b, uint64_t index) {
  T v;
  b.read(&v, sizeof v, index * sizeof v);
  return v;
}

Buffer uploadPoints(Context& ctx, const OctreePoints& p) {
  Buffer b(ctx, "octree points");
  if (p.xyz32) b.upload(p.xyz32, 3 * p.count * sizeof(float));
  else b.upload(p.xyz64, 3 * p.count * sizeof(double));
  return b;
}

/// §3 root cube: per-run bounds on the device, combined on the host in run
/// order with the serial twin's std::min / std::max. Any error (no points,
/// too many, a non-finite coordinate, an overflowing extent) is thrown by the
/// serial twin, on the prefix of the points up to the first bad one, so the
/// message is the same.
OctreeCube deviceRootCube(OctreeDevice& d, Kernels& k, const OctreePoints& points, const Buffer& pts) {
  const uint64_t n = points.count;
  const uint64_t per = runLength(n), runs = (n + per - 1) / per;
  Buffer bounds = deviceBuffer(d.ctx, "octree run bounds", runs * 6 * sizeof(double));
  Buffer bad = deviceBuffer(d.ctx, "octree run errors", runs * sizeof(uint64_t));
  k.bounds_runs.arg(0, pts).arg(1, cl_ulong{n}).arg(2, cl_ulong{per}).arg(3, bounds).arg(4, bad);
  k.bounds_runs.run(d.ctx, runs, kLocal);
  std::vector<double> b(runs * 6);
  std::vector<uint64_t> first_bad(runs);
  bounds.read(b.data(), b.size() * sizeof(double));
  bad.read(first_bad.data(), runs * sizeof(uint64_t));
  double lo[3], hi[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = std::numeric_limits<double>::infinity();
    hi[a] = -std::numeric_limits<double>::infinity();
  }
  for (uint64_t r = 0; r < runs; ++r) {
    if (first_bad[r] != n) serial::rootCube(OctreePoints{points.xyz32, points.xyz64, first_bad[r] + 1});
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], b[6 * r + a]);
      hi[a] = std::max(hi[a], b[6 * r + 3 + a]);
    }
  }
  const OctreeCube cube = cubeFromBounds(lo, hi);
  if (!std::isfinite(cube.side)) return serial::rootCube(points);  // throws the overflow error
  return cube;
}

/// keys[i] (and order[i] = i when order is not null) on the device.
void deviceKeys(OctreeDevice& d, Kernels& k, const Buffer& pts, uint64_t n, const OctreeCube& c, const Buffer& keys,
                cl_mem order) {
  k.compute_keys.arg(0, pts).arg(1, cl_ulong{n}).arg(2, c.min[0]).arg(3, c.min[1]).arg(4, c.min[2]).arg(5, c.side);
  k.compute_keys.arg(6, keys).arg(7, order);
  k.compute_keys.run(d.ctx, n, kLocal);
}

// ---------------------------------------------------------------------------
// Bucketed bottom-up (build_impl.hpp buildBucketed; docs/octree.md)
// ---------------------------------------------------------------------------

/// The node arrays of a tree on the device; `links` is first_child (level
/// order, 4 bytes per node) or child_count (post-order, 1 byte).
struct DeviceNodes {
  DeviceNodes(Context& ctx, uint64_t count, bool level_order)
      : level_order(level_order),
        level(deviceBuffer(ctx, "octree levels", count)),
        prefix(deviceBuffer(ctx, "octree prefixes", count * sizeof(uint64_t))),
        parent(deviceBuffer(ctx, "octree parents", count * sizeof(uint32_t))),
        begin(deviceBuffer(ctx, "octree node begins", count * sizeof(uint32_t))),
        end(deviceBuffer(ctx, "octree node ends", count * sizeof(uint32_t))),
        links(deviceBuffer(ctx, level_order ? "octree first children" : "octree child counts",
                           count * (level_order ? sizeof(uint32_t) : 1))) {}
  void readInto(Octree& t, uint64_t count) const {
    resizeNodes(t, count, level_order);
    level.read(t.level.data(), count);
    prefix.read(t.prefix.data(), count * sizeof(uint64_t));
    parent.read(t.parent.data(), count * sizeof(uint32_t));
    begin.read(t.begin.data(), count * sizeof(uint32_t));
    end.read(t.end.data(), count * sizeof(uint32_t));
    if (level_order) links.read(t.first_child.data(), count * sizeof(uint32_t));
    else links.read(t.child_count.data(), count);
  }
  bool level_order;
  Buffer level, prefix, parent, begin, end, links;
};

void buildBucketed(OctreeDevice& d, Kernels& k, Octree& t, const Buffer& keys, int depth_limit, uint32_t leaf_size,
                   uint64_t budget, uint64_t held) {
  Context& ctx = d.ctx;
  const uint64_t n = t.point_count;
  const uint64_t per = runLength(n), runs = (n + per - 1) / per;
  const uint64_t slots = kLevels * runs + 1;  // + the total after the scan
  Buffer counts = deviceBuffer(ctx, "octree cell counts", slots * sizeof(uint64_t));
  Buffer offsets = deviceBuffer(ctx, "octree cell offsets", slots * sizeof(uint64_t));
  k.bucket_count.arg(0, keys).arg(1, cl_ulong{n}).arg(2, cl_ulong{leaf_size}).arg(3, cl_int{depth_limit});
  k.bucket_count.arg(4, cl_ulong{per}).arg(5, cl_ulong{runs}).arg(6, counts);
  k.bucket_count.run(ctx, runs, kLocal);
  d.scan64.scan(prim::ScanKind::kExclusive, counts.get(), nullptr, offsets.get(), slots);
  // Level starts: the scan at the first run of every level (and the total).
  Buffer starts = deviceBuffer(ctx, "octree level starts", (kLevels + 1) * sizeof(uint64_t));
  k.gather_strided.arg(0, offsets).arg(1, cl_ulong{runs}).arg(2, cl_ulong{kLevels + 1}).arg(3, starts);
  k.gather_strided.run(ctx, kLevels + 1, kLocal);
  std::vector<uint64_t> level_start(kLevels + 1);
  starts.read(level_start.data(), level_start.size() * sizeof(uint64_t));
  const uint64_t internal = level_start[kLevels];
  const uint64_t nodes = 1 + 8 * internal;
  requireMemory("octree nodes", internal * 12 + nodes * kNodeBytes, budget, held);
  std::vector<uint64_t> node_base(kLevels + 1, 0);
  node_base[1] = 1;
  for (int l = 1; l < kLevels; ++l) node_base[l + 1] = node_base[l] + 8 * (level_start[l] - level_start[l - 1]);
  Buffer bases(ctx, "octree node bases");
  bases.upload(node_base.data(), node_base.size() * sizeof(uint64_t));
  Buffer ipref = deviceBuffer(ctx, "octree internal cells", internal * sizeof(uint64_t));
  Buffer inode = deviceBuffer(ctx, "octree internal node ids", internal * sizeof(uint32_t));
  DeviceNodes dn(ctx, nodes, true);
  if (internal) {
    k.bucket_write.arg(0, keys).arg(1, cl_ulong{n}).arg(2, cl_ulong{leaf_size}).arg(3, cl_int{depth_limit});
    k.bucket_write.arg(4, cl_ulong{per}).arg(5, cl_ulong{runs}).arg(6, offsets).arg(7, ipref);
    k.bucket_write.run(ctx, runs, kLocal);
  }
  fill32(ctx, dn.links, kOctreeNone, nodes);
  const uint8_t root_level = 0;
  const uint64_t root_prefix = 0;
  const uint32_t root_parent = kOctreeNone, root_begin = 0, root_end = static_cast<uint32_t>(n);
  dn.level.write(&root_level, 1);
  dn.prefix.write(&root_prefix, sizeof root_prefix);
  dn.parent.write(&root_parent, sizeof root_parent);
  dn.begin.write(&root_begin, sizeof root_begin);
  dn.end.write(&root_end, sizeof root_end);
  if (internal) {
    k.bucket_node_ids.arg(0, ipref).arg(1, cl_ulong{internal}).arg(2, starts).arg(3, bases).arg(4, inode);
    k.bucket_node_ids.run(ctx, internal, kLocal);
    Kernel& c = k.bucket_children;
    c.arg(0, keys).arg(1, cl_ulong{n}).arg(2, ipref).arg(3, cl_ulong{internal}).arg(4, starts).arg(5, bases);
    c.arg(6, inode).arg(7, dn.level).arg(8, dn.prefix).arg(9, dn.parent).arg(10, dn.links).arg(11, dn.begin);
    c.arg(12, dn.end).run(ctx, internal, kLocal);
  }
  dn.readInto(t, nodes);
  int deepest = 0;
  for (int l = 0; l < kLevels; ++l)
    if (level_start[l + 1] > level_start[l]) deepest = l + 1;
  t.stats.internal = internal;
  t.stats.nodes = nodes;
  t.stats.leaves = nodes - internal;
  t.stats.depth = deepest;
}

// ---------------------------------------------------------------------------
// Compressed octree and chain nodes (build_impl.hpp buildCompressed)
// ---------------------------------------------------------------------------

void buildCompressed(OctreeDevice& d, Kernels& k, Octree& t, const Buffer& keys, int depth_limit, bool full,
                     uint64_t budget, uint64_t held) {
  Context& ctx = d.ctx;
  const uint64_t n = t.point_count;
  const cl_uint shift = pgOctreeShift(depth_limit);
  const uint64_t per = runLength(n), runs = (n + per - 1) / per;
  // Distinct leaves: count per run, scan, scatter (stream compaction).
  Buffer heads = deviceBuffer(ctx, "octree leaf counts", (runs + 1) * sizeof(uint64_t));
  k.leaf_head_count.arg(0, keys).arg(1, cl_ulong{n}).arg(2, shift).arg(3, cl_ulong{per}).arg(4, cl_ulong{runs});
  k.leaf_head_count.arg(5, heads).run(ctx, runs, kLocal);
  d.scan64.exclusiveScan(heads.get(), runs + 1);
  const uint64_t m = readOne<uint64_t>(heads, runs);
  requireMemory("octree leaves", m * 24, budget, held);
  Buffer U = deviceBuffer(ctx, "octree leaf keys", m * sizeof(uint64_t));
  Buffer first_point = deviceBuffer(ctx, "octree leaf points", (m + 1) * sizeof(uint32_t));
  k.leaf_head_scatter.arg(0, keys).arg(1, cl_ulong{n}).arg(2, shift).arg(3, cl_ulong{per}).arg(4, cl_ulong{runs});
  k.leaf_head_scatter.arg(5, heads).arg(6, U).arg(7, first_point).run(ctx, runs, kLocal);
  const uint32_t n32 = static_cast<uint32_t>(n);
  first_point.write(&n32, sizeof n32, m * sizeof(uint32_t));
  // Nodes per leaf (the leaf and the internal nodes ending at it), positions by a scan.
  Buffer emitted = deviceBuffer(ctx, "octree nodes per leaf", (m + 1) * sizeof(uint32_t));
  Buffer position = deviceBuffer(ctx, "octree leaf positions", (m + 1) * sizeof(uint32_t));
  k.compressed_count.arg(0, U).arg(1, cl_ulong{m}).arg(2, emitted).run(ctx, m, kLocal);
  d.scan32.scan(prim::ScanKind::kExclusive, emitted.get(), nullptr, position.get(), m + 1);
  const uint64_t total = readOne<uint32_t>(position, m);
  requireMemory("octree nodes", total * kNodeBytes, budget, held + m * 24);
  DeviceNodes nodes(ctx, total, false);
  Kernel& w = k.compressed_write;
  w.arg(0, U).arg(1, cl_ulong{m}).arg(2, first_point).arg(3, position).arg(4, cl_int{depth_limit});
  w.arg(5, nodes.level).arg(6, nodes.prefix).arg(7, nodes.begin).arg(8, nodes.end).run(ctx, m, kLocal);
  Kernel& p = k.compressed_parents;
  p.arg(0, U).arg(1, cl_ulong{m}).arg(2, position).arg(3, emitted).arg(4, nodes.level).arg(5, nodes.parent);
  p.run(ctx, m, kLocal);
  {
    Buffer counts = deviceBuffer(ctx, "octree child counts", total * sizeof(uint32_t));
    fill32(ctx, counts, 0, total);
    k.count_children.arg(0, nodes.parent).arg(1, cl_ulong{total}).arg(2, counts).run(ctx, total, kLocal);
    k.narrow_counts.arg(0, counts).arg(1, cl_ulong{total}).arg(2, nodes.links).run(ctx, total, kLocal);
  }
  t.stats.leaves = m;
  t.stats.internal = total - m;
  t.stats.nodes = total;
  t.stats.depth = depth_limit;
  t.root = static_cast<uint32_t>(total - 1);
  if (!full) {
    nodes.readInto(t, total);
    return;
  }
  // §4 step 4: chain nodes after every node, positions by a scan of 1 + their count.
  Buffer grow = deviceBuffer(ctx, "octree chain counts", (total + 1) * sizeof(uint32_t));
  Buffer moved = deviceBuffer(ctx, "octree full positions", (total + 1) * sizeof(uint32_t));
  k.chain_grow.arg(0, nodes.level).arg(1, nodes.parent).arg(2, cl_ulong{total}).arg(3, grow).run(ctx, total, kLocal);
  d.scan32.scan(prim::ScanKind::kExclusive, grow.get(), nullptr, moved.get(), total + 1);
  const uint64_t full_total = readOne<uint32_t>(moved, total);
  requireMemory("octree chain nodes", (full_total + total) * (kNodeBytes + 1), budget, held + m * 24);
  DeviceNodes f(ctx, full_total, false);
  Buffer chain = deviceBuffer(ctx, "octree chain flags", full_total);
  Kernel& c = k.chain_write;
  c.arg(0, nodes.level).arg(1, nodes.prefix).arg(2, nodes.parent).arg(3, nodes.begin).arg(4, nodes.end);
  c.arg(5, nodes.links).arg(6, grow).arg(7, moved).arg(8, cl_ulong{total}).arg(9, f.level).arg(10, f.prefix);
  c.arg(11, f.parent).arg(12, f.begin).arg(13, f.end).arg(14, f.links).arg(15, chain).run(ctx, total, kLocal);
  f.readInto(t, full_total);
  t.chain.resize(full_total);
  chain.read(t.chain.data(), full_total);
  t.stats.chain_nodes = full_total - total;
  t.stats.internal += t.stats.chain_nodes;
  t.stats.nodes = full_total;
  t.root = static_cast<uint32_t>(full_total - 1);
}

// ---------------------------------------------------------------------------
// Top-down (build_impl.hpp buildTopDown; seed §5)
// ---------------------------------------------------------------------------

/// The host runs the level loop (one flag launch, one scan, one split launch
/// per level); the points stay on the device, partitioned in place between
/// (keys, order) and a ping-pong pair. The children's ranges, prefixes and
/// parents come back per level into the tree; the next frontier's ranges and
/// prefixes stay on the device.
void buildTopDown(OctreeDevice& d, Kernels& k, Octree& t, const Buffer& pts, Buffer& keys, Buffer& order,
                  int depth_limit, uint32_t leaf_size, bool data, uint64_t budget, uint64_t held) {
  Context& ctx = d.ctx;
  const uint64_t n = t.point_count;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Buffer bk = deviceBuffer(ctx, "octree partition keys", n * sizeof(uint64_t));
  Buffer bi = deviceBuffer(ctx, "octree partition indices", n * sizeof(uint32_t));
  startTopDown(t, data);
  Buffer fbegin(ctx, "octree frontier begins"), fend(ctx, "octree frontier ends"), fprefix(ctx, "octree frontier prefixes");
  fbegin.upload(&t.begin[0], sizeof(uint32_t));
  fend.upload(&t.end[0], sizeof(uint32_t));
  fprefix.upload(&t.prefix[0], sizeof(uint64_t));
  Buffer cbegin(ctx, "octree child begins"), cend(ctx, "octree child ends"), cprefix(ctx, "octree child prefixes");
  Buffer cparent(ctx, "octree child parents"), flags(ctx, "octree split flags"), ranks(ctx, "octree split ranks");
  Buffer bounds(ctx, "octree node bounds"), ffirst(ctx, "octree frontier first children");
  Buffer centre(ctx, "octree split centres"), axes(ctx, "octree split axes");
  uint64_t frontier_begin = 0, frontier_end = 1;
  int l = 0;
  while (frontier_begin < frontier_end) {
    const uint64_t count = frontier_end - frontier_begin;
    // One work item per node: while a level has few nodes, one per work-group
    // so that a CPU device spreads them over its cores.
    const size_t local = count < 16 * kLocal ? 1 : kLocal;
    flags.reserve((count + 1) * sizeof(uint32_t));
    ranks.reserve((count + 1) * sizeof(uint32_t));
    bounds.reserve((data ? count : 1) * 6 * sizeof(double));
    Kernel& fk = k.top_down_flags;
    fk.arg(0, pts).arg(1, order).arg(2, fbegin).arg(3, fend).arg(4, cl_ulong{count}).arg(5, cl_ulong{leaf_size});
    fk.arg(6, cl_int{l}).arg(7, cl_int{depth_limit}).arg(8, cl_int{data ? 1 : 0}).arg(9, flags).arg(10, bounds);
    fk.run(ctx, count, local);
    d.scan32.scan(prim::ScanKind::kExclusive, flags.get(), nullptr, ranks.get(), count + 1);
    const uint64_t splitting = readOne<uint32_t>(ranks, count);
    if (splitting == 0) break;
    const uint64_t next_begin = frontier_end, next_end = frontier_end + 8 * splitting;
    requireMemory("octree nodes", 8 * splitting * kNodeBytes, budget, held + t.size() * kNodeBytes);
    resizeNodes(t, next_end, true);
    if (data) {
      t.split_center.resize(3 * next_end, nan);
      t.split_axes.resize(next_end, 0);
    }
    const uint64_t kids = 8 * splitting;
    cbegin.reserve(kids * sizeof(uint32_t));
    cend.reserve(kids * sizeof(uint32_t));
    cprefix.reserve(kids * sizeof(uint64_t));
    cparent.reserve(kids * sizeof(uint32_t));
    ffirst.reserve(count * sizeof(uint32_t));
    centre.reserve((data ? count : 1) * 3 * sizeof(double));
    axes.reserve(data ? count : 1);
    Kernel& s = k.top_down_split;
    s.arg(0, pts).arg(1, keys).arg(2, order).arg(3, bk).arg(4, bi).arg(5, fbegin).arg(6, fend).arg(7, fprefix);
    s.arg(8, flags).arg(9, ranks).arg(10, bounds).arg(11, cl_ulong{count}).arg(12, cl_int{l});
    s.arg(13, cl_int{data ? 1 : 0}).arg(14, cl_ulong{frontier_begin}).arg(15, cl_ulong{next_begin});
    s.arg(16, ffirst).arg(17, centre).arg(18, axes).arg(19, cbegin).arg(20, cend).arg(21, cprefix).arg(22, cparent);
    s.run(ctx, count, local);
    ffirst.read(t.first_child.data() + frontier_begin, count * sizeof(uint32_t));
    if (data) {
      centre.read(t.split_center.data() + 3 * frontier_begin, count * 3 * sizeof(double));
      axes.read(t.split_axes.data() + frontier_begin, count);
    }
    cbegin.read(t.begin.data() + next_begin, kids * sizeof(uint32_t));
    cend.read(t.end.data() + next_begin, kids * sizeof(uint32_t));
    cprefix.read(t.prefix.data() + next_begin, kids * sizeof(uint64_t));
    cparent.read(t.parent.data() + next_begin, kids * sizeof(uint32_t));
    std::fill(t.level.begin() + next_begin, t.level.end(), static_cast<uint8_t>(l + 1));
    std::fill(t.first_child.begin() + next_begin, t.first_child.end(), kOctreeNone);
    std::swap(fbegin, cbegin);
    std::swap(fend, cend);
    std::swap(fprefix, cprefix);
    t.stats.internal += splitting;
    frontier_begin = next_begin;
    frontier_end = next_end;
    ++l;
  }
  finishTopDown(t, l);
}

/// The arrays the descents read (knn, radius, box), uploaded once per call.
struct DeviceCubeTree {
  DeviceCubeTree(Context& ctx, const Octree& tree, const OctreePoints& points)
      : first_child(ctx, "octree first children"),
        level(ctx, "octree levels"),
        begin(ctx, "octree node begins"),
        end(ctx, "octree node ends"),
        order(ctx, "octree order"),
        width(ctx, "octree cell widths"),
        pts(uploadPoints(ctx, points)),
        geometry(tree) {
    const uint64_t nodes = tree.size();
    first_child.upload(tree.first_child.data(), nodes * sizeof(uint32_t));
    level.upload(tree.level.data(), nodes);
    begin.upload(tree.begin.data(), nodes * sizeof(uint32_t));
    end.upload(tree.end.data(), nodes * sizeof(uint32_t));
    order.upload(tree.order.data(), tree.order.size() * sizeof(uint32_t));
    width.upload(geometry.width, sizeof geometry.width);
  }
  /// Arguments 0..10 of knn and rangeQuery.
  void bind(Kernel& k, const OctreeCube& cube) const {
    k.arg(0, first_child).arg(1, level).arg(2, begin).arg(3, end).arg(4, order).arg(5, pts).arg(6, width);
    k.arg(7, geometry.slack).arg(8, cube.min[0]).arg(9, cube.min[1]).arg(10, cube.min[2]);
  }
  Buffer first_child, level, begin, end, order, width, pts;
  Geometry geometry;
};

/// Radius (box = false, r2 = radius²) or box queries in batches: a counting
/// pass, a scan of the counts, a pass that writes and sorts every row.
OctreeQueryResult rangeQueries(int device, const char* what, const Octree& tree, const OctreePoints& points,
                               const double* queries, uint64_t m, bool box, double r2) {
  OctreeQueryResult result;
  result.offsets.assign(m + 1, 0);
  if (m == 0) return result;
  return onDevice(device, what, [&](OctreeDevice& d) {
    Context& ctx = d.ctx;
    Kernel& k = d.kernels(points.xyz32 != nullptr).range_query;
    const DeviceCubeTree dt(ctx, tree, points);
    dt.bind(k, tree.cube);
    const size_t wg = ctx.workGroupSize(k.get(), kLocal);  // a 7 KiB private stack per work item
    const uint64_t per_query = box ? 6 : 3;
    const uint64_t batch = std::min(m, kQueryBatch);
    Buffer q = deviceBuffer(ctx, "octree queries", per_query * batch * sizeof(double));
    Buffer offsets = deviceBuffer(ctx, "octree query offsets", (batch + 1) * sizeof(uint64_t));
    Buffer index(ctx, "octree query results"), dist(ctx, "octree query distances");
    std::vector<uint64_t> row(batch + 1);
    k.arg(11, q).arg(13, cl_int{box ? 1 : 0}).arg(14, r2);
    for (uint64_t first = 0; first < m; first += batch) {
      const uint64_t count = std::min(batch, m - first);
      q.write(queries + per_query * first, per_query * count * sizeof(double));
      k.arg(12, cl_ulong{count}).arg(15, offsets).arg(16, cl_mem{nullptr}).arg(17, cl_mem{nullptr});
      k.arg(18, cl_mem{nullptr}).run(ctx, count, wg);
      d.scan64.exclusiveScan(offsets.get(), count + 1);
      offsets.read(row.data(), (count + 1) * sizeof(uint64_t));
      const uint64_t found = row[count];
      const uint64_t before = result.indices.size();
      requireMemory(what, (before + found) * sizeof(uint32_t) + (m + 1) * sizeof(uint64_t));
      index.reserve(found * sizeof(uint32_t));
      dist.reserve(found * sizeof(double));
      k.arg(15, cl_mem{nullptr}).arg(16, offsets).arg(17, index).arg(18, dist).run(ctx, count, wg);
      result.indices.resize(before + found);
      index.read(result.indices.data() + before, found * sizeof(uint32_t));
      for (uint64_t i = 0; i < count; ++i) result.offsets[first + i + 1] = before + row[i + 1];
    }
    return std::move(result);
  });
}

}  // namespace

// ---------------------------------------------------------------------------
// The stages (stages.hpp)
// ---------------------------------------------------------------------------

OctreeCube rootCube(int device, const OctreePoints& points) {
  if (points.count == 0 || points.count > kOctreeMaxPoints) return serial::rootCube(points);  // throws
  return onDevice(device, "octreeRootCube", [&](OctreeDevice& d) {
    const Buffer pts = uploadPoints(d.ctx, points);
    return deviceRootCube(d, d.kernels(points.xyz32 != nullptr), points, pts);
  });
}

void keys(int device, const OctreePoints& points, const OctreeCube& cube, uint64_t* out) {
  if (points.count == 0) return;
  onDevice(device, "octreeKeys", [&](OctreeDevice& d) {
    const Buffer pts = uploadPoints(d.ctx, points);
    const Buffer keys = deviceBuffer(d.ctx, "octree keys", points.count * sizeof(uint64_t));
    deviceKeys(d, d.kernels(points.xyz32 != nullptr), pts, points.count, cube, keys, nullptr);
    keys.read(out, points.count * sizeof(uint64_t));
    return 0;
  });
}

Octree build(int device, const OctreePoints& points, const OctreeOptions& options) {
  if (points.count == 0 || points.count > kOctreeMaxPoints) return serial::build(points, options);  // throws
  return onDevice(device, "buildOctree", [&](OctreeDevice& d) {
    Context& ctx = d.ctx;
    Kernels& k = d.kernels(points.xyz32 != nullptr);
    Octree t;
    t.options = options;
    const Buffer pts = uploadPoints(ctx, points);
    t.cube = deviceRootCube(d, k, points, pts);
    const uint64_t n = points.count;
    t.point_count = n;
    const int depth_limit = t.cube.side > 0 ? options.max_depth : 0;
    // The serial twin's accounting: keys + order, the sort's scratch or the
    // top-down ping-pong buffers, 24 bytes per point (here on the device).
    requireMemory("octree keys", n * 24, options.memory_budget);
    const uint64_t held = n * 24;
    Buffer keys = deviceBuffer(ctx, "octree keys", n * sizeof(uint64_t));
    Buffer order = deviceBuffer(ctx, "octree order", n * sizeof(uint32_t));
    deviceKeys(d, k, pts, n, t.cube, keys, order.get());
    if (options.method == OctreeMethod::kTopDown) {
      t.layout = OctreeLayout::kLevelOrder;
      buildTopDown(d, k, t, pts, keys, order, depth_limit, options.leaf_size, options.split == OctreeSplit::kData,
                   options.memory_budget, held);
    } else {
      d.sort.sort(keys.get(), order.get(), n);
      if (options.compressed) {
        t.layout = OctreeLayout::kPostOrder;
        buildCompressed(d, k, t, keys, depth_limit, options.full, options.memory_budget, held);
      } else {
        t.layout = OctreeLayout::kLevelOrder;
        buildBucketed(d, k, t, keys, depth_limit, options.leaf_size, options.memory_budget, held);
      }
    }
    t.keys.resize(n);
    t.order.resize(n);
    keys.read(t.keys.data(), n * sizeof(uint64_t));
    order.read(t.order.data(), n * sizeof(uint32_t));
    if (options.sorted_points) {
      requireMemory("octree sorted points", n * 24, options.memory_budget, held + t.size() * kNodeBytes);
      Buffer xyz = deviceBuffer(ctx, "octree sorted points", 3 * n * sizeof(double));
      k.gather_points.arg(0, pts).arg(1, order).arg(2, cl_ulong{n}).arg(3, xyz).run(ctx, n, kLocal);
      t.xyz.resize(3 * n);
      xyz.read(t.xyz.data(), 3 * n * sizeof(double));
    }
    uint64_t empty = 0;  // one pass over the nodes, as the serial twin
    for (uint64_t x = 0; x < t.size(); ++x)
      if (t.begin[x] == t.end[x] && t.isLeaf(static_cast<uint32_t>(x))) ++empty;
    t.stats.empty_leaves = empty;
    return t;
  });
}

void locate(int device, const Octree& tree, const double* xyz, uint64_t m, uint32_t* out) {
  if (tree.layout != OctreeLayout::kLevelOrder || m == 0) {
    serial::locate(tree, xyz, 0, out);  // throws the serial twin's error for post-order trees
    return;
  }
  onDevice(device, "octreeLocate", [&](OctreeDevice& d) {
    Context& ctx = d.ctx;
    Kernels& k = d.kernels(false);
    const bool data = tree.options.split == OctreeSplit::kData;
    Buffer first_child(ctx, "octree first children"), level(ctx, "octree levels");
    Buffer axes(ctx, "octree split axes"), centre(ctx, "octree split centres");
    first_child.upload(tree.first_child.data(), tree.size() * sizeof(uint32_t));
    level.upload(tree.level.data(), tree.size());
    axes.upload(tree.split_axes.data(), data ? tree.size() : 0);
    centre.upload(tree.split_center.data(), data ? 3 * tree.size() * sizeof(double) : 0);
    const uint64_t batch = std::min(m, kQueryBatch);
    Buffer q = deviceBuffer(ctx, "octree queries", 3 * batch * sizeof(double));
    Buffer found = deviceBuffer(ctx, "octree located leaves", batch * sizeof(uint32_t));
    Kernel& lk = k.locate;
    lk.arg(0, first_child).arg(1, level).arg(2, axes).arg(3, centre).arg(4, cl_int{data ? 1 : 0});
    lk.arg(5, tree.cube.min[0]).arg(6, tree.cube.min[1]).arg(7, tree.cube.min[2]).arg(8, tree.cube.side);
    lk.arg(9, q).arg(11, found);
    for (uint64_t first = 0; first < m; first += batch) {
      const uint64_t count = std::min(batch, m - first);
      q.write(xyz + 3 * first, 3 * count * sizeof(double));
      lk.arg(10, cl_ulong{count}).run(ctx, count, kLocal);
      found.read(out + first, count * sizeof(uint32_t));
    }
    return 0;
  });
}

void knn(int device, const Octree& tree, const OctreePoints& points, const double* xyz, uint64_t m, uint32_t k,
         uint32_t* out, double* dist2) {
  requireCubeTree(tree, "octreeKnn");
  if (m == 0 || k == 0) return;
  onDevice(device, "octreeKnn", [&](OctreeDevice& d) {
    Context& ctx = d.ctx;
    Kernel& kk = d.kernels(points.xyz32 != nullptr).knn;
    const DeviceCubeTree dt(ctx, tree, points);
    dt.bind(kk, tree.cube);
    const size_t wg = ctx.workGroupSize(kk.get(), kLocal);  // a 7 KiB private stack per work item
    // Rows of k answers: batches of at most ~64 MiB of (index, distance²).
    const uint64_t batch =
        std::min<uint64_t>({m, kQueryBatch, std::max<uint64_t>(1, (uint64_t{64} << 20) / (12 * uint64_t{k}))});
    Buffer q = deviceBuffer(ctx, "octree queries", 3 * batch * sizeof(double));
    Buffer idx = deviceBuffer(ctx, "octree kNN indices", batch * k * sizeof(uint32_t));
    Buffer d2 = deviceBuffer(ctx, "octree kNN distances", batch * k * sizeof(double));
    kk.arg(11, q).arg(13, cl_uint{k}).arg(14, idx).arg(15, d2);
    for (uint64_t first = 0; first < m; first += batch) {
      const uint64_t count = std::min(batch, m - first);
      q.write(xyz + 3 * first, 3 * count * sizeof(double));
      kk.arg(12, cl_ulong{count}).run(ctx, count, wg);
      idx.read(out + first * k, count * k * sizeof(uint32_t));
      if (dist2) d2.read(dist2 + first * k, count * k * sizeof(double));
    }
    return 0;
  });
}

OctreeQueryResult radius(int device, const Octree& tree, const OctreePoints& points, const double* xyz, uint64_t m,
                         double r) {
  requireCubeTree(tree, "octreeRadius");
  // NaN finds nothing, as the serial twin's !(radius >= 0).
  const double r2 = r >= 0 ? r * r : std::numeric_limits<double>::quiet_NaN();
  return rangeQueries(device, "octreeRadius", tree, points, xyz, m, false, r2);
}

OctreeQueryResult box(int device, const Octree& tree, const OctreePoints& points, const double* boxes, uint64_t m) {
  requireCubeTree(tree, "octreeBox");
  return rangeQueries(device, "octreeBox", tree, points, boxes, m, true, 0.0);
}

void generate(int device, PointDistribution distribution, uint64_t n, uint64_t seed, double* xyz) {
  if (n == 0) return;
  // OpenCL C's double log, sin, cos and pow do not round like the host's libm
  // (PoCL: the last bit of ~8% of Gaussian coordinates, up to 6e-14 relative
  // for Plummer radii), and the points must be the serial twin's: those two
  // distributions are drawn by the serial twin; uniform draws are integer
  // arithmetic and one exact scaling, drawn on the device.
  if (distribution != PointDistribution::kUniform) return serial::generate(distribution, n, seed, xyz);
  onDevice(device, "generatePoints", [&](OctreeDevice& d) {
    const uint64_t batch = std::min(n, kQueryBatch);
    Buffer out = deviceBuffer(d.ctx, "generated points", 3 * batch * sizeof(double));
    Kernel& gk = d.kernels(false).generate;
    gk.arg(0, cl_int{static_cast<int>(distribution)}).arg(1, cl_ulong{seed}).arg(4, out);
    for (uint64_t first = 0; first < n; first += batch) {
      const uint64_t count = std::min(batch, n - first);
      gk.arg(2, cl_ulong{first}).arg(3, cl_ulong{count}).run(d.ctx, count, kLocal);
      out.read(xyz + 3 * first, 3 * count * sizeof(double));
    }
    return 0;
  });
}

}  // namespace procgen::octree_impl::opencl
