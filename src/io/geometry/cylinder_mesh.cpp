#include "io/geometry/cylinder_mesh.hpp"

namespace procgen::io {
namespace {

Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

Vec3 normalized(const Vec3& a) {
  float len = std::sqrt(a.x * a.x + a.y * a.y + a.z * a.z);
  return {a.x / len, a.y / len, a.z / len};
}

}  // namespace

CylinderMesher::CylinderMesher(int sides) : sides_(sides), cos_(sides), sin_(sides) {
  for (int k = 0; k < sides; ++k) {
    double angle = 2.0 * M_PI * k / sides;
    cos_[k] = static_cast<float>(std::cos(angle));
    sin_[k] = static_cast<float>(std::sin(angle));
  }
}

void CylinderMesher::vertices(const Segment& segment, Vec3* positions, Vec3* normals) const {
  Vec3 d{segment.end.x - segment.start.x, segment.end.y - segment.start.y,
         segment.end.z - segment.start.z};
  float len = std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
  d = len > 0.0f && std::isfinite(len) ? Vec3{d.x / len, d.y / len, d.z / len} : Vec3{0, 1, 0};
  // The helper axis least aligned with d keeps the cross product well conditioned.
  float ax = std::fabs(d.x), ay = std::fabs(d.y), az = std::fabs(d.z);
  Vec3 helper = ax <= ay && ax <= az ? Vec3{1, 0, 0} : (ay <= az ? Vec3{0, 1, 0} : Vec3{0, 0, 1});
  Vec3 u = normalized(cross(d, helper));
  Vec3 v = cross(d, u);  // u × v = d, so increasing angle turns counter-clockwise about d
  const float r = 0.5f * segment.width;
  for (int k = 0; k < sides_; ++k) {
    Vec3 n{cos_[k] * u.x + sin_[k] * v.x, cos_[k] * u.y + sin_[k] * v.y,
           cos_[k] * u.z + sin_[k] * v.z};
    positions[k] = {segment.start.x + r * n.x, segment.start.y + r * n.y,
                    segment.start.z + r * n.z};
    positions[sides_ + k] = {segment.end.x + r * n.x, segment.end.y + r * n.y,
                             segment.end.z + r * n.z};
    if (normals) normals[k] = normals[sides_ + k] = n;
  }
}

}  // namespace procgen::io
