// Stanford PLY in (Greg Turk's format as written by rply, MeshLab, Open3D,
// CloudCompare and procgen's own writers): the header's elements and
// properties, then the body in ASCII (one record a line) or binary of either
// byte order. The vertex element gives the points (x, y, z); the face
// element's vertex_indices (or vertex_index) list gives polygons, fanned into
// triangles; every other property and element is walked over — list
// properties by their counts — so that what follows is found and a
// truncated file is noticed.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>

#include "io/points/point_readers.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"

namespace procgen::io {
namespace {

enum class PlyType : uint8_t { kI8, kU8, kI16, kU16, kI32, kU32, kF32, kF64 };

int typeSize(PlyType t) {
  switch (t) {
    case PlyType::kI8: case PlyType::kU8: return 1;
    case PlyType::kI16: case PlyType::kU16: return 2;
    case PlyType::kI32: case PlyType::kU32: case PlyType::kF32: return 4;
    case PlyType::kF64: return 8;
  }
  return 1;
}

bool isInteger(PlyType t) { return t != PlyType::kF32 && t != PlyType::kF64; }

std::optional<PlyType> typeNamed(std::string_view name) {
  static constexpr std::pair<std::string_view, PlyType> kNames[] = {
      {"char", PlyType::kI8},     {"int8", PlyType::kI8},      {"uchar", PlyType::kU8},   {"uint8", PlyType::kU8},
      {"short", PlyType::kI16},   {"int16", PlyType::kI16},    {"ushort", PlyType::kU16}, {"uint16", PlyType::kU16},
      {"int", PlyType::kI32},     {"int32", PlyType::kI32},    {"uint", PlyType::kU32},   {"uint32", PlyType::kU32},
      {"float", PlyType::kF32},   {"float32", PlyType::kF32},  {"double", PlyType::kF64}, {"float64", PlyType::kF64}};
  for (const auto& [n, t] : kNames)
    if (n == name) return t;
  return std::nullopt;
}

struct PlyProperty {
  std::string name;
  bool list = false;
  PlyType count_type = PlyType::kU8;
  PlyType type = PlyType::kF32;
};

struct PlyElement {
  std::string name;
  uint64_t count = 0;
  std::vector<PlyProperty> properties;
  int x = -1, y = -1, z = -1;  ///< vertex: property indices of the coordinates
  int indices = -1;            ///< face: the vertex_indices list
  /// Bytes of a binary record without lists (lists count their count only).
  uint64_t minBytes() const {
    uint64_t bytes = 0;
    for (const PlyProperty& p : properties) bytes += uint64_t(typeSize(p.list ? p.count_type : p.type));
    return bytes;
  }
};

enum class PlyEncoding { kAscii, kLittle, kBig };

struct PlyHeader {
  PlyEncoding encoding = PlyEncoding::kAscii;
  std::vector<PlyElement> elements;
  size_t body = 0;    ///< byte offset of the body
  int body_line = 0;  ///< line number of the body's first line
  /// The vertex element (readPly checks that there is one first).
  const PlyElement& vertex() const {
    for (const PlyElement& e : elements)
      if (e.name == "vertex") return e;
    return elements.front();
  }
};

PlyHeader parseHeader(std::string_view bytes, std::string_view name) {
  PlyHeader h;
  TextLines lines(bytes, name);
  if (!lines.next() || lines.line() != "ply")
    lines.fail(lines.line().substr(0, 0), "not a PLY file: the first line must be 'ply'");
  bool format_seen = false;
  while (true) {
    if (!lines.next()) lines.failAtEnd("the header ends without 'end_header'");
    Tokens tokens(lines.line());
    std::string_view keyword;
    if (!tokens.next(keyword)) lines.fail(lines.line(), "empty header line");
    if (keyword == "comment" || keyword == "obj_info") continue;
    std::string_view a, b, c, d, extra;
    if (keyword == "end_header") {
      if (tokens.next(extra)) lines.fail(extra, "unexpected text after 'end_header'");
      if (!format_seen) lines.fail(keyword, "the header has no 'format' line");
      h.body = bytes.size() - lines.remaining();
      h.body_line = lines.number() + 1;
      return h;
    }
    if (keyword == "format") {
      if (format_seen) lines.fail(keyword, "a second 'format' line");
      if (!tokens.next(a) || !tokens.next(b) || tokens.next(extra))
        lines.fail(keyword, "expected 'format ascii|binary_little_endian|binary_big_endian 1.0'");
      if (a == "ascii") h.encoding = PlyEncoding::kAscii;
      else if (a == "binary_little_endian") h.encoding = PlyEncoding::kLittle;
      else if (a == "binary_big_endian") h.encoding = PlyEncoding::kBig;
      else lines.fail(a, "unknown PLY format '" + std::string(a) + "' (ascii, binary_little_endian, binary_big_endian)");
      if (b != "1.0") lines.fail(b, "unsupported PLY version '" + std::string(b) + "' (1.0)");
      format_seen = true;
      continue;
    }
    if (keyword == "element") {
      if (!tokens.next(a) || !tokens.next(b) || tokens.next(extra)) lines.fail(keyword, "expected 'element NAME COUNT'");
      PlyElement e;
      e.name = std::string(a);
      e.count = parseCount(lines, b, "element count", UINT64_MAX);
      for (const PlyElement& other : h.elements)
        if (other.name == e.name) lines.fail(a, "element '" + e.name + "' is declared twice");
      h.elements.push_back(std::move(e));
      continue;
    }
    if (keyword == "property") {
      if (h.elements.empty()) lines.fail(keyword, "a property before any element");
      PlyElement& e = h.elements.back();
      PlyProperty p;
      if (!tokens.next(a)) lines.failAtEnd("expected a property type");
      if (a == "list") {
        if (!tokens.next(b) || !tokens.next(c) || !tokens.next(d) || tokens.next(extra))
          lines.fail(a, "expected 'property list COUNT_TYPE ITEM_TYPE NAME'");
        const std::optional<PlyType> count_type = typeNamed(b), item_type = typeNamed(c);
        if (!count_type || !isInteger(*count_type)) lines.fail(b, "a list count needs an integer type, not '" + std::string(b) + "'");
        if (!item_type) lines.fail(c, "unknown property type '" + std::string(c) + "'");
        p.list = true;
        p.count_type = *count_type;
        p.type = *item_type;
        p.name = std::string(d);
      } else {
        if (!tokens.next(b) || tokens.next(extra)) lines.fail(a, "expected 'property TYPE NAME'");
        const std::optional<PlyType> type = typeNamed(a);
        if (!type) lines.fail(a, "unknown property type '" + std::string(a) + "'");
        p.type = *type;
        p.name = std::string(b);
      }
      for (const PlyProperty& other : e.properties)
        if (other.name == p.name) lines.fail(lines.line(), "property '" + p.name + "' is declared twice");
      const int index = static_cast<int>(e.properties.size());
      if (e.name == "vertex" && !p.list) {
        if (p.name == "x") e.x = index;
        if (p.name == "y") e.y = index;
        if (p.name == "z") e.z = index;
      }
      if (e.name == "face" && p.list && (p.name == "vertex_indices" || p.name == "vertex_index")) {
        if (!isInteger(p.type)) lines.fail(lines.line(), "face indices need an integer type");
        e.indices = index;
      }
      e.properties.push_back(std::move(p));
      continue;
    }
    lines.fail(keyword, "unknown header line '" + std::string(keyword) + "'");
  }
}

// ---------------------------------------------------------------------------
// Binary bodies
// ---------------------------------------------------------------------------

class BinaryBody {
 public:
  BinaryBody(std::string_view bytes, size_t at, bool swap, std::string_view name)
      : bytes_(bytes), at_(at), swap_(swap), name_(name) {}

