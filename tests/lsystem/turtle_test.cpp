// Turtle interpretation (src/lsystem/turtle.h, serial/interpret.cpp) against
// ABOP §1.5 / §2.2 geometry worked out by hand: the initial frame and the
// direction of every turn, the Koch island closing, the 3D Hilbert curve
// visiting its lattice once per point, widths, colours, branches, polygons,
// moves without drawing, tropism, and the homomorphism applied on the fly.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "procgen/lsystem.hpp"

namespace procgen {
namespace {

namespace fs = std::filesystem;

constexpr float kTol = 1e-5f;

ViewSettings view90() {
  ViewSettings v;
  v.angle_deg = 90.0f;
  v.step = 1.0f;
  v.initial_width = 1.0f;  // explicit: the tests do not depend on the default width
  return v;
}

/// Interprets the literal module string `s` (numeric parameters) with `view`.
Geometry draw(const std::string& s, const ViewSettings& view = view90()) {
  LSystem l = LSystem::fromText("Axiom: F\n");
  InterpretOptions o;
  o.view = view;
  return interpret(l, parseModuleString(s), o);
}

#define EXPECT_VEC(v, X, Y, Z)                 \
  do {                                         \
    const Vec3 v_ = (v);                       \
    EXPECT_NEAR(v_.x, (X), kTol) << #v;        \
    EXPECT_NEAR(v_.y, (Y), kTol) << #v;        \
    EXPECT_NEAR(v_.z, (Z), kTol) << #v;        \
  } while (0)

/// End point of the single segment drawn by `s`.
Vec3 endOf(const std::string& s) {
  Geometry g = draw(s);
  EXPECT_EQ(g.segments.size(), 1u) << s;
  return g.segments.empty() ? Vec3{NAN, NAN, NAN} : g.segments.back().end;
}

float dist(const Vec3& a, const Vec3& b) {
  return std::sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y) + (a.z - b.z) * (a.z - b.z));
}

// ---------------------------------------------------------------------------
// ABOP §1.5 conventions: origin, H = +Y, L = -X, U = +Z.

TEST(Turtle, StartsAtTheOriginHeadingUp) {
  Geometry g = draw("F");
  ASSERT_EQ(g.segments.size(), 1u);
  EXPECT_VEC(g.segments[0].start, 0, 0, 0);
  EXPECT_VEC(g.segments[0].end, 0, 1, 0);
  EXPECT_EQ(g.segments[0].width, 1.0f);
  EXPECT_EQ(g.segments[0].color, 0);
  EXPECT_EQ(g.segments[0].depth, 0);
  EXPECT_EQ(g.polygonCount(), 0u);
  // Default step from the view, explicit length from the parameter.
  ViewSettings v = view90();
  v.step = 2.5f;
  EXPECT_VEC(draw("F", v).segments.at(0).end, 0, 2.5f, 0);
  EXPECT_VEC(draw("F(0.25)", v).segments.at(0).end, 0, 0.25f, 0);
}

// '+' turns left about U: from heading +Y (seen from +Z), left is -X.
TEST(Turtle, PlusTurnsLeftAboutUp) {
  Geometry g = draw("F+F");
  ASSERT_EQ(g.segments.size(), 2u);
  EXPECT_VEC(g.segments[1].start, 0, 1, 0);
  EXPECT_VEC(g.segments[1].end, -1, 1, 0);
  EXPECT_VEC(draw("F-F").segments.at(1).end, 1, 1, 0);
  // Explicit angles, and the default angle from the view.
  const float h = std::sqrt(0.5f);
  EXPECT_VEC(endOf("+(45)F"), -h, h, 0);
  EXPECT_VEC(endOf("-(45)F"), h, h, 0);
  ViewSettings v = view90();
  v.angle_deg = 60.0f;
  EXPECT_VEC(draw("+F", v).segments.at(0).end, -std::sin(60 * M_PI / 180), 0.5f, 0);
  // Four left turns come back to the start; + and - cancel.
  EXPECT_VEC(draw("F+F+F+F").segments.at(3).end, 0, 0, 0);
  EXPECT_VEC(endOf("+(30)-(30)F"), 0, 1, 0);
}

