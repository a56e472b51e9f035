// The trainer's metrics as each role's /metrics scrape returns them.
#include "trainer/metrics/trainer_metrics.h"

#include <string>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(TrainerMetricsTest, EachRoleScrapesOnlyItsOwnFamilies) {
  const std::string ps = Metrics().Render(MetricsPrefix(Role::kPs));
  EXPECT_THAT(ps, HasSubstr("disttrain_ps_pushes_applied_total"));
  EXPECT_THAT(ps, Not(HasSubstr("disttrain_trainer_")));
  for (Role replica : {Role::kChief, Role::kWorker}) {
    const std::string r = Metrics().Render(MetricsPrefix(replica));
    EXPECT_THAT(r, HasSubstr("disttrain_trainer_global_step"));
    EXPECT_THAT(r, Not(HasSubstr("disttrain_ps_")));
    EXPECT_THAT(r, Not(HasSubstr("disttrain_evaluator_")));
  }
  const std::string evaluator = Metrics().Render(MetricsPrefix(Role::kEvaluator));
  EXPECT_THAT(evaluator, HasSubstr("disttrain_evaluator_accuracy"));
  EXPECT_THAT(evaluator, Not(HasSubstr("disttrain_trainer_")));
}

TEST(TrainerMetricsTest, CallErrorsReadZeroBeforeAnyCallFails) {
  TrainerMetrics fresh;
  const std::string r = fresh.Render(MetricsPrefix(Role::kWorker));
  EXPECT_THAT(r, HasSubstr("disttrain_trainer_rpc_errors_total{op=\"push_pull\"} 0\n"));
  EXPECT_THAT(r, HasSubstr("disttrain_trainer_rpc_errors_total{op=\"pull\"} 0\n"));
}

TEST(TrainerMetricsTest, TheCheckpointAgeIsRefreshedAtEveryScrape) {
  TrainerMetrics& m = Metrics();
  m.last_checkpoint_unix = 0;
  m.Render(MetricsPrefix(Role::kChief));
  EXPECT_EQ(m.checkpoint_age_seconds->Value({}), 0) << "no checkpoint yet";
  m.last_checkpoint_unix = absl::ToUnixMicros(absl::Now()) / 1e6 - 100;
  m.Render(MetricsPrefix(Role::kChief));
  EXPECT_GE(m.checkpoint_age_seconds->Value({}), 100);
  EXPECT_LT(m.checkpoint_age_seconds->Value({}), 200);
  m.last_checkpoint_unix = 0;
}

TEST(TrainerMetricsTest, MetricsAddressZeroServesNothing) {
  absl::StatusOr<std::unique_ptr<HttpServer>> server = ServeMetrics("0", Role::kPs);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(*server, nullptr);
}

}  // namespace
}  // namespace disttrain::trainer
