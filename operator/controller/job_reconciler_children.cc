// JobReconciler's writes to the cluster: the pods and Services a job needs, their deletion when
// it finishes or is suspended, and the job itself after its TTL (see job_reconciler.h; what the
// pods need first, and the PodGroup's upkeep: job_reconciler_prerequisites.cc). Split from
// job_reconciler.cc, which holds the pass and its decisions.
#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "operator/api/names.h"
#include "operator/controller/internal/reconcile_pass.h"
#include "operator/controller/job_reconciler.h"
#include "operator/kube/errors.h"
#include "operator/policy/child_meta.h"
#include "operator/policy/conditions.h"
#include "operator/policy/desired_objects.h"
#include "operator/policy/elastic_policy.h"
#include "operator/policy/job_policies.h"
#include "operator/policy/oom_policy.h"

namespace disttrain::controller {

using ::disttrain::policy::BuildDesiredObjects;
using ::disttrain::policy::CheckTtl;
using ::disttrain::policy::CleanupOnFinish;
using ::disttrain::policy::DesiredObjects;
using ::disttrain::policy::FinishCleanup;
using ::disttrain::policy::IsSurplusReplica;
using ::disttrain::policy::IsTrue;
using ::disttrain::policy::kFailed;
using ::disttrain::policy::kReplicaFailure;
using ::disttrain::policy::kRestarting;
using ::disttrain::policy::kRunning;
using ::disttrain::policy::kSucceeded;
using ::disttrain::policy::kSuspended;
using ::disttrain::policy::PodPhase;
using ::disttrain::policy::PodState;
using ::disttrain::policy::ReplicaObjects;
using ::disttrain::policy::SetCondition;
using ::disttrain::policy::TimeCheck;

using nlohmann::json;

namespace {

// What creating one replica's Service and Pod came to.
struct CreateOutcome {
  bool attempted = false;
  absl::Status service, pod;  // AlreadyExists counts as success
  bool created = false;
};

absl::Status IgnoreAlreadyExists(absl::Status s) {
  return kube::IsAlreadyExists(s) ? absl::OkStatus() : s;
}

}  // namespace

bool JobReconciler::CreateMissing(Pass& p) {
  const std::string& ns = p.job.metadata.namespace_name;
  auto creating = [&](const char* resource, const std::string& name) {
    return expectations_.IsCreating(absl::StrCat(resource, "/", ns, "/", name), p.now,
                                    kCreateSeenLimit);
  };
  auto is_missing = [&](api::ReplicaType type, int index) {
    if (type == api::ReplicaType::kWorker) {
      // A worker set aside comes back at its retry time.
      if (std::optional<absl::Time> until = policy::SetAsideUntil(p.status, index, p.now)) {
        p.Requeue(*until - p.now);
        return false;
      }
    }
    return !p.pods.count({type, index}) && !p.Remembered(type, index) &&
           !creating("pods", api::ReplicaName(p.job, type, index));
  };
  const std::string& job_name = p.job.metadata.name;
  const bool job_service_missing =
      api::NeedsJobService(p.job) && !p.services.count(job_name) && !creating("services", job_name);
  // Most passes find every pod in place: they build nothing.
  bool any_missing = job_service_missing;
  for (const auto& [type, spec] : p.job.spec.replica_specs) {
    for (int i = 0; i < spec.replicas && !any_missing; ++i) any_missing = is_missing(type, i);
  }
  if (!any_missing) {
    CreatedEverything(p);
    return true;
  }
  absl::StatusOr<DesiredObjects> desired = BuildDesiredObjects(p.job, deps_.build);
  if (!desired.ok()) {
    FailInvalid(p, desired.status());
    return false;
  }
  for (ReplicaObjects& r : desired->replicas) {
    // A replica grown after OOM kills keeps its memory (runPolicy.oomPolicy).
    if (absl::Status s = policy::ApplyResizedMemory(p.status, r.type, r.index, &r.pod); !s.ok()) {
      FailInvalid(p, s);
      return false;
    }
  }
  // Admitted by a queue: its pods carry what the admission assigns.
  for (ReplicaObjects& r : desired->replicas) {
    if (absl::Status s = p.queue->ShapePod(r.type, &r.pod); !s.ok()) {
      Finish(p, false, "FailedToStart", std::string(s.message()));
      return false;
    }
  }
  std::vector<const ReplicaObjects*> missing;
  for (const ReplicaObjects& r : desired->replicas) {
    if (is_missing(r.type, r.index)) missing.push_back(&r);
  }
  auto has_service = [&](const ReplicaObjects& r) {
    if (r.service.is_null()) return true;  // the job's Service names it
    const std::string& name = r.pod["metadata"]["name"].get_ref<const std::string&>();
    return p.services.count(name) > 0 || creating("services", name);
  };
  // Slow start, as Kubernetes' Job controller: the job's Service and the first replica's
  // (Service and) Pod first, so a refused template or an exhausted quota costs one round trip
  // rather than one request per replica; then every other replica's at once. A pod does not
  // need its Service to exist first (TensorFlow retries until the name resolves).
  std::vector<CreateOutcome> outcomes(missing.size());
  absl::Status job_service = absl::OkStatus();
  constexpr size_t kJobService = static_cast<size_t>(-1);
  auto create = [&](size_t begin, size_t end) {
    std::vector<kube::CreateRequest> requests;
    std::vector<std::pair<size_t, bool>> of;  // (replica or kJobService, is the pod)
    if (begin == 0 && job_service_missing) {
      requests.push_back({&kube::kServices, ns, *desired->job_service});
      of.push_back({kJobService, false});
    }
    for (size_t i = begin; i < end; ++i) {
      outcomes[i].attempted = true;
      if (!has_service(*missing[i])) {
        requests.push_back({&kube::kServices, ns, missing[i]->service});
        of.push_back({i, false});
      }
      requests.push_back({&kube::kPods, ns, missing[i]->pod});
      of.push_back({i, true});
    }
    auto key_of = [&](const kube::CreateRequest& r) {
      return absl::StrCat(r.resource == &kube::kPods ? "pods/" : "services/", ns, "/",
                          r.object["metadata"]["name"].get_ref<const std::string&>());
    };
    for (const kube::CreateRequest& r : requests) expectations_.Creating(key_of(r), p.now);
    std::vector<absl::Status> s = deps_.client->CreateAll(requests, deps_.parallel_requests);
    for (size_t k = 0; k < s.size(); ++k) {
      if (!s[k].ok() && !kube::IsAlreadyExists(s[k])) expectations_.Seen(key_of(requests[k]));
      if (of[k].first == kJobService) {
        job_service = kube::IsAlreadyExists(s[k]) ? CheckJobServiceOwner(p) : s[k];
        if (!job_service.ok()) expectations_.Seen(key_of(requests[k]));
        continue;
      }
      CreateOutcome& o = outcomes[of[k].first];
      if (of[k].second) {
        o.created = s[k].ok();
        o.pod = IgnoreAlreadyExists(s[k]);
      } else {
        o.service = IgnoreAlreadyExists(s[k]);
      }
    }
  };
  create(0, missing.empty() ? 0 : 1);
  if (missing.size() > 1 && job_service.ok() && outcomes[0].service.ok() && outcomes[0].pod.ok()) {
    create(1, missing.size());
  }
  std::vector<std::string> created;
  std::optional<absl::Status> first_failure;
  bool permanent = false;
  auto failed = [&](const char* reason, const absl::Status& s) {
    p.Error(reason, s);
    if (!first_failure) first_failure = s;
    permanent = permanent || !kube::IsRetryable(s);
  };
  if (!job_service.ok()) failed("FailedCreateService", job_service);
  for (size_t i = 0; i < missing.size(); ++i) {
    const CreateOutcome& o = outcomes[i];
    if (!o.attempted) continue;
    const std::string name = missing[i]->pod["metadata"]["name"];
    if (!o.service.ok()) failed("FailedCreateService", o.service);
    if (o.created) {
      created.push_back(name);
      p.created_pods = true;
      if (missing[i]->type == api::ReplicaType::kWorker) {
        if (const api::SetAsideReplica* e = policy::FindSetAside(p.status, missing[i]->index)) {
          p.Did("WorkerBack", absl::StrCat("created ", name, " again, set aside ", e->times,
                                           e->times == 1 ? " time" : " times", " before"));
        }
      }
    } else if (o.pod.code() == absl::StatusCode::kInvalidArgument) {
      // The template itself is refused: no retry will ever succeed.
      p.Warn("FailedCreatePod", std::string(o.pod.message()));
      Finish(p, false, "InvalidPodTemplate",
             absl::StrCat("the API server rejected pod ", name, ": ", o.pod.message()));
      return false;
    } else if (!o.pod.ok()) {
      failed("FailedCreatePod", o.pod);
    }
  }
  if (!created.empty()) {
    p.Did("SuccessfulCreatePod",
          absl::StrCat("created pod", created.size() > 1 ? "s " : " ", absl::StrJoin(created, ", "),
                       p.admission_news.empty() ? "" : absl::StrCat(": ", p.admission_news)));
    for (const policy::BuildWarning& w : desired->warnings) p.Warn(w.reason, w.message);
  }
  if (first_failure) {
    ReportCreateFailures(p, *first_failure, permanent);
  } else {
    CreatedEverything(p);
  }
  return true;
}

absl::Status JobReconciler::CheckJobServiceOwner(Pass& p) {
  const std::string& ns = p.job.metadata.namespace_name;
  const std::string& name = p.job.metadata.name;
  absl::StatusOr<json> service = deps_.client->Get(kube::kServices, ns, name);
  if (!service.ok())
    return service.status();  // NotFound: deleted meanwhile; the next pass makes it
  const json refs = service->value("/metadata/ownerReferences"_json_pointer, json::array());
  for (const json& ref : refs) {
    if (ref.is_object() && ref.value("uid", "") == p.job.metadata.uid) return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "Service ", ns, "/", name,
      " exists and does not belong to this job; the job's pods resolve as <pod>.", name, ".", ns,
      ".svc through a headless Service named like the job: rename or delete that Service, or "
      "the job"));
}