  size_t remaining() const { return bytes_.size() - at_; }
  size_t offset() const { return at_; }

  /// A value of type t at the cursor, widened to double (then advance).
  double scalar(PlyType t, const PlyElement& e, uint64_t record) {
    need(uint64_t(typeSize(t)), e, record);
    const double v = scalarAt(bytes_.data() + at_, t);
    at_ += size_t(typeSize(t));
    return v;
  }
  void skip(uint64_t n, const PlyElement& e, uint64_t record) {
    need(n, e, record);
    at_ += size_t(n);
  }
  void need(uint64_t n, const PlyElement& e, uint64_t record) const {
    if (n > remaining())
      fail("the data ends inside element '" + e.name + "' record " + std::to_string(record) + " of " +
           std::to_string(e.count));
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw Error(std::string(name_) + ": byte " + std::to_string(at_) + ": " + message, ExitCode::kBadInput);
  }

  double scalarAt(const char* p, PlyType t) const {
    char b[8];
    const int n = typeSize(t);
    std::memcpy(b, p, size_t(n));
    if (swap_) std::reverse(b, b + n);
    switch (t) {
      case PlyType::kI8: return double(int8_t(b[0]));
      case PlyType::kU8: return double(uint8_t(b[0]));
      case PlyType::kI16: return double(load<int16_t>(b));
      case PlyType::kU16: return double(load<uint16_t>(b));
      case PlyType::kI32: return double(load<int32_t>(b));
      case PlyType::kU32: return double(load<uint32_t>(b));
      case PlyType::kF32: return double(load<float>(b));
      case PlyType::kF64: return load<double>(b);
    }
    return 0;
  }
  float floatAt(const char* p) const {
    char b[4];
    std::memcpy(b, p, 4);
    if (swap_) std::reverse(b, b + 4);
    return load<float>(b);
  }

