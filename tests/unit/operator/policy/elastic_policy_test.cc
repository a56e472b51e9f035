// Elastic jobs run on with fewer workers: which failed worker is set aside instead of failing the
// job, how long it waits, and what its restarts count for.
#include "operator/policy/elastic_policy.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/policy/failure_policy.h"
#include "operator/policy/restart_policy.h"
#include "tests/unit/testing/job_builder.h"
#include "tests/unit/testing/pods_by_replica.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::JobBuilder;
using ::testing::SizeIs;

const absl::Time kNow = absl::FromUnixSeconds(1800000000);
auto Nothing = [](const std::string&) { return false; };

PodState Worker(int index, PodPhase phase, std::optional<int> exit_code = {}, int restarts = 0) {
  PodState p;
  p.type = ReplicaType::kWorker;
  p.index = index;
  p.name = absl::StrCat("el-worker-", index);
  p.uid = absl::StrCat("uid-worker-", index);
  p.phase = phase;
  p.exit_code = exit_code;
  p.reason = exit_code ? "Error" : "";
  p.restart_count = restarts;
  return p;
}

PodsByReplica Pods(std::vector<PodState> list) { return testing::PodsByReplica(std::move(list)); }

// A chief, 1 PS and 4 workers (restartPolicy `policy`), elasticPolicy 2..4, backoffLimit 2.
api::DistributedTraining Elastic(api::RestartPolicy policy = api::RestartPolicy::kNever,
                                 int min = 2) {
  api::DistributedTraining job =
      JobBuilder("el").Chief().Ps(1).Workers(4).RestartPolicy(ReplicaType::kWorker, policy).Build();
  job.spec.elastic_policy = api::ElasticPolicy{min, 4};
  job.spec.run_policy.backoff_limit = 2;
  return job;
}

api::JobStatus Waiting(int index, int32_t times, absl::Time retry, int32_t restarts = 0) {
  api::JobStatus status;
  status.replica_statuses[ReplicaType::kWorker].set_aside.push_back(
      {index, absl::StrCat("uid-old-", index), times, restarts, retry, "earlier"});
  return status;
}

TEST(SetAsideTest, AWorkerThatWouldFailTheJobIsSetAsideForThirtySeconds) {
  const FailureDecision d =
      DecideFailures(Elastic(), {}, Pods({Worker(3, PodPhase::kFailed, 1)}), Nothing, kNow);
  EXPECT_FALSE(d.fail);
  ASSERT_THAT(d.set_aside, SizeIs(1));
  const api::SetAsideReplica& e = d.set_aside[0];
  EXPECT_EQ(e.index, 3);
  EXPECT_EQ(e.pod_uid, "uid-worker-3");
  EXPECT_EQ(e.times, 1);
  EXPECT_EQ(e.retry_time, kNow + absl::Seconds(30));
  EXPECT_THAT(e.message, HasSubstr("exited with code 1"));
  EXPECT_THAT(e.message, HasSubstr("runs on with 3 of 4 workers (elasticPolicy.minReplicas 2)"));
  EXPECT_THAT(d.replace, ElementsAre(Field(&PodState::uid, "uid-worker-3")));
  EXPECT_THAT(d.restarts, IsEmpty());  // not a restart: backoffLimit is untouched
}

TEST(SetAsideTest, WithoutAnElasticPolicyTheSameFailureFailsTheJob) {
  api::DistributedTraining job = Elastic();
  job.spec.elastic_policy.reset();
  const FailureDecision d =
      DecideFailures(job, {}, Pods({Worker(3, PodPhase::kFailed, 1)}), Nothing, kNow);
  ASSERT_TRUE(d.fail);
  EXPECT_EQ(d.fail->reason, "WorkerFailed");
  EXPECT_THAT(d.set_aside, IsEmpty());
}

