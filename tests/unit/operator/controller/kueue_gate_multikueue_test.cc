// MultiKueue's two ends in the Kueue gate (kueue_gate.h), on the reconciler harness: in a worker
// cluster, the job MultiKueue copied adopts the Workload it prebuilt; in the manager cluster, a job
// with spec.managedBy kueue.x-k8s.io/multikueue gets its Workload and nothing else; any other
// manager, nothing.
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "operator/controller/job_reconciler.h"
#include "operator/policy/conditions.h"
#include "operator/queueing/workload.h"
#include "tests/unit/operator/controller/queue_fixture.h"
#include "tests/unit/operator/controller/reconciler_harness.h"

namespace disttrain::controller {

using ::disttrain::policy::FindCondition;
using ::disttrain::policy::kQueued;
namespace {

using nlohmann::json;
using testing::Harness;
using testing::kAllPods;
using testing::QueuedJob;
using testing::QueueTest;

TEST_F(QueueTest, AJobCopiedByMultiKueueWaitsForItsPrebuiltWorkloadAndAdoptsIt) {
  json job = QueuedJob();
  job["metadata"]["labels"][queueing::kPrebuiltWorkloadLabel] = "remote";
  h.client.Put(kube::kDistributedTrainings, job);
  absl::StatusOr<runtime::ReconcileResult> waiting = h.Pass();
  ASSERT_TRUE(waiting.ok());
  EXPECT_TRUE(h.client.Objects(kube::kWorkloads).empty()) << "it never makes its own";
  const api::JobStatus status = h.Status();
  ASSERT_NE(FindCondition(status, kQueued), nullptr);
  EXPECT_EQ(FindCondition(status, kQueued)->reason, "WaitingForWorkload");
  ASSERT_TRUE(waiting->requeue_after.has_value());
  EXPECT_LE(*waiting->requeue_after, absl::Seconds(5)) << "the Workload's add queues no pass";
  // MultiKueue creates it: the PodSets of the job, no owner.
  Harness probe{QueuedJob(), /*kueue=*/true};
  ASSERT_TRUE(probe.Pass().ok());
  json remote = probe.client.Objects(kube::kWorkloads)[0];
  json prebuilt = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                   {"kind", "Workload"},
                   {"metadata", {{"name", "remote"}, {"namespace", "default"}}},
                   {"spec", remote["spec"]}};
  h.client.Put(kube::kWorkloads, prebuilt);
  ASSERT_TRUE(h.Pass().ok());
  std::vector<json> all = h.client.Objects(kube::kWorkloads);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0]["metadata"]["ownerReferences"][0]["uid"], "job-uid");
  EXPECT_EQ(h.events.Count("AdoptedWorkload"), 1);
  EXPECT_TRUE(h.PodNames().empty()) << "no pod before Kueue admits it";
  Admit();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.PodNames().size(), kAllPods.size());
  EXPECT_EQ(h.client.Objects(kube::kWorkloads).size(), 1u);
}

TEST(QueueOffTest, AJobManagedByAnotherControllerGetsNoWrite) {
  for (const bool kueue : {true, false}) {
    for (const char* manager : {"example.com/another", "kueue.x-k8s.io/multikueue"}) {
      if (kueue && std::string(manager) == "kueue.x-k8s.io/multikueue") continue;  // below
      json job = QueuedJob();
      job["spec"]["managedBy"] = manager;
      Harness h{job, kueue};
      ASSERT_TRUE(h.Pass().ok());
      EXPECT_TRUE(h.PodNames().empty()) << manager;
      EXPECT_TRUE(h.client.Objects(kube::kWorkloads).empty()) << manager << " " << kueue;
      EXPECT_EQ(h.Requests("patch", "distributedtrainings"), 0) << manager;
      EXPECT_TRUE(h.events.All().empty()) << manager;
    }
  }
}

