// The CLI's one JSON writer: commands build an nlohmann::ordered_json (keys
// stay in insertion order) and print it with formatJson, never by string
// concatenation. The layout keeps the files diff- and grep-friendly: the top
// object, and arrays of objects inside it, get one member per line; everything
// deeper stays on one line. Non-finite numbers become null, so the output is
// always valid JSON.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "procgen/geometry.hpp"

namespace procgen::cli {

using Json = nlohmann::ordered_json;

namespace detail {

inline void appendScalar(std::string& out, const Json& v) {
  char buf[32];
  switch (v.type()) {
    case Json::value_t::number_float: {
      const double d = v.get<double>();
      if (!std::isfinite(d)) {
        out += "null";
        return;
      }
      // Shortest round-trip text; integral values print without ".0" ("1", not "1.0").
      out.append(buf, std::to_chars(buf, buf + sizeof buf, d).ptr);
      return;
    }
    case Json::value_t::number_integer:
      out.append(buf, std::to_chars(buf, buf + sizeof buf, v.get<int64_t>()).ptr);
      return;
    case Json::value_t::number_unsigned:
      out.append(buf, std::to_chars(buf, buf + sizeof buf, v.get<uint64_t>()).ptr);
      return;
    default:  // strings (escaped; invalid UTF-8 replaced), booleans, null
      out += v.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

inline bool holdsContainer(const Json& v) {
  for (const Json& child : v)
    if (child.is_structured()) return true;
  return false;
}

inline void append(std::string& out, const Json& v, int depth, int expand_depth) {
  if (!v.is_structured()) return appendScalar(out, v);
  const bool object = v.is_object();
  out += object ? '{' : '[';
  const bool expand = depth < expand_depth && !v.empty() && holdsContainer(v);
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!first) out += ',';
    if (expand) {
      out += '\n';
      out.append(2 * size_t(depth + 1), ' ');
    } else if (!first) {
      out += ' ';
    }
    first = false;
    if (object) {
      appendScalar(out, Json(it.key()));
      out += ": ";
    }
    append(out, it.value(), depth + 1, expand_depth);
  }
  if (expand) {
    out += '\n';
    out.append(2 * size_t(depth), ' ');
  }
  out += object ? '}' : ']';
}

}  // namespace detail

/// `value` as JSON text ending in a newline. Objects and arrays at depth
/// < expand_depth (the top is depth 0) that contain an object or array are
/// written one member per line, indented two spaces per level; all others on
/// one line with ", " and ": ". Numbers: integers exactly, floats as the
/// shortest text that reads back to the same double, NaN and ±inf as null.
inline std::string formatJson(const Json& value, int expand_depth = 2) {
  std::string out;
  detail::append(out, value, 0, expand_depth);
  out += '\n';
  return out;
}

/// [minx, miny, minz, maxx, maxy, maxz]; zeros when empty.
/// A 64-bit hash or checksum as the JSON outputs write it: 16 lowercase hex digits.
inline std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

inline Json jsonBounds(Bounds b) {
  if (b.empty()) b.min = b.max = Vec3{};
  return Json::array({b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z});
}

}  // namespace procgen::cli
