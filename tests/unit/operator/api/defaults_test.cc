// ApplyDefaults (defaults.h): the defaults that depend on other fields, and what the user set kept.
#include "operator/api/defaults.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/api/validation.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::api {
namespace {

using testing::JobBuilder;

TEST(DefaultsTest, FillsBackoffLimitAndMinAvailable) {
  DistributedTraining job = JobBuilder("a").Chief().Ps(2).Workers(3).Scheduling({}).Build();
  ApplyDefaults(&job);
  EXPECT_EQ(job.spec.run_policy.backoff_limit, kDefaultBackoffLimit);
  EXPECT_EQ(job.spec.run_policy.scheduling_policy->min_available, 6);
}

TEST(DefaultsTest, GivesADistributedTrainingThirtySecondsOnALostNode) {
  DistributedTraining job = JobBuilder("a").Workers(3).Build();
  ApplyDefaults(&job);
  EXPECT_EQ(job.spec.run_policy.node_loss_toleration_seconds, 30);
  job.spec.run_policy.node_loss_toleration_seconds = 0;
  ApplyDefaults(&job);
  EXPECT_EQ(job.spec.run_policy.node_loss_toleration_seconds, 0);
  job.spec.run_policy.node_loss_toleration_seconds = -1;
  absl::Status s = Validate(job);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("spec.runPolicy.nodeLossTolerationSeconds"));
}

TEST(DefaultsTest, KeepsWhatTheUserSet) {
  DistributedTraining job = JobBuilder("a").Workers(3).Build();
  job.spec.run_policy.backoff_limit = 0;
  SchedulingPolicy p;
  p.min_available = 2;
  job.spec.run_policy.scheduling_policy = p;
  ApplyDefaults(&job);
  EXPECT_EQ(job.spec.run_policy.backoff_limit, 0);
  EXPECT_EQ(job.spec.run_policy.scheduling_policy->min_available, 2);
}

TEST(DefaultsTest, NoSchedulingPolicyStaysAbsent) {
  DistributedTraining job = JobBuilder("a").Workers(3).Build();
  ApplyDefaults(&job);
  EXPECT_FALSE(job.spec.run_policy.scheduling_policy.has_value());
}

}  // namespace
}  // namespace disttrain::api
