// The text point formats: OFF (Princeton Shape Benchmark / Geomview),
// XYZ (one point a line, as scanners export it) and Wavefront OBJ (`v` and
// `f` lines). Each is read line by line so that every error names its line
// and column (TextLines); sizes are bounded by the file's bytes before any
// allocation.
#include <algorithm>
#include <cmath>

#include "io/points/point_readers.hpp"
#include "procgen/budget.hpp"
#include "procgen/error.hpp"

namespace procgen::io {
namespace {

/// Reads x y z from the next three tokens into point i of `cloud` (double).
void readCoordinates(const TextLines& lines, Tokens& tokens, PointCloud& cloud, uint64_t i) {
  for (int axis = 0; axis < 3; ++axis) {
    std::string_view token;
    if (!tokens.next(token))
      lines.failAtEnd("point " + std::to_string(i) + ": expected 3 coordinates x y z, found " + std::to_string(axis));
    const double v = parseNumber(lines, token, "coordinate");
    if (!std::isfinite(v)) lines.fail(token, nonFiniteMessage(i, axis, v));
    cloud.xyz64[3 * i + size_t(axis)] = v;
  }
}

}  // namespace

// OFF: an optional-prefix keyword line ([ST][C][N]OFF, counts may follow on
// it), the counts "vertices faces edges", the vertex lines (x y z, extra
// columns — normals, colours, texture coordinates — ignored), then the face
// lines (n i0 … i(n−1), a colour may follow). `#` starts a comment.
void readOff(const ReadRequest& r, MeshContents& out) {
  TextLines lines(r.bytes, r.name);
  if (!lines.nextContent('#')) throw Error(std::string(r.name) + ": empty OFF file", ExitCode::kBadInput);
  Tokens header(lines.line());
  std::string_view keyword, token;
  header.next(keyword);
  std::string_view prefix = keyword;
  if (prefix.size() >= 3 && prefix.substr(prefix.size() - 3) == "OFF") prefix.remove_suffix(3);
  else lines.fail(keyword, "not an OFF file: expected 'OFF' (or COFF, NOFF, CNOFF, STOFF)");
  if (prefix.find_first_of("4n") != std::string_view::npos)
    lines.fail(keyword, "only 3D OFF files are read ('" + std::string(keyword) + "' has another dimension)");
  if (prefix.find_first_not_of("STCN") != std::string_view::npos)
    lines.fail(keyword, "unknown OFF keyword '" + std::string(keyword) + "'");
  std::vector<std::string_view> counts;
  while (header.next(token)) counts.push_back(token);
  if (!counts.empty() && counts[0] == "BINARY") lines.fail(counts[0], "binary OFF files are not supported");
  if (counts.empty()) {
    if (!lines.nextContent('#')) lines.failAtEnd("expected the counts 'vertices faces edges'");
    Tokens line(lines.line());
    while (line.next(token)) counts.push_back(token);
  }
  if (counts.size() < 2 || counts.size() > 3)
    lines.fail(counts.empty() ? lines.line() : counts[0], "expected the counts 'vertices faces edges'");
  const uint64_t vertices = parseCount(lines, counts[0], "vertex count", UINT64_MAX);
  const uint64_t faces = parseCount(lines, counts[1], "face count", UINT64_MAX);
  if (counts.size() == 3) parseCount(lines, counts[2], "edge count", UINT64_MAX);
  // Every vertex and face line takes at least two bytes: absurd counts stop
  // here, before allocating; a short file gets the line-by-line errors below.
  if (vertices > lines.remaining() / 2 + 1 || faces > lines.remaining() / 2 + 1)
    lines.fail(counts[0], "the counts " + std::to_string(vertices) + " vertices and " + std::to_string(faces) +
                              " faces cannot fit in the " + std::to_string(lines.remaining()) + " bytes that follow");
  allocatePoints(out.points, vertices, false, r.budget, r.bytes.size(), r.name);
  for (uint64_t i = 0; i < vertices; ++i) {
    if (!lines.nextContent('#'))
      lines.failAtEnd("the file ends after " + std::to_string(i) + " of " + std::to_string(vertices) + " vertices");
    Tokens tokens(lines.line());
    readCoordinates(lines, tokens, out.points, i);
  }
  if (!r.want_faces) return;
  if (vertices > UINT32_MAX) throw Error(std::string(r.name) + ": a mesh of more than 2^32 - 1 vertices", ExitCode::kBadInput);
  std::vector<uint32_t> polygon;
  for (uint64_t f = 0; f < faces; ++f) {
    if (!lines.nextContent('#'))
      lines.failAtEnd("the file ends after " + std::to_string(f) + " of " + std::to_string(faces) + " faces");
    Tokens tokens(lines.line());
    tokens.next(token);
    const uint64_t n = parseCount(lines, token, "face vertex count", lines.line().size());
    polygon.clear();
    for (uint64_t k = 0; k < n; ++k) {
      if (!tokens.next(token))
        lines.failAtEnd("face " + std::to_string(f) + ": expected " + std::to_string(n) + " vertex indices");
      if (vertices == 0) lines.fail(token, "a face index, but the file has no vertices");
      polygon.push_back(uint32_t(parseCount(lines, token, "vertex index", vertices - 1)));
    }
    appendFan(out.triangles, polygon.data(), polygon.size(), r.budget, r.bytes.size());
  }
}

// XYZ: every line that is not blank once a `#` comment is cut holds at
// least x y z (spaces, tabs or commas between); further columns (intensity,
// colour, normals) are ignored.
void readXyz(const ReadRequest& r, MeshContents& out) {
  uint64_t count = 0;  // a first pass counts the points, so the array is sized once
  {
    TextLines lines(r.bytes, r.name);
    while (lines.nextContent('#')) ++count;
  }
  allocatePoints(out.points, count, false, r.budget, r.bytes.size(), r.name);
  TextLines lines(r.bytes, r.name);
  for (uint64_t i = 0; i < count; ++i) {
    lines.nextContent('#');
    Tokens tokens(lines.line(), true);
    readCoordinates(lines, tokens, out.points, i);
  }
}

// OBJ: `v x y z [w]` gives a vertex, `f a b c …` a polygon whose corners are
// v, v/vt, v//vn or v/vt/vn with 1-based indices, negative ones counting back
// from the last vertex defined so far. Every other statement is ignored.
void readObj(const ReadRequest& r, MeshContents& out) {
  uint64_t vertices = 0;
  {
    TextLines lines(r.bytes, r.name);
    std::string_view keyword;
    while (lines.nextContent('#')) {
      Tokens tokens(lines.line());
      if (tokens.next(keyword) && keyword == "v") ++vertices;
    }
  }
  allocatePoints(out.points, vertices, false, r.budget, r.bytes.size(), r.name);
  if (r.want_faces && vertices > UINT32_MAX)
    throw Error(std::string(r.name) + ": a mesh of more than 2^32 - 1 vertices", ExitCode::kBadInput);
  TextLines lines(r.bytes, r.name);
  std::vector<uint32_t> polygon;
  uint64_t defined = 0;
  std::string_view keyword, token;
  while (lines.nextContent('#')) {
    Tokens tokens(lines.line());
    tokens.next(keyword);
    if (keyword == "v") {
      readCoordinates(lines, tokens, out.points, defined++);
      continue;
    }
    if (keyword != "f" || !r.want_faces) continue;
    polygon.clear();
    while (tokens.next(token)) {
      const std::string_view index_text = token.substr(0, token.find('/'));
      const bool negative = !index_text.empty() && index_text[0] == '-';
      const uint64_t magnitude =
          parseCount(lines, negative ? index_text.substr(1) : index_text, "vertex index", UINT64_MAX);
      const uint64_t limit = negative ? defined : vertices;
      if (magnitude == 0 || magnitude > limit)
        lines.fail(token, "vertex index " + std::string(index_text) + " is outside the " + std::to_string(limit) +
                              (negative ? " vertices defined so far" : " vertices"));
      polygon.push_back(uint32_t(negative ? defined - magnitude : magnitude - 1));
    }
    appendFan(out.triangles, polygon.data(), polygon.size(), r.budget, r.bytes.size());
  }
}

}  // namespace procgen::io
