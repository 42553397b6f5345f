// Stage tree_bbox, cpu backend (oneTBB).
//
// Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes", §6 and
// §9: clip boxes intersect down the tree, blend boxes union up it, both
// driven by the matched structure. Where the paper carries boxes in the stack
// monoid, this CPU form uses the matching output (parent of every element,
// match_parens) and, like the matching engine, resolves each chunk locally and
// handles in order only what crosses chunk boundaries: the chunks' unmatched
// opens ("spanning" groups: open in one chunk, closed in a later one),
// O(depth excursion) per chunk.
//   0. match:  parent[i] for every element (groups open, ends close).
//   1. unmatched opens of every chunk (parallel; kinds and parents only).
//   2. their clip regions, in chunk order: an unmatched open's parent is the
//      previous one of its chunk or one of an earlier chunk, already final.
//   3. one pass per chunk (parallel): clip region of every other open (its
//      box ∩ its parent's region, the parent being earlier in the pass or
//      final from step 2), every leaf clipped by its parent's region, leaves
//      unioned up a chunk-local stack, so groups closed inside the chunk (and
//      their ends) are final. What flows into a spanning group becomes an
//      event (group, box), as does the end of a spanning group.
//   4. blend, spanning (events in chunk order): accumulate each spanning
//      group's union; at its end, write the group's and the end's result
//      and fold the union into its parent.
// Work O(n) and one pass over the boxes; the sequential steps 2 and 4 cost
// O(unmatched opens + events), which is O(n / chunk + depth crossings), not
// O(n), except for trees whose groups mostly span chunks (e.g. (((…)))
// nesting), where they stay O(n) but do one intersection or union per
// element. Indices are int32_t when n allows, and the index arrays are kept
// per calling thread between calls (no page faults when repeated).
// Bit-exact with the serial backend: min/max only, empty boxes canonical.
#include <stdexcept>
#include <vector>

#include "cpu/executor.hpp"
#include "treebox/match_internal.hpp"
#include "treebox/monoids.h"