// '&' pitches down (H towards -U), '^' up, about L.
TEST(Turtle, PitchAboutLeft) {
  EXPECT_VEC(endOf("&F"), 0, 0, -1);
  EXPECT_VEC(endOf("^F"), 0, 0, 1);
  EXPECT_VEC(endOf("&(30)F"), 0, std::cos(M_PI / 6), -0.5f);
  // Pitching turns about L = -X: + afterwards still turns towards L.
  EXPECT_VEC(endOf("&(90)+(90)F"), -1, 0, 0);
}

// '\' rolls left about H (U leans towards L), '/' rolls right. A roll alone
// does not move the heading; the next '+' turns towards the rolled L.
//   \(90): U = old L = -X, L = -old U = -Z, so \(90)+(90)F ends at (0,0,-1).
//   /(90): U = -old L = +X, L = old U = +Z, so /(90)+(90)F ends at (0,0,1).
TEST(Turtle, RollAboutHeading) {
  EXPECT_VEC(endOf("\\(90)F"), 0, 1, 0);
  EXPECT_VEC(endOf("\\(90)+(90)F"), 0, 0, -1);
  EXPECT_VEC(endOf("/(90)+(90)F"), 0, 0, 1);
  EXPECT_VEC(endOf("\\(90)&(90)F"), 1, 0, 0);  // & turns towards -U = +X
  EXPECT_VEC(endOf("\\(30)/(30)+(90)F"), -1, 0, 0);
}

// '|' turns around: 180 degrees about U, so L flips too.
TEST(Turtle, TurnAround) {
  Geometry g = draw("F|F");
  ASSERT_EQ(g.segments.size(), 2u);
  EXPECT_VEC(g.segments[1].end, 0, 0, 0);
  EXPECT_VEC(endOf("|+(90)F"), 1, 0, 0);
  EXPECT_VEC(endOf("|^(90)F"), 0, 0, 1);  // U unchanged
}

// '$' rolls so that L is horizontal: L = V x H / |V x H| with V = +Y.
// After -(90): H = +X. Any roll, then $: L = Y x X = -Z, U = H x L = +Y; so
// + (towards L) goes to -Z and & (towards -U) goes to -Y.
TEST(Turtle, DollarRollsLeftHorizontal) {
  for (const char* roll : {"\\(37)", "/(123)", "\\(200)", ""}) {
    SCOPED_TRACE(roll);
    EXPECT_VEC(endOf(std::string("-(90)") + roll + "$F"), 1, 0, 0);  // H unchanged
    EXPECT_VEC(endOf(std::string("-(90)") + roll + "$+(90)F"), 0, 0, -1);
    EXPECT_VEC(endOf(std::string("-(90)") + roll + "$&(90)F"), 0, -1, 0);
  }
}

// With H = V = +Y, V x H = 0: '$' leaves the frame alone (L = -X is horizontal).
TEST(Turtle, DollarWithVerticalHeading) {
  EXPECT_VEC(endOf("$F"), 0, 1, 0);
  EXPECT_VEC(endOf("$+(90)F"), -1, 0, 0);
}

// Unbalanced brackets in a hand-written string must not crash the turtle.
TEST(Turtle, UnbalancedBracketsDoNotCrash) {
  EXPECT_EQ(draw("F]F[F").segments.size(), 3u);
  EXPECT_EQ(draw("[[[F").segments.size(), 1u);
  EXPECT_EQ(draw("]]]F}}.{F").segments.size(), 1u);
}

// ---------------------------------------------------------------------------
// Closed and space-filling curves.

/// `l` derived n steps and drawn with its own view settings.
Geometry drawModel(const LSystem& l, int n) {
  DeriveOptions d;
  d.iterations = n;
  InterpretOptions o;
  o.view = l.view();
  return interpret(l, derive(l, d), o);
}

void expectConnected(const Geometry& g) {
  for (size_t i = 1; i < g.segments.size(); ++i)
    ASSERT_LT(dist(g.segments[i - 1].end, g.segments[i].start), 1e-3f) << "gap before segment " << i;
}

