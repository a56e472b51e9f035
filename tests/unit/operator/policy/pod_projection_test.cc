// What the pod and Service caches keep of an object (pod_projection.h), from its JSON; the
// protobuf path is held equal to this one in pod_projection_proto_test.cc.
#include "operator/policy/pod_projection.h"

#include <optional>

#include "gtest/gtest.h"
#include "operator/policy/pod_state.h"

namespace disttrain::policy {
namespace {

using nlohmann::json;

TEST(PodProjectionTest, KeepsEverythingTheReconcilerReadsAndDropsTheRest) {
  json pod = json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "d-ps-0", "namespace": "ns", "uid": "u", "resourceVersion": "7",
      "labels": {"disttrain.io/replica-type": "ps", "disttrain.io/replica-index": "0",
        "disttrain.io/job-name": "d", "app.kubernetes.io/managed-by": "disttrain-operator", "team": "a"},
      "annotations": {"big": "x"}, "ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": "not-the-controller"},
        {"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining", "name": "d", "uid": "job",
         "controller": true, "blockOwnerDeletion": true}],
      "deletionTimestamp": "2026-01-01T00:00:00Z"},
    "spec": {"containers": [{"name": "tensorflow", "image": "i", "env": [{"name": "TF_CONFIG", "value": "{}"}]}],
             "volumes": [{"name": "v"}]},
    "status": {"phase": "Running", "podIP": "10.1.2.3", "podIPs": [{"ip": "10.1.2.3"}], "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"},
      {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager", "message": "m"}],
      "containerStatuses": [{"name": "tensorflow", "restartCount": 3, "image": "i",
        "state": {"running": {"startedAt": "t"}}, "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled", "finishedAt": "t"}}}]}})");
  json projected = ProjectPod(pod);
  std::optional<PodState> full = ReadPodState(pod), small = ReadPodState(projected);
  ASSERT_TRUE(full && small);
  EXPECT_EQ(small->name, full->name);
  EXPECT_EQ(small->uid, full->uid);
  EXPECT_EQ(small->phase, full->phase);
  EXPECT_EQ(small->terminating, full->terminating);
  EXPECT_EQ(small->ready, full->ready);
  EXPECT_EQ(small->evicted_from_lost_node, full->evicted_from_lost_node);
  EXPECT_TRUE(small->evicted_from_lost_node);
  EXPECT_EQ(small->exit_code, full->exit_code);
  EXPECT_EQ(small->reason, full->reason);
  EXPECT_EQ(small->restart_count, full->restart_count);
  EXPECT_EQ(small->termination_message, full->termination_message);
  EXPECT_EQ(small->ip, "10.1.2.3") << "where the operator reads the job's progress";
  EXPECT_FALSE(projected["status"].contains("podIPs"));
  // Of the owner references, the controller's uid alone; of the labels, the operator's own that
  // the reconciler and the event handlers read.
  EXPECT_EQ(projected["metadata"]["ownerReferences"],
            json::parse(R"([{"uid": "job", "controller": true}])"));
  EXPECT_EQ(projected["metadata"]["labels"],
            json::parse(R"({"disttrain.io/replica-type": "ps", "disttrain.io/replica-index": "0",
                            "disttrain.io/job-name": "d"})"));
  EXPECT_FALSE(projected["metadata"].contains("annotations"));
  EXPECT_FALSE(projected["spec"].contains("volumes"));
  EXPECT_FALSE(projected["spec"]["containers"][0].contains("env"));
}

TEST(PodProjectionTest, AServiceKeepsOnlyTheMetadataTheReconcilerReads) {
  json svc = json::parse(R"({"apiVersion": "v1", "kind": "Service",
    "metadata": {"name": "d-ps-0", "namespace": "ns", "uid": "s", "resourceVersion": "9",
      "labels": {"disttrain.io/job-name": "d", "disttrain.io/replica-type": "ps",
        "app.kubernetes.io/managed-by": "disttrain-operator"}, "annotations": {"a": "b"},
      "ownerReferences": [{"apiVersion": "disttrain.io/v1", "kind": "DistributedTraining",
        "name": "d", "uid": "job", "controller": true, "blockOwnerDeletion": true}],
      "managedFields": [{"manager": "disttrain-operator"}]},
    "spec": {"clusterIP": "None", "ports": [{"port": 2222}], "selector": {"x": "y"}},
    "status": {"loadBalancer": {}}})");
  json projected = ProjectService(svc);
  EXPECT_EQ(projected, json::parse(R"({"apiVersion": "v1", "kind": "Service",
    "metadata": {"name": "d-ps-0", "namespace": "ns", "uid": "s", "resourceVersion": "9",
      "labels": {"disttrain.io/job-name": "d"},
      "ownerReferences": [{"uid": "job", "controller": true}]}})"));
}

}  // namespace
}  // namespace disttrain::policy
