// Hand-built geometries and file helpers for the writer tests. Geometry is
// computed here independently of any procgen code (no L-system engine needed).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "procgen/error.hpp"
#include "procgen/geometry.hpp"
#include "procgen/io.hpp"

namespace procgen::iotest {

/// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("procgen_io_") + (info ? info->test_suite_name() : "x") + "_" +
                       (info ? info->name() : "y") + "_" + std::to_string(::getpid());
    for (char& c : name)
      if (c == '/') c = '_';
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::filesystem::path operator/(const std::string& file) const { return path_ / file; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string readText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline Segment makeSegment(Vec3 a, Vec3 b, float width = 1.0f, int32_t color = 0,
                           int32_t instance = 0) {
  Segment s;
  s.start = a;
  s.end = b;
  s.width = width;
  s.color = color;
  s.instance = instance;
  return s;
}

inline void addPolygon(Geometry& g, const std::vector<Vec3>& vertices, int32_t color = 1,
                       int32_t instance = 0) {
  g.polygon_vertices.insert(g.polygon_vertices.end(), vertices.begin(), vertices.end());
  g.polygon_offsets.push_back(g.polygon_vertices.size());
  g.polygon_colors.push_back(color);
  g.polygon_instances.push_back(instance);
}

/// Koch curve (ABOP Fig. 1.9a: F → F+F−−F+F, δ = 60°) after `n` rewrites,
/// traced by a turtle in double precision: 4^n connected segments in the XY
/// plane from (0,0) to (1,0). Colours cycle 0..3 per segment when `colored`.
inline Geometry kochCurve(int n, float width = 0.01f, bool colored = false) {
  std::string s = "F";
  for (int i = 0; i < n; ++i) {
    std::string next;
    for (char c : s) next += c == 'F' ? std::string("F+F--F+F") : std::string(1, c);
    s = next;
  }
  const double step = std::pow(3.0, -n);
  const double delta = M_PI / 3.0;
  double x = 0, y = 0, heading = 0;
  Geometry g;
  for (char c : s) {
    if (c == '+') heading += delta;
    if (c == '-') heading -= delta;
    if (c != 'F') continue;
    double nx = x + step * std::cos(heading), ny = y + step * std::sin(heading);
    int32_t color = colored ? static_cast<int32_t>(g.segments.size() % 4) : 0;
    g.segments.push_back(makeSegment({float(x), float(y), 0}, {float(nx), float(ny), 0}, width, color));
    x = nx;
    y = ny;
  }
  return g;
}

inline float distance(const Vec3& a, const Vec3& b) {
  double dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
  return static_cast<float>(std::sqrt(dx * dx + dy * dy + dz * dz));
}

/// Distance from p to the infinite line through a and b, and the parameter of
/// p's projection (0 at a, 1 at b); double precision.
inline double distanceToAxis(const Vec3& p, const Vec3& a, const Vec3& b, double* t = nullptr) {
  double dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
  double px = p.x - a.x, py = p.y - a.y, pz = p.z - a.z;
  double len2 = dx * dx + dy * dy + dz * dz;
  double tt = (px * dx + py * dy + pz * dz) / len2;
  if (t) *t = tt;
  double ex = px - tt * dx, ey = py - tt * dy, ez = pz - tt * dz;
  return std::sqrt(ex * ex + ey * ey + ez * ez);
}

/// `write()` must throw a usage Error (a bad argument, not an OutputError)
/// before creating `path`.
template <typename Write>
void expectUsageErrorWithoutFile(Write&& write, const std::filesystem::path& path) {
  try {
    write();
    ADD_FAILURE() << "accepted a bad argument";
  } catch (const OutputError& e) {
    ADD_FAILURE() << "a bad argument is a usage error, got an output error: " << e.what();
  } catch (const Error& e) {
    EXPECT_EQ(e.exitCode(), ExitCode::kUsage) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path)) << path;
}

inline bool sameVec(const Vec3& a, const Vec3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

}  // namespace procgen::iotest