void JobReconciler::CreatedEverything(Pass& p) {
  expectations_.CreatedAll(runtime::ObjectKey(*p.object));
  SetCondition(&p.status, kReplicaFailure, false, "PodsCreated", "every missing pod was created",
               p.now);
}

void JobReconciler::ReportCreateFailures(Pass& p, const absl::Status& first, bool permanent) {
  const int in_a_row =
      expectations_.CreateFailed(runtime::ObjectKey(*p.object), p.job.metadata.uid);
  if (!permanent && in_a_row < kCreateFailuresBeforeCondition) return;
  // The job keeps retrying (with backoff): a quota freed or a PriorityClass created later lets
  // it start. activeDeadlineSeconds, when set, bounds the wait.
  SetCondition(&p.status, kReplicaFailure, true, "FailedCreate",
               absl::StrCat(first.message(),
                            permanent ? "" : absl::StrCat(" (", in_a_row, " attempts in a row)")),
               p.now);
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
  p.cleanup_after_write = true;
  p.job.status.completion_time = p.now;
  p.Requeue(CheckTtl(p.job, p.now).requeue_after);
}

void JobReconciler::Cleanup(Pass& p) {
  DeletePodGroup(p);
  const api::CleanPodPolicy policy = p.job.spec.run_policy.clean_pod_policy;
  const std::string& ns = p.job.metadata.namespace_name;
  std::vector<const PodState*> doomed;
  std::vector<kube::DeleteRequest> requests;
  bool all_removed = true;  // every pod deleted now or before
  for (auto& [id, pod] : p.pods) {
    const FinishCleanup c = CleanupOnFinish(p.job, p.status, pod, p.now);
    p.Requeue(c.requeue_after);
    all_removed = all_removed && c.remove;
    if (!c.remove || Deleted(pod.uid)) continue;
    doomed.push_back(&pod);
    kube::DeleteOptions options;
    options.precondition_uid = pod.uid;
    requests.push_back({&kube::kPods, ns, pod.name, options});
  }
  // In parallel: the parameter servers' CPUs and GPUs are released in one round trip.
  std::vector<absl::Status> results = deps_.client->DeleteAll(requests, deps_.parallel_requests);
  std::vector<std::string> deleted;
  std::vector<kube::DeleteRequest> services;
  for (size_t i = 0; i < doomed.size(); ++i) {
    // NotFound: already gone. Conflict: the UID precondition failed, so this pod is gone too
    // and one of the same name replaced it.
    if (!results[i].ok() && !kube::IsNotFound(results[i]) && !kube::IsConflict(results[i])) {
      p.Error("FailedDeletePod", results[i]);
      continue;
    }
    { expectations_.Deleting(doomed[i]->uid); }
    deleted.push_back(doomed[i]->name);
    if (policy == api::CleanPodPolicy::kAll && p.services.count(doomed[i]->name)) {
      services.push_back({&kube::kServices, ns, doomed[i]->name, {}});
    }
  }
  // The job's Service goes with the last of its pods (cleanPodPolicy All); once they are gone, a
  // pass that still sees it (a failed delete) tries again.
  if (policy == api::CleanPodPolicy::kAll && all_removed && (!doomed.empty() || p.pods.empty()) &&
      p.services.count(p.job.metadata.name)) {
    services.push_back({&kube::kServices, ns, p.job.metadata.name, {}});
  }
  for (const absl::Status& s : deps_.client->DeleteAll(services, deps_.parallel_requests)) {
    if (!s.ok() && !kube::IsNotFound(s)) p.Error("FailedDeleteService", s);
  }
  if (!deleted.empty()) {
    p.Did("SuccessfulDeletePod", absl::StrCat("cleanPodPolicy ", api::CleanPodPolicyName(policy),
                                              ": deleted ", absl::StrJoin(deleted, ", ")));
  }
}

