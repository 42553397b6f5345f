// The studio's L-system endpoints (issue 20 point 2): the page's editor posts
// the .l text on every edit and gets the geometry back as a binary frame.
//
//   POST /api/lsystem/geometry  → Frame: counts, bounds, per-stage timings, the
//        file's defaults and #define constants in the header; segments as u16
//        positions normalized into the bounds (2 vertices each), per-vertex
//        sRGB colours, fan-triangulated polygons.
//   POST /api/lsystem/stream    → the same frame, preceded for a big model by
//        a preview sized to the client's view (the level of detail below).
//   POST /api/lsystem/export    → the geometry as glb, obj, ply, svg or png
//        (the library's writers into memory: encodeGeometry).
//
// Paper: Lipp, Wonka, Wimmer, "Parallel Generation of Multiple L-Systems" —
// interactive editing of large L-systems; derive() and interpret() are the
// library's (include/procgen/lsystem.hpp), this file only adapts them to the
// wire. The derivation's progress callback and the interpretation's
// keep_going check the job, so a newer edit cancels a stale derivation
// between steps and a stale interpretation between chunks; the memory budget of the job goes
// to both stages, so an oversized derivation is refused before allocating.
#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/large_buffer.hpp"
#include "lsystem/lexer.hpp"
#include "lsystem/lsystem_data.hpp"
#include "procgen/io.hpp"
#include "procgen/lsystem.hpp"
#include "studio/api.hpp"

namespace procgen::studio {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxTextBytes = size_t{1} << 20;
constexpr size_t kMaxDefines = 256;
constexpr int64_t kMaxIterations = 1000;  // the memory budget bounds the work long before this

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

/// The shortest text that reads back as the float `value`.
std::string floatText(float value) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return std::string(text, ec == std::errc() ? end : text);
}

