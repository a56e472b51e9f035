// The synthetic Criteo-shaped data: the same row everywhere, Criteo's shape and click rate, and
// values skewed as real categorical data is.
#include "trainer/data/synthetic_criteo.h"

#include <map>

#include "gtest/gtest.h"
#include "trainer/data/example_source.h"
#include "trainer/data/schema.h"

namespace disttrain::trainer {
namespace {

TEST(SyntheticCriteoTest, ARowIsAFunctionOfItsIndexAlone) {
  Example a, b, c;
  SyntheticCriteoRow(1, 12345, &a);
  SyntheticCriteoRow(1, 12345, &b);
  SyntheticCriteoRow(1, 12346, &c);
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(a.dense, b.dense);
  EXPECT_EQ(a.label, b.label);
  EXPECT_NE(a.ids, c.ids);
  EXPECT_EQ(a.ids.size(), 26u);
  EXPECT_EQ(a.dense.size(), 13u);
  EXPECT_EQ(a.ends.back(), 26u);
}

TEST(SyntheticCriteoTest, ClicksAndValuesLookLikeCriteos) {
  Example e;
  double clicks = 0;
  std::map<uint64_t, int> c3;  // a column of 10 M distinct values
  std::map<uint64_t, int> c9;  // and one of 3
  const int n = 20000;
  for (int r = 0; r < n; ++r) {
    SyntheticCriteoRow(7, r, &e);
    clicks += e.label;
    ++c3[e.ids[2]];
    ++c9[e.ids[8]];
  }
  EXPECT_GT(clicks / n, 0.18);
  EXPECT_LT(clicks / n, 0.36);
  EXPECT_LE(c9.size(), 3u);
  int top = 0;
  for (const auto& [id, count] : c3) top = std::max(top, count);
  EXPECT_GT(top, n / 100) << "Zipf: the most frequent value of 10 M is seen far more than 1/10M";
  EXPECT_GT(c3.size(), 2000u) << "and the tail is long";
}

TEST(SyntheticCriteoTest, TheTestSplitIsApartFromTraining) {
  Schema s = SyntheticCriteoSchema(8, 1000);
  SourceOptions test;
  test.test = true;
  absl::StatusOr<std::unique_ptr<ExampleSource>> t = ExampleSource::Open(s, test);
  ASSERT_TRUE(t.ok());
  std::vector<std::vector<uint64_t>> held;
  Example e;
  while (*(*t)->Next(&e)) held.push_back(e.ids);
  EXPECT_GT(held.size(), 60u);
  EXPECT_LT(held.size(), 140u);
  SourceOptions train;
  train.part = 0;
  train.parts = 2;
  absl::StatusOr<std::unique_ptr<ExampleSource>> tr = ExampleSource::Open(s, train);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(*(*tr)->Next(&e));
    for (const auto& h : held) ASSERT_NE(h, e.ids) << "a test row in training";
  }
}

}  // namespace
}  // namespace disttrain::trainer
