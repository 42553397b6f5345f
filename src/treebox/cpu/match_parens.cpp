// Stage match_parens, cpu backend (oneTBB).
//
// Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes", §4 and
// §7. The input is cut into chunks. Each chunk is reduced to its stack-monoid
// value (a = unmatched closes, l = its unmatched opens), the values are scanned
// in chunk order, and each chunk resolves its elements against its incoming
// stack (the scan up to it). Here the three steps are fused into one pass over
// memory, in the style of a decoupled look-back scan:
//   1. resolve: the shared branch-free loop runs over the chunk. If chunk
//      c-1 has already published (look-back; always so with one thread) the
//      slots below the base are read from the incoming stack; otherwise they
//      hold placeholders -(k+2) ("entry k from the top of the incoming
//      stack"). The local stack then holds l, and a is known.
//   2. scan:    wait until chunk c-1 has published the stack after it, S_c;
//      publish S_{c+1} = S_c ⊕ (a, l). S is a persistent list of segments
//      (chunk j, first k entries of l_j), so the step costs O(segments
//      popped), amortised O(1) per chunk; l itself is copied once, into a
//      pool shared by all chunks.
//   3. patch:   (placeholder chunks only) copy the top a+1 entries of S_c and
//      replace the placeholders, visiting only the blocks the loop flagged —
//      the chunk's output is still in L2 from step 1.
// Work and memory are linear in n with no bound on depth: the l lists hold
// at most n entries in total and the segments 2 per chunk.
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <thread>

#include "treebox/match_internal.hpp"
#include "treebox/match_kernel.hpp"

namespace procgen::treebox_detail {
namespace {

/// One segment of a published stack: the first `count` unmatched opens of
/// chunk `chunk`, on top of segment `parent` (-1: stack bottom).
struct Segment {
  uint64_t chunk;
  uint64_t count;
  int64_t parent;
  uint64_t depth;  // total entries from the bottom up to and including this segment
};

template <typename Index>
struct alignas(64) ChunkState {
  const Index* opens = nullptr;  // l: unmatched opens, bottom first (in the shared pool)
  int64_t top = -1;          // segment on top of S_{c+1}, valid once published
  std::atomic<int> published{0};
};

/// Walks a published stack from the top, one entry per depth: the slots below
/// a chunk's base when its incoming stack is already known.
template <typename Index>
class SegmentCursor final : public FillSource<Index> {
 public:
  SegmentCursor(const std::vector<Segment>& segments, const ChunkState<Index>* state, int64_t top)
      : segments_(segments), state_(state), seg_(top) {}
  void fill(Index* origin, int64_t first, int64_t last) override {
    int64_t k = first;
    while (k < last && seg_ >= 0) {
      // A run of one segment is a reversed copy of part of its l list.
      const Segment& s = segments_[static_cast<size_t>(seg_)];
      const Index* l = state_[s.chunk].opens;
      const uint64_t run = std::min<uint64_t>(s.count - taken_, static_cast<uint64_t>(last - k));
      const Index* src = l + (s.count - taken_ - 1);
      Index* dst = origin - k;
      for (uint64_t t = 0; t < run; ++t) dst[-static_cast<int64_t>(t)] = src[-static_cast<int64_t>(t)];
      k += static_cast<int64_t>(run);
      taken_ += run;
      if (taken_ == s.count) {
        seg_ = s.parent;
        taken_ = 0;
      }
    }
    for (; k < last; ++k) origin[-k] = static_cast<Index>(-1);
  }

