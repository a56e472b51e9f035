#include "operator/controller/kueue_gate.h"

#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/json_members.h"
#include "common/log.h"
#include "operator/api/labels.h"
#include "operator/api/validation.h"
#include "operator/controller/internal/kueue_pass.h"
#include "operator/controller/internal/reconcile_pass.h"
#include "operator/kube/errors.h"
#include "operator/policy/conditions.h"
#include "operator/policy/desired_objects.h"
#include "operator/queueing/admission.h"
#include "operator/queueing/topology.h"
#include "operator/queueing/workload.h"
#include "operator/queueing/workload_status.h"

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
using Pass = ReconcilePass;

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

KueuePass::KueuePass(const KueueGateDeps& deps, Pass& p)
    : deps_(deps),
      multikueue_manager_(p.runs_elsewhere),
      prebuilt_(!queueing::PrebuiltWorkloadName(p.job).empty()),
      // Once per pass: both cost (a hash; a decode of every cached Workload of the job).
      workload_name_(queueing::JobWorkloadName(p.job)),
      workloads_(deps.workloads->ByControllerUid(p.job.metadata.uid)) {
  for (const runtime::ObjectPtr& w : workloads_) {
    if (queueing::ReadWorkload(*w).deleting) {  // AfterWrite releases it
      replacing_ = replacing_ || NameOf(*w) == workload_name_;
      continue;
    }
    if (NameOf(*w) == workload_name_) {
      workload_ = w;
    } else if (!IsFinished(p.status)) {
      Delete(p, *w, "it is not the job's own");
    }
  }
}

bool KueuePass::SetActive(Pass& p, bool active) {
  if (workload_ == nullptr) return true;
  if (!active) release_quota_ = !AnyLive(p.pods);  // once Kueue evicted it (Deactivated)
  if (workload_->value("/spec/active"_json_pointer, true) == active) return true;
  json patch = {{"spec", {{"active", active}}}};
  absl::Status s = deps_.client->Patch(kube::kWorkloads, p.job.metadata.namespace_name,
                                       NameOf(*workload_), kube::PatchType::kMerge, patch);
  if (!s.ok() && !kube::IsNotFound(s)) {
    p.Error("FailedUpdateWorkload", s);
    return false;
  }
  return true;
}

bool KueuePass::Admit(Pass& p) {
  // A resumed job activates its Workload first.
  if (IsTrue(p.status, policy::kSuspended) && !SetActive(p, true)) return false;
  return Admitted(p);
}

absl::Status KueuePass::ShapePod(api::ReplicaType type, json* pod) const {
  if (!admission_) return absl::OkStatus();
  auto it = admission_->find(std::string(api::ReplicaTypeRole(type)));
  if (it == admission_->end()) return absl::OkStatus();
  return queueing::ApplyPodSetInfo(it->second, pod);
}

