// Point sets and meshes in (issue 18 point 1): the dispatch by format, the
// line and number helpers of the text readers, and the checks every reader
// shares (budget before allocating, finite coordinates, at least one point).
#include <algorithm>
#include <charconv>
#include <cmath>

#include "io/points/point_readers.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"
#include "procgen/input.hpp"

namespace procgen {
namespace io {

TextLines::TextLines(std::string_view text, std::string_view name, size_t offset, int first_line)
    : text_(text), name_(name), next_(offset), number_(first_line - 1) {
  if (offset == 0 && text.substr(0, 3) == "\xEF\xBB\xBF") next_ = 3;
}

bool TextLines::next() {
  if (next_ >= text_.size()) return false;
  const size_t end = text_.find('\n', next_);
  const size_t stop = end == std::string_view::npos ? text_.size() : end;
  line_ = text_.substr(next_, stop - next_);
  if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
  next_ = end == std::string_view::npos ? text_.size() : end + 1;
  ++number_;
  return true;
}

bool TextLines::nextContent(char comment) {
  while (next()) {
    if (comment != 0) {
      const size_t at = line_.find(comment);
      if (at != std::string_view::npos) line_ = line_.substr(0, at);
    }
    if (line_.find_first_not_of(" \t\r\f\v") != std::string_view::npos) return true;
  }
  return false;
}

void TextLines::fail(std::string_view at, const std::string& message) const {
  size_t column = line_.size();
  if (at.data() >= line_.data() && at.data() <= line_.data() + line_.size())
    column = static_cast<size_t>(at.data() - line_.data());
  throw ParseError({std::string(name_), number_, static_cast<int>(column + 1)}, message, std::string(line_));
}

void TextLines::failAtEnd(const std::string& message) const { fail(line_.substr(line_.size()), message); }

bool Tokens::next(std::string_view& token) {
  auto separator = [&](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || (commas_ && c == ',');
  };
  size_t i = 0;
  while (i < rest_.size() && separator(rest_[i])) ++i;
  if (i == rest_.size()) return false;
  size_t j = i;
  while (j < rest_.size() && !separator(rest_[j])) ++j;
  token = rest_.substr(i, j - i);
  rest_ = rest_.substr(j);
  return true;
}

namespace {

template <typename T>
T parseFloating(const TextLines& lines, std::string_view token, const char* what) {
  T value = 0;
  std::string_view text = token;
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);  // from_chars refuses a leading '+'
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range)
    lines.fail(token, std::string(what) + " '" + std::string(token) + "' is out of range");
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    lines.fail(token, std::string(what) + ": '" + std::string(token) + "' is not a number");
  return value;
}

}  // namespace

double parseNumber(const TextLines& lines, std::string_view token, const char* what) {
  return parseFloating<double>(lines, token, what);
}

float parseNumber32(const TextLines& lines, std::string_view token, const char* what) {
  return parseFloating<float>(lines, token, what);
}

uint64_t parseCount(const TextLines& lines, std::string_view token, const char* what, uint64_t max) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size() || token.empty() || value > max)
    lines.fail(token, std::string(what) + ": '" + std::string(token) + "' is not a whole number in 0.." +
                          std::to_string(max));
  return value;
}

std::string nonFiniteMessage(uint64_t point, int axis, double value) {
  return "point " + std::to_string(point) + ": coordinate " + "xyz"[axis] + " is " +
         (std::isnan(value) ? "NaN" : "infinite");
}

void allocatePoints(PointCloud& cloud, uint64_t count, bool as_float, uint64_t budget, uint64_t held,
                    std::string_view name) {
  const uint64_t bytes = checkedMul(count, as_float ? 12 : 24).value_or(UINT64_MAX);
  requireMemory("points of " + std::string(name) + " (" + std::to_string(count) + ")", bytes, budget, held);
  cloud.count = count;
  if (as_float) cloud.xyz32.resize(3 * count);
  else cloud.xyz64.resize(3 * count);
}

void appendFan(std::vector<uint32_t>& triangles, const uint32_t* polygon, size_t n, uint64_t budget,
               uint64_t held) {
  if (n < 3) return;
  const size_t needed = triangles.size() + 3 * (n - 2);
  if (needed > triangles.capacity()) {
    const size_t grown = std::max(needed, 2 * triangles.capacity());
    requireMemory("mesh triangles", uint64_t(grown) * sizeof(uint32_t), budget, held);
    triangles.reserve(grown);
  }
  for (size_t i = 1; i + 1 < n; ++i) triangles.insert(triangles.end(), {polygon[0], polygon[i], polygon[i + 1]});
}

}  // namespace io

