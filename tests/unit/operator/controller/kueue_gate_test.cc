// The Kueue gate (kueue_gate.h) in the reconciler on a fake API server: a queued job is held
// until its Workload is admitted, its pods carry the admission, an eviction stops them and gives
// the quota back once they are gone, and the Workload learns PodsReady, reclaimablePods and
// Finished.
#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/controller/job_reconciler.h"
#include "operator/queueing/workload.h"
#include "tests/unit/operator/controller/queue_fixture.h"
#include "tests/unit/operator/controller/reconciler_harness.h"

namespace disttrain::controller {

using ::disttrain::policy::FindCondition;
using ::disttrain::policy::kFailed;
using ::disttrain::policy::kQueued;
using ::disttrain::policy::kRunning;
using ::disttrain::policy::kSucceeded;
namespace {

using nlohmann::json;
using testing::Harness;
using testing::kAllPods;
using testing::QueuedJob;
using testing::QueueTest;

TEST_F(QueueTest, APartiallyAdmittedElasticJobRunsWithTheWorkersKueueAdmitted) {
  json job = QueuedJob();
  job["spec"]["replicaSpecs"]["Worker"]["replicas"] = 4;
  job["spec"]["elasticPolicy"] = {{"minReplicas", 2}, {"maxReplicas", 4}};
  h.client.Put(kube::kDistributedTrainings, job);
  ASSERT_TRUE(h.Pass().ok());
  const json wl = Workload();
  const json& workers = wl["spec"]["podSets"][2];
  ASSERT_EQ(workers["name"], "worker");
  EXPECT_EQ(workers["count"], 4);
  EXPECT_EQ(workers["minCount"], 2);
  Admit(/*workers=*/3);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.HasPod("dist-worker-2"));
  EXPECT_FALSE(h.HasPod("dist-worker-3")) << "only the 3 admitted workers run";
  absl::StatusOr<json> pod = h.client.Get(kube::kPods, "default", "dist-worker-0");
  ASSERT_TRUE(pod.ok());
  std::string tf_config;
  for (const json& e : (*pod)["spec"]["containers"][0]["env"]) {
    if (e["name"] == "TF_CONFIG") tf_config = e["value"];
  }
  EXPECT_NE(tf_config.find("dist-worker-2."), std::string::npos) << tf_config;
  EXPECT_EQ(tf_config.find("dist-worker-3."), std::string::npos) << "TF_CONFIG names the admitted";
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  const api::JobStatus status = h.Status();
  const api::Condition* queued = FindCondition(status, kQueued);
  ASSERT_NE(queued, nullptr);
  EXPECT_FALSE(queued->status);
  EXPECT_EQ(queued->message,
            "admitted by ClusterQueue cq (partially: 3 of 4 workers, elasticPolicy.minReplicas 2)");
  EXPECT_EQ(h.State(), kRunning);
  EXPECT_EQ(Workload()["spec"]["podSets"][2]["count"], 4) << "the Workload is not replaced";
}

TEST_F(QueueTest, AQueuedJobGetsOneOwnedWorkloadAndNoPodUntilAdmitted) {
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.PodNames().empty());
  json wl = Workload();
  EXPECT_EQ(wl["spec"]["queueName"], "team-a");
  EXPECT_EQ(wl["metadata"]["ownerReferences"][0]["uid"], "job-uid");
  EXPECT_TRUE(wl["metadata"]["ownerReferences"][0]["controller"].get<bool>());
  EXPECT_EQ(wl["metadata"]["labels"][queueing::kJobUidLabel], "job-uid");
  json counts = json::object();
  for (const json& ps : wl["spec"]["podSets"]) counts[ps["name"].get<std::string>()] = ps["count"];
  EXPECT_EQ(counts, json({{"chief", 1}, {"ps", 1}, {"worker", 2}}));
  // The status waits for Kueue's answer (one write fewer): the next pass writes it.
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), 0);
  ASSERT_TRUE(h.Pass().ok());  // still waiting: no second Workload, still no pod
  EXPECT_EQ(h.State(), kQueued);
  EXPECT_EQ(h.client.Objects(kube::kWorkloads).size(), 1u);
  EXPECT_TRUE(h.PodNames().empty());
}

