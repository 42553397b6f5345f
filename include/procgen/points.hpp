// procgen point sets: positions with optional colours, normals and scalar
// properties, written as Stanford PLY (binary little-endian or ASCII) that
// MeshLab, CloudCompare, ParaView, Blender and Open3D read
// (docs/output-formats.md shows the header); and point sets read from PLY,
// OFF, XYZ and OBJ files or sampled on the surface of a mesh (issue 18
// point 1; docs/points.md describes what each reader accepts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "procgen/geometry.hpp"
#include "procgen/mesh.hpp"
#include "procgen/output.hpp"

namespace procgen {

/// One float property per point, e.g. density or age.
struct PointScalar {
  std::string name;  ///< PLY property name: [A-Za-z_][A-Za-z0-9_]*, not x y z nx ny nz red green blue
  const float* values = nullptr;  ///< one per point
};

/// A caller's point set, read-only. Every non-null array has `count` entries.
struct PointSetView {
  size_t count = 0;
  const Vec3* positions = nullptr;   ///< required (unless count is 0)
  const uint8_t* colors = nullptr;   ///< optional: R, G, B bytes per point (3 × count)
  const Vec3* normals = nullptr;     ///< optional
  std::vector<PointScalar> scalars;  ///< optional, in this order
};

struct PointWriteOptions {
  bool ascii = false;  ///< ASCII PLY instead of binary_little_endian
};

/// Writes the point set as PLY into `sink`, then sink.finish(). Header:
///   element vertex N
///   property float x / y / z
///   property float nx / ny / nz          (with normals)
///   property uchar red / green / blue    (with colours)
///   property float NAME                  (per scalar, in order)
/// Points in the view's order; ASCII floats are the shortest text that
/// reads back to the same float. Throws Error (kUsage) for a bad view (missing
/// positions, a scalar without values, an invalid or repeated property name),
/// OutputError when the sink fails. Deterministic; linear in the points.
void writePointsPly(const PointSetView& points, ByteSink& sink, const PointWriteOptions& options = {});

/// The PLY file's bytes, in memory.
std::vector<uint8_t> encodePointsPly(const PointSetView& points, const PointWriteOptions& options = {});

/// Writes the PLY file at `path` (any extension). Throws as above.
void writePointsPly(const PointSetView& points, const std::filesystem::path& path,
                    const PointWriteOptions& options = {});

// ---------------------------------------------------------------------------
// Point sets in
// ---------------------------------------------------------------------------

/// Coordinates read from a file, x y z per point, in file order. Exactly one
/// of xyz32 / xyz64 holds 3 × count values: xyz32 when the file stores every
/// coordinate as a 32-bit float (PLY `float x/y/z`), so a large binary cloud
/// costs 12 bytes a point; xyz64 otherwise (PLY double or integer
/// coordinates, and the text formats OFF, XYZ and OBJ, read as double).
struct PointCloud {
  std::vector<float> xyz32;
  std::vector<double> xyz64;
  uint64_t count = 0;
  /// Coordinate `axis` (0 x, 1 y, 2 z) of point i, widened to double.
  double coord(uint64_t i, int axis) const {
    return xyz32.empty() ? xyz64[3 * i + axis] : static_cast<double>(xyz32[3 * i + axis]);
  }
};

enum class PointFileFormat {
  kPly,  ///< Stanford PLY: ascii, binary_little_endian, binary_big_endian
  kOff,  ///< Object File Format (OFF, COFF, NOFF, CNOFF, STOFF headers)
  kXyz,  ///< text, one point a line: x y z, more columns ignored, # comments
  kObj,  ///< Wavefront OBJ: `v` lines (points), `f` lines (faces)
};

/// The format of a file name's extension, case-insensitive: .ply; .off;
/// .xyz, .txt, .pts, .csv (XYZ text); .obj. nullopt for anything else.
std::optional<PointFileFormat> pointFileFormat(const std::filesystem::path& path);

/// "PLY", "OFF", "XYZ", "OBJ".
const char* pointFileFormatName(PointFileFormat format);

struct PointReadOptions {
  /// The coordinate array (and a mesh's triangles) count against this budget
  /// together with the file's bytes (0 = half the physical memory,
  /// procgen/budget.hpp): ResourceError before allocating.
  uint64_t memory_budget_bytes = 0;
};

/// The points (vertices) of a point file held in memory; `name` is the file
/// name used in messages. PLY: the `vertex` element's x, y, z properties
/// (float or double; any integer type is read too), every other property
/// and element skipped, list properties included; ASCII and both binary
/// byte orders. OFF: the vertex block (extra columns such as colours
/// ignored). XYZ: the first three numbers of every line that is not blank or
/// a comment (`#` to the end of the line; numbers separated by spaces, tabs
/// or commas). OBJ: the `v` lines.
/// Errors — the file is read whole before anything is returned, so a caller
/// that fails writes nothing:
///  - malformed text (a bad header line, a missing or non-numeric value, a
///    record with too many values, a count the file cannot hold, a face index
///    out of range): ParseError with file:line:col (ExitCode::kBadInput);
///  - malformed binary PLY data (truncated, a negative list count): Error
///    (kBadInput) naming the element, the record and the byte offset;
///  - a NaN or infinite coordinate: ParseError at its line (text) or Error
///    naming the vertex (binary): "point 17: coordinate y is NaN";
///  - no points at all: Error (kBadInput);
///  - more than the memory budget: ResourceError before allocating.
/// A header's counts are checked against the bytes that follow before
/// anything is allocated, so `element vertex 10000000000` in a small file is
/// a parse error, not an allocation. Deterministic; linear in the file size.
PointCloud parsePointFile(std::string_view bytes, PointFileFormat format, std::string_view name,
                          const PointReadOptions& options = {});

/// Reads `path` (readInputFile: regular files and pipes, sized against the
/// budget) and parses it by its extension (pointFileFormat); an unknown
/// extension is an Error (kBadInput).
PointCloud readPointFile(const std::filesystem::path& path, const PointReadOptions& options = {});

/// The faces of a mesh file as triangles: PLY `face` elements (list property
/// vertex_indices or vertex_index), OFF faces, OBJ `f` lines (v, v/t, v//n,
/// v/t/n; negative indices count back from the last vertex). A polygon of n
/// vertices becomes the fan (0, i, i+1), i = 1 .. n−2; faces of fewer than 3
/// vertices are skipped. Positions are the file's vertices as float; normals
/// the area-weighted average of the adjacent faces' normals (unit length;
/// +Y for a vertex without area). Errors as parsePointFile, plus a face
/// index outside the vertices (ParseError at the index in text files) and a
/// mesh without faces (Error, kBadInput). XYZ files have no faces.
TriangleMesh parseMeshFile(std::string_view bytes, PointFileFormat format, std::string_view name,
                           const PointReadOptions& options = {});

/// readInputFile + parseMeshFile by extension.
TriangleMesh readMeshFile(const std::filesystem::path& path, const PointReadOptions& options = {});

/// The surface of turtle geometry (an L-system's output) as triangles: every
/// segment an open tube of `sides` quads of radius width/2 (the cylinders of
/// the OBJ/PLY/glTF writers), every polygon of 3 or more vertices a fan.
/// Throws Error (kUsage) when sides is outside 3..64, ResourceError beyond
/// the budget (0 = default) or 2^32 − 1 vertices.
TriangleMesh geometrySurface(const Geometry& geometry, int sides = 8, uint64_t memory_budget_bytes = 0);

/// Writes 3n doubles x y z: n points on the surface of `mesh`, area-weighted
/// (a triangle is chosen with probability proportional to its area, the
/// point uniformly inside it: barycentric (1 − √u, √u(1 − v), √u·v)). Point
/// i depends only on (seed, i) — one Philox4x32-10 block keyed by the seed
/// with counter (i, phase "surf") — so the result is the same on every run
/// and machine with the same libm sqrt (IEEE: exact). Areas and points in
/// double from the float positions. Throws Error (kBadInput) when the mesh
/// has no triangle of positive area, ResourceError when the cumulative
/// areas (8 bytes a triangle) exceed the budget. O(T + n log T), serial.
void sampleSurface(const TriangleMesh& mesh, uint64_t n, uint64_t seed, double* xyz,
                   uint64_t memory_budget_bytes = 0);

}  // namespace procgen
