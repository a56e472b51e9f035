#include "operator/queueing/workload_status.h"

#include "common/json_members.h"
#include "operator/api/codec.h"
#include "operator/queueing/admission.h"
#include "operator/queueing/workload.h"

namespace disttrain::queueing {
namespace {

using nlohmann::json;

// Sets one condition in `conditions` as apimeta.SetStatusCondition does: the transition time
// moves only when the status flips. Returns whether anything changed.
bool SetCondition(json* conditions, const std::string& type, bool status, const std::string& reason,
                  const std::string& message, int64_t generation, absl::Time now) {
  const std::string value = status ? "True" : "False";
  // Kueue truncates condition messages to the API's 32768 characters.
  const std::string text = message.size() > 32768 ? message.substr(0, 32768) : message;
  for (json& c : *conditions) {
    if (c.value("type", "") != type) continue;
    bool changed = false;
    if (c.value("status", "") != value) {
      c["status"] = value;
      c["lastTransitionTime"] = api::FormatKubeTime(now);
      changed = true;
    }
    for (auto [k, v] :
         {std::pair<const char*, const std::string*>{"reason", &reason}, {"message", &text}}) {
      if (c.value(k, "") != *v) {
        c[k] = *v;
        changed = true;
      }
    }
    if (c.value("observedGeneration", int64_t{0}) != generation) {
      c["observedGeneration"] = generation;
      changed = true;
    }
    return changed;
  }
  conditions->push_back({{"type", type},
                         {"status", value},
                         {"reason", reason},
                         {"message", text},
                         {"lastTransitionTime", api::FormatKubeTime(now)},
                         {"observedGeneration", generation}});
  return true;
}

json ResourceVersion(const json& workload) {
  return {{"resourceVersion", workload.value("/metadata/resourceVersion"_json_pointer, "")}};
}

}  // namespace

std::optional<json> JobSideStatusPatch(const json& workload, const JobSide& want, absl::Time now) {
  // Most passes of an admitted job want nothing written: no copy of the conditions then.
  if (!want.finished && !want.release_quota && !want.pods_ready && want.reclaimable.empty()) {
    return std::nullopt;
  }
  const WorkloadState state = ReadWorkload(workload);
  json conditions = ArrayMember(ObjectMember(workload, "status"), "conditions");
  const int64_t generation = workload.value("/metadata/generation"_json_pointer, int64_t{0});
  json status = json::object();
  bool changed = false;
  if (want.finished && !state.finished) {
    changed |= SetCondition(&conditions, kFinished, true,
                            want.finished->succeeded ? "Succeeded" : "Failed",
                            want.finished->message, generation, now);
  }
  if (want.release_quota && state.quota_reserved && state.evicted) {
    const bool requeue =
        state.evicted_reason == "Preempted" || state.evicted_reason == "NodeFailures";
    changed |= SetCondition(&conditions, kRequeued, requeue, state.evicted_reason,
                            state.evicted_message, generation, now);
    changed |= SetCondition(&conditions, kQuotaReserved, false, "Pending", state.evicted_message,
                            generation, now);
    changed |= SetCondition(&conditions, kAdmitted, false, "NoReservation",
                            "The workload has no reservation", generation, now);
    if (state.pods_ready) {
      SetCondition(&conditions, kPodsReady, false, "WaitForStart",
                   "Not all pods are ready or succeeded", generation, now);
    }
    status["admission"] = nullptr;
    changed = true;
  }
  if (want.pods_ready && state.quota_reserved && !state.finished && !want.release_quota) {
    if (*want.pods_ready) {
      changed |=
          SetCondition(&conditions, kPodsReady, true, "Started",
                       "All pods reached readiness and the workload is running", generation, now);
    } else if (state.pods_ready) {
      changed |= SetCondition(&conditions, kPodsReady, false, "WaitForRecovery",
                              "At least one pod has failed, waiting for recovery", generation, now);
    }
  }
  if (!want.reclaimable.empty() && state.quota_reserved && !state.finished) {
    std::map<std::string, int> merged = state.reclaimable;
    for (const auto& [name, count] : want.reclaimable) {
      if (count > merged[name]) merged[name] = count;
    }
    std::erase_if(merged, [](const auto& kv) { return kv.second <= 0; });
    if (merged != state.reclaimable) {
      json list = json::array();
      for (const auto& [name, count] : merged) list.push_back({{"name", name}, {"count", count}});
      status["reclaimablePods"] = list;
      changed = true;
    }
  }
  if (!changed) return std::nullopt;
  status["conditions"] = conditions;
  return json{{"metadata", ResourceVersion(workload)}, {"status", status}};
}

std::optional<json> RemoveFinalizerPatch(const json& workload) {
  const json& finalizers = ArrayMember(ObjectMember(workload, "metadata"), "finalizers");
  for (size_t i = 0; i < finalizers.size(); ++i) {
    if (finalizers[i] != kResourceInUseFinalizer) continue;
    const std::string path = absl::StrCat("/metadata/finalizers/", i);
    return json::array({{{"op", "test"}, {"path", path}, {"value", kResourceInUseFinalizer}},
                        {{"op", "remove"}, {"path", path}}});
  }
  return std::nullopt;
}

JobSideDecision DecideJobSide(const JobSideFacts& f) {
  JobSideDecision d;
  if (f.workload.finished) {
    d.release_finalizer = f.workload.has_finalizer;
    return d;
  }
  JobSide want;
  if (f.runs_elsewhere) {
    // An eviction here (the worker evicted its copy, the worker was lost, the Workload was
    // deactivated) is the job's controller's to answer, as for any job: no pod runs in this
    // cluster, so the quota goes back at once, MultiKueue removes the worker's copy and the
    // Workload is queued to be dispatched again.
    if (!f.workload.evicted || !f.workload.quota_reserved) return d;
    want.release_quota = true;
  } else if (f.job_finished) {
    // The quota goes back once the pods holding it are gone.
    if (f.pods_live && !f.keeps_pods) return d;
    want.finished = JobSide::Finish{f.job_succeeded, f.finish_message};
  } else if (f.release_quota) {
    want.release_quota = true;
  } else if (f.admitted) {
    want.pods_ready = f.pods_ready;
    want.reclaimable = f.reclaimable;
  } else {
    return d;
  }
  d.write = std::move(want);
  return d;
}

}  // namespace disttrain::queueing
