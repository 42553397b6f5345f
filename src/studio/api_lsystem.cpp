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
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <exception>
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

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <sys/resource.h>
#include <unistd.h>
#endif

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
      if (i % 65536 == 0 && job.cancelled()) return;  // stale: checked below
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
// 1/count for the sample counts that fit the slots.
constexpr float kInverse[kSlots + 1] = {0, 1, 1.0f / 2, 1.0f / 3, 1.0f / 4};
constexpr int32_t kBands = 4;

/// The cell of a point on the grid (|x|, |y| < 10^6: ViewGrid::project),
/// kOffGrid outside the view. Truncation puts (−1, 0) in the first row or
/// column: a sample a fraction of a cell outside, where nothing is drawn.
inline uint32_t cellOf(float x, float y, uint32_t columns, uint32_t rows) {
  const uint32_t cx = static_cast<uint32_t>(static_cast<int32_t>(x)), cy = static_cast<uint32_t>(static_cast<int32_t>(y));
  return cx < columns && cy < rows ? cy * columns + cx : kOffGrid;
}

/// What the chain pass (step 1 of previewPieces) reads and writes.
struct ChainPass {
  const Segment* segments;
  Piece* pieces;
  SampleCells* samples;
  int8_t* bands;  ///< the band of rows a piece starts in, −1: an end outside the view (kept)
  uint32_t columns, rows;
  float bands_per_row;
};

/// The chain pass's state within a block: the last kept vertex (the anchor)
/// and what the block gathered (counts, bounds, colours).
struct ChainState {
  size_t out = 0;  ///< the next piece's slot
  bool chained = false;
  uint32_t anchor = 0;  ///< a Piece::from
  uint32_t anchor_cell = kOffGrid;
  float ax = 0, ay = 0;
  uint64_t merged = 0, dropped_short = 0;
  int32_t first_color = 0, other_colors = 0;  ///< other_colors: some segment's colour is not the model's first
  // Bounds (min/max: branch-free), the scalar step's and the vector kernel's lanes.
  float lo[3] = {std::numeric_limits<float>::max(), std::numeric_limits<float>::max(), std::numeric_limits<float>::max()};
  float hi[3] = {std::numeric_limits<float>::lowest(), std::numeric_limits<float>::lowest(), std::numeric_limits<float>::lowest()};
  bool lanes_used = false;
  alignas(64) float lo_lanes[3][16], hi_lanes[3][16];
  /// Adds `p` (−0 as +0: the lanes see the points in another order than the
  /// scalar step, and min/max keep the first of equal values).
  void addPoint(const Vec3& p) {
    const float x = p.x + 0.0f, y = p.y + 0.0f, z = p.z + 0.0f;
    lo[0] = std::min(lo[0], x), lo[1] = std::min(lo[1], y), lo[2] = std::min(lo[2], z);
    hi[0] = std::max(hi[0], x), hi[1] = std::max(hi[1], y), hi[2] = std::max(hi[2], z);
  }
  /// Folds the vector lanes' bounds into lo/hi.
  void reduceLanes() {
    if (!lanes_used) return;
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 16; ++k) lo[c] = std::min(lo[c], lo_lanes[c][k]), hi[c] = std::max(hi[c], hi_lanes[c][k]);
  }
};

