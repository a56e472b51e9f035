#include "operator/api/result_display.h"

#include "gtest/gtest.h"

namespace disttrain::api {
namespace {

TEST(ResultDisplayTest, FiguresReadWithFourSignificantDigits) {
  EXPECT_EQ(FormatFigure(0.3738555521875494), "0.3739");
  EXPECT_EQ(FormatFigure(0.84563), "0.8456");
  EXPECT_EQ(FormatFigure(0.25), "0.25") << "no trailing zeros";
  EXPECT_EQ(FormatFigure(12.5), "12.5");
  EXPECT_EQ(FormatFigure(1234.5678), "1235");
  EXPECT_EQ(FormatFigure(0.00001234), "1.234e-05") << "a small loss does not read as zero";
  EXPECT_EQ(FormatFigure(0), "0");
}

}  // namespace
}  // namespace disttrain::api
