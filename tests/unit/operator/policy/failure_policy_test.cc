// OnPodFailed (what one failed pod means, by role and restartPolicy) and DecideFailures (what one
// pass does about a job's ended pods).
#include "operator/policy/failure_policy.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/job_builder.h"
#include "tests/unit/testing/pods_by_replica.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using api::RestartPolicy;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::JobBuilder;

PodState Pod(ReplicaType type, int index, PodPhase phase, std::optional<int> exit_code = {},
             std::string reason = "", int restarts = 0) {
  PodState p;
  p.type = type;
  p.index = index;
  p.name = absl::StrCat("dist-", static_cast<int>(type), "-", index);
  p.uid = absl::StrCat("uid-", static_cast<int>(type), "-", index);
  p.phase = phase;
  p.exit_code = exit_code;
  p.reason = std::move(reason);
  p.restart_count = restarts;
  return p;
}

PodsByReplica FailurePods(std::vector<PodState> list) {
  return testing::PodsByReplica(std::move(list));
}

// Chief ExitCode, 1 PS OnFailure, 2 workers OnFailure, backoffLimit 3.
api::DistributedTraining Job() {
  api::DistributedTraining job =
      JobBuilder("dist")
          .Chief()
          .Ps(1)
          .Workers(2)
          .RestartPolicy(ReplicaType::kChief, api::RestartPolicy::kExitCode)
          .RestartPolicy(ReplicaType::kPS, api::RestartPolicy::kOnFailure)
          .RestartPolicy(ReplicaType::kWorker, api::RestartPolicy::kOnFailure)
          .Build();
  job.spec.run_policy.backoff_limit = 3;
  return job;
}

auto kNoneDeleting = [](const std::string&) { return false; };
const absl::Time kDecisionTime = absl::FromUnixSeconds(1800000000);

TEST(DecideFailuresTest, AnEvictedWorkerIsRecreatedAndCountedWithItsRestartsInPlace) {
  const FailureDecision d = DecideFailures(
      Job(), {},
      FailurePods({Pod(ReplicaType::kWorker, 1, PodPhase::kFailed, 137, "Evicted", /*restarts=*/1),
                   Pod(ReplicaType::kWorker, 0, PodPhase::kRunning)}),
      kNoneDeleting, kDecisionTime);
  EXPECT_FALSE(d.fail);
  ASSERT_EQ(d.restarts.size(), 1u);
  EXPECT_EQ(d.restarts[0].type, ReplicaType::kWorker);
  EXPECT_EQ(d.restarts[0].uid, "uid-2-1");
  EXPECT_EQ(d.restarts[0].counted, 2);
  // Its restart in place counted already; the recreation is the job's second restart.
  EXPECT_THAT(d.restarts[0].message, HasSubstr("restarting it (restart 2 of 3)"));
  ASSERT_EQ(d.replace.size(), 1u);
  EXPECT_EQ(d.replace[0].uid, "uid-2-1");
}

TEST(DecideFailuresTest, AnOomKillUnderTheOomPolicyGrowsTheReplicaWithoutARestart) {
  api::DistributedTraining job = Job();
  job.spec.run_policy.oom_policy = api::OomPolicy{
      .memory_factor = 2, .max_memory = "1Gi", .max_memory_milli = (1LL << 30) * 1000};
  job.spec.replica_specs[ReplicaType::kWorker].pod_template = {
      {"spec",
       {{"containers",
         {{{"name", "tensorflow"}, {"resources", {{"limits", {{"memory", "512Mi"}}}}}}}}}}};
  api::JobStatus status;
  status.replica_statuses[ReplicaType::kWorker].past_restarts = 3;  // no restart left
  // Failed (restartPolicy Never), and restarted in place by the kubelet (OnFailure).
  const FailureDecision d = DecideFailures(
      job, status,
      FailurePods({Pod(ReplicaType::kWorker, 0, PodPhase::kFailed, 137, "OOMKilled"),
                   Pod(ReplicaType::kWorker, 1, PodPhase::kRunning, 137, "OOMKilled", 1)}),
      kNoneDeleting, kDecisionTime);
  EXPECT_FALSE(d.fail) << "an OOM kill that grows the replica is not a restart";
  EXPECT_THAT(d.restarts, IsEmpty());
  ASSERT_EQ(d.grown.size(), 2u);
  EXPECT_EQ(d.grown[0].entry.memory, "1Gi");
  EXPECT_EQ(d.grown[1].entry.index, 1);
  ASSERT_EQ(d.replace.size(), 2u);

  // At the ceiling it is a failure as any other: here past backoffLimit.
  status.replica_statuses[ReplicaType::kWorker].resized.push_back(d.grown[0].entry);
  const FailureDecision at_max = DecideFailures(
      job, status, FailurePods({Pod(ReplicaType::kWorker, 0, PodPhase::kFailed, 137, "OOMKilled")}),
      kNoneDeleting, kDecisionTime);
  ASSERT_TRUE(at_max.fail);
  EXPECT_EQ(at_max.fail->reason, "BackoffLimitExceeded");
  EXPECT_THAT(at_max.grown, IsEmpty());
}

