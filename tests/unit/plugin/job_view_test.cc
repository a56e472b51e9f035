#include "plugin/job_view.h"

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/plugin/pod_fixture.h"

namespace disttrain::plugin {
namespace {

using nlohmann::json;
using testing::At;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Pod;

TEST(JobViewTest, RowsComeInRoleOrderWithTheMainContainersState) {
  std::vector<PodRow> rows = ReadPods(
      "mnist",
      {Pod("worker", 1, "Running", {{"running", json::object()}}),
       Pod("evaluator", 0, "Pending", {{"waiting", {{"reason", "ContainerCreating"}}}}),
       Pod("ps", 0, "Running", {{"waiting", {{"reason", "CrashLoopBackOff"}}}}, 3),
       Pod("worker", 0, "Succeeded", {{"terminated", {{"exitCode", 0}, {"reason", "Completed"}}}}),
       Pod("chief", 0, "Running", {{"running", json::object()}})});
  std::vector<std::string> names;
  for (const PodRow& r : rows) names.push_back(r.name);
  EXPECT_THAT(names, ElementsAre("mnist-chief-0", "mnist-ps-0", "mnist-worker-0", "mnist-worker-1",
                                 "mnist-evaluator-0"));
  EXPECT_EQ(rows[0].prefix, "mnist.chief.0");
  EXPECT_EQ(rows[0].container, "tensorflow");
  EXPECT_EQ(rows[1].state, "Waiting (CrashLoopBackOff)");
  EXPECT_EQ(rows[1].restarts, 3) << "the main container's, not the sidecar's";
  EXPECT_TRUE(rows[1].container_started) << "a restarting container has logs of its last run";
  EXPECT_EQ(rows[2].state, "Terminated (Completed, code 0)");
  EXPECT_TRUE(rows[2].container_started);
  EXPECT_FALSE(rows[4].container_started);
  EXPECT_TRUE(rows[0].ready);
}

TEST(JobViewTest, APreviousRunIsReadOnlyWhenTheContainerRunsAgainAfterARestart) {
  const json killed = {{"terminated", {{"exitCode", 137}, {"reason", "Error"}}}};
  json restarted = Pod("worker", 0, "Running", {{"running", json::object()}}, 1);
  restarted["status"]["containerStatuses"][1]["lastState"] = killed;
  // Waiting to restart, its log is that same killed run: read once, not twice.
  json backing_off =
      Pod("worker", 1, "Running", {{"waiting", {{"reason", "CrashLoopBackOff"}}}}, 1);
  backing_off["status"]["containerStatuses"][1]["lastState"] = killed;
  json ended = Pod("worker", 2, "Succeeded",
                   {{"terminated", {{"exitCode", 0}, {"reason", "Completed"}}}}, 1);
  ended["status"]["containerStatuses"][1]["lastState"] = killed;
  std::vector<PodRow> rows = ReadPods(
      "mnist",
      {restarted, backing_off, ended, Pod("worker", 3, "Running", {{"running", json::object()}})});
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_TRUE(rows[0].previous_run);
  EXPECT_FALSE(rows[1].previous_run);
  EXPECT_TRUE(rows[1].container_started);
  EXPECT_TRUE(rows[2].previous_run);
  EXPECT_FALSE(rows[3].previous_run) << "never restarted";
}

TEST(JobViewTest, StatusShowsStateReplicasResultPodsAndConditions) {
  json job = json::parse(
      R"({"metadata": {"name": "mnist", "namespace": "ml", "creationTimestamp": "2026-11-22T10:00:00Z"},
    "status": {"state": "Succeeded",
      "replicaStatuses": {"Chief": {"progress": "0/1", "succeeded": 1}, "PS": {"progress": "0/2", "restarts": 1}},
      "result": {"globalStep": 1500, "loss": 0.31254, "accuracy": 0.8531, "evaluatedStep": 1500},
      "conditions": [{"type": "Succeeded", "status": "True", "reason": "JobSucceeded",
                      "message": "the chief succeeded", "lastTransitionTime": "2026-11-22T10:05:00Z"}]}})");
  std::vector<PodRow> rows = ReadPods(
      "mnist",
      {Pod("chief", 0, "Succeeded", {{"terminated", {{"exitCode", 0}, {"reason", "Completed"}}}})});
  const std::string out = FormatStatus(job, rows, At("2026-11-22T10:07:30Z"));
  EXPECT_THAT(out, HasSubstr("Job:        ml/mnist\n"));
  EXPECT_THAT(out, HasSubstr("State:      Succeeded, created 7m ago\n"));
  EXPECT_THAT(
      out, HasSubstr("Replicas:   Chief 0/1 running, 1 succeeded   PS 0/2 running, 1 restarts\n"));
  EXPECT_THAT(
      out,
      HasSubstr(
          "Result:     step 1500, loss 0.3125, test accuracy 0.8531, evaluated at step 1500\n"));
  EXPECT_THAT(out, HasSubstr("POD             ROLE      PHASE       CONTAINER                      "
                             "  READY   RESTARTS   NODE     AGE\n"
                             "mnist-chief-0   chief 0   Succeeded   Terminated (Completed, code 0) "
                             "  no      0          node-1   7m\n"));
  EXPECT_THAT(out, HasSubstr("Succeeded   True     JobSucceeded   2m    the chief succeeded\n"));
}

TEST(JobViewTest, ATfJobsStateIsItsLastConditionAndItsReplicasTheirCounts) {
  json job = json::parse(R"({"metadata": {"name": "mnist", "namespace": "ml"},
    "status": {"replicaStatuses": {"Worker": {"active": 1, "succeeded": 2, "failed": 1}},
      "conditions": [{"type": "Created", "status": "True", "reason": "TFJobCreated"},
                     {"type": "Restarting", "status": "True", "reason": "TFJobRestarting"}]}})");
  json pod = Pod("worker", 1, "Running", {{"running", json::object()}});
  pod["metadata"]["labels"] = {{"training.kubeflow.org/replica-type", "worker"},
                               {"training.kubeflow.org/replica-index", "1"}};
  std::vector<PodRow> rows = ReadPods("mnist", {pod}, api::kTfJobKind);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].role, "worker");
  EXPECT_EQ(rows[0].index, 1);
  const std::string out = FormatStatus(job, rows, absl::Now());
  EXPECT_THAT(out, HasSubstr("State:      Restarting\n"));
  EXPECT_THAT(out, HasSubstr("Replicas:   Worker 1 active, 2 succeeded, 1 failed\n"));
  EXPECT_THAT(out, HasSubstr("mnist-worker-1   worker 1"));
}

