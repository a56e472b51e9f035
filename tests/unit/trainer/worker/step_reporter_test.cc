// Tests trainer/worker/step_reporter.cc on a fake clock: the examples/s a scrape sees, and the
// chief's TensorBoard rates.
#include "trainer/worker/step_reporter.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "tests/unit/testing/tf_events.h"

namespace disttrain::trainer {
namespace {

StepReporter::Config Workers(int64_t batches_per_commit = 1) {
  StepReporter::Config c;
  c.task = "worker-0";
  c.batch_size = 32;
  c.batches_per_commit = batches_per_commit;
  return c;
}

TEST(StepReporterTest, AScrapeInTheFirstSecondSeesALiveRate) {
  FakeClock clock;
  TrainerMetrics metrics;
  StepReporter reporter(Workers(), &metrics, nullptr, &clock);
  reporter.Record(0, 2.5f);
  EXPECT_EQ(metrics.examples_per_second->Value({}), 0) << "no time has passed yet";
  clock.Advance(absl::Milliseconds(250));
  reporter.Record(1, 2.0f);  // one more batch of 32 in a quarter second
  EXPECT_DOUBLE_EQ(metrics.examples_per_second->Value({}), 128);
  EXPECT_EQ(metrics.global_step->Value({}), 1);
  EXPECT_FLOAT_EQ(metrics.loss->Value({}), 2.0f);
  EXPECT_EQ(metrics.local_steps->Value({}), 2);
}

TEST(StepReporterTest, ExportsWhatTheOperatorReadsForProgress) {
  FakeClock clock;
  TrainerMetrics metrics;
  StepReporter::Config c = Workers(/*batches_per_commit=*/2);
  c.target_steps = 2000;
  c.sync = true;
  c.tf_config_replicas = 3;
  StepReporter reporter(c, &metrics, nullptr, &clock);
  EXPECT_EQ(metrics.target_steps->Value({}), 2000) << "from the start";
  reporter.Record(5, 1.0f);
  EXPECT_EQ(metrics.examples_per_global_step->Value({}), 3 * 2 * 32);
  reporter.SetLiveReplicas(2);  // one replica left
  reporter.Record(6, 1.0f);
  EXPECT_EQ(metrics.examples_per_global_step->Value({}), 2 * 2 * 32);
}

TEST(StepReporterTest, AfterTheFirstSecondTheRateIsOverWholeWindows) {
  FakeClock clock;
  TrainerMetrics metrics;
  StepReporter reporter(Workers(/*batches_per_commit=*/4), &metrics, nullptr, &clock);
  reporter.Record(0, 1);
  for (int step = 1; step <= 10; ++step) {  // 10 commits of 4 batches in one second
    clock.Advance(absl::Milliseconds(100));
    reporter.Record(step, 1);
  }
  EXPECT_DOUBLE_EQ(metrics.examples_per_second->Value({}), 10 * 4 * 32);
  clock.Advance(absl::Milliseconds(500));
  reporter.Record(11, 1);  // inside the next window: the last whole window's rate stays
  EXPECT_DOUBLE_EQ(metrics.examples_per_second->Value({}), 10 * 4 * 32);
  clock.Advance(absl::Milliseconds(500));
  reporter.Record(12, 1);  // that window closes: 2 commits in a second
  EXPECT_DOUBLE_EQ(metrics.examples_per_second->Value({}), 2 * 4 * 32);
}

class StepReporterSummaryTest : public ::testing::Test {
 protected:
  // The chief's scalars by global step, after `steps` steps one fake second apart.
  std::map<int64_t, std::map<std::string, float>> Report(StepReporter::Config config, int live,
                                                         int steps) {
    const std::string dir = ::testing::TempDir() + "/step-reporter-" +
                            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir);
    absl::StatusOr<std::unique_ptr<EventWriter>> writer = EventWriter::Open(dir);
    EXPECT_TRUE(writer.ok()) << writer.status();
    {
      StepReporter reporter(std::move(config), &metrics_, *std::move(writer), &clock_);
      if (live > 0) reporter.SetLiveReplicas(live);
      for (int step = 0; step < steps; ++step) {
        reporter.Record(step, 0.5f);
        clock_.Advance(absl::Seconds(1));
      }
    }
    std::map<int64_t, std::map<std::string, float>> out;
    for (const auto& f : std::filesystem::directory_iterator(dir)) {
      for (const tensorboard::Event& e : testing::ReadEvents(f.path().string())) {
        for (const auto& v : e.summary().value()) out[e.step()][v.tag()] = v.simple_value();
      }
    }
    return out;
  }
  FakeClock clock_;
  TrainerMetrics metrics_;
};

TEST_F(StepReporterSummaryTest, SyncCountsACommitPerLiveReplicaInEachGlobalStep) {
  StepReporter::Config c = Workers(/*batches_per_commit=*/2);
  c.task = "chief-0";
  c.log_every = 1;
  c.sync = true;
  c.tf_config_replicas = 2;
  auto scalars = Report(c, /*live=*/3, 3);  // a third replica scaled in
  ASSERT_EQ(scalars.size(), 3u);
  EXPECT_FLOAT_EQ(scalars[0]["loss"], 0.5f);
  EXPECT_EQ(scalars[0].count("global_step/sec"), 0u) << "no rate before a second step";
  EXPECT_FLOAT_EQ(scalars[2]["global_step/sec"], 1);
  EXPECT_FLOAT_EQ(scalars[2]["examples/sec"], 1 * 3 * 2 * 32) << "3 live replicas' commits";
}

TEST_F(StepReporterSummaryTest, SyncWithReplicasToAggregateCountsAtMostThatMany) {
  StepReporter::Config c = Workers();
  c.log_every = 1;
  c.sync = true;
  c.replicas_to_aggregate = 2;
  c.tf_config_replicas = 4;  // no server has answered: TF_CONFIG's count, then the bound
  auto scalars = Report(c, /*live=*/0, 2);
  EXPECT_FLOAT_EQ(scalars[1]["examples/sec"], 2 * 32);
}

TEST_F(StepReporterSummaryTest, AsyncCountsOneCommitAndLogsEveryNthStep) {
  StepReporter::Config c = Workers(/*batches_per_commit=*/4);
  c.log_every = 2;
  auto scalars = Report(c, /*live=*/5, 5);
  ASSERT_EQ(scalars.size(), 3u);  // steps 0, 2, 4
  EXPECT_FLOAT_EQ(scalars[4]["global_step/sec"], 1) << "2 steps in 2 s";
  EXPECT_FLOAT_EQ(scalars[4]["examples/sec"], 4 * 32) << "one commit of 4 batches per step";
}

}  // namespace
}  // namespace disttrain::trainer