TEST(DecideFailuresTest, AChiefWithAPermanentExitFailsTheJob) {
  const FailureDecision d =
      DecideFailures(Job(), {}, FailurePods({Pod(ReplicaType::kChief, 0, PodPhase::kFailed, 1)}),
                     kNoneDeleting, kDecisionTime);
  ASSERT_TRUE(d.fail);
  EXPECT_EQ(d.fail->reason, "ChiefFailed");
  EXPECT_THAT(d.fail->message, HasSubstr("restartPolicy ExitCode and the failure is permanent"));
  EXPECT_THAT(d.restarts, IsEmpty());
  EXPECT_THAT(d.replace, IsEmpty());
}

TEST(DecideFailuresTest, ARestartPastBackoffLimitFailsTheJob) {
  api::JobStatus status;
  status.replica_statuses[ReplicaType::kWorker].past_restarts = 3;
  const FailureDecision d = DecideFailures(
      Job(), status, FailurePods({Pod(ReplicaType::kWorker, 0, PodPhase::kFailed, 137, "Evicted")}),
      kNoneDeleting, kDecisionTime);
  ASSERT_TRUE(d.fail);
  EXPECT_EQ(d.fail->reason, "BackoffLimitExceeded");
  EXPECT_THAT(d.fail->message, HasSubstr("used all 3 restarts"));
  EXPECT_THAT(d.restarts, IsEmpty());
}

TEST(DecideFailuresTest, WhatWasDecidedBeforeTheFailureThatEndsTheJobStands) {
  // The parameter server (visited first) is recreated; the chief then fails the job.
  const FailureDecision d =
      DecideFailures(Job(), {},
                     FailurePods({Pod(ReplicaType::kPS, 0, PodPhase::kFailed, 137, "Evicted"),
                                  Pod(ReplicaType::kChief, 0, PodPhase::kFailed, 2)}),
                     kNoneDeleting, kDecisionTime);
  ASSERT_TRUE(d.fail);
  EXPECT_EQ(d.fail->reason, "ChiefFailed");
  EXPECT_THAT(d.restarts, IsEmpty()) << "the chief comes first: nothing decided before it";
  const FailureDecision later =
      DecideFailures(Job(), {},
                     FailurePods({Pod(ReplicaType::kPS, 0, PodPhase::kFailed, 137, "Evicted"),
                                  Pod(ReplicaType::kWorker, 1, PodPhase::kFailed, 137, "Evicted")}),
                     kNoneDeleting, kDecisionTime);
  EXPECT_FALSE(later.fail);
  ASSERT_EQ(later.restarts.size(), 2u);
  EXPECT_THAT(later.restarts[1].message, HasSubstr("restart 2 of 3"));
}

TEST(DecideFailuresTest, SucceededReplicasAreRememberedOnce) {
  api::JobStatus status;
  status.replica_statuses[ReplicaType::kWorker].succeeded_indexes = {0};
  const FailureDecision d =
      DecideFailures(Job(), status,
                     FailurePods({Pod(ReplicaType::kWorker, 0, PodPhase::kSucceeded, 0),
                                  Pod(ReplicaType::kWorker, 1, PodPhase::kSucceeded, 0)}),
                     kNoneDeleting, kDecisionTime);
  EXPECT_THAT(d.succeeded, ElementsAre(std::pair{ReplicaType::kWorker, 1}));
}

