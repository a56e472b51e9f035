// The reconciler on a fake API server: the job's headless Service (api::Addressing) — made with
// the first pod, made again when missing, never taken from another owner, kept per replica for
// jobs that had them, and deleted with the last pod under cleanPodPolicy All.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/controller/job_reconciler.h"
#include "operator/policy/desired_objects.h"
#include "tests/unit/operator/controller/reconciler_harness.h"

namespace disttrain::controller {
namespace {

using ::disttrain::policy::kCreated;
using ::disttrain::policy::kSucceeded;
using nlohmann::json;
using testing::Harness;
using testing::JobJson;
using testing::kAllPods;

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

}  // namespace
}  // namespace disttrain::controller