namespace procgen::treebox_detail {
namespace {

PgBox toPg(const Box3& b) { return PgBox{b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z}; }
Box3 fromPg(const PgBox& b) { return Box3{{b.min_x, b.min_y, b.min_z}, {b.max_x, b.max_y, b.max_z}}; }

struct BlendEvent {
  int64_t group;  // a spanning group's open
  int64_t end;    // -1: union `box` into the group's accumulator; else the group closes here
  PgBox box;
};

struct ChunkLists {
  std::vector<int64_t> unmatched_opens;  // in element order
  std::vector<BlendEvent> events;        // in element order
};

bool isOpen(BoxTreeNodeKind k) { return k == BoxTreeNodeKind::kClip || k == BoxTreeNodeKind::kBlend; }

/// Scratch arrays of the calling thread, kept between calls so that repeated
/// calls take no page faults (n bytes + 2n indices).
template <typename Index>
struct BBoxScratch {
  std::vector<uint8_t> symbols;
  std::vector<Index> parent;
  std::vector<Index> slot;
  static BBoxScratch& forThisThread() {
    static thread_local BBoxScratch scratch;
    return scratch;
  }
};

template <typename Index>
void treeBBoxCpuImpl(const BoxTree& scene, Box3* out, int threads, uint64_t chunk) {
  const uint64_t n = scene.size();
  const BoxTreeNodeKind* kinds = scene.kinds.data();
  detail::CpuExecutor exec(threads);
  const uint64_t chunks = (n + chunk - 1) / chunk;
  const detail::ChunkPlan plan{n, chunk, chunks};
  auto forChunks = [&](auto&& body) {
    exec.forEachChunk(plan, [&](uint64_t c) { body(c, plan.begin(c), plan.end(c)); });
  };

  // 0. match
  BBoxScratch<Index>& scratch = BBoxScratch<Index>::forThisThread();
  scratch.symbols.resize(n);
  scratch.parent.resize(n);
  scratch.slot.resize(n);
  uint8_t* symbols = scratch.symbols.data();
  Index* parent = scratch.parent.data();
  Index* slot = scratch.slot.data();
  forChunks([&](uint64_t, uint64_t b, uint64_t e) {
    // A table, not branches: kinds are random in real scenes and a
    // mispredicted branch per element costs more than the whole pass.
    static constexpr uint8_t kSymbol[4] = {0, 1, 1, 2};  // leaf, clip, blend, end
    const uint8_t* k = reinterpret_cast<const uint8_t*>(kinds);
    for (uint64_t i = b; i < e; ++i) symbols[i] = kSymbol[k[i] & 3u];
  });
  MatchStats ms = matchParensCpu(symbols, n, 1, 2, parent, threads, cpuMatchChunk(n, threads), /*stats=*/true);
  if (ms.unmatched_open != 0 || ms.unmatched_close != 0)
    return treeBBoxSerial(scene, out);  // reports where the scene is unbalanced

  std::vector<ChunkLists> lists(chunks);

  // 1. the chunks' unmatched opens (kinds and parents only)
  forChunks([&](uint64_t c, uint64_t b, uint64_t e) {
    // Branch-free stack of the chunk's opens: every element writes the slot
    // above the top; an open keeps it, an end matched inside the chunk pops.
    static thread_local std::vector<int64_t> stack;
    if (stack.size() < e - b + 1) stack.resize(e - b + 1);
    int64_t* top = stack.data();
    const int64_t begin = static_cast<int64_t>(b);
    for (uint64_t i = b; i < e; ++i) {
      const uint8_t sym = symbols[i];
      *top = static_cast<int64_t>(i);
      top += (sym == 1) - static_cast<int>(sym == 2 && parent[i] >= begin);
    }
    lists[c].unmatched_opens.assign(stack.data(), top);
  });

  // 2. clip regions of the unmatched opens, in chunk order: the parent of
  // one is the previous one of its chunk or an unmatched open of an earlier
  // chunk, so it is already final.
  for (uint64_t c = 0; c < chunks; ++c)
    for (int64_t j : lists[c].unmatched_opens) {
      const int64_t p = parent[j];
      const PgBox own = kinds[j] == BoxTreeNodeKind::kBlend ? pgBoxAll() : toPg(scene.boxes[j]);
      out[j] = fromPg(pgBoxIntersect(own, p >= 0 ? toPg(out[p]) : pgBoxAll()));
    }

  // 3. clip final + blend local + ends of local groups, one pass. The stack
  // holds the union so far of each group open in the chunk; what flows into
  // a group opened before the chunk, and such a group's end, become events.
  forChunks([&](uint64_t c, uint64_t b, uint64_t e) {
    std::vector<BlendEvent>& events = lists[c].events;
    struct Frame {
      int64_t open;
      PgBox leaves;
    };
    std::vector<Frame> stack;
    const int64_t begin = static_cast<int64_t>(b);
    const std::vector<int64_t>& unmatched = lists[c].unmatched_opens;
    size_t next_unmatched = 0;
    // Adds `box` to the group `g` (-1: top level, nothing to do).
    auto addTo = [&](int64_t g, const PgBox& box) {
      if (g < 0) return;
      if (g >= begin) {
        stack.back().leaves = pgBoxUnion(stack.back().leaves, box);  // g is the local top
      } else if (!events.empty() && events.back().end < 0 && events.back().group == g) {
        events.back().box = pgBoxUnion(events.back().box, box);
      } else {
        events.push_back(BlendEvent{g, -1, box});
      }
    };
    for (uint64_t i = b; i < e; ++i) {
      const BoxTreeNodeKind k = kinds[i];
      const int64_t p = parent[i];
      if (k == BoxTreeNodeKind::kLeaf) {
        // The parent's clip region is final: an unmatched open of an earlier
        // chunk (step 2) or an open earlier in this pass.
        const PgBox r = pgBoxIntersect(toPg(scene.boxes[i]), p >= 0 ? toPg(out[p]) : pgBoxAll());
        out[i] = fromPg(r);
        addTo(p, r);
      } else if (isOpen(k)) {
        // Clip region; the unmatched opens already have theirs (step 2), and
        // later chunks may be reading it.
        if (next_unmatched < unmatched.size() && unmatched[next_unmatched] == static_cast<int64_t>(i)) {
          ++next_unmatched;
        } else {
          const PgBox own = k == BoxTreeNodeKind::kBlend ? pgBoxAll() : toPg(scene.boxes[i]);
          out[i] = fromPg(pgBoxIntersect(own, p >= 0 ? toPg(out[p]) : pgBoxAll()));
        }
        stack.push_back(Frame{static_cast<int64_t>(i), pgBoxEmpty()});
      } else if (p >= begin) {  // end of a group opened in this chunk
        Frame f = stack.back();
        stack.pop_back();
        if (kinds[p] == BoxTreeNodeKind::kBlend) out[p] = fromPg(f.leaves);
        out[i] = out[p];
        addTo(parent[p], f.leaves);
      } else {  // end of a spanning group
        events.push_back(BlendEvent{p, static_cast<int64_t>(i), pgBoxEmpty()});
      }
    }
    // What the chunk's unmatched opens hold so far (they close later).
    for (const Frame& f : stack) events.push_back(BlendEvent{f.open, -1, f.leaves});
  });

  // 4. blend, spanning. Accumulators for the spanning groups, indexed through
  // `slot` (written for the unmatched opens only).
  std::vector<PgBox> acc;
  for (uint64_t c = 0; c < chunks; ++c)
    for (int64_t j : lists[c].unmatched_opens) {
      slot[j] = static_cast<Index>(acc.size());
      acc.push_back(pgBoxEmpty());
    }
  for (uint64_t c = 0; c < chunks; ++c) {
    for (const BlendEvent& ev : lists[c].events) {
      PgBox& a = acc[static_cast<size_t>(slot[ev.group])];
      if (ev.end < 0) {
        a = pgBoxUnion(a, ev.box);
        continue;
      }
      if (kinds[ev.group] == BoxTreeNodeKind::kBlend) out[ev.group] = fromPg(a);
      out[ev.end] = out[ev.group];
      const int64_t pp = parent[ev.group];  // spanning too, or the top level
      if (pp >= 0) acc[static_cast<size_t>(slot[pp])] = pgBoxUnion(acc[static_cast<size_t>(slot[pp])], a);
    }
  }
}

}  // namespace

void treeBBoxCpu(const BoxTree& scene, Box3* out, int threads, uint64_t chunk) {
  const uint64_t n = scene.size();
  if (n == 0) return;
  if (chunk == 0) chunk = 1;
  for (uint64_t i = 0; i < n; ++i)
    if (static_cast<uint8_t>(scene.kinds[i]) > static_cast<uint8_t>(BoxTreeNodeKind::kEnd))
      return treeBBoxSerial(scene, out);  // reports the bad element
  if (n <= kMaxInt32Elements) treeBBoxCpuImpl<int32_t>(scene, out, threads, chunk);
  else treeBBoxCpuImpl<int64_t>(scene, out, threads, chunk);
}

}  // namespace procgen::treebox_detail