/// Replaces the value of every `#define NAME value` named in `overrides`,
/// keeping every other byte's line and column: the old value's bytes become
/// spaces (newlines stay), the new value is written where the old one began.
/// So a parse error anywhere else still points at the user's text. Throws
/// BadRequest for a name the text does not define, ParseError when the text
/// cannot even be split into lines (an unterminated comment).
std::string withDefines(std::string_view text, const std::map<std::string, float>& overrides) {
  std::string out(text);
  if (overrides.empty()) return out;
  detail::SourceText source(text, "model.l");
  std::vector<size_t> line_starts{0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') line_starts.push_back(i + 1);
  auto offsetOf = [&](int line, int column) { return line_starts.at(static_cast<size_t>(line - 1)) + static_cast<size_t>(column - 1); };

  struct Patch {
    size_t begin, end;
    std::string value;
  };
  std::vector<Patch> patches;
  std::map<std::string, bool> found;
  for (const detail::LogicalLine& line : detail::splitLogicalLines(source)) {
    const std::string& t = line.text;
    size_t p = 0;
    while (p < t.size() && detail::isSpace(t[p])) ++p;
    if (p >= t.size() || t[p] != '#') continue;
    ++p;
    while (p < t.size() && detail::isSpace(t[p])) ++p;
    if (t.compare(p, 6, "define") != 0) continue;
    p += 6;
    while (p < t.size() && detail::isSpace(t[p])) ++p;
    size_t name_end = p;
    while (name_end < t.size() && detail::isIdentChar(t[name_end])) ++name_end;
    auto it = overrides.find(t.substr(p, name_end - p));
    if (it == overrides.end()) continue;
    size_t value_begin = name_end;
    while (value_begin < t.size() && detail::isSpace(t[value_begin])) ++value_begin;
    size_t value_end = t.size();
    while (value_end > value_begin && detail::isSpace(t[value_end - 1])) --value_end;
    if (value_begin >= value_end) continue;  // no value: the parser reports it
    size_t begin = offsetOf(line.line[value_begin], line.column[value_begin]);
    size_t end = offsetOf(line.line[value_end - 1], line.column[value_end - 1]) + 1;
    patches.push_back({begin, end, floatText(it->second)});
    found[it->first] = true;
  }
  for (const auto& [name, value] : overrides)
    if (!found.count(name)) throw BadRequest("'defines': the model has no #define " + printableText(name, 60));
  // Back to front, so earlier offsets stay valid.
  std::sort(patches.begin(), patches.end(), [](const Patch& a, const Patch& b) { return a.begin > b.begin; });
  for (const Patch& patch : patches) {
    std::string blank = out.substr(patch.begin, patch.end - patch.begin);
    for (char& c : blank)
      if (c != '\n') c = ' ';
    size_t first_line = std::min(blank.find('\n'), blank.size());
    std::string replacement = patch.value + blank.substr(std::min(patch.value.size(), first_line));
    out.replace(patch.begin, patch.end - patch.begin, replacement);
  }
  return out;
}

/// The request's {NAME: number} overrides of #define constants.
std::map<std::string, float> defineOverrides(const Params& params) {
  std::map<std::string, float> out;
  Params defines = params.object("defines");
  if (defines.raw().size() > kMaxDefines)
    throw BadRequest("'defines' has " + std::to_string(defines.raw().size()) + " entries; at most " +
                     std::to_string(kMaxDefines) + " are accepted");
  for (const auto& [name, value] : defines.raw().items()) {
    bool identifier = !name.empty() && name.size() <= 64 && detail::isIdentStart(name[0]) &&
                      std::all_of(name.begin(), name.end(), [](char c) { return detail::isIdentChar(c); });
    if (!identifier) throw BadRequest("'defines': '" + printableText(name, 60) + "' is not a #define name");
    out[name] = static_cast<float>(defines.number(name, 0, -3.4e38, 3.4e38));
  }
  return out;
}

/// A model compiled, derived and interpreted as the request asks, with the
/// time each stage took.
struct Model {
  LSystem lsystem{nullptr};
  float angle = 0;  ///< the turtle's default turn used (the request's, else the file's)
  DeriveStats stats;
  Geometry geometry;
  uint64_t seed = 1;
  Execution execution;  ///< the request's backend and threads
  double parse_ms = 0, derive_ms = 0, interpret_ms = 0;
};

Model buildModel(const Params& params, Job& job) {
  if (!params.has("text")) throw BadRequest("'text' (the .l source) is required");
  const std::string text = params.string("text", "", kMaxTextBytes);
  // Absent fields keep the file's values (the fallbacks below are outside the ranges).
  const int64_t iterations = params.integer("iterations", -1, 0, kMaxIterations);
  const double angle = params.number("angle", std::nan(""), -3600, 3600);
  const bool has_seed = params.has("seed");
  const uint64_t seed = params.seed("seed", 1);
  const std::map<std::string, float> defines = defineOverrides(params);
  Model model;
  const Execution execution = model.execution = job.execution(params);
  auto t0 = Clock::now();
  model.lsystem = LSystem::fromText(withDefines(detail::withoutBom(text), defines), "model.l");
  model.parse_ms = msSince(t0);
  job.check();

  DeriveOptions derive_options;
  if (iterations >= 0) derive_options.iterations = static_cast<int>(iterations);
  model.seed = has_seed ? seed : model.lsystem.seed().value_or(1);
  derive_options.seed = model.seed;
  derive_options.memory_budget_bytes = job.memoryBudget();
  derive_options.execution = execution;
  derive_options.progress = [&job](int, int, uint64_t) { job.check(); };
  t0 = Clock::now();
  ModuleString string = derive(model.lsystem, derive_options, &model.stats);
  model.derive_ms = msSince(t0);
  job.check();

  InterpretOptions interpret_options;
  interpret_options.view = model.lsystem.view();
  if (!std::isnan(angle)) interpret_options.view.angle_deg = static_cast<float>(angle);
  model.angle = interpret_options.view.angle_deg;
  interpret_options.execution = execution;
  interpret_options.seed = model.seed;
  interpret_options.memory_budget_bytes = job.memoryBudget();
  // A newer edit (or the deadline) stops a stale interpretation between
  // chunks, so it frees its job slot instead of running to its end.
  interpret_options.keep_going = [&job] { return !job.cancelled() && !job.overdue(); };
  t0 = Clock::now();
  try {
    model.geometry = interpret(model.lsystem, string, interpret_options);
  } catch (const InterpretCancelled&) {
    job.check();  // Cancelled or TimeLimitExceeded, as for every other stage
    throw;
  }
  model.interpret_ms = msSince(t0);
  job.check();
  return model;
}

/// The palette as 8-bit sRGB, for the 16 indices it has (indices wrap).
struct Palette8 {
  std::array<std::array<uint8_t, 3>, 16> rgb;
  Palette8() {
    for (int i = 0; i < 16; ++i) {
      Vec3 c = paletteColor(i);
      rgb[i] = {to8(c.x), to8(c.y), to8(c.z)};
    }
  }
  static uint8_t to8(float v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)); }
  const std::array<uint8_t, 3>& operator[](int32_t index) const { return rgb[static_cast<size_t>(index & 15)]; }
};

/// The frame's quantizer: positions as u16 normalized into the bounds (the
/// page's one convention, api.hpp).
U16Quantizer quantizerOf(const Bounds& b) {
  if (b.empty()) return U16Quantizer({0, 0, 0}, {0, 0, 0});
  return U16Quantizer({b.min.x, b.min.y, b.min.z}, {b.max.x, b.max.y, b.max.z});
}

json boundsJson(const Bounds& b) {
  if (b.empty()) return json::array({0, 0, 0, 0, 0, 0});
  return json::array({b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z});
}

/// Runs body(begin, end) over [0, n) cut into `threads` ranges, one per
/// thread (the calling thread takes the first). The frame's encoding is
/// plumbing, not a backend stage: plain threads, as many as the request's.
template <typename Body>
void forRanges(size_t n, int threads, Body&& body) {
  const size_t parts = std::clamp<size_t>(static_cast<size_t>(std::max(threads, 1)), 1, n / 65536 + 1);
  std::vector<std::thread> workers;
  for (size_t t = 1; t < parts; ++t) workers.emplace_back([&body, n, parts, t] { body(n * t / parts, n * (t + 1) / parts); });
  body(0, n / parts);
  for (std::thread& w : workers) w.join();
}

