// Tests operator/controller/job_reconciler_children.cc on a fake API server: what the reconciler
// creates and deletes. The job's headless Service (api::Addressing): made with the first pod, made
// again when missing, never taken from another owner, kept per replica for jobs that had them,
// deleted with the last pod under cleanPodPolicy All. Pods: not created twice by a pass behind its
// own creates, added and removed by scaling, deleted on suspend and cleanup, replaced when their
// node is lost; the job deleted after its TTL.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/controller/job_reconciler.h"
#include "operator/policy/desired_objects.h"
#include "tests/unit/operator/controller/reconciler_harness.h"

namespace disttrain::controller {
namespace {

using ::disttrain::policy::FindCondition;
using ::disttrain::policy::kCreated;
using ::disttrain::policy::kRunning;
using ::disttrain::policy::kSucceeded;
using ::disttrain::policy::kSuspended;
using nlohmann::json;
using testing::Harness;
using testing::JobJson;
using testing::kAllPods;
using testing::ScaleWorkers;

TEST(JobReconcilerTest, CreatesEveryPodAndTheServiceOfANewJob) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  for (const std::string& name : kAllPods) {
    EXPECT_TRUE(h.HasPod(name)) << name;
    absl::StatusOr<json> pod = h.client.Get(kube::kPods, "default", name);
    EXPECT_EQ((*pod)["spec"]["hostname"], name);
    EXPECT_EQ((*pod)["spec"]["subdomain"], "dist");
  }
  // One headless Service for the whole job: <pod>.dist.default.svc.
  EXPECT_EQ(h.Requests("create", "services"), 1);
  EXPECT_TRUE(h.client.Get(kube::kServices, "default", "dist").ok());
  EXPECT_EQ(h.events.Count("SuccessfulCreatePod"), 1);
  ASSERT_TRUE(h.Pass().ok());  // the pass the new pods' events bring writes the status
  EXPECT_EQ(h.State(), kCreated);
  EXPECT_EQ(h.Requests("create", "services"), 1);
}

TEST(JobReconcilerTest, AJobFoundWithAServicePerReplicaKeepsThemForItsNewPods) {
  Harness h;
  // What an operator before the job's Service made: a Service per pod, pods without subdomain.
  api::DistributedTraining job = *api::DecodeJob(JobJson());
  job.addressing = api::Addressing::kReplicaServices;
  absl::StatusOr<policy::DesiredObjects> old = policy::BuildDesiredObjects(job, {});
  ASSERT_TRUE(old.ok());
  for (const policy::ReplicaObjects& r : old->replicas) {
    h.client.Put(kube::kServices, r.service);
    h.client.Put(kube::kPods, r.pod);
  }
  ASSERT_TRUE(h.Pass().ok());
  h.client.Delete(kube::kPods, "default", "dist-worker-1", {}).IgnoreError();
  h.client.Delete(kube::kServices, "default", "dist-worker-1", {}).IgnoreError();
  h.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(h.Pass().ok());
  absl::StatusOr<json> pod = h.client.Get(kube::kPods, "default", "dist-worker-1");
  ASSERT_TRUE(pod.ok());
  EXPECT_FALSE((*pod)["spec"].contains("subdomain"));
  EXPECT_NE((*pod)["spec"]["containers"][0].dump().find("dist-ps-0.default.svc:2222"),
            std::string::npos);
  EXPECT_TRUE(h.client.Get(kube::kServices, "default", "dist-worker-1").ok());
  EXPECT_FALSE(h.client.Get(kube::kServices, "default", "dist").ok());
}

TEST(JobReconcilerTest, AServiceOfAnotherOwnerNamedLikeTheJobIsReportedNotUsed) {
  Harness h;
  h.client.Put(kube::kServices, json{{"apiVersion", "v1"},
                                     {"kind", "Service"},
                                     {"metadata", {{"name", "dist"}, {"namespace", "default"}}},
                                     {"spec", {{"selector", {{"app", "serving"}}}}}});
  EXPECT_FALSE(h.Pass().ok()) << "retried with backoff, should the Service be renamed";
  EXPECT_TRUE(h.Condition(policy::kReplicaFailure));
  api::JobStatus status = h.Status();
  const api::Condition* c = policy::FindCondition(status, policy::kReplicaFailure);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->reason, "FailedCreate");
  EXPECT_THAT(c->message, ::testing::HasSubstr("Service default/dist exists and does not belong"));
  EXPECT_GE(h.events.Count("FailedCreateService"), 1);
  // Not taken over: its selector is still its owner's.
  EXPECT_EQ((*h.client.Get(kube::kServices, "default", "dist"))["spec"]["selector"]["app"],
            "serving");
}

TEST(JobReconcilerTest, AMissingServiceOfTheJobIsMadeAgainThoughEveryPodExists) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.Sync();  // the informer shows it
  ASSERT_TRUE(h.client.Delete(kube::kServices, "default", "dist", {}).ok());
  h.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.client.Get(kube::kServices, "default", "dist").ok());
  EXPECT_EQ(h.Requests("create", "pods"), 4);
}

