// The DistributedTraining reconciler: level-triggered and idempotent. Each pass reads the job
// and its pods and services from the informer caches, converges the cluster towards the job
// (create what is missing, restart or fail per policy, clean up when finished, delete after the
// TTL), computes the status from what exists, writes it once when it changed (with a
// resourceVersion precondition), then deletes the failed pods whose restart that write
// recorded, and only then records events. A failed API call never ends a pass early: the pass
// writes what it learned, then returns the error so the work queue retries the job with per-key
// backoff. Time-based policies return a requeue-after. Thread-safe: the work queue runs at most
// one pass per job at a time; passes of different jobs run in parallel.
#ifndef DISTTRAIN_OPERATOR_CONTROLLER_JOB_RECONCILER_H_
#define DISTTRAIN_OPERATOR_CONTROLLER_JOB_RECONCILER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "operator/controller/expectations.h"
#include "operator/controller/job_api.h"
#include "operator/controller/job_metrics.h"
#include "operator/controller/queue_gate.h"
#include "operator/kube/kube_client.h"
#include "operator/policy/build_options.h"
#include "operator/policy/pod_state.h"
#include "operator/progress/progress_tracker.h"
#include "operator/runtime/controller.h"
#include "operator/runtime/event_recorder.h"
#include "operator/runtime/store.h"

namespace disttrain::controller {

struct ReconcilerDeps {
  // The API the jobs come through (DistributedTraining unless set).
  const JobApi* api = &DistributedTrainingApi();
  kube::KubeClient* client = nullptr;
  const runtime::Store* jobs = nullptr;
  const runtime::Store* pods = nullptr;
  const runtime::Store* services = nullptr;
  // Kueue's Workloads owned by jobs and its ResourceFlavors; null when Kueue support is off
  // (a job's kueue.x-k8s.io/queue-name label is then ignored).
  const runtime::Store* workloads = nullptr;
  const runtime::Store* flavors = nullptr;
  // Write the Workload's PodsReady condition once every replica runs, as Kueue's own job
  // controllers do when its configuration enables waitForPodsReady (nothing else in Kueue reads
  // it but one eviction metric). False saves a Workload write per job where it is off.
  bool kueue_pods_ready = true;
  // The namespaces whose jobs this reconciler serves (a namespace selector's informer); null
  // serves every namespace it watches. A job elsewhere gets no pass: not a single write.
  const runtime::Store* namespaces = nullptr;
  runtime::EventRecorder* events = nullptr;
  Clock* clock = nullptr;
  // A pass's independent API requests (creating a job's missing replicas after the first,
  // deleting its pods on cleanup) go out this many at once (KubeClient::CreateAll/DeleteAll).
  int parallel_requests = 8;
  policy::BuildOptions build;
  // Reads running jobs' progress for status.progress; null reads none.
  progress::ProgressTracker* progress = nullptr;
  // Each job's own series on /metrics (job_metrics.h); null exports none.
  JobMetrics* job_metrics = nullptr;
};

struct ReconcilePass;  // internal/reconcile_pass.h

// Queues come in through one seam (queue_gate.h): the Kueue gate when `workloads` is set, else
// none.
class JobReconciler : public runtime::Reconciler, private PassActions {
 public:
  // Passes in a row whose pod creation failed with a retryable error before the job gets the
  // ReplicaFailure condition (a permanent error sets it at once).
  static constexpr int kCreateFailuresBeforeCondition = 3;
  // How long a pass waits for the job cache to catch up with this process's own status write
  // before it retries, and how long it keeps waiting before it reads the cache as it is. The
  // limit is short because a write the API server finds changes nothing brings no new version:
  // the wait then costs the job at most this long (the watch itself brings a write back in
  // milliseconds).
  static constexpr absl::Duration kCacheCatchUp = absl::Milliseconds(20);
  static constexpr absl::Duration kCacheCatchUpLimit = absl::Seconds(1);
  // A new job's first status write waits for the pass its new pods' events bring (FirstWriteWaits);
  // the first pass asks to come back after this long in case no event does.
  static constexpr absl::Duration kFirstWriteWait = absl::Seconds(1);
  // A status that differs from the stored one only in its pods' counts (active, running,
  // progress) is written once it has differed this long (CountsWriteWaits), unless something
  // else changes first and takes the counts along.
  static constexpr absl::Duration kCountsWriteDelay = absl::Seconds(5);
  // How long a pod or Service this process created is taken to exist while the informer does
  // not show it yet (Expectations::IsCreating); then a pass creates it again.
  static constexpr absl::Duration kCreateSeenLimit = absl::Seconds(30);

  explicit JobReconciler(ReconcilerDeps deps);

  absl::StatusOr<runtime::ReconcileResult> Reconcile(const std::string& key) override;

  // The pod informer reports a pod gone: a pod this process deleted is no longer pending.
  void ForgetPod(const std::string& uid);
  // The pod or Service informer shows an object (added, or gone): a create of this process is no
  // longer pending. `resource` is "pods" or "services".
  void Saw(const char* resource, const nlohmann::json& object);

 private:
  using Pass = ReconcilePass;

