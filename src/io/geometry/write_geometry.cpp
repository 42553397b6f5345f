// writeGeometry: the extension picks the format, the options are checked once,
// and one dispatch serves the path, sink and memory variants.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string>

#include "io/geometry/writers.hpp"
#include "io/output_file.hpp"
#include "procgen/error.hpp"
#include "procgen/io.hpp"

namespace procgen {
namespace {

using Format = GeometryFormat;

struct FormatName {
  std::string_view ext;
  Format format;
};
constexpr std::array<FormatName, 6> kFormats{{{"obj", Format::kObj},
                                              {"ply", Format::kPly},
                                              {"glb", Format::kGlb},
                                              {"gltf", Format::kGltf},
                                              {"svg", Format::kSvg},
                                              {"png", Format::kPng}}};

void validate(const Geometry& geometry, const WriteOptions& options) {
  if (options.cylinder_sides < 3 || options.cylinder_sides > 64)
    throw Error("cylinder sides must be in 3..64, got " + std::to_string(options.cylinder_sides),
                ExitCode::kUsage);
  if (options.width < 1 || options.height < 1 || options.width > 32768 || options.height > 32768)
    throw Error("image size must be in 1..32768 pixels, got " + std::to_string(options.width) +
                    "x" + std::to_string(options.height),
                ExitCode::kUsage);
  if (!(options.min_line_px >= 0.0f) || !std::isfinite(options.min_line_px))
    throw Error("minimum line width must be a finite number >= 0", ExitCode::kUsage);
  if (geometry.polygon_offsets.size() != geometry.polygonCount() + 1 ||
      geometry.polygon_instances.size() != geometry.polygonCount() ||
      geometry.polygon_offsets.back() != geometry.polygon_vertices.size())
    throw Error("inconsistent geometry: polygon arrays disagree", ExitCode::kBadInput);
}

// After validate(): the one dispatch both variants share.
void dispatch(const Geometry& geometry, Format format, ByteSink& sink, const WriteOptions& options,
              const std::string& mtl_name) {
  switch (format) {
    case Format::kObj: io::writeObj(geometry, sink, options, mtl_name); break;
    case Format::kPly: io::writePly(geometry, sink, options); break;
    case Format::kGlb: io::writeGltf(geometry, sink, options, true); break;
    case Format::kGltf: io::writeGltf(geometry, sink, options, false); break;
    case Format::kSvg: io::writeSvg(geometry, sink, options); break;
    case Format::kPng: io::writePngPreview(geometry, sink, options); break;
  }
}

// cpfg's default colour map starts with a stem brown and leaf greens; the rest
// are distinct hues that stay readable on the light PNG background.
constexpr std::array<Vec3, 16> kPalette{{
    {0.45f, 0.30f, 0.16f},  // 0 stem brown
    {0.18f, 0.49f, 0.15f},  // 1 leaf green
    {0.33f, 0.65f, 0.20f},  // 2 light green
    {0.10f, 0.35f, 0.12f},  // 3 dark green
    {0.93f, 0.80f, 0.18f},  // 4 yellow
    {0.84f, 0.18f, 0.14f},  // 5 red
    {0.93f, 0.52f, 0.68f},  // 6 pink
    {0.20f, 0.38f, 0.80f},  // 7 blue
    {0.55f, 0.27f, 0.70f},  // 8 purple
    {0.95f, 0.55f, 0.15f},  // 9 orange
    {0.15f, 0.62f, 0.62f},  // 10 teal
    {0.62f, 0.45f, 0.28f},  // 11 light brown
    {0.55f, 0.75f, 0.45f},  // 12 sage
    {0.30f, 0.30f, 0.30f},  // 13 dark grey
    {0.70f, 0.10f, 0.35f},  // 14 crimson
    {0.85f, 0.85f, 0.80f},  // 15 off-white
}};

}  // namespace

std::optional<Projection> parseProjection(std::string_view name) {
  if (name == "front") return Projection::kFront;
  if (name == "side") return Projection::kSide;
  if (name == "top") return Projection::kTop;
  if (name == "iso") return Projection::kIso;
  return std::nullopt;
}

std::optional<GeometryFormat> geometryFormatFromExtension(std::string_view ext) {
  if (!ext.empty() && ext.front() == '.') ext.remove_prefix(1);
  std::string lower(ext);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const FormatName& f : kFormats)
    if (lower == f.ext) return f.format;
  return std::nullopt;
}

bool isGeometryExtension(std::string_view ext) { return geometryFormatFromExtension(ext).has_value(); }

std::string_view geometryExtensionList() { return ".obj, .ply, .glb, .gltf, .svg, .png"; }