void JobReconciler::DeleteAfterTtl(Pass& p) {
  TimeCheck ttl = CheckTtl(p.job, p.now);
  if (!ttl.due) {
    p.Requeue(ttl.requeue_after);
    return;
  }
  absl::Status s =
      deps_.client->Delete(*deps_.api->resource, p.job.metadata.namespace_name, p.job.metadata.name,
                           {kube::Propagation::kBackground, p.job.metadata.uid});
  if (s.ok() || kube::IsNotFound(s)) {
    LogInfo("deleted a finished job after its TTL",
            {{"job", p.job.metadata.namespace_name + "/" + p.job.metadata.name}});
    p.deleted = true;
  } else {
    p.Error("FailedDeleteJob", s);
  }
}

void JobReconciler::RemoveSurplusReplicas(Pass& p) {
  std::map<api::ReplicaType, std::vector<std::string>> removed;
  for (const auto& [id, pod] : p.pods) {
    const auto [type, index] = id;
    if (pod.terminating || Deleted(pod.uid) || !IsSurplusReplica(p.job, type, index)) continue;
    if (absl::Status s = DeletePod(p, pod, /*with_service=*/true); !s.ok()) {
      p.Error("FailedDeletePod", s);
      continue;
    }
    removed[type].push_back(pod.name);
  }
  for (const auto& [type, names] : removed) {
    auto it = p.job.spec.replica_specs.find(type);
    const int replicas = it == p.job.spec.replica_specs.end() ? 0 : it->second.replicas;
    p.Did("ScaledDown", absl::StrCat("deleted ", absl::StrJoin(names, ", "), ": ",
                                     api::ReplicaTypeKey(type), " replicas are now ", replicas));
  }
}

