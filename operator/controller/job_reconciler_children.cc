// JobReconciler's writes to the cluster: the pods, Services and PodGroup a job needs, their
// deletion when it finishes or is suspended, and the job itself after its TTL (see
// job_reconciler.h). Split from job_reconciler.cc, which holds the pass and its decisions.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "operator/controller/conditions.h"
#include "operator/controller/desired_objects.h"
#include "operator/controller/job_policies.h"
#include "operator/controller/job_reconciler.h"
#include "operator/controller/pod_group_builder.h"
#include "operator/controller/reconcile_pass.h"
#include "operator/kube/errors.h"

namespace disttrain::controller {

using nlohmann::json;

bool JobReconciler::CreateMissing(Pass& p) {
  absl::StatusOr<DesiredObjects> desired = BuildDesiredObjects(p.job, deps_.build);
  if (!desired.ok()) {
    FailInvalid(p, desired.status());
    return false;
  }
  std::vector<std::string> created;
  std::optional<absl::Status> first_failure;
  bool permanent = false;
  auto failed = [&](const char* reason, const absl::Status& s) {
    p.Error(reason, s);
    if (!first_failure) first_failure = s;
    permanent = permanent || !kube::IsRetryable(s);
  };
  for (const ReplicaObjects& r : desired->replicas) {
    const std::string name = r.pod["metadata"]["name"];
    if (p.pods.count({r.type, r.index}) || p.Remembered(r.type, r.index)) continue;
    if (!p.services.count(name)) {
      absl::StatusOr<json> svc =
          deps_.client->Create(kube::kServices, p.job.metadata.namespace_name, r.service);
      if (!svc.ok() && !kube::IsAlreadyExists(svc.status())) {
        failed("FailedCreateService", svc.status());
        continue;
      }
    }
    absl::StatusOr<json> pod =
        deps_.client->Create(kube::kPods, p.job.metadata.namespace_name, r.pod);
    if (pod.ok()) {
      created.push_back(name);
    } else if (pod.status().code() == absl::StatusCode::kInvalidArgument) {
      // The template itself is refused: no retry will ever succeed.
      p.Warn("FailedCreatePod", std::string(pod.status().message()));
      Finish(p, false, "InvalidPodTemplate",
             absl::StrCat("the API server rejected pod ", name, ": ", pod.status().message()));
      return false;
    } else if (!kube::IsAlreadyExists(pod.status())) {
      failed("FailedCreatePod", pod.status());
    }
  }
  if (!created.empty()) {
    p.Note("SuccessfulCreatePod", absl::StrCat("created pod", created.size() > 1 ? "s " : " ",
                                               absl::StrJoin(created, ", ")));
    for (const std::string& w : desired->warnings) {
      if (w.find("TF_CONFIG") != std::string::npos) p.Warn("TFConfigReplaced", w);
    }
  }
  if (first_failure) {
    ReportCreateFailures(p, *first_failure, permanent);
  } else {
    {
      absl::MutexLock lock(&mu_);
      create_failures_.erase(p.job.metadata.uid);
    }
    SetCondition(&p.status, kReplicaFailure, false, "PodsCreated", "every missing pod was created",
                 p.now);
  }
  return true;
}

void JobReconciler::ReportCreateFailures(Pass& p, const absl::Status& first, bool permanent) {
  int in_a_row = 0;
  {
    absl::MutexLock lock(&mu_);
    in_a_row = ++create_failures_[p.job.metadata.uid];
  }
  if (!permanent && in_a_row < kCreateFailuresBeforeCondition) return;
  // The job keeps retrying (with backoff): a quota freed or a PriorityClass created later lets
  // it start. activeDeadlineSeconds, when set, bounds the wait.
  SetCondition(&p.status, kReplicaFailure, true, "FailedCreate",
               absl::StrCat(first.message(),
                            permanent ? "" : absl::StrCat(" (", in_a_row, " attempts in a row)")),
               p.now);
}

const kube::Resource& JobReconciler::PodGroupResource() const {
  return deps_.build.gang_scheduler == GangScheduler::kVolcano ? kube::kVolcanoPodGroups
                                                               : kube::kCoschedulingPodGroups;
}

bool JobReconciler::EnsurePodGroup(Pass& p) {
  // Created before the first pods: once pods exist, so does the PodGroup.
  if (!p.job.spec.run_policy.scheduling_policy || !p.pods.empty()) return true;
  absl::StatusOr<std::optional<json>> group = BuildPodGroup(p.job, deps_.build);
  if (!group.ok() || !group->has_value())
    return true;  // quantities were validated by CreateMissing's build
  const kube::Resource& res = PodGroupResource();
  absl::StatusOr<json> r = deps_.client->Create(res, p.job.metadata.namespace_name, **group);
  if (r.ok()) {
    p.Note("SuccessfulCreatePodGroup",
           absl::StrCat("created ", res.group, " PodGroup ", p.job.metadata.name));
  } else if (kube::IsNotFound(r.status())) {
    p.Warn(
        "PodGroupUnavailable",
        absl::StrCat("the ", res.group, "/", res.version,
                     " PodGroup API is not installed; pods are created without gang scheduling"));
  } else if (!kube::IsAlreadyExists(r.status())) {
    p.Error("FailedCreatePodGroup", r.status());
    return false;
  }
  return true;
}

void JobReconciler::Suspend(Pass& p) {
  for (auto& [id, pod] : p.pods) {
    if (pod.terminating || pod.phase == PodPhase::kSucceeded || Deleted(pod.uid)) continue;
    if (absl::Status s = DeletePod(p, pod, false); !s.ok()) p.Error("FailedDeletePod", s);
  }
  if (!IsTrue(p.status, kSuspended)) {
    SetCondition(&p.status, kSuspended, true, "JobSuspended",
                 "the job is suspended; its pods are deleted", p.now);
    SetCondition(&p.status, kRunning, false, "JobSuspended", "the job is suspended", p.now);
    SetCondition(&p.status, kRestarting, false, "JobSuspended", "the job is suspended", p.now);
    p.Note("Suspended", "the job is suspended; its pods are deleted");
  }
}

void JobReconciler::Finish(Pass& p, bool succeeded, const std::string& reason,
                           const std::string& message) {
  SetCondition(&p.status, succeeded ? kSucceeded : kFailed, true, reason, message, p.now);
  SetCondition(&p.status, kRunning, false, reason, message, p.now);
  SetCondition(&p.status, kRestarting, false, reason, message, p.now);
  p.status.completion_time = p.now;
  p.replace.clear();  // finished: cleanup decides what goes
  if (succeeded) {
    p.Note("JobSucceeded", message);
  } else {
    p.Warn(reason, message);
  }
  Cleanup(p);
  p.job.status.completion_time = p.now;
  p.Requeue(CheckTtl(p.job, p.now).requeue_after);
}

void JobReconciler::Cleanup(Pass& p) {
  DeletePodGroup(p);
  const api::CleanPodPolicy policy = p.job.spec.run_policy.clean_pod_policy;
  std::vector<std::string> deleted;
  for (auto& [id, pod] : p.pods) {
    if (!DeleteOnFinish(policy, pod) || Deleted(pod.uid)) continue;
    if (absl::Status s = DeletePod(p, pod, policy == api::CleanPodPolicy::kAll); !s.ok()) {
      p.Error("FailedDeletePod", s);
      continue;
    }
    deleted.push_back(pod.name);
  }
  if (!deleted.empty()) {
    p.Note("SuccessfulDeletePod", absl::StrCat("cleanPodPolicy ", api::CleanPodPolicyName(policy),
                                               ": deleted ", absl::StrJoin(deleted, ", ")));
  }
}

void JobReconciler::DeletePodGroup(Pass& p) {
  // A finished job's PodGroup would keep its minResources reserved in the gang scheduler.
  // Deleted once per job and process; a failed delete is retried by the next pass.
  if (!p.job.spec.run_policy.scheduling_policy) return;
  {
    absl::MutexLock lock(&mu_);
    if (pod_groups_deleted_.count(p.job.metadata.uid)) return;
  }
  absl::Status s =
      deps_.client->Delete(PodGroupResource(), p.job.metadata.namespace_name, p.job.metadata.name);
  if (!s.ok() && !kube::IsNotFound(s)) {
    p.Error("FailedDeletePodGroup", s);
    return;
  }
  absl::MutexLock lock(&mu_);
  pod_groups_deleted_.insert(p.job.metadata.uid);
}

void JobReconciler::DeleteAfterTtl(Pass& p) {
  TimeCheck ttl = CheckTtl(p.job, p.now);
  if (!ttl.due) {
    p.Requeue(ttl.requeue_after);
    return;
  }
  absl::Status s = deps_.client->Delete(kube::kDistributedTrainings, p.job.metadata.namespace_name,
                                        p.job.metadata.name,
                                        {kube::Propagation::kBackground, p.job.metadata.uid});
  if (s.ok() || kube::IsNotFound(s)) {
    LogInfo("deleted a finished job after its TTL",
            {{"job", p.job.metadata.namespace_name + "/" + p.job.metadata.name}});
    p.deleted = true;
  } else {
    p.Error("FailedDeleteJob", s);
  }
}

absl::Status JobReconciler::DeletePod(Pass& p, const PodState& pod, bool with_service) {
  kube::DeleteOptions options;
  options.precondition_uid = pod.uid;
  absl::Status s =
      deps_.client->Delete(kube::kPods, p.job.metadata.namespace_name, pod.name, options);
  // NotFound: already gone. Conflict: the UID precondition failed, so this pod is gone too and
  // one of the same name replaced it.
  if (!s.ok() && !kube::IsNotFound(s) && !kube::IsConflict(s)) return s;
  {
    absl::MutexLock lock(&mu_);
    deleting_.insert(pod.uid);
  }
  if (with_service && p.services.count(pod.name)) {
    absl::Status sv =
        deps_.client->Delete(kube::kServices, p.job.metadata.namespace_name, pod.name);
    if (!sv.ok() && !kube::IsNotFound(sv)) return sv;
  }
  return absl::OkStatus();
}

}  // namespace disttrain::controller
