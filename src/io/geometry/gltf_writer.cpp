// glTF 2.0 (binary .glb, or .gltf with an embedded data-URI buffer) through
// tinygltf. One mesh and node per instance. Segments are a LINES primitive
// with POSITION and COLOR_0, or with tubes a TRIANGLES primitive adding
// NORMAL; polygons are a TRIANGLES primitive, fan-triangulated (exact for the
// convex polygons turtles draw; concave ones may fold) with a flat Newell
// normal. COLOR_0 is linear per the spec, so the sRGB palette is converted.
#include <cmath>
#include <exception>
#include <limits>
#include <ostream>
#include <streambuf>
#include <tiny_gltf.h>

#include "io/geometry/cylinder_mesh.hpp"
#include "io/geometry/mesh_common.hpp"
#include "io/geometry/writers.hpp"
#include "io/output_file.hpp"
#include "procgen/error.hpp"

namespace procgen::io {
namespace {

constexpr int kArrayBuffer = TINYGLTF_TARGET_ARRAY_BUFFER;
constexpr int kElementArrayBuffer = TINYGLTF_TARGET_ELEMENT_ARRAY_BUFFER;

struct Rgba8 {
  uint8_t r, g, b, a;
};

Rgba8 linearColor(Vec3 c) {
  auto lin = [](float s) {
    float l = s <= 0.04045f ? s / 12.92f : std::pow((s + 0.055f) / 1.055f, 2.4f);
    return static_cast<uint8_t>(std::lround(std::clamp(l, 0.0f, 1.0f) * 255.0f));
  };
  return {lin(c.x), lin(c.y), lin(c.z), 255};
}
Rgba8 linearColor(int32_t index) { return linearColor(paletteColor(index)); }

struct PrimitiveData {
  std::vector<Vec3> positions;
  std::vector<Vec3> normals;  // empty for lines
  std::vector<Rgba8> colors;
  std::vector<uint32_t> indices;
};

class ModelBuilder {
 public:
  explicit ModelBuilder(tinygltf::Model& model) : model_(model) {
    model_.buffers.emplace_back();
  }

  int view(const void* data, size_t bytes, int target) {
    std::vector<unsigned char>& buf = model_.buffers[0].data;
    buf.resize((buf.size() + 3) & ~size_t{3}, 0);  // every accessor 4-byte aligned
    tinygltf::BufferView v;
    v.buffer = 0;
    v.byteOffset = buf.size();
    v.byteLength = bytes;
    v.target = target;
    const auto* p = static_cast<const unsigned char*>(data);
    buf.insert(buf.end(), p, p + bytes);
    model_.bufferViews.push_back(v);
    return static_cast<int>(model_.bufferViews.size() - 1);
  }

  int accessor(int view, int component, int type, size_t count, bool normalized = false) {
    tinygltf::Accessor a;
    a.bufferView = view;
    a.byteOffset = 0;
    a.componentType = component;
    a.type = type;
    a.count = count;
    a.normalized = normalized;
    model_.accessors.push_back(a);
    return static_cast<int>(model_.accessors.size() - 1);
  }

  tinygltf::Primitive primitive(const PrimitiveData& d, int mode) {
    tinygltf::Primitive prim;
    prim.mode = mode;
    prim.material = 0;
    int pos = accessor(view(d.positions.data(), d.positions.size() * sizeof(Vec3), kArrayBuffer),
                       TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_TYPE_VEC3, d.positions.size());
    Bounds b;
    for (const Vec3& p : d.positions) b.add(p);
    model_.accessors[pos].minValues = {b.min.x, b.min.y, b.min.z};
    model_.accessors[pos].maxValues = {b.max.x, b.max.y, b.max.z};
    prim.attributes["POSITION"] = pos;
    if (!d.normals.empty())
      prim.attributes["NORMAL"] =
          accessor(view(d.normals.data(), d.normals.size() * sizeof(Vec3), kArrayBuffer),
                   TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_TYPE_VEC3, d.normals.size());
    prim.attributes["COLOR_0"] =
        accessor(view(d.colors.data(), d.colors.size() * sizeof(Rgba8), kArrayBuffer),
                 TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE, TINYGLTF_TYPE_VEC4, d.colors.size(), true);
    prim.indices =
        accessor(view(d.indices.data(), d.indices.size() * sizeof(uint32_t), kElementArrayBuffer),
                 TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT, TINYGLTF_TYPE_SCALAR, d.indices.size());
    return prim;
  }

