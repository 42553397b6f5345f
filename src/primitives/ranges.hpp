// The per-range loops of the primitives, written once: the serial twin runs
// each over the whole array, the cpu twin over chunks (reduce per chunk, scan
// of the chunk totals, rescan per chunk — the two-pass chunked scan).
#pragma once

#include <cstdint>

#include "primitives/primitives.hpp"

namespace procgen::primitives::impl {

/// A segmented scan's value lifted to a monoid of its own: the combine of
/// everything since the last head, and whether a head occurred. Combining
/// (a, fa) then (b, fb) gives (fb ? b : a ⊕ b, fa | fb) — associative, so the
/// chunk totals of a segmented scan are scanned like any other monoid.
template <typename M>
struct Lifted {
  typename M::Value value;
  bool head;
  static Lifted identity() { return {M::identity(), false}; }
  static Lifted combine(const Lifted& a, const Lifted& b) {
    return {b.head ? b.value : M::combine(a.value, b.value), a.head || b.head};
  }
};

/// Reduction of in[b..e): the lifted total (head = a head in the range; value
/// = combine since the last head, or of the whole range).
template <typename M>
Lifted<M> reduceRange(const typename M::Value* in, const uint8_t* heads, uint64_t b, uint64_t e) {
  typename M::Value acc = M::identity();
  bool head = false;
  if (heads) {
    for (uint64_t i = b; i < e; ++i) {
      if (heads[i]) {
        acc = M::identity();
        head = true;
      }
      acc = M::combine(acc, in[i]);
    }
  } else {
    for (uint64_t i = b; i < e; ++i) acc = M::combine(acc, in[i]);
  }
  return {acc, head};
}

/// Scan of in[b..e) into out[b..e) starting from `carry` (the combine of
/// everything before b in b's segment). in may equal out.
template <typename M>
void scanRange(ScanKind kind, const typename M::Value* in, const uint8_t* heads, typename M::Value* out, uint64_t b,
               uint64_t e, typename M::Value carry) {
  typename M::Value acc = carry;
  const bool inclusive = kind == ScanKind::kInclusive;
  for (uint64_t i = b; i < e; ++i) {
    const typename M::Value x = in[i];
    if (heads && heads[i]) acc = M::identity();
    if (inclusive) {
      acc = M::combine(acc, x);
      out[i] = acc;
    } else {
      out[i] = acc;
      acc = M::combine(acc, x);
    }
  }
}

inline uint64_t countFlags(const uint8_t* flags, uint64_t b, uint64_t e) {
  uint64_t k = 0;
  for (uint64_t i = b; i < e; ++i) k += flags[i] != 0;
  return k;
}

/// Copies the flagged elements of in[b..e) to out[at..); returns the end.
template <typename T>
uint64_t compactRange(const T* in, const uint8_t* flags, uint64_t b, uint64_t e, T* out, uint64_t at) {
  // Writes only flagged elements: an unconditional write would touch out[at]
  // past this chunk's share, which belongs to the next chunk (or past count).
  for (uint64_t i = b; i < e; ++i)
    if (flags[i]) out[at++] = in[i];
  return at;
}

}  // namespace procgen::primitives::impl