TEST(DecideFailuresTest, APodAlreadyCountedIsDeletedAgainOnlyUntilItsDeleteIsSeen) {
  api::JobStatus status;
  status.restarting_pods = {"uid-2-0"};
  const PodsByReplica pods = FailurePods({Pod(ReplicaType::kWorker, 0, PodPhase::kFailed, 137)});
  const FailureDecision again = DecideFailures(Job(), status, pods, kNoneDeleting, kDecisionTime);
  EXPECT_THAT(again.restarts, IsEmpty()) << "counted once, by the earlier pass";
  ASSERT_EQ(again.replace.size(), 1u);
  const FailureDecision deleting = DecideFailures(
      Job(), status, pods, [](const std::string& uid) { return uid == "uid-2-0"; }, kDecisionTime);
  EXPECT_THAT(deleting.replace, IsEmpty());
}

TEST(DecideFailuresTest, AFailedEvaluatorWithAPermanentExitIsLeftFailed) {
  api::DistributedTraining job = Job();
  job.spec.replica_specs[ReplicaType::kEvaluator].replicas = 1;
  job.spec.replica_specs[ReplicaType::kEvaluator].restart_policy = api::RestartPolicy::kExitCode;
  const FailureDecision d =
      DecideFailures(job, {}, FailurePods({Pod(ReplicaType::kEvaluator, 0, PodPhase::kFailed, 1)}),
                     kNoneDeleting, kDecisionTime);
  EXPECT_FALSE(d.fail);
  EXPECT_THAT(d.restarts, IsEmpty());
  EXPECT_THAT(d.replace, IsEmpty());
}

PodState Failed(int code, std::string reason = "Error") {
  PodState p;
  p.name = "p";
  p.phase = PodPhase::kFailed;
  p.exit_code = code;
  p.reason = std::move(reason);
  return p;
}

struct FailureCase {
  std::string name;
  ReplicaType type;
  RestartPolicy policy;
  PodState pod;
  FailureAction want;
};

class FailurePolicyTest : public ::testing::TestWithParam<FailureCase> {};

TEST_P(FailurePolicyTest, DecidesWhatAFailedPodMeans) {
  EXPECT_EQ(OnPodFailed(GetParam().type, GetParam().policy, GetParam().pod), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, FailurePolicyTest,
    ::testing::Values(FailureCase{"ChiefNeverFails", ReplicaType::kChief, RestartPolicy::kNever,
                                  Failed(137), FailureAction::kFailJob},
                      FailureCase{"ChiefExitCodeOomRetries", ReplicaType::kChief,
                                  RestartPolicy::kExitCode, Failed(137), FailureAction::kRecreate},
                      FailureCase{"ChiefExitCodeSigtermRetries", ReplicaType::kChief,
                                  RestartPolicy::kExitCode, Failed(143), FailureAction::kRecreate},
                      FailureCase{"ChiefExitCodePermanentFails", ReplicaType::kChief,
                                  RestartPolicy::kExitCode, Failed(1), FailureAction::kFailJob},
                      FailureCase{"WorkerExitCode2Fails", ReplicaType::kWorker,
                                  RestartPolicy::kExitCode, Failed(2), FailureAction::kFailJob},
                      FailureCase{"WorkerEvictedRetries", ReplicaType::kWorker,
                                  RestartPolicy::kExitCode, Failed(0, "Evicted"),
                                  FailureAction::kRecreate},
                      FailureCase{"WorkerOomKilledReasonRetries", ReplicaType::kWorker,
                                  RestartPolicy::kExitCode, Failed(1, "OOMKilled"),
                                  FailureAction::kRecreate},
                      FailureCase{"WorkerOnFailureRecreates", ReplicaType::kWorker,
                                  RestartPolicy::kOnFailure, Failed(1), FailureAction::kRecreate},
                      FailureCase{"WorkerNeverFails", ReplicaType::kWorker, RestartPolicy::kNever,
                                  Failed(1), FailureAction::kFailJob},
                      FailureCase{"PsAlwaysRecreated", ReplicaType::kPS, RestartPolicy::kNever,
                                  Failed(1), FailureAction::kRecreate},
                      FailureCase{"EvaluatorNeverLeftFailed", ReplicaType::kEvaluator,
                                  RestartPolicy::kNever, Failed(1), FailureAction::kLeaveFailed},
                      FailureCase{"EvaluatorPermanentLeftFailed", ReplicaType::kEvaluator,
                                  RestartPolicy::kExitCode, Failed(1), FailureAction::kLeaveFailed},
                      FailureCase{"EvaluatorRetryableRecreated", ReplicaType::kEvaluator,
                                  RestartPolicy::kExitCode, Failed(137), FailureAction::kRecreate}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace disttrain::policy
