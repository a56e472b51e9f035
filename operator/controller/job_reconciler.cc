#include "operator/controller/job_reconciler.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "operator/api/codec.h"
#include "operator/api/defaults.h"
#include "operator/api/labels.h"
#include "operator/api/names.h"
#include "operator/api/validation.h"
#include "operator/controller/conditions.h"
#include "operator/controller/desired_objects.h"
#include "operator/controller/failure_policy.h"
#include "operator/controller/job_policies.h"
#include "operator/controller/pod_group_builder.h"
#include "operator/controller/pod_state.h"
#include "operator/kube/errors.h"

namespace disttrain::controller {

using api::ReplicaType;
using nlohmann::json;
using runtime::EventType;

struct JobReconciler::Pass {
  json object;                 // the job as cached
  api::DistributedTraining job;
  api::JobStatus original;     // the status as cached
  api::JobStatus status;       // the status this pass computes
  std::map<std::pair<ReplicaType, int>, PodState> pods;
  std::set<std::string> services;
  struct Event {
    EventType type;
    std::string reason, message;
  };
  std::vector<Event> events;
  std::optional<absl::Duration> requeue;
  absl::Time now;
  bool deleted = false;  // the job itself was deleted (TTL)

  void Requeue(std::optional<absl::Duration> d) {
    if (d && (!requeue || *d < *requeue)) requeue = *d;
  }
  void Warn(std::string reason, std::string message) {
    events.push_back({EventType::kWarning, std::move(reason), std::move(message)});
  }
  void Note(std::string reason, std::string message) {
    events.push_back({EventType::kNormal, std::move(reason), std::move(message)});
  }
  api::ReplicaStatus& Role(ReplicaType t) { return status.replica_statuses[t]; }
  bool Remembered(ReplicaType t, int index) {
    const auto& idx = Role(t).succeeded_indexes;
    return std::find(idx.begin(), idx.end(), index) != idx.end();
  }
};

JobReconciler::JobReconciler(ReconcilerDeps deps) : deps_(std::move(deps)) {}

void JobReconciler::ForgetPod(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  deleting_.erase(uid);
}

bool JobReconciler::Pending(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  return deleting_.count(uid) > 0;
}

absl::StatusOr<runtime::ReconcileResult> JobReconciler::Reconcile(const std::string& key) {
  runtime::ObjectPtr cached = deps_.jobs->Get(key);
  if (cached == nullptr) return runtime::ReconcileResult{};  // deleted: the GC removes its objects
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
  p.object = cached;
  p.now = deps_.clock->Now();
  if (p.object.contains("status")) {
    if (absl::StatusOr<api::JobStatus> st = api::DecodeStatus(p.object["status"]); st.ok()) p.original = *st;
  }
  p.status = p.original;
  absl::StatusOr<api::DistributedTraining> job = api::DecodeJob(p.object);
  if (job.ok()) {
    if (job->metadata.deletion_timestamp) return runtime::ReconcileResult{};
    p.job = *std::move(job);
    api::ApplyDefaults(&p.job);
  }
  absl::Status valid = job.ok() ? api::Validate(p.job) : job.status();
  if (!valid.ok()) {
    FailInvalid(p, valid);
  } else {
    for (const runtime::ObjectPtr& pod : deps_.pods->ByControllerUid(p.job.metadata.uid)) {
      if (std::optional<PodState> s = ReadPodState(*pod)) p.pods[{s->type, s->index}] = *s;
    }
    for (const runtime::ObjectPtr& svc : deps_.services->ByControllerUid(p.job.metadata.uid)) {
      p.services.insert(svc->value("/metadata/name"_json_pointer, ""));
    }
    if (!FindCondition(p.status, kCreated)) {
      SetCondition(&p.status, kCreated, true, "JobCreated", "the job was accepted", p.now);
    }
    if (IsFinished(p.status)) {
      Cleanup(p);
      DeleteAfterTtl(p);
    } else if (p.job.spec.run_policy.suspend) {
      Suspend(p);
    } else {
      Run(p);
    }
    UpdateCounts(p);
  }
  if (p.deleted) return runtime::ReconcileResult{};
  if (absl::Status s = WriteStatus(p); !s.ok()) return s;
  EmitEvents(p);
  return runtime::ReconcileResult{p.requeue};
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
  if (!p.status.start_time) p.status.start_time = p.now;
  p.job.status.start_time = p.status.start_time;
  TimeCheck deadline = CheckDeadline(p.job, p.now);
  if (deadline.due) {
    Finish(p, false, "DeadlineExceeded",
           absl::StrCat("the job ran longer than activeDeadlineSeconds (",
                        *p.job.spec.run_policy.active_deadline_seconds, " s)"));
    return;
  }
  p.Requeue(deadline.requeue_after);
  EnsurePodGroup(p);
  if (!HandleFailures(p)) return;
  if (!CountInPlaceRestarts(p)) return;
  if (!CreateMissing(p)) return;

  auto succeeded = [&](ReplicaType t, int i) { return p.Remembered(t, i); };
  if (std::optional<std::string> message = SuccessMessage(p.job, succeeded)) {
    Finish(p, true, "JobSucceeded", *message);
    return;
  }
  // Running once every replica that has not finished runs; Restarting clears then.
  int wanted = 0, running = 0;
  for (const auto& [type, spec] : p.job.spec.replica_specs) {
    for (int i = 0; i < spec.replicas; ++i) {
      if (p.Remembered(type, i)) continue;
      auto it = p.pods.find({type, i});
      if (it != p.pods.end() && it->second.phase == PodPhase::kFailed && type == ReplicaType::kEvaluator) continue;
      ++wanted;
      if (it != p.pods.end() && !it->second.terminating && it->second.phase == PodPhase::kRunning &&
          it->second.ready) {
        ++running;
      }
    }
  }
  if (running == wanted) {
    if (!IsTrue(p.status, kRunning)) {
      SetCondition(&p.status, kRunning, true, "PodsRunning",
                   absl::StrCat("all ", wanted, " pods are running"), p.now);
    }
    SetCondition(&p.status, kRestarting, false, "PodsRunning", "every restarted pod runs again", p.now);
  }
  // Once Running, the job stays Running until it restarts, is suspended or finishes: pods that
  // stop being ready as they exit (workers done before the chief) must not send the State column
  // back to Created. The WORKERS and PS columns show how many pods run.
}

bool JobReconciler::HandleFailures(Pass& p) {
  for (auto& [id, pod] : p.pods) {
    if (pod.terminating || Pending(pod.uid)) continue;
    const auto [type, index] = id;
    if (pod.phase == PodPhase::kSucceeded) {
      if (!p.Remembered(type, index)) p.Role(type).succeeded_indexes.push_back(index);
      continue;
    }
    if (pod.phase != PodPhase::kFailed) continue;
    const api::ReplicaSpec& spec = p.job.spec.replica_specs.at(type);
    const std::string what = DescribeExit(pod);
    switch (OnPodFailed(type, spec.restart_policy, pod)) {
      case FailureAction::kLeaveFailed:
        continue;
      case FailureAction::kFailJob:
        Finish(p, false, absl::StrCat(api::ReplicaTypeKey(type), "Failed"),
               absl::StrCat(what, "; restartPolicy ", api::RestartPolicyName(spec.restart_policy),
                            IsRetryable(pod) ? "" : " and the failure is permanent"));
        return false;
      case FailureAction::kRecreate:
        break;
    }
    const int32_t limit = p.job.spec.run_policy.backoff_limit.value_or(api::kDefaultBackoffLimit);
    const int32_t restarts = TotalRestarts(p.status) + 1;
    if (restarts > limit) {
      Finish(p, false, "BackoffLimitExceeded",
             absl::StrCat(what, "; the job has used all ", limit, " restarts of its backoffLimit"));
      return false;
    }
    if (absl::Status s = DeletePod(p, pod, /*with_service=*/false); !s.ok()) {
      p.Warn("FailedDeletePod", absl::StrCat("restarting ", pod.name, ": ", s.message()));
      continue;
    }
    api::ReplicaStatus& rs = p.Role(type);
    rs.past_restarts += 1 + pod.restart_count;
    rs.restarts += 1;  // provisional until UpdateCounts recomputes
    const std::string message = absl::StrCat(what, "; restarting it (restart ", restarts, " of ", limit, ")");
    SetCondition(&p.status, kRestarting, true, "PodRestarting", message, p.now);
    SetCondition(&p.status, kRunning, false, "PodRestarting", message, p.now);
    p.Warn("Restarting", message);
  }
  return true;
}

bool JobReconciler::CountInPlaceRestarts(Pass& p) {
  int live = 0, before = 0;
  std::vector<std::string> restarted;
  for (const auto& [id, pod] : p.pods) {
    if (Pending(pod.uid)) continue;
    live += pod.restart_count;
  }
  for (const auto& [type, rs] : p.original.replica_statuses) before += rs.restarts - rs.past_restarts;
  if (live <= before) return true;
  int32_t past = 0;
  for (const auto& [type, rs] : p.status.replica_statuses) past += rs.past_restarts;
  const int32_t limit = p.job.spec.run_policy.backoff_limit.value_or(api::kDefaultBackoffLimit);
  for (const auto& [id, pod] : p.pods) {
    if (pod.restart_count > 0 && !Pending(pod.uid)) {
      restarted.push_back(absl::StrCat(pod.name, " (", pod.restart_count, " restarts, last exit code ",
                                       pod.exit_code.value_or(-1), ")"));
    }
  }
  const std::string which = absl::StrJoin(restarted, ", ");
  if (past + live > limit) {
    Finish(p, false, "BackoffLimitExceeded",
           absl::StrCat("containers restarted in place ", past + live, " times, more than backoffLimit ",
                        limit, ": ", which));
    return false;
  }
  const std::string message = absl::StrCat("restarted in place: ", which);
  SetCondition(&p.status, kRestarting, true, "PodRestartedInPlace", message, p.now);
  p.Warn("RestartedInPlace", message);
  return true;
}

bool JobReconciler::CreateMissing(Pass& p) {
  absl::StatusOr<DesiredObjects> desired = BuildDesiredObjects(p.job, deps_.build);
  if (!desired.ok()) {
    FailInvalid(p, desired.status());
    return false;
  }
  std::vector<std::string> created;
  for (const ReplicaObjects& r : desired->replicas) {
    const std::string name = r.pod["metadata"]["name"];
    if (p.pods.count({r.type, r.index}) || p.Remembered(r.type, r.index)) continue;
    if (!p.services.count(name)) {
      absl::StatusOr<json> svc = deps_.client->Create(kube::kServices, p.job.metadata.namespace_name, r.service);
      if (!svc.ok() && !kube::IsAlreadyExists(svc.status())) {
        p.Warn("FailedCreateService", std::string(svc.status().message()));
        continue;
      }
    }
    absl::StatusOr<json> pod = deps_.client->Create(kube::kPods, p.job.metadata.namespace_name, r.pod);
    if (pod.ok()) {
      created.push_back(name);
    } else if (!kube::IsAlreadyExists(pod.status())) {
      p.Warn("FailedCreatePod", std::string(pod.status().message()));
      if (pod.status().code() == absl::StatusCode::kInvalidArgument) {
        Finish(p, false, "InvalidPodTemplate",
               absl::StrCat("the API server rejected pod ", name, ": ", pod.status().message()));
        return false;
      }
      p.Requeue(absl::Seconds(5));
    }
  }
  if (!created.empty()) {
    p.Note("SuccessfulCreatePod", absl::StrCat("created pod", created.size() > 1 ? "s " : " ",
                                               absl::StrJoin(created, ", ")));
    for (const std::string& w : desired->warnings) {
      if (w.find("TF_CONFIG") != std::string::npos) p.Warn("TFConfigReplaced", w);
    }
  }
  return true;
}

const kube::Resource& JobReconciler::PodGroupResource() const {
  return deps_.build.gang_scheduler == GangScheduler::kVolcano ? kube::kVolcanoPodGroups
                                                               : kube::kCoschedulingPodGroups;
}

void JobReconciler::EnsurePodGroup(Pass& p) {
  // Created before the first pods: once pods exist, so does the PodGroup.
  if (!p.job.spec.run_policy.scheduling_policy || !p.pods.empty()) return;
  absl::StatusOr<std::optional<json>> group = BuildPodGroup(p.job, deps_.build);
  if (!group.ok() || !group->has_value()) return;  // quantities were validated by CreateMissing's build
  const kube::Resource& res = PodGroupResource();
  absl::StatusOr<json> r = deps_.client->Create(res, p.job.metadata.namespace_name, **group);
  if (r.ok()) {
    p.Note("SuccessfulCreatePodGroup", absl::StrCat("created ", res.group, " PodGroup ", p.job.metadata.name));
  } else if (kube::IsNotFound(r.status())) {
    p.Warn("PodGroupUnavailable", absl::StrCat("the ", res.group, "/", res.version,
                                               " PodGroup API is not installed; pods are created without gang scheduling"));
  } else if (!kube::IsAlreadyExists(r.status())) {
    p.Warn("FailedCreatePodGroup", std::string(r.status().message()));
  }
}

void JobReconciler::Suspend(Pass& p) {
  for (auto& [id, pod] : p.pods) {
    if (pod.terminating || pod.phase == PodPhase::kSucceeded || Pending(pod.uid)) continue;
    if (absl::Status s = DeletePod(p, pod, false); !s.ok()) p.Warn("FailedDeletePod", std::string(s.message()));
  }
  if (!IsTrue(p.status, kSuspended)) {
    SetCondition(&p.status, kSuspended, true, "JobSuspended", "the job is suspended; its pods are deleted", p.now);
    SetCondition(&p.status, kRunning, false, "JobSuspended", "the job is suspended", p.now);
    SetCondition(&p.status, kRestarting, false, "JobSuspended", "the job is suspended", p.now);
    p.Note("Suspended", "the job is suspended; its pods are deleted");
  }
}

void JobReconciler::Finish(Pass& p, bool succeeded, const std::string& reason, const std::string& message) {
  SetCondition(&p.status, succeeded ? kSucceeded : kFailed, true, reason, message, p.now);
  SetCondition(&p.status, kRunning, false, reason, message, p.now);
  SetCondition(&p.status, kRestarting, false, reason, message, p.now);
  p.status.completion_time = p.now;
  if (succeeded) {
    p.Note("JobSucceeded", message);
  } else {
    p.Warn(reason, message);
  }
  if (p.job.spec.run_policy.scheduling_policy) {
    absl::Status s = deps_.client->Delete(PodGroupResource(), p.job.metadata.namespace_name, p.job.metadata.name);
    if (!s.ok() && !kube::IsNotFound(s)) p.Warn("FailedDeletePodGroup", std::string(s.message()));
  }
  Cleanup(p);
  p.job.status.completion_time = p.now;
  p.Requeue(CheckTtl(p.job, p.now).requeue_after);
}

void JobReconciler::Cleanup(Pass& p) {
  const api::CleanPodPolicy policy = p.job.spec.run_policy.clean_pod_policy;
  std::vector<std::string> deleted;
  for (auto& [id, pod] : p.pods) {
    if (!DeleteOnFinish(policy, pod) || Pending(pod.uid)) continue;
    if (absl::Status s = DeletePod(p, pod, policy == api::CleanPodPolicy::kAll); !s.ok()) {
      p.Warn("FailedDeletePod", std::string(s.message()));
      continue;
    }
    deleted.push_back(pod.name);
  }
  if (!deleted.empty()) {
    p.Note("SuccessfulDeletePod", absl::StrCat("cleanPodPolicy ", api::CleanPodPolicyName(policy), ": deleted ",
                                               absl::StrJoin(deleted, ", ")));
  }
}

void JobReconciler::DeleteAfterTtl(Pass& p) {
  TimeCheck ttl = CheckTtl(p.job, p.now);
  if (!ttl.due) {
    p.Requeue(ttl.requeue_after);
    return;
  }
  absl::Status s = deps_.client->Delete(kube::kDistributedTrainings, p.job.metadata.namespace_name,
                                        p.job.metadata.name, {kube::Propagation::kBackground, p.job.metadata.uid});
  if (s.ok() || kube::IsNotFound(s)) {
    LogInfo("deleted a finished job after its TTL", {{"job", p.job.metadata.namespace_name + "/" + p.job.metadata.name}});
    p.deleted = true;
  } else {
    p.Warn("FailedDeleteJob", std::string(s.message()));
    p.Requeue(absl::Seconds(5));
  }
}

absl::Status JobReconciler::DeletePod(Pass& p, const PodState& pod, bool with_service) {
  kube::DeleteOptions options;
  options.precondition_uid = pod.uid;
  absl::Status s = deps_.client->Delete(kube::kPods, p.job.metadata.namespace_name, pod.name, options);
  if (!s.ok() && !kube::IsNotFound(s)) return s;
  {
    absl::MutexLock lock(&mu_);
    deleting_.insert(pod.uid);
  }
  if (with_service && p.services.count(pod.name)) {
    absl::Status sv = deps_.client->Delete(kube::kServices, p.job.metadata.namespace_name, pod.name);
    if (!sv.ok() && !kube::IsNotFound(sv)) return sv;
  }
  return absl::OkStatus();
}

void JobReconciler::UpdateCounts(Pass& p) {
  for (const auto& [type, spec] : p.job.spec.replica_specs) {
    api::ReplicaStatus& rs = p.Role(type);
    int active = 0, running = 0, failed = 0, live_restarts = 0;
    for (int i = 0; i < spec.replicas; ++i) {
      auto it = p.pods.find({type, i});
      if (it == p.pods.end()) continue;
      const PodState& pod = it->second;
      live_restarts += pod.restart_count;
      if (pod.terminating || Pending(pod.uid)) continue;
      if (pod.phase == PodPhase::kPending || pod.phase == PodPhase::kRunning) ++active;
      if (pod.phase == PodPhase::kRunning) ++running;
      if (pod.phase == PodPhase::kFailed) ++failed;
    }
    std::sort(rs.succeeded_indexes.begin(), rs.succeeded_indexes.end());
    rs.active = active;
    rs.failed = failed;
    rs.succeeded = static_cast<int32_t>(rs.succeeded_indexes.size());
    rs.restarts = rs.past_restarts + live_restarts;
    rs.progress = absl::StrCat(running, "/", spec.replicas);
  }
  p.status.observed_generation = p.job.metadata.generation;
  p.status.state = CurrentState(p.status);
}

absl::Status JobReconciler::WriteStatus(Pass& p) {
  p.status.state = CurrentState(p.status);
  if (p.status == p.original) return absl::OkStatus();
  json status = api::EncodeStatus(p.status);
  for (const char* field : {"startTime", "completionTime"}) {
    if (!status.contains(field)) status[field] = nullptr;  // merge patch: remove
  }
  const std::string ns = p.object.value("/metadata/namespace"_json_pointer, "");
  const std::string name = p.object.value("/metadata/name"_json_pointer, "");
  absl::StatusOr<json> r = deps_.client->Patch(kube::kDistributedTrainings, ns, name, kube::PatchType::kMerge,
                                               {{"status", status}}, "status");
  if (!r.ok() && !kube::IsNotFound(r.status())) return r.status();
  return absl::OkStatus();
}

void JobReconciler::EmitEvents(Pass& p) {
  for (const Pass::Event& e : p.events) {
    deps_.events->Record(p.object, e.type, e.reason, e.message);
    LogInfo(e.message, {{"job", runtime::ObjectKey(p.object)}, {"reason", e.reason}});
  }
}

}  // namespace disttrain::controller
