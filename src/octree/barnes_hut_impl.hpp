// Barnes–Hut and the direct sum (include/procgen/nbody.hpp), written once over
// a parallel policy `Par` with `forEachRange(n, grain, f(begin, end))`: the
// serial twin calls f(0, n), the cpu twin runs CpuExecutor chunks
// (serial/barnes_hut.cpp, cpu/barnes_hut.cpp).
//
// Paper: J. Barnes, P. Hut, "A hierarchical O(N log N) force-calculation
// algorithm", Nature 324 (1986); the octree is the seed's
// (shared/seeds/004_ce32dc12e32b896e.txt §4–§5, docs/octree.md). Stages:
//  1. monopoles, level by level from the deepest: a leaf sums its points
//     (mass, mass-weighted position, in `order` order), an internal node its
//     8 children in digit order; centre = weighted sum / mass. Data trees also
//     get the bounding box of their points (the cell size of the criterion).
//  2. one walk per target, in sorted (`order`) position for locality: a stack,
//     children pushed so that digit 0 is visited first; a node not containing
//     the target with s < θ·d is one mass at its centre, an opened leaf is
//     summed point by point (gravity.h), a node containing the target is
//     always opened (no self-attraction).
// Each target's sum belongs to one thread and runs in a fixed order: results
// are identical on every backend and thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

#include "octree/gravity.h"
#include "procgen/memory.hpp"
#include "procgen/nbody.hpp"
#include "procgen/octree.hpp"

