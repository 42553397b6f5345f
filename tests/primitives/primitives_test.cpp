// Parity of the primitives (src/primitives/primitives.hpp): one test body per
// primitive, run on every backend — serial, cpu with 1, 2 and 7 threads (the
// 7-thread variant with 997-element chunks so that chunk borders fall
// everywhere), opencl when a device exists — against independent references:
// std::inclusive_scan / std::exclusive_scan, hand-written loops (the affine
// monoid's composition is written out again here, not taken from monoids.h),
// std::copy_if and std::stable_sort. Random inputs of many sizes: 0, 1,
// non-powers of two and sizes either side of the cpu chunk, the OpenCL run
// (64, 256, 1024) and work-group block borders. Outputs are pre-filled with a
// poison value, so an element a backend fails to write differs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/backends.hpp"
#include "primitives/primitives.hpp"
#include "procgen/backend.hpp"

namespace {

namespace pr = procgen::primitives;
using procgen::Backend;

using procgen::test::makeVariant;
using procgen::test::poisoned;
using procgen::test::Variant;

/// The common variants, with 997-element chunks on 7 threads.
std::vector<Variant> primitiveVariants() {
  return {makeVariant(Backend::kSerial, 1), makeVariant(Backend::kCpu, 1), makeVariant(Backend::kCpu, 2),
          makeVariant(Backend::kCpu, 7, 997), makeVariant(Backend::kOpenCL, 1)};
}

const uint64_t kSizes[] = {0,    1,    2,    3,     7,     63,    64,    65,    255,    256,    257,
                           1000, 1023, 1024, 1025,  2047,  2048,  2049,  4097,  10007,  32767,  32768,
                           32769, 65535, 65536, 65537, 131071, 131073, 300007};

template <typename T>
bool sameBytes(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Index of the first difference, or -1.
template <typename T>
int64_t firstDifference(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sameBytes(a[i], b[i])) return static_cast<int64_t>(i);
  return -1;
}

// ---- random inputs ----------------------------------------------------------

template <typename V>
V randomValue(std::mt19937_64& rng);
template <>
uint32_t randomValue<uint32_t>(std::mt19937_64& rng) {
  return static_cast<uint32_t>(rng());
}
template <>
uint64_t randomValue<uint64_t>(std::mt19937_64& rng) {
  return rng();
}
template <>
int64_t randomValue<int64_t>(std::mt19937_64& rng) {
  return static_cast<int64_t>(rng() >> 20) - (int64_t{1} << 43);
}
template <>
PgU64x4 randomValue<PgU64x4>(std::mt19937_64& rng) {
  return {rng() >> 8, rng() >> 8, rng() >> 8, rng() >> 8};
}
template <>
PgAffineU32 randomValue<PgAffineU32>(std::mt19937_64& rng) {
  return {static_cast<uint32_t>(rng()) | 1u, static_cast<uint32_t>(rng())};
}

template <typename V>
std::vector<V> randomValues(uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<V> v(n);
  for (auto& x : v) x = randomValue<V>(rng);
  return v;
}

std::vector<uint8_t> randomFlags(uint64_t n, double p, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution coin(p);
  std::vector<uint8_t> f(n);
  for (auto& x : f) x = coin(rng) ? static_cast<uint8_t>(1 + rng() % 255) : 0;
  return f;
}

// ---- independent reference operations ----------------------------------------

struct PlusRef {
  template <typename V>
  V operator()(V a, V b) const {
    return a + b;
  }
  PgU64x4 operator()(PgU64x4 a, PgU64x4 b) const { return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w}; }
};
/// Apply f, then g: x -> g.a * (f.a * x + f.b) + g.b.
struct ComposeRef {
  PgAffineU32 operator()(PgAffineU32 f, PgAffineU32 g) const {
    return {static_cast<uint32_t>(uint64_t{g.a} * f.a), static_cast<uint32_t>(uint64_t{g.a} * f.b + g.b)};
  }
};

template <typename V, typename Op>
std::vector<V> referenceScan(pr::ScanKind kind, const std::vector<V>& in, const std::vector<uint8_t>* heads, V id,
                             Op op) {
  std::vector<V> out(in.size());
  // Segment by segment, with the standard algorithms.
  size_t b = 0;
  while (b < in.size()) {
    size_t e = heads ? b + 1 : in.size();
    while (heads && e < in.size() && !(*heads)[e]) ++e;
    if (kind == pr::ScanKind::kInclusive)
      std::inclusive_scan(in.begin() + b, in.begin() + e, out.begin() + b, op);
    else
      std::exclusive_scan(in.begin() + b, in.begin() + e, out.begin() + b, id, op);
    b = e;
  }
  return out;
}