/// Segment i through the chain pass, the reference for the vector kernel.
inline void chainStep(const ViewGrid& view, const ChainPass& pass, size_t i, ChainState& st) {
  const Segment* const segments = pass.segments;
  const Segment& s = segments[i];
  const bool continues = st.chained && s.color == segments[i - 1].color && s.start.x == segments[i - 1].end.x &&
                         s.start.y == segments[i - 1].end.y && s.start.z == segments[i - 1].end.z;
  st.addPoint(s.end);
  st.other_colors |= (s.color ^ st.first_color) & 15;
  if (!continues) {
    st.addPoint(s.start);
    st.anchor = static_cast<uint32_t>(i << 1);
    st.anchor_cell = view.project(s.start, st.ax, st.ay) ? cellOf(st.ax, st.ay, pass.columns, pass.rows) : kOffGrid;
    st.chained = true;
  }
  float ex = 0, ey = 0;
  const uint32_t end_cell = view.project(s.end, ex, ey) ? cellOf(ex, ey, pass.columns, pass.rows) : kOffGrid;
  if (end_cell == st.anchor_cell && end_cell != kOffGrid) {
    // Still in the anchor's cell: merged into the next piece (or, at the
    // chain's end, dropped).
    ++(continues ? st.merged : st.dropped_short);
    return;
  }
  const size_t out = st.out++;
  pass.pieces[out] = {st.anchor, static_cast<uint32_t>(i)};
  if (st.anchor_cell != kOffGrid && end_cell != kOffGrid) {
    const float ax = st.ax, ay = st.ay;
    pass.bands[out] = static_cast<int8_t>(std::min(static_cast<int32_t>(ay * pass.bands_per_row), kBands - 1));
    SampleCells& cells = pass.samples[out];
    const float dx = ex - ax, dy = ey - ay;
    const int count = sampleCount(dx, dy);
    if (count <= kSlots) {
      const float step = kInverse[count];
      int k = 0;
      for (; k + 1 < count; ++k) {
        const float t = static_cast<float>(k + 1) * step;
        cells.cell[k] = cellOf(ax + dx * t, ay + dy * t, pass.columns, pass.rows);
      }
      for (; k < kSlots; ++k) cells.cell[k] = end_cell;
    } else {
      cells.cell[0] = kResample;
    }
  } else {
    pass.bands[out] = -1;
  }
  st.anchor = static_cast<uint32_t>(i << 1 | 1);
  st.anchor_cell = end_cell;
  st.ax = ex, st.ay = ey;
}

// The chain pass 16 segments at a time (AVX-512F, chosen at run time): the
// chainStep arithmetic lane by lane, in the same order without fused
// multiply-adds (this file is compiled with -ffp-contract=off), so the cells
// are the same bits. A lane's anchor is the last vertex kept before it,
// found for all 16 lanes at once (chainGroupAvx512); chainStep takes a
// block's last segments (fewer than 16).
enum PreviewIsa { kPreviewScalar = 1, kPreviewAvx512 = 2 };

#if defined(__x86_64__)
#define PROCGEN_PREVIEW_AVX512 1
#define PROCGEN_AVX512 [[gnu::target("avx512f"), gnu::always_inline]] inline
// g++ 12 warns of the intrinsics' own undefined vectors (_mm512_undefined_*, its bug 105593).
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/// Row r of the view matrix times (px, py, pz, 1), in ViewGrid::project's order.
PROCGEN_AVX512 __m512 matrixRow16(const ViewGrid& v, int r, __m512 px, __m512 py, __m512 pz) {
  __m512 acc = _mm512_mul_ps(_mm512_set1_ps(v.m[r]), px);
  acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_set1_ps(v.m[4 + r]), py));
  acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_set1_ps(v.m[8 + r]), pz));
  return _mm512_add_ps(acc, _mm512_set1_ps(v.m[12 + r]));
}

/// Lane k − 1 of v in lane k, `first` in lane 0.
PROCGEN_AVX512 __m512i previous16(__m512i v, int32_t first) { return _mm512_alignr_epi32(v, _mm512_set1_epi32(first), 15); }
PROCGEN_AVX512 __m512 previous16(__m512 v, float first) {
  return _mm512_castsi512_ps(
      _mm512_alignr_epi32(_mm512_castps_si512(v), _mm512_castps_si512(_mm512_set1_ps(first)), 15));
}

/// Lane k − S of v in lane k, −1 in lanes below S.
template <int S>
PROCGEN_AVX512 __m512i shiftUp16(__m512i v) { return _mm512_alignr_epi32(v, _mm512_set1_epi32(-1), 16 - S); }

