// Stanford PLY (binary little-endian by default): vertices with x y z, red
// green blue (palette colour of their element) and instance; `edge` elements
// (vertex1, vertex2) for segments, `face` elements for polygons and tube quads.
// Elements are in string order, segments before polygons. The header needs the
// counts up front, so a first pass counts with the same sharing rule.
#include <limits>

#include "io/geometry/cylinder_mesh.hpp"
#include "io/geometry/mesh_common.hpp"
#include "io/output_file.hpp"
#include "io/ply_format.hpp"
#include "io/geometry/writers.hpp"
#include "procgen/error.hpp"

namespace procgen::io {
namespace {

// A segment reuses the previous segment's end vertex only when position,
// colour and instance all match, because colour and instance are per vertex.
bool sharesStart(const Geometry& g, size_t i) {
  if (i == 0) return false;
  const Segment& a = g.segments[i - 1];
  const Segment& b = g.segments[i];
  return a.color == b.color && a.instance == b.instance && sameBits(a.end, b.start);
}

class PlyBody {
 public:
  PlyBody(OutputStream& out, bool ascii) : records_(out, ascii) {}

  void vertex(const Vec3& p, Rgb8 c, int32_t instance) {
    records_.record(p.x, p.y, p.z, c.r, c.g, c.b, instance);
  }

  void edge(uint32_t a, uint32_t b) { records_.record(static_cast<int32_t>(a), static_cast<int32_t>(b)); }

  void faceBegin(uint32_t n, bool wide_count) {
    if (wide_count) records_.i32(static_cast<int32_t>(n));
    else records_.u8(static_cast<uint8_t>(n));
  }
  void faceIndex(uint32_t index) { records_.i32(static_cast<int32_t>(index)); }
  void faceEnd() { records_.end(); }