/// What every frame of a model needs from all of its segments: their
/// bounds with the polygons' (the quantizer's box, shared by the preview and
/// the full frame) and whether every segment has one colour (then sent in
/// the header, not per vertex).
struct SegmentFacts {
  Bounds bounds;
  bool one_color = true;
  /// Adds segments [begin, end) of `g`.
  void addSegments(const Geometry& g, size_t begin, size_t end) {
    const int32_t first_color = g.segments.empty() ? 0 : g.segments[0].color & 15;
    bool same = true;
    for (size_t i = begin; i < end; ++i) {
      const Segment& s = g.segments[i];
      bounds.add(s.start), bounds.add(s.end);
      same &= (s.color & 15) == first_color;
    }
    one_color = one_color && same;
  }
  void merge(const SegmentFacts& other) {
    if (!other.bounds.empty()) bounds.add(other.bounds.min), bounds.add(other.bounds.max);
    one_color = one_color && other.one_color;
  }
  void addPolygons(const Geometry& g) {
    for (const Vec3& v : g.polygon_vertices) bounds.add(v);
  }
};

/// SegmentFacts of `g`, one parallel pass over the segments.
SegmentFacts segmentFacts(const Geometry& g, int threads) {
  std::mutex mutex;
  SegmentFacts total;
  forRanges(g.segments.size(), threads, [&](size_t begin, size_t end) {
    SegmentFacts part;
    part.addSegments(g, begin, end);
    std::lock_guard lock(mutex);
    total.merge(part);
  });
  total.addPolygons(g);
  return total;
}

/// A piece of a preview (below): from a vertex of the geometry — segment
/// from >> 1's start, or its end when from & 1 — to segment `to`'s end, in
/// `to`'s colour.
struct Piece {
  uint32_t from, to;
};

/// The segments a frame sends: the geometry's own, or a preview's pieces.
struct SegmentList {
  const Geometry& g;
  const Piece* pieces = nullptr;  ///< null: g.segments
  size_t count = 0;
  static SegmentList all(const Geometry& g) { return {g, nullptr, g.segments.size()}; }
  const Vec3& start(size_t i) const {
    if (!pieces) return g.segments[i].start;
    const Segment& s = g.segments[pieces[i].from >> 1];
    return pieces[i].from & 1 ? s.end : s.start;
  }
  const Vec3& end(size_t i) const { return g.segments[pieces ? pieces[i].to : i].end; }
  int32_t color(size_t i) const { return g.segments[pieces ? pieces[i].to : i].color; }
};