// ABOP Fig. 1.7 a, quadratic Koch island: F-F-F-F, F -> F-F+F+FF-F-F+F,
// 90 degrees. Each F becomes 8, so n steps draw 4 * 8^n segments, in one
// connected path that ends where it started.
TEST(TurtleCurves, KochIslandCloses) {
  LSystem l = LSystem::fromText("angle increment: 90\nAxiom: F-F-F-F\nF --> F-F+F+FF-F-F+F\n");
  for (int n : {2, 3}) {
    SCOPED_TRACE(n);
    Geometry g = drawModel(l, n);
    ASSERT_EQ(g.segments.size(), 4u * (n == 2 ? 64u : 512u));
    expectConnected(g);
    EXPECT_VEC(g.segments.front().start, 0, 0, 0);
    EXPECT_LT(dist(g.segments.back().end, g.segments.front().start), 1e-3f);
    // Every segment has unit length and lies in the z = 0 plane.
    for (const Segment& s : g.segments) {
      ASSERT_NEAR(dist(s.start, s.end), 1.0f, 1e-4f);
      ASSERT_EQ(s.start.z, 0.0f);
    }
  }
  // The shipped model is the same curve.
  LSystem shipped = LSystem::fromFile(fs::path(PROCGEN_SOURCE_DIR) / "examples/lsystems/koch-island.l");
  DeriveOptions d;
  d.iterations = 2;
  InterpretOptions o;
  o.view = shipped.view();
  Geometry g = interpret(shipped, derive(shipped, d), o);
  EXPECT_EQ(g.segments.size(), 256u);
  EXPECT_LT(dist(g.segments.back().end, g.segments.front().start), 1e-3f);
}

// A float turn is not exactly length-preserving, and for a repeated angle the
// products round the same way turn after turn: the frame grew by ~3e-8 per
// turn, and the row of trees (n = 10, ~1.6 M turns of 86°) drew its last
// steps 2.6 % too long, until the turtle was brought back to an orthonormal
// frame every 16 turns. A million turns about U and about L, one unit step
// after each: every step must stay one unit long.
TEST(TurtleCurves, FrameStaysUnitLengthOverAMillionTurns) {
  ViewSettings v = view90();
  v.angle_deg = 86.0f;
  for (const char* turn : {"+", "&"}) {  // turns that move H, the stepping direction
    std::string s;
    const int kTurns = 1000000;
    s.reserve(static_cast<size_t>(kTurns) * 2 + 1);
    s += 'F';
    for (int i = 0; i < kTurns; ++i) {
      s += turn;
      s += 'F';
    }
    const Geometry g = draw(s, v);
    ASSERT_EQ(g.segments.size(), static_cast<size_t>(kTurns) + 1);
    for (size_t i : {size_t{0}, g.segments.size() / 2, g.segments.size() - 1}) {
      const Segment& seg = g.segments[i];
      const double dx = seg.end.x - seg.start.x, dy = seg.end.y - seg.start.y, dz = seg.end.z - seg.start.z;
      // Positions near the origin: the walk turns in small circles (86° per step).
      EXPECT_NEAR(std::sqrt(dx * dx + dy * dy + dz * dz), 1.0, 1e-4) << "turn " << turn << ", step " << i;
    }
  }
}