// ---- the fixture --------------------------------------------------------------

class Primitives : public procgen::test::BackendTest {
 protected:
  procgen::Execution exec() const { return execution(); }
  procgen::test::CpuChunkScope chunk_{GetParam().chunk};

  /// Every size, both kinds, separate and in-place output, optionally
  /// segmented with heads of density `head_p`.
  template <typename M, typename Op>
  void checkScan(Op op, bool segmented, double head_p = 0.0) {
    using V = typename M::Value;
    for (uint64_t n : kSizes) {
      const std::vector<V> in = randomValues<V>(n, n * 7 + 1);
      const std::vector<uint8_t> heads = randomFlags(n, head_p, n * 7 + 2);
      const uint8_t* h = segmented ? heads.data() : nullptr;
      for (pr::ScanKind kind : {pr::ScanKind::kExclusive, pr::ScanKind::kInclusive}) {
        SCOPED_TRACE(testing::Message() << "n=" << n << (kind == pr::ScanKind::kInclusive ? " inclusive" : " exclusive"));
        const std::vector<V> want = referenceScan(kind, in, segmented ? &heads : nullptr, M::identity(), op);
        std::vector<V> out = poisoned<V>(n);
        pr::scan<M>(exec(), kind, in.data(), h, out.data(), n);
        EXPECT_EQ(firstDifference(out, want), -1);
        std::vector<V> inplace = in;
        pr::scan<M>(exec(), kind, inplace.data(), h, inplace.data(), n);
        EXPECT_EQ(firstDifference(inplace, want), -1) << "in place";
      }
    }
  }
};

TEST_P(Primitives, ScanSumU32MatchesStdScans) { checkScan<pr::SumU32>(PlusRef{}, false); }
TEST_P(Primitives, ScanSumU64MatchesStdScans) { checkScan<pr::SumU64>(PlusRef{}, false); }
TEST_P(Primitives, ScanSumI64MatchesStdScans) { checkScan<pr::SumI64>(PlusRef{}, false); }
TEST_P(Primitives, ScanSumU64x4MatchesStdScans) { checkScan<pr::SumU64x4>(PlusRef{}, false); }
// Non-commutative: any backend that combines out of order fails.
TEST_P(Primitives, ScanAffineCompositionKeepsOrder) { checkScan<pr::AffineU32>(ComposeRef{}, false); }

TEST_P(Primitives, SegmentedScanRestartsAtEveryHead) {
  for (double p : {0.0, 0.001, 0.05, 0.5, 1.0}) {
    SCOPED_TRACE(testing::Message() << "head density " << p);
    checkScan<pr::SumU32>(PlusRef{}, true, p);
    checkScan<pr::AffineU32>(ComposeRef{}, true, p);
  }
}

TEST_P(Primitives, ReduceMatchesHandFold) {
  for (uint64_t n : kSizes) {
    SCOPED_TRACE(testing::Message() << "n=" << n);
    const auto u64 = randomValues<uint64_t>(n, n + 11);
    EXPECT_EQ(pr::reduce<pr::SumU64>(exec(), u64.data(), n), std::accumulate(u64.begin(), u64.end(), uint64_t{0}));
    const auto u32 = randomValues<uint32_t>(n, n + 12);
    const uint32_t max = n ? *std::max_element(u32.begin(), u32.end()) : 0;
    EXPECT_EQ(pr::reduce<pr::MaxU32>(exec(), u32.data(), n), max);
    const auto maps = randomValues<PgAffineU32>(n, n + 13);
    PgAffineU32 fold{1, 0};
    for (const auto& f : maps) fold = ComposeRef{}(fold, f);
    EXPECT_TRUE(sameBytes(pr::reduce<pr::AffineU32>(exec(), maps.data(), n), fold));
    std::vector<PgAndOrU64> bits(n);
    for (uint64_t i = 0; i < n; ++i) bits[i] = {u64[i] | (uint64_t{1} << 63), u64[i] & ~uint64_t{1}};
    PgAndOrU64 bits_fold{~uint64_t{0}, 0};
    for (const auto& b : bits) bits_fold = {bits_fold.all & b.all, bits_fold.any | b.any};
    EXPECT_TRUE(sameBytes(pr::reduce<pr::AndOrU64>(exec(), bits.data(), n), bits_fold));
  }
}

