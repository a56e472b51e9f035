#include "operator/progress/trainer_reading.h"

#include "gtest/gtest.h"

namespace disttrain::progress {
namespace {

const absl::Time kAt = absl::FromUnixSeconds(1'800'000'000);

TEST(TrainerReadingTest, ReadsTheTrainersGaugesAndSkipsTheRest) {
  absl::StatusOr<TrainerReading> r = ReadTrainerMetrics(
      "# HELP disttrain_trainer_global_step Global step of the variables last seen.\n"
      "# TYPE disttrain_trainer_global_step gauge\n"
      "disttrain_trainer_global_step 1200\n"
      "disttrain_trainer_global_step_other 5\n"
      "disttrain_trainer_rpc_bytes_total{direction=\"pushed\"} 1e+06\n"
      "disttrain_trainer_target_steps 2000 1700000000000\n"
      "disttrain_trainer_examples_per_global_step\t64\n",
      kAt);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->global_step, 1200);
  EXPECT_EQ(r->target_steps, 2000);
  EXPECT_EQ(r->examples_per_step, 64);
  EXPECT_EQ(r->time, kAt);
}

TEST(TrainerReadingTest, TargetAndExamplesAreOptional) {
  absl::StatusOr<TrainerReading> r = ReadTrainerMetrics(
      "disttrain_trainer_global_step 7\ndisttrain_trainer_target_steps 0\n", kAt);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->global_step, 7);
  EXPECT_FALSE(r->target_steps.has_value()) << "0: not said";
  EXPECT_FALSE(r->examples_per_step.has_value());
}

TEST(TrainerReadingTest, AnImageWithoutTheStepIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(ReadTrainerMetrics("up 1\n", kAt).status()));
  EXPECT_TRUE(absl::IsNotFound(ReadTrainerMetrics("", kAt).status()));
  EXPECT_TRUE(absl::IsNotFound(
      ReadTrainerMetrics("disttrain_trainer_global_step{task=\"w\"} 3\n", kAt).status()))
      << "a labelled series is not the trainer's";
}

TEST(TrainerReadingTest, ANonNumberOrNegativeValueIsInvalid) {
  for (const char* text :
       {"disttrain_trainer_global_step abc\n", "disttrain_trainer_global_step -1\n",
        "disttrain_trainer_global_step NaN\n", "disttrain_trainer_global_step +Inf\n",
        "disttrain_trainer_global_step 3\ndisttrain_trainer_target_steps x\n"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ReadTrainerMetrics(text, kAt).status())) << text;
  }
}

}  // namespace
}  // namespace disttrain::progress