// Every event is an API write: a job Kueue admits at once has the events of a job without
// Kueue, and tells its Workload and the ClusterQueue that admitted it in the one that says its
// pods were created.
TEST_F(QueueTest, AJobAdmittedAtOnceHasNoEventMoreThanWithoutKueue) {
  ASSERT_TRUE(h.Pass().ok());
  Admit();
  ASSERT_TRUE(h.Pass().ok());
  std::vector<std::string> events = h.events.All();
  ASSERT_EQ(events.size(), 2u) << absl::StrJoin(events, "\n");
  EXPECT_TRUE(absl::StartsWith(events[0], "SuccessfulCreateNetworkPolicy: ")) << events[0];
  EXPECT_TRUE(absl::StartsWith(events[1], "SuccessfulCreatePod: ")) << events[1];
  EXPECT_THAT(events[1],
              ::testing::HasSubstr("Workload " + WorkloadName() + " admitted by ClusterQueue cq"));
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.events.All().size(), 2u) << absl::StrJoin(h.events.All(), "\n");
}

// A job left waiting says so once, with its Workload's name, when its status first shows it.
TEST_F(QueueTest, AJobLeftWaitingSaysSoOnceWithItsWorkloadsName) {
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.events.All().empty()) << "the status waits for Kueue's answer, and so the news";
  ASSERT_TRUE(h.Pass().ok());  // no answer from Kueue: the status is written, Queued
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kQueued);
  std::vector<std::string> events = h.events.All();
  ASSERT_EQ(events.size(), 1u) << absl::StrJoin(events, "\n");
  EXPECT_EQ(events[0], "Queued: WaitingForAdmission: waiting for Kueue to admit Workload " +
                           WorkloadName() + " from LocalQueue team-a");
  Admit();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.events.Count("Admitted"), 1);
  EXPECT_EQ(h.events.Count("SuccessfulCreatePod"), 1);
}

TEST_F(QueueTest, KueuesReasonForWaitingReachesTheJob) {
  ASSERT_TRUE(h.Pass().ok());
  json wl = Workload();
  wl["status"]["conditions"] = {{{"type", "QuotaReserved"},
                                 {"status", "False"},
                                 {"reason", "Inadmissible"},
                                 {"message", "LocalQueue team-a doesn't exist"}}};
  h.client.Put(kube::kWorkloads, wl);
  ASSERT_TRUE(h.Pass().ok());
  const api::JobStatus st = h.Status();
  const api::Condition* c = FindCondition(st, kQueued);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->reason, "Inadmissible");
  EXPECT_EQ(c->message, "LocalQueue team-a doesn't exist");
  EXPECT_EQ(h.events.Count("Inadmissible"), 1);
}

TEST_F(QueueTest, AdmittedPodsCarryTheFlavourAndTheJobRuns) {
  ASSERT_TRUE(h.Pass().ok());
  Admit();
  ASSERT_TRUE(h.Pass().ok());
  for (const std::string& name : kAllPods) {
    absl::StatusOr<json> pod = h.client.Get(kube::kPods, "default", name);
    ASSERT_TRUE(pod.ok()) << name;
    EXPECT_EQ((*pod)["spec"]["nodeSelector"]["gpu"], "a100") << name;
    const json& tolerations = (*pod)["spec"]["tolerations"];
    EXPECT_TRUE(std::any_of(tolerations.begin(), tolerations.end(),
                            [](const json& t) { return t.value("key", "") == "gpu"; }))
        << name << ": " << tolerations.dump();
    EXPECT_EQ((*pod)["metadata"]["labels"]["kueue.x-k8s.io/podset"],
              (*pod)["metadata"]["labels"]["disttrain.io/replica-type"]);
  }
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kRunning);
  std::optional<json> ready = WorkloadCondition(Workload(), "PodsReady");
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ((*ready)["status"], "True");
}

TEST_F(QueueTest, WithoutKueuePodsReadyARunningJobLeavesItsWorkloadAlone) {
  ReconcilerDeps deps = h.Deps();
  deps.kueue_pods_ready = false;  // --kueue-pods-ready=false: Kueue's waitForPodsReady is off
  h.reconciler = std::make_unique<JobReconciler>(deps);
  ASSERT_TRUE(h.Pass().ok());
  Admit();
  ASSERT_TRUE(h.Pass().ok());
  const int before = h.Requests("patch", "workloads");
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kRunning);
  EXPECT_FALSE(WorkloadCondition(Workload(), "PodsReady").has_value());
  EXPECT_EQ(h.Requests("patch", "workloads"), before) << "no Workload write while it runs";
}