// ABOP Fig. 1.19 (p. 20): the 3D Hilbert curve at n visits every point of a
// 2^n x 2^n x 2^n lattice exactly once: 8^n - 1 unit segments, consecutive,
// endpoints on the lattice, all 8^n points distinct.
TEST(TurtleCurves, Hilbert3dVisitsEachLatticePointOnce) {
  LSystem l = LSystem::fromFile(fs::path(PROCGEN_SOURCE_DIR) / "examples/lsystems/hilbert3d.l");
  for (int n : {2, 3}) {
    SCOPED_TRACE(n);
    Geometry g = drawModel(l, n);
    const size_t points = size_t{1} << (3 * n);
    ASSERT_EQ(g.segments.size(), points - 1);
    expectConnected(g);
    std::set<std::tuple<long, long, long>> visited;
    auto onLattice = [](const Vec3& p) {
      const long x = std::lround(p.x), y = std::lround(p.y), z = std::lround(p.z);
      EXPECT_NEAR(p.x, float(x), 1e-3f);
      EXPECT_NEAR(p.y, float(y), 1e-3f);
      EXPECT_NEAR(p.z, float(z), 1e-3f);
      return std::make_tuple(x, y, z);
    };
    visited.insert(onLattice(g.segments.front().start));
    for (const Segment& s : g.segments) {
      ASSERT_NEAR(dist(s.start, s.end), 1.0f, 1e-3f);
      visited.insert(onLattice(s.end));
    }
    EXPECT_EQ(visited.size(), points);  // no point visited twice
    // ... and they fill a cube of side 2^n - 1.
    long lo[3] = {1L << 30, 1L << 30, 1L << 30}, hi[3] = {-(1L << 30), -(1L << 30), -(1L << 30)};
    for (const auto& [x, y, z] : visited) {
      const long c[3] = {x, y, z};
      for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], c[k]), hi[k] = std::max(hi[k], c[k]);
    }
    for (int k = 0; k < 3; ++k) EXPECT_EQ(hi[k] - lo[k], (1L << n) - 1) << "axis " << k;
  }
}

// ---------------------------------------------------------------------------
// State: width, colour, branches.

TEST(Turtle, WidthAndColour) {
  ViewSettings v = view90();
  v.initial_width = 1.0f;
  v.width_factor = 0.5f;
  // F            width 1,   colour 0
  // !(3)F        width 3,   colour 0
  // '(2)F        width 3,   colour 2
  // !F           width 1.5  (3 * width factor), colour 2
  // 'F           width 1.5, colour 3 (' without a parameter adds one)
  Geometry g = draw("F!(3)F'(2)F!F'F", v);
  ASSERT_EQ(g.segments.size(), 5u);
  const float widths[] = {1, 3, 3, 1.5f, 1.5f};
  const int colours[] = {0, 0, 2, 2, 3};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(g.segments[i].width, widths[i]) << i;
    EXPECT_EQ(g.segments[i].color, colours[i]) << i;
  }
  v.initial_width = 7.0f;
  EXPECT_EQ(draw("F", v).segments.at(0).width, 7.0f);
}

// F[+F[-F]F]F with 90 degrees:
//   s0 (0,0)->(0,1) depth 0; [ +: heading -X
//   s1 (0,1)->(-1,1) depth 1; [ -: heading +Y
//   s2 (-1,1)->(-1,2) depth 2; ] back to (-1,1) heading -X
//   s3 (-1,1)->(-2,1) depth 1; ] back to (0,1) heading +Y
//   s4 (0,1)->(0,2) depth 0
TEST(Turtle, BranchesRestoreStateAndGiveDepth) {
  Geometry g = draw("F[+F[-F]F]F");
  ASSERT_EQ(g.segments.size(), 5u);
  const float want[5][4] = {{0, 0, 0, 1}, {0, 1, -1, 1}, {-1, 1, -1, 2}, {-1, 1, -2, 1}, {0, 1, 0, 2}};
  const int depth[5] = {0, 1, 2, 1, 0};
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_VEC(g.segments[i].start, want[i][0], want[i][1], 0);
    EXPECT_VEC(g.segments[i].end, want[i][2], want[i][3], 0);
    EXPECT_EQ(g.segments[i].depth, depth[i]);
  }
  // Width and colour are part of the saved state.
  Geometry w = draw("[!(5)'(3)F]F");
  ASSERT_EQ(w.segments.size(), 2u);
  EXPECT_EQ(w.segments[0].width, 5.0f);
  EXPECT_EQ(w.segments[0].color, 3);
  EXPECT_EQ(w.segments[1].width, 1.0f);
  EXPECT_EQ(w.segments[1].color, 0);
  EXPECT_VEC(w.segments[1].start, 0, 0, 0);
  // The frame too, in 3D.
  Geometry r = draw("[&(90)/(45)F]F");
  ASSERT_EQ(r.segments.size(), 2u);
  EXPECT_VEC(r.segments[1].end, 0, 1, 0);
}