bool KueuePass::BuildWanted(Pass& p, std::optional<json>* wanted) {
  absl::StatusOr<DesiredObjects> desired = BuildDesiredObjects(p.job, deps_.build);
  if (!desired.ok()) {
    deps_.actions->FailInvalid(p, desired.status());
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
      // A topology request Kueue's own job webhooks would refuse fails the job, named.
      absl::StatusOr<std::optional<json>> topology =
          queueing::TopologyRequest(r.pod, spec.replicas, p.job.kind->labels.replica_index);
      if (!topology.ok()) {
        deps_.actions->FailInvalid(p, absl::InvalidArgumentError(absl::StrCat(
                                          "spec.replicaSpecs.", api::ReplicaTypeKey(type),
                                          ".template: ", topology.status().message())));
        return false;
      }
      pod_sets.push_back({std::string(api::ReplicaTypeRole(type)), spec.replicas, r.pod, min_count,
                          *std::move(topology)});
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

std::optional<bool> KueuePass::StandsForJob(Pass& p, const WorkloadState& st) {
  if (queueing::BuiltFrom(*workload_, p.job)) return true;
  std::optional<json> wanted;
  if (!BuildWanted(p, &wanted)) return std::nullopt;
  return st.quota_reserved ? queueing::SamePodSets(*workload_, *wanted)
                           : queueing::Matches(*workload_, *wanted);
}

bool KueuePass::Admitted(Pass& p) {
  const std::string queue = queueing::QueueName(p.job);
  const std::string& name = workload_name_;
  // The Workload as built from the job now: only when it is to be created, or the job's
  // generation, queue or priority class is not the one the Workload was built from (building
  // it means building every pod of the job).
  std::optional<json> wanted;
  auto build_wanted = [&] { return BuildWanted(p, &wanted); };

  queueing::AdmissionFacts facts;
  facts.has_workload = workload_ != nullptr;
  facts.replacing = replacing_;
  facts.prebuilt = prebuilt_;
  if (workload_ != nullptr) {
    facts.workload = queueing::ReadWorkload(*workload_);
    if (!facts.workload.finished) facts.stands = StandsForJob(p, facts.workload);
  }
  const WorkloadState& st = facts.workload;
  switch (queueing::DecideAdmission(facts)) {
    case queueing::AdmissionStep::kWaitForReplacement:
      Hold(p, {QueueReason::kWorkloadReplaced,
               absl::StrCat("Workload ", name,
                            " is being deleted; a new one follows once the job's "
                            "pods are gone")});
      return false;
    case queueing::AdmissionStep::kAdopt:
      return Adopt(p, name, build_wanted, wanted);
    case queueing::AdmissionStep::kCreate:
      if (!build_wanted()) return false;
      if (Create(p, *wanted)) {
        p.entered_queue = true;
        // Quiet: this pass's status write waits for Kueue's answer (FirstWriteWaits), and so
        // does the news; a job still waiting then says so with that write.
        Hold(p, queueing::WhyWaiting({}, name, queue), /*quiet=*/true);
      }
      return false;
    case queueing::AdmissionStep::kFailFinished:
      deps_.actions->Finish(
          p, false, "WorkloadFinished",
          absl::StrCat("Kueue finished Workload ", name, " before the job ended"));
      return false;
    case queueing::AdmissionStep::kStop:
      return false;
    case queueing::AdmissionStep::kFailOutOfSync:
      deps_.actions->Finish(
          p, false, "WorkloadOutOfSync",
          absl::StrCat("the job changed since it adopted the prebuilt Workload ", name));
      return false;
    case queueing::AdmissionStep::kReplace:
      Delete(p, *workload_, "the job's replicas, resources or queue changed");
      workload_ = nullptr;
      Hold(p, {QueueReason::kWorkloadReplaced,
               absl::StrCat("the job changed, so Kueue admits it again: Workload ", name,
                            " is replaced")});
      return false;
    case queueing::AdmissionStep::kWait:
      Hold(p, queueing::WhyWaiting(st, name, queue));
      return false;
    case queueing::AdmissionStep::kRun:
      break;
  }
  std::map<std::string, runtime::ObjectPtr> flavors;  // kept alive through PodSetInfos
  auto flavor = [&](const std::string& n) -> const json* {
    runtime::ObjectPtr& rf = flavors[n];
    if (rf == nullptr && deps_.flavors != nullptr) rf = deps_.flavors->Get(n);
    return rf.get();
  };
  absl::StatusOr<std::map<std::string, queueing::PodSetInfo>> infos =
      queueing::PodSetInfos(*workload_, flavor);
  if (!infos.ok()) {
    p.Requeue(KueueGate::kRetry);
    Hold(p, {QueueReason::kAdmissionUnusable, std::string(infos.status().message())});
    return false;
  }
  admission_ = *std::move(infos);
  // Partially admitted (an elastic job's Worker PodSet between minCount and count): the job
  // runs with the workers admitted, its TF_CONFIG naming those, as if scaled to them, until
  // Kueue admits it again.
  std::string partial;
  auto worker = p.job.spec.replica_specs.find(api::ReplicaType::kWorker);
  if (worker != p.job.spec.replica_specs.end()) {
    if (std::optional<int32_t> admitted =
            queueing::PartialWorkers(*admission_, worker->second.replicas)) {
      partial = absl::StrCat(
          " (partially: ", *admitted, " of ", worker->second.replicas,
          " workers, elasticPolicy.minReplicas ",
          p.job.spec.elastic_policy ? p.job.spec.elastic_policy->min_replicas : *admitted, ")");
      worker->second.replicas = *admitted;
    }
  }
  // Added even when Queued=True was never written (admitted before the first status write):
  // `kubectl wait --for=condition=Queued=false` and the ClusterQueue's name need it.
  const api::Condition* queued = FindCondition(p.status, kQueued);
  const std::string message = absl::StrCat("admitted by ClusterQueue ", st.cluster_queue, partial);
  if (queued == nullptr || queued->status || queued->reason != "Admitted" ||
      queued->message != message) {
    AddCondition(&p.status, kQueued, false, "Admitted", message, p.now);
    // An event of its own only for a job whose Queued=True was written; a job admitted before
    // its first status write says it with the pods it creates (once: its next pass, which writes
    // the status, does not see this one's condition but creates no pod).
    const std::string news = absl::StrCat("Workload ", name, " ", message);
    if (IsTrue(p.original, kQueued)) {
      p.Note("Admitted", news);
    } else {
      p.admission_news = news;
    }
  }
  return true;
}

void KueuePass::Hold(Pass& p, const queueing::Waiting& why, bool quiet) {
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
    if (pod.terminating || deps_.actions->Deleted(pod.uid)) continue;
    if (chief_live && id.first != api::ReplicaType::kChief) continue;
    // Deleted with the pod's own grace period: the chief checkpoints on SIGTERM.
    if (absl::Status s = deps_.actions->DeletePod(p, pod); !s.ok()) p.Error("FailedDeletePod", s);
  }
  release_quota_ = live == 0;
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

bool KueuePass::Create(Pass& p, const json& wanted) {
  json workload = wanted;
  if (workload.contains("/spec/priorityClassRef"_json_pointer)) {
    const std::string cls = workload.at("/spec/priorityClassRef/name"_json_pointer);
    absl::StatusOr<json> wpc = deps_.client->Get(kube::kWorkloadPriorityClasses, "", cls);
    if (!wpc.ok()) {
      if (kube::IsNotFound(wpc.status())) {
        p.Requeue(KueueGate::kRetry);
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
      deps_.actions->Finish(p, false, "InvalidWorkload",
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

void KueuePass::Delete(Pass& p, const json& workload, const std::string& why) {
  const std::string& ns = p.job.metadata.namespace_name;
  absl::Status s = deps_.client->Delete(kube::kWorkloads, ns, NameOf(workload));
  if (!s.ok() && !kube::IsNotFound(s)) {
    p.Error("FailedDeleteWorkload", s);
    return;
  }
  p.Did("DeletedWorkload", absl::StrCat("deleted Kueue Workload ", NameOf(workload), ": ", why));
}

void KueuePass::AfterWrite(Pass& p) {
  const std::string& ns = p.job.metadata.namespace_name;
  const bool any_live = AnyLive(p.pods);
  // A Workload being deleted (replaced, or deleted by someone) keeps its quota until the pods
  // it admitted are gone.
  for (const runtime::ObjectPtr& w : workloads_) {
    if (!queueing::ReadWorkload(*w).deleting || any_live) continue;
    if (absl::Status s = RemoveFinalizer(deps_.client, ns, *w); !s.ok())
      p.Error("FailedUpdateWorkload", s);
  }
  if (workload_ == nullptr) return;
  queueing::JobSideFacts facts;
  facts.workload = queueing::ReadWorkload(*workload_);
  const WorkloadState& st = facts.workload;
  facts.runs_elsewhere = multikueue_manager_;
  facts.job_finished = IsFinished(p.status);
  facts.job_succeeded = IsTrue(p.status, kSucceeded);
  const api::Condition* end = FindCondition(p.status, facts.job_succeeded ? kSucceeded : kFailed);
  facts.finish_message = end ? end->message : "";
  facts.pods_live = any_live;
  facts.keeps_pods = p.job.spec.run_policy.clean_pod_policy == api::CleanPodPolicy::kNone;
  facts.release_quota = release_quota_;
  facts.admitted = admission_.has_value();
  if (deps_.pods_ready) facts.pods_ready = IsTrue(p.status, kRunning);
  for (const auto& [type, rs] : p.status.replica_statuses) {
    if (!rs.succeeded_indexes.empty()) {
      facts.reclaimable[std::string(api::ReplicaTypeRole(type))] =
          static_cast<int>(rs.succeeded_indexes.size());
    }
  }
  const queueing::JobSideDecision d = queueing::DecideJobSide(facts);
  const std::string name = NameOf(*workload_);
  // Once: a cache that shows the Workload Finished may not show the finalizer gone yet.
  const std::string key = runtime::ObjectKey(*p.object);
  const std::string uid = workload_->value("/metadata/uid"_json_pointer, std::string());
  Expectations& expectations = *deps_.expectations;
  auto release = [&] {
    if (expectations.IsWorkloadReleased(key, p.job.metadata.uid, uid)) return;
    if (absl::Status s = RemoveFinalizer(deps_.client, ns, *workload_); !s.ok()) {
      p.Error("FailedUpdateWorkload", s);
      return;
    }
    expectations.WorkloadReleased(key, p.job.metadata.uid, uid);
  };
  if (d.release_finalizer) release();
  if (!d.write) return;
  const queueing::JobSide& want = *d.write;
  std::optional<json> patch = queueing::JobSideStatusPatch(*workload_, want, p.now);
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
  if (want.release_quota && multikueue_manager_) {
    p.Note("QuotaReleased",
           absl::StrCat("Workload ", name, " was evicted (", st.evicted_reason, ": ",
                        st.evicted_message,
                        "); it gave its quota back and is queued to be dispatched again"));
  } else if (want.release_quota) {
    p.Note("QuotaReleased", absl::StrCat("every pod is gone: Workload ", name,
                                         " gave its quota back and is queued again"));
  }
}

bool KueueGate::Serves(const api::DistributedTraining& job) const {
  return job.spec.managed_by == queueing::kMultiKueueManager &&
         job.kind == &api::kDistributedTrainingKind && api::Validate(job).ok();
}

std::unique_ptr<QueuePass> KueueGate::Enter(Pass& p) {
  if (queueing::QueueName(p.job).empty()) return Unqueued();
  return std::make_unique<KueuePass>(deps_, p);
}

std::optional<absl::Duration> KueueGate::JobGone(const std::string& key) {
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