/// The frame of `list` (the model's segments, or its preview's) and the
/// model's polygons: positions quantized into `bounds` (the model's, so a
/// preview and its full frame share one convention and one camera fit).
Frame geometryFrame(const Model& model, const SegmentList& list, const SegmentFacts& facts, Job& job, int threads) {
  const Geometry& g = list.g;
  auto t0 = Clock::now();
  const Bounds& bounds = facts.bounds;
  const U16Quantizer quantize = quantizerOf(bounds);
  static const Palette8 palette;

  Frame frame;
  const size_t n = list.count, vertices = g.polygon_vertices.size();
  size_t triangles = 0;
  // One colour for every segment (most models): sent in the header, not per vertex.
  const bool one_color = facts.one_color;
  auto padded = [](size_t bytes) { return (bytes + 7) & ~size_t{7}; };
  // A flat model (z = 0 everywhere: the 2D turtle models) sends x, y only: a third fewer bytes.
  const int components = !bounds.empty() && bounds.min.z == 0.0f && bounds.max.z == 0.0f ? 2 : 3;
  frame.header["segment_position_components"] = components;
  frame.reserve(padded(n * 4 * components) + (one_color ? 0 : padded(n * 6)) + padded(vertices * 6) +
                padded(vertices * 3) + padded(vertices * 12));
  // Written straight into the frame's body, in parallel.
  uint16_t* positions = frame.allocate<uint16_t>("segment_positions", n * 2 * components);
  forRanges(n, threads, [&](size_t begin, size_t end) {
    uint16_t xyz[6];
    for (size_t i = begin; i < end; ++i) {
      uint16_t* out = positions + 2 * components * i;
      if (components == 3) {
        quantize.put(list.start(i), out);
        quantize.put(list.end(i), out + 3);
        continue;
      }
      quantize.put(list.start(i), xyz);
      quantize.put(list.end(i), xyz + 3);
      out[0] = xyz[0], out[1] = xyz[1], out[2] = xyz[3], out[3] = xyz[4];
    }
  });
  if (n > 0 && one_color) {
    const auto& c = palette[list.color(0)];
    frame.header["segment_color"] = {c[0], c[1], c[2]};
  } else if (n > 0) {
    uint8_t* colors = frame.allocate<uint8_t>("segment_colors", n * 6);
    forRanges(n, threads, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        const auto& c = palette[list.color(i)];
        std::copy(c.begin(), c.end(), colors + 6 * i);
        std::copy(c.begin(), c.end(), colors + 6 * i + 3);
      }
    });
  }
  job.check();
  if (g.polygonCount() > 0) {
    std::vector<uint16_t> positions(g.polygon_vertices.size() * 3);
    std::vector<uint8_t> colors(g.polygon_vertices.size() * 3);
    std::vector<uint32_t> indices;
    for (size_t v = 0; v < g.polygon_vertices.size(); ++v) quantize.put(g.polygon_vertices[v], &positions[3 * v]);
    for (size_t p = 0; p < g.polygonCount(); ++p) {
      const uint64_t first = g.polygon_offsets[p], end = g.polygon_offsets[p + 1];
      const auto& c = palette[g.polygon_colors[p]];
      for (uint64_t v = first; v < end; ++v) std::copy(c.begin(), c.end(), &colors[3 * v]);
      // Fan triangulation, as the glTF writer does (exact for the convex polygons turtles draw).
      for (uint64_t v = first + 1; v + 1 < end; ++v) {
        indices.push_back(static_cast<uint32_t>(first));
        indices.push_back(static_cast<uint32_t>(v));
        indices.push_back(static_cast<uint32_t>(v + 1));
      }
    }
    frame.add("polygon_positions", positions);
    frame.add("polygon_colors", colors);
    frame.add("polygon_indices", indices);
    triangles = indices.size() / 3;
  }
  const double encode_ms = msSince(t0);

  const LSystem& l = model.lsystem;
  json defines = json::array();
  const detail::LSystemData& data = l.data();
  for (size_t i = 0; i < data.global_names.size(); ++i)
    defines.push_back({{"name", data.global_names[i]}, {"value", data.globals[i]}});
  json& h = frame.header;
  h["modules"] = model.stats.modules;
  h["modules_total"] = model.stats.modules_total;
  h["iterations"] = model.stats.iterations;
  h["step_modules"] = model.stats.step_modules;
  h["threads"] = model.stats.threads;
  h["segments"] = n;
  h["polygons"] = g.polygonCount();
  h["polygon_triangles"] = triangles;
  h["bounds"] = boundsJson(bounds);
  h["seed"] = std::to_string(model.seed);
  h["angle"] = model.angle;
  h["backend"] = std::string(backendName(model.execution.backend));
  h["file"] = {{"derivation_length", l.derivationLength()},
               {"angle", l.view().angle_deg},
               {"seed", l.seed() ? json(std::to_string(*l.seed())) : json(nullptr)},
               {"defines", defines}};
  h["timings"] = {{"parse_ms", model.parse_ms},
                  {"derive_ms", model.derive_ms},
                  {"interpret_ms", model.interpret_ms},
                  {"encode_ms", encode_ms}};
  return frame;
}


// --- The first view's level of detail ---------------------------------------
//
// A progressive reply (POST /api/lsystem/stream) sends first a preview sized
// to the client's view, then the full geometry. The preview is the model's
// segments seen through the client's camera on a grid of `cell` pixels
// (default 1/2: finer than the pixels):
//  - along each chain of connected segments, vertices that stay in the cell
//    of the last kept vertex are merged away (a polyline that crosses a cell
//    in many small steps is drawn as one piece), and a piece that ends in the
//    cell it started in is dropped (zero length on the grid);
//  - in segment order, a piece is kept only when it reaches a cell no kept
//    piece has reached (sampled at most a cell apart along it): a piece
//    drawn where the model is already drawn — the duplicates and the dense
//    interior of an overlapping model — adds nothing to the view.
// Kept vertices are the model's own, so each drawn line lies within a cell of
// the model's lines and every cell the model reaches is reached: at that view
// the picture is the same to within the grid (tests/studio compares the two
// rasterized by brute force, the browser test their screenshots). Zooming in
// shows the full frame. Pieces with an end behind the camera or far outside
// the view are kept as they are.

/// The client's view: a world → clip matrix (column-major, as three.js's
/// projectionMatrix · matrixWorldInverse) and the viewport in pixels.
struct ViewGrid {
  std::array<float, 16> m{};  ///< float: a cell of the grid is far above its rounding
  double width = 0, height = 0;
  double cells_per_px = 2;
  int64_t columns = 0, rows = 0;  ///< the grid over the viewport
  float half_columns = 0, half_rows = 0;  ///< the viewport's half width and height in cells

  /// `p` on the grid, in cells from the top left corner; false behind (or
  /// at) the camera plane or far outside the view.
  bool project(const Vec3& p, float& gx, float& gy) const {
    const float x = m[0] * p.x + m[4] * p.y + m[8] * p.z + m[12];
    const float y = m[1] * p.x + m[5] * p.y + m[9] * p.z + m[13];
    const float w = m[3] * p.x + m[7] * p.y + m[11] * p.z + m[15];
    if (!(w > 1e-12f)) return false;
    const float inv = 1 / w;
    gx = (x * inv + 1) * half_columns, gy = (1 - y * inv) * half_rows;
    constexpr float kFar = 1e6f;
    return std::abs(gx) < kFar && std::abs(gy) < kFar;  // false for NaN too
  }
  static int64_t floorOf(float v) {  // std::floor is a library call on baseline x86-64
    const int64_t t = static_cast<int64_t>(v);
    return t - (static_cast<float>(t) > v);
  }
};

