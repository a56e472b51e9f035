// The reconciler on a fake API server: each of its API calls failing once, and failures that
// persist or will not heal.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "operator/controller/job_reconciler.h"
#include "tests/unit/operator/controller/reconciler_harness.h"

namespace disttrain::controller {

using ::disttrain::policy::FindCondition;
using ::disttrain::policy::kCreated;
using ::disttrain::policy::kFailed;
using ::disttrain::policy::kReplicaFailure;
using ::disttrain::policy::kRunning;
using ::disttrain::policy::kSucceeded;
using ::disttrain::policy::kSuspended;
namespace {

using nlohmann::json;
using testing::Harness;
using testing::JobJson;
using testing::kAllPods;

// ---- Each API call failing once ----

struct FailureCase {
  std::string name;
  std::function<void(Harness&)> setup;  // brings the job to the pass under test
  std::string verb, resource;
  absl::Status error;
  std::function<void(Harness&)> after_failure;  // what the failed pass must have left
  std::function<void(Harness&)> converged;      // the state once the retries succeed
};

void PrintTo(const FailureCase& c, std::ostream* os) { *os << c.name; }

absl::Status Unavailable() { return kube::StatusFromHttp(503, "{}", "injected"); }
absl::Status Forbidden() {
  return kube::StatusFromHttp(
      403,
      R"({"kind":"Status","reason":"Forbidden","message":"exceeded quota: compute, requested: pods=1"})",
      "injected");
}

void NewJob(Harness&) {}
void Running(Harness& h) {
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
}
void WorkerFailed(Harness& h) {
  Running(h);
  h.SetPod("dist-worker-0", "Failed", 137);
}
void ChiefSucceeded(Harness& h) {
  Running(h);
  h.SetPod("dist-chief-0", "Succeeded");
}
void AllPodsExist(Harness& h) {
  for (const std::string& name : kAllPods) EXPECT_TRUE(h.HasPod(name)) << name;
}
void OneRestartDone(Harness& h) {
  AllPodsExist(h);
  EXPECT_EQ(h.Restarts(), 1);
  EXPECT_TRUE(h.Status().restarting_pods.empty());
}
void SucceededAndCleaned(Harness& h) {
  EXPECT_EQ(h.State(), kSucceeded);
  EXPECT_FALSE(h.HasPod("dist-ps-0"));
  EXPECT_FALSE(h.HasPod("dist-worker-0"));
}

class ApiFailureTest : public ::testing::TestWithParam<FailureCase> {};

TEST_P(ApiFailureTest, ThePassReportsTheErrorAndTheRetryConverges) {
  const FailureCase& c = GetParam();
  Harness h;
  c.setup(h);
  h.client.FailNext(c.verb, c.resource, c.error);
  absl::StatusOr<runtime::ReconcileResult> failed = h.Pass();
  ASSERT_FALSE(failed.ok())
      << "the injected failure must end the pass in an error (for the queue's backoff)";
  EXPECT_EQ(failed.status().code(), c.error.code());
  c.after_failure(h);
  h.Converge();
  ASSERT_TRUE(h.Pass().ok());  // the pass after the informers saw the retry's writes
  c.converged(h);
}

INSTANTIATE_TEST_SUITE_P(
    EachCall, ApiFailureTest,
    ::testing::Values(
        FailureCase{"CreateService", NewJob, "create", "services", Unavailable(),
                    [](Harness& h) {
                      EXPECT_EQ(h.State(), kCreated);  // the status was still written
                      // Slow start: the first replica's Service failed (its Pod, sent with it,
                      // was created), so no other replica was tried.
                      EXPECT_EQ(h.PodNames().size(), 1u);
                    },
                    AllPodsExist},
        FailureCase{"CreatePod", NewJob, "create", "pods", Unavailable(),
                    [](Harness& h) {
                      EXPECT_EQ(h.State(), kCreated);
                      EXPECT_EQ(h.PodNames().size(), 0u);
                      EXPECT_FALSE(h.Condition(kReplicaFailure));  // one retryable failure
                    },
                    AllPodsExist},
        FailureCase{
            "CreatePodForbidden", NewJob, "create", "pods", Forbidden(),
            [](Harness& h) {
              EXPECT_TRUE(h.Condition(kReplicaFailure));
              EXPECT_NE(FindCondition(h.Status(), kReplicaFailure)->message.find("exceeded quota"),
                        std::string::npos);
            },
            [](Harness& h) {
              AllPodsExist(h);
              EXPECT_FALSE(h.Condition(kReplicaFailure));
            }},
        FailureCase{"WriteStatusBeforeARestart", WorkerFailed, "patch", "distributedtrainings",
                    Unavailable(),
                    [](Harness& h) {
                      EXPECT_TRUE(
                          h.HasPod("dist-worker-0"));  // not deleted: its restart is not recorded
                      EXPECT_EQ(h.Restarts(), 0);
                    },
                    OneRestartDone},
        FailureCase{"DeleteForARestart", WorkerFailed, "delete", "pods", Unavailable(),
                    [](Harness& h) {
                      EXPECT_TRUE(h.HasPod("dist-worker-0"));
                      EXPECT_EQ(h.Restarts(), 1);  // recorded before the delete
                      EXPECT_EQ(h.Status().restarting_pods,
                                std::vector<std::string>{h.Uid("dist-worker-0")});
                    },
                    OneRestartDone},
        FailureCase{"DeleteParameterServerOnSuccess", ChiefSucceeded, "delete", "pods",
                    Unavailable(),
                    [](Harness& h) {
                      EXPECT_EQ(h.State(), kSucceeded);
                      EXPECT_TRUE(h.HasPod("dist-ps-0") || h.HasPod("dist-worker-0"));
                    },
                    SucceededAndCleaned},
        FailureCase{"WriteStatusOnSuccess", ChiefSucceeded, "patch", "distributedtrainings",
                    Unavailable(), [](Harness& h) { EXPECT_EQ(h.State(), kRunning); },
                    SucceededAndCleaned}),
    [](const auto& info) { return info.param.name; });

TEST(JobReconcilerFailureTest, ASucceededJobWhoseStatusWriteFailedCreatesNoPodAgain) {
  Harness h;
  ChiefSucceeded(h);
  h.client.FailNext("patch", "distributedtrainings", Unavailable());
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_TRUE(h.HasPod("dist-ps-0")) << "deleted before the status saying Succeeded was written";
  h.client.ClearActions();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("create", "pods"), 0) << "the pods cleanup deleted were created again";
  EXPECT_EQ(h.State(), kSucceeded);
  EXPECT_FALSE(h.HasPod("dist-ps-0"));
}

TEST(JobReconcilerFailureTest, AJobOutOfRestartsWhoseStatusWriteFailedCreatesNoPodAgain) {
  // Found by the fault suite: the pass that failed the job deleted its pods, the status write
  // was lost, and the next pass, seeing a running job with pods missing, created them again.
  Harness h(JobJson({{"backoffLimit", 1}}));
  Running(h);
  h.SetPod("dist-worker-0", "Failed", 137);
  ASSERT_TRUE(h.Pass().ok());  // restart 1 of 1
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  h.SetPod("dist-worker-0", "Failed", 137);
  h.client.FailNext("patch", "distributedtrainings", Unavailable());
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_TRUE(h.HasPod("dist-ps-0"));
  h.client.ClearActions();
  h.Converge();
  EXPECT_EQ(h.Requests("create", "pods"), 0);
  EXPECT_EQ(FindCondition(h.Status(), kFailed)->reason, "BackoffLimitExceeded");
  EXPECT_FALSE(h.HasPod("dist-ps-0"));
}

TEST(JobReconcilerFailureTest, ASuspendWhoseDeleteFailsDeletesOnRetry) {
  Harness h;
  Running(h);
  json job = *h.client.Get(kube::kDistributedTrainings, "default", "dist");
  job["spec"]["runPolicy"]["suspend"] = true;
  h.client.Put(kube::kDistributedTrainings, job);
  h.client.FailNext("delete", "pods", Unavailable());
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_EQ(h.State(), kSuspended);
  EXPECT_EQ(h.PodNames().size(), 1u);
  h.Converge();
  EXPECT_TRUE(h.PodNames().empty());
}

TEST(JobReconcilerFailureTest, ATtlDeleteThatFailsIsRetried) {
  Harness h(JobJson({{"ttlSecondsAfterFinished", 0}}));
  ASSERT_TRUE(h.Pass().ok());
  h.SetPod("dist-chief-0", "Succeeded");
  ASSERT_TRUE(h.Pass().ok());
  h.client.FailNext("delete", "distributedtrainings", Unavailable());
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_TRUE(h.client.Get(kube::kDistributedTrainings, "default", "dist").ok());
  EXPECT_TRUE(h.Pass().ok());
  EXPECT_FALSE(h.client.Get(kube::kDistributedTrainings, "default", "dist").ok());
}

json GangJob() {
  json job = JobJson();
  job["spec"]["runPolicy"]["schedulingPolicy"] = json::object();
  return job;
}

TEST(JobReconcilerFailureTest, NoPodIsCreatedBeforeItsPodGroup) {
  Harness h(GangJob());
  h.client.FailNext("create", "podgroups", Unavailable());
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_TRUE(h.PodNames().empty());
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.client.Objects(kube::kVolcanoPodGroups).size(), 1u);
  EXPECT_EQ(h.PodNames().size(), 4u);
}

