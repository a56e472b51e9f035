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

TEST(ResultDisplayTest, ProgressReadsAsPercentAndSteps) {
  EXPECT_EQ(FormatProgress({.global_step = 1200, .target_steps = 2000}), "60% (1200/2000)");
  EXPECT_EQ(FormatProgress({.global_step = 1999, .target_steps = 2000}), "99% (1999/2000)")
      << "whole percent, rounded down: 100% only once done";
  EXPECT_EQ(FormatProgress({.global_step = 2100, .target_steps = 2000}), "100% (2100/2000)");
  EXPECT_EQ(FormatProgress({.global_step = 1200}), "step 1200");
}

TEST(ResultDisplayTest, RemainingReadsLikeKubectlAges) {
  EXPECT_EQ(FormatRemaining(absl::Seconds(45)), "45s");
  EXPECT_EQ(FormatRemaining(absl::Seconds(250)), "4m10s");
  EXPECT_EQ(FormatRemaining(absl::Minutes(4)), "4m");
  EXPECT_EQ(FormatRemaining(absl::Minutes(125)), "2h5m");
  EXPECT_EQ(FormatRemaining(absl::Hours(76)), "3d4h");
  EXPECT_EQ(FormatRemaining(absl::Hours(48)), "2d");
  EXPECT_EQ(FormatRemaining(absl::Seconds(-3)), "0s") << "overdue";
}

}  // namespace
}  // namespace disttrain::api