TEST_F(QueueTest, AnEvictionStopsThePodsAndReleasesTheQuotaOnlyOnceTheyAreGone) {
  AdmitAndRun();
  // Pods that are still terminating hold their resources: the quota stays reserved.
  h.client.SetDeleteGraceful(true);
  Evict();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kQueued);
  EXPECT_EQ(FindCondition(h.Status(), kQueued)->reason, "Preempted");
  EXPECT_EQ(h.Restarts(), 0);
  EXPECT_EQ(WorkloadCondition(Workload(), "QuotaReserved")->at("status"), "True");
  // The chief alone is stopped first (it checkpoints on SIGTERM from the servers' variables).
  EXPECT_EQ(h.Requests("delete", "pods"), 1);
  h.client.SetDeleteGraceful(false);
  ASSERT_TRUE(h.client.Delete(kube::kPods, "default", "dist-chief-0", {}).ok());
  ASSERT_TRUE(h.Pass().ok());  // then the others
  EXPECT_EQ(WorkloadCondition(Workload(), "QuotaReserved")->at("status"), "True");
  for (const std::string& name : h.PodNames())
    ASSERT_TRUE(h.client.Delete(kube::kPods, "default", name, {}).ok());
  ASSERT_TRUE(h.Pass().ok());
  json wl = Workload();
  EXPECT_EQ(WorkloadCondition(wl, "QuotaReserved")->at("status"), "False");
  EXPECT_EQ(WorkloadCondition(wl, "Requeued")->at("status"), "True");
  EXPECT_FALSE(wl["status"].contains("admission") && !wl["status"]["admission"].is_null());
  EXPECT_EQ(h.events.Count("QuotaReleased"), 1);
  EXPECT_EQ(h.Restarts(), 0) << "an eviction is no restart";
}

TEST_F(QueueTest, FinishedIsWrittenOnceThePodsHoldingQuotaAreGoneThenTheFinalizerGoes) {
  AdmitAndRun();
  h.client.SetDeleteGraceful(true);
  h.SetPod("dist-chief-0", "Succeeded");
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), kSucceeded);
  EXPECT_FALSE(WorkloadCondition(Workload(), "Finished")) << "ps and workers still terminate";
  h.client.SetDeleteGraceful(false);
  for (const char* name : {"dist-ps-0", "dist-worker-0", "dist-worker-1"})
    ASSERT_TRUE(h.client.Delete(kube::kPods, "default", name, {}).ok());
  ASSERT_TRUE(h.Pass().ok());
  std::optional<json> finished = WorkloadCondition(Workload(), "Finished");
  ASSERT_TRUE(finished.has_value());
  EXPECT_EQ((*finished)["reason"], "Succeeded");
  // In the same pass: the Finished write queues no pass of its own (DecisionChanged).
  const json finalizers = Workload()["metadata"].value("finalizers", json());
  EXPECT_TRUE(finalizers.is_null() || finalizers.empty()) << finalizers.dump();
  const int writes = h.Requests("patch", "workloads");
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("patch", "workloads"), writes) << "nothing left to write";
  // A pass from a cache that shows Finished but not yet the finalizer gone: nothing either.
  json behind = Workload();
  behind["metadata"]["finalizers"] = {queueing::kResourceInUseFinalizer};
  h.workloads.Replace({std::make_shared<const json>(behind)});
  ASSERT_TRUE(h.reconciler->Reconcile("default/dist").ok());
  EXPECT_EQ(h.Requests("patch", "workloads"), writes) << "the cache lags behind its own write";
}

TEST_F(QueueTest, SuspendingDeactivatesTheWorkloadAndResumingActivatesIt) {
  ASSERT_TRUE(h.Pass().ok());
  Admit();
  ASSERT_TRUE(h.Pass().ok());
  json job = *h.client.Get(kube::kDistributedTrainings, "default", "dist");
  job["spec"]["runPolicy"]["suspend"] = true;
  h.client.Put(kube::kDistributedTrainings, job);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.PodNames().empty());
  EXPECT_FALSE(Workload()["spec"]["active"].get<bool>()) << "Kueue must give the quota back";
  Evict();  // Kueue's answer to the deactivation
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(WorkloadCondition(Workload(), "QuotaReserved")->at("status"), "False");
  job = *h.client.Get(kube::kDistributedTrainings, "default", "dist");
  job["spec"]["runPolicy"]["suspend"] = false;
  h.client.Put(kube::kDistributedTrainings, job);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(Workload()["spec"]["active"].get<bool>());
  EXPECT_TRUE(h.PodNames().empty()) << "it waits to be admitted again";
}

