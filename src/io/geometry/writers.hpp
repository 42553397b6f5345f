// One writer per geometry format, each writing to a ByteSink; writeGeometry
// (write_geometry.cpp) validates the options and dispatches, and its path
// variant runs the same writers on a FileSink.
#pragma once

#include <string>

#include "procgen/io.hpp"

namespace procgen::io {

/// `mtl_name`: the `mtllib` file name; empty = no material references.
void writeObj(const Geometry& geometry, ByteSink& sink, const WriteOptions& options,
              const std::string& mtl_name);
void writePly(const Geometry& geometry, ByteSink& sink, const WriteOptions& options);
/// `binary`: .glb container; otherwise .gltf JSON with the buffer embedded as a data URI.
void writeGltf(const Geometry& geometry, ByteSink& sink, const WriteOptions& options, bool binary);
void writeSvg(const Geometry& geometry, ByteSink& sink, const WriteOptions& options);
void writePngPreview(const Geometry& geometry, ByteSink& sink, const WriteOptions& options);

// Triangle meshes (procgen/mesh.hpp): the same formats, one function each.
void writeObj(const TriangleMesh& mesh, ByteSink& sink);
void writePly(const TriangleMesh& mesh, ByteSink& sink, const WriteOptions& options);
void writeGltf(const TriangleMesh& mesh, ByteSink& sink, bool binary);
void writePngPreview(const TriangleMesh& mesh, ByteSink& sink, const WriteOptions& options);

/// The colour of every vertex of a mesh: the terrain map over the mesh's y range.
std::vector<Vec3> meshHeightColors(const TriangleMesh& mesh);

/// 0..255 sRGB bytes of paletteColor(index).
struct Rgb8 {
  uint8_t r, g, b;
};
Rgb8 paletteRgb8(int32_t index);

}  // namespace procgen::io