 private:
  tinygltf::Model& model_;
};

// tinygltf writes to a std::ostream; this one forwards to the sink. A sink
// failure cannot pass through the stream (iostreams swallow it into badbit),
// so it is kept and rethrown after tinygltf returns.
class SinkStreamBuf : public std::streambuf {
 public:
  explicit SinkStreamBuf(OutputStream& out) : out_(out) {}
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (error_) return 0;
    try {
      out_.write(s, static_cast<size_t>(n));
      return n;
    } catch (...) {
      error_ = std::current_exception();
      return 0;
    }
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }

 private:
  OutputStream& out_;
  std::exception_ptr error_;
};

void checkIndexRange(const PrimitiveData& d, const ByteSink& sink) {
  if (d.positions.size() > std::numeric_limits<uint32_t>::max())
    throw OutputError("cannot write '" + sink.name() +
                      "': a primitive exceeds 2^32 vertices; use .obj");
}

PrimitiveData segmentLines(const Geometry& g, const std::vector<uint32_t>& segments) {
  PrimitiveData d;
  d.positions.reserve(segments.size() * 2);
  d.colors.reserve(segments.size() * 2);
  d.indices.reserve(segments.size() * 2);
  const Segment* prev = nullptr;
  for (uint32_t i : segments) {
    const Segment& s = g.segments[i];
    Rgba8 c = linearColor(s.color);
    if (prev && prev->color == s.color && sameBits(prev->end, s.start)) {
      d.indices.push_back(static_cast<uint32_t>(d.positions.size() - 1));
    } else {
      d.indices.push_back(static_cast<uint32_t>(d.positions.size()));
      d.positions.push_back(s.start);
      d.colors.push_back(c);
    }
    d.indices.push_back(static_cast<uint32_t>(d.positions.size()));
    d.positions.push_back(s.end);
    d.colors.push_back(c);
    prev = &s;
  }
  return d;
}

PrimitiveData segmentTubes(const Geometry& g, const std::vector<uint32_t>& segments,
                           const CylinderMesher& mesher) {
  PrimitiveData d;
  const size_t per = mesher.verticesPerSegment();
  d.positions.resize(segments.size() * per);
  d.normals.resize(segments.size() * per);
  d.colors.resize(segments.size() * per);
  d.indices.reserve(segments.size() * static_cast<size_t>(mesher.sides()) * 6);
  for (size_t k = 0; k < segments.size(); ++k) {
    const Segment& s = g.segments[segments[k]];
    mesher.vertices(s, &d.positions[k * per], &d.normals[k * per]);
    std::fill_n(&d.colors[k * per], per, linearColor(s.color));
    const uint32_t base = static_cast<uint32_t>(k * per);
    for (int q = 0; q < mesher.sides(); ++q) {
      auto v = mesher.quad(q);
      for (int corner : {0, 1, 2, 0, 2, 3}) d.indices.push_back(base + v[corner]);
    }
  }
  return d;
}

PrimitiveData polygonTriangles(const Geometry& g, const std::vector<uint32_t>& polygons) {
  PrimitiveData d;
  for (uint32_t p : polygons) {
    if (!drawablePolygon(g, p)) continue;
    const uint64_t begin = g.polygon_offsets[p];
    const size_t n = static_cast<size_t>(g.polygon_offsets[p + 1] - begin);
    const Vec3* v = &g.polygon_vertices[begin];
    const Vec3 normal = polygonNormal(v, n);
    const Rgba8 c = linearColor(g.polygon_colors[p]);
    const uint32_t base = static_cast<uint32_t>(d.positions.size());
    for (size_t k = 0; k < n; ++k) {
      d.positions.push_back(v[k]);
      d.normals.push_back(normal);
      d.colors.push_back(c);
    }
    for (uint32_t k = 1; k + 1 < n; ++k) {
      d.indices.push_back(base);
      d.indices.push_back(base + k);
      d.indices.push_back(base + k + 1);
    }
  }
  return d;
}

// The shared end of both writers: one default scene, the buffer padded (or
// dropped when empty), then the model through tinygltf into the sink.
void finishAndWrite(tinygltf::Model& model, tinygltf::Scene& scene, ByteSink& sink, bool binary) {
  model.buffers[0].data.resize((model.buffers[0].data.size() + 3) & ~size_t{3}, 0);
  if (model.buffers[0].data.empty()) {
    model.buffers.clear();  // a buffer must have byteLength >= 1
    model.bufferViews.clear();
  }
  if (model.buffers.size() && model.buffers[0].data.size() > (uint64_t{1} << 32) - 1024)
    throw OutputError("cannot write '" + sink.name() + "': more than 4 GiB of glTF data");
  model.scenes.push_back(scene);
  model.defaultScene = 0;

  OutputStream out(sink);
  SinkStreamBuf buf(out);
  std::ostream stream(&buf);
  tinygltf::TinyGLTF writer;
  const bool ok = writer.WriteGltfSceneToStream(&model, stream, /*prettyPrint=*/false, binary);
  buf.rethrow();
  if (!ok || stream.fail()) throw OutputError("cannot write '" + sink.name() + "'");
  out.close();
}

tinygltf::Model newModel(bool double_sided) {
  tinygltf::Model model;
  model.asset.version = "2.0";
  model.asset.generator = "procgen";
  tinygltf::Material material;
  material.name = "procgen_vertex_colour";
  material.pbrMetallicRoughness.baseColorFactor = {1.0, 1.0, 1.0, 1.0};
  material.pbrMetallicRoughness.metallicFactor = 0.0;
  material.pbrMetallicRoughness.roughnessFactor = 0.9;
  material.doubleSided = double_sided;
  model.materials.push_back(material);
  return model;
}

}  // namespace

