// The reconciler on a fake API server: every lifecycle path, and each of its API calls failing
// once. The harness plays the informers (Sync copies the fake's objects into the stores) and the
// kubelet (SetPod writes a pod's status); time is a FakeClock.
#include "operator/controller/job_reconciler.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "operator/api/codec.h"
#include "operator/controller/conditions.h"
#include "operator/kube/errors.h"
#include "operator/kube/resource.h"
#include "tests/unit/testing/fake_kube_client.h"

namespace disttrain::controller {
namespace {

using nlohmann::json;
using runtime::EventType;

class RecordingEvents : public runtime::EventRecorder {
 public:
  void Record(const json&, EventType type, const std::string& reason,
              const std::string& message) override {
    absl::MutexLock lock(&mu_);
    reasons_.push_back(reason);
    (void)type;
    (void)message;
  }
  int Count(const std::string& reason) const {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(std::count(reasons_.begin(), reasons_.end(), reason));
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> reasons_;
};

json Role(int replicas, const std::string& restart_policy) {
  return {{"replicas", replicas},
          {"restartPolicy", restart_policy},
          {"template",
           {{"spec", {{"containers", {{{"name", "tensorflow"}, {"image", "trainer:1"}}}}}}}}};
}

// Chief + 1 PS + 2 workers, restartPolicy OnFailure, backoffLimit 3.
json JobJson(json run_policy = json::object()) {
  if (!run_policy.contains("backoffLimit")) run_policy["backoffLimit"] = 3;
  return {{"apiVersion", "disttrain.io/v1"},
          {"kind", "DistributedTraining"},
          {"metadata",
           {{"name", "dist"}, {"namespace", "default"}, {"uid", "job-uid"}, {"generation", 1}}},
          {"spec",
           {{"runPolicy", run_policy},
            {"replicaSpecs",
             {{"Chief", Role(1, "OnFailure")},
              {"PS", Role(1, "OnFailure")},
              {"Worker", Role(2, "OnFailure")}}}}}};
}

class Harness {
 public:
  explicit Harness(json job = JobJson()) {
    client.Put(kube::kDistributedTrainings, std::move(job));
    ReconcilerDeps deps;
    deps.client = &client;
    deps.jobs = &jobs;
    deps.pods = &pods;
    deps.services = &services;
    deps.events = &events;
    deps.clock = &clock;
    reconciler = std::make_unique<JobReconciler>(deps);
  }

  // The informers catch up, then one pass runs.
  absl::StatusOr<runtime::ReconcileResult> Pass() {
    Sync();
    return reconciler->Reconcile("default/dist");
  }
  // Passes until one succeeds (at most `n`).
  void Converge(int n = 5) {
    for (int i = 0; i < n; ++i) {
      if (Pass().ok()) return;
    }
    FAIL() << "no pass succeeded in " << n;
  }
  void Sync() {
    Fill(&jobs, kube::kDistributedTrainings);
    Fill(&pods, kube::kPods);
    Fill(&services, kube::kServices);
  }

  // The kubelet's part: phase, readiness, main container exit code and restarts.
  void SetPod(const std::string& name, const std::string& phase, int exit_code = 0,
              int restarts = 0, std::optional<bool> ready = std::nullopt) {
    absl::StatusOr<json> pod = client.Get(kube::kPods, "default", name);
    ASSERT_TRUE(pod.ok()) << name;
    const bool is_ready = ready.value_or(phase == "Running");
    json status = {{"phase", phase},
                   {"conditions", {{{"type", "Ready"}, {"status", is_ready ? "True" : "False"}}}}};
    json cs = {{"name", "tensorflow"}, {"restartCount", restarts}};
    if (phase == "Succeeded" || phase == "Failed") {
      cs["state"] = {
          {"terminated",
           {{"exitCode", exit_code}, {"reason", exit_code == 0 ? "Completed" : "Error"}}}};
    }
    status["containerStatuses"] = json::array({cs});
    (*pod)["status"] = status;
    client.Put(kube::kPods, *pod);
  }
  void RunAll() {
    for (const std::string& name : PodNames()) SetPod(name, "Running");
  }

  api::JobStatus Status() {
    absl::StatusOr<json> job = client.Get(kube::kDistributedTrainings, "default", "dist");
    EXPECT_TRUE(job.ok());
    if (!job.ok() || !job->contains("status")) return {};
    absl::StatusOr<api::JobStatus> st = api::DecodeStatus((*job)["status"]);
    EXPECT_TRUE(st.ok()) << st.status();
    return st.ok() ? *st : api::JobStatus{};
  }
  std::string State() { return Status().state; }
  int Restarts() {
    int total = 0;
    for (const auto& [type, rs] : Status().replica_statuses) total += rs.restarts;
    return total;
  }
  bool Condition(const char* type) { return IsTrue(Status(), type); }

  std::vector<std::string> PodNames() const {
    std::vector<std::string> out;
    for (const json& p : client.Objects(kube::kPods)) out.push_back(p["metadata"]["name"]);
    return out;
  }
  bool HasPod(const std::string& name) const {
    return client.Get(kube::kPods, "default", name).ok();
  }
  std::string Uid(const std::string& name) const {
    absl::StatusOr<json> pod = client.Get(kube::kPods, "default", name);
    return pod.ok() ? (*pod)["metadata"]["uid"].get<std::string>() : "";
  }
  int Requests(const std::string& verb, const std::string& resource) const {
    int n = 0;
    for (const auto& a : client.actions()) n += a.verb == verb && a.resource == resource;
    return n;
  }

