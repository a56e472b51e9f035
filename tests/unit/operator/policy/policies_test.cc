#include <string>

#include "gtest/gtest.h"
#include "operator/policy/conditions.h"
#include "operator/policy/failure_policy.h"
#include "operator/policy/job_policies.h"
#include "operator/policy/pod_projection.h"
#include "operator/policy/pod_state.h"
#include "operator/policy/restart_policy.h"
#include "operator/policy/result_policy.h"
#include "operator/policy/running_policy.h"
#include "tests/unit/testing/job_builder.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using api::RestartPolicy;
using nlohmann::json;
using testing::JobBuilder;

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

TEST(PodStateTest, ReadsPhaseExitCodeReasonAndRestarts) {
  json pod = json::parse(R"({"metadata": {"name": "d-worker-1", "uid": "u",
      "labels": {"disttrain.io/replica-type": "worker", "disttrain.io/replica-index": "1"}},
    "spec": {"containers": [{"name": "sidecar"}, {"name": "tensorflow"}]},
    "status": {"phase": "Failed", "conditions": [{"type": "Ready", "status": "False"}],
      "containerStatuses": [
        {"name": "sidecar", "restartCount": 1, "state": {"terminated": {"exitCode": 2, "reason": "Error"}}},
        {"name": "tensorflow", "restartCount": 2, "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}})");
  std::optional<PodState> s = ReadPodState(pod);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->type, ReplicaType::kWorker);
  EXPECT_EQ(s->index, 1);
  EXPECT_EQ(s->phase, PodPhase::kFailed);
  EXPECT_EQ(s->exit_code, 137) << "the main container's code wins";
  EXPECT_EQ(s->reason, "OOMKilled");
  EXPECT_EQ(s->restart_count, 3);
  EXPECT_FALSE(s->ready);
  EXPECT_EQ(DescribeExit(*s), "pod d-worker-1 exited with code 137 (OOMKilled)");
  EXPECT_FALSE(ReadPodState(json::parse(R"({"metadata": {"name": "x"}})")).has_value());
}

TEST(PodStateTest, ReadsTheMainContainersTerminationMessage) {
  json pod = json::parse(R"({"metadata": {"name": "d-chief-0", "uid": "u",
      "labels": {"disttrain.io/replica-type": "chief", "disttrain.io/replica-index": "0"}},
    "spec": {"containers": [{"name": "sidecar"}, {"name": "tensorflow"}]},
    "status": {"phase": "Succeeded", "containerStatuses": [
      {"name": "sidecar", "state": {"terminated": {"exitCode": 0, "message": "bye"}}},
      {"name": "tensorflow", "state": {"terminated": {"exitCode": 0, "message": "{\"globalStep\": 5}"}},
       "lastState": {"terminated": {"exitCode": 1, "message": "old"}}}]}})");
  EXPECT_EQ(ReadPodState(pod)->termination_message, R"({"globalStep": 5})");
  EXPECT_EQ(ReadPodState(ProjectPod(pod))->termination_message, R"({"globalStep": 5})");
}

PodState Ended(ReplicaType type, int index, PodPhase phase, std::string message) {
  PodState p;
  p.type = type;
  p.index = index;
  p.phase = phase;
  p.termination_message = std::move(message);
  return p;
}

struct ResultCase {
  std::string name;
  std::vector<PodState> pods;
  bool has_chief;
  std::optional<api::JobResult> previous;
  std::optional<api::JobResult> want;
};

class ResultPolicyTest : public ::testing::TestWithParam<ResultCase> {};

TEST_P(ResultPolicyTest, CopiesTheTrainersResultIntoTheStatus) {
  EXPECT_EQ(UpdateResult(GetParam().pods, GetParam().has_chief, GetParam().previous),
            GetParam().want);
}

constexpr char kChiefMessage[] =
    R"({"globalStep":1000,"loss":0.25,"trainAccuracy":0.9,"trainSeconds":12.5})";
constexpr char kEvalMessage[] = R"({"globalStep":900,"accuracy":0.85,"loss":0.4})";

api::JobResult Trained() {
  return {.global_step = 1000, .loss = 0.25, .train_accuracy = 0.9, .train_seconds = 12.5};
}
api::JobResult Evaluated() { return {.accuracy = 0.85, .eval_loss = 0.4, .evaluated_step = 900}; }
api::JobResult Both() {
  api::JobResult r = Trained();
  r.accuracy = 0.85;
  r.eval_loss = 0.4;
  r.evaluated_step = 900;
  return r;
}

