// The objects a job's pods need, created before the first of them
// (job_reconciler_prerequisites.cc): a gang's PodGroup (and with kube-scheduler's own gangs its
// Workload), the NetworkPolicy, the TLS Secret; and the PodGroup's upkeep while the job runs and
// once it finished.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "operator/controller/job_reconciler.h"
#include "tests/unit/operator/controller/reconciler_harness.h"

namespace disttrain::controller {

using ::disttrain::policy::kSucceeded;
namespace {

using nlohmann::json;
using testing::GangJob;
using testing::Harness;
using testing::JobJson;
using testing::ScaleWorkers;

absl::Status Unavailable() { return kube::StatusFromHttp(503, "{}", "injected"); }

TEST(JobReconcilerPrerequisitesTest, NoPodIsCreatedBeforeItsPodGroup) {
  Harness h(GangJob());
  h.client.FailNext("create", "podgroups", Unavailable());
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_TRUE(h.PodNames().empty());
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.client.Objects(kube::kVolcanoPodGroups).size(), 1u);
  EXPECT_EQ(h.PodNames().size(), 4u);
}

// kube-scheduler's own gangs: the Workload, then its PodGroup, then the pods that name it.
TEST(JobReconcilerPrerequisitesTest, AKubernetesGangsWorkloadAndPodGroupComeBeforeItsPods) {
  Harness h(GangJob());
  ReconcilerDeps deps = h.Deps();
  deps.build.gang_scheduler = policy::GangScheduler::kKubernetes;
  h.reconciler = std::make_unique<JobReconciler>(deps);
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_EQ(h.client.Objects(kube::kSchedulingWorkloads).size(), 1u);
  ASSERT_EQ(h.client.Objects(kube::kSchedulingPodGroups).size(), 1u);
  EXPECT_TRUE(h.client.Objects(kube::kVolcanoPodGroups).empty());
  std::vector<std::string> creates;
  for (const auto& a : h.client.actions()) {
    if (a.verb == "create") creates.push_back(a.resource);
  }
  ASSERT_GE(creates.size(), 3u);
  EXPECT_EQ(creates[0], "workloads");
  EXPECT_EQ(creates[1], "podgroups");
  EXPECT_EQ(h.PodNames().size(), 4u);
  for (const json& pod : h.client.Objects(kube::kPods)) {
    EXPECT_EQ(pod["spec"]["schedulingGroup"]["podGroupName"], "dist");
  }
  EXPECT_EQ(h.events.Count("SuccessfulCreateGangWorkload"), 1);
  EXPECT_EQ(h.events.Count("SuccessfulCreatePodGroup"), 1);
}

TEST(JobReconcilerPrerequisitesTest, WithoutTheWorkloadApiAKubernetesGangRunsUngangedAndWarnsOnce) {
  Harness h(GangJob());
  ReconcilerDeps deps = h.Deps();
  deps.build.gang_scheduler = policy::GangScheduler::kKubernetes;
  h.reconciler = std::make_unique<JobReconciler>(deps);
  h.client.FailNext("create", "workloads", absl::NotFoundError("the server could not find it"));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.events.Count("PodGroupUnavailable"), 1);
  EXPECT_EQ(h.Requests("create", "podgroups"), 0) << "the same API: not asked again";
  EXPECT_EQ(h.PodNames().size(), 4u);
}

// The NetworkPolicy comes first: no pod of the job runs unprotected, not even for a pass.
TEST(JobReconcilerPrerequisitesTest, NoPodIsCreatedBeforeItsNetworkPolicy) {
  Harness h;
  h.client.FailNext("create", "networkpolicies", Unavailable());
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_TRUE(h.PodNames().empty());
  EXPECT_EQ(h.events.Count("FailedCreateNetworkPolicy"), 1);
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_EQ(h.client.Objects(kube::kNetworkPolicies).size(), 1u);
  EXPECT_EQ(h.client.Objects(kube::kNetworkPolicies)[0]["metadata"]["name"], "dist");
  EXPECT_EQ(h.events.Count("SuccessfulCreateNetworkPolicy"), 1);
  EXPECT_EQ(h.PodNames().size(), 4u);
  h.client.ClearActions();
  ASSERT_TRUE(h.Pass().ok());  // pods exist: the policy is not asked for again
  EXPECT_EQ(h.Requests("create", "networkpolicies"), 0);
}

TEST(JobReconcilerPrerequisitesTest, AJobThatTurnsItOffGetsNoNetworkPolicy) {
  json job = JobJson();
  job["spec"]["networkPolicy"] = {{"enabled", false}};
  Harness h(job);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("create", "networkpolicies"), 0);
  EXPECT_EQ(h.PodNames().size(), 4u);
}