// MultiKueue's manager cluster: Kueue makes no Workload for a kind it does not compile in, so
// without this one MultiKueue would never dispatch the job (Kueue's KEP 2349: "an external
// controller creates a Workload object for the job"). Nothing else is written: the job runs in
// a worker cluster, and MultiKueue mirrors its status here.
class MultiKueueManagerTest : public ::testing::Test {
 protected:
  static json ManagedJob() {
    json job = QueuedJob();
    job["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue";
    return job;
  }
  static std::optional<json> WorkloadConditionOf(const json& wl, const std::string& type) {
    for (const json& c : wl.value("/status/conditions"_json_pointer, json::array())) {
      if (c["type"] == type) return c;
    }
    return std::nullopt;
  }
  // The manager's Kueue admitted the job's Workload once a worker's copy reserved quota.
  json AdmitDispatched() {
    json wl = h.client.Objects(kube::kWorkloads)[0];
    wl["status"] = {{"admission", {{"clusterQueue", "cq"}, {"podSetAssignments", json::array()}}},
                    {"clusterName", "worker-1"},
                    {"conditions",
                     {{{"type", "QuotaReserved"}, {"status", "True"}, {"reason", "QuotaReserved"}},
                      {{"type", "Admitted"}, {"status", "True"}, {"reason", "Admitted"}}}}};
    h.client.Put(kube::kWorkloads, wl);
    return wl;
  }
  Harness h{ManagedJob(), /*kueue=*/true};
};

TEST_F(MultiKueueManagerTest, TheJobGetsItsWorkloadAndAStatusOnlyWhileItWaits) {
  ASSERT_TRUE(h.Pass().ok());
  {
    const api::JobStatus status = h.Status();
    EXPECT_EQ(status.state, "Queued");
    const api::Condition* queued = FindCondition(status, kQueued);
    ASSERT_NE(queued, nullptr);
    EXPECT_EQ(queued->reason, "WaitingForAdmission");
    EXPECT_EQ(h.events.Count("Queued"), 0) << "CreatedWorkload says it";
  }
  std::vector<json> wls = h.client.Objects(kube::kWorkloads);
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_EQ(wls[0]["metadata"]["ownerReferences"][0]["apiVersion"], "disttrain.io/v1");
  EXPECT_EQ(wls[0]["metadata"]["ownerReferences"][0]["kind"], "DistributedTraining");
  EXPECT_EQ(wls[0]["spec"]["queueName"], "team-a");
  json counts = json::object();
  for (const json& ps : wls[0]["spec"]["podSets"])
    counts[ps["name"].get<std::string>()] = ps["count"];
  EXPECT_EQ(counts, json({{"chief", 1}, {"ps", 1}, {"worker", 2}}));
  EXPECT_EQ(h.events.Count("CreatedWorkload"), 1);
  // Admitted by the manager's Kueue and dispatched: still no pod, no Service, and no status
  // write of this operator's (MultiKueue mirrors the worker's copy's from now on).
  const int status_writes = h.Requests("patch", "distributedtrainings");
  EXPECT_EQ(status_writes, 1);
  json wl = wls[0];
  wl["status"] = {{"admission", {{"clusterQueue", "cq"}, {"podSetAssignments", json::array()}}},
                  {"clusterName", "worker-1"},
                  {"conditions",
                   {{{"type", "QuotaReserved"}, {"status", "True"}},
                    {{"type", "Admitted"}, {"status", "True"}}}}};
  h.client.Put(kube::kWorkloads, wl);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.PodNames().empty());
  EXPECT_TRUE(h.client.Objects(kube::kServices).empty());
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), status_writes);
  EXPECT_EQ(h.Requests("update", "distributedtrainings"), 0);
  EXPECT_EQ(h.client.Objects(kube::kWorkloads).size(), 1u);
}