/// The request's "view" {width, height, matrix, cell}; nullopt when absent.
std::optional<ViewGrid> viewGridOf(const Params& params) {
  if (!params.has("view")) return std::nullopt;
  const Params view = params.object("view");
  ViewGrid grid;
  grid.width = static_cast<double>(view.integer("width", 0, 1, 16384));
  grid.height = static_cast<double>(view.integer("height", 0, 1, 16384));
  if (!view.has("width") || !view.has("height")) throw BadRequest("'view' needs 'width' and 'height' (pixels)");
  const std::vector<double> matrix = view.numbers("matrix", 16);
  if (matrix.size() != 16) throw BadRequest("'view.matrix' must hold 16 numbers (column-major world to clip)");
  for (int k = 0; k < 16; ++k) grid.m[k] = static_cast<float>(matrix[k]);
  // The grid (a bit per cell) has at most 2^26 cells: a bigger view gets coarser cells.
  constexpr double kMaxGridCells = double(1 << 26);
  grid.cells_per_px = 1.0 / view.number("cell", 0.5, 0.125, 8);
  while (std::ceil(grid.width * grid.cells_per_px) * std::ceil(grid.height * grid.cells_per_px) > kMaxGridCells)
    grid.cells_per_px /= 2;
  grid.columns = static_cast<int64_t>(std::ceil(grid.width * grid.cells_per_px));
  grid.rows = static_cast<int64_t>(std::ceil(grid.height * grid.cells_per_px));
  grid.half_columns = static_cast<float>(0.5 * grid.width * grid.cells_per_px);
  grid.half_rows = static_cast<float>(0.5 * grid.height * grid.cells_per_px);
  return grid;
}

struct PreviewStats {
  uint64_t merged = 0, dropped_short = 0, covered = 0;
  double merge_ms = 0, cover_ms = 0;  ///< steps 1 and 2 (step 3, the compaction, is the rest of lod_ms)
};

/// Where a piece from (ax, ay) to (ex, ey) on the grid is checked for
/// coverage: at most a cell apart after its start (not checked: a chain's
/// vertex is the end of the piece before, a branch's start is where the
/// turtle drew before) to its end — a piece of up to two cells, most of them
/// in a dense view, at its middle and its end: sampleCount(…) points, the
/// k-th (from 1) at k/count of the way.
inline int sampleCount(float dx, float dy) {
  return std::max(2, static_cast<int>(std::max(std::abs(dx), std::abs(dy))) + 1);
}