TEST(Turtle, MovesWithoutDrawing) {
  Geometry g = draw("FfF");
  ASSERT_EQ(g.segments.size(), 2u);
  EXPECT_VEC(g.segments[1].start, 0, 2, 0);
  EXPECT_VEC(g.segments[1].end, 0, 3, 0);
  g = draw("FgF");
  ASSERT_EQ(g.segments.size(), 2u);
  EXPECT_VEC(g.segments[1].start, 0, 2, 0);
  g = draw("f(2)+g(3)F");
  ASSERT_EQ(g.segments.size(), 1u);
  EXPECT_VEC(g.segments[0].start, -3, 2, 0);
  EXPECT_VEC(g.segments[0].end, -4, 2, 0);
  // G draws like F outside polygons.
  g = draw("GF(2)G");
  ASSERT_EQ(g.segments.size(), 3u);
  EXPECT_VEC(g.segments[2].end, 0, 4, 0);
  // Letters that are not turtle commands do nothing.
  g = draw("AFXBF");
  ASSERT_EQ(g.segments.size(), 2u);
  EXPECT_VEC(g.segments[1].end, 0, 2, 0);
}

// { . }: '.' records the current position, f and F record the point they move
// to, G moves without recording; no segments are drawn inside a polygon.
//   {.f+f+f}: (0,0) (0,1) (-1,1) (-1,0)
TEST(Turtle, Polygons) {
  for (const char* s : {"{.f+f+f}", "{.F+F+F}"}) {
    SCOPED_TRACE(s);
    Geometry g = draw(s);
    EXPECT_EQ(g.segments.size(), 0u);
    ASSERT_EQ(g.polygonCount(), 1u);
    ASSERT_EQ(g.polygon_offsets, (std::vector<uint64_t>{0, 4}));
    EXPECT_VEC(g.polygon_vertices[0], 0, 0, 0);
    EXPECT_VEC(g.polygon_vertices[1], 0, 1, 0);
    EXPECT_VEC(g.polygon_vertices[2], -1, 1, 0);
    EXPECT_VEC(g.polygon_vertices[3], -1, 0, 0);
  }
  // G: f to (0,1) recorded, G to (-1,1) not, f to (-1,0) recorded.
  Geometry g = draw("'(4){.f+G+f}");
  ASSERT_EQ(g.polygonCount(), 1u);
  ASSERT_EQ(g.polygon_vertices.size(), 3u);
  EXPECT_VEC(g.polygon_vertices[0], 0, 0, 0);
  EXPECT_VEC(g.polygon_vertices[1], 0, 1, 0);
  EXPECT_VEC(g.polygon_vertices[2], -1, 0, 0);
  EXPECT_EQ(g.polygon_colors, std::vector<int32_t>{4});
  EXPECT_EQ(g.segments.size(), 0u);
  // Drawing resumes after '}' from where the polygon left the turtle:
  //   F to (0,1); {.f+f+f} ends at (-1,1) heading -Y; F to (-1,0).
  g = draw("F{.f+f+f}F");
  ASSERT_EQ(g.segments.size(), 2u);
  EXPECT_VEC(g.segments[1].start, -1, 1, 0);
  EXPECT_VEC(g.segments[1].end, -1, 0, 0);
  ASSERT_EQ(g.polygonCount(), 1u);
  EXPECT_VEC(g.polygon_vertices[0], 0, 1, 0);
  // Two polygons in string order.
  g = draw("{.f+f+f}'(2){.f-f-f.}");
  ASSERT_EQ(g.polygonCount(), 2u);
  EXPECT_EQ(g.polygon_offsets.size(), 3u);
  EXPECT_EQ(g.polygon_offsets[1], 4u);
  EXPECT_EQ(g.polygon_colors, (std::vector<int32_t>{0, 2}));
}

