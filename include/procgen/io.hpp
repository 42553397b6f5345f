// procgen outputs. This header holds the geometry writers — turtle output
// (procgen::Geometry) to files that open in users' tools: OBJ and PLY
// (Blender, MeshLab), glTF 2.0 (any glTF viewer), SVG (a browser) and a PNG
// preview — and includes the other outputs:
//   procgen/output.hpp  ByteSink, MemorySink, FileSink: where bytes go
//   procgen/image.hpp   encodePng (8/16-bit gray, gray+alpha, RGB, RGBA), heightmaps
//   procgen/volume.hpp  raw float32 volumes with a JSON sidecar
//   procgen/points.hpp  point sets as PLY
// Every writer has a path variant, a ByteSink variant (streaming) and a
// memory variant; all three run the same format code, so they give the same
// bytes. docs/output-formats.md lists what each file contains.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "procgen/geometry.hpp"
#include "procgen/image.hpp"
#include "procgen/mesh.hpp"
#include "procgen/output.hpp"
#include "procgen/points.hpp"
#include "procgen/volume.hpp"

namespace procgen {

/// Orthographic views for the 2D formats (SVG, PNG). Every view is a rotation,
/// so widths in model units map to the same length on screen.
enum class Projection {
  kFront,  ///< camera on +Z looking down −Z: screen right = +X, up = +Y (the XY plane)
  kSide,   ///< camera on +X looking down −X: screen right = −Z, up = +Y (the ZY plane)
  kTop,    ///< camera on +Y looking down −Y: screen right = +X, up = −Z (the XZ plane)
  kIso,    ///< isometric: camera on (1,1,1) looking at the origin, +Y stays up
};

/// Parses "front", "side", "top" or "iso"; nullopt otherwise.
std::optional<Projection> parseProjection(std::string_view name);

struct WriteOptions {
  /// OBJ, PLY, glTF: segments become open tubes of `cylinder_sides` quads
  /// (2×sides vertices per segment, radius width/2) instead of line elements.
  bool cylinders = false;
  int cylinder_sides = 8;  ///< 3..64

  /// PNG size in pixels; SVG uses it as the nominal width/height attributes.
  int width = 1024;
  int height = 1024;
  /// PNG background, sRGB components in [0, 1].
  Vec3 background{0.96f, 0.96f, 0.94f};
  Projection projection = Projection::kFront;
  /// PNG and SVG: lines are drawn at least this wide (pixels), so that models
  /// whose widths are tiny next to their size still show.
  float min_line_px = 1.0f;

  bool ply_ascii = false;  ///< PLY: ASCII instead of binary little-endian
  bool obj_mtl = true;     ///< OBJ: write a companion .mtl with one material per colour
  /// OBJ: the material library's file name, written in the `mtllib` line.
  /// Path variant: empty = the output's name with extension .mtl, written
  /// beside it. Sink and memory variants write no file, and reference
  /// materials (mtllib + usemtl) only when this is set and obj_mtl is true;
  /// produce the library's bytes with writeObjMaterials.
  std::string obj_mtl_name;

