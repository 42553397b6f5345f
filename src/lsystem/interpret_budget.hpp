// The interpretation's memory budget (issue 16, "one budget for every stage"):
// before the turtle draws, the homomorphism expansion (paper §5, cpfg's
// on-the-fly homomorphism) and the geometry it makes are sized, so a model
// whose drawing would exhaust the machine stops before allocating, naming the
// stage and the size, on every backend alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "lsystem/lsystem_data.hpp"
#include "lsystem/turtle.h"

namespace procgen::detail {

/// Bytes counted per module of a homomorphism expansion: the largest of the
/// backends' buffers (cpu: per-chunk pieces then one flat copy; opencl: two
/// level strings with group offsets).
inline constexpr uint64_t kExpandedModuleBytes = 32;

/// What interpreting modules [begin, end) of `string` allocates at most.
struct InterpretSize {
  uint64_t modules = 0;   ///< modules the turtle reads (after homomorphism expansion), an upper bound
  uint64_t elements = 0;  ///< segments + polygon-vertex records + polygon closes, an upper bound
  uint64_t bytes = 0;     ///< expansion buffers plus output arrays
};

/// Sizes the interpretation of modules [begin, end) of `string` by `data`
/// (whose homomorphism productions draw with `seed`) and checks it: throws
/// ResourceError naming `stage` when the expansion exceeds `max_modules`
/// (0: no limit) or when its bytes plus `held_bytes` exceed the memory budget
/// (`budget_bytes` 0: defaultMemoryBudget()). The homomorphism expansion is
/// bounded per symbol over the recursion depth (exact for unconditional
/// productions); only when the bounds straddle the limit are the expanded
/// modules counted (serially, stopping at the limit). O(end - begin) otherwise.
InterpretSize checkInterpretation(const LSystemData& data, const ModuleString& string, uint64_t begin,
                                  uint64_t end, uint64_t seed, uint64_t max_modules, uint64_t budget_bytes,
                                  uint64_t held_bytes, const std::string& stage);

/// Bit 31 is set when `f` is not finite: its exponent bits are all ones, so
/// adding one to the exponent field carries into the sign bit (below bit 31
/// otherwise). OR-ing it over many floats vectorizes: no branch, no float
/// arithmetic to keep in order.
inline uint32_t nonFiniteBit(float f) {
  uint32_t w;
  std::memcpy(&w, &f, sizeof w);
  return (w & 0x7f800000u) + 0x00800000u;
}

/// nonFiniteBit of a point's three coordinates, OR-ed.
inline uint32_t nonFiniteBit(const Vec3& v) { return nonFiniteBit(v.x) | nonFiniteBit(v.y) | nonFiniteBit(v.z); }

/// Whether no float behind `bits` (nonFiniteBit(s) OR-ed together) was non-finite.
inline bool finiteBits(uint64_t bits) { return !(bits & 0x80000000u); }

/// nonFiniteBit in four lanes at once (GCC/Clang vector extensions, so the
/// same source builds on any target).
typedef uint32_t NonFiniteLanes __attribute__((vector_size(16)));

/// nonFiniteBit of a, b, c and d, one per lane: three vector instructions
/// after the floats are gathered into one register from wherever they are.
/// (Built from values, not by loading a Segment just stored: a 16-byte load
/// of four 4-byte stores cannot be forwarded from the store buffer, and that
/// stall took 60 % of a serial interpretation.)
inline NonFiniteLanes nonFiniteLanes(float a, float b, float c, float d) {
  typedef float Floats __attribute__((vector_size(16)));
  const Floats v = {a, b, c, d};
  NonFiniteLanes w;
  std::memcpy(&w, &v, sizeof w);
  return (w & 0x7f800000u) + 0x00800000u;
}

/// nonFiniteLanes of every coordinate and the width of `s`.
inline NonFiniteLanes nonFiniteLanes(const Segment& s) {
  return nonFiniteLanes(s.start.x, s.start.y, s.start.z, s.end.x) | nonFiniteLanes(s.end.y, s.end.z, s.width, 0.0f);
}

/// nonFiniteLanes of a segment the turtle drew from where it stood to `t`:
/// its end and width. Its start needs no test: the turtle moved from it by
/// pos += h * len (turtle.h), and x + y is not finite when x is not, so a
/// non-finite start makes a non-finite end.
inline NonFiniteLanes nonFiniteDrawnLanes(const PgTurtle& t) {
  return nonFiniteLanes(t.pos[0], t.pos[1], t.pos[2], t.width);
}

/// Whether no float behind `lanes` (nonFiniteLanes OR-ed together) was non-finite.
inline bool finiteLanes(NonFiniteLanes lanes) { return finiteBits(lanes[0] | lanes[1] | lanes[2] | lanes[3]); }

/// Whether every coordinate and width of segments [0, n) is finite. O(n).
bool finiteSegments(const Segment* segments, size_t n);

/// Whether every coordinate of the polygon vertices of `geometry` is finite.
bool finitePolygonVertices(const Geometry& geometry);

/// Whether every coordinate and width of `geometry` is finite. O(geometry).
bool finiteGeometry(const Geometry& geometry);

/// Throws Error naming the module of `string` that drew the first non-finite
/// coordinate or width, and the module that made the turtle state non-finite
/// (the turtle replayed serially: call it only when finiteGeometry failed).
[[noreturn]] void throwNonFiniteGeometry(const LSystemData& data, const ModuleString& string,
                                         const InterpretOptions& options);

}  // namespace procgen::detail