// ---------------------------------------------------------------------------
// Tropism (ABOP §2.2, eq. 2.4): after each F the heading turns towards T by
// e·|H x T| radians.
//   T = +X, e = 0.2. Segment 1 goes up; H then turns by 0.2 rad towards +X:
//   segment 2 has direction (sin 0.2, cos 0.2, 0). Then |H x T| = cos 0.2, so
//   segment 3 is at angle 0.2 + 0.2 cos 0.2 from +Y.
TEST(Turtle, TropismBendsTowardsT) {
  ViewSettings v = view90();
  v.tropism = {1, 0, 0};
  v.elasticity = 0.2f;
  Geometry g = draw("FFF", v);
  ASSERT_EQ(g.segments.size(), 3u);
  EXPECT_VEC(g.segments[0].end, 0, 1, 0);
  const double a1 = 0.2, a2 = 0.2 + 0.2 * std::cos(0.2);
  EXPECT_VEC(g.segments[1].end, std::sin(a1), 1 + std::cos(a1), 0);
  EXPECT_VEC(g.segments[2].end, std::sin(a1) + std::sin(a2), 1 + std::cos(a1) + std::cos(a2), 0);
  // f does not bend the heading: fF goes straight up.
  EXPECT_VEC(draw("fF", v).segments.at(0).end, 0, 2, 0);

  // Elasticity 0: no bending at all.
  v.elasticity = 0.0f;
  g = draw("FFF", v);
  EXPECT_VEC(g.segments[2].end, 0, 3, 0);
  // T (anti)parallel to H: H x T = 0, nothing to bend.
  v.elasticity = 0.5f;
  v.tropism = {0, -1, 0};
  EXPECT_VEC(draw("FFF", v).segments.at(2).end, 0, 3, 0);
  // A negative elasticity bends away from T.
  v.tropism = {1, 0, 0};
  v.elasticity = -0.2f;
  EXPECT_VEC(draw("FF", v).segments.at(1).end, -std::sin(a1), 1 + std::cos(a1), 0);
}

// ---------------------------------------------------------------------------
// Homomorphism applied during interpretation.

