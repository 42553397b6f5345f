// Stable radix sort over chunks, written once for the serial twin (one chunk)
// and the cpu twin (CpuExecutor chunks and buckets run in parallel).
//
// 8-bit digits. One counting read gives every digit's histogram; digits on
// which every key agrees (one bucket holds all n) are skipped. The first pass
// splits on the highest varying digit — a stable MSD pass written as the
// textbook parallel LSD pass (Satish, Harris, Garland, "Designing efficient
// sorting algorithms for manycore GPUs", IPDPS 2009, §4): (1) every chunk
// counts its digits, (2) an exclusive scan of the counts in digit-major,
// chunk-minor order gives every (digit, chunk) pair its first output
// position, (3) every chunk scatters its elements in order to those
// positions; step (2) in that order is what makes the pass stable. Then each
// bucket is sorted on its own by the lower digits: split again while it is
// larger than kMsdAbove, else stable LSD passes that run from cache, ping-
// ponging between the keys array and the scratch. Stable passes compose into
// a stable sort. O(n * passes) work; the result is unique (stable), so every
// backend and thread count gives the same output.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/large_buffer.hpp"
#include "primitives/primitives.hpp"

namespace procgen::primitives::impl {

inline constexpr int kRadixBits = 8;
inline constexpr int kRadixBuckets = 1 << kRadixBits;

template <typename K>
OverwriteVector<K>& scratchKeys(RadixScratch& s);
template <>
inline OverwriteVector<uint32_t>& scratchKeys<uint32_t>(RadixScratch& s) {
  return s.keys32;
}
template <>
inline OverwriteVector<uint64_t>& scratchKeys<uint64_t>(RadixScratch& s) {
  return s.keys64;
}

/// One chunk's stable scatter of one pass: src[b..e) to dst at start[digit]++.
/// A plain scatter: write-combining buffers per bucket (a cache line each,
/// copied out when full) and 11-bit digits measured slower here (probes on
/// 10^7 uniform 64-bit keys with values; docs/performance.md).
template <typename K, bool kValues>
void scatterChunk(const K* src_k, const uint32_t* src_v, K* dst_k, uint32_t* dst_v, uint64_t b, uint64_t e,
                  int shift, const uint64_t* start) {
  constexpr uint64_t kMask = kRadixBuckets - 1;
  uint64_t off[kRadixBuckets];
  std::memcpy(off, start, sizeof(off));
  for (uint64_t i = b; i < e; ++i) {
    const K k = src_k[i];
    const uint64_t to = off[(k >> shift) & kMask]++;
    dst_k[to] = k;
    if (kValues) dst_v[to] = src_v[i];
  }
}

/// Digit counts of keys[b..e) for digits 0..kPasses-1: cc[p * 256 + d].
template <typename K>
void countDigits(const K* keys, uint64_t b, uint64_t e, uint64_t* cc) {
  constexpr int kPasses = static_cast<int>(sizeof(K)) * 8 / kRadixBits;
  constexpr uint64_t kMask = kRadixBuckets - 1;
  std::fill(cc, cc + kPasses * kRadixBuckets, 0);
  for (uint64_t i = b; i < e; ++i) {
    const K k = keys[i];
    for (int p = 0; p < kPasses; ++p) ++cc[p * kRadixBuckets + ((k >> (p * kRadixBits)) & kMask)];
  }
}

/// The bits on which keys[b..e) differ: (AND of all) XOR (OR of all). A digit
/// with none of them set is shared by every key and needs no pass. Two
/// operations per key where a histogram of every digit takes one increment
/// per digit.
template <typename K>
K differingBits(const K* keys, uint64_t b, uint64_t e) {
  K all = ~K{0}, any = 0;
  for (uint64_t i = b; i < e; ++i) {
    all &= keys[i];
    any |= keys[i];
  }
  return all ^ any;
}

/// Digits 0..top on which some of the keys differ, ascending; returns how many.
template <typename K>
int activeDigits(K differ, int top, int* active) {
  int count = 0;
  for (int p = 0; p <= top; ++p)
    if ((differ >> (p * kRadixBits)) & (kRadixBuckets - 1)) active[count++] = p;
  return count;
}

/// Ranges below this many elements are LSD-sorted in place of another MSD
/// split: a few hundred KiB per buffer, so their passes run from cache.
inline constexpr uint64_t kMsdAbove = uint64_t{1} << 16;
/// Ranges up to this size are insertion-sorted (stable).
inline constexpr uint64_t kInsertionUpTo = 24;

/// Sorts the m elements at data (keys dk, values dv) by digits 0..top, stably,
/// leaving them in the caller's keys array: that is data when data_in_keys,
/// else other (ok, ov), the same range of the other buffer, which is also the
/// ping-pong space. Digits all m keys share are skipped; a range of more than
/// kMsdAbove elements is first split on its highest varying digit (a stable
/// MSD pass) and its buckets sorted the same way, so the LSD passes that
/// follow run on cache-sized ranges.
template <typename K, bool kValues>
void sortRange(K* dk, uint32_t* dv, K* ok, uint32_t* ov, bool data_in_keys, uint64_t m, int top) {
  constexpr int kPasses = static_cast<int>(sizeof(K)) * 8 / kRadixBits;
  auto finish = [&](K* rk, uint32_t* rv, bool in_keys) {  // result at rk: make sure it is in keys
    if (in_keys) return;
    K* tk = rk == dk ? ok : dk;
    uint32_t* tv = rk == dk ? ov : dv;
    std::memcpy(tk, rk, m * sizeof(K));
    if (kValues) std::memcpy(tv, rv, m * sizeof(uint32_t));
  };
  if (m <= kInsertionUpTo) {
    for (uint64_t i = 1; i < m; ++i) {
      const K k = dk[i];
      const uint32_t v = kValues ? dv[i] : 0;
      uint64_t j = i;
      for (; j > 0 && dk[j - 1] > k; --j) {
        dk[j] = dk[j - 1];
        if (kValues) dv[j] = dv[j - 1];
      }
      dk[j] = k;
      if (kValues) dv[j] = v;
    }
    finish(dk, dv, data_in_keys);
    return;
  }
  uint64_t start[kRadixBuckets];
  int active[kPasses];
  if (m > kMsdAbove) {
    // An MSD split needs only its digit's counts: find the digit from the
    // bits the keys differ in rather than from a histogram of every digit.
    const int active_count = activeDigits(differingBits(dk, 0, m), top, active);
    if (active_count == 0) {
      finish(dk, dv, data_in_keys);
      return;
    }
    const int p = active[active_count - 1];
    if (active_count > 1) {
      uint64_t c[kRadixBuckets] = {};
      for (uint64_t i = 0; i < m; ++i) ++c[(dk[i] >> (p * kRadixBits)) & (kRadixBuckets - 1)];
      uint64_t at = 0;
      for (int d = 0; d < kRadixBuckets; ++d) {
        start[d] = at;
        at += c[d];
      }
      scatterChunk<K, kValues>(dk, dv, ok, ov, 0, m, p * kRadixBits, start);
      for (int d = 0; d < kRadixBuckets; ++d) {
        const uint64_t b = start[d];
        if (c[d] == 0) continue;
        sortRange<K, kValues>(ok + b, kValues ? ov + b : nullptr, dk + b, kValues ? dv + b : nullptr,
                              !data_in_keys, c[d], p - 1);
      }
      return;
    }
  }
  // LSD passes on a cache-sized range: one histogram of every digit (a fixed,
  // unrolled loop), digits held by all m keys skipped.
  uint64_t cc[kPasses * kRadixBuckets];
  countDigits(dk, 0, m, cc);
  int active_count = 0;
  for (int p = 0; p <= top; ++p) {
    const uint64_t* c = cc + p * kRadixBuckets;
    if (std::find(c, c + kRadixBuckets, m) == c + kRadixBuckets) active[active_count++] = p;
  }
  K* sk = dk;
  K* tk = ok;
  uint32_t* sv = dv;
  uint32_t* tv = ov;
  bool in_keys = data_in_keys;
  for (int j = 0; j < active_count; ++j) {
    const int p = active[j];
    uint64_t at = 0;
    for (int d = 0; d < kRadixBuckets; ++d) {
      start[d] = at;
      at += cc[p * kRadixBuckets + d];
    }
    scatterChunk<K, kValues>(sk, sv, tk, tv, 0, m, p * kRadixBits, start);
    std::swap(sk, tk);
    std::swap(sv, tv);
    in_keys = !in_keys;
  }
  finish(sk, sv, in_keys);
}

/// The whole sort. `plan` has count, begin(c), end(c) over [0, n);
/// forEach(plan, body) runs body(c) for every chunk and forIndex(count, body)
/// body(i) for i in [0, count), in any order, possibly in parallel.
/// One chunk: sortRange over everything. Several: the first MSD split runs
/// chunked (per-chunk counts, digit-major offsets, stable scatter, as in the
/// textbook parallel LSD pass), then the 256 buckets are sorted in parallel.
template <typename K, bool kValues, typename Plan, typename ForEach, typename ForIndex>
void radixSortChunks(const Plan& plan, ForEach&& forEach, ForIndex&& forIndex, K* keys, uint32_t* values, uint64_t n,
                     RadixScratch& scratch) {
  constexpr int kPasses = static_cast<int>(sizeof(K)) * 8 / kRadixBits;
  OverwriteVector<K>& key_tmp = scratchKeys<K>(scratch);
  procgen::detail::resizeForOverwrite(key_tmp, n);
  if (kValues) procgen::detail::resizeForOverwrite(scratch.values, n);
  K* tmp_k = key_tmp.data();
  uint32_t* tmp_v = kValues ? scratch.values.data() : nullptr;
  const uint64_t chunks = plan.count;
  if (chunks <= 1) {
    sortRange<K, kValues>(keys, values, tmp_k, tmp_v, true, n, kPasses - 1);
    return;
  }
  // The highest digit on which keys differ, from per-chunk AND / OR; then
  // per-chunk counts of that digit alone.
  std::vector<uint64_t>& counts = scratch.counts;  // [c * 256 + d]
  counts.resize(chunks * kRadixBuckets);
  std::vector<K> chunk_differ(chunks);
  forEach(plan, [&](uint64_t c) { chunk_differ[c] = differingBits(keys, plan.begin(c), plan.end(c)); });
  K all = ~K{0}, any = 0, differ = 0;
  for (uint64_t c = 0; c < chunks; ++c) {  // differ of the union: within a chunk, or between chunks
    differ |= chunk_differ[c];
    all &= keys[plan.begin(c)];
    any |= keys[plan.begin(c)];
  }
  differ |= all ^ any;
  int active[kPasses];
  const int active_count = activeDigits(differ, kPasses - 1, active);
  if (active_count == 0) return;
  const int top = active[active_count - 1];
  forEach(plan, [&](uint64_t c) {
    uint64_t* cc = counts.data() + c * kRadixBuckets;
    std::fill(cc, cc + kRadixBuckets, 0);
    for (uint64_t i = plan.begin(c), e = plan.end(c); i < e; ++i)
      ++cc[(keys[i] >> (top * kRadixBits)) & (kRadixBuckets - 1)];
  });
  std::vector<uint64_t> offsets(chunks * kRadixBuckets);
  uint64_t bucket_start[kRadixBuckets + 1];
  uint64_t at = 0;
  for (int d = 0; d < kRadixBuckets; ++d) {
    bucket_start[d] = at;
    for (uint64_t c = 0; c < chunks; ++c) {
      offsets[c * kRadixBuckets + d] = at;
      at += counts[c * kRadixBuckets + d];
    }
  }
  bucket_start[kRadixBuckets] = at;
  forEach(plan, [&](uint64_t c) {
    scatterChunk<K, kValues>(keys, values, tmp_k, tmp_v, plan.begin(c), plan.end(c), top * kRadixBits,
                             offsets.data() + c * kRadixBuckets);
  });
  forIndex(kRadixBuckets, [&](uint64_t d) {
    const uint64_t b = bucket_start[d], m = bucket_start[d + 1] - b;
    if (m == 0) return;
    sortRange<K, kValues>(tmp_k + b, kValues ? tmp_v + b : nullptr, keys + b, kValues ? values + b : nullptr, false,
                          m, top - 1);
  });
}

/// radixSortChunks with the values / key-only choice made at run time.
template <typename K, typename Plan, typename ForEach, typename ForIndex>
void radixSortAny(const Plan& plan, ForEach&& forEach, ForIndex&& forIndex, K* keys, uint32_t* values, uint64_t n,
                  RadixScratch& scratch) {
  if (n < 2) return;
  if (values)
    radixSortChunks<K, true>(plan, forEach, forIndex, keys, values, n, scratch);
  else
    radixSortChunks<K, false>(plan, forEach, forIndex, keys, values, n, scratch);
}

}  // namespace procgen::primitives::impl