TEST_F(MultiKueueManagerTest, TheMirroredStatusWritesNothingAndMultiKueuesFinishReleasesIt) {
  ASSERT_TRUE(h.Pass().ok());  // the job's Queued status
  const int status_writes = h.Requests("patch", "distributedtrainings");
  // MultiKueue mirrors the worker's status into the job, then finishes the Workload with the
  // worker's reason.
  absl::StatusOr<json> job = h.client.Get(kube::kDistributedTrainings, "default", "dist");
  ASSERT_TRUE(job.ok());
  (*job)["status"] = {{"state", "Succeeded"},
                      {"conditions", {{{"type", "Succeeded"}, {"status", "True"}}}}};
  h.client.Put(kube::kDistributedTrainings, *job);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("patch", "workloads"), 0) << "Finished is MultiKueue's to write here";
  std::vector<json> wls = h.client.Objects(kube::kWorkloads);
  ASSERT_EQ(wls.size(), 1u);
  json wl = wls[0];
  ASSERT_EQ(wl["metadata"]["finalizers"], json({queueing::kResourceInUseFinalizer}));
  wl["status"] = {{"clusterName", "worker-1"},
                  {"conditions", {{{"type", "Admitted"}, {"status", "True"}}}}};
  const json before = queueing::ProjectWorkload(wl);
  wl["status"]["conditions"].push_back(
      {{"type", "Finished"}, {"status", "True"}, {"reason", "Succeeded"}});
  EXPECT_TRUE(queueing::DecisionChanged(before, queueing::ProjectWorkload(wl)))
      << "MultiKueue's Finished (the worker's reason) queues the pass that releases it";
  h.client.Put(kube::kWorkloads, wl);
  ASSERT_TRUE(h.Pass().ok());
  const json finalizers =
      h.client.Objects(kube::kWorkloads)[0]["metadata"].value("finalizers", json());
  EXPECT_TRUE(finalizers.is_null() || finalizers.empty()) << finalizers.dump();
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), status_writes);
  EXPECT_EQ(h.Status().state, "Succeeded") << "the mirror stands";
  EXPECT_TRUE(h.PodNames().empty());
}

// Kueue evicts the manager's Workload when the worker evicted its copy (its
// MultiKueueRedoAdmissionOnEvictionInWorker, on by default since v0.16) or lost the worker;
// the quota is the job's controller's to give back, and with no pod here it goes at once, so
// MultiKueue removes the worker's copy and the Workload is dispatched again.
TEST_F(MultiKueueManagerTest, AnEvictedWorkloadGivesItsQuotaBackAtOnce) {
  ASSERT_TRUE(h.Pass().ok());
  json wl = AdmitDispatched();
  // MultiKueue mirrors the worker's copy, running.
  json job = *h.client.Get(kube::kDistributedTrainings, "default", "dist");
  job["status"] = {
      {"state", "Running"},
      {"conditions", {{{"type", "Running"}, {"status", "True"}, {"reason", "AllRunning"}}}},
      {"replicaStatuses",
       {{"Worker",
         {{"active", 1}, {"progress", "1/2"}, {"succeededIndexes", {0}}, {"pastRestarts", 1}}}}}};
  h.client.Put(kube::kDistributedTrainings, job);
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("patch", "workloads"), 0) << "admitted: nothing of this operator's";
  const int status_writes = h.Requests("patch", "distributedtrainings");
  EXPECT_EQ(h.Status().state, "Running") << "the mirror stands";
  const json before = queueing::ProjectWorkload(wl);
  wl["status"]["conditions"].push_back({{"type", "Evicted"},
                                        {"status", "True"},
                                        {"reason", "AdmissionCheck"},
                                        {"message", "At least one admission check is false"}});
  EXPECT_TRUE(queueing::DecisionChanged(before, queueing::ProjectWorkload(wl)));
  h.client.Put(kube::kWorkloads, wl);
  ASSERT_TRUE(h.Pass().ok());
  const json released = h.client.Objects(kube::kWorkloads)[0];
  EXPECT_FALSE(released["status"].contains("admission")) << released["status"].dump();
  std::optional<json> reserved = WorkloadConditionOf(released, "QuotaReserved");
  ASSERT_TRUE(reserved.has_value());
  EXPECT_EQ((*reserved)["status"], "False");
  EXPECT_EQ((*reserved)["reason"], "Pending");
  EXPECT_EQ(h.events.Count("QuotaReleased"), 1);
  // The job says it waits again (the copy is gone with its counts), until the next dispatch.
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), status_writes + 1);
  {
    const api::JobStatus status = h.Status();
    EXPECT_EQ(status.state, "Queued");
    const api::Condition* queued = FindCondition(status, kQueued);
    ASSERT_NE(queued, nullptr);
    EXPECT_EQ(queued->reason, "Evicted");
    EXPECT_NE(queued->message.find("AdmissionCheck"), std::string::npos) << queued->message;
    const api::ReplicaStatus& workers = status.replica_statuses.at(api::ReplicaType::kWorker);
    EXPECT_EQ(workers.active, 0);
    EXPECT_EQ(workers.progress, "0/2");
    EXPECT_EQ(workers.succeeded, 0);
    EXPECT_EQ(workers.restarts, 0);
    // The copy's fields the encoding leaves out once empty are removed, not left behind.
    const json stored = (*h.client.Get(kube::kDistributedTrainings, "default", "dist"))["status"];
    EXPECT_FALSE(stored["replicaStatuses"]["Worker"].contains("succeededIndexes")) << stored.dump();
    EXPECT_FALSE(stored["replicaStatuses"]["Worker"].contains("pastRestarts")) << stored.dump();
  }
  EXPECT_EQ(h.events.Count("Evicted"), 1);
  EXPECT_TRUE(h.PodNames().empty());
  // Released once: the next pass (the write's own event) writes nothing more.
  const int patches = h.Requests("patch", "workloads");
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("patch", "workloads"), patches);
}