TEST(SetAsideTest, NoMoreAreSetAsideThanLeaveMinReplicas) {
  const FailureDecision d =
      DecideFailures(Elastic(), {},
                     Pods({Worker(1, PodPhase::kFailed, 1), Worker(2, PodPhase::kFailed, 1),
                           Worker(3, PodPhase::kFailed, 1)}),
                     Nothing, kNow);
  ASSERT_THAT(d.set_aside, SizeIs(2));
  EXPECT_THAT(d.set_aside[1].message, HasSubstr("runs on with 2 of 4 workers"));
  ASSERT_TRUE(d.fail);
  EXPECT_EQ(d.fail->reason, "WorkerFailed");
  EXPECT_THAT(d.fail->message,
              HasSubstr("would leave fewer than elasticPolicy.minReplicas 2 workers"));
}

TEST(SetAsideTest, WorkersStillWaitingCountAgainstMinReplicas) {
  // Worker 1 waits until a minute from now: with minReplicas 3, worker 3 cannot go too.
  const FailureDecision d = DecideFailures(Elastic(api::RestartPolicy::kNever, /*min=*/3),
                                           Waiting(1, 1, kNow + absl::Minutes(1)),
                                           Pods({Worker(3, PodPhase::kFailed, 1)}), Nothing, kNow);
  ASSERT_TRUE(d.fail);
  // Once its retry time has come, it counts as a worker again.
  const FailureDecision later = DecideFailures(
      Elastic(api::RestartPolicy::kNever, /*min=*/3), Waiting(1, 1, kNow - absl::Seconds(1)),
      Pods({Worker(3, PodPhase::kFailed, 1)}), Nothing, kNow);
  EXPECT_FALSE(later.fail);
}

TEST(SetAsideTest, TheWaitDoublesEachTimeUpToTenMinutes) {
  const FailureDecision second =
      DecideFailures(Elastic(), Waiting(3, 1, kNow - absl::Seconds(5), /*restarts=*/4),
                     Pods({Worker(3, PodPhase::kFailed, 1, /*restarts=*/0)}), Nothing, kNow);
  ASSERT_THAT(second.set_aside, SizeIs(1));
  EXPECT_EQ(second.set_aside[0].times, 2);
  EXPECT_EQ(second.set_aside[0].restarts, 4);
  EXPECT_EQ(second.set_aside[0].retry_time, kNow + absl::Seconds(60));
  const FailureDecision many =
      DecideFailures(Elastic(), Waiting(3, 9, kNow - absl::Seconds(5)),
                     Pods({Worker(3, PodPhase::kFailed, 1)}), Nothing, kNow);
  ASSERT_THAT(many.set_aside, SizeIs(1));
  EXPECT_EQ(many.set_aside[0].retry_time, kNow + absl::Minutes(10));
}

TEST(SetAsideTest, APodSetAsideIsDeletedAgainOnlyAndNotCountedTwice) {
  api::JobStatus status = Waiting(3, 1, kNow + absl::Seconds(30));
  status.replica_statuses[ReplicaType::kWorker].set_aside[0].pod_uid = "uid-worker-3";
  const PodsByReplica pods = Pods({Worker(3, PodPhase::kFailed, 1)});
  const FailureDecision again = DecideFailures(Elastic(), status, pods, Nothing, kNow);
  EXPECT_THAT(again.set_aside, IsEmpty());
  EXPECT_FALSE(again.fail);
  EXPECT_THAT(again.replace, SizeIs(1));
  const FailureDecision seen = DecideFailures(
      Elastic(), status, pods, [](const std::string& uid) { return uid == "uid-worker-3"; }, kNow);
  EXPECT_THAT(seen.replace, IsEmpty());
}

TEST(SetAsideTest, AWorkerThatDecidesSuccessIsNeverSetAside) {
  api::DistributedTraining no_chief = Elastic();
  no_chief.spec.replica_specs.erase(ReplicaType::kChief);
  const FailureDecision zero =
      DecideFailures(no_chief, {}, Pods({Worker(0, PodPhase::kFailed, 1)}), Nothing, kNow);
  ASSERT_TRUE(zero.fail);
  EXPECT_THAT(zero.fail->message, HasSubstr("worker 0 decides the job's success"));
  EXPECT_FALSE(
      DecideFailures(no_chief, {}, Pods({Worker(1, PodPhase::kFailed, 1)}), Nothing, kNow).fail);

  api::DistributedTraining all = Elastic();
  all.spec.success_policy = api::SuccessPolicy::kAllWorkers;
  const FailureDecision d =
      DecideFailures(all, {}, Pods({Worker(2, PodPhase::kFailed, 1)}), Nothing, kNow);
  ASSERT_TRUE(d.fail);
  EXPECT_THAT(d.fail->message, HasSubstr("successPolicy AllWorkers"));
}