std::string num(float v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

void expectSameGeometry(const Geometry& a, const Geometry& b) {
  ASSERT_EQ(a.segments.size(), b.segments.size());
  for (size_t i = 0; i < a.segments.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_LT(dist(a.segments[i].start, b.segments[i].start), 1e-4f);
    EXPECT_LT(dist(a.segments[i].end, b.segments[i].end), 1e-4f);
    EXPECT_EQ(a.segments[i].width, b.segments[i].width);
    EXPECT_EQ(a.segments[i].color, b.segments[i].color);
    EXPECT_EQ(a.segments[i].depth, b.segments[i].depth);
  }
  ASSERT_EQ(a.polygon_offsets, b.polygon_offsets);
  for (size_t i = 0; i < a.polygon_vertices.size(); ++i)
    EXPECT_LT(dist(a.polygon_vertices[i], b.polygon_vertices[i]), 1e-4f) << i;
}

// The derived string interpreted with the homomorphism equals the string with
// every A(x) replaced by F(x) and every B(x) by !(x)F(x/2)-F(x/2), substituted
// here by hand, interpreted without one.
TEST(TurtleHomomorphism, EqualsInterpretingTheSubstitutedString) {
  const std::string head = "angle increment: 30\nAxiom: A(1)\nA(x) --> A(x*2)[+B(x)]A(x+1)\n";
  LSystem with = LSystem::fromText(head + "homomorphism\nA(x) --> F(x)\nB(x) --> !(x)F(x/2)-F(x/2)\n");
  LSystem without = LSystem::fromText(head);
  DeriveOptions d;
  d.iterations = 3;
  const ModuleString s = derive(with, d);
  ASSERT_TRUE(s == derive(without, d));

  std::string substituted;
  for (uint64_t i = 0; i < s.size(); ++i) {
    const char c = static_cast<char>(s.symbols[i]);
    const float x = s.paramCount(i) ? s.params[s.param_offsets[i]] : 0.0f;
    if (c == 'A') substituted += "F(" + num(x) + ")";
    else if (c == 'B') substituted += "!(" + num(x) + ")F(" + num(x / 2) + ")-F(" + num(x / 2) + ")";
    else substituted += c;
  }
  InterpretOptions o;
  o.view = with.view();
  const Geometry got = interpret(with, s, o);
  const Geometry want = interpret(without, parseModuleString(substituted), o);
  EXPECT_GT(got.segments.size(), 10u);
  expectSameGeometry(got, want);
  // Without the homomorphism A and B draw nothing.
  EXPECT_EQ(interpret(without, s, o).segments.size(), 0u);
}

// Maximum depth: A -> BB, B -> F. With depth 1 the B's produced by A are not
// expanded again (and B draws nothing); with depth 2 they become F's.
TEST(TurtleHomomorphism, MaximumDepth) {
  auto segments = [](const std::string& depth) {
    LSystem l = LSystem::fromText("Axiom: AFA\nhomomorphism\n" + depth + "A --> B+B\nB --> F\n");
    InterpretOptions o;
    o.view = view90();
    return interpret(l, l.axiom(), o).segments;
  };
  EXPECT_EQ(segments("").size(), 1u);  // default depth 1 (cpfg): only the middle F
  EXPECT_EQ(segments("maximum depth: 1\n").size(), 1u);
  const SegmentArray two = segments("maximum depth: 2\n");
  // F + F | F | F + F  (A -> F+F), all at 90 degrees: compare with the literal string.
  const Geometry want = draw("F+FFF+F");
  ASSERT_EQ(two.size(), want.segments.size());
  for (size_t i = 0; i < two.size(); ++i) EXPECT_LT(dist(two[i].end, want.segments[i].end), 1e-5f) << i;
}

// A homomorphism with context sees the interpreted string's neighbours.
TEST(TurtleHomomorphism, ContextInTheHomomorphism) {
  LSystem l = LSystem::fromText("Axiom: BAAB\nhomomorphism\nB < A --> F(2)\nA --> F\n");
  InterpretOptions o;
  o.view = view90();
  const Geometry g = interpret(l, l.axiom(), o);
  ASSERT_EQ(g.segments.size(), 2u);
  EXPECT_VEC(g.segments[0].end, 0, 2, 0);
  EXPECT_VEC(g.segments[1].end, 0, 3, 0);
}

// ran() in a homomorphism successor is keyed by InterpretOptions::seed: the
// same seed draws the same turns, another seed different ones, and every
// turn lies in [0, 90) degrees as ran(90) promises.
TEST(TurtleHomomorphism, RanIsKeyedByTheSeed) {
  LSystem l = LSystem::fromText("Axiom: " + std::string(64, 'A') + "\nhomomorphism\nA --> +(ran(90))F\n");
  auto run = [&](uint64_t seed) {
    InterpretOptions o;
    o.view = view90();
    o.seed = seed;
    return interpret(l, l.axiom(), o);
  };
  const Geometry a = run(1), b = run(1), c = run(2);
  ASSERT_EQ(a.segments.size(), 64u);
  expectSameGeometry(a, b);
  bool differs = false;
  for (size_t i = 0; i < 64; ++i) differs |= dist(a.segments[i].end, c.segments[i].end) > 1e-3f;
  EXPECT_TRUE(differs);
  // Heading angle (from +Y, counter-clockwise seen from +Z) grows by the turn.
  double prev = 0;
  for (const Segment& s : a.segments) {
    const double h = std::atan2(-(s.end.x - s.start.x), s.end.y - s.start.y) * 180 / M_PI;
    double turn = std::fmod(h - prev + 720.0, 360.0);
    if (turn > 359.999) turn = 0;  // rounding of a zero turn
    EXPECT_GE(turn, 0.0);
    EXPECT_LT(turn, 90.0 + 1e-3);
    EXPECT_NEAR(dist(s.start, s.end), 1.0f, 1e-4f);
    prev = h;
  }
}

TEST(Turtle, InstanceIsWrittenIntoTheOutput) {
  LSystem l = LSystem::fromText("Axiom: F{.f+f+f}\n");
  InterpretOptions o;
  o.view = view90();
  o.instance = 7;
  const Geometry g = interpret(l, l.axiom(), o);
  ASSERT_EQ(g.segments.size(), 1u);
  EXPECT_EQ(g.segments[0].instance, 7);
  EXPECT_EQ(g.polygon_instances, std::vector<int32_t>{7});
}

}  // namespace
}  // namespace procgen
