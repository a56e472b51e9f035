#include "operator/progress/estimate.h"

#include "gtest/gtest.h"

namespace disttrain::progress {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

TrainerReading Reading(absl::Duration at, int64_t step, std::optional<int64_t> target = 2000,
                       std::optional<double> examples = 64) {
  return {kT0 + at, step, target, examples};
}

TEST(EstimateTest, TheFirstReadingHasTheStepAndPercentButNoRate) {
  api::JobProgress p = EstimateProgress(Reading(absl::Milliseconds(300), 500), std::nullopt);
  EXPECT_EQ(p.global_step, 500);
  EXPECT_EQ(p.Percent(), 25);
  EXPECT_EQ(p.observe_time, kT0) << "whole seconds, as the API stores them";
  EXPECT_FALSE(p.steps_per_second.has_value());
  EXPECT_FALSE(p.estimated_completion_time.has_value());
}

TEST(EstimateTest, RatesAndCompletionFromTwoReadings) {
  api::JobProgress p =
      EstimateProgress(Reading(absl::Seconds(30), 1100), Reading(absl::ZeroDuration(), 500));
  EXPECT_DOUBLE_EQ(*p.steps_per_second, 20);
  EXPECT_DOUBLE_EQ(*p.examples_per_second, 1280);
  // 900 steps left at 20 steps/s.
  EXPECT_EQ(*p.estimated_completion_time, kT0 + absl::Seconds(30 + 45));
}

TEST(EstimateTest, NoCompletionWithoutATargetOrWhileStalled) {
  api::JobProgress no_target = EstimateProgress(Reading(absl::Seconds(30), 1100, std::nullopt),
                                                Reading(absl::ZeroDuration(), 500, std::nullopt));
  EXPECT_DOUBLE_EQ(*no_target.steps_per_second, 20);
  EXPECT_FALSE(no_target.estimated_completion_time.has_value());
  EXPECT_FALSE(no_target.Percent().has_value());
  api::JobProgress stalled =
      EstimateProgress(Reading(absl::Seconds(30), 500), Reading(absl::ZeroDuration(), 500));
  EXPECT_DOUBLE_EQ(*stalled.steps_per_second, 0);
  EXPECT_FALSE(stalled.estimated_completion_time.has_value());
}

TEST(EstimateTest, AStepThatWentBackOrReadingsTooCloseGiveNoRate) {
  EXPECT_FALSE(EstimateProgress(Reading(absl::Seconds(30), 400), Reading(absl::ZeroDuration(), 500))
                   .steps_per_second.has_value())
      << "restored from an older checkpoint";
  EXPECT_FALSE(
      EstimateProgress(Reading(absl::Milliseconds(500), 600), Reading(absl::ZeroDuration(), 500))
          .steps_per_second.has_value());
}

TEST(EstimateTest, AtTheTargetTheCompletionIsNow) {
  api::JobProgress p =
      EstimateProgress(Reading(absl::Seconds(10), 2000), Reading(absl::ZeroDuration(), 1900));
  EXPECT_EQ(p.Percent(), 100);
  EXPECT_EQ(*p.estimated_completion_time, kT0 + absl::Seconds(10));
}

TEST(EstimateTest, AFinishedJobKeepsItsFinalStepAndNoRate) {
  api::JobProgress running =
      EstimateProgress(Reading(absl::Seconds(30), 1900), Reading(absl::ZeroDuration(), 1300));
  api::JobProgress done = FinishProgress(running, 2000);
  EXPECT_EQ(done.global_step, 2000);
  EXPECT_EQ(done.Percent(), 100);
  EXPECT_FALSE(done.steps_per_second.has_value());
  EXPECT_FALSE(done.examples_per_second.has_value());
  EXPECT_FALSE(done.estimated_completion_time.has_value());
  EXPECT_EQ(FinishProgress(running, std::nullopt).global_step, 1900) << "failed: the last read";
  EXPECT_EQ(FinishProgress(done, 2000), done);
}

}  // namespace
}  // namespace disttrain::progress