INSTANTIATE_TEST_SUITE_P(
    Table, ResultPolicyTest,
    ::testing::Values(
        ResultCase{"NothingYet",
                   {Ended(ReplicaType::kChief, 0, PodPhase::kRunning, "")},
                   true,
                   std::nullopt,
                   std::nullopt},
        ResultCase{"SucceededChief",
                   {Ended(ReplicaType::kChief, 0, PodPhase::kSucceeded, kChiefMessage)},
                   true,
                   std::nullopt,
                   Trained()},
        ResultCase{"ChiefAndEvaluator",
                   {Ended(ReplicaType::kChief, 0, PodPhase::kSucceeded, kChiefMessage),
                    Ended(ReplicaType::kEvaluator, 0, PodPhase::kSucceeded, kEvalMessage)},
                   true,
                   std::nullopt,
                   Both()},
        ResultCase{"FailedChiefIsNoResult",
                   {Ended(ReplicaType::kChief, 0, PodPhase::kFailed, kChiefMessage)},
                   true,
                   std::nullopt,
                   std::nullopt},
        ResultCase{"WorkerZeroWithoutChief",
                   {Ended(ReplicaType::kWorker, 0, PodPhase::kSucceeded, kChiefMessage)},
                   false,
                   std::nullopt,
                   Trained()},
        ResultCase{"OtherWorkersAreNotTheChief",
                   {Ended(ReplicaType::kWorker, 1, PodPhase::kSucceeded, kChiefMessage)},
                   false,
                   std::nullopt,
                   std::nullopt},
        ResultCase{"WorkerZeroIsNotTheChiefWhenThereIsOne",
                   {Ended(ReplicaType::kWorker, 0, PodPhase::kSucceeded, kChiefMessage)},
                   true,
                   std::nullopt,
                   std::nullopt},
        ResultCase{"TextMessageIgnored",
                   {Ended(ReplicaType::kChief, 0, PodPhase::kSucceeded, "all done!")},
                   true,
                   std::nullopt,
                   std::nullopt},
        ResultCase{"WrongTypesIgnored",
                   {Ended(ReplicaType::kChief, 0, PodPhase::kSucceeded, R"({"globalStep":"x"})")},
                   true,
                   std::nullopt,
                   std::nullopt},
        ResultCase{"KeptWhenPodsAreGone", {}, true, Both(), Both()},
        ResultCase{"EvaluatorAddsToAKnownResult",
                   {Ended(ReplicaType::kEvaluator, 0, PodPhase::kSucceeded, kEvalMessage)},
                   true,
                   Trained(),
                   Both()}),
    [](const auto& info) { return info.param.name; });

TEST(ResultPolicyTest, DescribesWhatIsKnown) {
  EXPECT_EQ(
      DescribeResult(Both()),
      "global step 1000, loss 0.2500, train accuracy 0.9000, test accuracy 0.8500 at step 900");
  EXPECT_EQ(DescribeResult(Evaluated()), "test accuracy 0.8500 at step 900");
}

TEST(ConditionsTest, AnOutcomeIsAddedFalseTooWhereAStateIsNot) {
  api::JobStatus s;
  const absl::Time t = absl::FromUnixSeconds(100);
  SetCondition(&s, kRestarting, false, "x", "y", t);
  EXPECT_EQ(FindCondition(s, kRestarting), nullptr);
  AddCondition(&s, kEvaluated, false, "EvaluationTimedOut", "late", t);
  ASSERT_NE(FindCondition(s, kEvaluated), nullptr);
  EXPECT_FALSE(FindCondition(s, kEvaluated)->status);
  EXPECT_EQ(FindCondition(s, kEvaluated)->reason, "EvaluationTimedOut");
}

TEST(ConditionsTest, TransitionTimeMovesOnlyWhenStatusFlips) {
  api::JobStatus s;
  const absl::Time t0 = absl::FromUnixSeconds(100), t1 = absl::FromUnixSeconds(200);
  SetCondition(&s, kRestarting, false, "x", "y", t0);
  EXPECT_TRUE(s.conditions.empty()) << "a False condition that never held is not added";
  SetCondition(&s, kCreated, true, "JobCreated", "m", t0);
  SetCondition(&s, kRunning, true, "PodsRunning", "all running", t0);
  SetCondition(&s, kRunning, true, "PodsRunning", "still running", t1);
  EXPECT_EQ(FindCondition(s, kRunning)->last_transition_time, t0);
  EXPECT_EQ(FindCondition(s, kRunning)->message, "still running");
  SetCondition(&s, kRunning, false, "PodRestarting", "pod x exited", t1);
  EXPECT_EQ(FindCondition(s, kRunning)->last_transition_time, t1);
  EXPECT_EQ(CurrentState(s), "Created");
}

