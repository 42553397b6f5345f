// Point sets as Stanford PLY: one `vertex` element with positions, then the
// optional normals, colours and scalar properties, through the PLY record
// writer the mesh writer uses (io/ply_format.hpp).
#include <algorithm>
#include <cctype>
#include <set>

#include "io/output_file.hpp"
#include "io/ply_format.hpp"
#include "procgen/error.hpp"
#include "procgen/points.hpp"

namespace procgen {
namespace {

void checkView(const PointSetView& p) {
  auto bad = [](const std::string& why) { throw Error("point set: " + why, ExitCode::kUsage); };
  if (p.count != 0 && !p.positions) bad("positions are required");
  std::set<std::string> names{"x", "y", "z", "nx", "ny", "nz", "red", "green", "blue"};
  for (const PointScalar& s : p.scalars) {
    const bool valid =
        !s.name.empty() && !std::isdigit(static_cast<unsigned char>(s.name[0])) &&
        std::all_of(s.name.begin(), s.name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        });
    if (!valid) bad("scalar name '" + s.name + "' is not [A-Za-z_][A-Za-z0-9_]*");
    if (!names.insert(s.name).second) bad("property '" + s.name + "' appears twice");
    if (p.count != 0 && !s.values) bad("scalar '" + s.name + "' has no values");
  }
}

}  // namespace

void writePointsPly(const PointSetView& points, ByteSink& sink, const PointWriteOptions& options) {
  checkView(points);
  io::OutputStream out(sink);
  io::plyHeaderStart(out, options.ascii);
  out.text("comment procgen point set\nelement vertex ");
  out.number(static_cast<uint64_t>(points.count));
  out.text("\nproperty float x\nproperty float y\nproperty float z\n");
  if (points.normals) out.text("property float nx\nproperty float ny\nproperty float nz\n");
  if (points.colors) out.text("property uchar red\nproperty uchar green\nproperty uchar blue\n");
  for (const PointScalar& s : points.scalars) {
    out.text("property float ");
    out.text(s.name);
    out.put('\n');
  }
  out.text("end_header\n");

  io::PlyRecords records(out, options.ascii);
  for (size_t i = 0; i < points.count; ++i) {
    const Vec3& p = points.positions[i];
    records.f32(p.x);
    records.f32(p.y);
    records.f32(p.z);
    if (points.normals) {
      const Vec3& n = points.normals[i];
      records.f32(n.x);
      records.f32(n.y);
      records.f32(n.z);
    }
    if (points.colors) {
      records.u8(points.colors[3 * i]);
      records.u8(points.colors[3 * i + 1]);
      records.u8(points.colors[3 * i + 2]);
    }
    for (const PointScalar& s : points.scalars) records.f32(s.values[i]);
    records.end();
  }
  out.close();
}

std::vector<uint8_t> encodePointsPly(const PointSetView& points, const PointWriteOptions& options) {
  return io::writeToMemory([&](ByteSink& sink) { writePointsPly(points, sink, options); });
}

void writePointsPly(const PointSetView& points, const std::filesystem::path& path,
                    const PointWriteOptions& options) {
  checkView(points);  // a bad view fails before the file is created
  io::writeToFile(path, [&](ByteSink& sink) { writePointsPly(points, sink, options); });
}

}  // namespace procgen
