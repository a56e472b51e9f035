// JobReconciler's prerequisites of a job's pods (policy/prerequisites.h: a gang's Workload and
// PodGroup, the NetworkPolicy, the TLS Secret), created before its first pod, and the upkeep of
// its PodGroup: brought up to date with the job's spec, deleted when the job finishes (see
// job_reconciler.h). Split from job_reconciler_children.cc, which creates and deletes its pods.
#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "operator/controller/internal/reconcile_pass.h"
#include "operator/controller/job_reconciler.h"
#include "operator/kube/errors.h"
#include "operator/policy/pod_group_builder.h"
#include "operator/policy/prerequisites.h"

namespace disttrain::controller {

using ::disttrain::policy::BuildPodGroup;
using ::disttrain::policy::BuildPrerequisites;
using ::disttrain::policy::GangScheduler;
using ::disttrain::policy::Prerequisite;
using ::disttrain::policy::PrerequisiteKind;

using nlohmann::json;

const kube::Resource& JobReconciler::PodGroupResource() const {
  switch (deps_.build.gang_scheduler) {
    case GangScheduler::kVolcano:
      return kube::kVolcanoPodGroups;
    case GangScheduler::kSchedulerPlugins:
      return kube::kCoschedulingPodGroups;
    case GangScheduler::kKubernetes:
      return kube::kSchedulingPodGroups;
  }
  return kube::kVolcanoPodGroups;
}

namespace {

// How the reconciler creates and tells one kind of prerequisite.
struct PrerequisiteFront {
  const kube::Resource* resource;
  const char* what;  // the kind: "NetworkPolicy", "Secret", "PodGroup", "Workload"
  const char* created_reason;
  const char* detail;  // after the name in the created event
  const char* failed_reason;
  bool api_optional;  // NotFound (the API is not installed): told, and the pods go without
};

PrerequisiteFront FrontOf(PrerequisiteKind kind, const kube::Resource& pod_groups) {
  switch (kind) {
    case PrerequisiteKind::kGangWorkload:
      return {&kube::kSchedulingWorkloads,    "Workload",
              "SuccessfulCreateGangWorkload", ": kube-scheduler gangs the job's pods",
              "FailedCreateGangWorkload",     true};
    case PrerequisiteKind::kPodGroup:
      return {&pod_groups, "PodGroup", "SuccessfulCreatePodGroup", "", "FailedCreatePodGroup",
              true};
    case PrerequisiteKind::kNetworkPolicy:
      return {&kube::kNetworkPolicies,         "NetworkPolicy",
              "SuccessfulCreateNetworkPolicy", ": ingress only from the job's pods",
              "FailedCreateNetworkPolicy",     false};
    case PrerequisiteKind::kTlsSecret:
      return {&kube::kSecrets,
              "Secret",
              "SuccessfulCreateTlsSecret",
              ": a CA for this job and a certificate per task",
              "FailedCreateTlsSecret",
              false};
  }
  return {};
}

}  // namespace

bool JobReconciler::CreatePrerequisites(Pass& p) {
  if (!p.pods.empty()) return true;
  bool gang_api = true;  // false: the gang scheduler's API is not served
  for (Prerequisite& pre : BuildPrerequisites(p.job, deps_.build, p.now)) {
    const bool gang =
        pre.kind == PrerequisiteKind::kGangWorkload || pre.kind == PrerequisiteKind::kPodGroup;
    if (gang && !gang_api) continue;
    const PrerequisiteFront front = FrontOf(pre.kind, PodGroupResource());
    if (!pre.object.ok()) {
      p.Error(front.failed_reason, pre.object.status());
      return false;
    }
    const kube::Resource& res = *front.resource;
    const std::string name = pre.object->value("/metadata/name"_json_pointer, std::string());
    // Create only (the operator may read no Secret): a TLS Secret's name carries the job's uid,
    // so one that already has it was made by an earlier pass for this very job.
    absl::StatusOr<json> r =
        deps_.client->Create(res, p.job.metadata.namespace_name, *std::move(pre.object));
    if (r.ok()) {
      p.Did(front.created_reason,
            pre.kind == PrerequisiteKind::kPodGroup
                ? absl::StrCat("created ", res.group, " PodGroup ", name)
                : absl::StrCat("created ", front.what, " ", name, front.detail));
    } else if (front.api_optional && kube::IsNotFound(r.status())) {
      gang_api = false;
      p.Warn("PodGroupUnavailable",
             absl::StrCat("the ", res.group, "/", res.version, " ", front.what,
                          " API is not installed; pods are created without gang scheduling"));
    } else if (!kube::IsAlreadyExists(r.status())) {
      // No pod without it: the job waits, retried with backoff, the event says why (e.g. the
      // operator's ClusterRole lacks networkpolicies create; --network-policy=false or
      // spec.networkPolicy.enabled: false go without).
      p.Error(front.failed_reason, r.status());
      return false;
    }
  }
  return true;
}

void JobReconciler::UpdatePodGroup(Pass& p) {
  // Kubernetes' own PodGroups cannot change (their spec is immutable): the gang keeps the
  // minCount it was created with.
  if (!p.job.spec.run_policy.scheduling_policy || p.pods.empty() ||
      deps_.build.gang_scheduler == GangScheduler::kKubernetes) {
    return;
  }
  const std::string key = runtime::ObjectKey(*p.object);
  // A job whose status was never written had its PodGroup built from its first generation.
  const int64_t seen = std::max<int64_t>(1, p.original.observed_generation);
  if (p.job.metadata.generation == seen &&
      !expectations_.IsPodGroupBehind(key, p.job.metadata.uid)) {
    return;
  }
  absl::StatusOr<std::optional<json>> group = BuildPodGroup(p.job, deps_.build);
  if (!group.ok() || !group->has_value()) return;  // CreateMissing fails the job for it
  const kube::Resource& res = PodGroupResource();
  const json patch = {{"spec", (**group)["spec"]}};
  const absl::Status s = deps_.client->Patch(res, p.job.metadata.namespace_name,
                                             p.job.metadata.name, kube::PatchType::kMerge, patch);
  if (!s.ok() && !kube::IsNotFound(s)) {
    expectations_.PodGroupBehind(key, p.job.metadata.uid, true);
    p.Error("FailedUpdatePodGroup", s);
    return;
  }
  expectations_.PodGroupBehind(key, p.job.metadata.uid, false);
  if (s.ok()) {
    p.Did("UpdatedPodGroup",
          absl::StrCat(res.group, " PodGroup ", p.job.metadata.name, " follows the job: minMember ",
                       (**group)["spec"].value("minMember", 0)));
  }
}

void JobReconciler::DeletePodGroup(Pass& p) {
  // A finished job's PodGroup would keep its minResources reserved in the gang scheduler.
  // Deleted once per job and process; a failed delete is retried by the next pass.
  if (!p.job.spec.run_policy.scheduling_policy) return;
  const std::string key = runtime::ObjectKey(*p.object);
  if (expectations_.IsPodGroupDeleted(key, p.job.metadata.uid)) return;
  absl::Status s =
      deps_.client->Delete(PodGroupResource(), p.job.metadata.namespace_name, p.job.metadata.name);
  if (!s.ok() && !kube::IsNotFound(s)) {
    p.Error("FailedDeletePodGroup", s);
    return;
  }
  expectations_.PodGroupDeleted(key, p.job.metadata.uid);
}

}  // namespace disttrain::controller
