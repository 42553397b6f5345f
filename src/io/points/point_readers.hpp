// The point and mesh readers behind procgen/points.hpp (parsePointFile,
// parseMeshFile): one reader per format, each filling a MeshContents, and the
// line and token helpers the text formats share so that every malformed line
// is reported the same way (file:line:col, procgen::ParseError).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "procgen/points.hpp"

namespace procgen::io {

/// What a reader produces: the vertices, and with want_faces the faces as
/// triangle fans (indices into the vertices, checked).
struct MeshContents {
  PointCloud points;
  std::vector<uint32_t> triangles;
};

struct ReadRequest {
  std::string_view bytes;
  std::string_view name;
  bool want_faces = false;
  uint64_t budget = 0;  ///< memory budget (0 = default); the file's bytes count as held
};

void readPly(const ReadRequest& request, MeshContents& out);
void readOff(const ReadRequest& request, MeshContents& out);
void readXyz(const ReadRequest& request, MeshContents& out);
void readObj(const ReadRequest& request, MeshContents& out);

/// Lines of a text, with their 1-based numbers; the line excludes its "\n"
/// or "\r\n". A UTF-8 byte-order mark at the very start is skipped.
class TextLines {
 public:
  TextLines(std::string_view text, std::string_view name, size_t offset = 0, int first_line = 1);
  /// Advances to the next line; false at the end of the text.
  bool next();
  /// Advances to the next line that is not blank once `comment` and what
  /// follows it are removed (no comment character when it is 0).
  bool nextContent(char comment);
  std::string_view line() const { return line_; }
  int number() const { return number_; }
  /// Bytes after the current line.
  size_t remaining() const { return text_.size() - next_; }
  std::string_view name() const { return name_; }
  /// ParseError at the byte of the current line that `at` points to (a view
  /// into line(); its end when `at` is empty and outside).
  [[noreturn]] void fail(std::string_view at, const std::string& message) const;
  /// ParseError at the end of the current line ("expected more values").
  [[noreturn]] void failAtEnd(const std::string& message) const;

 private:
  std::string_view text_, name_, line_;
  size_t next_ = 0;
  int number_ = 0;
};

/// Whitespace-separated tokens of one line (also commas when `commas`).
class Tokens {
 public:
  explicit Tokens(std::string_view line, bool commas = false) : rest_(line), commas_(commas) {}
  bool next(std::string_view& token);

 private:
  std::string_view rest_;
  bool commas_;
};

/// The token as a number (from_chars: decimal or scientific, also "nan" and
/// "inf", which the callers then refuse with the point's position).
double parseNumber(const TextLines& lines, std::string_view token, const char* what);
float parseNumber32(const TextLines& lines, std::string_view token, const char* what);
/// The token as a whole number in [0, max].
uint64_t parseCount(const TextLines& lines, std::string_view token, const char* what, uint64_t max);

/// "point 17: coordinate y is NaN" (or "is infinite"); i counts from 0.
std::string nonFiniteMessage(uint64_t point, int axis, double value);

/// Sizes `cloud` for `count` points (float or double) after asking the
/// budget, with `held` bytes (the file) already held.
void allocatePoints(PointCloud& cloud, uint64_t count, bool as_float, uint64_t budget, uint64_t held,
                    std::string_view name);

/// Appends the fan of a polygon (indices already checked) to `triangles`,
/// asking the budget whenever the array would grow.
void appendFan(std::vector<uint32_t>& triangles, const uint32_t* polygon, size_t n, uint64_t budget,
               uint64_t held);

}  // namespace procgen::io