 private:
  PlyRecords records_;
};

}  // namespace

void writePly(const Geometry& geometry, ByteSink& sink, const WriteOptions& options) {
  const Geometry& g = geometry;
  CylinderMesher mesher(options.cylinder_sides);

  uint64_t vertices = 0, edges = 0, faces = 0;
  uint64_t max_face = 4;
  if (options.cylinders) {
    vertices = g.segments.size() * uint64_t{mesher.verticesPerSegment()};
    faces = g.segments.size() * static_cast<uint64_t>(mesher.sides());
  } else {
    for (size_t i = 0; i < g.segments.size(); ++i) vertices += sharesStart(g, i) ? 1 : 2;
    edges = g.segments.size();
  }
  for (size_t p = 0; p < g.polygonCount(); ++p) {
    if (!drawablePolygon(g, p)) continue;
    uint64_t n = g.polygon_offsets[p + 1] - g.polygon_offsets[p];
    vertices += n;
    faces += 1;
    max_face = std::max(max_face, n);
  }
  // PLY indices are written as int; larger models need another format.
  if (vertices > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
    throw OutputError("cannot write '" + sink.name() + "': " + std::to_string(vertices) +
                      " vertices exceed the PLY int index range; use .obj");
  const bool wide_count = max_face > 255;

  OutputStream out(sink);
  plyHeaderStart(out, options.ply_ascii);
  out.text("comment procgen: ");
  out.text(options.cylinders ? "segments as tube quads, polygons as faces\n"
                             : "segments as edges, polygons as faces\n");
  out.text("element vertex ");
  out.number(vertices);
  out.text(
      "\nproperty float x\nproperty float y\nproperty float z\n"
      "property uchar red\nproperty uchar green\nproperty uchar blue\nproperty int instance\n");
  if (!options.cylinders) {
    out.text("element edge ");
    out.number(edges);
    out.text("\nproperty int vertex1\nproperty int vertex2\n");
  }
  out.text("element face ");
  out.number(faces);
  out.text(wide_count ? "\nproperty list int int vertex_indices\n"
                      : "\nproperty list uchar int vertex_indices\n");
  out.text("end_header\n");

  PlyBody body(out, options.ply_ascii);
  std::vector<Vec3> ring(mesher.verticesPerSegment());
  for (size_t i = 0; i < g.segments.size(); ++i) {
    const Segment& s = g.segments[i];
    Rgb8 c = paletteRgb8(s.color);
    if (options.cylinders) {
      mesher.vertices(s, ring.data(), nullptr);
      for (const Vec3& v : ring) body.vertex(v, c, s.instance);
    } else {
      if (!sharesStart(g, i)) body.vertex(s.start, c, s.instance);
      body.vertex(s.end, c, s.instance);
    }
  }
  for (size_t p = 0; p < g.polygonCount(); ++p) {
    if (!drawablePolygon(g, p)) continue;
    Rgb8 c = paletteRgb8(g.polygon_colors[p]);
    for (uint64_t v = g.polygon_offsets[p]; v < g.polygon_offsets[p + 1]; ++v)
      body.vertex(g.polygon_vertices[v], c, g.polygon_instances[p]);
  }

  uint32_t next = 0;
  if (options.cylinders) {
    for (size_t i = 0; i < g.segments.size(); ++i, next += mesher.verticesPerSegment()) {
      for (int k = 0; k < mesher.sides(); ++k) {
        body.faceBegin(4, wide_count);
        for (uint32_t local : mesher.quad(k)) body.faceIndex(next + local);
        body.faceEnd();
      }
    }
  } else {
    for (size_t i = 0; i < g.segments.size(); ++i) {
      uint32_t a = sharesStart(g, i) ? next - 1 : next++;
      body.edge(a, next++);
    }
  }
  for (size_t p = 0; p < g.polygonCount(); ++p) {
    if (!drawablePolygon(g, p)) continue;
    uint32_t n = static_cast<uint32_t>(g.polygon_offsets[p + 1] - g.polygon_offsets[p]);
    body.faceBegin(n, wide_count);
    for (uint32_t k = 0; k < n; ++k) body.faceIndex(next++);
    body.faceEnd();
  }
  out.close();
}

// A triangle mesh: vertices with position, normal and height colour; faces
// as 3-index lists.
void writePly(const TriangleMesh& mesh, ByteSink& sink, const WriteOptions& options) {
  if (mesh.vertexCount() > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
    throw OutputError("cannot write '" + sink.name() + "': " + std::to_string(mesh.vertexCount()) +
                      " vertices exceed the PLY int index range; use .obj");
  const std::vector<Vec3> colors = meshHeightColors(mesh);
  OutputStream out(sink);
  plyHeaderStart(out, options.ply_ascii);
  out.text("comment procgen: triangle mesh, colour by height\nelement vertex ");
  out.number(static_cast<uint64_t>(mesh.vertexCount()));
  out.text(
      "\nproperty float x\nproperty float y\nproperty float z\n"
      "property float nx\nproperty float ny\nproperty float nz\n"
      "property uchar red\nproperty uchar green\nproperty uchar blue\nelement face ");
  out.number(static_cast<uint64_t>(mesh.triangleCount()));
  out.text("\nproperty list uchar int vertex_indices\nend_header\n");
  PlyRecords records(out, options.ply_ascii);
  auto byte = [](float v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)); };
  for (size_t i = 0; i < mesh.vertexCount(); ++i) {
    const Vec3 &p = mesh.positions[i], &n = mesh.normals[i], &c = colors[i];
    records.record(p.x, p.y, p.z, n.x, n.y, n.z, byte(c.x), byte(c.y), byte(c.z));
  }
  for (size_t t = 0; t < mesh.triangleCount(); ++t)
    records.record(uint8_t{3}, static_cast<int32_t>(mesh.indices[3 * t]), static_cast<int32_t>(mesh.indices[3 * t + 1]),
                   static_cast<int32_t>(mesh.indices[3 * t + 2]));
  out.close();
}

}  // namespace procgen::io