TEST(SetAsideTest, ARestartPastBackoffLimitSetsTheWorkerAsideWithItsRestarts) {
  api::JobStatus status;
  status.replica_statuses[ReplicaType::kWorker].past_restarts = 2;  // the limit is used up
  const FailureDecision d =
      DecideFailures(Elastic(api::RestartPolicy::kOnFailure), status,
                     Pods({Worker(2, PodPhase::kFailed, 137, /*restarts=*/3)}), Nothing, kNow);
  EXPECT_FALSE(d.fail);
  EXPECT_THAT(d.restarts, IsEmpty());
  ASSERT_THAT(d.set_aside, SizeIs(1));
  EXPECT_EQ(d.set_aside[0].restarts, 3);
  EXPECT_THAT(d.set_aside[0].message, HasSubstr("used all 2 restarts of its backoffLimit"));
}

TEST(SetAsideTest, RestartsInPlaceOfAPodSetAsideAreOutOfTheBackoffTally) {
  api::JobStatus status = Waiting(1, 1, kNow + absl::Seconds(30), /*restarts=*/5);
  status.replica_statuses[ReplicaType::kWorker].set_aside[0].pod_uid = "uid-worker-1";
  const RestartTally tally = CountRestarts(
      status, {Worker(1, PodPhase::kRunning, {}, 5), Worker(2, PodPhase::kRunning, {}, 1)});
  EXPECT_EQ(tally.total(), 1);
  // The status written with them (restarts 6, 5 of them set aside) records 1 restart in place.
  api::JobStatus written = status;
  written.replica_statuses[ReplicaType::kWorker].restarts = 6;
  EXPECT_FALSE(RestartedInPlaceSince(written, tally));
  EXPECT_TRUE(RestartedInPlaceSince(written, RestartTally{0, 2}));
}

TEST(SetAsideToFitBackoffTest, TheMostRestartedWorkersGoUntilTheJobFitsAgain) {
  const PodsByReplica pods =
      Pods({Worker(0, PodPhase::kRunning, {}, 1), Worker(1, PodPhase::kRunning, {}, 3),
            Worker(2, PodPhase::kRunning, {}, 0), Worker(3, PodPhase::kRunning, {}, 2)});
  // 6 restarts against backoffLimit 2: over by 4, worker 1 (3) and worker 3 (2) go.
  const std::vector<PodState> aside =
      SetAsideToFitBackoff(Elastic(api::RestartPolicy::kOnFailure), {}, pods, 4, kNow);
  EXPECT_THAT(aside, ElementsAre(Field(&PodState::index, 1), Field(&PodState::index, 3)));
  // Over by 6: a third worker would break minReplicas 2, so nothing is set aside.
  EXPECT_THAT(SetAsideToFitBackoff(Elastic(api::RestartPolicy::kOnFailure), {}, pods, 6, kNow),
              IsEmpty());
  api::DistributedTraining plain = Elastic(api::RestartPolicy::kOnFailure);
  plain.spec.elastic_policy.reset();
  EXPECT_THAT(SetAsideToFitBackoff(plain, {}, pods, 1, kNow), IsEmpty());
}

TEST(SetAsideTest, UntilSaysWhenAWaitingWorkerComesBack) {
  const api::JobStatus status = Waiting(2, 1, kNow + absl::Seconds(30));
  EXPECT_EQ(SetAsideUntil(status, 2, kNow), kNow + absl::Seconds(30));
  EXPECT_EQ(SetAsideUntil(status, 2, kNow + absl::Seconds(30)), std::nullopt);
  EXPECT_EQ(SetAsideUntil(status, 1, kNow), std::nullopt);
  EXPECT_EQ(WaitingSetAside(status, kNow), 1);
}

}  // namespace
}  // namespace disttrain::policy
