// The branch-free stack loop shared by serial/match_parens.cpp and
// cpu/match_parens.cpp (STYLE.md practice 1: one stage, one loop).
//
// Paper: Levien, "Fast GPU bounding boxes on tree-structured scenes", §2 (the
// sequential algorithm of Figure 1) and §4 (a chunk's stack-monoid value is
// what is left on its local stack at the end).
//
// Why the loop looks like this: every element writes out[i] = top and stores
// its own index one slot above the top unconditionally, then moves the stack
// pointer by delta ∈ {-1, 0, +1} from a 256-entry table. No element takes a
// branch, so random input runs as fast as nested or flat input. The stack
// pointer is never clamped at the bottom either: the slots below the local
// base are pre-filled ("lazily", one block ahead) with what the element would
// see there — -1 for the serial backend, or the placeholder -(k + 2) meaning
// "entry k from the top of the incoming stack" for a cpu chunk, which the cpu
// backend replaces once its incoming stack is known. A slot below the running
// minimum is never written (pushes write above the current top), so it still
// holds its fill value when the loop reaches it.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include <sys/mman.h>

#include "treebox/monoids.h"

namespace procgen::treebox_detail {

/// Elements per block: the unit at which the stack is grown and filled and at
/// which the cpu backend records where placeholders may have been written.
inline constexpr int64_t kBlock = 1024;

/// Stack-pointer change per input byte. 64-bit entries: the hot loop adds
/// them to a pointer without a sign extension (one uop fewer per element).
using DeltaTable = std::array<int64_t, 256>;

inline DeltaTable makeDeltaTable(uint8_t open, uint8_t close) {
  DeltaTable table{};
  for (int s = 0; s < 256; ++s)
    table[s] = pgParenDelta(static_cast<pg_u8>(s), open, close);
  return table;
}

/// Stack storage. Deep nesting needs a stack as long as the input; taking it
/// from mmap with MADV_HUGEPAGE costs one page fault per 2 MiB instead of one
/// per 4 KiB, which in a VM was most of the serial time on (((…))) input.
template <typename Index>
class StackBuffer {
 public:
  StackBuffer() = default;
  StackBuffer(const StackBuffer&) = delete;
  StackBuffer& operator=(const StackBuffer&) = delete;
  ~StackBuffer() { release(); }
  Index* get() const { return data_; }
  Index& operator[](int64_t i) const { return data_[i]; }
  void allocate(int64_t count, bool huge_pages = true) {
    release();
    bytes_ = static_cast<size_t>(count) * sizeof(Index);
    if (bytes_ >= kHuge) {
      bytes_ = (bytes_ + kHuge - 1) / kHuge * kHuge;
      void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
      if (huge_pages) madvise(p, bytes_, MADV_HUGEPAGE);
#endif
      data_ = static_cast<Index*>(p);
      mapped_ = true;
    } else {
      data_ = new Index[static_cast<size_t>(count)];
      mapped_ = false;
    }
  }
  void swap(StackBuffer& o) {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    std::swap(mapped_, o.mapped_);
  }

 private:
  static constexpr size_t kHuge = size_t{2} << 20;
  void release() {
    if (!data_) return;
    if (mapped_) munmap(data_, bytes_);
    else delete[] data_;
    data_ = nullptr;
  }
  Index* data_ = nullptr;
  size_t bytes_ = 0;
  bool mapped_ = false;
};

/// Supplies the slots below a LocalStack's base when they are known up front
/// (the cpu backend's incoming stack): writes depths [first, last) — depth k
/// is the slot at origin[-k] — and is called with consecutive ranges.
template <typename Index>
class FillSource {
 public:
  virtual void fill(Index* origin, int64_t first, int64_t last) = 0;

 protected:
  ~FillSource() = default;
};

/// A stack addressed relative to its base (position 0 = the slot read by the
/// first element); positions below 0 hold fill values, positions above the
/// highest slot ever written hold -1, both written on demand one block ahead.
/// So every addressable slot holds either a fill value or an element index
/// written earlier — which lets resolveRange find a block's lowest and
/// highest stack positions afterwards instead of tracking them per element.
template <typename Index>
class LocalStack {
 public:
  /// `placeholders`: fill with -(k+2) for k slots below the base, else -1.
  /// With a `source`, the slots below the base come from it instead.
  void reset(bool placeholders, int64_t expected_depth, FillSource<Index>* source = nullptr) {
    placeholders_ = placeholders;
    source_ = source;
    int64_t want = std::max<int64_t>(4 * kBlock, 2 * expected_depth + 4 * kBlock);
    if (capacity_ < want) {
      data_.allocate(want);
      capacity_ = want;
    }
    base_ = capacity_ / 2;
    floor_ = 0;
    ceil_ = 1;
    if (source_) source_->fill(data_.get() + base_, 0, 1);
    else data_[base_] = fill(0);
  }