  mutable testing::FakeKubeClient client;
  runtime::FakeClock clock;
  runtime::Store jobs, pods, services;
  RecordingEvents events;
  std::unique_ptr<JobReconciler> reconciler;

 private:
  void Fill(runtime::Store* store, const kube::Resource& r) {
    std::vector<runtime::ObjectPtr> objects;
    for (json& o : client.Objects(r)) objects.push_back(std::make_shared<const json>(std::move(o)));
    store->Replace(std::move(objects));
  }
};

const std::vector<std::string> kAllPods = {"dist-chief-0", "dist-ps-0", "dist-worker-0",
                                           "dist-worker-1"};

// ---- Lifecycle paths ----

TEST(JobReconcilerTest, CreatesEveryPodAndServiceOfANewJob) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  for (const std::string& name : kAllPods) {
    EXPECT_TRUE(h.HasPod(name)) << name;
    EXPECT_TRUE(h.client.Get(kube::kServices, "default", name).ok()) << name;
  }
  EXPECT_EQ(h.State(), kCreated);
  EXPECT_EQ(h.events.Count("SuccessfulCreatePod"), 1);
}

TEST(JobReconcilerTest, IsRunningOnceEveryPodRunsAndReady) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.SetPod("dist-chief-0", "Running");
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kCreated);
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kRunning);
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

TEST(JobReconcilerTest, RestartsAFailedWorkerAndCountsItOnce) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  const std::string old_uid = h.Uid("dist-worker-1");
  h.SetPod("dist-worker-1", "Failed", 137);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_FALSE(h.HasPod("dist-worker-1"));
  EXPECT_EQ(h.State(), kRestarting);
  EXPECT_EQ(h.Restarts(), 1);
  ASSERT_TRUE(h.Pass().ok());  // the informer saw it go: a new pod, still one restart
  EXPECT_TRUE(h.HasPod("dist-worker-1"));
  EXPECT_NE(h.Uid("dist-worker-1"), old_uid);
  EXPECT_EQ(h.Restarts(), 1);
  EXPECT_TRUE(h.Status().restarting_pods.empty());
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kRunning);
  EXPECT_EQ(h.Restarts(), 1);
}

TEST(JobReconcilerTest, AStaleCacheNeverCountsARestartTwice) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  h.SetPod("dist-worker-0", "Failed", 137);
  h.Sync();
  ASSERT_TRUE(h.reconciler->Reconcile("default/dist").ok());
  // The caches still hold the failed pod and the job without the new status.
  absl::StatusOr<runtime::ReconcileResult> again = h.reconciler->Reconcile("default/dist");
  EXPECT_TRUE(kube::IsConflict(again.status())) << again.status();
  h.Sync();
  ASSERT_TRUE(h.reconciler->Reconcile("default/dist").ok());
  EXPECT_EQ(h.Restarts(), 1);
}

TEST(JobReconcilerTest, CountsInPlaceRestartsAgainstBackoffLimit) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  h.SetPod("dist-worker-0", "Running", 0, 2, /*ready=*/false);  // CrashLoopBackOff
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kRestarting);
  EXPECT_EQ(h.Restarts(), 2);
  EXPECT_EQ(h.events.Count("RestartedInPlace"), 1);
  h.SetPod("dist-worker-0", "Running", 0, 2);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kRunning);
  h.SetPod("dist-worker-0", "Running", 0, 4);  // 4 > backoffLimit 3
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kFailed);
  EXPECT_EQ(FindCondition(h.Status(), kFailed)->reason, "BackoffLimitExceeded");
}

TEST(JobReconcilerTest, FailsWhenARecreationWouldExceedBackoffLimit) {
  Harness h(JobJson({{"backoffLimit", 1}}));
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  h.SetPod("dist-worker-0", "Failed", 137);
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_TRUE(h.Pass().ok());
  h.SetPod("dist-worker-0", "Failed", 137);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kFailed);
  EXPECT_EQ(FindCondition(h.Status(), kFailed)->reason, "BackoffLimitExceeded");
  EXPECT_FALSE(h.HasPod("dist-ps-0"));
}

TEST(JobReconcilerTest, FailsAndCleansUpWhenTheDeadlinePasses) {
  Harness h(JobJson({{"activeDeadlineSeconds", 60}}));
  absl::StatusOr<runtime::ReconcileResult> first = h.Pass();
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->requeue_after.has_value());
  EXPECT_EQ(*first->requeue_after, absl::Seconds(60));
  h.clock.Advance(absl::Seconds(61));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(FindCondition(h.Status(), kFailed)->reason, "DeadlineExceeded");
  EXPECT_TRUE(h.PodNames().empty());
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

TEST(JobReconcilerTest, AnInvalidSpecFailsOnceWithoutRetry) {
  json job = JobJson();
  job["spec"]["replicaSpecs"]["Worker"]["replicas"] = -1;
  Harness h(job);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(FindCondition(h.Status(), kFailed)->reason, "InvalidSpec");
  h.client.ClearActions();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.client.actions().empty());  // terminal: no request at all
  EXPECT_TRUE(h.PodNames().empty());
}

TEST(JobReconcilerTest, WritesNothingWhenNothingChanged) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  h.client.ClearActions();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.client.actions().empty());
}

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
                      EXPECT_EQ(h.PodNames().size(), 3u);
                    },
                    AllPodsExist},
        FailureCase{"CreatePod", NewJob, "create", "pods", Unavailable(),
                    [](Harness& h) {
                      EXPECT_EQ(h.State(), kCreated);
                      EXPECT_EQ(h.PodNames().size(), 3u);
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

}  // namespace
}  // namespace disttrain::controller
