// Barnes–Hut and the direct sum, opencl backend: host driver of
// barnes_hut.cl. The monopoles are the serial twin's (stage 1 is O(nodes));
// the host lays the points out in sorted order with their masses, uploads the
// tree's links and ranges, runs one work-item per target and reads back the
// accelerations, potentials and per-target interaction counts.
// Paper: Barnes and Hut, Nature 324 (1986).
#include <numeric>
#include <vector>

#include "octree/nbody_stages.hpp"
#include "opencl/runtime.hpp"

namespace procgen::nbody_impl::opencl {

using procgen::opencl::Buffer;
using procgen::opencl::Context;
using procgen::opencl::Kernel;

namespace {

struct NbodyDevice {
  explicit NbodyDevice(Context& c)
      : ctx(c),
        first_child(c, "octree child links"),
        begin(c, "octree node ranges"),
        end(c, "octree node ranges"),
        node_mass(c, "node masses"),
        center(c, "node centres of mass"),
        size2(c, "node sizes"),
        xyz(c, "n-body points"),
        mass(c, "n-body masses"),
        order(c, "octree point order"),
        acc(c, "accelerations"),
        pot(c, "potentials"),
        counts(c, "interaction counts") {
    cl_program p = c.program("octree/opencl/barnes_hut.cl");
    walk = Kernel(p, "barnesHut");
    direct = Kernel(p, "directSum");
    wg = c.workGroupSize(walk.get(), 64);
  }
  Context& ctx;
  Buffer first_child, begin, end, node_mass, center, size2, xyz, mass, order, acc, pot, counts;
  Kernel walk, direct;
  size_t wg;
};

}  // namespace

uint64_t barnesHut(int device, const Octree& tree, const OctreePoints& points, MassOf mass_of,
                   const NbodyOptions& options, double* acceleration, double* potential) {
  const Monopoles m = serial::monopoles(tree, points, mass_of);
  const uint64_t n = tree.point_count, nodes = tree.size();
  std::vector<double> xyz(3 * n), mass(n);
  for (uint64_t j = 0; j < n; ++j) {
    sortedPoint(tree, points, j, &xyz[3 * j]);
    mass[j] = mass_of(tree.order[j]);
  }
  std::vector<uint64_t> counts(n);
  procgen::opencl::withState<NbodyDevice>(device, [&](NbodyDevice& d) {
    d.first_child.upload(tree.first_child.data(), nodes * sizeof(uint32_t));
    d.begin.upload(tree.begin.data(), nodes * sizeof(uint32_t));
    d.end.upload(tree.end.data(), nodes * sizeof(uint32_t));
    d.node_mass.upload(m.mass.data(), nodes * sizeof(double));
    d.center.upload(m.center.data(), 3 * nodes * sizeof(double));
    d.size2.upload(m.size2.data(), nodes * sizeof(double));
    d.xyz.upload(xyz.data(), 3 * n * sizeof(double));
    d.mass.upload(mass.data(), n * sizeof(double));
    d.order.upload(tree.order.data(), n * sizeof(uint32_t));
    d.acc.reserve(3 * n * sizeof(double));
    d.pot.reserve(n * sizeof(double));
    d.counts.reserve(n * sizeof(uint64_t));
    d.walk.arg(0, cl_ulong{n}).arg(1, cl_uint{tree.root}).arg(2, d.first_child).arg(3, d.begin).arg(4, d.end);
    d.walk.arg(5, d.node_mass).arg(6, d.center).arg(7, d.size2).arg(8, d.xyz).arg(9, d.mass).arg(10, d.order);
    d.walk.arg(11, options.theta * options.theta).arg(12, options.softening * options.softening);
    d.walk.arg(13, options.gravity).arg(14, d.acc).arg(15, d.pot).arg(16, d.counts);
    d.walk.run(d.ctx, n, d.wg);
    d.acc.read(acceleration, 3 * n * sizeof(double));
    d.pot.read(potential, n * sizeof(double));
    d.counts.read(counts.data(), n * sizeof(uint64_t));
  });
  return std::accumulate(counts.begin(), counts.end(), uint64_t{0});
}

uint64_t directSum(int device, const OctreePoints& points, MassOf mass_of, const uint32_t* targets, uint64_t count,
                   const NbodyOptions& options, double* acceleration, double* potential) {
  const uint64_t n = points.count;
  std::vector<double> xyz(3 * n), mass(n);
  for (uint64_t i = 0; i < n; ++i) {
    for (int a = 0; a < 3; ++a) xyz[3 * i + a] = points.coord(i, a);
    mass[i] = mass_of(i);
  }
  std::vector<uint32_t> all;
  if (!targets) {
    all.resize(count);
    std::iota(all.begin(), all.end(), 0u);
    targets = all.data();
  }
  if (count == 0) return 0;
  procgen::opencl::withState<NbodyDevice>(device, [&](NbodyDevice& d) {
    d.order.upload(targets, count * sizeof(uint32_t));
    d.xyz.upload(xyz.data(), 3 * n * sizeof(double));
    d.mass.upload(mass.data(), n * sizeof(double));
    d.acc.reserve(3 * count * sizeof(double));
    d.pot.reserve(count * sizeof(double));
    d.direct.arg(0, cl_ulong{n}).arg(1, cl_ulong{count}).arg(2, d.order).arg(3, d.xyz).arg(4, d.mass);
    d.direct.arg(5, options.softening * options.softening).arg(6, options.gravity).arg(7, d.acc).arg(8, d.pot);
    d.direct.run(d.ctx, count, d.wg);
    d.acc.read(acceleration, 3 * count * sizeof(double));
    d.pot.read(potential, count * sizeof(double));
  });
  return count * (n - 1);
}

}  // namespace procgen::nbody_impl::opencl