Vec3 paletteColor(int32_t index) {
  const int32_t n = static_cast<int32_t>(kPalette.size());
  return kPalette[static_cast<size_t>(((index % n) + n) % n)];
}

namespace io {
Rgb8 paletteRgb8(int32_t index) {
  Vec3 c = paletteColor(index);
  auto byte = [](float v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)); };
  return {byte(c.x), byte(c.y), byte(c.z)};
}
}  // namespace io

std::vector<std::filesystem::path> geometryFiles(const std::filesystem::path& path, const WriteOptions& options) {
  std::vector<std::filesystem::path> files{path};
  if (geometryFormatFromExtension(path.extension().string()) == Format::kObj && options.obj_mtl)
    files.push_back(options.obj_mtl_name.empty() ? std::filesystem::path(path).replace_extension(".mtl")
                                                 : path.parent_path() / options.obj_mtl_name);
  return files;
}

void writeGeometry(const Geometry& geometry, const std::filesystem::path& path,
                   const WriteOptions& options) {
  std::optional<Format> format = geometryFormatFromExtension(path.extension().string());
  if (!format)
    throw Error("cannot write '" + path.string() + "': unsupported extension '" +
                    path.extension().string() + "' (supported: " +
                    std::string(geometryExtensionList()) + ")",
                ExitCode::kUsage);
  validate(geometry, options);
  const std::vector<std::filesystem::path> files = geometryFiles(path, options);
  const std::filesystem::path mtl_path = files.size() > 1 ? files[1] : std::filesystem::path();
  // The mtllib line names the library relative to the .obj, as the file was placed.
  const std::string mtl_name = mtl_path.empty() || options.obj_mtl_name.empty() ? mtl_path.filename().string()
                                                                                : options.obj_mtl_name;
  OutputTransaction both;  // an .obj never stays behind without its .mtl
  io::writeToFile(path, [&](ByteSink& sink) { dispatch(geometry, *format, sink, options, mtl_name); });
  if (!mtl_path.empty())
    io::writeToFile(mtl_path, [&](ByteSink& sink) { writeObjMaterials(geometry, sink); });
  both.commit();
}

void writeGeometry(const Geometry& geometry, GeometryFormat format, ByteSink& sink,
                   const WriteOptions& options) {
  validate(geometry, options);
  dispatch(geometry, format, sink, options, options.obj_mtl ? options.obj_mtl_name : std::string());
}

namespace {

void dispatchMesh(const TriangleMesh& mesh, Format format, ByteSink& sink, const WriteOptions& options) {
  validate(Geometry{}, options);
  if (mesh.normals.size() != mesh.positions.size() || mesh.indices.size() % 3 != 0)
    throw Error("inconsistent mesh: normals or indices do not match the positions", ExitCode::kBadInput);
  for (uint32_t i : mesh.indices)
    if (i >= mesh.positions.size()) throw Error("inconsistent mesh: an index past the vertices", ExitCode::kBadInput);
  switch (format) {
    case Format::kObj: io::writeObj(mesh, sink); break;
    case Format::kPly: io::writePly(mesh, sink, options); break;
    case Format::kGlb: io::writeGltf(mesh, sink, true); break;
    case Format::kGltf: io::writeGltf(mesh, sink, false); break;
    case Format::kPng: io::writePngPreview(mesh, sink, options); break;
    case Format::kSvg:
      throw Error("cannot write a triangle mesh as SVG: use .obj, .ply, .glb, .gltf or .png", ExitCode::kUsage);
  }
}

}  // namespace

void writeMesh(const TriangleMesh& mesh, const std::filesystem::path& path, const WriteOptions& options) {
  const std::optional<Format> format = geometryFormatFromExtension(path.extension().string());
  if (!format || *format == Format::kSvg)
    throw Error("cannot write a mesh to '" + path.string() + "': use .obj, .ply, .glb, .gltf or .png",
                ExitCode::kUsage);
  validate(Geometry{}, options);  // before the file is created
  io::writeToFile(path, [&](ByteSink& sink) { dispatchMesh(mesh, *format, sink, options); });
}

void writeMesh(const TriangleMesh& mesh, GeometryFormat format, ByteSink& sink, const WriteOptions& options) {
  dispatchMesh(mesh, format, sink, options);
}

std::vector<uint8_t> encodeMesh(const TriangleMesh& mesh, GeometryFormat format, const WriteOptions& options) {
  return io::writeToMemory([&](ByteSink& sink) { dispatchMesh(mesh, format, sink, options); });
}

std::vector<uint8_t> encodeGeometry(const Geometry& geometry, GeometryFormat format,
                                    const WriteOptions& options) {
  return io::writeToMemory([&](ByteSink& sink) { writeGeometry(geometry, format, sink, options); });
}

}  // namespace procgen
