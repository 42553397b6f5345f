// procgen treebox: parentheses matching and bounding boxes on flattened trees.
//
// Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes"
// (shared/seeds/002_db3a77793bbf279e.txt). Matching solves the paper's
// stronger problem (§2); the parallel form reduces every chunk to a
// stack-monoid value (§4), scans those values in chunk order and lets every
// chunk resolve its elements against its incoming stack. Bounding boxes follow
// §6 and §9: clip groups intersect down the tree, blend groups union up it.
//
// Conventions shared by every function here:
//  - outputs are caller-owned arrays of n elements (meshoptimizer style);
//  - sizes and indices are 64-bit; the int32_t overloads exist because the
//    output stream is the bandwidth bottleneck (4 instead of 8 bytes per
//    element) and require n <= kMaxInt32Elements;
//  - results are bit-exact and identical on every backend and thread count;
//  - functions are thread-safe for distinct outputs (no global state);
//  - Backend::kOpenCL runs the kernels of src/treebox/opencl/ (Levien §7–§9)
//    and throws BackendUnavailableError when the build has no OpenCL or there
//    is no device; Backend::kCpu throws it when the build has no oneTBB.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "procgen/backend.hpp"
#include "procgen/geometry.hpp"

namespace procgen {

// ---------------------------------------------------------------------------
// Parentheses matching
// ---------------------------------------------------------------------------

/// Element kinds of the general matching entry point.
enum class ParenKind : uint8_t {
  kOther = 0,  ///< neither opens nor closes
  kOpen = 1,
  kClose = 2,
};

/// Largest n accepted by the int32_t output overloads (indices fit in int32_t).
inline constexpr uint64_t kMaxInt32Elements = 0x7fffffffu;

struct MatchStats {
  uint64_t elements = 0;
  uint64_t unmatched_open = 0;   ///< opens never closed (still on the stack at the end)
  uint64_t unmatched_close = 0;  ///< closes met with an empty stack
  uint64_t max_depth = 0;        ///< largest stack depth reached (unmatched closes do not count)
};

/// Matches parentheses in `symbols[0..n)`: symbols equal to `open` open, symbols
/// equal to `close` close, every other byte is a plain element.
///
/// Output (the paper's stronger form, §2), for every i in [0, n):
///   - close:  out[i] = index of its matching open;
///   - open or plain element: out[i] = index of the innermost open enclosing it;
///   - -1 at top level; an unmatched close gets -1 and leaves the stack unchanged.
/// Every stack state can be recovered from `out` by following out[] from an open.
///
/// Preconditions: open != close; `out` holds n elements and does not overlap
/// `symbols`; for the int32_t overload n <= kMaxInt32Elements (else
/// std::length_error). Work and extra memory are O(n) with no limit on depth;
/// the cpu backend uses O(n / chunk + max stack crossing a chunk) extra memory.
MatchStats matchSymbols(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                        int32_t* out, const Execution& execution);
MatchStats matchSymbols(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                        int64_t* out, const Execution& execution);

/// The general primitive: `kinds[i]` is a ParenKind value (bytes other than 1
/// and 2 count as kOther). Same output and preconditions as matchSymbols.
MatchStats matchParentheses(const ParenKind* kinds, uint64_t n, int32_t* out,
                            const Execution& execution);
MatchStats matchParentheses(const ParenKind* kinds, uint64_t n, int64_t* out,
                            const Execution& execution);

/// Bracket matching for the L-system engine: matchSymbols without statistics,
/// e.g. matchBrackets(str.symbols.data(), str.size(), '[', ']', out, execution).
/// A `]` whose `[` is missing gets -1; an unclosed `[` simply encloses the rest.
void matchBrackets(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close, int64_t* out,
                   const Execution& execution);

/// Random parentheses for tests and benchmarks: writes n bytes, each '(' or ')'.
/// At every step an open is written with probability `push_probability`
/// (0.5 = push and pop equally likely) and always when the stack is empty, so
/// the result never has an unmatched close. Deterministic in (n, seed, p):
/// the draw for position i is Philox(seed, i), independent of anything else.
void randomParentheses(uint64_t n, uint64_t seed, double push_probability, uint8_t* out);

/// FNV-1a 64-bit hash over the output array, each value taken as a
/// little-endian int64_t, so int32_t and int64_t outputs hash alike.
uint64_t matchChecksum(const int32_t* out, uint64_t n);
uint64_t matchChecksum(const int64_t* out, uint64_t n);

// ---------------------------------------------------------------------------
// Tree-structured scenes and their bounding boxes
// ---------------------------------------------------------------------------

/// Axis-aligned box. Empty when min > max on any axis; 2D scenes use z = 0.
struct Box3 {
  Vec3 min;
  Vec3 max;
  bool empty() const { return min.x > max.x || min.y > max.y || min.z > max.z; }
  bool operator==(const Box3& o) const {
    return min.x == o.min.x && min.y == o.min.y && min.z == o.min.z && max.x == o.max.x &&
           max.y == o.max.y && max.z == o.max.z;
  }
};

/// The canonical empty box every function returns for "nothing": min = +inf, max = -inf.
Box3 emptyBox();

enum class BoxTreeNodeKind : uint8_t {
  kLeaf = 0,
  kClip = 1,   ///< opens a clip group (has a box)
  kBlend = 2,  ///< opens a blend group (no box)
  kEnd = 3,    ///< closes the innermost open group
};

/// A flattened tree of clip groups, blend groups and leaves (Levien's
/// "tree-structured scene"; named BoxTree so as not to be confused with the
/// L-system scenes of procgen/scene.hpp): element i is kinds[i] with box boxes[i] (ignored for
/// kBlend and kEnd). Groups nest by kEnd like parentheses.
struct BoxTree {
  int dimensions = 2;  ///< 2 or 3; only affects text I/O
  std::vector<BoxTreeNodeKind> kinds;
  std::vector<Box3> boxes;
  uint64_t size() const { return kinds.size(); }
};

/// Computes one box per element of `scene` into `out[0..scene.size())`:
///   - leaf:  its box intersected with the box of every clip ancestor;
///   - clip:  its box intersected with every clip ancestor (the region its
///            descendants are clipped to);
///   - blend: the union of the resulting boxes of all leaves below it (through
///            nested groups), emptyBox() when there are none;
///   - end:   the result of the group it closes.
/// An empty result is always emptyBox(). Precondition: the scene is balanced
/// (readBoxTree guarantees it; else std::invalid_argument). Bit-exact on every
/// backend (min/max only, no arithmetic).
void treeBoundingBoxes(const BoxTree& scene, Box3* out, const Execution& execution);

/// Box tree text format (`.boxtree`, docs/treebox.md), one element per line:
///   clip x0 y0 x1 y1 {      blend {      leaf x0 y0 x1 y1      }
/// 3D scenes give six numbers (x0 y0 z0 x1 y1 z1); `#` starts a comment.
/// Throws ParseError (file:line:col) on malformed or unbalanced input.
BoxTree parseBoxTree(std::string_view text, const std::string& filename = "<input>");
/// Reads and parses `path`; throws Error when it cannot be read.
BoxTree readBoxTree(const std::filesystem::path& path);
/// The text of `scene` in the format parseBoxTree reads (floats round-trip).
std::string writeBoxTree(const BoxTree& scene);
/// One line per element of `boxes`: `kind x0 y0 x1 y1` (or 3D), `kind empty`.
std::string writeBoxTreeBoxes(const BoxTree& scene, const Box3* boxes);

/// A random balanced scene of exactly n elements (n rounded up to even is not
/// needed: groups are closed at the end). Leaves have boxes inside [0,1000]^d;
/// about a quarter of the elements open groups. Deterministic in (n, seed, dims).
BoxTree randomBoxTree(uint64_t n, uint64_t seed, int dimensions = 2);

}  // namespace procgen
