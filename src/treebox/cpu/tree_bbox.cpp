// Stage tree_bbox, cpu backend (oneTBB).
//
// Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes", §6 and
// §9: clip boxes intersect down the tree, blend boxes union up it, both
// driven by the matched structure. Where the paper carries boxes in the stack
// monoid, this CPU form uses the matching output (parent of every element,
// match_parens) and, like the matching engine, resolves each chunk locally and
// patches only what crosses chunk boundaries. Those crossings are the
// chunks' unmatched opens ("spanning" groups: open in one chunk, closed in a
// later one), O(depth excursion) per chunk.
//   0. match:  parent[i] for every element (groups open, ends close).
//   1. clip, local (parallel): every non-end element gets its box ∩ the clip
//      boxes of its ancestors inside its chunk, and remembers the innermost
//      ancestor outside the chunk (its anchor). The chunk's unmatched opens
//      are collected.
//   2. clip, spanning (chunks in order): an unmatched open's anchor is an
//      unmatched open of an earlier chunk, already final: intersect with it.
//   3. clip, final (parallel): intersect every other element with its anchor.
//   4. blend, local (parallel): union the clipped leaves up a chunk-local
//      stack; complete groups are final here. What flows into a spanning
//      group becomes an event (spanning group, box), as does the closing of
//      a spanning group.
//   5. blend, spanning (events in chunk order): accumulate each spanning
//      group's union; when it closes, fold it into its parent.
//   6. ends (parallel): every end copies the result of its group's open.
// Work O(n); the sequential steps 2 and 5 cost O(unmatched opens + events),
// which is O(n / chunk + depth crossings), not O(n), except for trees whose
// groups mostly span chunks (e.g. (((…))) nesting), where they stay O(n)
// but do a single intersection or union per element.
// Bit-exact with the serial backend: min/max only, empty boxes canonical.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <stdexcept>
#include <vector>

#include "treebox/match_internal.hpp"
#include "treebox/monoids.h"
#include "treebox/tsan_fork_join.hpp"