template <typename T>
void checkCompact(const procgen::Execution& exec) {
  for (uint64_t n : kSizes) {
    for (double p : {0.0, 0.01, 0.5, 1.0}) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " density " << p << " bytes " << sizeof(T));
      const auto in = randomValues<uint64_t>(n, n + 21);
      std::vector<T> values(in.begin(), in.end());
      const auto flags = randomFlags(n, p, n + 22);
      std::vector<T> want;
      for (uint64_t i = 0; i < n; ++i)
        if (flags[i]) want.push_back(values[i]);
      std::vector<T> out = poisoned<T>(n);
      const uint64_t kept = pr::compact(exec, values.data(), flags.data(), n, out.data());
      ASSERT_EQ(kept, want.size());
      const std::vector<T> head(out.begin(), out.begin() + static_cast<int64_t>(kept));
      EXPECT_EQ(firstDifference(head, want), -1);
      const T poison = poisoned<T>(1)[0];
      for (uint64_t i = kept; i < n; ++i) ASSERT_EQ(out[i], poison) << "written past the count at " << i;
    }
  }
}

TEST_P(Primitives, CompactKeepsFlaggedInOrderU32) { checkCompact<uint32_t>(exec()); }
TEST_P(Primitives, CompactKeepsFlaggedInOrderU64) { checkCompact<uint64_t>(exec()); }

// ---- radix sort -------------------------------------------------------------

enum class KeyShape { kUniform, kFewDistinct, kMorton30, kHighBitsOnly, kConstant };

template <typename K>
std::vector<K> sortKeys(uint64_t n, KeyShape shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<K> keys(n);
  for (auto& k : keys) {
    const uint64_t r = rng();
    switch (shape) {
      case KeyShape::kUniform: k = static_cast<K>(r); break;
      case KeyShape::kFewDistinct: k = static_cast<K>(r % 5) * static_cast<K>(0x01010101u); break;
      case KeyShape::kMorton30: k = static_cast<K>(r & ((uint64_t{1} << 30) - 1)); break;
      case KeyShape::kHighBitsOnly: k = static_cast<K>(r << (sizeof(K) * 8 - 12)); break;
      case KeyShape::kConstant: k = static_cast<K>(0x5A5A5A5A5A5A5A5Aull); break;
    }
  }
  return keys;
}

const uint64_t kSortSizes[] = {0, 1, 2, 3, 255, 256, 257, 1023, 1024, 1025, 2047, 2049, 5000, 100003, 300007};

template <typename K>
void checkSort(const procgen::Execution& exec) {
  pr::RadixScratch scratch;  // reused across every call, as callers should
  for (uint64_t n : kSortSizes) {
    for (KeyShape shape : {KeyShape::kUniform, KeyShape::kFewDistinct, KeyShape::kMorton30, KeyShape::kHighBitsOnly,
                           KeyShape::kConstant}) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " shape " << static_cast<int>(shape) << " key bytes "
                                      << sizeof(K));
      const std::vector<K> keys = sortKeys<K>(n, shape, n * 31 + static_cast<uint64_t>(shape));
      // Values are the original positions, so stability is checked exactly.
      std::vector<std::pair<K, uint32_t>> ref(n);
      for (uint64_t i = 0; i < n; ++i) ref[i] = {keys[i], static_cast<uint32_t>(i)};
      std::stable_sort(ref.begin(), ref.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      std::vector<K> k = keys;
      std::vector<uint32_t> v(n);
      std::iota(v.begin(), v.end(), 0u);
      pr::radixSort(exec, k.data(), v.data(), n, scratch);
      for (uint64_t i = 0; i < n; ++i) {
        ASSERT_EQ(k[i], ref[i].first) << "key at " << i;
        ASSERT_EQ(v[i], ref[i].second) << "value at " << i;
      }
      std::vector<K> only = keys;
      pr::radixSort(exec, only.data(), nullptr, n, scratch);
      for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(only[i], ref[i].first) << "key-only sort, key at " << i;
    }
  }
}

TEST_P(Primitives, RadixSortU32IsStableSort) { checkSort<uint32_t>(exec()); }
TEST_P(Primitives, RadixSortU64IsStableSort) { checkSort<uint64_t>(exec()); }

INSTANTIATE_TEST_SUITE_P(Backends, Primitives, testing::ValuesIn(primitiveVariants()),
                         procgen::test::variantName);

}  // namespace
