// The reconciler on a fake API server: every lifecycle path.
#include "operator/controller/job_reconciler.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tests/unit/operator/controller/reconciler_harness.h"

namespace disttrain::controller {

using ::disttrain::policy::FindCondition;
using ::disttrain::policy::kCreated;
using ::disttrain::policy::kFailed;
using ::disttrain::policy::kRestarting;
using ::disttrain::policy::kRunning;
namespace {

using nlohmann::json;
using testing::Harness;
using testing::JobJson;
using testing::kAllPods;
using testing::ScaleWorkers;

// ---- Lifecycle paths ----

TEST(JobReconcilerTest, ANewJobsFirstStatusIsWrittenByThePassItsPodsBring) {
  Harness h;
  const absl::Time first = h.clock.Now();
  absl::StatusOr<runtime::ReconcileResult> created = h.Pass();
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), 0);
  EXPECT_EQ(created->requeue_after, JobReconciler::kFirstWriteWait);  // should no event come
  h.clock.Advance(absl::Milliseconds(500));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), 1);
  api::JobStatus status = h.Status();
  EXPECT_EQ(status.state, kCreated);
  ASSERT_TRUE(status.start_time.has_value());
  EXPECT_EQ(*status.start_time, first);  // the first pass's time, not the writing pass's
  EXPECT_EQ(FindCondition(status, kCreated)->last_transition_time, first);
  EXPECT_EQ(status.replica_statuses[api::ReplicaType::kWorker].active, 2);
  ASSERT_TRUE(h.Pass().ok());  // nothing changed: nothing written
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), 1);
}

TEST(JobReconcilerTest, APodCountChangeAloneIsWrittenAfterTheDelayOrWithTheNextCondition) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_TRUE(h.Pass().ok());  // Created, with its pods counted
  ASSERT_EQ(h.Requests("patch", "distributedtrainings"), 1);
  h.SetPod("dist-chief-0", "Running");
  absl::StatusOr<runtime::ReconcileResult> first = h.Pass();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), 1) << "one more pod runs: no write yet";
  EXPECT_EQ(first->requeue_after, JobReconciler::kCountsWriteDelay);
  h.clock.Advance(absl::Seconds(2));
  h.SetPod("dist-ps-0", "Running");
  absl::StatusOr<runtime::ReconcileResult> second = h.Pass();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), 1);
  EXPECT_EQ(second->requeue_after, JobReconciler::kCountsWriteDelay - absl::Seconds(2))
      << "the wait counts from the first change not written";
  h.clock.Advance(JobReconciler::kCountsWriteDelay - absl::Seconds(2));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), 2);
  api::JobStatus status = h.Status();
  EXPECT_EQ(status.replica_statuses[api::ReplicaType::kChief].progress, "1/1");
  EXPECT_EQ(status.replica_statuses[api::ReplicaType::kPS].progress, "1/1");
  EXPECT_EQ(status.state, kCreated);
  // A condition is written at once, with the counts of the same pass.
  h.clock.Advance(absl::Seconds(1));
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), 3);
  EXPECT_EQ(h.State(), kRunning);
  EXPECT_EQ(h.Status().replica_statuses[api::ReplicaType::kWorker].progress, "2/2");
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), 3);
}

TEST(JobReconcilerTest, AFirstPassWithAFailedCreateWritesItsStatusAtOnce) {
  Harness h;
  h.client.FailNext("create", "pods", absl::UnavailableError("etcd is busy"));
  ASSERT_FALSE(h.Pass().ok());
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), 1);
  EXPECT_EQ(h.State(), kCreated);
}

TEST(JobReconcilerTest, AFailedStatusWriteStillTellsTheCallsItsPassMadeButNotItsNews) {
  // Found by e2e_multikueue: a pass deleted a Workload, its status write met 409 Conflict, and
  // the event saying so was lost; the retry found the Workload deleting and never said it.
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_EQ(h.State(), kRunning);
  ScaleWorkers(h, 1);
  h.SetPod("dist-ps-0", "Failed", 137);
  h.client.FailNext("patch", "distributedtrainings",
                    absl::AbortedError("the object has been modified"));
  EXPECT_FALSE(h.Pass().ok());
  EXPECT_FALSE(h.HasPod("dist-worker-1"));
  EXPECT_EQ(h.events.Count("ScaledDown"), 1) << "the delete was made, so it is told";
  EXPECT_EQ(h.events.Count("Restarting"), 0) << "news of a status not written waits for it";
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.events.Count("ScaledDown"), 1);
  EXPECT_EQ(h.events.Count("Restarting"), 1);
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

TEST(JobReconcilerTest, CopiesTheChiefsResultIntoTheStatusAndKeepsIt) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  h.SetPod("dist-chief-0", "Succeeded");
  h.SetTerminationMessage("dist-chief-0", R"({"globalStep":500,"loss":0.5,"trainAccuracy":0.8})");
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_TRUE(h.Status().result.has_value());
  EXPECT_EQ(h.Status().result->global_step, 500);
  EXPECT_EQ(h.Status().result->loss, 0.5);
  EXPECT_EQ(h.Status().result->train_accuracy, 0.8);
  EXPECT_EQ(h.events.Count("TrainingResult"), 1);

  ASSERT_TRUE(h.client.Delete(kube::kPods, "default", "dist-chief-0", {}).ok());
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Status().result->global_step, 500) << "the result outlives the chief's pod";
  EXPECT_EQ(h.events.Count("TrainingResult"), 1) << "told once";
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

