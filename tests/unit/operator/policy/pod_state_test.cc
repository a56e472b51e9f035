// ReadPodState (pod_state.h): what the reconciler reads from a pod's status, and how an exit is
// described.
#include "operator/policy/pod_state.h"

#include <optional>

#include "gtest/gtest.h"
#include "operator/policy/pod_projection.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;
using nlohmann::json;

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

TEST(PodStateTest, ReadsWhyAPendingPodIsNotPlacedOrDoesNotStart) {
  json pod = json::parse(R"({"metadata": {"name": "d-worker-0", "uid": "u",
      "labels": {"disttrain.io/replica-type": "worker", "disttrain.io/replica-index": "0"}},
    "spec": {"containers": [{"name": "tensorflow"}]},
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
        "reason": "Unschedulable", "message": "0/2 nodes are available"}]}})");
  std::optional<PodState> s = ReadPodState(ProjectPod(pod));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->unscheduled_reason, "Unschedulable");
  EXPECT_EQ(s->unscheduled_message, "0/2 nodes are available");
  EXPECT_EQ(s->container_waiting_reason, "");

  pod["status"]["conditions"][0] = {{"type", "PodScheduled"}, {"status", "True"}};
  pod["status"]["containerStatuses"] = json::parse(R"([{"name": "tensorflow", "restartCount": 0,
      "state": {"waiting": {"reason": "ErrImagePull", "message": "not found"}}}])");
  s = ReadPodState(ProjectPod(pod));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->unscheduled_reason, "");
  EXPECT_EQ(s->container_waiting_reason, "ErrImagePull");
  EXPECT_EQ(s->container_waiting_message, "not found");
}

}  // namespace
}  // namespace disttrain::policy
