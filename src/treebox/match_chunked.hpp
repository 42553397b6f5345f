// The chunked single-pass matching engine behind both backends of stage
// match_parens: serial/match_parens.cpp runs it with one worker, cpu/
// match_parens.cpp with oneTBB workers (STYLE.md practice 1: one stage, one
// loop; the serial backend differs only in having no concurrency).
//
// Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes", §4 and
// §7. The input is cut into chunks. Each chunk is reduced to its stack-monoid
// value (a = unmatched closes, l = its unmatched opens), the values are scanned
// in chunk order, and each chunk resolves its elements against its incoming
// stack (the scan up to it). Here the three steps are fused into one pass over
// memory, in the style of a decoupled look-back scan:
//   1. resolve: the branch-free loop (match_kernel.hpp) runs over the chunk.
//      If S_c (the stack after chunk c-1) is already published (look-back;
//      always so with one worker) the slots below the base are read from it;
//      otherwise they hold placeholders -(k+2) ("entry k from the top of the
//      incoming stack"). The local stack then holds l, and a is known.
//   2. scan:    whichever worker gets the scan lock publishes, in chunk
//      order, S_{c+1} = S_c ⊕ (a, l) for every resolved chunk. S is a
//      persistent list of segments (chunk j, first k entries of l_j), so a
//      step costs O(segments popped), amortised O(1) per chunk.
//   3. patch:   (placeholder chunks only, by the worker that resolved them,
//      once S_c is out) replace the placeholders with the top a+1 entries of
//      S_c (expanded only when they are not consecutive), visiting only the
//      blocks the loop flagged; the chunk's output is usually still in L2.
//
// Why deep nesting stays close to random input: an l list whose entries
// are consecutive indices — every chunk of (((…))) — is stored as a run
// (first index, count), not copied, and entries taken from runs are written
// as ascending sequences; when the a+1 incoming entries a chunk needs are
// consecutive (every chunk of …))) ), the patch is one add per element and
// vectorises. The per-thread stacks and buffers live as long as the thread,
// so repeated calls do not page-fault. Work and memory are linear in n with
// no bound on depth: the l lists hold at most n entries in total, the
// segments 2 per chunk.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "procgen/treebox.hpp"
#include "treebox/match_kernel.hpp"

namespace procgen::treebox_detail {

/// One segment of a published stack: the first `count` unmatched opens of
/// chunk `chunk`, on top of segment `parent` (-1: stack bottom).
struct StackSegment {
  uint64_t chunk;
  uint64_t count;
  int64_t parent;
  uint64_t depth;  // total entries from the bottom up to and including this segment
};

template <typename Index>
struct alignas(64) ChunkState {
  // l, bottom first: opens[t] when opens != nullptr (in the shared pool),
  // else first_open + t (a run of consecutive indices, stored without a copy).
  const Index* opens = nullptr;
  Index first_open = 0;
  uint64_t a = 0;          // unmatched closes
  uint64_t b = 0;          // unmatched opens (|l|)
  int64_t max_sp = 0;      // highest local stack position reached
  int64_t top = -1;        // segment on top of S_{c+1}, valid once scanned
  std::atomic<int> resolved{0};  // a, b, l, max_sp written
  std::atomic<int> scanned{0};   // top written: S_{c+1} is published
};

/// Writes entries [t0, t0 + count) of chunk state `cs`'s l list to dst[0..count).
template <typename Index>
inline void copyOpens(const ChunkState<Index>& cs, uint64_t t0, uint64_t count, Index* dst) {
  if (cs.opens) {
    std::copy(cs.opens + t0, cs.opens + t0 + count, dst);
  } else {
    // Index-typed counter: the iota vectorises in Index lanes (4 int32 per
    // SSE2 add) instead of 64-bit lanes narrowed by shuffles.
    const Index first = static_cast<Index>(cs.first_open + static_cast<Index>(t0));
    const Index m = static_cast<Index>(count);
    for (Index u = 0; u < m; ++u) dst[u] = static_cast<Index>(first + u);
  }
}

/// Walks a published stack from the top: writes origin[-k] = entry k from the
/// top, for consecutive ranges of k; -1 below the bottom. Used for the slots
/// below a chunk's base (look-back) and to expand a patch's incoming stack.
template <typename Index>
class SegmentCursor final : public FillSource<Index> {
 public:
  SegmentCursor(const StackSegment* segments, const ChunkState<Index>* state, int64_t top)
      : segments_(segments), state_(state), seg_(top) {}
  void fill(Index* origin, int64_t first, int64_t last) override {
    int64_t k = first;
    while (k < last && seg_ >= 0) {
      // Entries k .. k+run-1 from the top are l[hi-run .. hi) of one chunk,
      // bottom first: one ascending copy to origin[-(k+run-1) .. -k].
      const StackSegment& s = segments_[seg_];
      const uint64_t hi = s.count - taken_;
      const uint64_t run = std::min<uint64_t>(hi, static_cast<uint64_t>(last - k));
      copyOpens(state_[s.chunk], hi - run, run, origin - (k + static_cast<int64_t>(run) - 1));
      k += static_cast<int64_t>(run);
      taken_ += run;
      if (taken_ == s.count) {
        seg_ = s.parent;
        taken_ = 0;
      }
    }
    if (k < last) std::fill(origin - (last - 1), origin - k + 1, static_cast<Index>(-1));
  }