TEST(JobViewTest, StatusAndTopShowTheProgressWithTheTimeLeftCountedFromNow) {
  json job = json::parse(R"j({"metadata": {"name": "mnist", "namespace": "ml"},
    "status": {"state": "Running", "progress": {"globalStep": 1200, "targetSteps": 2000,
      "stepsPerSecond": 41.2512, "examplesPerSecond": 1320.04,
      "estimatedCompletionTime": "2026-11-22T10:04:10Z", "observeTime": "2026-11-22T10:00:00Z",
      "display": {"progress": "60% (1200/2000)", "remaining": "4m10s"}}}})j");
  const std::string line =
      "60% (1200/2000), 41.25 steps/s, 1320 examples/s, about 3m40s left; "
      "read 30s ago";
  EXPECT_EQ(FormatProgressLine(job["status"], At("2026-11-22T10:00:30Z")), line);
  EXPECT_THAT(FormatStatus(job, {}, At("2026-11-22T10:00:30Z")),
              HasSubstr("Progress:   " + line + "\nResult:"));
  EXPECT_EQ(FormatProgressLine(json::parse(R"({"progress": {"globalStep": 9}})"), absl::Now()),
            "step 9");
  EXPECT_EQ(FormatProgressLine(json::parse(R"({"state": "Running"})"), absl::Now()), "");
  EXPECT_EQ(FormatProgressLine(json::parse(R"({"progress": {"globalStep": "x"}})"), absl::Now()),
            "");
}

TEST(JobViewTest, StatusSaysWhyAJobWaitsAndForHowLong) {
  json job = json::parse(R"({"metadata": {"name": "mnist", "namespace": "ml"},
    "status": {"state": "Created", "conditions": [
      {"type": "Created", "status": "True", "reason": "JobCreated", "lastTransitionTime": "2026-11-22T10:00:00Z"},
      {"type": "Waiting", "status": "True", "reason": "Unschedulable",
       "message": "pod mnist-worker-0: 0/3 nodes are available", "lastTransitionTime": "2026-11-22T10:00:05Z"}]}})");
  EXPECT_THAT(FormatStatus(job, {}, At("2026-11-22T10:02:05Z")),
              HasSubstr("\nWaiting:    Unschedulable for 2m: pod mnist-worker-0: 0/3 nodes are "
                        "available\nResult:"));
  job["status"]["conditions"][1]["status"] = "False";
  EXPECT_THAT(FormatStatus(job, {}, At("2026-11-22T10:02:05Z")), Not(HasSubstr("Waiting:")));
}

TEST(JobViewTest, StatusShowsResultsWithFourSignificantDigits) {
  json job = json::parse(R"({"metadata": {"name": "mnist", "namespace": "ml"},
    "status": {"result": {"globalStep": 1500, "loss": 0.3738555521875494, "accuracy": 0.84563,
                          "evalLoss": 0.00001234, "trainSeconds": 42.25}}})");
  EXPECT_THAT(FormatStatus(job, {}, absl::Now()),
              HasSubstr("Result:     step 1500, loss 0.3739, test accuracy 0.8456, test loss "
                        "1.234e-05, training seconds 42.2\n"));
}

TEST(JobViewTest, StatusShowsAClickThroughModelsAuc) {
  json job = json::parse(R"({"metadata": {"name": "deepfm", "namespace": "ml"},
    "status": {"result": {"globalStep": 2000, "loss": 0.55, "trainAuc": 0.8123, "auc": 0.78123,
                          "logLoss": 0.5561, "evaluatedStep": 2000}}})");
  EXPECT_THAT(FormatStatus(job, {}, absl::Now()),
              HasSubstr("Result:     step 2000, loss 0.55, train AUC 0.8123, test AUC 0.7812, "
                        "test log loss 0.5561, evaluated at step 2000\n"));
}

TEST(JobViewTest, StatusOfAJobTheOperatorHasNotSeen) {
  const std::string out = FormatStatus(
      json::parse(R"({"metadata": {"name": "j", "namespace": "n"}})"), {}, absl::Now());
  EXPECT_THAT(out, HasSubstr("State:      Pending (not seen by the operator yet)\n"));
  EXPECT_THAT(out, HasSubstr("Result:     none yet\n"));
  EXPECT_THAT(out, HasSubstr("No pods.\n"));
}

TEST(JobViewTest, AgesReadLikeKubectls) {
  EXPECT_EQ(FormatAge(absl::Seconds(59)), "59s");
  EXPECT_EQ(FormatAge(absl::Seconds(119)), "119s");
  EXPECT_EQ(FormatAge(absl::Minutes(7)), "7m");
  EXPECT_EQ(FormatAge(absl::Hours(5)), "5h");
  EXPECT_EQ(FormatAge(absl::Hours(72)), "3d");
  EXPECT_EQ(FormatAge(-absl::Seconds(3)), "0s");
}

}  // namespace
}  // namespace disttrain::plugin