// `kubectl scale dtr dist --replicas N`: the API server writes replicaSpecs.Worker.replicas.
// Scaling the workers of a running job adds or removes worker pods only: the highest indexes
// go (with their Services), nothing else is touched, nothing counts as a restart, and a worker
// that fails while it is scaled away neither restarts nor fails the job.
TEST(JobReconcilerTest, AStaleCacheNeverCountsARestartTwice) {
  Harness h;
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  h.SetPod("dist-worker-0", "Failed", 137);
  h.Sync();
  ASSERT_TRUE(h.reconciler->Reconcile("default/dist").ok());
  // The caches still hold the failed pod and the job without the new status: the pass knows
  // the version its own write replaced, does nothing and comes back shortly.
  const int patches = h.Requests("patch", "distributedtrainings");
  absl::StatusOr<runtime::ReconcileResult> again = h.reconciler->Reconcile("default/dist");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->requeue_after, JobReconciler::kCacheCatchUp);
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), patches) << "wrote from a stale cache";
  // A cache that never catches up is read as it is after a while: the conditional write then
  // gets 409 Conflict and counts nothing.
  h.clock.Advance(JobReconciler::kCacheCatchUpLimit);
  again = h.reconciler->Reconcile("default/dist");
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

TEST(JobReconcilerTest, AnOomKilledPodComesBackWithMoreMemoryAndNoRestartCounted) {
  json job =
      JobJson({{"backoffLimit", 0}, {"oomPolicy", {{"memoryFactor", 2}, {"maxMemory", "1Gi"}}}});
  job["spec"]["replicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"] = {
      {"limits", {{"memory", "256Mi"}}}};
  Harness h(job);
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  ASSERT_TRUE(h.Pass().ok());
  const std::string killed = h.Uid("dist-worker-0");
  h.SetPod("dist-worker-0", "Failed", 137);
  {
    absl::StatusOr<json> pod = h.client.Get(kube::kPods, "default", "dist-worker-0");
    ASSERT_TRUE(pod.ok());
    (*pod)["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] = "OOMKilled";
    h.client.Put(kube::kPods, *pod);
  }
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_FALSE(h.HasPod("dist-worker-0"));
  ASSERT_TRUE(h.Pass().ok());  // the informer saw it go: a new pod
  EXPECT_NE(h.State(), kFailed) << "backoffLimit 0, yet the OOM kill is not a restart";
  ASSERT_TRUE(h.HasPod("dist-worker-0"));
  EXPECT_NE(h.Uid("dist-worker-0"), killed);
  absl::StatusOr<json> again = h.client.Get(kube::kPods, "default", "dist-worker-0");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)["spec"]["containers"][0]["resources"]["limits"]["memory"], "512Mi");
  absl::StatusOr<json> other = h.client.Get(kube::kPods, "default", "dist-worker-1");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ((*other)["spec"]["containers"][0]["resources"]["limits"]["memory"], "256Mi");
  EXPECT_EQ(h.events.Count("MemoryIncreased"), 1);
  const api::JobStatus status = h.Status();
  EXPECT_EQ(status.replica_statuses.at(api::ReplicaType::kWorker).resized,
            (std::vector<api::ResizedReplica>{
                {.index = 0, .memory = "512Mi", .oom_kills = 1, .pod_uid = killed}}));
  EXPECT_EQ(h.Restarts(), 0);
}

TEST(JobReconcilerTest, FailsAndCleansUpWhenTheDeadlinePasses) {
  Harness h(JobJson({{"activeDeadlineSeconds", 60}}));
  absl::StatusOr<runtime::ReconcileResult> first = h.Pass();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->requeue_after, JobReconciler::kFirstWriteWait);
  h.clock.Advance(absl::Seconds(1));
  // The deadline counts from the first pass, though the status was written a second later.
  absl::StatusOr<runtime::ReconcileResult> written = h.Pass();
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->requeue_after, absl::Seconds(59));
  h.clock.Advance(absl::Seconds(60));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(FindCondition(h.Status(), kFailed)->reason, "DeadlineExceeded");
  EXPECT_TRUE(h.PodNames().empty());
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

TEST(JobReconcilerTest, ServesOnlyTheJobsOfTheSelectedNamespaces) {
  Harness h;
  runtime::Store namespaces;
  h.reconciler = std::make_unique<JobReconciler>([&] {
    ReconcilerDeps deps = h.Deps();
    deps.namespaces = &namespaces;
    return deps;
  }());
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.client.actions().empty()) << "a job outside the selection got a request";
  namespaces.Upsert(std::make_shared<const json>(json{{"metadata", {{"name", "default"}}}}));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.PodNames().size(), kAllPods.size());
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

}  // namespace
}  // namespace disttrain::controller