// kube-scheduler's own gangs: the Workload, then its PodGroup, then the pods that name it.
TEST(JobReconcilerFailureTest, AKubernetesGangsWorkloadAndPodGroupComeBeforeItsPods) {
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

TEST(JobReconcilerFailureTest, WithoutTheWorkloadApiAKubernetesGangRunsUngangedAndWarnsOnce) {
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
TEST(JobReconcilerFailureTest, NoPodIsCreatedBeforeItsNetworkPolicy) {
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

TEST(JobReconcilerFailureTest, AJobThatTurnsItOffGetsNoNetworkPolicy) {
  json job = JobJson();
  job["spec"]["networkPolicy"] = {{"enabled", false}};
  Harness h(job);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("create", "networkpolicies"), 0);
  EXPECT_EQ(h.PodNames().size(), 4u);
}

// What the reconciler remembers of a job goes with the job: a gang job that failed to create
// pods, finished (its PodGroup deleted) and was deleted leaves nothing behind.
TEST(JobReconcilerFailureTest, ADeletedJobLeavesNothingInTheReconcilersMemory) {
  Harness h(GangJob());
  h.client.FailNext("create", "pods", Unavailable());
  EXPECT_FALSE(h.Pass().ok());
  ASSERT_TRUE(h.Pass().ok());
  h.SetPod("dist-chief-0", "Succeeded");
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_EQ(h.State(), kSucceeded);
  EXPECT_GT(h.reconciler->expectations().jobs(), 0u);
  ASSERT_TRUE(h.client.Delete(kube::kDistributedTrainings, "default", "dist", {}).ok());
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.reconciler->expectations().jobs(), 0u);
}

// spec.tls: the Secret comes before the pods that mount it, once; the job keeps it.
TEST(JobReconcilerFailureTest, ATlsJobsSecretIsCreatedBeforeItsPods) {
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

TEST(JobReconcilerFailureTest, ASecretNamedLikeTheJobButNotMadeForItIsNeverMounted) {
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

TEST(JobReconcilerFailureTest, AJobWithoutTlsAsksForNoSecret) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("get", "secrets") + h.Requests("create", "secrets"), 0);
  EXPECT_EQ(h.PodNames().size(), 4u);
}

TEST(JobReconcilerFailureTest, APodGroupDeleteThatFailsIsRetried) {
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

TEST(JobReconcilerFailureTest, RetryableCreateFailuresBecomeAConditionWhenTheyPersist) {
  Harness h;
  h.client.FailNext("create", "pods", Unavailable(), 100);
  for (int i = 1; i < JobReconciler::kCreateFailuresBeforeCondition; ++i) {
    EXPECT_FALSE(h.Pass().ok());
    EXPECT_FALSE(h.Condition(kReplicaFailure)) << "pass " << i;
  }
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_TRUE(h.Condition(kReplicaFailure));
  EXPECT_EQ(FindCondition(h.Status(), kReplicaFailure)->reason, "FailedCreate");
  EXPECT_NE(h.State(), kFailed);  // retrying is what a user expects: the cause may go away
}

TEST(JobReconcilerFailureTest, AnInvalidPodTemplateFailsTheJob) {
  Harness h;
  h.client.FailNext("create", "pods",
                    kube::StatusFromHttp(422, R"({"reason":"Invalid","message":"bad"})", "x"));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(FindCondition(h.Status(), kFailed)->reason, "InvalidPodTemplate");
}

TEST(JobReconcilerFailureTest, AQuotaFailureCostsOneRequestNotOnePerReplica) {
  Harness h;
  h.client.FailNext("create", "pods", Forbidden());
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_EQ(h.Requests("create", "pods"), 1);  // slow start: the first replica alone
  EXPECT_EQ(h.Requests("create", "services"), 1);
  h.Converge();
  AllPodsExist(h);
}

TEST(JobReconcilerFailureTest, OneFailedDeleteOfACleanupBatchIsRetried) {
  Harness h;
  ChiefSucceeded(h);
  h.client.FailNext("delete", "pods", Unavailable());
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_EQ(h.Requests("delete", "pods"), 3);  // the batch went on past the failure
  h.Converge();
  ASSERT_TRUE(h.Pass().ok());
  SucceededAndCleaned(h);
  EXPECT_FALSE(h.HasPod("dist-worker-1"));
}

}  // namespace
}  // namespace disttrain::controller