namespace procgen::treebox_detail {
namespace {

PgBox toPg(const Box3& b) { return PgBox{b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z}; }
Box3 fromPg(const PgBox& b) { return Box3{{b.min_x, b.min_y, b.min_z}, {b.max_x, b.max_y, b.max_z}}; }

struct BlendEvent {
  int64_t group;  // a spanning group's open
  bool close;     // false: union `box` into its accumulator; true: the group closes
  PgBox box;
};

struct ChunkLists {
  std::vector<int64_t> unmatched_opens;  // in element order
  std::vector<BlendEvent> events;        // in element order
};

bool isOpen(SceneNodeKind k) { return k == SceneNodeKind::kClip || k == SceneNodeKind::kBlend; }

}  // namespace

void treeBBoxCpu(const Scene& scene, Box3* out, int threads, uint64_t chunk) {
  const uint64_t n = scene.size();
  if (n == 0) return;
  if (chunk == 0) chunk = 1;
  const SceneNodeKind* kinds = scene.kinds.data();
  for (uint64_t i = 0; i < n; ++i)
    if (static_cast<uint8_t>(kinds[i]) > static_cast<uint8_t>(SceneNodeKind::kEnd))
      return treeBBoxSerial(scene, out);  // reports the bad element

  tbb::task_arena arena(threads);
  const uint64_t chunks = (n + chunk - 1) / chunk;
  auto forChunks = [&](auto&& body) {
    TsanForkJoin sync;
    sync.fork();
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<uint64_t>(0, chunks, 1),
                        [&](const tbb::blocked_range<uint64_t>& r) {
                          sync.enter();
                          for (uint64_t c = r.begin(); c != r.end(); ++c)
                            body(c, c * chunk, std::min(n, (c + 1) * chunk));
                          sync.leave();
                        });
    });
    sync.join();
  };

  // 0. match
  std::vector<uint8_t> symbols(n);
  forChunks([&](uint64_t, uint64_t b, uint64_t e) {
    for (uint64_t i = b; i < e; ++i)
      symbols[i] = isOpen(kinds[i]) ? 1 : (kinds[i] == SceneNodeKind::kEnd ? 2 : 0);
  });
  std::vector<int64_t> parent(n);
  MatchStats ms = matchParensCpu(symbols.data(), n, 1, 2, parent.data(), threads, kDefaultChunk,
                                 /*stats=*/true);
  if (ms.unmatched_open != 0 || ms.unmatched_close != 0)
    return treeBBoxSerial(scene, out);  // reports where the scene is unbalanced

  std::vector<ChunkLists> lists(chunks);
  // anchor[i]: innermost ancestor of i outside i's chunk (-1: none, or final).
  std::vector<int64_t> anchor(n);

  // 1. clip, local
  forChunks([&](uint64_t c, uint64_t b, uint64_t e) {
    std::vector<int64_t>& open_list = lists[c].unmatched_opens;
    const int64_t begin = static_cast<int64_t>(b);
    for (uint64_t i = b; i < e; ++i) {
      const SceneNodeKind k = kinds[i];
      const int64_t p = parent[i];
      if (k == SceneNodeKind::kEnd) {
        if (p >= begin) open_list.pop_back();  // a group closed inside the chunk
        continue;
      }
      PgBox own = k == SceneNodeKind::kBlend ? pgBoxAll() : toPg(scene.boxes[i]);
      if (p >= begin) {
        out[i] = fromPg(pgBoxIntersect(own, toPg(out[p])));
        anchor[i] = anchor[p];
      } else {
        out[i] = fromPg(pgBoxIntersect(own, pgBoxAll()));  // canonical empty
        anchor[i] = p;
      }
      if (isOpen(k)) open_list.push_back(static_cast<int64_t>(i));
    }
  });

  // 2. clip, spanning: anchors are unmatched opens of earlier chunks.
  for (uint64_t c = 0; c < chunks; ++c) {
    for (int64_t j : lists[c].unmatched_opens) {
      if (anchor[j] >= 0) out[j] = fromPg(pgBoxIntersect(toPg(out[j]), toPg(out[anchor[j]])));
      anchor[j] = -1;
    }
  }

  // 3. clip, final
  forChunks([&](uint64_t, uint64_t b, uint64_t e) {
    for (uint64_t i = b; i < e; ++i)
      if (kinds[i] != SceneNodeKind::kEnd && anchor[i] >= 0)
        out[i] = fromPg(pgBoxIntersect(toPg(out[i]), toPg(out[anchor[i]])));
  });

  // 4. blend, local. The stack holds the union so far of each group open in
  // the chunk; a group whose open lies before the chunk gets events instead.
  forChunks([&](uint64_t c, uint64_t b, uint64_t e) {
    std::vector<BlendEvent>& events = lists[c].events;
    struct Frame {
      int64_t open;
      PgBox leaves;
    };
    std::vector<Frame> stack;
    const int64_t begin = static_cast<int64_t>(b);
    // Adds `box` to the group `g` (-1: top level, nothing to do).
    auto addTo = [&](int64_t g, const PgBox& box) {
      if (g < 0) return;
      if (g >= begin) {
        stack.back().leaves = pgBoxUnion(stack.back().leaves, box);  // g is the local top
      } else if (!events.empty() && !events.back().close && events.back().group == g) {
        events.back().box = pgBoxUnion(events.back().box, box);
      } else {
        events.push_back(BlendEvent{g, false, box});
      }
    };
    for (uint64_t i = b; i < e; ++i) {
      const SceneNodeKind k = kinds[i];
      const int64_t p = parent[i];
      if (k == SceneNodeKind::kLeaf) {
        addTo(p, toPg(out[i]));
      } else if (isOpen(k)) {
        stack.push_back(Frame{static_cast<int64_t>(i), pgBoxEmpty()});
      } else if (p >= begin) {  // end of a group opened in this chunk
        Frame f = stack.back();
        stack.pop_back();
        if (kinds[p] == SceneNodeKind::kBlend) out[p] = fromPg(f.leaves);
        addTo(parent[p], f.leaves);
      } else {  // end of a spanning group
        events.push_back(BlendEvent{p, true, pgBoxEmpty()});
      }
    }
    // What the chunk's unmatched opens hold so far (they close later).
    for (const Frame& f : stack) events.push_back(BlendEvent{f.open, false, f.leaves});
  });

  // 5. blend, spanning. Accumulators for the spanning groups, indexed through
  // `anchor` (free again after step 3) as slot numbers.
  std::vector<PgBox> acc;
  for (uint64_t c = 0; c < chunks; ++c)
    for (int64_t j : lists[c].unmatched_opens) {
      anchor[j] = static_cast<int64_t>(acc.size());
      acc.push_back(pgBoxEmpty());
    }
  for (uint64_t c = 0; c < chunks; ++c) {
    for (const BlendEvent& ev : lists[c].events) {
      PgBox& a = acc[anchor[ev.group]];
      if (!ev.close) {
        a = pgBoxUnion(a, ev.box);
        continue;
      }
      if (kinds[ev.group] == SceneNodeKind::kBlend) out[ev.group] = fromPg(a);
      const int64_t pp = parent[ev.group];  // spanning too, or the top level
      if (pp >= 0) acc[anchor[pp]] = pgBoxUnion(acc[anchor[pp]], a);
    }
  }

  // 6. ends
  forChunks([&](uint64_t, uint64_t b, uint64_t e) {
    for (uint64_t i = b; i < e; ++i)
      if (kinds[i] == SceneNodeKind::kEnd) out[i] = out[parent[i]];
  });
}

}  // namespace procgen::treebox_detail
