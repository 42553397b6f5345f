// Philox4x32-10 known-answer vectors (Random123's kat_vectors) and the
// properties procgen relies on: draws depend only on (seed, phase, position, draw).
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "common/random.h"

namespace {

std::array<uint32_t, 4> philox(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  philox4x32_ctr_t ctr = {{c[0], c[1], c[2], c[3]}};
  philox4x32_key_t key = {{k[0], k[1]}};
  philox4x32_ctr_t r = philox4x32(ctr, key);
  return {r.v[0], r.v[1], r.v[2], r.v[3]};
}

TEST(Philox, KnownAnswerZero) {
  auto r = philox({0, 0, 0, 0}, {0, 0});
  EXPECT_EQ(r, (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
}

TEST(Philox, KnownAnswerPi) {
  auto r = philox({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u});
  EXPECT_EQ(r, (std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(Uniform, InUnitIntervalAndRoughlyUniform) {
  constexpr int kN = 100000;
  int buckets[10] = {};
  for (int i = 0; i < kN; ++i) {
    float u = pgUniformAt(42, 7, static_cast<uint64_t>(i), 0);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    buckets[static_cast<int>(u * 10)]++;
  }
  for (int b : buckets) EXPECT_NEAR(b, kN / 10, 5 * std::sqrt(kN / 10.0));  // 5 sigma
}

TEST(Uniform, StreamIsAPureFunctionOfItsKey) {
  PgRandomStream a{5, 1000, 3, 0};
  float first = pgNextUniform(&a);
  float second = pgNextUniform(&a);
  EXPECT_EQ(first, pgUniformAt(5, 3, 1000, 0));
  EXPECT_EQ(second, pgUniformAt(5, 3, 1000, 1));
  EXPECT_NE(pgUniformAt(5, 3, 1000, 0), pgUniformAt(6, 3, 1000, 0));
  EXPECT_NE(pgUniformAt(5, 3, 1000, 0), pgUniformAt(5, 4, 1000, 0));
  EXPECT_NE(pgUniformAt(5, 3, 1000, 0), pgUniformAt(5, 3, 1001, 0));
}

}  // namespace
