// The views of kubectl dtr: pod rows, the status report, merged log lines and the top table.
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugin/commands.h"
#include "plugin/job_view.h"
#include "plugin/log_lines.h"
#include "plugin/usage.h"

namespace disttrain::plugin {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

json Pod(const std::string& role, int index, const std::string& phase, json container_state,
         int restarts = 0) {
  return {
      {"metadata",
       {{"name", "mnist-" + role + "-" + std::to_string(index)},
        {"uid", role + std::to_string(index)},
        {"creationTimestamp", "2026-11-22T10:00:00Z"},
        {"labels",
         {{"disttrain.io/replica-type", role},
          {"disttrain.io/replica-index", std::to_string(index)}}}}},
      {"spec",
       {{"nodeName", "node-1"}, {"containers", {{{"name", "sidecar"}}, {{"name", "tensorflow"}}}}}},
      {"status",
       {{"phase", phase},
        {"conditions", {{{"type", "Ready"}, {"status", phase == "Running" ? "True" : "False"}}}},
        {"containerStatuses",
         {{{"name", "sidecar"}, {"restartCount", 9}, {"state", {{"running", json::object()}}}},
          {{"name", "tensorflow"}, {"restartCount", restarts}, {"state", container_state}}}}}}};
}

absl::Time At(const std::string& rfc3339) {
  absl::Time t;
  std::string err;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, rfc3339, &t, &err)) << err;
  return t;
}

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

TEST(CommandsTest, AJobIsNamedAsKubectlNamesItsType) {
  Target t;
  for (const char* ref : {"mnist", "dtr/mnist", "distributedtraining/mnist",
                          "DistributedTrainings.disttrain.io/mnist"}) {
    ASSERT_TRUE(ParseJobRef(ref, &t).ok()) << ref;
    EXPECT_EQ(t.kind, &api::kDistributedTrainingKind) << ref;
    EXPECT_EQ(t.job, "mnist");
  }
  for (const char* ref : {"tfjob/mnist", "tfjobs/mnist", "TFJob.kubeflow.org/mnist"}) {
    ASSERT_TRUE(ParseJobRef(ref, &t).ok()) << ref;
    EXPECT_EQ(t.kind, &api::kTfJobKind) << ref;
    EXPECT_EQ(t.job, "mnist");
  }
  EXPECT_THAT(ParseJobRef("pytorchjob/mnist", &t).message(),
              HasSubstr("unknown job type \"pytorchjob\": want NAME, dtr/NAME or tfjob/NAME"));
  EXPECT_THAT(ParseJobRef("tfjob/", &t).message(), HasSubstr("no job name"));
}

TEST(JobViewTest, StatusShowsResultsWithFourSignificantDigits) {
  json job = json::parse(R"({"metadata": {"name": "mnist", "namespace": "ml"},
    "status": {"result": {"globalStep": 1500, "loss": 0.3738555521875494, "accuracy": 0.84563,
                          "evalLoss": 0.00001234, "trainSeconds": 42.25}}})");
  EXPECT_THAT(FormatStatus(job, {}, absl::Now()),
              HasSubstr("Result:     step 1500, loss 0.3739, test accuracy 0.8456, test loss "
                        "1.234e-05, training seconds 42.2\n"));
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

TEST(LogLinesTest, SplitsTheTimestampTheApiServerAdds) {
  LogLine l = ParseLogLine("2026-11-22T10:00:01.5Z {\"event\":\"step\"}");
  ASSERT_TRUE(l.time.has_value());
  EXPECT_EQ(*l.time, At("2026-11-22T10:00:01.5Z"));
  EXPECT_EQ(l.text, "{\"event\":\"step\"}");
  EXPECT_FALSE(ParseLogLine("no timestamp here").time.has_value());
  EXPECT_EQ(ParseLogLine("no timestamp here").text, "no timestamp here");
}

TEST(LogLinesTest, MergesPodsInTimeOrderWithAlignedPrefixes) {
  // Fractions of different lengths (RFC 3339 drops trailing zeros) must compare as times.
  std::vector<PodLog> logs = {
      {"mnist.chief.0",
       {ParseLogLine("2026-11-22T10:00:01.1Z chief a"), ParseLogLine("continued"),
        ParseLogLine("2026-11-22T10:00:03Z chief b")}},
      {"mnist.ps.0",
       {ParseLogLine("2026-11-22T10:00:01.05Z ps a"), ParseLogLine("2026-11-22T10:00:02Z ps b")}}};
  EXPECT_THAT(
      MergeLogs(logs, false),
      ElementsAre("mnist.ps.0    | ps a", "mnist.chief.0 | chief a", "mnist.chief.0 | continued",
                  "mnist.ps.0    | ps b", "mnist.chief.0 | chief b"));
  EXPECT_EQ(MergeLogs(logs, true)[0], "2026-11-22T10:00:01.05+00:00 mnist.ps.0    | ps a");
}

