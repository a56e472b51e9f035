#include "operator/api/quantity.h"

#include <string>

#include "gtest/gtest.h"

namespace disttrain::api {
namespace {

struct Case {
  std::string text;
  int64_t milli;
};

class QuantityTest : public ::testing::TestWithParam<Case> {};

TEST_P(QuantityTest, ParsesToMilliUnits) {
  absl::StatusOr<int64_t> v = ParseMilliQuantity(GetParam().text);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, GetParam().milli);
}

INSTANTIATE_TEST_SUITE_P(All, QuantityTest,
                         ::testing::Values(Case{"2", 2000}, Case{"500m", 500}, Case{"0.5", 500},
                                           Case{"1.5Gi", (int64_t{3} << 29) * 1000},
                                           Case{"1Ki", 1024000}, Case{"1k", 1000000},
                                           Case{"1e3", 1000000}, Case{"1M", 1000000000},
                                           Case{"0.1m", 1} /* rounds up */, Case{"8", 8000}));

TEST(QuantityTest, RejectsText) {
  for (const char* bad : {"", "abc", "1Q", "Gi", "1.2.3", "--1"}) {
    EXPECT_FALSE(ParseMilliQuantity(bad).ok()) << bad;
  }
}

TEST(QuantityTest, FormatsCanonically) {
  EXPECT_EQ(FormatMilliQuantity(250), "250m");
  EXPECT_EQ(FormatMilliQuantity(4000), "4");
  EXPECT_EQ(FormatMilliQuantity((int64_t{16} << 30) * 1000), "16Gi");
  EXPECT_EQ(FormatMilliQuantity((int64_t{1536} << 20) * 1000), "1536Mi");
  EXPECT_EQ(FormatMilliQuantity(0), "0");
}

}  // namespace
}  // namespace disttrain::api