/// The preview of `g` at `grid` (the text above), as pieces in segment
/// order, and the model's SegmentFacts (gathered in the same pass).
/// Deterministic: chains are cut at fixed blocks of segments (not per
/// thread), and coverage is decided in segment order (the first drawn is
/// kept). Precondition: fewer than 2^31 segments.
OverwriteVector<Piece> previewPieces(const Geometry& g, const ViewGrid& grid, int threads, PreviewStats& stats,
                                     SegmentFacts& facts) {
  constexpr size_t kBlock = size_t{1} << 16;
  constexpr uint32_t kDropped = ~uint32_t{0};
  // A piece's coverage samples as cells of the grid (row · columns + column),
  // found in the parallel pass so that the ordered pass only tests and sets
  // bits. kOffGrid: a sample off the grid (the piece is kept); kResample in
  // the first slot: more samples than slots (found again in the ordered pass,
  // rare: a piece longer than kSlots cells); unused slots repeat the end.
  constexpr int kSlots = 4;
  constexpr uint32_t kOffGrid = ~uint32_t{0}, kResample = kOffGrid - 1;  // the grid has at most 2^26 cells
  struct SampleCells {
    uint32_t cell[kSlots];
  };
  const size_t n = g.segments.size(), blocks = (n + kBlock - 1) / kBlock;
  // Scratch indexed like the segments: a block's pieces from its first slot.
  OverwriteVector<Piece> pieces;
  OverwriteVector<SampleCells> samples;
  OverwriteVector<int8_t> band_of;  // the band of rows the piece starts in (step 2), −1: none (kept)
  detail::resizeForOverwrite(pieces, n);
  detail::resizeForOverwrite(samples, n);
  detail::resizeForOverwrite(band_of, n);
  constexpr int64_t kBands = 4, kMargin = 16;
  const int64_t band_rows = (grid.rows + kBands - 1) / kBands;
  const float bands_per_row = 1.0f / static_cast<float>(band_rows);
  const int64_t columns = grid.columns, rows = grid.rows;
  const uint32_t columns_u = static_cast<uint32_t>(columns);
  const uint32_t rows_u = static_cast<uint32_t>(rows);
  // The cell of a point on the grid (|x|, |y| < 10^6: ViewGrid::project),
  // kOffGrid outside the view. Truncation puts (−1, 0) in the first row or
  // column: a sample a fraction of a cell outside, where nothing is drawn.
  auto cellOf = [=](float x, float y) -> uint32_t {
    const uint32_t cx = static_cast<uint32_t>(static_cast<int32_t>(x)), cy = static_cast<uint32_t>(static_cast<int32_t>(y));
    return cx < columns_u && cy < rows_u ? cy * columns_u + cx : kOffGrid;
  };
  // 1/count for the sample counts that fit the slots.
  constexpr float kInverse[kSlots + 1] = {0, 1, 1.0f / 2, 1.0f / 3, 1.0f / 4};
  std::vector<size_t> count(blocks + 1, 0);
  std::vector<PreviewStats> block_stats(blocks);
  std::vector<SegmentFacts> block_facts(blocks);
  // Each block goes to the range holding its first segment.
  auto forBlocks = [&](auto&& body) {
    forRanges(n, threads, [&](size_t begin, size_t end) {
      for (size_t b = (begin + kBlock - 1) / kBlock; b * kBlock < end; ++b) body(b);
    });
  };
  // 1. Per block: merge chains on the grid, find the pieces' samples (and
  // the facts every frame needs: one pass over the segments, not three).
  auto t0 = Clock::now();
  forBlocks([&](size_t b) {
    const size_t begin = b * kBlock, end = std::min(n, begin + kBlock);
    // Locals, not captures: the stores below (int8_t among them) may alias
    // anything reached through a reference, which would reload it per segment.
    const ViewGrid view = grid;
    const Segment* const segments = g.segments.data();
    Piece* const piece_out = pieces.data();
    SampleCells* const sample_out = samples.data();
    int8_t* const band_out = band_of.data();
    uint64_t merged = 0, dropped_short = 0;
    // The block's bounds (min/max: branch-free) and whether its colours are the first segment's.
    float lo_x = std::numeric_limits<float>::max(), lo_y = lo_x, lo_z = lo_x;
    float hi_x = std::numeric_limits<float>::lowest(), hi_y = hi_x, hi_z = hi_x;
    auto addPoint = [&](const Vec3& p) {
      lo_x = std::min(lo_x, p.x), lo_y = std::min(lo_y, p.y), lo_z = std::min(lo_z, p.z);
      hi_x = std::max(hi_x, p.x), hi_y = std::max(hi_y, p.y), hi_z = std::max(hi_z, p.z);
    };
    const int32_t first_color = segments[0].color & 15;
    int32_t other_colors = 0;
    size_t out = begin;
    bool chained = false;
    uint32_t anchor = 0;  // a Piece::from
    uint32_t anchor_cell = kOffGrid;
    float ax = 0, ay = 0;
    for (size_t i = begin; i < end; ++i) {
      const Segment& s = segments[i];
      const bool continues = chained && s.color == segments[i - 1].color && s.start.x == segments[i - 1].end.x &&
                             s.start.y == segments[i - 1].end.y && s.start.z == segments[i - 1].end.z;
      addPoint(s.end);
      other_colors |= (s.color ^ first_color) & 15;
      if (!continues) {
        addPoint(s.start);
        anchor = static_cast<uint32_t>(i << 1);
        anchor_cell = view.project(s.start, ax, ay) ? cellOf(ax, ay) : kOffGrid;
        chained = true;
      }
      float ex = 0, ey = 0;
      const uint32_t end_cell = view.project(s.end, ex, ey) ? cellOf(ex, ey) : kOffGrid;
      if (end_cell == anchor_cell && end_cell != kOffGrid) {
        // Still in the anchor's cell: merged into the next piece (or, at
        // the chain's end, dropped).
        ++(continues ? merged : dropped_short);
        continue;
      }
      piece_out[out] = {anchor, static_cast<uint32_t>(i)};
      if (anchor_cell != kOffGrid && end_cell != kOffGrid) {
        band_out[out] = static_cast<int8_t>(std::min(static_cast<int32_t>(ay * bands_per_row), static_cast<int32_t>(kBands - 1)));
        SampleCells& cells = sample_out[out];
        const float dx = ex - ax, dy = ey - ay;
        const int count = sampleCount(dx, dy);
        if (count <= kSlots) {
          const float step = kInverse[count];
          int k = 0;
          for (; k + 1 < count; ++k) {
            const float t = static_cast<float>(k + 1) * step;
            cells.cell[k] = cellOf(ax + dx * t, ay + dy * t);
          }
          for (; k < kSlots; ++k) cells.cell[k] = end_cell;
        } else {
          cells.cell[0] = kResample;
        }
      } else {
        band_out[out] = -1;  // an end outside the view: kept
      }
      ++out;
      anchor = static_cast<uint32_t>(i << 1 | 1);
      anchor_cell = end_cell;
      ax = ex, ay = ey;
    }
    count[b] = out - begin;
    block_stats[b].merged = merged, block_stats[b].dropped_short = dropped_short;
    if (lo_x <= hi_x) block_facts[b].bounds.add({lo_x, lo_y, lo_z}), block_facts[b].bounds.add({hi_x, hi_y, hi_z});
    block_facts[b].one_color = other_colors == 0;
  });
  facts = SegmentFacts{};
  for (const SegmentFacts& f : block_facts) facts.merge(f);
  facts.addPolygons(g);
  // 2. Coverage, in segment order: a bit per cell of the grid. The grid is
  // cut into kBands bands of rows, each with its own bits (its rows and a
  // margin of kMargin rows either side) and the pieces that start in it,
  // decided in segment order: bands run in parallel, and the result does not
  // depend on the thread count. A piece with a sample outside its band's
  // bits (or off the grid) is kept.
  stats.merge_ms = msSince(t0);
  t0 = Clock::now();
  std::vector<PreviewStats> band_stats(kBands);
  std::vector<std::thread> workers;
  auto decideBand = [&](int64_t band) {
    const int64_t top = std::max<int64_t>(band * band_rows - kMargin, 0);
    const int64_t bottom = std::min<int64_t>((band + 1) * band_rows + kMargin, rows);
    const uint64_t first = static_cast<uint64_t>(top * columns), last = static_cast<uint64_t>(std::max(bottom, top) * columns);
    std::vector<uint64_t> reached((last - first + 63) / 64, 0);
    // Marks `cell`; true when it was not reached before or is outside the band's bits.
    const uint32_t first32 = static_cast<uint32_t>(first), span = static_cast<uint32_t>(last - first);
    uint64_t* bits = reached.data();
    auto reach = [=](uint32_t cell) {
      const uint32_t at = cell - first32;  // wraps to a huge value below `first`
      if (at >= span) return true;
      const uint64_t bit = uint64_t{1} << (at % 64);
      const bool fresh = (bits[at / 64] & bit) == 0;
      bits[at / 64] |= bit;
      return fresh;
    };
    uint64_t covered = 0;
    for (size_t b = 0; b < blocks; ++b) {
      for (size_t i = b * kBlock, end = i + count[b]; i < end; ++i) {
        if (band_of[i] != band) continue;
        const SampleCells& cells = samples[i];
        bool adds = false;
        if (cells.cell[0] != kResample) {
          for (int k = 0; k < kSlots; ++k) adds |= reach(cells.cell[k]);
        } else {
          float ax = 0, ay = 0, ex = 0, ey = 0;
          const Segment& from = g.segments[pieces[i].from >> 1];
          grid.project(pieces[i].from & 1 ? from.end : from.start, ax, ay);
          grid.project(g.segments[pieces[i].to].end, ex, ey);
          const float dx = ex - ax, dy = ey - ay;
          const int count = sampleCount(dx, dy);
          const float step = 1.0f / static_cast<float>(count);
          for (int k = 1; k < count; ++k) {
            const float t = static_cast<float>(k) * step;
            adds |= reach(cellOf(ax + dx * t, ay + dy * t));
          }
          adds |= reach(cellOf(ex, ey));
        }
        if (!adds) {
          pieces[i].to = kDropped;
          ++covered;
        }
      }
    }
    band_stats[static_cast<size_t>(band)].covered = covered;
  };
  const int64_t parallel = std::clamp<int64_t>(threads, 1, kBands);
  for (int64_t t = 1; t < parallel; ++t)
    workers.emplace_back([&, t] {
      for (int64_t band = t; band < kBands; band += parallel) decideBand(band);
    });
  for (int64_t band = 0; band < kBands; band += parallel) decideBand(band);
  for (std::thread& w : workers) w.join();
  stats.cover_ms = msSince(t0);
  for (size_t b = 0; b < blocks; ++b) stats.merged += block_stats[b].merged, stats.dropped_short += block_stats[b].dropped_short;
  for (const PreviewStats& st : band_stats) stats.covered += st.covered;
  // 3. The kept pieces, in order.
  forBlocks([&](size_t b) {
    size_t kept = 0;
    for (size_t i = b * kBlock, end = i + count[b]; i < end; ++i) kept += pieces[i].to != kDropped;
    count[b] = kept;
  });
  std::vector<size_t> at(blocks + 1, 0);
  for (size_t b = 0; b < blocks; ++b) at[b + 1] = at[b] + count[b];
  OverwriteVector<Piece> out;
  detail::resizeForOverwrite(out, at[blocks]);
  forBlocks([&](size_t b) {
    size_t w = at[b];
    for (size_t i = b * kBlock; w < at[b + 1]; ++i)
      if (pieces[i].to != kDropped) out[w++] = pieces[i];
  });
  return out;
}

