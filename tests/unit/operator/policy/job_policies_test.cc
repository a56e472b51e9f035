// The job lifecycle's pure decisions (job_policies.h): success, cleanup with the final
// evaluation's grace, and time.
#include "operator/policy/job_policies.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "operator/policy/conditions.h"
#include "operator/policy/pod_state.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using testing::JobBuilder;

TEST(SuccessPolicyTest, ChiefDecidesWhenThereIsOne) {
  auto job = JobBuilder("d").Chief().Workers(2).Build();
  EXPECT_FALSE(SuccessMessage(job, [](ReplicaType t, int) { return t == ReplicaType::kWorker; }));
  EXPECT_EQ(SuccessMessage(job, [](ReplicaType t, int) { return t == ReplicaType::kChief; }),
            "the chief succeeded");
}

TEST(SuccessPolicyTest, WorkerZeroDecidesWithoutAChief) {
  auto job = JobBuilder("d").Ps(1).Workers(2).Build();
  EXPECT_FALSE(SuccessMessage(job, [](ReplicaType t, int i) { return i == 1; }));
  EXPECT_EQ(
      SuccessMessage(job, [](ReplicaType t, int i) { return t == ReplicaType::kWorker && i == 0; }),
      "worker 0 succeeded");
}

TEST(SuccessPolicyTest, AllWorkersNeedsEveryWorker) {
  auto job =
      JobBuilder("d").Chief().Workers(3).SuccessPolicy(api::SuccessPolicy::kAllWorkers).Build();
  EXPECT_FALSE(
      SuccessMessage(job, [](ReplicaType t, int i) { return t == ReplicaType::kChief || i < 2; }));
  EXPECT_EQ(SuccessMessage(job, [](ReplicaType t, int) { return t == ReplicaType::kWorker; }),
            "all 3 workers succeeded");
}

TEST(CleanupPolicyTest, DeletesWhatThePolicySays) {
  PodState running, succeeded, failed, terminating;
  running.phase = PodPhase::kRunning;
  succeeded.phase = PodPhase::kSucceeded;
  failed.phase = PodPhase::kFailed;
  terminating.phase = PodPhase::kRunning;
  terminating.terminating = true;
  using api::CleanPodPolicy;
  EXPECT_TRUE(DeleteOnFinish(CleanPodPolicy::kRunning, running));
  EXPECT_FALSE(DeleteOnFinish(CleanPodPolicy::kRunning, succeeded));
  EXPECT_FALSE(DeleteOnFinish(CleanPodPolicy::kRunning, failed));
  EXPECT_TRUE(DeleteOnFinish(CleanPodPolicy::kAll, succeeded));
  EXPECT_TRUE(DeleteOnFinish(CleanPodPolicy::kAll, failed));
  EXPECT_FALSE(DeleteOnFinish(CleanPodPolicy::kNone, running));
  EXPECT_FALSE(DeleteOnFinish(CleanPodPolicy::kAll, terminating)) << "already going";
}

api::JobStatus SucceededAt(absl::Time t) {
  api::JobStatus s;
  SetCondition(&s, kSucceeded, true, "JobSucceeded", "the chief succeeded", t);
  s.completion_time = t;
  return s;
}

PodState RunningPod(ReplicaType type) {
  PodState p;
  p.type = type;
  p.phase = PodPhase::kRunning;
  return p;
}

TEST(CleanupPolicyTest, KeepsASucceededJobsEvaluatorForItsFinalEvaluation) {
  auto job = JobBuilder("d").Chief().Ps(1).Workers(1).Evaluator().Build();
  job.spec.run_policy.final_evaluation_grace_period_seconds = 60;
  const absl::Time done = absl::FromUnixSeconds(1000);
  const api::JobStatus status = SucceededAt(done);
  FinishCleanup ev =
      CleanupOnFinish(job, status, RunningPod(ReplicaType::kEvaluator), done + absl::Seconds(10));
  EXPECT_FALSE(ev.remove);
  EXPECT_EQ(ev.requeue_after, absl::Seconds(50)) << "looked at again when the grace ends";
  EXPECT_TRUE(CleanupOnFinish(job, status, RunningPod(ReplicaType::kPS), done).remove)
      << "parameter servers go at once";
  EXPECT_TRUE(CleanupOnFinish(job, status, RunningPod(ReplicaType::kWorker), done).remove);
  EXPECT_TRUE(
      CleanupOnFinish(job, status, RunningPod(ReplicaType::kEvaluator), done + absl::Seconds(60))
          .remove)
      << "the grace is a bound";
  api::JobStatus failed;
  SetCondition(&failed, kFailed, true, "ChiefFailed", "x", done);
  failed.completion_time = done;
  EXPECT_TRUE(CleanupOnFinish(job, failed, RunningPod(ReplicaType::kEvaluator), done).remove)
      << "a failed job has no final checkpoint to evaluate";
  job.spec.run_policy.final_evaluation_grace_period_seconds = 0;
  EXPECT_TRUE(CleanupOnFinish(job, status, RunningPod(ReplicaType::kEvaluator), done).remove);
  job.spec.run_policy.clean_pod_policy = api::CleanPodPolicy::kNone;
  EXPECT_FALSE(CleanupOnFinish(job, status, RunningPod(ReplicaType::kPS), done).remove);
}