 private:
  template <typename T>
  static T load(const char* b) {
    T v;
    std::memcpy(&v, b, sizeof v);
    return v;
  }
  std::string_view bytes_;
  size_t at_;
  bool swap_;
  std::string_view name_;
};

void failNonFinite(const BinaryBody& body, std::string_view name, uint64_t point, int axis, double v) {
  throw Error(std::string(name) + ": vertex record " + std::to_string(point) + ": " + nonFiniteMessage(point, axis, v),
              ExitCode::kBadInput);
}

void readBinary(const PlyHeader& h, const ReadRequest& r, MeshContents& out) {
  const bool swap = (h.encoding == PlyEncoding::kBig) != (std::endian::native == std::endian::big);
  BinaryBody body(r.bytes, h.body, swap, r.name);
  std::vector<uint32_t> polygon;
  const uint64_t vertex_count = h.vertex().count;
  for (const PlyElement& e : h.elements) {
    const uint64_t min_bytes = e.minBytes();
    if (min_bytes > 0 && e.count > body.remaining() / min_bytes)
      body.fail("element '" + e.name + "' declares " + std::to_string(e.count) + " records of at least " +
                std::to_string(min_bytes) + " bytes, but only " + std::to_string(body.remaining()) + " bytes remain");
    const bool vertex = e.name == "vertex";
    const bool faces = r.want_faces && e.indices >= 0;
    bool fixed = true;
    for (const PlyProperty& p : e.properties) fixed = fixed && !p.list;
    if (vertex) {
      const bool as_float = e.properties[size_t(e.x)].type == PlyType::kF32 &&
                            e.properties[size_t(e.y)].type == PlyType::kF32 &&
                            e.properties[size_t(e.z)].type == PlyType::kF32;
      allocatePoints(out.points, e.count, as_float, r.budget, r.bytes.size(), r.name);
    }
    if (vertex && fixed) {
      // Fixed-size records: the coordinates at known offsets, no per-property walk.
      size_t offset[3] = {0, 0, 0};
      PlyType type[3] = {};
      const int axes[3] = {e.x, e.y, e.z};
      for (int a = 0; a < 3; ++a) {
        for (int k = 0; k < axes[a]; ++k) offset[a] += size_t(typeSize(e.properties[size_t(k)].type));
        type[a] = e.properties[size_t(axes[a])].type;
      }
      const char* base = r.bytes.data() + body.offset();
      for (uint64_t i = 0; i < e.count; ++i, base += min_bytes)
        for (int a = 0; a < 3; ++a) {
          if (!out.points.xyz32.empty()) {
            const float v = body.floatAt(base + offset[a]);
            if (!std::isfinite(v)) failNonFinite(body, r.name, i, a, v);
            out.points.xyz32[3 * i + size_t(a)] = v;
          } else {
            const double v = body.scalarAt(base + offset[a], type[a]);
            if (!std::isfinite(v)) failNonFinite(body, r.name, i, a, v);
            out.points.xyz64[3 * i + size_t(a)] = v;
          }
        }
      body.skip(e.count * min_bytes, e, e.count);
      continue;
    }
    for (uint64_t i = 0; i < e.count; ++i) {
      polygon.clear();
      for (size_t k = 0; k < e.properties.size(); ++k) {
        const PlyProperty& p = e.properties[k];
        if (!p.list) {
          const double v = body.scalar(p.type, e, i);
          if (vertex && (int(k) == e.x || int(k) == e.y || int(k) == e.z)) {
            const int a = int(k) == e.x ? 0 : int(k) == e.y ? 1 : 2;
            if (!std::isfinite(v)) failNonFinite(body, r.name, i, a, v);
            if (!out.points.xyz32.empty()) out.points.xyz32[3 * i + size_t(a)] = float(v);
            else out.points.xyz64[3 * i + size_t(a)] = v;
          }
          continue;
        }
        const double n = body.scalar(p.count_type, e, i);
        if (n < 0) body.fail("element '" + e.name + "' record " + std::to_string(i) + ": negative list count");
        const uint64_t items = uint64_t(n);
        if (!(faces && int(k) == e.indices)) {
          body.skip(checkedMul(items, uint64_t(typeSize(p.type))).value_or(UINT64_MAX), e, i);
          continue;
        }
        body.need(items * uint64_t(typeSize(p.type)), e, i);
        for (uint64_t j = 0; j < items; ++j) {
          const double index = body.scalar(p.type, e, i);
          if (index < 0 || index >= double(vertex_count))
            body.fail("face " + std::to_string(i) + ": vertex index " + std::to_string(int64_t(index)) +
                      " is outside the " + std::to_string(vertex_count) + " vertices");
          polygon.push_back(uint32_t(index));
        }
      }
      if (faces) appendFan(out.triangles, polygon.data(), polygon.size(), r.budget, r.bytes.size());
    }
  }
}

// ---------------------------------------------------------------------------
// ASCII bodies: one record a line (blank lines skipped)
// ---------------------------------------------------------------------------

void readAscii(const PlyHeader& h, const ReadRequest& r, MeshContents& out) {
  TextLines lines(r.bytes, r.name, h.body, h.body_line);
  std::vector<uint32_t> polygon;
  const uint64_t vertex_count = h.vertex().count;
  for (const PlyElement& e : h.elements) {
    // Every record takes at least one character and a line end: a bound that
    // stops absurd counts before allocating and leaves a short file to the
    // line-by-line errors below.
    const uint64_t remaining = lines.remaining();
    if (e.count > remaining / 2 + 1)
      throw Error(std::string(r.name) + ": element '" + e.name + "' declares " + std::to_string(e.count) +
                      " records but only " + std::to_string(remaining) + " bytes follow",
                  ExitCode::kBadInput);
    const bool vertex = e.name == "vertex";
    const bool faces = r.want_faces && e.indices >= 0;
    bool as_float = false;
    if (vertex) {
      as_float = e.properties[size_t(e.x)].type == PlyType::kF32 && e.properties[size_t(e.y)].type == PlyType::kF32 &&
                 e.properties[size_t(e.z)].type == PlyType::kF32;
      allocatePoints(out.points, e.count, as_float, r.budget, r.bytes.size(), r.name);
    }
    for (uint64_t i = 0; i < e.count; ++i) {
      if (!lines.nextContent(0))
        lines.failAtEnd("the file ends before element '" + e.name + "' record " + std::to_string(i) + " of " +
                        std::to_string(e.count));
      Tokens tokens(lines.line());
      std::string_view token;
      auto value = [&](const char* what) {
        if (!tokens.next(token))
          lines.failAtEnd("element '" + e.name + "' record " + std::to_string(i) + ": missing " + what);
        return token;
      };
      polygon.clear();
      for (size_t k = 0; k < e.properties.size(); ++k) {
        const PlyProperty& p = e.properties[k];
        if (!p.list) {
          const std::string_view t = value(("property '" + p.name + "'").c_str());
          const int axis = !vertex ? -1 : int(k) == e.x ? 0 : int(k) == e.y ? 1 : int(k) == e.z ? 2 : -1;
          if (axis < 0) {
            parseNumber(lines, t, p.name.c_str());
          } else if (as_float) {
            const float v = parseNumber32(lines, t, "coordinate");
            if (!std::isfinite(v)) lines.fail(t, nonFiniteMessage(i, axis, v));
            out.points.xyz32[3 * i + size_t(axis)] = v;
          } else {
            const double v = parseNumber(lines, t, "coordinate");
            if (!std::isfinite(v)) lines.fail(t, nonFiniteMessage(i, axis, v));
            out.points.xyz64[3 * i + size_t(axis)] = v;
          }
          continue;
        }
        const std::string_view count_token = value(("the count of list '" + p.name + "'").c_str());
        const uint64_t items = parseCount(lines, count_token, "list count", lines.line().size());
        const bool indices = faces && int(k) == e.indices;
        for (uint64_t j = 0; j < items; ++j) {
          const std::string_view t = value(("item " + std::to_string(j) + " of list '" + p.name + "'").c_str());
          if (!indices) {
            parseNumber(lines, t, p.name.c_str());
            continue;
          }
          if (vertex_count == 0) lines.fail(t, "a face index, but the file has no vertices");
          polygon.push_back(uint32_t(parseCount(lines, t, "vertex index", std::min<uint64_t>(vertex_count - 1, UINT32_MAX - 1))));
        }
      }
      if (tokens.next(token))
        lines.fail(token, "element '" + e.name + "' record " + std::to_string(i) + " has more values than the header declares");
      if (faces) appendFan(out.triangles, polygon.data(), polygon.size(), r.budget, r.bytes.size());
    }
  }
}

}  // namespace

void readPly(const ReadRequest& r, MeshContents& out) {
  const PlyHeader h = parseHeader(r.bytes, r.name);
  const bool has_vertex = std::any_of(h.elements.begin(), h.elements.end(),
                                      [](const PlyElement& e) { return e.name == "vertex"; });
  if (!has_vertex) throw Error(std::string(r.name) + ": the PLY header declares no 'vertex' element", ExitCode::kBadInput);
  const PlyElement* vertex = &h.vertex();
  if (vertex->x < 0 || vertex->y < 0 || vertex->z < 0)
    throw Error(std::string(r.name) + ": the PLY 'vertex' element lacks a scalar x, y or z property", ExitCode::kBadInput);
  if (r.want_faces && vertex->count > UINT32_MAX)
    throw Error(std::string(r.name) + ": a mesh of more than 2^32 - 1 vertices", ExitCode::kBadInput);
  if (h.encoding == PlyEncoding::kAscii) readAscii(h, r, out);
  else readBinary(h, r, out);
}

}  // namespace procgen::io