TEST(JobReconcilerTest, CleanPodPolicyAllTakesTheJobsServiceWithTheLastPod) {
  Harness h(JobJson({{"cleanPodPolicy", "All"}}));
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.client.Get(kube::kServices, "default", "dist").ok());
  h.SetPod("dist-chief-0", "Succeeded");
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kSucceeded);
  for (const std::string& name : kAllPods) EXPECT_FALSE(h.HasPod(name)) << name;
  EXPECT_FALSE(h.client.Get(kube::kServices, "default", "dist").ok());
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("delete", "services"), 1);
}

TEST(JobReconcilerTest, ATemplatesOwnHostnameOrTfConfigIsReplacedWithAWarningEvent) {
  json job = JobJson();
  json& worker = job["spec"]["replicaSpecs"]["Worker"]["template"]["spec"];
  worker["hostname"] = "mine";
  worker["containers"][0]["env"] = {{{"name", "TF_CONFIG"}, {"value", "{}"}}};
  Harness h(job);
  ASSERT_TRUE(h.Pass().ok());
  absl::StatusOr<json> pod = h.client.Get(kube::kPods, "default", "dist-worker-1");
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ((*pod)["spec"]["hostname"], "dist-worker-1");
  EXPECT_EQ(h.events.Count("HostnameReplaced"), 2);  // one per worker
  EXPECT_EQ(h.events.Count("TFConfigReplaced"), 2);
}

TEST(JobReconcilerTest, APassBehindItsOwnCreatesCreatesNothingAgain) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  const int pods = h.Requests("create", "pods"), services = h.Requests("create", "services");
  ASSERT_EQ(pods, 4);
  // The pod and Service caches have not seen the creates yet (a watch behind under load) when
  // the first pass's requeue comes back.
  h.clock.Advance(JobReconciler::kFirstWriteWait);
  ASSERT_TRUE(h.reconciler->Reconcile("default/dist").ok());
  EXPECT_EQ(h.Requests("create", "pods"), pods) << "409 AlreadyExists, a write for nothing";
  EXPECT_EQ(h.Requests("create", "services"), services);
  // A pod the cache has shown and that is gone now is created again at once.
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_TRUE(h.client.Delete(kube::kPods, "default", "dist-worker-1", {}).ok());
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("create", "pods"), pods + 1);
  // What the cache never shows is created again once kCreateSeenLimit has passed.
  ASSERT_TRUE(h.client.Delete(kube::kPods, "default", "dist-worker-1", {}).ok());
  h.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(h.reconciler->Reconcile("default/dist").ok());
  EXPECT_EQ(h.Requests("create", "pods"), pods + 1);
  h.clock.Advance(JobReconciler::kCreateSeenLimit);
  ASSERT_TRUE(h.reconciler->Reconcile("default/dist").ok());
  EXPECT_EQ(h.Requests("create", "pods"), pods + 2);
}

TEST(JobReconcilerTest, SucceedsWhenTheChiefSucceedsAndDeletesParameterServers) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  h.SetPod("dist-chief-0", "Succeeded");
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kSucceeded);
  EXPECT_FALSE(h.HasPod("dist-ps-0"));
  EXPECT_FALSE(h.HasPod("dist-worker-0"));
  EXPECT_TRUE(h.HasPod("dist-chief-0"));  // cleanPodPolicy Running keeps finished pods
}

TEST(JobReconcilerTest, AFinishedJobsOneWriteCountsThePodsItsCleanupDeletes) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  h.SetPod("dist-chief-0", "Succeeded");
  const int before = h.Requests("patch", "distributedtrainings");
  ASSERT_TRUE(h.Pass().ok());
  api::JobStatus status = h.Status();
  EXPECT_EQ(status.state, kSucceeded);
  EXPECT_EQ(status.replica_statuses[api::ReplicaType::kPS].active, 0);
  EXPECT_EQ(status.replica_statuses[api::ReplicaType::kWorker].active, 0);
  EXPECT_EQ(status.replica_statuses[api::ReplicaType::kChief].succeeded, 1);
  ASSERT_TRUE(h.Pass().ok());  // the deletions seen: nothing left to write
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), before + 1);
}