/// Per lane, the value at an anchor event (chainGroupAvx512): 2j + 1 takes
/// lane j of `ends`, 2j lane j of `starts`, −1 `state`.
PROCGEN_AVX512 __m512i eventLookup16(__m512i event, __m512i ends, __m512i starts, __m512i state) {
  const __m512i index = _mm512_or_si512(_mm512_srai_epi32(event, 1),
                                        _mm512_slli_epi32(_mm512_andnot_si512(event, _mm512_set1_epi32(1)), 4));
  const __mmask16 known = _mm512_cmpneq_epi32_mask(event, _mm512_set1_epi32(-1));
  return _mm512_mask_mov_epi32(state, known, _mm512_permutex2var_epi32(ends, index, starts));
}
PROCGEN_AVX512 __m512 eventLookup16(__m512i event, __m512 ends, __m512 starts, __m512 state) {
  return _mm512_castsi512_ps(eventLookup16(event, _mm512_castps_si512(ends), _mm512_castps_si512(starts),
                                           _mm512_castps_si512(state)));
}

/// Points (px, py, pz) on the grid (ViewGrid::project); the mask: in front
/// of the camera and not far outside.
PROCGEN_AVX512 __mmask16 project16(const ViewGrid& v, __m512 px, __m512 py, __m512 pz, __m512& gx, __m512& gy) {
  const __m512 x = matrixRow16(v, 0, px, py, pz), y = matrixRow16(v, 1, px, py, pz), w = matrixRow16(v, 3, px, py, pz);
  const __m512 one = _mm512_set1_ps(1.0f);
  __mmask16 ok = _mm512_cmp_ps_mask(w, _mm512_set1_ps(1e-12f), _CMP_GT_OQ);
  const __m512 inv = _mm512_div_ps(one, w);
  gx = _mm512_mul_ps(_mm512_add_ps(_mm512_mul_ps(x, inv), one), _mm512_set1_ps(v.half_columns));
  gy = _mm512_mul_ps(_mm512_sub_ps(one, _mm512_mul_ps(y, inv)), _mm512_set1_ps(v.half_rows));
  const __m512 far = _mm512_set1_ps(1e6f);
  ok = _mm512_mask_cmp_ps_mask(ok, _mm512_abs_ps(gx), far, _CMP_LT_OQ);
  return _mm512_mask_cmp_ps_mask(ok, _mm512_abs_ps(gy), far, _CMP_LT_OQ);
}

/// cellOf per lane; kOffGrid where `ok` is clear.
PROCGEN_AVX512 __m512i cells16(__mmask16 ok, __m512 x, __m512 y, const ChainPass& pass) {
  const __m512i cx = _mm512_cvttps_epi32(x), cy = _mm512_cvttps_epi32(y);
  const __m512i columns = _mm512_set1_epi32(static_cast<int32_t>(pass.columns));
  ok = _mm512_mask_cmplt_epu32_mask(ok, cx, columns);
  ok = _mm512_mask_cmplt_epu32_mask(ok, cy, _mm512_set1_epi32(static_cast<int32_t>(pass.rows)));
  return _mm512_mask_add_epi32(_mm512_set1_epi32(-1), ok, _mm512_mullo_epi32(cy, columns), cx);
}

/// The cell k·step of the way from (ax, ay) by (dx, dy) (chainStep's samples).
PROCGEN_AVX512 __m512i sample16(float k, __m512 step, __m512 ax, __m512 ay, __m512 dx, __m512 dy, const ChainPass& pass) {
  const __m512 t = _mm512_mul_ps(_mm512_set1_ps(k), step);
  return cells16(0xffff, _mm512_add_ps(ax, _mm512_mul_ps(dx, t)), _mm512_add_ps(ay, _mm512_mul_ps(dy, t)), pass);
}