namespace {

io::MeshContents parseContents(std::string_view bytes, PointFileFormat format, std::string_view name,
                               bool want_faces, const PointReadOptions& options) {
  io::MeshContents out;
  const io::ReadRequest request{bytes, name, want_faces, options.memory_budget_bytes};
  switch (format) {
    case PointFileFormat::kPly: io::readPly(request, out); break;
    case PointFileFormat::kOff: io::readOff(request, out); break;
    case PointFileFormat::kXyz: io::readXyz(request, out); break;
    case PointFileFormat::kObj: io::readObj(request, out); break;
  }
  if (out.points.count == 0) throw Error(std::string(name) + ": the file holds no points", ExitCode::kBadInput);
  return out;
}

PointFileFormat formatOf(const std::filesystem::path& path) {
  const std::optional<PointFileFormat> format = pointFileFormat(path);
  if (!format)
    throw Error("cannot tell the format of '" + path.string() + "' from its extension: use .ply, .off, .xyz "
                "(also .txt, .pts, .csv) or .obj",
                ExitCode::kBadInput);
  return *format;
}

}  // namespace

std::optional<PointFileFormat> pointFileFormat(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".ply") return PointFileFormat::kPly;
  if (ext == ".off") return PointFileFormat::kOff;
  if (ext == ".xyz" || ext == ".txt" || ext == ".pts" || ext == ".csv") return PointFileFormat::kXyz;
  if (ext == ".obj") return PointFileFormat::kObj;
  return std::nullopt;
}

const char* pointFileFormatName(PointFileFormat format) {
  switch (format) {
    case PointFileFormat::kPly: return "PLY";
    case PointFileFormat::kOff: return "OFF";
    case PointFileFormat::kXyz: return "XYZ";
    case PointFileFormat::kObj: return "OBJ";
  }
  return "?";
}

PointCloud parsePointFile(std::string_view bytes, PointFileFormat format, std::string_view name,
                          const PointReadOptions& options) {
  return parseContents(bytes, format, name, false, options).points;
}

PointCloud readPointFile(const std::filesystem::path& path, const PointReadOptions& options) {
  const PointFileFormat format = formatOf(path);
  const std::string bytes = readInputFile(path, "point file", options.memory_budget_bytes);
  return parsePointFile(bytes, format, path.string(), options);
}

TriangleMesh parseMeshFile(std::string_view bytes, PointFileFormat format, std::string_view name,
                           const PointReadOptions& options) {
  if (format == PointFileFormat::kXyz)
    throw Error(std::string(name) + ": an XYZ file holds points, not faces; give a .ply, .off or .obj mesh",
                ExitCode::kBadInput);
  io::MeshContents contents = parseContents(bytes, format, name, true, options);
  if (contents.triangles.empty())
    throw Error(std::string(name) + ": the mesh has no faces of 3 or more vertices", ExitCode::kBadInput);
  const PointCloud& cloud = contents.points;
  if (cloud.count > UINT32_MAX) throw Error(std::string(name) + ": more than 2^32 - 1 vertices", ExitCode::kBadInput);
  requireMemory("mesh vertices", cloud.count * 2 * sizeof(Vec3), options.memory_budget_bytes,
                bytes.size() + contents.triangles.size() * 4 + cloud.count * (cloud.xyz32.empty() ? 24 : 12));
  TriangleMesh mesh;
  mesh.positions.resize(cloud.count);
  for (uint64_t i = 0; i < cloud.count; ++i)
    mesh.positions[i] = {float(cloud.coord(i, 0)), float(cloud.coord(i, 1)), float(cloud.coord(i, 2))};
  mesh.indices = std::move(contents.triangles);
  // Area-weighted vertex normals: the sum of the adjacent faces' cross products.
  std::vector<double> sum(3 * cloud.count, 0.0);
  for (size_t t = 0; t + 2 < mesh.indices.size(); t += 3) {
    const Vec3 &a = mesh.positions[mesh.indices[t]], &b = mesh.positions[mesh.indices[t + 1]],
               &c = mesh.positions[mesh.indices[t + 2]];
    const double ux = double(b.x) - a.x, uy = double(b.y) - a.y, uz = double(b.z) - a.z;
    const double vx = double(c.x) - a.x, vy = double(c.y) - a.y, vz = double(c.z) - a.z;
    const double n[3] = {uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx};
    for (int k = 0; k < 3; ++k)
      for (int axis = 0; axis < 3; ++axis) sum[3 * size_t(mesh.indices[t + size_t(k)]) + size_t(axis)] += n[axis];
  }
  mesh.normals.resize(cloud.count);
  for (uint64_t i = 0; i < cloud.count; ++i) {
    const double* n = &sum[3 * i];
    const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    mesh.normals[i] = length > 0 && std::isfinite(length)
                          ? Vec3{float(n[0] / length), float(n[1] / length), float(n[2] / length)}
                          : Vec3{0, 1, 0};
  }
  return mesh;
}

TriangleMesh readMeshFile(const std::filesystem::path& path, const PointReadOptions& options) {
  const PointFileFormat format = formatOf(path);
  const std::string bytes = readInputFile(path, "mesh file", options.memory_budget_bytes);
  return parseMeshFile(bytes, format, path.string(), options);
}

}  // namespace procgen