TEST_F(QueueTest, AWorkloadAnAdminDeactivatedStaysSoAndItsJobWaits) {
  AdmitAndRun();
  json wl = Workload();
  wl["spec"]["active"] = false;
  wl["status"]["conditions"].push_back({{"type", "Evicted"},
                                        {"status", "True"},
                                        {"reason", "Deactivated"},
                                        {"message", "The workload is deactivated"}});
  h.client.Put(kube::kWorkloads, wl);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_FALSE(Workload()["spec"]["active"].get<bool>()) << "the operator re-activated it";
  EXPECT_EQ(FindCondition(h.Status(), kQueued)->reason, "Evicted");
}

TEST_F(QueueTest, WorkersThatSucceededBeforeTheChiefAreReclaimable) {
  AdmitAndRun();
  h.SetPod("dist-worker-0", "Succeeded");
  h.SetPod("dist-worker-1", "Succeeded");
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(Workload()["status"]["reclaimablePods"],
            json::parse(R"([{"name":"worker","count":2}])"));
}

TEST_F(QueueTest, AJobThatGrowsWhileWaitingGetsANewWorkload) {
  ASSERT_TRUE(h.Pass().ok());
  const std::string uid = Workload()["metadata"]["uid"];
  json job = *h.client.Get(kube::kDistributedTrainings, "default", "dist");
  job["spec"]["replicaSpecs"]["Worker"]["replicas"] = 4;
  job["metadata"]["generation"] = 2;
  h.client.Put(kube::kDistributedTrainings, job);
  ASSERT_TRUE(h.Pass().ok());  // the stale Workload is deleted (kept by Kueue's finalizer)
  ASSERT_TRUE(h.Pass().ok());  // no pod holds its quota: the finalizer goes, and so does it
  EXPECT_TRUE(h.client.Objects(kube::kWorkloads).empty());
  ASSERT_TRUE(h.Pass().ok());  // and it is replaced
  EXPECT_NE(Workload()["metadata"]["uid"], uid);
  EXPECT_EQ(h.events.Count("DeletedWorkload"), 1);
}

TEST_F(QueueTest, AMissingPriorityClassHoldsTheJobWithoutAWorkload) {
  Harness p{[] {
              json j = QueuedJob();
              j["metadata"]["labels"][queueing::kPriorityClassLabel] = "urgent";
              return j;
            }(),
            true};
  absl::StatusOr<runtime::ReconcileResult> r = p.Pass();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(p.client.Objects(kube::kWorkloads).empty());
  EXPECT_EQ(FindCondition(p.Status(), kQueued)->reason, "WorkloadPriorityClassNotFound");
  ASSERT_TRUE(r->requeue_after.has_value());
  p.client.Put(kube::kWorkloadPriorityClasses, {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                                                {"kind", "WorkloadPriorityClass"},
                                                {"metadata", {{"name", "urgent"}}},
                                                {"value", 1000}});
  ASSERT_TRUE(p.Pass().ok());
  std::vector<json> wls = p.client.Objects(kube::kWorkloads);
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_EQ(wls[0]["spec"]["priority"], 1000);
  EXPECT_EQ(wls[0]["spec"]["priorityClassRef"]["name"], "urgent");
}

TEST_F(QueueTest, AWorkloadKueueRefusesFailsTheJobWithKueuesMessageAndNoPod) {
  h.client.FailNext("create", "workloads",
                    absl::InvalidArgumentError("admission webhook denied: spec.podSets too many"));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.State(), "Failed");
  const api::JobStatus status = h.Status();  // FindCondition points into it
  const api::Condition* failed = FindCondition(status, kFailed);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason, "InvalidWorkload");
  EXPECT_NE(failed->message.find("spec.podSets too many"), std::string::npos) << failed->message;
  EXPECT_TRUE(h.client.Objects(kube::kWorkloads).empty());
  EXPECT_TRUE(h.PodNames().empty());
}

TEST_F(QueueTest, AWorkloadCreateKueueCannotAnswerHoldsTheJobAndIsRetried) {
  h.client.FailNext("create", "workloads", absl::UnavailableError("webhook unreachable"));
  absl::StatusOr<runtime::ReconcileResult> r = h.Pass();
  EXPECT_FALSE(r.ok()) << "retried with backoff";
  EXPECT_EQ(FindCondition(h.Status(), kQueued)->reason, "FailedCreateWorkload");
  EXPECT_TRUE(h.PodNames().empty());
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.client.Objects(kube::kWorkloads).size(), 1u);
  EXPECT_TRUE(h.PodNames().empty()) << "held until Kueue admits it";
}

TEST(QueueOffTest, WithoutKueueSupportTheLabelIsIgnored) {
  Harness h{QueuedJob(), /*kueue=*/false};
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.PodNames().size(), kAllPods.size());
}

}  // namespace
}  // namespace disttrain::controller