/// Segments [i, i + 16) of the block starting at `begin` (i + 16 ≤ its end).
[[gnu::target("avx512f")]] void chainGroupAvx512(const ViewGrid& view, const ChainPass& pass, size_t begin, size_t i,
                                                   ChainState& st) {
  static_assert(sizeof(Segment) == 40 && offsetof(Segment, end) == 12 && offsetof(Segment, color) == 28);
  const float* base = reinterpret_cast<const float*>(pass.segments + i);
  // The group's 640 bytes are 10 cache lines; the gathers alone leave the
  // hardware prefetcher behind (the first gather waited on memory for a third
  // of the kernel's time), so the lines kPrefetchGroups groups ahead are asked
  // for now (an address past the array's end is only a hint: no fault).
  constexpr uintptr_t kPrefetchGroups = 32;
  const uintptr_t ahead = reinterpret_cast<uintptr_t>(base) + 16 * sizeof(Segment) * kPrefetchGroups;
  for (uintptr_t line = 0; line < 10; ++line) _mm_prefetch(reinterpret_cast<const char*>(ahead + 64 * line), _MM_HINT_T0);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i at = _mm512_mullo_epi32(lane, _mm512_set1_epi32(10));  // floats per segment
  const __m512 sx = _mm512_i32gather_ps(at, base + 0, 4), sy = _mm512_i32gather_ps(at, base + 1, 4);
  const __m512 sz = _mm512_i32gather_ps(at, base + 2, 4), ex = _mm512_i32gather_ps(at, base + 3, 4);
  const __m512 ey = _mm512_i32gather_ps(at, base + 4, 4), ez = _mm512_i32gather_ps(at, base + 5, 4);
  const __m512i color = _mm512_i32gather_epi32(at, base + 7, 4);
  // The previous segment's end and colour, lane by lane (lane 0: segment i − 1's, if in the block).
  const Segment& prev = pass.segments[i > begin ? i - 1 : i];
  __mmask16 continues = i > begin ? 0xffff : 0xfffe;
  continues = _mm512_mask_cmpeq_epi32_mask(continues, color, previous16(color, prev.color));
  continues = _mm512_mask_cmp_ps_mask(continues, sx, previous16(ex, prev.end.x), _CMP_EQ_OQ);
  continues = _mm512_mask_cmp_ps_mask(continues, sy, previous16(ey, prev.end.y), _CMP_EQ_OQ);
  continues = _mm512_mask_cmp_ps_mask(continues, sz, previous16(ez, prev.end.z), _CMP_EQ_OQ);
  // Bounds and colours of all 16 (a lane taken again later changes neither).
  const __m512 zero = _mm512_setzero_ps();
  if (!st.lanes_used) {
    for (int c = 0; c < 3; ++c) {
      _mm512_store_ps(st.lo_lanes[c], _mm512_set1_ps(std::numeric_limits<float>::max()));
      _mm512_store_ps(st.hi_lanes[c], _mm512_set1_ps(std::numeric_limits<float>::lowest()));
    }
    st.lanes_used = true;
  }
  const __m512 starts[3] = {sx, sy, sz}, ends[3] = {ex, ey, ez};
  for (int c = 0; c < 3; ++c) {
    // min_ps(a, b) is a < b ? a : b, std::min(lo, a) with a NaN left out, as in addPoint.
    const __m512 a = _mm512_add_ps(starts[c], zero), e = _mm512_add_ps(ends[c], zero);
    __m512 lo = _mm512_load_ps(st.lo_lanes[c]), hi = _mm512_load_ps(st.hi_lanes[c]);
    lo = _mm512_min_ps(e, _mm512_min_ps(a, lo));
    hi = _mm512_max_ps(e, _mm512_max_ps(a, hi));
    _mm512_store_ps(st.lo_lanes[c], lo), _mm512_store_ps(st.hi_lanes[c], hi);
  }
  if (_mm512_test_epi32_mask(_mm512_xor_si512(color, _mm512_set1_epi32(st.first_color)), _mm512_set1_epi32(15)))
    st.other_colors |= 1;
  // The ends and the new chains' starts on the grid.
  __m512 gx, gy, hx, hy;
  const __mmask16 end_seen = project16(view, ex, ey, ez, gx, gy), start_seen = project16(view, sx, sy, sz, hx, hy);
  const __m512i end_cell = cells16(end_seen, gx, gy, pass), start_cell = cells16(start_seen, hx, hy, pass);
  // Each lane's anchor is the last vertex kept before it: its own start when
  // it begins a chain (event 2k), else the end of the last lane before it that
  // kept a piece (event 2j + 1), else the state's (−1). Which lanes keep one
  // depends on the anchors, so the kernel iterates from "every lane keeps" to
  // the fixed point: lane k's answer depends only on lanes < k, so each round
  // settles at least one more lane and 16 rounds settle all (in a dense view
  // most groups settle in two or three).
  const __m512i index = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int32_t>(i)), lane);
  const __m512i off = _mm512_set1_epi32(-1);
  const __m512i twice = _mm512_slli_epi32(lane, 1);
  const __mmask16 starts_chain = static_cast<__mmask16>(~continues);
  const __m512i start_events = _mm512_mask_mov_epi32(off, starts_chain, twice);
  const __m512i end_events = _mm512_sub_epi32(twice, _mm512_set1_epi32(1));  // lane k: lane k − 1's end
  const __mmask16 end_seen_on_grid = _mm512_cmpneq_epi32_mask(end_cell, off);
  const __m512i state_cell = _mm512_set1_epi32(static_cast<int32_t>(st.anchor_cell));
  __mmask16 keeps = 0xffff;
  __m512i event, anchor_cell;
  for (int round = 0;; ++round) {
    // The latest event at or before each lane: a prefix maximum over the lanes.
    event = _mm512_mask_max_epi32(start_events, static_cast<__mmask16>(keeps << 1), start_events, end_events);
    event = _mm512_max_epi32(event, shiftUp16<1>(event));
    event = _mm512_max_epi32(event, shiftUp16<2>(event));
    event = _mm512_max_epi32(event, shiftUp16<4>(event));
    event = _mm512_max_epi32(event, shiftUp16<8>(event));
    anchor_cell = eventLookup16(event, end_cell, start_cell, state_cell);
    const __mmask16 next = static_cast<__mmask16>(
        ~_mm512_mask_cmpeq_epi32_mask(end_seen_on_grid, end_cell, anchor_cell));
    if (next == keeps || round == 16) break;
    keeps = next;
  }
  const __m512 ax = eventLookup16(event, gx, hx, _mm512_set1_ps(st.ax));
  const __m512 ay = eventLookup16(event, gy, hy, _mm512_set1_ps(st.ay));
  const __mmask16 event_known = _mm512_cmpneq_epi32_mask(event, off);
  const __m512i anchor = _mm512_mask_add_epi32(_mm512_set1_epi32(static_cast<int32_t>(st.anchor)), event_known,
                                               _mm512_slli_epi32(_mm512_set1_epi32(static_cast<int32_t>(i)), 1), event);
  const int kept = __builtin_popcount(keeps);
  const __mmask16 merges = static_cast<__mmask16>(~keeps);
  st.merged += static_cast<uint64_t>(__builtin_popcount(merges & continues));
  st.dropped_short += static_cast<uint64_t>(__builtin_popcount(merges & starts_chain));
  // The pieces {anchor, index} of the lanes that keep one, interleaved and packed.
  Piece* out = pass.pieces + st.out;
  const __m512i low = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i high = _mm512_add_epi32(low, _mm512_set1_epi32(8));
  const __mmask8 keeps_low = static_cast<__mmask8>(keeps), keeps_high = static_cast<__mmask8>(keeps >> 8);
  _mm512_mask_compressstoreu_epi64(out, keeps_low, _mm512_permutex2var_epi32(anchor, low, index));
  _mm512_mask_compressstoreu_epi64(out + __builtin_popcount(keeps_low), keeps_high,
                                   _mm512_permutex2var_epi32(anchor, high, index));
  // Pieces with both ends on the grid: their band and samples (chainStep's), else band −1.
  const __mmask16 inside = _mm512_mask_cmpneq_epi32_mask(end_seen_on_grid, anchor_cell, off);
  const __m512i band = _mm512_min_epi32(_mm512_cvttps_epi32(_mm512_mul_ps(ay, _mm512_set1_ps(pass.bands_per_row))),
                                        _mm512_set1_epi32(kBands - 1));
  const __mmask16 packed = static_cast<__mmask16>((1u << kept) - 1);
  _mm512_mask_cvtepi32_storeu_epi8(pass.bands + st.out, packed,
                                   _mm512_maskz_compress_epi32(keeps, _mm512_mask_mov_epi32(off, inside, band)));
  const __m512 dx = _mm512_sub_ps(gx, ax), dy = _mm512_sub_ps(gy, ay);
  const __m512i count = _mm512_max_epi32(
      _mm512_set1_epi32(2),
      _mm512_add_epi32(_mm512_cvttps_epi32(_mm512_max_ps(_mm512_abs_ps(dx), _mm512_abs_ps(dy))), _mm512_set1_epi32(1)));
  const __mmask16 three = _mm512_cmpeq_epi32_mask(count, _mm512_set1_epi32(3));
  const __mmask16 four = _mm512_cmpeq_epi32_mask(count, _mm512_set1_epi32(4));
  __m512 step = _mm512_set1_ps(kInverse[2]);
  step = _mm512_mask_mov_ps(step, three, _mm512_set1_ps(kInverse[3]));
  step = _mm512_mask_mov_ps(step, four, _mm512_set1_ps(kInverse[4]));
  // The samples of the lanes that keep a piece, packed.
  const __m512i c0 = _mm512_maskz_compress_epi32(
      keeps, _mm512_mask_mov_epi32(sample16(1, step, ax, ay, dx, dy, pass),
                                   _mm512_cmpgt_epi32_mask(count, _mm512_set1_epi32(kSlots)),
                                   _mm512_set1_epi32(static_cast<int32_t>(kResample))));
  const __m512i c1 = _mm512_maskz_compress_epi32(
      keeps, _mm512_mask_mov_epi32(end_cell, three | four, sample16(2, step, ax, ay, dx, dy, pass)));
  const __m512i c2 =
      _mm512_maskz_compress_epi32(keeps, _mm512_mask_mov_epi32(end_cell, four, sample16(3, step, ax, ay, dx, dy, pass)));
  const __m512i c3 = _mm512_maskz_compress_epi32(keeps, end_cell);
  // Lanes × slots to SampleCells (a 4 × 4 transpose within each 128-bit part, then the parts reordered).
  const __m512i t0 = _mm512_unpacklo_epi32(c0, c1), t1 = _mm512_unpackhi_epi32(c0, c1);
  const __m512i t2 = _mm512_unpacklo_epi32(c2, c3), t3 = _mm512_unpackhi_epi32(c2, c3);
  const __m512i u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);  // lanes 0, 4, 8, 12 and 1, 5, 9, 13
  const __m512i u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);  // 2, 6, 10, 14 and 3, 7, 11, 15
  const __m512i v0 = _mm512_shuffle_i32x4(u0, u1, 0x44), v1 = _mm512_shuffle_i32x4(u2, u3, 0x44);  // 0 4 1 5, 2 6 3 7
  const __m512i v2 = _mm512_shuffle_i32x4(u0, u1, 0xee), v3 = _mm512_shuffle_i32x4(u2, u3, 0xee);  // 8 12 9 13, 10 14 11 15
  uint32_t* cells = pass.samples[st.out].cell;
  auto quads = [](int lanes) {
    return static_cast<__mmask16>(lanes >= 4 ? 0xffff : (1u << (4 * std::max(lanes, 0))) - 1);
  };
  _mm512_mask_storeu_epi32(cells, quads(kept), _mm512_shuffle_i32x4(v0, v1, 0x88));
  _mm512_mask_storeu_epi32(cells + 16, quads(kept - 4), _mm512_shuffle_i32x4(v0, v1, 0xdd));
  _mm512_mask_storeu_epi32(cells + 32, quads(kept - 8), _mm512_shuffle_i32x4(v2, v3, 0x88));
  _mm512_mask_storeu_epi32(cells + 48, quads(kept - 12), _mm512_shuffle_i32x4(v2, v3, 0xdd));
  // The state after lane 15: its end when it kept a piece, else its anchor.
  const bool last_keeps = keeps >> 15;
  alignas(64) float last_x[16], last_y[16];
  alignas(64) uint32_t last_anchor[16], last_cell[16];
  if (last_keeps) {
    _mm512_store_ps(last_x, gx), _mm512_store_ps(last_y, gy), _mm512_store_si512(last_cell, end_cell);
    _mm512_store_si512(last_anchor, _mm512_or_si512(_mm512_slli_epi32(index, 1), _mm512_set1_epi32(1)));
  } else {
    _mm512_store_ps(last_x, ax), _mm512_store_ps(last_y, ay), _mm512_store_si512(last_cell, anchor_cell);
    _mm512_store_si512(last_anchor, anchor);
  }
  st.out += static_cast<size_t>(kept);
  st.chained = true;
  st.anchor = last_anchor[15], st.anchor_cell = last_cell[15];
  st.ax = last_x[15], st.ay = last_y[15];
}
#pragma GCC diagnostic pop
#else
void chainGroupAvx512(const ViewGrid&, const ChainPass&, size_t, size_t, ChainState&) {}
#endif

