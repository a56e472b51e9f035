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
using testing::GangJob;
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
