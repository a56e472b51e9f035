#include "operator/controller/job_reconciler.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/json_members.h"
#include "common/log.h"
#include "operator/api/codec.h"
#include "operator/api/defaults.h"
#include "operator/api/names.h"
#include "operator/api/validation.h"
#include "operator/controller/internal/reconcile_pass.h"
#include "operator/controller/kueue_gate.h"
#include "operator/kube/errors.h"
#include "operator/policy/child_meta.h"
#include "operator/policy/conditions.h"
#include "operator/policy/job_policies.h"
#include "operator/policy/pod_state.h"
#include "operator/policy/restart_policy.h"
#include "operator/policy/result_policy.h"
#include "operator/policy/running_policy.h"
#include "operator/queueing/workload.h"

namespace disttrain::controller {

using ::disttrain::policy::CheckDeadline;
using ::disttrain::policy::CleanupOnFinish;
using ::disttrain::policy::CountReadiness;
using ::disttrain::policy::CurrentState;
using ::disttrain::policy::DescribeResult;
using ::disttrain::policy::FindCondition;
using ::disttrain::policy::IsBeingReplaced;
using ::disttrain::policy::IsFinished;
using ::disttrain::policy::IsTrue;
using ::disttrain::policy::kCreated;
using ::disttrain::policy::kFailed;
using ::disttrain::policy::kRestarting;
using ::disttrain::policy::kRunning;
using ::disttrain::policy::kSuspended;
using ::disttrain::policy::PodPhase;
using ::disttrain::policy::PodState;
using ::disttrain::policy::Readiness;
using ::disttrain::policy::ReadPodState;
using ::disttrain::policy::RoleSelector;
using ::disttrain::policy::SetCondition;
using ::disttrain::policy::SuccessMessage;
using ::disttrain::policy::TimeCheck;
using ::disttrain::policy::UpdateResult;

using api::ReplicaType;
using nlohmann::json;
using runtime::EventType;

JobReconciler::JobReconciler(ReconcilerDeps deps) : deps_(std::move(deps)) {
  if (deps_.workloads != nullptr) {
    gate_ = std::make_unique<KueueGate>(KueueGateDeps{.client = deps_.client,
                                                      .workloads = deps_.workloads,
                                                      .flavors = deps_.flavors,
                                                      .pods = deps_.pods,
                                                      .pods_ready = deps_.kueue_pods_ready,
                                                      .build = deps_.build,
                                                      .expectations = &expectations_,
                                                      .actions = this});
  } else {
    gate_ = std::make_unique<NoQueueGate>();
  }
}

void JobReconciler::ForgetPod(const std::string& uid) { expectations_.PodGone(uid); }

void JobReconciler::Saw(const char* resource, const json& object) {
  expectations_.Seen(absl::StrCat(resource, "/", runtime::ObjectKey(object)));
}

bool JobReconciler::Deleted(const std::string& uid) { return expectations_.IsDeleting(uid); }

absl::Time JobReconciler::FirstPassTime(const std::string& key, const std::string& uid,
                                        absl::Time now) {
  return expectations_.FirstPassTime(key, uid, now);
}

namespace {

// Whether the pass records a warning event: its status is written at once, with the warning.
bool Warned(const ReconcilePass& p) {
  return std::any_of(p.events.begin(), p.events.end(),
                     [](const auto& e) { return e.type == EventType::kWarning; });
}

}  // namespace

// A new job's first pass creates its pods, and the status it would write (Created, no pod
// counted yet) is rewritten as soon as their watch events queue the next pass (500 ms later with
// the default --pod-event-batch-ms). That pass writes it instead, with the start time of the
// first: one status write fewer per job (a custom resource's write costs the API server about as
// much CPU as creating a pod), and none competing with the creation of other jobs' pods. Only a
// clean first pass waits: any failed request, warning or terminal condition is written at once.
// A queued job's first pass creates its Workload instead: Kueue's answer (admitted, or why not)
// queues the next pass, which writes the status, Queued or with its pods.
bool JobReconciler::FirstWriteWaits(const Pass& p) const {
  return !FindCondition(p.original, kCreated) && (p.created_pods || p.entered_queue) &&
         p.errors.empty() && !p.cleanup_after_write && !Warned(p);
}

namespace {

// For a merge patch: each member `before` had that `now` lacks is set to null, in nested
// objects too; `now` gone whole (not an object) is null.
void NullRemovedFields(const json& before, json* now) {
  if (before.empty()) return;
  if (!now->is_object()) {
    *now = nullptr;
    return;
  }
  for (const auto& [key, value] : before.items()) {
    auto it = now->find(key);
    if (it == now->end()) {
      (*now)[key] = nullptr;
    } else if (value.is_object() && it->is_object()) {
      NullRemovedFields(value, &*it);
    }
  }
}

// Whether `a` and `b` differ, and only in how many pods are pending or running (what a job's
// pods do while it starts, scales or winds down, told by a condition when it matters).
bool OnlyCountsDiffer(api::JobStatus a, api::JobStatus b) {
  if (a == b) return false;
  for (api::JobStatus* s : {&a, &b}) {
    for (auto& [type, rs] : s->replica_statuses) {
      rs.active = rs.running = 0;
      rs.progress.clear();
    }
  }
  return a == b;
}

}  // namespace

// Pods of a job at scale start running a few at a time, and each pass that sees one more would
// write the status (a custom resource's write costs the API server about what a pod's creation
// does). A change in counts alone waits up to kCountsWriteDelay: the Running condition, when all
// run, usually comes first and writes them. Anything else is written at once, counts included.
std::optional<absl::Duration> JobReconciler::CountsWriteWaits(const Pass& p) {
  const std::string key = runtime::ObjectKey(*p.object);
  api::JobStatus now = p.status;
  now.state = CurrentState(now);
  if (now == p.original) {
    expectations_.CountsCurrent(key);
    return std::nullopt;
  }
  if (!FindCondition(p.original, kCreated) || !p.errors.empty() || p.cleanup_after_write ||
      Warned(p) || !OnlyCountsDiffer(now, p.original)) {
    return std::nullopt;
  }
  const absl::Time since = expectations_.CountsWaitSince(key, p.job.metadata.uid, p.now);
  if (p.now - since >= kCountsWriteDelay) return std::nullopt;
  return since + kCountsWriteDelay - p.now;
}

bool JobReconciler::BehindOwnWrite(const std::string& key, const json& cached) {
  return expectations_.BehindOwnWrite(key,
                                      cached.value("/metadata/resourceVersion"_json_pointer, ""),
                                      deps_.clock->Now(), kCacheCatchUpLimit);
}

absl::StatusOr<runtime::ReconcileResult> JobReconciler::Reconcile(const std::string& key) {
  runtime::ObjectPtr cached = deps_.jobs->Get(key);
  if (cached == nullptr) {  // deleted: the GC removes its objects
    expectations_.JobGone(key);
    if (deps_.progress != nullptr) deps_.progress->Forget(key);
    ForgetMetrics(key);
    // What its queue holds for it (Kueue: a Workload and its quota) waits for its pods to go.
    return runtime::ReconcileResult{gate_->JobGone(key)};
  }
  if (deps_.namespaces != nullptr &&
      deps_.namespaces->Get(cached->value("/metadata/namespace"_json_pointer, "")) == nullptr) {
    return runtime::ReconcileResult{};  // outside the selected namespaces: another's to run
  }
  // The job's status events queue no pass (EnqueueJobs), so this one asks to come back.
  if (BehindOwnWrite(key, *cached)) return runtime::ReconcileResult{kCacheCatchUp};
  // Decoding type-checks what a pass reads, so nothing should throw; if a library still does,
  // this job is retried with backoff and told why, and every other job keeps its controller.
  try {
    return ReconcileJob(*cached);
  } catch (const std::exception& e) {
    std::string message = absl::StrCat("reconcile failed unexpectedly, will retry: ", e.what());
    deps_.events->Record(*cached, EventType::kWarning, "ReconcileError", message);
    return absl::InternalError(message);
  }
}

absl::StatusOr<runtime::ReconcileResult> JobReconciler::ReconcileJob(const json& cached) {
  Pass p;
  p.object = &cached;  // the cache's own copy, not copied: a pass only reads it
  p.now = deps_.clock->Now();
  if (cached.contains("status")) {
    if (absl::StatusOr<api::JobStatus> st = deps_.api->decode_status(cached.at("status")); st.ok())
      p.original = *st;
  }
  p.status = p.original;
  p.started = p.now;
  absl::StatusOr<api::DistributedTraining> job = deps_.api->decode_job(cached);
  if (job.ok()) {
    if (job->metadata.deletion_timestamp) return runtime::ReconcileResult{};
    // Another controller's job: not a single write from this one, but for the queue entry the
    // gate makes for it (MultiKueue's manager cluster: a DistributedTraining's Workload; a
    // TFJob is dispatched through Kueue's own TFJob adapter, whose kubeflow.org/tfjob
    // integration makes its Workload; operator flag --tfjob-queueing=kueue,
    // docs/kueue.md#tfjobs-under-kueue).
    if (!job->spec.managed_by.empty() && job->spec.managed_by != api::kManagedByOperator) {
      if (!gate_->Serves(*job)) return runtime::ReconcileResult{};
      p.runs_elsewhere = true;
    }
    p.job = *std::move(job);
    api::ApplyDefaults(&p.job);
    if (!p.runs_elsewhere && !FindCondition(p.original, kCreated)) {
      p.started = FirstPassTime(runtime::ObjectKey(cached), p.job.metadata.uid, p.now);
    }
  }
  absl::Status valid = job.ok() ? api::Validate(p.job) : job.status();
  if (p.runs_elsewhere) {
    p.queue = gate_->Enter(p);
    p.queue->Forward(p);
  } else if (!valid.ok()) {
    FailInvalid(p, valid);
  } else {
    ReadChildren(p);
    RemovePodsOfLostNodes(p);
    p.queue = gate_->Enter(p);
    if (!FindCondition(p.status, kCreated)) {
      SetCondition(&p.status, kCreated, true, "JobCreated", "the job was accepted", p.started);
    }
    if (IsFinished(p.status)) {
      Cleanup(p);
      DeleteAfterTtl(p);
    } else if (p.job.spec.run_policy.suspend) {
      Suspend(p);
      p.queue->Suspend(p);
    } else if (p.queue->Admit(p)) {  // false: held (Queued) or failed
      Run(p);
    }
    UpdateCounts(p);
    p.status.result = UpdateResult(
        p.PodList(), p.job.spec.replica_specs.contains(api::ReplicaType::kChief), p.status.result);
    if (p.status.result && p.status.result != p.original.result)
      p.Note("TrainingResult", DescribeResult(*p.status.result));
    TrackFinalEvaluation(p);
    TrackProgress(p);
    UpdateWaiting(p);
  }
  if (p.deleted) return runtime::ReconcileResult{};
  // Nothing is replaced unless the status counting it is written: a failed write leaves the
  // failed pods in place, and the next pass counts them again, once.
  if (p.runs_elsewhere) {  // nothing for a later pass to batch: written now
    if (absl::Status s = WriteStatus(p); !s.ok()) return WriteFailed(p, s);
  } else if (FirstWriteWaits(p)) {
    expectations_.FirstWriteWaits(runtime::ObjectKey(*p.object), p.job.metadata.uid, p.started);
    p.Requeue(kFirstWriteWait);
  } else if (std::optional<absl::Duration> wait = CountsWriteWaits(p)) {
    p.Requeue(*wait);
  } else {
    if (absl::Status s = WriteStatus(p); !s.ok()) return WriteFailed(p, s);
    if (!FindCondition(p.original, kCreated))
      expectations_.FirstWriteDone(runtime::ObjectKey(*p.object));
  }
  if (p.cleanup_after_write) Cleanup(p);
  ReplaceFailedPods(p);
  if (p.queue) p.queue->AfterWrite(p);
  EmitEvents(p);
  if (!p.runs_elsewhere) RecordMetrics(p);
  if (!p.errors.empty()) {
    const absl::Status& first = p.errors.front();
    return absl::Status(first.code(),
                        p.errors.size() == 1
                            ? std::string(first.message())
                            : absl::StrCat(first.message(), " (and ", p.errors.size() - 1,
                                           " more failed requests)"));
  }
  return runtime::ReconcileResult{p.requeue};
}

void JobReconciler::ReadChildren(Pass& p) {
  std::set<std::string> uids;
  for (const runtime::ObjectPtr& pod : deps_.pods->ByControllerUid(p.job.metadata.uid)) {
    if (std::optional<PodState> s = ReadPodState(*pod)) {
      uids.insert(s->uid);
      p.pods[{s->type, s->index}] = *s;
    }
  }
  // Only their names are read: the keys ("namespace/name") say them without decoding.
  for (const std::string& key : deps_.services->KeysByControllerUid(p.job.metadata.uid)) {
    p.services.insert(key.substr(key.find('/') + 1));
  }
  // Pods made with a Service each (by an operator before the job's Service) keep their
  // TF_CONFIG: their replacements are made the same way, so old and new peers agree.
  if (api::UsesJobService(p.job) &&
      std::any_of(p.services.begin(), p.services.end(),
                  [&](const std::string& name) { return name != p.job.metadata.name; })) {
    p.job.addressing = api::Addressing::kReplicaServices;
  }
  // A replaced pod that is gone leaves the list; its restart stays in pastRestarts.
  std::erase_if(p.status.restarting_pods, [&](const std::string& uid) { return !uids.count(uid); });
}

void JobReconciler::FailInvalid(Pass& p, const absl::Status& why) {
  if (IsTrue(p.status, kFailed)) return;  // terminal: no retry storm
  std::string message = absl::StrCat("invalid spec: ", why.message());
  SetCondition(&p.status, kFailed, true, "InvalidSpec", message, p.now);
  if (!p.status.completion_time) p.status.completion_time = p.now;
  p.Warn("InvalidSpec", message);
}

void JobReconciler::Run(Pass& p) {
  if (IsTrue(p.status, kSuspended)) {
    SetCondition(&p.status, kSuspended, false, "JobResumed", "the job was resumed", p.now);
    p.status.start_time.reset();  // the deadline counts from the resume, as for a Kubernetes Job
    p.Note("Resumed", "the job was resumed; its pods are created again");
  }
  if (!p.status.start_time) p.status.start_time = p.started;
  p.job.status.start_time = p.status.start_time;
  TimeCheck deadline = CheckDeadline(p.job, p.now);
  if (deadline.due) {
    Finish(p, false, "DeadlineExceeded",
           absl::StrCat("the job ran longer than activeDeadlineSeconds (",
                        *p.job.spec.run_policy.active_deadline_seconds, " s)"));
    return;
  }
  p.Requeue(deadline.requeue_after);
  // Pods wait for their PodGroup (created without it, they would never be gang scheduled),
  // NetworkPolicy and TLS Secret.
  if (!CreatePrerequisites(p)) return;
  UpdatePodGroup(p);
  if (!HandleFailures(p)) return;
  if (!CheckInPlaceRestarts(p)) return;
  RemoveSurplusReplicas(p);
  // Success before creation: a job that has succeeded needs no missing pod back (after a
  // failed status write, cleanup may already have deleted them).
  auto succeeded = [&](ReplicaType t, int i) { return p.Remembered(t, i); };
  if (std::optional<std::string> message = SuccessMessage(p.job, succeeded)) {
    Finish(p, true, "JobSucceeded", *message);
    return;
  }
  if (!CreateMissing(p)) return;
  Readiness readiness = CountReadiness(p.job, p.pods, succeeded);
  if (readiness.EnoughRunning() && !IsTrue(p.status, kRunning)) {
    SetCondition(
        &p.status, kRunning, true, "PodsRunning",
        readiness.AllRunning()
            ? absl::StrCat("all ", readiness.wanted, " pods are running")
            : absl::StrCat(readiness.workers_running, " of ", readiness.workers_wanted,
                           " workers and every other pod are running "
                           "(elasticPolicy.minReplicas ",
                           p.job.spec.elastic_policy ? p.job.spec.elastic_policy->min_replicas
                                                     : readiness.workers_enough,
                           ")"),
        p.now);
  }
  if (readiness.AllRunning()) {
    SetCondition(&p.status, kRestarting, false, "PodsRunning", "every restarted pod runs again",
                 p.now);
  }
}

void JobReconciler::UpdateCounts(Pass& p) {
  for (const auto& [type, spec] : p.job.spec.replica_specs) {
    api::ReplicaStatus& rs = p.Role(type);
    int active = 0, running = 0, failed = 0, live_restarts = 0;
    for (int i = 0; i < spec.replicas; ++i) {
      auto it = p.pods.find({type, i});
      if (it == p.pods.end()) continue;
      const PodState& pod = it->second;
      // Its restarts are in pastRestarts, or in its setAside entry.
      if (IsBeingReplaced(p.status, pod) || policy::IsSetAside(p.status, pod)) continue;
      live_restarts += policy::LiveRestarts(p.status, pod);
      if (pod.terminating || Deleted(pod.uid)) continue;
      // The cleanup right after this pass's write deletes it: counted gone already, so the
      // deletion's events bring no second write (a failed delete is counted again next pass).
      if (p.cleanup_after_write && CleanupOnFinish(p.job, p.status, pod, p.now).remove) continue;
      if (pod.phase == PodPhase::kPending || pod.phase == PodPhase::kRunning) ++active;
      if (pod.phase == PodPhase::kRunning) ++running;
      if (pod.phase == PodPhase::kFailed) ++failed;
    }
    std::sort(rs.succeeded_indexes.begin(), rs.succeeded_indexes.end());
    // A worker scaled away is no longer set aside.
    const int32_t wanted = spec.replicas;  // (clang captures no structured binding)
    std::erase_if(rs.set_aside, [wanted](const auto& e) { return e.index >= wanted; });
    rs.active = active;
    rs.failed = failed;
    rs.succeeded = static_cast<int32_t>(rs.succeeded_indexes.size());
    rs.restarts = policy::RoleRestarts(rs, live_restarts);
    rs.running = running;
    rs.progress = absl::StrCat(running, "/", spec.replicas);
  }
  p.status.observed_generation = p.job.metadata.generation;
  p.status.worker_selector = p.job.kind == &api::kDistributedTrainingKind &&
                                     p.job.spec.replica_specs.contains(ReplicaType::kWorker)
                                 ? RoleSelector(p.job, ReplicaType::kWorker)
                                 : "";
  p.status.state = CurrentState(p.status);
}

absl::Status JobReconciler::WriteStatus(Pass& p) {
  p.status.state = CurrentState(p.status);
  if (p.status == p.original) return absl::OkStatus();
  json status = deps_.api->encode_status(p.status, p.job.spec);
  const json before = deps_.api->encode_status(p.original, p.job.spec);
  // What the API would store is unchanged (a front that keeps less than the engine knows).
  if (status == before) return absl::OkStatus();
  if (deps_.api->write_time_field != nullptr)
    status[deps_.api->write_time_field] = api::FormatKubeTime(deps_.clock->Now());
  for (const char* field : {"startTime", "completionTime"}) {
    if (!status.contains(field)) status[field] = nullptr;  // merge patch: remove
  }
  // Likewise what the encoding leaves out once empty or zero in a role (a setAside list that
  // emptied; succeededIndexes and pastRestarts of a copy MultiKueue mirrored, then evicted), and
  // a role no longer there.
  const json& before_roles = ObjectMember(before, "replicaStatuses");
  if (!before_roles.empty() && status.contains("replicaStatuses")) {
    json& roles = status["replicaStatuses"];
    for (const auto& [key, old_role] : before_roles.items()) {
      auto role = roles.find(key);
      if (role == roles.end()) {
        roles[key] = nullptr;
        continue;
      }
      if (!role->is_object() || !old_role.is_object()) continue;
      for (const auto& [field, value] : old_role.items()) {
        if (!role->contains(field)) (*role)[field] = nullptr;
      }
    }
  }
  // And what the progress no longer says (a rate and ETA once the job ended).
  NullRemovedFields(ObjectMember(before, "progress"), &status["progress"]);
  if (status["progress"].is_null() && !before.contains("progress")) status.erase("progress");
  const std::string ns = p.object->value("/metadata/namespace"_json_pointer, "");
  const std::string name = p.object->value("/metadata/name"_json_pointer, "");
  // The resourceVersion makes the patch conditional: a pass computed from a stale cache gets
  // 409 Conflict instead of overwriting a newer status (the merge patch replaces conditions and
  // restartingPods whole), and the job is retried with backoff. The version this write replaces
  // is remembered: a pass that finds it still cached waits for the watch (BehindOwnWrite) instead.
  json patch = {
      {"metadata",
       {{"resourceVersion", p.object->value("/metadata/resourceVersion"_json_pointer, "")}}},
      {"status", status}};
  absl::Status s =
      deps_.client->Patch(*deps_.api->resource, ns, name, kube::PatchType::kMerge, patch, "status");
  if (s.ok()) {
    expectations_.WroteStatus(absl::StrCat(ns, "/", name), p.job.metadata.uid,
                              p.object->value("/metadata/resourceVersion"_json_pointer, ""),
                              deps_.clock->Now());
  }
  if (!s.ok() && !kube::IsNotFound(s)) return s;
  return absl::OkStatus();
}

absl::Status JobReconciler::WriteFailed(Pass& p, absl::Status s) {
  // The status news waits for the pass that writes it; the calls this one made are told now
  // (a Workload it deleted: the retry finds it deleting and would never say so).
  std::erase_if(p.events, [](const Pass::Event& e) { return !e.call; });
  EmitEvents(p);
  return s;
}

void JobReconciler::EmitEvents(Pass& p) {
  for (const Pass::Event& e : p.events) {
    deps_.events->Record(*p.object, e.type, e.reason, e.message);
    LogInfo(e.message, {{"job", runtime::ObjectKey(*p.object)}, {"reason", e.reason}});
  }
}

}  // namespace disttrain::controller