void JobReconciler::RemovePodsOfLostNodes(Pass& p) {
  for (const auto& [id, pod] : p.pods) {
    if (!pod.terminating || !pod.evicted_from_lost_node || Deleted(pod.uid)) continue;
    if (absl::Status s = DeletePod(p, pod, /*with_service=*/false, /*grace_period_seconds=*/0);
        !s.ok()) {
      p.Error("FailedDeletePod", s);
      continue;
    }
    p.DidWarn("PodOfLostNodeRemoved",
              absl::StrCat("pod ", pod.name,
                           " was evicted from a node that stayed unreachable or not ready past "
                           "runPolicy.nodeLossTolerationSeconds; removed so that it is replaced"));
  }
}

absl::Status JobReconciler::DeletePod(Pass& p, const PodState& pod, bool with_service,
                                      std::optional<int64_t> grace_period_seconds) {
  kube::DeleteOptions options;
  options.precondition_uid = pod.uid;
  options.grace_period_seconds = grace_period_seconds;
  absl::Status s =
      deps_.client->Delete(kube::kPods, p.job.metadata.namespace_name, pod.name, options);
  // NotFound: already gone. Conflict: the UID precondition failed, so this pod is gone too and
  // one of the same name replaced it.
  if (!s.ok() && !kube::IsNotFound(s) && !kube::IsConflict(s)) return s;
  { expectations_.Deleting(pod.uid); }
  if (with_service && p.services.count(pod.name)) {
    absl::Status sv =
        deps_.client->Delete(kube::kServices, p.job.metadata.namespace_name, pod.name);
    if (!sv.ok() && !kube::IsNotFound(sv)) return sv;
  }
  return absl::OkStatus();
}

}  // namespace disttrain::controller