/// A preview is worth its frame only for a big model it makes much smaller:
/// below a million segments the full frame reaches the page about as soon as
/// the preview would (Hilbert 3D, 262 k segments: ~55 ms), and the preview's
/// own cost (about twice the interpretation's) would be lost.
constexpr size_t kPreviewMinSegments = 1000000;
constexpr double kPreviewMaxFraction = 0.6;

struct ExportFormat {
  GeometryFormat format;
  const char* extension;
  const char* content_type;
};

ExportFormat exportFormat(const std::string& name) {
  if (name == "glb") return {GeometryFormat::kGlb, "glb", "model/gltf-binary"};
  if (name == "obj") return {GeometryFormat::kObj, "obj", "text/plain; charset=utf-8"};
  if (name == "ply") return {GeometryFormat::kPly, "ply", "application/octet-stream"};
  if (name == "svg") return {GeometryFormat::kSvg, "svg", "image/svg+xml"};
  return {GeometryFormat::kPng, "png", "image/png"};
}

/// The export's writer options: the PNG/SVG size and view, the job's budget.
WriteOptions exportOptions(const Params& params, const Job& job) {
  WriteOptions options;
  options.width = static_cast<int>(params.integer("width", 1024, 16, 4096));
  options.height = static_cast<int>(params.integer("height", 1024, 16, 4096));
  options.projection = *parseProjection(params.choice("projection", "front", {"front", "side", "top", "iso"}));
  options.memory_budget_bytes = job.memoryBudget();
  return options;
}