namespace procgen::nbody_impl {

/// Mass per point: masses[i], or the equal mass 1/n.
struct MassOf {
  const double* masses;
  double equal;
  double operator()(uint64_t i) const { return masses ? masses[i] : equal; }
};

/// Per node: mass, centre of mass (3), and the squared cell size s² of the
/// opening criterion.
struct Monopoles {
  OverwriteVector<double> mass, center, size2;
};

/// Coordinates of the point at sorted position j (the tree's copy when it has one).
inline void sortedPoint(const Octree& tree, const OctreePoints& points, uint64_t j, double p[3]) {
  if (!tree.xyz.empty()) {
    p[0] = tree.xyz[3 * j], p[1] = tree.xyz[3 * j + 1], p[2] = tree.xyz[3 * j + 2];
    return;
  }
  const uint32_t i = tree.order[j];
  for (int a = 0; a < 3; ++a) p[a] = points.coord(i, a);
}

template <typename Par>
Monopoles monopoles(Par& par, const Octree& tree, const OctreePoints& points, MassOf mass_of) {
  const uint64_t nodes = tree.size();
  const bool data = tree.options.split == OctreeSplit::kData;
  Monopoles m;
  m.mass.resize(nodes);
  m.center.resize(3 * nodes);
  m.size2.resize(nodes);
  OverwriteVector<double> box(data ? 6 * nodes : 0);  // lo xyz, hi xyz
  // Level order: levels ascend with the node index; [level_begin[l], level_begin[l+1]).
  int depth = 0;
  for (uint64_t i = 0; i < nodes; ++i) depth = std::max(depth, int(tree.level[i]));
  std::vector<uint64_t> level_begin(size_t(depth) + 2, nodes);
  for (uint64_t i = nodes; i-- > 0;) level_begin[tree.level[i]] = i;
  for (int l = depth; l >= 0; --l) {
    const uint64_t lo = level_begin[size_t(l)], hi = level_begin[size_t(l) + 1];
    par.forEachRange(hi - lo, 256, [&](uint64_t b, uint64_t e) {
      for (uint64_t node = lo + b; node < lo + e; ++node) {
        double mass = 0, sx = 0, sy = 0, sz = 0;
        double bl[3] = {INFINITY, INFINITY, INFINITY}, bh[3] = {-INFINITY, -INFINITY, -INFINITY};
        const uint32_t fc = tree.first_child[node];
        if (fc == kOctreeNone) {
          for (uint64_t j = tree.begin[node]; j < tree.end[node]; ++j) {
            double p[3];
            sortedPoint(tree, points, j, p);
            const double w = mass_of(tree.order[j]);
            mass += w, sx += w * p[0], sy += w * p[1], sz += w * p[2];
            for (int a = 0; a < 3; ++a) bl[a] = std::min(bl[a], p[a]), bh[a] = std::max(bh[a], p[a]);
          }
        } else {
          for (uint32_t c = fc; c < fc + 8; ++c) {
            const double w = m.mass[c];
            mass += w, sx += w * m.center[3 * c], sy += w * m.center[3 * c + 1], sz += w * m.center[3 * c + 2];
            if (data)
              for (int a = 0; a < 3; ++a)
                bl[a] = std::min(bl[a], box[6 * c + a]), bh[a] = std::max(bh[a], box[6 * c + 3 + a]);
          }
        }
        m.mass[node] = mass;
        m.center[3 * node] = mass > 0 ? sx / mass : 0;
        m.center[3 * node + 1] = mass > 0 ? sy / mass : 0;
        m.center[3 * node + 2] = mass > 0 ? sz / mass : 0;
        double s;
        if (data) {
          for (int a = 0; a < 3; ++a) box[6 * node + a] = bl[a], box[6 * node + 3 + a] = bh[a];
          s = tree.begin[node] == tree.end[node] ? 0 : std::max({bh[0] - bl[0], bh[1] - bl[1], bh[2] - bl[2]});
        } else {
          s = std::ldexp(tree.cube.side, -int(tree.level[node]));
        }
        m.size2[node] = s * s;
      }
    });
  }
  return m;
}

/// Barnes–Hut at every point; acceleration (3n) and potential (n) in input order.
template <typename Par>
uint64_t barnesHut(Par& par, const Octree& tree, const OctreePoints& points, MassOf mass_of, const Monopoles& m,
                   const NbodyOptions& options, double* acceleration, double* potential) {
  const uint64_t n = tree.point_count;
  const double theta2 = options.theta * options.theta, eps2 = options.softening * options.softening;
  const double g = options.gravity;
  std::atomic<uint64_t> interactions{0};
  par.forEachRange(n, 512, [&](uint64_t b, uint64_t e) {
    uint32_t stack[8 * (kOctreeMaxLevel + 1) + 1];
    uint64_t count = 0;
    for (uint64_t t = b; t < e; ++t) {
      double x[3];
      sortedPoint(tree, points, t, x);
      PgGravitySum s = {0, 0, 0, 0};
      int top = 0;
      stack[top++] = tree.root;
      while (top > 0) {
        const uint32_t node = stack[--top];
        if (m.mass[node] == 0) continue;
        const bool contains = tree.begin[node] <= t && t < tree.end[node];
        if (!contains) {
          const double dx = m.center[3 * node] - x[0], dy = m.center[3 * node + 1] - x[1],
                       dz = m.center[3 * node + 2] - x[2];
          if (m.size2[node] < theta2 * (dx * dx + dy * dy + dz * dz)) {
            pgGravityAdd(&s, dx, dy, dz, m.mass[node], eps2);
            ++count;
            continue;
          }
        }
        const uint32_t fc = tree.first_child[node];
        if (fc == kOctreeNone) {
          for (uint64_t j = tree.begin[node]; j < tree.end[node]; ++j) {
            if (j == t) continue;
            double p[3];
            sortedPoint(tree, points, j, p);
            pgGravityAdd(&s, p[0] - x[0], p[1] - x[1], p[2] - x[2], mass_of(tree.order[j]), eps2);
            ++count;
          }
        } else {
          for (uint32_t c = 8; c-- > 0;) stack[top++] = fc + c;
        }
      }
      const uint32_t i = tree.order[t];
      acceleration[3 * uint64_t(i)] = g * s.ax;
      acceleration[3 * uint64_t(i) + 1] = g * s.ay;
      acceleration[3 * uint64_t(i) + 2] = g * s.az;
      potential[i] = g * s.phi;
    }
    interactions.fetch_add(count, std::memory_order_relaxed);
  });
  return interactions.load();
}

/// The direct sum at targets[0..count) (nullptr: every point, in input order).
template <typename Par>
uint64_t directSum(Par& par, const OctreePoints& points, MassOf mass_of, const uint32_t* targets, uint64_t count,
                   const NbodyOptions& options, double* acceleration, double* potential) {
  const uint64_t n = points.count;
  const double eps2 = options.softening * options.softening, g = options.gravity;
  par.forEachRange(count, 16, [&](uint64_t b, uint64_t e) {
    for (uint64_t t = b; t < e; ++t) {
      const uint64_t i = targets ? targets[t] : t;
      const double x = points.coord(i, 0), y = points.coord(i, 1), z = points.coord(i, 2);
      PgGravitySum s = {0, 0, 0, 0};
      for (uint64_t j = 0; j < n; ++j) {
        if (j == i) continue;
        pgGravityAdd(&s, points.coord(j, 0) - x, points.coord(j, 1) - y, points.coord(j, 2) - z, mass_of(j), eps2);
      }
      acceleration[3 * t] = g * s.ax, acceleration[3 * t + 1] = g * s.ay, acceleration[3 * t + 2] = g * s.az;
      potential[t] = g * s.phi;
    }
  });
  return count * (n > 0 ? n - 1 : 0);
}

}  // namespace procgen::nbody_impl
