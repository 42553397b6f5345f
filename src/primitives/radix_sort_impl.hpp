// Stable LSD radix sort over chunks, written once for the serial twin (one
// chunk) and the cpu twin (CpuExecutor chunks run in parallel).
//
// The textbook parallel LSD sort (e.g. Satish, Harris, Garland, "Designing
// efficient sorting algorithms for manycore GPUs", IPDPS 2009, §4): for each
// 8-bit digit, (1) every chunk counts its digits, (2) an exclusive scan of the
// counts in digit-major, chunk-minor order gives every (digit, chunk) pair its
// first output position, (3) every chunk scatters its elements in order to
// those positions. Step (2) in that order is what makes each pass stable, and
// LSD passes over stable passes sort.
//
// The first counting reads the keys once for all digits: its totals show the
// digits on which every key agrees (one bucket holds all n), whose passes are
// skipped; with one chunk the counts stay valid for every pass (they do not
// depend on the order), with several the later passes recount their chunk.
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
std::vector<K>& scratchKeys(RadixScratch& s);
template <>
inline std::vector<uint32_t>& scratchKeys<uint32_t>(RadixScratch& s) {
  return s.keys32;
}
template <>
inline std::vector<uint64_t>& scratchKeys<uint64_t>(RadixScratch& s) {
  return s.keys64;
}

/// `plan` has count, begin(c), end(c) over [0, n); forEach(plan, body) runs
/// body(c) for every chunk (in any order, possibly in parallel).
template <typename K, bool kValues, typename Plan, typename ForEach>
void radixSortChunks(const Plan& plan, ForEach&& forEach, K* keys, uint32_t* values, uint64_t n,
                     RadixScratch& scratch) {
  constexpr int kPasses = static_cast<int>(sizeof(K)) * 8 / kRadixBits;
  constexpr uint64_t kMask = kRadixBuckets - 1;
  const uint64_t chunks = plan.count;
  // counts[(c * kPasses + p) * kRadixBuckets + d]
  std::vector<uint64_t>& counts = scratch.counts;
  counts.assign(chunks * kPasses * kRadixBuckets, 0);
  forEach(plan, [&](uint64_t c) {
    uint64_t* cc = counts.data() + c * kPasses * kRadixBuckets;
    for (uint64_t i = plan.begin(c), e = plan.end(c); i < e; ++i) {
      const K k = keys[i];
      for (int p = 0; p < kPasses; ++p) ++cc[p * kRadixBuckets + ((k >> (p * kRadixBits)) & kMask)];
    }
  });
  // A pass whose digit is the same in every key moves nothing.
  int active[kPasses];
  int active_count = 0;
  for (int p = 0; p < kPasses; ++p) {
    bool constant = false;
    for (int d = 0; d < kRadixBuckets && !constant; ++d) {
      uint64_t total = 0;
      for (uint64_t c = 0; c < chunks; ++c) total += counts[(c * kPasses + p) * kRadixBuckets + d];
      constant = total == n;
    }
    if (!constant) active[active_count++] = p;
  }
  if (active_count == 0) return;

  std::vector<K>& key_tmp = scratchKeys<K>(scratch);
  procgen::detail::resizeForOverwrite(key_tmp, n);
  if (kValues) procgen::detail::resizeForOverwrite(scratch.values, n);
  K* src_k = keys;
  K* dst_k = key_tmp.data();
  uint32_t* src_v = values;
  uint32_t* dst_v = kValues ? scratch.values.data() : nullptr;
  std::vector<uint64_t> offsets(chunks * kRadixBuckets);

  for (int j = 0; j < active_count; ++j) {
    const int p = active[j];
    const int shift = p * kRadixBits;
    if (j > 0 && chunks > 1) {
      // The chunks' digit counts of the order the previous pass left.
      forEach(plan, [&](uint64_t c) {
        uint64_t* cc = counts.data() + (c * kPasses + p) * kRadixBuckets;
        std::fill(cc, cc + kRadixBuckets, 0);
        for (uint64_t i = plan.begin(c), e = plan.end(c); i < e; ++i) ++cc[(src_k[i] >> shift) & kMask];
      });
    }
    uint64_t at = 0;
    for (int d = 0; d < kRadixBuckets; ++d)
      for (uint64_t c = 0; c < chunks; ++c) {
        offsets[c * kRadixBuckets + d] = at;
        at += counts[(c * kPasses + p) * kRadixBuckets + d];
      }
    forEach(plan, [&](uint64_t c) {
      uint64_t off[kRadixBuckets];
      std::memcpy(off, offsets.data() + c * kRadixBuckets, sizeof(off));
      for (uint64_t i = plan.begin(c), e = plan.end(c); i < e; ++i) {
        const K k = src_k[i];
        const uint64_t to = off[(k >> shift) & kMask]++;
        dst_k[to] = k;
        if (kValues) dst_v[to] = src_v[i];
      }
    });
    std::swap(src_k, dst_k);
    if (kValues) std::swap(src_v, dst_v);
  }
  if (src_k != keys) {  // an odd number of passes ran: the result is in the scratch
    forEach(plan, [&](uint64_t c) {
      const uint64_t b = plan.begin(c), len = plan.end(c) - b;
      std::memcpy(keys + b, src_k + b, len * sizeof(K));
      if (kValues) std::memcpy(values + b, src_v + b, len * sizeof(uint32_t));
    });
  }
}

/// radixSortChunks with the values / key-only choice made at run time.
template <typename K, typename Plan, typename ForEach>
void radixSortAny(const Plan& plan, ForEach&& forEach, K* keys, uint32_t* values, uint64_t n,
                  RadixScratch& scratch) {
  if (n < 2) return;
  if (values)
    radixSortChunks<K, true>(plan, forEach, keys, values, n, scratch);
  else
    radixSortChunks<K, false>(plan, forEach, keys, values, n, scratch);
}

}  // namespace procgen::primitives::impl