// spec.tls: the Secret comes before the pods that mount it, once; the job keeps it.
TEST(JobReconcilerPrerequisitesTest, ATlsJobsSecretIsCreatedBeforeItsPods) {
  json job = JobJson();
  job["spec"]["tls"] = {{"enabled", true}};
  Harness h(job);
  h.client.FailNext("create", "secrets", Unavailable());
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_TRUE(h.PodNames().empty());
  EXPECT_EQ(h.events.Count("FailedCreateTlsSecret"), 1);
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_EQ(h.client.Objects(kube::kSecrets).size(), 1u);
  const json secret = h.client.Objects(kube::kSecrets)[0];
  EXPECT_EQ(secret["metadata"]["name"], "dist-tls-job-uid");
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0]["uid"], "job-uid");
  EXPECT_EQ(secret["data"].size(), 9u);  // ca.crt + a certificate and key for each of 4 tasks
  EXPECT_EQ(h.events.Count("SuccessfulCreateTlsSecret"), 1);
  EXPECT_EQ(h.PodNames().size(), 4u);
  h.client.ClearActions();
  ASSERT_TRUE(h.Pass().ok());  // pods exist: the Secret is not asked for again
  EXPECT_EQ(h.Requests("create", "secrets"), 0);
  EXPECT_EQ(h.Requests("get", "secrets") + h.Requests("list", "secrets"), 0);  // never read
}

TEST(JobReconcilerPrerequisitesTest, ASecretNamedLikeTheJobButNotMadeForItIsNeverMounted) {
  json job = JobJson();
  job["spec"]["tls"] = {{"enabled", true}};
  Harness h(job);
  // A user's Secret, or one left by an earlier job of the same name.
  h.client.Put(kube::kSecrets, {{"apiVersion", "v1"},
                                {"kind", "Secret"},
                                {"metadata", {{"name", "dist-tls"}, {"namespace", "default"}}},
                                {"data", {{"ca.crt", "eA=="}}}});
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_EQ(h.client.Objects(kube::kSecrets).size(), 2u);
  const json pod = h.client.Objects(kube::kPods)[0];
  EXPECT_EQ(pod["spec"]["volumes"][0]["secret"]["secretName"], "dist-tls-job-uid");
  EXPECT_EQ(h.client.Objects(kube::kSecrets)[0]["data"].size(), 1u);  // left alone
}

TEST(JobReconcilerPrerequisitesTest, AJobWithoutTlsAsksForNoSecret) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("get", "secrets") + h.Requests("create", "secrets"), 0);
  EXPECT_EQ(h.PodNames().size(), 4u);
}

TEST(JobReconcilerPrerequisitesTest, APodGroupDeleteThatFailsIsRetried) {
  Harness h(GangJob());
  ASSERT_TRUE(h.Pass().ok());
  h.SetPod("dist-chief-0", "Succeeded");
  h.client.FailNext("delete", "podgroups", Unavailable());
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_EQ(h.State(), kSucceeded);
  EXPECT_EQ(h.client.Objects(kube::kVolcanoPodGroups).size(), 1u);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.client.Objects(kube::kVolcanoPodGroups).empty());
  h.client.ClearActions();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("delete", "podgroups"), 0);  // once deleted, not asked again
}

// A running gang job's PodGroup follows its spec, as the training-operator's does: a PodGroup
// only ever created kept its first minMember, so lowering minAvailable never released a gang that
// waits, and scaling the workers left the gang the old size.
json PodGroup(Harness& h) {
  std::vector<json> groups = h.client.Objects(kube::kVolcanoPodGroups);
  return groups.size() == 1 ? groups[0] : json();
}

void SetMinAvailable(Harness& h, int n) {
  absl::StatusOr<json> job = h.client.Get(kube::kDistributedTrainings, "default", "dist");
  ASSERT_TRUE(job.ok());
  (*job)["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] = n;
  (*job)["metadata"]["generation"] = (*job)["metadata"]["generation"].get<int>() + 1;
  h.client.Put(kube::kDistributedTrainings, *job);
}

TEST(JobReconcilerPrerequisitesTest, APodGroupFollowsTheJobsMinAvailableAndWorkers) {
  Harness h(JobJson({{"schedulingPolicy", {{"minAvailable", 4}}}}));
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_EQ(PodGroup(h)["spec"]["minMember"], 4);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("patch", "podgroups"), 0) << "nothing changed: no write";
  SetMinAvailable(h, 2);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(PodGroup(h)["spec"]["minMember"], 2) << "lowering minAvailable releases the gang";
  EXPECT_EQ(h.events.Count("UpdatedPodGroup"), 1);
  h.client.ClearActions();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("patch", "podgroups"), 0) << "updated once per change";
}

TEST(JobReconcilerPrerequisitesTest, ScalingAGangJobsWorkersResizesItsPodGroup) {
  Harness h(JobJson({{"schedulingPolicy", json::object()}}));
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_EQ(PodGroup(h)["spec"]["minMember"], 4);  // every replica by default
  ScaleWorkers(h, 4);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(PodGroup(h)["spec"]["minMember"], 6);
  EXPECT_EQ(h.PodNames().size(), 6u);
}

TEST(JobReconcilerPrerequisitesTest, AFailedPodGroupUpdateIsRetriedAfterTheStatusMovedOn) {
  Harness h(JobJson({{"schedulingPolicy", {{"minAvailable", 4}}}}));
  ASSERT_TRUE(h.Pass().ok());
  SetMinAvailable(h, 3);
  h.client.FailNext("patch", "podgroups", absl::UnavailableError("injected"));
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_EQ(h.events.Count("FailedUpdatePodGroup"), 1);
  EXPECT_EQ(PodGroup(h)["spec"]["minMember"], 4);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(PodGroup(h)["spec"]["minMember"], 3);
  EXPECT_EQ(h.reconciler->expectations().jobs(), 0u) << "nothing kept once it caught up";
}

}  // namespace
}  // namespace disttrain::controller
