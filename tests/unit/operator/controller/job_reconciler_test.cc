// The reconciler on a fake API server: every lifecycle path.
#include "operator/controller/job_reconciler.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tests/unit/operator/controller/reconciler_harness.h"

namespace disttrain::controller {

using ::disttrain::policy::FindCondition;
using ::disttrain::policy::kCreated;
using ::disttrain::policy::kEvaluated;
using ::disttrain::policy::kFailed;
using ::disttrain::policy::kRestarting;
using ::disttrain::policy::kRunning;
using ::disttrain::policy::kSucceeded;
using ::disttrain::policy::kSuspended;
namespace {

using nlohmann::json;
using testing::Harness;
using testing::JobJson;
using testing::kAllPods;

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

TEST(JobReconcilerTest, AFirstPassWithAFailedCreateWritesItsStatusAtOnce) {
  Harness h;
  h.client.FailNext("create", "pods", absl::UnavailableError("etcd is busy"));
  ASSERT_FALSE(h.Pass().ok());
  EXPECT_EQ(h.Requests("patch", "distributedtrainings"), 1);
  EXPECT_EQ(h.State(), kCreated);
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

json JobWithEvaluator(int64_t grace_seconds) {
  json job = JobJson({{"finalEvaluationGracePeriodSeconds", grace_seconds}});
  job["spec"]["replicaSpecs"]["Evaluator"] = testing::Role(1, "OnFailure");
  return job;
}

TEST(JobReconcilerTest, KeepsTheEvaluatorUntilItEvaluatedTheFinalCheckpoint) {
  Harness h(JobWithEvaluator(60));
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  h.SetPod("dist-chief-0", "Succeeded");
  h.SetTerminationMessage("dist-chief-0", R"({"globalStep":400,"loss":0.5})");
  absl::StatusOr<runtime::ReconcileResult> done = h.Pass();
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(h.State(), kSucceeded);
  EXPECT_FALSE(h.HasPod("dist-ps-0")) << "parameter servers go at once";
  EXPECT_TRUE(h.HasPod("dist-evaluator-0")) << "it evaluates the final checkpoint";
  EXPECT_EQ(done->requeue_after, absl::Seconds(60));
  EXPECT_EQ(h.Status().replica_statuses[api::ReplicaType::kEvaluator].active, 1);
  h.clock.Advance(absl::Seconds(5));
  h.SetPod("dist-evaluator-0", "Succeeded");
  h.SetTerminationMessage("dist-evaluator-0", R"({"globalStep":400,"accuracy":0.85,"loss":0.4})");
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_EQ(h.Status().result->evaluated_step, 400);
  EXPECT_EQ(h.Status().result->accuracy, 0.85);
  const api::JobStatus status = h.Status();
  const api::Condition* evaluated = FindCondition(status, kEvaluated);
  ASSERT_NE(evaluated, nullptr);
  EXPECT_TRUE(evaluated->status);
  EXPECT_EQ(evaluated->reason, "FinalCheckpointEvaluated");
  EXPECT_EQ(h.events.Count("FinalCheckpointEvaluated"), 1);
  EXPECT_TRUE(h.HasPod("dist-evaluator-0")) << "finished pods stay for their logs";
}

TEST(JobReconcilerTest, DeletesAnEvaluatorThatOutlivesItsGraceAndSaysSo) {
  Harness h(JobWithEvaluator(30));
  ASSERT_TRUE(h.Pass().ok());
  h.RunAll();
  h.SetPod("dist-chief-0", "Succeeded");
  ASSERT_TRUE(h.Pass().ok());
  ASSERT_TRUE(h.HasPod("dist-evaluator-0"));
  h.clock.Advance(absl::Seconds(29));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_TRUE(h.HasPod("dist-evaluator-0"));
  EXPECT_EQ(FindCondition(h.Status(), kEvaluated), nullptr);
  h.clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(h.Pass().ok());
  EXPECT_FALSE(h.HasPod("dist-evaluator-0"));
  const api::JobStatus status = h.Status();
  const api::Condition* evaluated = FindCondition(status, kEvaluated);
  ASSERT_NE(evaluated, nullptr);
  EXPECT_FALSE(evaluated->status);
  EXPECT_EQ(evaluated->reason, "EvaluationTimedOut");
  EXPECT_EQ(h.State(), kSucceeded) << "the training itself succeeded";
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

// `kubectl scale dtr dist --replicas N`: the API server writes replicaSpecs.Worker.replicas.
void ScaleWorkers(Harness& h, int replicas) {
  absl::StatusOr<json> job = h.client.Get(kube::kDistributedTrainings, "default", "dist");
  ASSERT_TRUE(job.ok());
  (*job)["spec"]["replicaSpecs"]["Worker"]["replicas"] = replicas;
  (*job)["metadata"]["generation"] = (*job)["metadata"]["generation"].get<int>() + 1;
  h.client.Put(kube::kDistributedTrainings, *job);
}

// Scaling the workers of a running job adds or removes worker pods only: the highest indexes
// go (with their Services), nothing else is touched, nothing counts as a restart, and a worker
// that fails while it is scaled away neither restarts nor fails the job.
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