TEST(ConditionsTest, StateIsTheCurrentOneByPrecedence) {
  api::JobStatus s;
  const absl::Time t = absl::FromUnixSeconds(1);
  EXPECT_EQ(CurrentState(s), "");
  SetCondition(&s, kCreated, true, "", "", t);
  EXPECT_EQ(CurrentState(s), "Created");
  SetCondition(&s, kRunning, true, "", "", t);
  EXPECT_EQ(CurrentState(s), "Running");
  SetCondition(&s, kRestarting, true, "", "", t);
  EXPECT_EQ(CurrentState(s), "Restarting");
  SetCondition(&s, kSuspended, true, "", "", t);
  EXPECT_EQ(CurrentState(s), "Suspended");
  SetCondition(&s, kSucceeded, true, "", "", t);
  EXPECT_EQ(CurrentState(s), "Succeeded");
  EXPECT_TRUE(IsFinished(s));
  SetCondition(&s, kFailed, true, "", "", t);
  EXPECT_EQ(CurrentState(s), "Failed");
}

PodState Pod(std::string uid, int restarts, PodPhase phase = PodPhase::kRunning,
             bool ready = true) {
  PodState p;
  p.name = uid;
  p.uid = std::move(uid);
  p.restart_count = restarts;
  p.phase = phase;
  p.ready = ready;
  return p;
}

api::JobStatus StatusWith(int32_t past, int32_t recorded_restarts,
                          std::vector<std::string> restarting = {}) {
  api::JobStatus s;
  s.replica_statuses[ReplicaType::kWorker].past_restarts = past;
  s.replica_statuses[ReplicaType::kWorker].restarts = recorded_restarts;
  s.restarting_pods = std::move(restarting);
  return s;
}

struct RestartCase {
  std::string name;
  api::JobStatus status;
  std::vector<PodState> pods;
  int32_t backoff_limit;
  int32_t more;
  int32_t want_total;
  bool want_within;
  bool want_new_in_place;
};

class RestartPolicyTest : public ::testing::TestWithParam<RestartCase> {};

TEST_P(RestartPolicyTest, CountsRestartsOnceAndChecksBackoffLimit) {
  const RestartCase& c = GetParam();
  api::DistributedTraining job = JobBuilder("j").Workers(2).Build();
  job.spec.run_policy.backoff_limit = c.backoff_limit;
  RestartTally tally = CountRestarts(c.status, c.pods);
  EXPECT_EQ(tally.total(), c.want_total);
  EXPECT_EQ(WithinBackoffLimit(job, tally, c.more), c.want_within);
  EXPECT_EQ(RestartedInPlaceSince(c.status, tally), c.want_new_in_place);
}

INSTANTIATE_TEST_SUITE_P(
    Table, RestartPolicyTest,
    ::testing::Values(
        RestartCase{
            "NoRestarts", StatusWith(0, 0), {Pod("a", 0), Pod("b", 0)}, 0, 0, 0, true, false},
        RestartCase{"BackoffLimitZeroAllowsNoRecreation",
                    StatusWith(0, 0),
                    {Pod("a", 0)},
                    0,
                    1,
                    0,
                    false,
                    false},
        RestartCase{"InPlaceRestartsCount",
                    StatusWith(0, 0),
                    {Pod("a", 2), Pod("b", 1)},
                    3,
                    0,
                    3,
                    true,
                    true},
        RestartCase{
            "InPlaceRestartsOverTheLimit", StatusWith(0, 0), {Pod("a", 4)}, 3, 0, 4, false, true},
        RestartCase{"AlreadyRecordedInPlaceRestartsAreNotNew",
                    StatusWith(0, 2),
                    {Pod("a", 2)},
                    6,
                    0,
                    2,
                    true,
                    false},
        RestartCase{"PastPlusInPlace", StatusWith(2, 3), {Pod("a", 1)}, 6, 0, 3, true, false},
        RestartCase{
            "ARecreationAtTheLimitFits", StatusWith(2, 2), {Pod("a", 0)}, 3, 1, 2, true, false},
        RestartCase{"ARecreationPastTheLimitDoesNot",
                    StatusWith(3, 3),
                    {Pod("a", 0)},
                    3,
                    1,
                    3,
                    false,
                    false},
        // A pod being replaced: its 2 in-place restarts moved into pastRestarts (1 + 2).
        RestartCase{"APodBeingReplacedCountsOnlyInPast",
                    StatusWith(3, 3, {"a"}),
                    {Pod("a", 2, PodPhase::kFailed)},
                    6,
                    0,
                    3,
                    true,
                    false}),
    [](const auto& info) { return info.param.name; });