  /// The writers' in-memory buffers (PNG raster, glTF buffers, cylinder
  /// meshes) are sized before allocating and count against this budget
  /// (0: defaultMemoryBudget(), half of the smallest memory limit, procgen/budget.hpp): ResourceError, exit 2.
  uint64_t memory_budget_bytes = 0;
};

/// The geometry formats; the extension names each one.
enum class GeometryFormat { kObj, kPly, kGlb, kGltf, kSvg, kPng };

/// The format of an extension (case-insensitive, with or without the dot:
/// "png", ".PNG"); nullopt for anything else.
std::optional<GeometryFormat> geometryFormatFromExtension(std::string_view ext);

/// Writes `geometry` to `path`, choosing the format by the extension
/// (case-insensitive): .obj, .ply, .glb, .gltf, .svg, .png.
///
/// Order: elements are written in the geometry's order (string order), segments
/// first, then polygons; OBJ groups elements per instance when there is more
/// than one (keeping string order inside each group). Polygons need at least 3
/// vertices; shorter ones are skipped.
///
/// Throws Error (ExitCode::kUsage) for an unsupported extension or bad options,
/// OutputError when a file cannot be created or written. Atomic: the file and
/// its companion (.mtl) appear together and complete, or not at all (FileSink,
/// OutputTransaction in procgen/output.hpp). Deterministic: the same geometry
/// and options give the same bytes.
/// Thread safety: concurrent calls on different paths are safe.
/// Complexity: linear in the geometry size; PNG also in the covered pixels;
/// glTF holds the whole file in memory (about twice the output size).
void writeGeometry(const Geometry& geometry, const std::filesystem::path& path,
                   const WriteOptions& options = {});

/// The files writeGeometry(geometry, path, options) writes: `path`, then for
/// OBJ with obj_mtl its material library (NAME.mtl beside it, or obj_mtl_name).
/// For callers that must know every output up front (clash checks).
std::vector<std::filesystem::path> geometryFiles(const std::filesystem::path& path,
                                                 const WriteOptions& options = {});

/// Writes `geometry` in `format` to `sink` (streaming: the sink receives the
/// bytes in order, in chunks of about 1 MiB; glTF is built whole first), then
/// calls sink.finish(). Same bytes as the path variant (for OBJ with the same
/// obj_mtl_name). Throws like the path variant; errors name sink.name().
void writeGeometry(const Geometry& geometry, GeometryFormat format, ByteSink& sink,
                   const WriteOptions& options = {});

/// The bytes of `geometry` in `format`, in memory (the sink variant into a MemorySink).
std::vector<uint8_t> encodeGeometry(const Geometry& geometry, GeometryFormat format,
                                    const WriteOptions& options = {});

/// OBJ's material library: one `color_N` material (diffuse = paletteColor(N))
/// for every colour index the geometry uses, ascending. The path variant of
/// writeGeometry writes this beside the .obj.
void writeObjMaterials(const Geometry& geometry, ByteSink& sink);

/// Writes a triangle mesh (an iso-surface or terrain, procgen/mesh.hpp) to
/// `path` by extension: .obj (v, vn, f a//a), .ply (binary little-endian
/// unless ply_ascii: x y z nx ny nz and red green blue, faces as uchar-int
/// lists), .glb / .gltf (one TRIANGLES primitive with POSITION, NORMAL and
/// COLOR_0), .png (a shaded render, WriteOptions projection/size/background;
/// the mesh lit from the upper left, Lambert with ambient, painter's order).
/// Colours (PLY, glTF, PNG) follow the height (y) through the terrain colour
/// map (image.hpp), low to high over the mesh's y range. Vertex and triangle
/// order are the mesh's. Throws Error (kUsage) for another extension (.svg)
/// or bad options, OutputError when the output fails. Deterministic bytes.
void writeMesh(const TriangleMesh& mesh, const std::filesystem::path& path, const WriteOptions& options = {});
/// The same into `sink`, then sink.finish().
void writeMesh(const TriangleMesh& mesh, GeometryFormat format, ByteSink& sink, const WriteOptions& options = {});
/// The bytes of writeMesh, in memory.
std::vector<uint8_t> encodeMesh(const TriangleMesh& mesh, GeometryFormat format, const WriteOptions& options = {});

/// True for the extensions writeGeometry accepts; `ext` may carry the leading
/// dot or not ("png", ".PNG").
bool isGeometryExtension(std::string_view ext);

/// The accepted extensions as a human-readable list, for messages and --help.
std::string_view geometryExtensionList();

/// The fixed default palette (cpfg-like): 0 brown for stems, 1–3 greens for
/// leaves, then yellow, red, pink, blue, ...; 16 entries, indices wrap (also
/// negative ones). sRGB components in [0, 1].
Vec3 paletteColor(int32_t index);

}  // namespace procgen