void writeGltf(const Geometry& geometry, ByteSink& sink, const WriteOptions& options, bool binary) {
  tinygltf::Model model = newModel(/*double_sided=*/true);  // leaves are seen from both sides
  ModelBuilder builder(model);

  CylinderMesher mesher(options.cylinder_sides);
  // Reserving the whole buffer avoids reallocation copies of what can be gigabytes.
  const size_t per_segment =
      options.cylinders ? mesher.verticesPerSegment() * (12 + 12 + 4) + mesher.sides() * 6 * 4
                        : 2 * (12 + 4) + 2 * 4;
  const uint64_t buffer_bytes = uint64_t(geometry.segments.size()) * per_segment +
                                uint64_t(geometry.polygon_vertices.size()) * (12 + 12 + 4 + 12) + 1024;
  // Refused before building: the buffer, one primitive's arrays beside it,
  // and for .gltf its base64 text (4/3 of it) in tinygltf's JSON.
  requireMemory(binary ? "glTF (.glb) buffers" : "glTF (.gltf) buffers and text",
                buffer_bytes * 2 + (binary ? 0 : buffer_bytes * 4 / 3), options.memory_budget_bytes,
                geometryBytes(geometry));
  model.buffers[0].data.reserve(buffer_bytes);
  tinygltf::Scene scene;
  scene.name = "procgen";  // also keeps an empty scene a JSON object for tinygltf
  std::vector<InstanceGroup> groups = groupByInstance(geometry);
  for (const InstanceGroup& group : groups) {
    tinygltf::Mesh mesh;
    mesh.name = "instance_" + std::to_string(group.instance);
    if (!group.segments.empty()) {
      PrimitiveData d = options.cylinders ? segmentTubes(geometry, group.segments, mesher)
                                          : segmentLines(geometry, group.segments);
      checkIndexRange(d, sink);
      mesh.primitives.push_back(builder.primitive(
          d, options.cylinders ? TINYGLTF_MODE_TRIANGLES : TINYGLTF_MODE_LINE));
    }
    PrimitiveData polys = polygonTriangles(geometry, group.polygons);
    if (!polys.positions.empty()) {
      checkIndexRange(polys, sink);
      mesh.primitives.push_back(builder.primitive(polys, TINYGLTF_MODE_TRIANGLES));
    }
    if (mesh.primitives.empty()) continue;  // glTF forbids meshes without primitives
    model.meshes.push_back(std::move(mesh));
    tinygltf::Node node;
    node.name = model.meshes.back().name;
    node.mesh = static_cast<int>(model.meshes.size() - 1);
    model.nodes.push_back(node);
    scene.nodes.push_back(static_cast<int>(model.nodes.size() - 1));
  }
  finishAndWrite(model, scene, sink, binary);
}

void writeGltf(const TriangleMesh& mesh, ByteSink& sink, bool binary) {
  tinygltf::Model model = newModel(/*double_sided=*/true);  // open surfaces show their back at the cut
  ModelBuilder builder(model);
  PrimitiveData d;
  d.positions = mesh.positions;
  d.normals = mesh.normals;
  d.indices = mesh.indices;
  d.colors.reserve(mesh.vertexCount());
  for (const Vec3& c : meshHeightColors(mesh)) d.colors.push_back(linearColor(c));
  checkIndexRange(d, sink);
  model.buffers[0].data.reserve(mesh.vertexCount() * 28 + mesh.indices.size() * 4 + 1024);
  tinygltf::Scene scene;
  scene.name = "procgen";
  if (!d.indices.empty()) {
    tinygltf::Mesh m;
    m.name = "surface";
    m.primitives.push_back(builder.primitive(d, TINYGLTF_MODE_TRIANGLES));
    model.meshes.push_back(std::move(m));
    tinygltf::Node node;
    node.name = "surface";
    node.mesh = 0;
    model.nodes.push_back(node);
    scene.nodes.push_back(0);
  }
  finishAndWrite(model, scene, sink, binary);
}

}  // namespace procgen::io