struct EvaluationCase {
  std::string name;
  PodPhase phase;
  std::optional<int64_t> final_step, evaluated_step;
  absl::Duration since_success;
  std::optional<std::string> want_reason;  // nullopt: no outcome yet
  bool want_evaluated = false;
};

class FinalEvaluationTest : public ::testing::TestWithParam<EvaluationCase> {};

TEST_P(FinalEvaluationTest, DecidesTheEvaluatedCondition) {
  const EvaluationCase& c = GetParam();
  auto job = JobBuilder("d").Chief().Ps(1).Evaluator().Build();
  job.spec.run_policy.final_evaluation_grace_period_seconds = 60;
  const absl::Time done = absl::FromUnixSeconds(1000);
  api::JobStatus status = SucceededAt(done);
  if (c.final_step || c.evaluated_step) {
    status.result.emplace();
    status.result->global_step = c.final_step;
    status.result->evaluated_step = c.evaluated_step;
  }
  PodState evaluator = RunningPod(ReplicaType::kEvaluator);
  evaluator.phase = c.phase;
  evaluator.exit_code = c.phase == PodPhase::kFailed ? 1 : 0;
  std::optional<EvaluationOutcome> got =
      FinalEvaluation(job, status, evaluator, done + c.since_success);
  ASSERT_EQ(got.has_value(), c.want_reason.has_value()) << (got ? got->message : "");
  if (got) {
    EXPECT_EQ(got->reason, *c.want_reason);
    EXPECT_EQ(got->evaluated, c.want_evaluated);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Outcomes, FinalEvaluationTest,
    ::testing::Values(
        EvaluationCase{"RunningWithinTheGraceIsUndecided", PodPhase::kRunning, 400, 300,
                       absl::Seconds(59), std::nullopt},
        EvaluationCase{"RunningPastTheGraceTimedOut", PodPhase::kRunning, 400, 300,
                       absl::Seconds(60), "EvaluationTimedOut"},
        EvaluationCase{"ExitedAfterTheFinalStep", PodPhase::kSucceeded, 400, 400, absl::Seconds(5),
                       "FinalCheckpointEvaluated", true},
        EvaluationCase{"ExitedWithAnOlderStep", PodPhase::kSucceeded, 400, 300, absl::Seconds(5),
                       "FinalCheckpointNotEvaluated"},
        EvaluationCase{"ExitedWithNoEvaluation", PodPhase::kSucceeded, 400, std::nullopt,
                       absl::Seconds(5), "FinalCheckpointNotEvaluated"},
        EvaluationCase{"ChiefStepUnknownAnyEvaluationCounts", PodPhase::kSucceeded, std::nullopt,
                       1500, absl::Seconds(5), "FinalCheckpointEvaluated", true},
        EvaluationCase{"Failed", PodPhase::kFailed, 400, 300, absl::Seconds(5), "EvaluatorFailed"}),
    [](const auto& info) { return info.param.name; });

TEST(FinalEvaluationTest, NothingToDecideBeforeSuccess) {
  auto job = JobBuilder("d").Chief().Ps(1).Evaluator().Build();
  PodState evaluator = RunningPod(ReplicaType::kEvaluator);
  evaluator.phase = PodPhase::kSucceeded;
  EXPECT_FALSE(FinalEvaluation(job, api::JobStatus{}, evaluator, absl::Now()));
}

TEST(TimePolicyTest, DeadlineRequeuesUntilDueThenFires) {
  auto job = JobBuilder("d").Workers(1).Build();
  const absl::Time start = absl::FromUnixSeconds(1000);
  EXPECT_FALSE(CheckDeadline(job, start).due);
  EXPECT_FALSE(CheckDeadline(job, start).requeue_after) << "no deadline, no requeue";
  job.spec.run_policy.active_deadline_seconds = 60;
  job.status.start_time = start;
  TimeCheck early = CheckDeadline(job, start + absl::Seconds(15));
  EXPECT_FALSE(early.due);
  EXPECT_EQ(early.requeue_after, absl::Seconds(45));
  EXPECT_TRUE(CheckDeadline(job, start + absl::Seconds(60)).due);
}

TEST(TimePolicyTest, TtlCountsFromCompletion) {
  auto job = JobBuilder("d").Workers(1).Build();
  job.spec.run_policy.ttl_seconds_after_finished = 30;
  EXPECT_FALSE(CheckTtl(job, absl::Now()).due) << "not finished";
  job.status.completion_time = absl::FromUnixSeconds(500);
  EXPECT_EQ(CheckTtl(job, absl::FromUnixSeconds(510)).requeue_after, absl::Seconds(20));
  EXPECT_TRUE(CheckTtl(job, absl::FromUnixSeconds(530)).due);
}

}  // namespace
}  // namespace disttrain::policy