  /// Makes positions [sp - count - 1, sp + count + 3) addressable and fills
  /// the ones not yet filled. Returns the pointer to position 0.
  Index* ensure(int64_t sp, int64_t count) {
    int64_t low = sp - count - 1;
    int64_t high = sp + count + 3;
    if (base_ + low < 0 || base_ + high > capacity_) grow(low, high);
    Index* origin = data_.get() + base_;
    if (low < floor_) {
      if (source_) source_->fill(origin, -floor_ + 1, -low + 1);
      else if (placeholders_) for (int64_t p = low; p < floor_; ++p) origin[p] = static_cast<Index>(p - 2);
      else std::fill(origin + low, origin + floor_, static_cast<Index>(-1));
    }
    if (high > ceil_) std::fill(origin + ceil_, origin + high, static_cast<Index>(-1));
    floor_ = std::min(floor_, low);
    ceil_ = std::max(ceil_, high);
    return origin;
  }

  Index* origin() { return data_.get() + base_; }

 private:
  Index fill(int64_t position) const {
    return placeholders_ ? static_cast<Index>(position - 2) : static_cast<Index>(-1);
  }

  void grow(int64_t low, int64_t high) {
    // Keep the filled range [floor_, ceil_); leave 1.5x its span of room on
    // both sides so growth is geometric in either direction.
    int64_t old_low = floor_;
    int64_t old_high = ceil_;
    int64_t new_low = std::min(low, old_low);
    int64_t new_high = std::max(high, old_high);
    int64_t span = new_high - new_low;
    int64_t capacity = 4 * span;
    StackBuffer<Index> data;
    data.allocate(capacity);
    int64_t base = -new_low + 3 * span / 2;
    std::memcpy(data.get() + base + old_low, data_.get() + base_ + old_low,
                static_cast<size_t>(old_high - old_low) * sizeof(Index));
    data_.swap(data);
    capacity_ = capacity;
    base_ = base;
  }

  StackBuffer<Index> data_;
  int64_t capacity_ = 0;
  int64_t base_ = 0;
  int64_t floor_ = 0;  // lowest filled position (<= 0)
  int64_t ceil_ = 1;   // one past the highest filled position (>= 1)
  bool placeholders_ = false;
  FillSource<Index>* source_ = nullptr;
};

/// What one resolved range leaves behind (positions relative to its base).
struct RangeSummary {
  int64_t end_sp = 0;     ///< P(end): opens minus closes over the range
  int64_t min_sp = 0;     ///< lowest stack position reached (<= 0): -unmatched closes
  int64_t max_sp = 0;     ///< highest position reached (>= 0)
  int64_t max_local = 0;  ///< max over elements of sp - (running minimum): depth ignoring the incoming stack
  uint64_t unmatchedCloses() const { return static_cast<uint64_t>(-min_sp); }
  uint64_t unmatchedOpens() const { return static_cast<uint64_t>(end_sp - min_sp); }
};

/// Largest sp - (running minimum of sp) over in[begin, end), starting from
/// sp = sp0 with running minimum min0: the stack depth ignoring anything below
/// the range. Input-only rescan for the rare blocks that set a new minimum.
inline int64_t maxLocalDepth(const uint8_t* in, uint64_t begin, uint64_t end,
                             const DeltaTable& table, int64_t sp0, int64_t min0) {
  int64_t sp = sp0, run_min = std::min(min0, sp0), best = sp0 - run_min;
  for (uint64_t i = begin; i < end; ++i) {
    sp += table[in[i]];
    run_min = std::min(run_min, sp);
    best = std::max(best, sp - run_min);
  }
  return best;
}

/// Eight equal brackets in a row, the shape of deep nesting, resolved with
/// vector stores instead of eight trips through the stack loop, with exactly
/// its results: the same out values and the same stack slots written (the
/// block summary below reads the slots). In the loop every element of
/// `((((` loads the slot the element before it has just stored, and `))))`
/// adds a stack load per element; deep input ran at 0.77x random.
template <typename Index>
struct BracketRuns {
  uint64_t opens8 = 0, closes8 = 0;  ///< the 8-byte words of eight opens / eight closes
  bool enabled = false;