 private:
  const std::vector<Segment>& segments_;
  const ChunkState<Index>* state_;
  int64_t seg_;
  uint64_t taken_ = 0;
};

template <typename Index, bool kStats>
MatchStats matchCpuImpl(const uint8_t* in, uint64_t n, uint8_t open, uint8_t close, Index* out,
                        int threads, uint64_t chunk) {
  MatchStats stats;
  stats.elements = n;
  if (n == 0) return stats;
  if (chunk == 0) chunk = 1;
  const uint64_t chunks = (n + chunk - 1) / chunk;
  const DeltaTable table = makeDeltaTable(open, close);
  std::unique_ptr<ChunkState<Index>[]> state(new ChunkState<Index>[chunks]);
  std::vector<Segment> segments;
  segments.reserve(2 * chunks + 1);
  // Written only inside the scan step, which runs in chunk order.
  uint64_t unmatched_close = 0;
  uint64_t max_depth = 0;
  std::atomic<uint64_t> next{0};
  StackBuffer<Index> pool;
  pool.allocate(static_cast<int64_t>(n), /*huge_pages=*/false);
  std::atomic<uint64_t> pool_next{0};

  auto worker = [&] {
    LocalStack<Index> stack;
    std::vector<uint64_t> flagged;
    std::vector<Index> incoming;
    for (uint64_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1)) {
      const uint64_t begin = c * chunk;
      const uint64_t end = std::min(n, begin + chunk);
      // 1. resolve. When chunk c-1 has already published (always with one
      // thread, often with staggered workers), the incoming stack is read
      // directly and there is nothing to patch afterwards.
      const bool direct = c == 0 || state[c - 1].published.load(std::memory_order_acquire) != 0;
      SegmentCursor<Index> cursor(segments, state.get(), c > 0 && direct ? state[c - 1].top : -1);
      stack.reset(/*placeholders=*/true, 0, direct ? &cursor : nullptr);
      flagged.clear();
      RangeSummary r = resolveRange<Index, kStats>(in, begin, end, table, out, stack,
                                                   direct ? nullptr : &flagged,
                                                   /*exact_local=*/false);
      const uint64_t a = r.unmatchedCloses();
      const uint64_t b = r.unmatchedOpens();
      Index* origin = stack.origin();
      // All l lists together hold at most n entries; one lazily mapped pool,
      // cut by a bump pointer, touches only the pages actually used.
      Index* l = pool.get() + pool_next.fetch_add(b, std::memory_order_relaxed);
      std::copy(origin + r.min_sp + 1, origin + r.end_sp + 1, l);
      state[c].opens = l;

      // 2. scan: S_c is what chunk c-1 published.
      int64_t top = -1;
      if (c > 0) {
        std::atomic<int>& prev = state[c - 1].published;
        for (int spin = 0; prev.load(std::memory_order_acquire) == 0; ++spin) {
          if (spin < 256) std::this_thread::yield();
          else prev.wait(0, std::memory_order_acquire);
        }
        top = state[c - 1].top;
      }
      const uint64_t depth_in = top < 0 ? 0 : segments[static_cast<size_t>(top)].depth;
      incoming.resize(direct ? 0 : a + 1);
      uint64_t k = 0;
      int64_t seg = top;
      uint64_t seg_taken = 0;  // entries of `seg` already consumed from its top
      while (!direct && k <= a && seg >= 0) {
        const Segment& s = segments[static_cast<size_t>(seg)];
        const Index* l = state[s.chunk].opens;
        uint64_t take = std::min<uint64_t>(s.count - seg_taken, a + 1 - k);
        for (uint64_t t = 0; t < take; ++t) incoming[k + t] = l[s.count - seg_taken - 1 - t];
        k += take;
        seg_taken += take;
        if (seg_taken == s.count) {
          seg = s.parent;
          seg_taken = 0;
        }
      }
      for (; !direct && k <= a; ++k) incoming[k] = static_cast<Index>(-1);
      {
        // S_{c+1}: pop a entries (whole segments, then cut one), push l.
        int64_t node = top;
        uint64_t rem = a;
        while (node >= 0 && rem >= segments[static_cast<size_t>(node)].count) {
          rem -= segments[static_cast<size_t>(node)].count;
          node = segments[static_cast<size_t>(node)].parent;
        }
        if (node >= 0 && rem > 0) {
          Segment cut = segments[static_cast<size_t>(node)];
          cut.count -= rem;
          cut.depth -= rem;
          segments.push_back(cut);
          node = static_cast<int64_t>(segments.size() - 1);
        }
        if (b > 0) {
          uint64_t below = node < 0 ? 0 : segments[static_cast<size_t>(node)].depth;
          segments.push_back(Segment{c, b, node, below + b});
          node = static_cast<int64_t>(segments.size() - 1);
        }
        state[c].top = node;
      }
      unmatched_close += a > depth_in ? a - depth_in : 0;
      if constexpr (kStats) {
        // Only when the chunk pops below the real stack bottom (unmatched
        // closes) can the depth relative to its own minimum be larger.
        uint64_t d = depth_in + static_cast<uint64_t>(r.max_sp);
        if (depth_in < a)
          d = std::max<uint64_t>(d, static_cast<uint64_t>(maxLocalDepth(in, begin, end, table, 0, 0)));
        max_depth = std::max(max_depth, d);
      }
      state[c].published.store(1, std::memory_order_release);
      state[c].published.notify_all();

      // 3. patch
      const Index* inc = incoming.data();
      for (uint64_t fb : flagged) {
        uint64_t fe = std::min(end, fb + static_cast<uint64_t>(kBlock));
        for (uint64_t i = fb; i < fe; ++i) {
          Index v = out[i];
          if (v < -1) out[i] = inc[-(v + 2)];
        }
      }
    }
  };

  const uint64_t workers = std::min<uint64_t>(static_cast<uint64_t>(threads), chunks);
  if (workers <= 1) {
    worker();
  } else {
    tbb::task_arena arena(static_cast<int>(workers));
    arena.execute([&] {
      tbb::parallel_for(uint64_t{0}, workers, [&](uint64_t) { worker(); });
    });
  }
  const int64_t last = state[chunks - 1].top;
  stats.unmatched_open = last < 0 ? 0 : segments[static_cast<size_t>(last)].depth;
  stats.unmatched_close = unmatched_close;
  stats.max_depth = max_depth;
  return stats;
}

}  // namespace

MatchStats matchParensCpu(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                          int32_t* out, int threads, uint64_t chunk, bool stats) {
  return stats ? matchCpuImpl<int32_t, true>(symbols, n, open, close, out, threads, chunk)
               : matchCpuImpl<int32_t, false>(symbols, n, open, close, out, threads, chunk);
}

MatchStats matchParensCpu(const uint8_t* symbols, uint64_t n, uint8_t open, uint8_t close,
                          int64_t* out, int threads, uint64_t chunk, bool stats) {
  return stats ? matchCpuImpl<int64_t, true>(symbols, n, open, close, out, threads, chunk)
               : matchCpuImpl<int64_t, false>(symbols, n, open, close, out, threads, chunk);
}

}  // namespace procgen::treebox_detail
