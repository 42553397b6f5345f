// Wavefront OBJ: `v` positions, `l` lines for segments (or `f` quads of tubes
// with `vn` normals), `f` faces for polygons; `o instance_N` per instance when
// there are several; materials `color_N` in a companion .mtl (OBJ has no
// standard per-vertex colour). Indices are 1-based and global across objects.
#include <set>

#include "io/geometry/cylinder_mesh.hpp"
#include "io/geometry/mesh_common.hpp"
#include "io/output_file.hpp"
#include "io/geometry/writers.hpp"

namespace procgen::io {
namespace {

void vertexLine(OutputStream& out, const char* tag, const Vec3& v) {
  out.text(tag);
  out.number(v.x);
  out.put(' ');
  out.number(v.y);
  out.put(' ');
  out.number(v.z);
  out.put('\n');
}

}  // namespace
}  // namespace procgen::io

namespace procgen {

void writeObjMaterials(const Geometry& geometry, ByteSink& sink) {
  std::set<int32_t> colors;
  for (const Segment& s : geometry.segments) colors.insert(s.color);
  colors.insert(geometry.polygon_colors.begin(), geometry.polygon_colors.end());
  io::OutputStream out(sink);
  out.text("# procgen materials: one per colour index of the default palette\n");
  for (int32_t c : colors) {
    Vec3 rgb = paletteColor(c);
    out.text("\nnewmtl color_");
    out.number(c);
    out.text("\nKa 0 0 0\nKs 0 0 0\nd 1\nillum 1\n");
    io::vertexLine(out, "Kd ", rgb);
  }
  out.close();
}

}  // namespace procgen

namespace procgen::io {

void writeObj(const Geometry& geometry, ByteSink& sink, const WriteOptions& options,
              const std::string& mtl_name) {
  std::vector<InstanceGroup> groups = groupByInstance(geometry);
  const bool materials = !mtl_name.empty();
  OutputStream out(sink);
  out.text("# procgen OBJ: ");
  out.number(static_cast<uint64_t>(geometry.segments.size()));
  out.text(options.cylinders ? " segments as tubes, " : " segments as lines, ");
  out.number(static_cast<uint64_t>(geometry.polygonCount()));
  out.text(" polygons\n");
  if (materials) {
    out.text("mtllib ");
    out.text(mtl_name);
    out.put('\n');
  }

  CylinderMesher mesher(options.cylinder_sides);
  std::vector<Vec3> ring_pos(mesher.verticesPerSegment()), ring_nrm(mesher.verticesPerSegment());
  uint64_t next_vertex = 1;  // OBJ indices are 1-based
  uint64_t next_normal = 1;
  int64_t material = INT64_MIN;
  auto useMaterial = [&](int32_t color) {
    if (!materials || material == color) return;
    material = color;
    out.text("usemtl color_");
    out.number(color);
    out.put('\n');
  };

  for (const InstanceGroup& group : groups) {
    if (groups.size() > 1) {
      out.text("o instance_");
      out.number(group.instance);
      out.put('\n');
      material = INT64_MIN;  // materials are per object in some importers
    }
    bool have_last = false;
    Vec3 last_end;
    uint64_t last_end_index = 0;
    for (uint32_t i : group.segments) {
      const Segment& s = geometry.segments[i];
      useMaterial(s.color);
      if (options.cylinders) {
        mesher.vertices(s, ring_pos.data(), ring_nrm.data());
        for (const Vec3& v : ring_pos) vertexLine(out, "v ", v);
        for (const Vec3& n : ring_nrm) vertexLine(out, "vn ", n);
        for (int k = 0; k < mesher.sides(); ++k) {
          out.put('f');
          for (uint32_t local : mesher.quad(k)) {
            out.put(' ');
            out.number(next_vertex + local);
            out.text("//");
            out.number(next_normal + local);
          }
          out.put('\n');
        }
        next_vertex += mesher.verticesPerSegment();
        next_normal += mesher.verticesPerSegment();
        continue;
      }
      uint64_t a;
      if (have_last && sameBits(s.start, last_end)) {
        a = last_end_index;
      } else {
        vertexLine(out, "v ", s.start);
        a = next_vertex++;
      }
      vertexLine(out, "v ", s.end);
      uint64_t b = next_vertex++;
      out.text("l ");
      out.number(a);
      out.put(' ');
      out.number(b);
      out.put('\n');
      have_last = true;
      last_end = s.end;
      last_end_index = b;
    }
    for (uint32_t p : group.polygons) {
      if (!drawablePolygon(geometry, p)) continue;
      useMaterial(geometry.polygon_colors[p]);
      uint64_t begin = geometry.polygon_offsets[p], end = geometry.polygon_offsets[p + 1];
      for (uint64_t v = begin; v < end; ++v) vertexLine(out, "v ", geometry.polygon_vertices[v]);
      out.put('f');
      for (uint64_t v = begin; v < end; ++v) {
        out.put(' ');
        out.number(next_vertex++);
      }
      out.put('\n');
    }
  }
  out.close();
}

// A triangle mesh: positions, then normals (vertex i has normal i), then faces.
void writeObj(const TriangleMesh& mesh, ByteSink& sink) {
  OutputStream out(sink);
  out.text("# procgen OBJ: ");
  out.number(static_cast<uint64_t>(mesh.vertexCount()));
  out.text(" vertices, ");
  out.number(static_cast<uint64_t>(mesh.triangleCount()));
  out.text(" triangles\n");
  for (const Vec3& v : mesh.positions) vertexLine(out, "v ", v);
  for (const Vec3& n : mesh.normals) vertexLine(out, "vn ", n);
  for (size_t t = 0; t < mesh.triangleCount(); ++t) {
    out.put('f');
    for (int k = 0; k < 3; ++k) {
      const uint64_t i = uint64_t{mesh.indices[3 * t + size_t(k)]} + 1;  // 1-based
      out.put(' ');
      out.number(i);
      out.text("//");
      out.number(i);
    }
    out.put('\n');
  }
  out.close();
}

}  // namespace procgen::io