  explicit BracketRuns(const DeltaTable& table) {
    int open = -1, close = -1, opens = 0, closes = 0;
    for (int c = 0; c < 256; ++c) {
      if (table[c] == 1) open = c, ++opens;
      if (table[c] == -1) close = c, ++closes;
    }
    enabled = opens == 1 && closes == 1;  // (the loop reads words only on little-endian targets)
    opens8 = static_cast<uint64_t>(open & 0xff) * 0x0101010101010101u;
    closes8 = static_cast<uint64_t>(close & 0xff) * 0x0101010101010101u;
  }

  // 16-byte vectors (GCC/Clang vector extensions), whole-vector arithmetic:
  // lanes set one by one, or wider vectors than the target has, are built
  // on the stack and reloaded, and the reload stalls on the narrow stores.
  typedef Index V __attribute__((vector_size(16)));
  static constexpr int kLanes = 16 / sizeof(Index);
  static constexpr int kParts = 8 / kLanes;

  /// Elements i..i+7 are opens: element k reads slot top+k (for k >= 1 the
  /// previous element's index) and writes slot top+k+1 = i+k.
  static Index* pushEight(Index* top, Index* out, Index i) {
    const Index below = *top;
    V lane{};
    for (int k = 0; k < kLanes; ++k) lane[k] = static_cast<Index>(k);  // constant-folded
    const V first = lane + i;
    for (int q = 0; q < kParts; ++q) {
      const V written = first + static_cast<Index>(q * kLanes);
      const V seen = written - 1;
      std::memcpy(top + 1 + q * kLanes, &written, 16);
      std::memcpy(out + q * kLanes, &seen, 16);
    }
    out[0] = below;
    return top + 8;
  }
  /// The lanes of v in reverse order.
  static V reversed(V v) {
#if defined(__clang__)
    if constexpr (kLanes == 4) return __builtin_shufflevector(v, v, 3, 2, 1, 0);
    else return __builtin_shufflevector(v, v, 1, 0);
#else
    V reverse{};
    for (int k = 0; k < kLanes; ++k) reverse[k] = static_cast<Index>(kLanes - 1 - k);  // constant-folded
    return __builtin_shuffle(v, reverse);
#endif
  }
  /// Elements i..i+7 are closes: element k reads slot top-k and writes slot
  /// top-k+1 = i+k (above the new top: overwritten before it is read again).
  static Index* popEight(Index* top, Index* out, Index i) {
    V lane{};
    for (int k = 0; k < kLanes; ++k) lane[k] = static_cast<Index>(k);  // constant-folded
    V slots[kParts];  // slots top-7 .. top, ascending
    std::memcpy(slots, top - 7, sizeof(slots));
    for (int q = 0; q < kParts; ++q) {
      // out[i+k] = slot top-k: part q of out is part kParts-1-q of the slots, reversed.
      const V seen = reversed(slots[kParts - 1 - q]);
      std::memcpy(out + q * kLanes, &seen, 16);
      // Slot top-6+k gets i+7-k.
      const V written = static_cast<Index>(i + 7 - q * kLanes) - lane;
      std::memcpy(top - 6 + q * kLanes, &written, 16);
    }
    return top - 8;
  }
};

/// Runs the stack loop over in[begin, end), writing out[begin, end).
/// kStats: also track max_sp (one more max per element); with exact_local
/// also max_local, exact, by rescanning the input of the few blocks that set
/// a new running minimum (elsewhere it is max_sp - running minimum).
/// `flagged` (may be null): receives the start of every block in which an
/// element may have read a slot below the base (a fill value).
/// On return the unmatched opens of the range are stack positions
/// (min_sp, end_sp], bottom first, at stack.origin().
template <typename Index, bool kStats>
RangeSummary resolveRange(const uint8_t* in, uint64_t begin, uint64_t end, const DeltaTable& table,
                          Index* out, LocalStack<Index>& stack, std::vector<uint64_t>* flagged,
                          bool exact_local = true) {
  // Stack-pointer steps in bytes, so `top` moves by a plain add (the
  // compiler folds the table load into it) rather than a scaled lea on the
  // loop-carried dependency; measured the same speed here, where the two
  // stores per element are the limit (~1.6 cycles per element).
  alignas(64) int64_t step[256];
  for (int c = 0; c < 256; ++c) step[c] = table[c] * static_cast<int64_t>(sizeof(Index));
  const int64_t* delta = step;
  int64_t sp = 0;
  int64_t run_min = 0;
  int64_t max_sp = 0;
  int64_t max_local = 0;
  const BracketRuns<Index> runs(table);
  for (uint64_t b = begin; b < end; b += kBlock) {
    uint64_t e = std::min<uint64_t>(end, b + kBlock);
    Index* s = stack.ensure(sp, static_cast<int64_t>(e - b));
    const int64_t start_min = run_min;
    const int64_t start_sp = sp;
    // The stack top is a pointer and the eight input bytes of a group come
    // in one load: per element one table load, one stack load, two stores
    // and one add (the only loop-carried dependency). ~1.4x faster than
    // indexing s[sp] with one byte load per element.
    Index* top = s + sp;
    uint64_t i = b;
    constexpr bool kLittleEndian = std::endian::native == std::endian::little;
    // Eight elements whose input bytes are the word w.
    auto eightSteps = [&](uint64_t w) {
      // Closes walk down a stack that may be far older than the caches
      // (deep nesting): fetch ahead, the hardware does not for this stream.
      __builtin_prefetch(top - 64);
#define PROCGEN_MATCH_STEP(k)                                   \
  {                                                             \
    const int64_t d = delta[(w >> (8 * (k))) & 0xffu];          \
    out[i + (k)] = *top;                                        \
    top[1] = static_cast<Index>(i + (k));                       \
    top = reinterpret_cast<Index*>(reinterpret_cast<char*>(top) + d); \
  }
      PROCGEN_MATCH_STEP(0) PROCGEN_MATCH_STEP(1) PROCGEN_MATCH_STEP(2) PROCGEN_MATCH_STEP(3)
      PROCGEN_MATCH_STEP(4) PROCGEN_MATCH_STEP(5) PROCGEN_MATCH_STEP(6) PROCGEN_MATCH_STEP(7)
#undef PROCGEN_MATCH_STEP
    };
    // 64 elements at a time: when the first eight are a run of one bracket
    // (deep nesting), every group of eight is tested for a run; otherwise
    // none is, so random input pays one test per 64 elements, not per 8
    // (a test per group cost it 5 %).
    for (; kLittleEndian && i + 64 <= e;) {
      uint64_t w;
      std::memcpy(&w, in + i, 8);
      const uint64_t stop = i + 64;
      if (runs.enabled && (w == runs.opens8 || w == runs.closes8)) {
        for (; i < stop; i += 8) {
          std::memcpy(&w, in + i, 8);
          if (w == runs.opens8) top = runs.pushEight(top, out + i, static_cast<Index>(i));
          else if (w == runs.closes8) top = runs.popEight(top, out + i, static_cast<Index>(i));
          else eightSteps(w);
        }
      } else {
        for (; i < stop; i += 8) {
          std::memcpy(&w, in + i, 8);
          eightSteps(w);
        }
      }
    }
    for (; kLittleEndian && i + 8 <= e; i += 8) {
      uint64_t w;
      std::memcpy(&w, in + i, 8);
      eightSteps(w);
    }
    for (; i < e; ++i) {
      const int64_t d = delta[in[i]];
      out[i] = *top;
      top[1] = static_cast<Index>(i);
      top = reinterpret_cast<Index*>(reinterpret_cast<char*>(top) + d);
    }
    sp = top - s;
    // Each level q an element of the block started from wrote slot q+1 with
    // an index >= b; every other slot holds a fill value or an older index
    // (< b). Those levels are contiguous and include start_sp and
    // max(start_sp, sp-1) and min(start_sp, sp+1), so the lowest one is the
    // first q below with slot q < b and the highest is two below the first
    // slot < b above; the final sp may lie one beyond either. Cost: the depth
    // range of the block, not its length.
    const Index mark = static_cast<Index>(b);
    int64_t blk_min = std::min(start_sp, sp + 1);
    while (s[blk_min] >= mark) --blk_min;
    blk_min = std::min(blk_min, sp);
    int64_t blk_max = std::max(start_sp, sp);
    if constexpr (kStats) {
      int64_t p = std::max(start_sp, sp - 1) + 1;
      while (s[p] >= mark) ++p;
      blk_max = std::max(p - 2, sp);
    }
    if (flagged && blk_min <= start_min) flagged->push_back(b);
    if constexpr (kStats) {
      if (blk_min >= start_min)
        max_local = std::max(max_local, blk_max - start_min);
      else if (exact_local)
        max_local = std::max(max_local, maxLocalDepth(in, b, e, table, start_sp, start_min));
    }
    run_min = std::min(run_min, blk_min);
    max_sp = std::max(max_sp, blk_max);
  }
  RangeSummary r;
  r.end_sp = sp;
  r.min_sp = run_min;
  r.max_sp = max_sp;
  r.max_local = max_local;
  return r;
}

}  // namespace procgen::treebox_detail