// The taint manager evicted a pod from a node that stayed unreachable: the delete marks it
// Terminating, and with no kubelet to confirm it would stay so, holding its name. The operator
// removes it at once (grace period 0, this very pod only) and the next pass creates the replica
// again, not counted as a restart. A pod deleted for any other reason is left to its grace.
TEST(JobReconcilerTest, APodEvictedFromALostNodeIsRemovedAndItsReplicaCreatedAgain) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  h.client.SetDeleteGraceful(true);
  ASSERT_TRUE(
      h.client.Delete(kube::kPods, "default", "dist-worker-0", {}).ok());  // a user's delete
  const std::string old_uid = h.Uid("dist-worker-1");
  ASSERT_TRUE(h.client.Delete(kube::kPods, "default", "dist-worker-1", {}).ok());
  absl::StatusOr<json> evicted = h.client.Get(kube::kPods, "default", "dist-worker-1");
  ASSERT_TRUE(evicted.ok());
  (*evicted)["status"]["conditions"].push_back(
      {{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", "DeletionByTaintManager"}});
  h.client.Put(kube::kPods, *evicted);
  h.client.ClearActions();

  ASSERT_TRUE(h.Pass().ok());
  EXPECT_FALSE(h.HasPod("dist-worker-1"));
  EXPECT_TRUE(h.HasPod("dist-worker-0")) << "a pod deleted by someone else keeps its grace period";
  int forced = 0;
  for (const auto& a : h.client.actions()) {
    if (a.verb == "delete" && a.resource == "pods") {
      EXPECT_EQ(a.name, "dist-worker-1");
      EXPECT_EQ(a.grace_period_seconds, 0);
      ++forced;
    }
  }
  EXPECT_EQ(forced, 1);
  EXPECT_EQ(h.events.Count("PodOfLostNodeRemoved"), 1);

  ASSERT_TRUE(h.Pass().ok());  // the informer saw it go
  ASSERT_TRUE(h.HasPod("dist-worker-1"));
  EXPECT_NE(h.Uid("dist-worker-1"), old_uid);
  EXPECT_EQ(h.Restarts(), 0);
  EXPECT_EQ(h.events.Count("PodOfLostNodeRemoved"), 1);
}

TEST(JobReconcilerTest, ScalingWorkersAddsAndRemovesWorkerPodsOnly) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Status().worker_selector,
            "disttrain.io/job-name=dist,disttrain.io/replica-type=worker");
  std::map<std::string, std::string> uids;
  for (const std::string& name : {"dist-chief-0", "dist-ps-0", "dist-worker-0"})
    uids[name] = h.Uid(name);

  ScaleWorkers(h, 4);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.HasPod("dist-worker-2"));
  EXPECT_TRUE(h.HasPod("dist-worker-3"));
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Status().replica_statuses.at(api::ReplicaType::kWorker).active, 2)
      << "a change of counts alone waits";
  h.clock.Advance(JobReconciler::kCountsWriteDelay);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Status().replica_statuses.at(api::ReplicaType::kWorker).active, 4);

  h.SetPod("dist-worker-3", "Failed", 143);  // SIGTERM of the scale-down, seen first
  ScaleWorkers(h, 1);
  ASSERT_TRUE(h.Pass().ok());
  for (const std::string& name : {"dist-worker-1", "dist-worker-2", "dist-worker-3"}) {
    EXPECT_FALSE(h.HasPod(name)) << name;
  }
  EXPECT_TRUE(h.client.Get(kube::kServices, "default", "dist").ok()) << "the job's stays";
  EXPECT_EQ(h.events.Count("ScaledDown"), 1);
  ASSERT_TRUE(h.Pass().ok());
  for (const auto& [name, uid] : uids) EXPECT_EQ(h.Uid(name), uid) << name << " was replaced";
  EXPECT_FALSE(h.HasPod("dist-worker-1")) << "a scaled-away worker came back";
  EXPECT_EQ(h.Restarts(), 0);
  EXPECT_EQ(h.State(), kRunning);
  EXPECT_EQ(h.Status().replica_statuses.at(api::ReplicaType::kWorker).active, 1);
}

TEST(JobReconcilerTest, SuspendDeletesThePodsAndResumeCreatesThemAgain) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  json job = *h.client.Get(kube::kDistributedTrainings, "default", "dist");
  job["spec"]["runPolicy"]["suspend"] = true;
  h.client.Put(kube::kDistributedTrainings, job);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kSuspended);
  EXPECT_TRUE(h.PodNames().empty());
  job = *h.client.Get(kube::kDistributedTrainings, "default", "dist");
  job["spec"]["runPolicy"]["suspend"] = false;
  h.client.Put(kube::kDistributedTrainings, job);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.PodNames().size(), 4u);
  EXPECT_FALSE(h.Condition(kSuspended));
}

TEST(JobReconcilerTest, DeletesAFinishedJobAfterItsTtl) {
  Harness h(JobJson({{"ttlSecondsAfterFinished", 30}}));
  ASSERT_TRUE(h.Pass().ok());
  h.SetPod("dist-chief-0", "Succeeded");
  absl::StatusOr<runtime::ReconcileResult> done = h.Pass();
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->requeue_after, absl::Seconds(30));
  h.clock.Advance(absl::Seconds(31));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_FALSE(h.client.Get(kube::kDistributedTrainings, "default", "dist").ok());
}

}  // namespace
}  // namespace disttrain::controller