/// A file name from the request's "name" (letters, digits, '-', '_' and
/// inner dots kept: no path, no hidden file, nothing to quote).
std::string exportName(const Params& params, const char* extension) {
  std::string name;
  for (char c : params.string("name", "lsystem", 200))
    if (detail::isIdentChar(c) || c == '-' || (c == '.' && !name.empty())) name.push_back(c);
  if (name.empty()) name = "lsystem";
  return name.substr(0, 64) + "." + extension;
}

}  // namespace

void registerLsystemEndpoints(Api& api) {
  api.compute("/api/lsystem/geometry", "lsystem.geometry", [](const Request& request, Job& job) {
    const double start_ms = job.elapsedMs();
    Model model = buildModel(request.params, job);
    Frame frame = geometryFrame(model, SegmentList::all(model.geometry),
                                segmentFacts(model.geometry, model.execution.threads), job, model.execution.threads);
    frame.header["timings"]["total_ms"] = job.elapsedMs() - start_ms;
    return Reply::ofFrame(frame);
  });
  // The progressive form: a preview at the client's view first (when it is
  // worth it), then the full geometry; each frame's header says which
  // ("final"). Errors before the first frame (parse, budget) are plain 4xx.
  api.stream("/api/lsystem/stream", "lsystem.geometry", [](const Request& request, Job& job) -> FrameProducer {
    const double start_ms = job.elapsedMs();
    const std::optional<ViewGrid> grid = viewGridOf(request.params);
    auto model = std::make_shared<Model>(buildModel(request.params, job));
    return [model, grid, start_ms, &job](FrameStream& stream) {
      const Geometry& g = model->geometry;
      const int threads = model->execution.threads;
      std::optional<SegmentFacts> facts;
      bool previewed = false;
      if (grid && g.segments.size() >= kPreviewMinSegments && g.segments.size() < (size_t{1} << 31)) {
        auto t0 = Clock::now();
        PreviewStats stats;
        facts.emplace();
        const OverwriteVector<Piece> preview = previewPieces(g, *grid, threads, stats, *facts);
        const double lod_ms = msSince(t0);
        job.check();
        if (static_cast<double>(preview.size()) <= kPreviewMaxFraction * static_cast<double>(g.segments.size())) {
          Frame frame = geometryFrame(*model, SegmentList{g, preview.data(), preview.size()}, *facts, job, threads);
          json& h = frame.header;
          h["final"] = false;
          h["segments"] = g.segments.size();  // the model's (the counts the page shows)
          h["lod"] = {{"segments", preview.size()},
                      {"cell", 1.0 / grid->cells_per_px},
                      {"merged", stats.merged},
                      {"dropped_short", stats.dropped_short},
                      {"covered", stats.covered}};
          h["timings"]["lod_ms"] = lod_ms;
          h["timings"]["lod_merge_ms"] = stats.merge_ms;
          h["timings"]["lod_cover_ms"] = stats.cover_ms;
          h["timings"]["total_ms"] = job.elapsedMs() - start_ms;
          stream.send(frame);
          previewed = true;
        }
      }
      // After a preview, the full frame is encoded on one thread fewer: the
      // page (on the same machine, the studio's usual case) takes in and
      // draws the preview meanwhile.
      const int full_threads = previewed ? std::max(1, threads - 1) : threads;
      if (!facts) facts = segmentFacts(g, threads);
      Frame frame = geometryFrame(*model, SegmentList::all(g), *facts, job, full_threads);
      frame.header["final"] = true;
      frame.header["timings"]["total_ms"] = job.elapsedMs() - start_ms;
      stream.send(frame);
    };
  });
  api.compute("/api/lsystem/export", "lsystem.export", [](const Request& request, Job& job) {
    const Params& params = request.params;
    const ExportFormat format = exportFormat(params.choice("format", "glb", {"glb", "obj", "ply", "svg", "png"}));
    const WriteOptions options = exportOptions(params, job);
    Model model = buildModel(params, job);
    std::vector<uint8_t> bytes = encodeGeometry(model.geometry, format.format, options);
    return Reply::ofBytes(format.content_type, std::string(bytes.begin(), bytes.end()),
                          exportName(params, format.extension));
  });
}

}  // namespace procgen::studio
