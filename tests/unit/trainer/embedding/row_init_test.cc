// A new row's initial values depend on the table's seed and the id alone.
#include "trainer/embedding/row_init.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace disttrain::trainer::embedding {
namespace {

TEST(RowInitTest, TheSameSeedAndIdGiveTheSameRowAnywhere) {
  std::vector<float> a(16), b(16), c(16), d(16);
  InitialRow(7, 12345, 16, 0.1f, a.data());
  InitialRow(7, 12345, 16, 0.1f, b.data());
  InitialRow(7, 12346, 16, 0.1f, c.data());
  InitialRow(8, 12345, 16, 0.1f, d.data());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c) << "another id";
  EXPECT_NE(a, d) << "another seed";
}

TEST(RowInitTest, EveryBitOfTheIdCounts) {
  // Hashed string features use all 64 bits: ids that differ only in their high bits are different
  // rows and must not start alike.
  std::vector<float> low(8), high(8);
  for (int bit = 16; bit < 64; bit += 8) {
    InitialRow(7, 12345, 8, 0.1f, low.data());
    InitialRow(7, 12345 | (uint64_t{1} << bit), 8, 0.1f, high.data());
    EXPECT_NE(low, high) << "bit " << bit;
  }
}

TEST(RowInitTest, ValuesAreUniformWithTheAskedDeviation) {
  const float stddev = 0.05f;
  double sum = 0, sq = 0;
  int n = 0;
  std::vector<float> row(8);
  for (uint64_t id = 0; id < 20000; ++id) {
    InitialRow(1, id, 8, stddev, row.data());
    for (float v : row) {
      ASSERT_LE(std::fabs(v), stddev * std::sqrt(3.0f));
      sum += v;
      sq += v * v;
      ++n;
    }
  }
  EXPECT_NEAR(sum / n, 0.0, 0.001);
  EXPECT_NEAR(std::sqrt(sq / n), stddev, 0.001);
}

TEST(RowInitTest, ZeroDeviationGivesZeros) {
  std::vector<float> row(4, 9.0f);
  InitialRow(1, 2, 4, 0, row.data());
  EXPECT_EQ(row, std::vector<float>(4, 0.0f));
}

}  // namespace
}  // namespace disttrain::trainer::embedding