  absl::StatusOr<runtime::ReconcileResult> ReconcileJob(const nlohmann::json& cached);
  // Whether `cached` is the version this process's last status write of the job replaced (the
  // watch has not brought the write back yet). A pass from it would compute from the old status
  // and its conditional write would get 409 Conflict.
  bool BehindOwnWrite(const std::string& key, const nlohmann::json& cached);
  // Whether this pass, a new job's first, may leave its status to the next pass (see the .cc),
  // and the time its first pass ran once one did (else `now`).
  bool FirstWriteWaits(const Pass& p) const;
  // How much longer this pass's status write waits when only pod counts changed; nullopt: write.
  std::optional<absl::Duration> CountsWriteWaits(const Pass& p);
  absl::Time FirstPassTime(const std::string& key, const std::string& uid, absl::Time now);
  void ReadChildren(Pass& p);
  void FailInvalid(Pass& p, const absl::Status& why) override;
  // What the pass reports beside the lifecycle (job_reconciler_reporting.cc). The Evaluated
  // condition once the final evaluation of a succeeded job has an outcome.
  void TrackFinalEvaluation(Pass& p);
  // status.progress: what the tracker read last while the job trains; the final step once it
  // ended. Tells the tracker what to read.
  void TrackProgress(Pass& p);
  // The Waiting condition: why a job that has not ended is not running (policy/waiting_reason.h).
  void UpdateWaiting(Pass& p);
  // The job's series on /metrics from the pass's status (deps_.job_metrics); gone with the job.
  void RecordMetrics(Pass& p);
  void ForgetMetrics(const std::string& key);
  void Run(Pass& p);
  void Suspend(Pass& p);
  // PassActions, for the queue gate too.
  void Finish(Pass& p, bool succeeded, const std::string& reason,
              const std::string& message) override;
  void Cleanup(Pass& p);
  void DeleteAfterTtl(Pass& p);
  bool HandleFailures(Pass& p);
  bool CheckInPlaceRestarts(Pass& p);
  bool CreateMissing(Pass& p);
  void ReportCreateFailures(Pass& p, const absl::Status& first, bool permanent);
  // Creating the job's Service answered AlreadyExists: OK when that Service is the job's (the
  // informer has not shown it yet), FailedPrecondition naming the conflict when another owns it.
  absl::Status CheckJobServiceOwner(Pass& p);
  // No pod is missing (or every missing one was created): clears ReplicaFailure and the count of
  // failed creation passes.
  void CreatedEverything(Pass& p);
  // The objects the job's pods need (policy/prerequisites.h), each created before the first pod:
  // once pods exist, so do they (a suspended or restarted job that has none left tries again,
  // and finds them). False when one could not be built or created: the pass stops there, and
  // no pod of the job ever runs unprotected or without its gang. A PodGroup whose API is not
  // installed is told (PodGroupUnavailable) and gone without.
  bool CreatePrerequisites(Pass& p);
  // A running job's PodGroup follows its spec, as the training-operator's does: once the spec
  // changed (minAvailable, replicas, resources), its minMember and minResources are brought up
  // to date, so lowering minAvailable releases a gang that waits. A failed update is retried by
  // the next passes; a PodGroup that is gone (its API uninstalled) is left so.
  void UpdatePodGroup(Pass& p);
  void DeletePodGroup(Pass& p);
  const kube::Resource& PodGroupResource() const;
  void UpdateCounts(Pass& p) override;
  absl::Status WriteStatus(Pass& p);
  // Records a worker set aside (status and a warning event); its pod is deleted as a replaced one.
  void SetWorkerAside(Pass& p, const api::SetAsideReplica& entry);
  void ReplaceFailedPods(Pass& p);
  // Pods the taint manager evicted from a lost node stay Terminating for good (no kubelet
  // confirms): removed at once (grace period 0), so that the missing replica is created again.
  void RemovePodsOfLostNodes(Pass& p);
  // Pods whose index the spec no longer has (a role scaled down, e.g. `kubectl scale`): deleted
  // with their grace period and their Services, not counted as restarts (event ScaledDown).
  void RemoveSurplusReplicas(Pass& p);
  void EmitEvents(Pass& p);
  // The end of a pass whose status write failed with `s`: the events of the API calls it made,
  // then `s`.
  absl::Status WriteFailed(Pass& p, absl::Status s);
  // Deletes this very pod (UID precondition; gone already is fine), with its grace period unless
  // one is given, and with its Service when `with_service`.
  absl::Status DeletePod(Pass& p, const policy::PodState& pod, bool with_service,
                         std::optional<int64_t> grace_period_seconds = std::nullopt);
  absl::Status DeletePod(Pass& p, const policy::PodState& pod) override {
    return DeletePod(p, pod, /*with_service=*/false);
  }
  bool Deleted(const std::string& uid) override;

 public:
  // What this reconciler remembers between passes (tests check it is pruned).
  const Expectations& expectations() const { return expectations_; }

 private:
  const ReconcilerDeps deps_;
  Expectations expectations_;
  std::unique_ptr<QueueGate> gate_;
};

}  // namespace disttrain::controller

#endif  // DISTTRAIN_OPERATOR_CONTROLLER_JOB_RECONCILER_H_