int bestPreviewIsa() {
#if PROCGEN_PREVIEW_AVX512
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return kPreviewAvx512;
#endif
  return kPreviewScalar;
}

std::atomic<int> g_preview_isa{0};

int previewIsa() {
  int isa = g_preview_isa.load(std::memory_order_relaxed);
  if (isa == 0) g_preview_isa.store(isa = bestPreviewIsa(), std::memory_order_relaxed);
  return isa;
}

/// Bit k set when bands[k] == band, for k < 16 (SSE2: every x86-64).
inline uint32_t bandHits16(const int8_t* bands, int8_t band) {
#if defined(__x86_64__)
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bands));
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(band))));
#else
  uint32_t hits = 0;
  for (int k = 0; k < 16; ++k) hits |= static_cast<uint32_t>(bands[k] == band) << k;
  return hits;
#endif
}

/// The preview of `g` at `grid` (the text above), as pieces in segment
/// order, and the model's SegmentFacts (gathered in the same pass).
/// Deterministic: chains are cut at fixed blocks of segments (not per
/// thread), coverage is decided in segment order (the first drawn is
/// kept), and the vector kernel finds the scalar step's cells. Precondition:
/// fewer than 2^31 segments. Throws Cancelled between its steps for a stale job.
OverwriteVector<Piece> previewPieces(const Geometry& g, const ViewGrid& grid, int threads, PreviewStats& stats,
                                     SegmentFacts& facts, const Job& job) {
  constexpr size_t kBlock = size_t{1} << 16;
  constexpr uint32_t kDropped = ~uint32_t{0};
  const size_t n = g.segments.size(), blocks = (n + kBlock - 1) / kBlock;
  // Scratch indexed like the segments: a block's pieces from its first slot.
  OverwriteVector<Piece> pieces;
  OverwriteVector<SampleCells> samples;
  OverwriteVector<int8_t> band_of;  // the band of rows the piece starts in (step 2), −1: none (kept)
  detail::resizeForOverwrite(pieces, n);
  detail::resizeForOverwrite(samples, n);
  detail::resizeForOverwrite(band_of, n);
  constexpr int64_t kMargin = 16;
  const int64_t band_rows = (grid.rows + kBands - 1) / kBands;
  const float bands_per_row = 1.0f / static_cast<float>(band_rows);
  const int64_t columns = grid.columns, rows = grid.rows;
  const uint32_t columns_u = static_cast<uint32_t>(columns);
  const uint32_t rows_u = static_cast<uint32_t>(rows);
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
  // The vector kernel takes 16 segments at a time, the scalar step a block's
  // last few (the same arithmetic: the same cells).
  const bool vector = previewIsa() == kPreviewAvx512;
  auto t0 = Clock::now();
  forBlocks([&](size_t b) {
    if (job.cancelled()) return;  // stale: checked below
    const size_t begin = b * kBlock, end = std::min(n, begin + kBlock);
    // Locals, not captures: the stores below (int8_t among them) may alias
    // anything reached through a reference, which would reload it per segment.
    const ViewGrid view = grid;
    const ChainPass pass{g.segments.data(), pieces.data(), samples.data(), band_of.data(), columns_u, rows_u, bands_per_row};
    ChainState st;
    st.out = begin;
    st.first_color = pass.segments[0].color & 15;
    for (size_t i = begin; i < end;) {
      if (vector && end - i >= 16) {
        chainGroupAvx512(view, pass, begin, i, st);
        i += 16;
      } else {
        chainStep(view, pass, i++, st);
      }
    }
    count[b] = st.out - begin;
    block_stats[b].merged = st.merged, block_stats[b].dropped_short = st.dropped_short;
    st.reduceLanes();
    if (st.lo[0] <= st.hi[0]) block_facts[b].bounds.add({st.lo[0], st.lo[1], st.lo[2]}), block_facts[b].bounds.add({st.hi[0], st.hi[1], st.hi[2]});
    block_facts[b].one_color = st.other_colors == 0;
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
  job.check();  // a newer edit: no coverage for this one (it would hold a core from the new job)
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
    auto decide = [&](size_t i) {
      const SampleCells& cells = samples[i];
      bool adds = false;
      if (cells.cell[0] != kResample) {
        // All four tested before any is set (the same answer: a repeated
        // cell is fresh at its first slot), so the loads do not wait on the
        // stores; and a piece that adds nothing (most, in a dense view) stores
        // nothing — its bits are set already — so the next piece's loads do
        // not wait on stores to the same words either.
        uint32_t at[kSlots];
        for (int k = 0; k < kSlots; ++k) {
          at[k] = cells.cell[k] - first32;
          adds |= at[k] >= span || (bits[at[k] / 64] >> (at[k] % 64) & 1) == 0;
        }
        if (adds)
          for (int k = 0; k < kSlots; ++k)
            if (at[k] < span) bits[at[k] / 64] |= uint64_t{1} << (at[k] % 64);
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
          adds |= reach(cellOf(ax + dx * t, ay + dy * t, columns_u, rows_u));
        }
        adds |= reach(cellOf(ex, ey, columns_u, rows_u));
      }
      pieces[i].to |= static_cast<uint32_t>(adds) - 1;  // kDropped when it adds nothing
      covered += !adds;
    };
    // The band's pieces found 16 band bytes at a time.
    for (size_t b = 0; b < blocks && !job.cancelled(); ++b) {  // stale: checked below
      size_t i = b * kBlock;
      const size_t end = i + count[b];
      for (; i + 16 <= end; i += 16)
        for (uint32_t hits = bandHits16(band_of.data() + i, static_cast<int8_t>(band)); hits; hits &= hits - 1)
          decide(i + static_cast<size_t>(__builtin_ctz(hits)));
      for (; i < end; ++i)
        if (band_of[i] == band) decide(i);
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
  job.check();
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

/// body() on a thread of its own at the lowest CPU priority (nice 19, which
/// the threads it starts inherit), so that it takes only what the rest of
/// the machine leaves; its result or its exception.
template <typename Body>
auto atLowestPriority(Body&& body) -> decltype(body()) {
  std::optional<decltype(body())> result;
  std::exception_ptr error;
  std::thread worker([&] {
#if defined(__linux__)
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);  // per thread on Linux; failure: normal priority
#endif
    try {
      result.emplace(body());
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
  return std::move(*result);
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

int setPreviewIsaForTesting(int isa) {
  const int best = bestPreviewIsa();
  g_preview_isa.store(isa <= 0 || isa > best ? best : isa, std::memory_order_relaxed);
  return g_preview_isa.load(std::memory_order_relaxed);
}

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
        const OverwriteVector<Piece> preview = previewPieces(g, *grid, threads, stats, *facts, job);
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
      // After a preview, the full frame is encoded on one thread fewer and at
      // the lowest priority: the page (on the same machine, the studio's
      // usual case) takes in and draws the preview meanwhile. (A stale job
      // still unwinds: a newer request waiting for its slot leaves it the CPU.)
      const int full_threads = previewed ? std::max(1, threads - 1) : threads;
      if (!facts) facts = segmentFacts(g, threads);
      auto encode = [&] { return geometryFrame(*model, SegmentList::all(g), *facts, job, full_threads); };
      Frame frame = previewed ? atLowestPriority(encode) : encode();
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