 private:
  const StackSegment* segments_;
  const ChunkState<Index>* state_;
  int64_t seg_;
  uint64_t taken_ = 0;
};

/// Scratch memory of one worker thread, kept for the thread's lifetime so
/// that steady-state calls touch no fresh pages.
template <typename Index>
struct MatchWorkspace {
  LocalStack<Index> stack;
  std::vector<std::vector<uint64_t>> spare_flagged;  // recycled flagged-block lists
  std::vector<Index> incoming;
  static MatchWorkspace& forThisThread() {
    static thread_local MatchWorkspace workspace;
    return workspace;
  }
};

/// Entry k from the top of a published stack (-1 below its bottom), by a
/// walk over its segments: O(segments passed).
template <typename Index>
inline Index stackEntry(const StackSegment* segments, const ChunkState<Index>* state, int64_t seg,
                        uint64_t k) {
  while (seg >= 0 && k >= segments[seg].count) {
    k -= segments[seg].count;
    seg = segments[seg].parent;
  }
  if (seg < 0) return -1;
  const StackSegment& s = segments[seg];
  const ChunkState<Index>& cs = state[s.chunk];
  const uint64_t t = s.count - 1 - k;
  return cs.opens ? cs.opens[t] : static_cast<Index>(cs.first_open + static_cast<Index>(t));
}

/// Replaces the placeholders -(k+2) in out[fb, fb + kBlock) ∩ [.., end) for
/// every flagged block start fb, when entry k of the incoming stack is
/// top - k for every k <= a (consecutive entries, `top` >= a), or -1 for
/// every k (`top` == -1, empty stack): one add or select per element, which
/// vectorises, and no copy of the incoming stack. Covers every chunk of
/// (((…))) and ()()() and the top level of any input.
template <typename Index>
inline void patchLinear(Index* out, uint64_t end, const std::vector<uint64_t>& flagged, Index top) {
  for (uint64_t fb : flagged) {
    const uint64_t fe = std::min(end, fb + static_cast<uint64_t>(kBlock));
    if (top >= 0) {
      const Index shift = static_cast<Index>(top + 2);  // -(k+2) + top + 2 = top - k
      for (uint64_t i = fb; i < fe; ++i) out[i] = out[i] < -1 ? static_cast<Index>(out[i] + shift) : out[i];
    } else {
      for (uint64_t i = fb; i < fe; ++i) out[i] = out[i] < -1 ? static_cast<Index>(-1) : out[i];
    }
  }
}

/// The general case: entry k of the incoming stack is inc[-k].
template <typename Index>
inline void patchPlaceholders(Index* out, uint64_t end, const std::vector<uint64_t>& flagged,
                              const Index* inc) {
  for (uint64_t fb : flagged) {
    const uint64_t fe = std::min(end, fb + static_cast<uint64_t>(kBlock));
    // Most elements of a flagged block are already final: test 16 at a time
    // (vectorised) and fix only groups with placeholders.
    uint64_t i = fb;
    for (; i + 16 <= fe; i += 16) {
      bool any = false;
      for (int k = 0; k < 16; ++k) any |= out[i + k] < -1;
      if (!any) continue;
      for (int k = 0; k < 16; ++k)
        if (out[i + k] < -1) out[i + k] = inc[out[i + k] + 2];
    }
    for (; i < fe; ++i)
      if (out[i] < -1) out[i] = inc[out[i] + 2];
  }
}

/// The engine. `run_workers(worker, count)` must call worker() on `count`
/// threads at once (or once, on the caller, when count == 1).
///
/// Decoupled scan: a worker never waits for another chunk while chunks are
/// left. After resolving a chunk it marks it resolved and, if no other worker
/// is scanning, advances the scan over every resolved chunk in order; its own
/// placeholder chunks are patched as soon as their predecessor is scanned
/// (usually one chunk later, while the output is still in L2). A worker that
/// runs out of chunks helps the scan until its own chunks are patched, so a
/// descheduled worker delays the others only at the very end.
template <typename Index, bool kStats, typename RunWorkers>
MatchStats matchChunked(const uint8_t* in, uint64_t n, uint8_t open, uint8_t close, Index* out,
                        int threads, uint64_t chunk, RunWorkers&& run_workers) {
  MatchStats stats;
  stats.elements = n;
  if (n == 0) return stats;
  if (chunk == 0) chunk = 1;
  const uint64_t chunks = (n + chunk - 1) / chunk;
  const DeltaTable table = makeDeltaTable(open, close);
  std::unique_ptr<ChunkState<Index>[]> state(new ChunkState<Index>[chunks]);
  std::unique_ptr<StackSegment[]> segments(new StackSegment[2 * chunks + 1]);
  // Scan state, touched only by the worker holding scan_mutex.
  std::mutex scan_mutex;
  std::atomic<uint64_t> scan_next{0};
  uint64_t segment_count = 0;
  uint64_t unmatched_close = 0;
  uint64_t max_depth = 0;
  std::atomic<uint64_t> next{0};
  // All l lists that are not runs together hold at most n entries; one
  // lazily mapped pool, cut by a bump pointer, touches only pages it uses.
  StackBuffer<Index> pool;
  pool.allocate(static_cast<int64_t>(n), /*huge_pages=*/false);
  std::atomic<uint64_t> pool_next{0};

  // S_{c+1} = S_c ⊕ (a, l): pop a entries (whole segments, then cut one), push l.
  auto scanStep = [&](uint64_t c) {
    ChunkState<Index>& cs = state[c];
    const int64_t top = c == 0 ? -1 : state[c - 1].top;
    const uint64_t depth_in = top < 0 ? 0 : segments[top].depth;
    int64_t node = top;
    uint64_t rem = cs.a;
    while (node >= 0 && rem >= segments[node].count) {
      rem -= segments[node].count;
      node = segments[node].parent;
    }
    if (node >= 0 && rem > 0) {
      StackSegment cut = segments[node];
      cut.count -= rem;
      cut.depth -= rem;
      segments[segment_count] = cut;
      node = static_cast<int64_t>(segment_count++);
    }
    if (cs.b > 0) {
      const uint64_t below = node < 0 ? 0 : segments[node].depth;
      segments[segment_count] = StackSegment{c, cs.b, node, below + cs.b};
      node = static_cast<int64_t>(segment_count++);
    }
    cs.top = node;
    unmatched_close += cs.a > depth_in ? cs.a - depth_in : 0;
    if constexpr (kStats) {
      // Only when the chunk pops below the real stack bottom (unmatched
      // closes) can the depth relative to its own minimum be larger.
      uint64_t d = depth_in + static_cast<uint64_t>(cs.max_sp);
      if (depth_in < cs.a) {
        const uint64_t begin = c * chunk;
        d = std::max<uint64_t>(d, static_cast<uint64_t>(maxLocalDepth(
                                      in, begin, std::min(n, begin + chunk), table, 0, 0)));
      }
      max_depth = std::max(max_depth, d);
    }
    cs.scanned.store(1, std::memory_order_release);
  };
  auto tryScan = [&] {
    for (;;) {
      std::unique_lock<std::mutex> lock(scan_mutex, std::try_to_lock);
      if (!lock.owns_lock()) return;
      uint64_t c = scan_next.load(std::memory_order_relaxed);
      for (; c < chunks && state[c].resolved.load(std::memory_order_acquire); ++c) scanStep(c);
      scan_next.store(c, std::memory_order_release);
      lock.unlock();
      // A chunk resolved while we held the lock would otherwise wait for
      // the next caller.
      if (c == chunks || !state[c].resolved.load(std::memory_order_acquire)) return;
    }
  };

  auto worker = [&] {
    MatchWorkspace<Index>& ws = MatchWorkspace<Index>::forThisThread();
    LocalStack<Index>& stack = ws.stack;
    struct Pending {
      uint64_t chunk;
      std::vector<uint64_t> flagged;
    };
    std::vector<Pending> pending;  // this worker's chunks still holding placeholders
    auto newFlagged = [&] {
      std::vector<uint64_t> v;
      if (!ws.spare_flagged.empty()) {
        v = std::move(ws.spare_flagged.back());
        ws.spare_flagged.pop_back();
      }
      v.clear();
      return v;
    };
    auto patchReady = [&] {
      size_t keep = 0;
      for (size_t k = 0; k < pending.size(); ++k) {
        Pending& p = pending[k];
        const uint64_t c = p.chunk;
        if (!state[c - 1].scanned.load(std::memory_order_acquire)) {
          if (keep != k) pending[keep] = std::move(p);
          ++keep;
          continue;
        }
        // The top a+1 entries of S_c. They strictly decrease downwards
        // (deeper opens have smaller indices) to the -1s below the bottom,
        // so entries 0 and a alone tell whether they are consecutive.
        const uint64_t a = state[c].a;
        const int64_t top = state[c - 1].top;
        const uint64_t end = std::min(n, (c + 1) * chunk);
        const Index e0 = stackEntry(segments.get(), state.get(), top, 0);
        const Index ea = a == 0 ? e0 : stackEntry(segments.get(), state.get(), top, a);
        if (e0 == -1 || (ea >= 0 && e0 - ea == static_cast<Index>(a))) {
          patchLinear(out, end, p.flagged, e0);
        } else {
          ws.incoming.resize(a + 1);  // entry k at inc[-k]
          SegmentCursor<Index> cursor(segments.get(), state.get(), top);
          cursor.fill(ws.incoming.data() + a, 0, static_cast<int64_t>(a) + 1);
          patchPlaceholders(out, end, p.flagged, ws.incoming.data() + a);
        }
        ws.spare_flagged.push_back(std::move(p.flagged));
      }
      pending.resize(keep);
    };

    for (uint64_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1)) {
      const uint64_t begin = c * chunk;
      const uint64_t end = std::min(n, begin + chunk);
      // 1. resolve. With S_c already published (always with one worker)
      // the incoming stack is read directly and nothing needs patching.
      const bool direct = c == 0 || state[c - 1].scanned.load(std::memory_order_acquire) != 0;
      SegmentCursor<Index> cursor(segments.get(), state.get(), c > 0 && direct ? state[c - 1].top : -1);
      stack.reset(/*placeholders=*/true, static_cast<int64_t>(std::min<uint64_t>(chunk, 1u << 20)),
                  direct ? &cursor : nullptr);
      std::vector<uint64_t> flagged = direct ? std::vector<uint64_t>{} : newFlagged();
      RangeSummary r = resolveRange<Index, kStats>(in, begin, end, table, out, stack,
                                                   direct ? nullptr : &flagged,
                                                   /*exact_local=*/false);
      ChunkState<Index>& cs = state[c];
      cs.a = r.unmatchedCloses();
      cs.b = r.unmatchedOpens();
      cs.max_sp = r.max_sp;
      const Index* l = stack.origin() + r.min_sp + 1;
      if (cs.b > 0 && l[cs.b - 1] - l[0] == static_cast<Index>(cs.b - 1)) {
        cs.first_open = l[0];  // consecutive: (((…
      } else if (cs.b > 0) {
        Index* copy = pool.get() + pool_next.fetch_add(cs.b, std::memory_order_relaxed);
        std::copy(l, l + cs.b, copy);
        cs.opens = copy;
      }
      cs.resolved.store(1, std::memory_order_release);
      if (!flagged.empty()) pending.push_back(Pending{c, std::move(flagged)});
      else if (!direct) ws.spare_flagged.push_back(std::move(flagged));
      // 2. scan and 3. patch, as far as possible without waiting.
      tryScan();
      if (!pending.empty()) patchReady();
    }
    for (int spin = 0; !pending.empty(); ++spin) {
      tryScan();
      patchReady();
      if (!pending.empty()) std::this_thread::yield();
    }
  };

  const uint64_t workers = std::min<uint64_t>(static_cast<uint64_t>(threads), chunks);
  if (workers <= 1) worker();
  else run_workers(worker, static_cast<int>(workers));
  tryScan();  // all resolved: completes the scan if a worker's last try lost the lock
  const int64_t last = state[chunks - 1].top;
  stats.unmatched_open = last < 0 ? 0 : segments[last].depth;
  stats.unmatched_close = unmatched_close;
  stats.max_depth = max_depth;
  return stats;
}

}  // namespace procgen::treebox_detail
