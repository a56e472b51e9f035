// JobReconciler's side of Kueue (operator/queueing): a job labelled kueue.x-k8s.io/queue-name
// gets one Workload and runs no pod until Kueue admits it; its pods then carry what the
// admission assigns; an eviction stops them and gives the quota back once they are gone; the
// Workload learns PodsReady, reclaimablePods and Finished from the job. See job_reconciler.h
// and docs/kueue.md.
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/json_members.h"
#include "common/log.h"
#include "operator/api/labels.h"
#include "operator/controller/internal/reconcile_pass.h"
#include "operator/controller/job_reconciler.h"
#include "operator/kube/errors.h"
#include "operator/policy/conditions.h"
#include "operator/policy/desired_objects.h"
#include "operator/queueing/workload.h"
#include "operator/queueing/workload_status.h"
#include "operator/runtime/store.h"

namespace disttrain::controller {

using ::disttrain::policy::AddCondition;
using ::disttrain::policy::BuildDesiredObjects;
using ::disttrain::policy::DesiredObjects;
using ::disttrain::policy::FindCondition;
using ::disttrain::policy::IsFinished;
using ::disttrain::policy::IsTrue;
using ::disttrain::policy::kFailed;
using ::disttrain::policy::kQueued;
using ::disttrain::policy::kRestarting;
using ::disttrain::policy::kRunning;
using ::disttrain::policy::kSucceeded;
using ::disttrain::policy::PodPhase;
using ::disttrain::policy::PodsByReplica;
using ::disttrain::policy::PodState;
using ::disttrain::policy::ReadPodState;
using ::disttrain::policy::ReplicaObjects;
using ::disttrain::policy::SetCondition;

using nlohmann::json;
using queueing::QueueReason;
using queueing::WorkloadState;

namespace {

bool Live(const PodState& pod) {
  return pod.terminating || pod.phase == PodPhase::kPending || pod.phase == PodPhase::kRunning ||
         pod.phase == PodPhase::kUnknown;
}

bool AnyLive(const PodsByReplica& pods) {
  for (const auto& [id, pod] : pods) {
    if (Live(pod)) return true;
  }
  return false;
}

std::string NameOf(const json& obj) {
  return ObjectMember(obj, "metadata").value("name", std::string());
}

// Removes Kueue's in-use finalizer from `workload` (nothing when it has none).
absl::Status RemoveFinalizer(kube::KubeClient* client, const std::string& ns,
                             const json& workload) {
  std::optional<json> patch = queueing::RemoveFinalizerPatch(workload);
  if (!patch) return absl::OkStatus();
  absl::Status s =
      client->Patch(kube::kWorkloads, ns, NameOf(workload), kube::PatchType::kJson, *patch);
  return kube::IsNotFound(s) ? absl::OkStatus() : s;
}

}  // namespace

void JobReconciler::FindWorkload(Pass& p) {
  if (deps_.workloads == nullptr || queueing::QueueName(p.job).empty()) return;
  p.queued = true;
  p.prebuilt = !queueing::PrebuiltWorkloadName(p.job).empty();
  // Once per pass: both cost (a hash; a decode of every cached Workload of the job).
  p.workload_name = queueing::JobWorkloadName(p.job);
  p.workloads = deps_.workloads->ByControllerUid(p.job.metadata.uid);
  const std::string& name = p.workload_name;
  for (const runtime::ObjectPtr& w : p.workloads) {
    if (queueing::ReadWorkload(*w).deleting) {  // SyncWorkload releases it
      p.replacing_workload = p.replacing_workload || NameOf(*w) == name;
      continue;
    }
    if (NameOf(*w) == name) {
      p.workload = w;
    } else if (!IsFinished(p.status)) {
      DeleteWorkload(p, *w, "it is not the job's own");
    }
  }
}

bool JobReconciler::SetWorkloadActive(Pass& p, bool active) {
  if (!p.queued || p.workload == nullptr) return true;
  if (!active) p.release_quota = !AnyLive(p.pods);  // once Kueue evicted it (Deactivated)
  if (p.workload->value("/spec/active"_json_pointer, true) == active) return true;
  json patch = {{"spec", {{"active", active}}}};
  absl::Status s = deps_.client->Patch(kube::kWorkloads, p.job.metadata.namespace_name,
                                       NameOf(*p.workload), kube::PatchType::kMerge, patch);
  if (!s.ok() && !kube::IsNotFound(s)) {
    p.Error("FailedUpdateWorkload", s);
    return false;
  }
  return true;
}

bool JobReconciler::BuildWantedWorkload(Pass& p, std::optional<json>* wanted) {
  absl::StatusOr<DesiredObjects> desired = BuildDesiredObjects(p.job, deps_.build);
  if (!desired.ok()) {
    FailInvalid(p, desired.status());
    return false;
  }
  std::vector<queueing::PodSetInput> pod_sets;
  for (const auto& [type, spec] : p.job.spec.replica_specs) {
    for (const ReplicaObjects& r : desired->replicas) {
      if (r.type != type) continue;
      // An elastic job can start with minReplicas workers: Kueue may admit it partially.
      const int32_t min_count = type == api::ReplicaType::kWorker && p.job.spec.elastic_policy
                                    ? p.job.spec.elastic_policy->min_replicas
                                    : 0;
      pod_sets.push_back(
          {std::string(api::ReplicaTypeRole(type)), spec.replicas, r.pod, min_count});
      break;
    }
  }
  std::optional<queueing::Priority> priority;
  if (auto it = p.job.metadata.labels.find(queueing::kPriorityClassLabel);
      it != p.job.metadata.labels.end()) {
    priority = queueing::Priority{it->second, 0};
  }
  *wanted = queueing::BuildWorkload(p.job, pod_sets, priority);
  return true;
}

std::optional<bool> JobReconciler::WorkloadStandsForJob(Pass& p, const WorkloadState& st) {
  if (queueing::BuiltFrom(*p.workload, p.job)) return true;
  std::optional<json> wanted;
  if (!BuildWantedWorkload(p, &wanted)) return std::nullopt;
  return st.quota_reserved ? queueing::SamePodSets(*p.workload, *wanted)
                           : queueing::Matches(*p.workload, *wanted);
}

bool JobReconciler::Admitted(Pass& p) {
  if (!p.queued) return true;
  const std::string queue = queueing::QueueName(p.job);
  const std::string& name = p.workload_name;
  // The Workload as built from the job now: only when it is to be created, or the job's
  // generation, queue or priority class is not the one the Workload was built from (building
  // it means building every pod of the job).
  std::optional<json> wanted;
  auto build_wanted = [&] { return BuildWantedWorkload(p, &wanted); };

  if (p.workload == nullptr && p.replacing_workload) {
    Hold(p, {QueueReason::kWorkloadReplaced,
             absl::StrCat("Workload ", name,
                          " is being deleted; a new one follows once the job's "
                          "pods are gone")});
    return false;
  }
  if (p.workload == nullptr && p.prebuilt) return AdoptWorkload(p, name, build_wanted, wanted);
  if (p.workload == nullptr) {
    if (!build_wanted()) return false;
    if (CreateWorkload(p, *wanted)) {
      p.created_workload = true;
      // Quiet: this pass's status write waits for Kueue's answer (FirstWriteWaits), and so
      // does the news; a job still waiting then says so with that write.
      const queueing::Waiting why = queueing::WhyWaiting({}, name, queue);
      Hold(p, why, /*quiet=*/true);
    }
    return false;
  }
  const WorkloadState st = queueing::ReadWorkload(*p.workload);
  if (st.finished) {
    Finish(p, false, "WorkloadFinished",
           absl::StrCat("Kueue finished Workload ", name, " before the job ended"));
    return false;
  }
  const std::optional<bool> stands = WorkloadStandsForJob(p, st);
  if (!stands) return false;
  const bool same = *stands;
  if (!same && p.prebuilt) {  // MultiKueue's: never replaced here, as Kueue's own controllers do
    Finish(p, false, "WorkloadOutOfSync",
           absl::StrCat("the job changed since it adopted the prebuilt Workload ", name));
    return false;
  }
  if (!same) {
    DeleteWorkload(p, *p.workload, "the job's replicas, resources or queue changed");
    p.workload = nullptr;
    Hold(p, {QueueReason::kWorkloadReplaced,
             absl::StrCat("the job changed, so Kueue admits it again: Workload ", name,
                          " is replaced")});
    return false;
  }
  if (st.admitted && !st.evicted) {
    std::map<std::string, runtime::ObjectPtr> flavors;  // kept alive through PodSetInfos
    auto flavor = [&](const std::string& n) -> const json* {
      runtime::ObjectPtr& rf = flavors[n];
      if (rf == nullptr && deps_.flavors != nullptr) rf = deps_.flavors->Get(n);
      return rf.get();
    };
    absl::StatusOr<std::map<std::string, queueing::PodSetInfo>> infos =
        queueing::PodSetInfos(*p.workload, flavor);
    if (!infos.ok()) {
      p.Requeue(kQueueRetry);
      Hold(p, {QueueReason::kAdmissionUnusable, std::string(infos.status().message())});
      return false;
    }
    p.admission = *std::move(infos);
    // Partially admitted (an elastic job's Worker PodSet between minCount and count): the job
    // runs with the workers admitted, its TF_CONFIG naming those, as if scaled to them, until
    // Kueue admits it again.
    std::string partial;
    auto worker = p.job.spec.replica_specs.find(api::ReplicaType::kWorker);
    auto admitted = p.admission->find(std::string(api::ReplicaTypeRole(api::ReplicaType::kWorker)));
    if (worker != p.job.spec.replica_specs.end() && admitted != p.admission->end() &&
        admitted->second.count > 0 && admitted->second.count < worker->second.replicas) {
      partial = absl::StrCat(" (partially: ", admitted->second.count, " of ",
                             worker->second.replicas, " workers, elasticPolicy.minReplicas ",
                             p.job.spec.elastic_policy ? p.job.spec.elastic_policy->min_replicas
                                                       : admitted->second.count,
                             ")");
      worker->second.replicas = admitted->second.count;
    }
    // Added even when Queued=True was never written (admitted before the first status write):
    // `kubectl wait --for=condition=Queued=false` and the ClusterQueue's name need it.
    const api::Condition* queued = FindCondition(p.status, kQueued);
    const std::string message =
        absl::StrCat("admitted by ClusterQueue ", st.cluster_queue, partial);
    if (queued == nullptr || queued->status || queued->reason != "Admitted" ||
        queued->message != message) {
      AddCondition(&p.status, kQueued, false, "Admitted", message, p.now);
      // An event of its own only for a job whose Queued=True was written; a job admitted
      // before its first status write says it with the pods it creates (once: its next pass,
      // which writes the status, does not see this one's condition but creates no pod).
      const std::string news = absl::StrCat("Workload ", name, " ", message);
      if (IsTrue(p.original, kQueued)) {
        p.Note("Admitted", news);
      } else {
        p.admission_news = news;
      }
    }
    return true;
  }
  const queueing::Waiting why = queueing::WhyWaiting(st, name, queue);
  Hold(p, why);
  return false;
}

void JobReconciler::Hold(Pass& p, const queueing::Waiting& why, bool quiet) {
  const std::string reason = why.Reason();
  const std::string& message = why.message;
  // The chief goes first: on SIGTERM it saves a checkpoint of what the parameter servers hold,
  // so the job resumes from there once admitted again; the others follow once it is gone.
  bool chief_live = false;
  for (const auto& [id, pod] : p.pods) {
    chief_live = chief_live || (id.first == api::ReplicaType::kChief && Live(pod));
  }
  int live = 0;
  for (auto& [id, pod] : p.pods) {
    if (!Live(pod)) continue;  // succeeded pods stay (remembered); failed ones hold nothing
    ++live;
    if (pod.terminating || Deleted(pod.uid)) continue;
    if (chief_live && id.first != api::ReplicaType::kChief) continue;
    // Deleted with the pod's own grace period: the chief checkpoints on SIGTERM.
    if (absl::Status s = DeletePod(p, pod, false); !s.ok()) p.Error("FailedDeletePod", s);
  }
  p.release_quota = live == 0;
  const api::Condition* before = FindCondition(p.original, kQueued);
  const bool news = before == nullptr || !before->status || before->reason != reason ||
                    before->message != message;
  SetCondition(&p.status, kQueued, true, reason, message, p.now);
  SetCondition(&p.status, kRunning, false, "Queued", "the job waits for Kueue", p.now);
  SetCondition(&p.status, kRestarting, false, "Queued", "the job waits for Kueue", p.now);
  // As for a resumed job: activeDeadlineSeconds counts from the (re)admission.
  p.status.start_time.reset();
  if (news && !quiet) {
    if (queueing::IsWarning(why.reason)) {
      p.Warn(reason, message);
    } else {
      p.Note("Queued", absl::StrCat(reason, ": ", message));
    }
  }
}

bool JobReconciler::CreateWorkload(Pass& p, const json& wanted) {
  json workload = wanted;
  if (workload.contains("/spec/priorityClassRef"_json_pointer)) {
    const std::string cls = workload.at("/spec/priorityClassRef/name"_json_pointer);
    absl::StatusOr<json> wpc = deps_.client->Get(kube::kWorkloadPriorityClasses, "", cls);
    if (!wpc.ok()) {
      if (kube::IsNotFound(wpc.status())) {
        p.Requeue(kQueueRetry);
        Hold(p, {QueueReason::kWorkloadPriorityClassNotFound,
                 absl::StrCat("WorkloadPriorityClass ", cls, " (label ",
                              queueing::kPriorityClassLabel, ") does not exist")});
      } else {
        p.Error("FailedCreateWorkload", wpc.status());
        Hold(p, {QueueReason::kFailedCreateWorkload, std::string(wpc.status().message())});
      }
      return false;
    }
    workload["spec"]["priority"] = wpc->value("value", 0);
  }
  const std::string name = NameOf(workload);
  // As a batch of one: the API server answers with the Workload's metadata only (the created
  // object, 6-7 KB with its managedFields, is not read).
  std::vector<kube::CreateRequest> batch(1);
  batch[0] = {&kube::kWorkloads, p.job.metadata.namespace_name, std::move(workload)};
  const absl::Status r = deps_.client->CreateAll(batch, 1)[0];
  if (!r.ok() && !kube::IsAlreadyExists(r)) {
    if (r.code() == absl::StatusCode::kInvalidArgument) {
      Finish(p, false, "InvalidWorkload",
             absl::StrCat("Kueue refused the job's Workload: ", r.message()));
    } else {  // e.g. Kueue's webhook unreachable: retried with backoff, the job held meanwhile
      p.Error("FailedCreateWorkload", r);
      Hold(p, {QueueReason::kFailedCreateWorkload, std::string(r.message())});
    }
    return false;
  }
  // No event: Kueue's answer brings the news (admitted, with the pods; or why it waits).
  LogInfo(absl::StrCat("created Kueue Workload ", name), {{"job", runtime::ObjectKey(*p.object)}});
  return true;
}

void JobReconciler::DeleteWorkload(Pass& p, const json& workload, const std::string& why) {
  const std::string& ns = p.job.metadata.namespace_name;
  absl::Status s = deps_.client->Delete(kube::kWorkloads, ns, NameOf(workload));
  if (!s.ok() && !kube::IsNotFound(s)) {
    p.Error("FailedDeleteWorkload", s);
    return;
  }
  p.Note("DeletedWorkload", absl::StrCat("deleted Kueue Workload ", NameOf(workload), ": ", why));
}

void JobReconciler::SyncWorkload(Pass& p) {
  if (!p.queued) return;
  const std::string& ns = p.job.metadata.namespace_name;
  const bool any_live = AnyLive(p.pods);
  // A Workload being deleted (replaced, or deleted by someone) keeps its quota until the pods
  // it admitted are gone.
  for (const runtime::ObjectPtr& w : p.workloads) {
    if (!queueing::ReadWorkload(*w).deleting || any_live) continue;
    if (absl::Status s = RemoveFinalizer(deps_.client, ns, *w); !s.ok())
      p.Error("FailedUpdateWorkload", s);
  }
  if (p.workload == nullptr) return;
  const WorkloadState st = queueing::ReadWorkload(*p.workload);
  const std::string name = NameOf(*p.workload);
  // Once: a cache that shows the Workload Finished may not show the finalizer gone yet.
  const std::string key = runtime::ObjectKey(*p.object);
  const std::string uid = p.workload->value("/metadata/uid"_json_pointer, std::string());
  auto release = [&] {
    if (expectations_.IsWorkloadReleased(key, p.job.metadata.uid, uid)) return;
    if (absl::Status s = RemoveFinalizer(deps_.client, ns, *p.workload); !s.ok()) {
      p.Error("FailedUpdateWorkload", s);
      return;
    }
    expectations_.WorkloadReleased(key, p.job.metadata.uid, uid);
  };
  if (st.finished) {
    if (st.has_finalizer) release();
    return;
  }
  queueing::JobSide want;
  if (p.multikueue_manager) {
    // MultiKueue writes the rest, from the worker's. An eviction here (the worker evicted its
    // copy, the worker was lost, the Workload was deactivated) is the job's controller's to
    // answer, as for any job: no pod runs in this cluster, so the quota goes back at once,
    // MultiKueue removes the worker's copy and the Workload is queued to be dispatched again.
    if (!st.evicted || !st.quota_reserved) return;
    want.release_quota = true;
  } else if (IsFinished(p.status)) {
    // The quota goes back once the pods holding it are gone (cleanPodPolicy None keeps them on
    // purpose: then at once).
    if (any_live && p.job.spec.run_policy.clean_pod_policy != api::CleanPodPolicy::kNone) return;
    const bool succeeded = IsTrue(p.status, kSucceeded);
    const api::Condition* c = FindCondition(p.status, succeeded ? kSucceeded : kFailed);
    want.finished = queueing::JobSide::Finish{succeeded, c ? c->message : ""};
  } else if (p.release_quota) {  // held, or suspended (its Workload deactivated)
    want.release_quota = true;
  } else if (p.admission) {
    if (deps_.kueue_pods_ready) want.pods_ready = IsTrue(p.status, kRunning);
    for (const auto& [type, rs] : p.status.replica_statuses) {
      if (!rs.succeeded_indexes.empty()) {
        want.reclaimable[std::string(api::ReplicaTypeRole(type))] =
            static_cast<int>(rs.succeeded_indexes.size());
      }
    }
  } else {
    return;
  }
  std::optional<json> patch = queueing::JobSideStatusPatch(*p.workload, want, p.now);
  if (!patch) return;
  absl::Status s =
      deps_.client->Patch(kube::kWorkloads, ns, name, kube::PatchType::kMerge, *patch, "status");
  if (!s.ok() && !kube::IsNotFound(s)) {
    p.Error("FailedUpdateWorkload", s);
    return;
  }
  // Finished: the finalizer goes in this pass (Kueue's own job controllers wait for the next,
  // which the write brings; DecisionChanged queues none for it). A failure is retried.
  if (want.finished && s.ok()) release();
  if (want.release_quota && p.multikueue_manager) {
    p.Note("QuotaReleased",
           absl::StrCat("Workload ", name, " was evicted (", st.evicted_reason, ": ",
                        st.evicted_message,
                        "); it gave its quota back and is queued to be dispatched again"));
  } else if (want.release_quota) {
    p.Note("QuotaReleased", absl::StrCat("every pod is gone: Workload ", name,
                                         " gave its quota back and is queued again"));
  }
}

std::optional<absl::Duration> JobReconciler::ReleaseOrphanWorkloads(const std::string& key) {
  if (deps_.workloads == nullptr) return std::nullopt;
  const size_t slash = key.find('/');
  const std::string ns = key.substr(0, slash), job = key.substr(slash + 1);
  std::optional<absl::Duration> requeue;
  for (const runtime::ObjectPtr& w : deps_.workloads->ByNamespace(ns)) {
    if (w->value("/metadata/labels"_json_pointer, json::object()).value(api::kLabelJobName, "") !=
        job) {
      continue;
    }
    const WorkloadState st = queueing::ReadWorkload(*w);
    if (!st.deleting || !st.has_finalizer) continue;
    const json owners = w->value("/metadata/ownerReferences"_json_pointer, json::array());
    const std::string uid = owners.empty() ? "" : owners[0].value("uid", "");
    bool live = false;
    for (const runtime::ObjectPtr& pod : deps_.pods->ByControllerUid(uid)) {
      if (std::optional<PodState> s = ReadPodState(*pod)) live = live || Live(*s);
    }
    if (live) {
      requeue = absl::Seconds(1);
      continue;
    }
    if (absl::Status s = RemoveFinalizer(deps_.client, ns, *w); !s.ok()) {
      LogWarning("could not release a deleted job's Workload",
                 {{"workload", NameOf(*w)}, {"error", std::string(s.message())}});
      requeue = absl::Seconds(1);
    }
  }
  return requeue;
}

}  // namespace disttrain::controller