// MultiKueue's adapter never updates the worker's copy: a Workload kept after the job grew would
// leave the worker running the old spec. Replaced, as in a job's own cluster (and as Kueue's
// controllers do for the jobs MultiKueue dispatches), it is dispatched again as the job is now.
TEST_F(MultiKueueManagerTest, AJobChangedAfterItsDispatchGetsANewWorkload) {
  ASSERT_TRUE(h.Pass().ok());
  const std::string uid = AdmitDispatched()["metadata"]["uid"];
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.events.Count("DeletedWorkload"), 0) << "the job as dispatched: kept";
  json job = *h.client.Get(kube::kDistributedTrainings, "default", "dist");
  job["spec"]["replicaSpecs"]["Worker"]["replicas"] = 3;
  job["metadata"]["generation"] = 2;
  h.client.Put(kube::kDistributedTrainings, job);
  ASSERT_TRUE(h.Pass().ok());  // deleted (Kueue's finalizer keeps it a moment)
  EXPECT_EQ(h.events.Count("DeletedWorkload"), 1);
  EXPECT_EQ(FindCondition(h.Status(), kQueued)->reason, "WorkloadReplaced");
  ASSERT_TRUE(h.Pass().ok());  // no pod here holds its quota: the finalizer goes, so does it
  EXPECT_TRUE(h.client.Objects(kube::kWorkloads).empty());
  ASSERT_TRUE(h.Pass().ok());  // and a new one stands for the job as it is now
  std::vector<json> wls = h.client.Objects(kube::kWorkloads);
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_NE(wls[0]["metadata"]["uid"], uid);
  json counts = json::object();
  for (const json& ps : wls[0]["spec"]["podSets"])
    counts[ps["name"].get<std::string>()] = ps["count"];
  EXPECT_EQ(counts["worker"], 3);
  EXPECT_EQ(FindCondition(h.Status(), kQueued)->reason, "WaitingForAdmission");
  EXPECT_TRUE(h.PodNames().empty());
}

}  // namespace
}  // namespace disttrain::controller