TEST(LogLinesTest, APreviousRunIsMarkedAndComesBeforeTheRunAfterItsRestart) {
  // The run killed at 10:00:03 and the one the kubelet started then: a line of each at the same
  // instant keeps the previous run's first (logs.cc lists it first).
  std::vector<PodLog> logs = {
      {"mnist.worker.0",
       {ParseLogLine("2026-11-22T10:00:01Z starting"), ParseLogLine("2026-11-22T10:00:03Z last")},
       true},
      {"mnist.worker.0",
       {ParseLogLine("2026-11-22T10:00:03Z starting"), ParseLogLine("2026-11-22T10:00:04Z step")},
       false},
      {"mnist.ps.0", {ParseLogLine("2026-11-22T10:00:01.5Z listening")}, false}};
  EXPECT_THAT(
      MergeLogs(logs, false),
      ElementsAre("mnist.worker.0 (previous) | starting", "mnist.ps.0                | listening",
                  "mnist.worker.0 (previous) | last", "mnist.worker.0            | starting",
                  "mnist.worker.0            | step"));
  EXPECT_EQ(RunPrefix("mnist.worker.0", false), "mnist.worker.0");
}

TEST(UsageTest, ReadsTheSummaryAndFormatsMillicoresAndMebibytes) {
  json summary = json::parse(R"({"node": {"nodeName": "node-1"}, "pods": [
    {"podRef": {"name": "mnist-chief-0", "namespace": "ml", "uid": "chief0"},
     "cpu": {"usageNanoCores": 250400000}, "memory": {"workingSetBytes": 52428800}},
    {"podRef": {"name": "mnist-ps-0", "namespace": "ml", "uid": "ps0"}, "cpu": {}, "memory": {"workingSetBytes": 1048576}},
    {"podRef": {"name": "other", "namespace": "ml", "uid": "x"}}]})");
  std::map<std::string, PodUsage> usage = ReadSummary(summary);
  ASSERT_EQ(usage.size(), 3u);
  EXPECT_EQ(usage["chief0"].nano_cores, 250400000u);
  EXPECT_FALSE(usage["ps0"].nano_cores.has_value());
  std::vector<PodRow> rows =
      ReadPods("mnist", {Pod("chief", 0, "Running", {{"running", json::object()}}),
                         Pod("ps", 0, "Running", {{"running", json::object()}})});
  rows.push_back(rows[1]);
  rows[2].name = "mnist-ps-1";
  rows[2].uid = "ps1";
  rows[2].node = "node-2";
  EXPECT_EQ(FormatTop(rows, usage, {{"node-2", "no kubelet"}}),
            "POD             ROLE      CPU(cores)   MEMORY(bytes)   NODE\n"
            "mnist-chief-0   chief 0   250m         50Mi            node-1\n"
            "mnist-ps-0      ps 0      -            1Mi             node-1\n"
            "mnist-ps-1      ps 0      <unknown>    <unknown>       node-2\n"
            "TOTAL                     250m         51Mi            \n"
            "node node-2: no kubelet\n");
}

TEST(UsageTest, APodIsTheSumOfItsContainersAsMetricsServerReportsIt) {
  // What the test node's kubelet (cgroupfs driver) served: zeros for the pod's own cgroup, real
  // figures per container.
  json summary = json::parse(R"({"pods": [
    {"podRef": {"name": "mnist-ps-0", "uid": "ps0"},
     "cpu": {"usageNanoCores": 0}, "memory": {"workingSetBytes": 0},
     "containers": [
       {"name": "tensorflow", "cpu": {"usageNanoCores": 175842859}, "memory": {"workingSetBytes": 41943040}},
       {"name": "sidecar", "cpu": {"usageNanoCores": 1000000}, "memory": {"workingSetBytes": 1048576}}]},
    {"podRef": {"name": "mnist-chief-0", "uid": "chief0"},
     "cpu": {"usageNanoCores": 0}, "memory": {"workingSetBytes": 0},
     "containers": [{"name": "tensorflow", "cpu": {}, "memory": {}}]}]})");
  std::map<std::string, PodUsage> usage = ReadSummary(summary);
  EXPECT_EQ(usage["ps0"].nano_cores, 176842859u);
  EXPECT_EQ(usage["ps0"].working_set_bytes, 42991616u);
  EXPECT_EQ(usage["chief0"].nano_cores, 0u) << "no container figure: the pod's own";
  EXPECT_EQ(usage["chief0"].working_set_bytes, 0u);
}

}  // namespace
}  // namespace disttrain::plugin