struct ReadinessCase {
  std::string name;
  std::vector<std::pair<int, PodState>> workers;  // index -> pod
  std::vector<int> succeeded;
  int want_wanted, want_running;
};

class RunningPolicyTest : public ::testing::TestWithParam<ReadinessCase> {};

TEST_P(RunningPolicyTest, CountsWantedAndRunningReplicas) {
  const ReadinessCase& c = GetParam();
  api::DistributedTraining job = JobBuilder("j").Workers(3).Build();
  PodsByReplica pods;
  for (const auto& [i, pod] : c.workers) pods[{ReplicaType::kWorker, i}] = pod;
  auto succeeded = [&](ReplicaType, int i) {
    return std::find(c.succeeded.begin(), c.succeeded.end(), i) != c.succeeded.end();
  };
  Readiness r = CountReadiness(job, pods, succeeded);
  EXPECT_EQ(r.wanted, c.want_wanted);
  EXPECT_EQ(r.running, c.want_running);
  EXPECT_EQ(r.EnoughRunning(), r.AllRunning()) << "without an elasticPolicy they agree";
}

TEST(RunningPolicyTest, WithAnElasticPolicyMinReplicasOfTheWorkersAreEnough) {
  api::DistributedTraining job = JobBuilder("j").Chief().Workers(3).Build();
  PodsByReplica pods = {{{ReplicaType::kChief, 0}, Pod("c", 0)},
                        {{ReplicaType::kWorker, 0}, Pod("a", 0)},
                        {{ReplicaType::kWorker, 1}, Pod("b", 0)}};  // worker 2: unschedulable
  auto none = [](ReplicaType, int) { return false; };
  EXPECT_FALSE(CountReadiness(job, pods, none).EnoughRunning()) << "no elasticPolicy: all three";
  job.spec.elastic_policy = api::ElasticPolicy{2, 4};
  Readiness r = CountReadiness(job, pods, none);
  EXPECT_TRUE(r.EnoughRunning()) << r.workers_running << " of " << r.workers_enough;
  EXPECT_FALSE(r.AllRunning()) << "a restarted or pending worker still is not running";
  EXPECT_EQ(r.workers_running, 2);
  EXPECT_EQ(r.workers_wanted, 3);
  pods[{ReplicaType::kWorker, 2}] = Pod("d", 0);
  EXPECT_TRUE(CountReadiness(job, pods, none).AllRunning());
  pods.erase({ReplicaType::kWorker, 1});
  pods.erase({ReplicaType::kWorker, 2});
  EXPECT_FALSE(CountReadiness(job, pods, none).EnoughRunning()) << "one worker: below minReplicas";
  pods.erase({ReplicaType::kChief, 0});
  pods[{ReplicaType::kWorker, 1}] = Pod("b", 0);
  EXPECT_FALSE(CountReadiness(job, pods, none).EnoughRunning()) << "the chief is never optional";
}

PodState Terminating() {
  PodState p = Pod("t", 0);
  p.terminating = true;
  return p;
}

INSTANTIATE_TEST_SUITE_P(
    Table, RunningPolicyTest,
    ::testing::Values(
        ReadinessCase{"NoPods", {}, {}, 3, 0},
        ReadinessCase{
            "AllRunningAndReady", {{0, Pod("a", 0)}, {1, Pod("b", 0)}, {2, Pod("c", 0)}}, {}, 3, 3},
        ReadinessCase{
            "RunningButNotReady", {{0, Pod("a", 0, PodPhase::kRunning, false)}}, {}, 3, 0},
        ReadinessCase{"SucceededAreNotWanted", {{0, Pod("a", 0)}}, {1, 2}, 1, 1},
        ReadinessCase{"TerminatingDoesNotRun", {{0, Terminating()}}, {1, 2}, 1, 0}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace disttrain::policy
