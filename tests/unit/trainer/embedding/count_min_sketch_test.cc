// Frequency counts for embedding-row admission: never under the truth, close to it.
#include "trainer/embedding/count_min_sketch.h"

#include <random>
#include <unordered_map>

#include "gtest/gtest.h"

namespace disttrain::trainer::embedding {
namespace {

TEST(CountMinSketchTest, CountsExactlyWithoutCollisions) {
  CountMinSketch sketch(1 << 12);
  EXPECT_EQ(sketch.Estimate(42), 0u);
  EXPECT_EQ(sketch.Add(42), 1u);
  EXPECT_EQ(sketch.Add(42), 2u);
  EXPECT_EQ(sketch.Add(43), 1u);
  EXPECT_EQ(sketch.Estimate(42), 2u);
  sketch.Clear();
  EXPECT_EQ(sketch.Estimate(42), 0u);
}

TEST(CountMinSketchTest, NeverUndercountsAndRarelyOvercounts) {
  CountMinSketch sketch(1 << 12);
  std::unordered_map<uint64_t, uint32_t> truth;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t id = rng() % 2000;
    ++truth[id];
    sketch.Add(id);
  }
  int over = 0;
  for (const auto& [id, n] : truth) {
    ASSERT_GE(sketch.Estimate(id), n) << id;
    if (sketch.Estimate(id) > n) ++over;
  }
  // 10 sightings each of 2,000 ids in 4 x 4,096 counters: a collision on all four rows at once
  // is rare (measured: 23 ids over, 1.2%).
  EXPECT_LT(over, 60) << "of 2,000 ids";
}

TEST(CountMinSketchTest, Saturates) {
  CountMinSketch sketch(16);
  for (int i = 0; i < 70000; ++i) sketch.Add(5);
  EXPECT_EQ(sketch.Estimate(5), 65535u);
}

}  // namespace
}  // namespace disttrain::trainer::embedding
