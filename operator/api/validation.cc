#include "operator/api/validation.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "operator/api/names.h"

namespace disttrain::api {
namespace {

// The pod restartPolicy a role's restartPolicy implies (ExitCode: the operator recreates pods).
absl::string_view PodRestartPolicy(RestartPolicy policy) {
  return policy == RestartPolicy::kExitCode ? "Never" : RestartPolicyName(policy);
}

void ValidateTemplate(const std::string& path, const ReplicaSpec& spec,
                      std::vector<std::string>* errors) {
  const nlohmann::json& tmpl = spec.pod_template;
  const nlohmann::json* pod_spec = tmpl.contains("spec") ? &tmpl["spec"] : nullptr;
  if (pod_spec == nullptr || !pod_spec->is_object()) {
    errors->push_back(absl::StrCat(path, ".template.spec: is required"));
    return;
  }
  auto containers = pod_spec->find("containers");
  if (containers == pod_spec->end() || !containers->is_array() || containers->empty()) {
    errors->push_back(
        absl::StrCat(path, ".template.spec.containers: needs at least one container"));
  }
  auto restart = pod_spec->find("restartPolicy");
  if (restart != pod_spec->end() && restart->is_string() &&
      restart->get<std::string>() != PodRestartPolicy(spec.restart_policy)) {
    errors->push_back(absl::StrCat(
        path, ".template.spec.restartPolicy: \"", restart->get<std::string>(), "\" contradicts ",
        path, ".restartPolicy \"", RestartPolicyName(spec.restart_policy),
        "\", which runs pods with restartPolicy \"", PodRestartPolicy(spec.restart_policy),
        "\"; remove it from the template or make the two agree"));
  }
}

bool IsDns1035Label(const std::string& s) {
  if (s.empty() || !(s.front() >= 'a' && s.front() <= 'z')) return false;
  if (s.back() == '-') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

}  // namespace

absl::Status Validate(const DistributedTraining& job) {
  std::vector<std::string> errors;
  const JobSpec& spec = job.spec;

  if (spec.replica_specs.empty()) errors.push_back("spec.replicaSpecs: needs at least one role");
  int32_t chief_or_workers = 0;
  int32_t workers = 0;
  for (const auto& [type, replica] : spec.replica_specs) {
    std::string path = absl::StrCat("spec.replicaSpecs.", KeyName(spec, type));
    if (replica.replicas < 0) {
      errors.push_back(absl::StrCat(path, ".replicas: must be 0 or more, got ", replica.replicas));
    }
    if ((type == ReplicaType::kChief || type == ReplicaType::kEvaluator) && replica.replicas > 1) {
      errors.push_back(absl::StrCat(path, ".replicas: a job has at most one ", RoleName(spec, type),
                                    ", got ", replica.replicas));
    }
    if (type == ReplicaType::kChief || type == ReplicaType::kWorker) {
      chief_or_workers += std::max(0, replica.replicas);
    }
    if (type == ReplicaType::kWorker) workers = replica.replicas;
    ValidateTemplate(path, replica, &errors);
  }
  if (!spec.replica_specs.empty() && chief_or_workers == 0) {
    errors.push_back("spec.replicaSpecs: needs a Chief or at least one Worker");
  }
  if (spec.success_policy == SuccessPolicy::kAllWorkers && workers <= 0) {
    errors.push_back("spec.successPolicy: AllWorkers needs at least one Worker");
  }

  const RunPolicy& run = spec.run_policy;
  auto non_negative = [&](const char* field, std::optional<int64_t> v) {
    if (v && *v < 0) {
      errors.push_back(absl::StrCat("spec.runPolicy.", field, ": must be 0 or more, got ", *v));
    }
  };
  non_negative("ttlSecondsAfterFinished", run.ttl_seconds_after_finished);
  non_negative("finalEvaluationGracePeriodSeconds", run.final_evaluation_grace_period_seconds);
  non_negative("backoffLimit", run.backoff_limit);
  non_negative("nodeLossTolerationSeconds", run.node_loss_toleration_seconds);
  if (run.active_deadline_seconds && *run.active_deadline_seconds <= 0) {
    errors.push_back(absl::StrCat("spec.runPolicy.activeDeadlineSeconds: must be positive, got ",
                                  *run.active_deadline_seconds));
  }
  if (const auto& oom = run.oom_policy) {
    if (!(oom->memory_factor > 1) || oom->memory_factor > 16) {
      errors.push_back(absl::StrCat(
          "spec.runPolicy.oomPolicy.memoryFactor: must be more than 1 and at most 16, got ",
          oom->memory_factor));
    }
    if (oom->max_memory_milli <= 0) {
      errors.push_back(
          absl::StrCat("spec.runPolicy.oomPolicy.maxMemory: must be a memory size "
                       "above 0 (such as 8Gi), got \"",
                       oom->max_memory, "\""));
    }
  }
  if (const auto& sp = run.scheduling_policy) {
    int32_t total = 0;
    for (const auto& [type, replica] : spec.replica_specs) total += std::max(0, replica.replicas);
    // A DistributedTraining whose gang can never form is refused; a TFJob's is accepted and
    // waits, as the training-operator lets it (its PodGroup gets that minMember, and the job
    // stays Created until the gang can form or minAvailable is lowered): TFJob tools rely on it.
    const bool tfjob = job.kind == &kTfJobKind;
    if (sp->min_available && (*sp->min_available < 1 || (*sp->min_available > total && !tfjob))) {
      errors.push_back(
          tfjob ? absl::StrCat("spec.runPolicy.schedulingPolicy.minAvailable: must be 1 or "
                               "more, got ",
                               *sp->min_available)
                : absl::StrCat("spec.runPolicy.schedulingPolicy.minAvailable: must be between 1 "
                               "and the job's ",
                               total, " replicas (a gang larger than the job never forms), got ",
                               *sp->min_available));
    }
    if (sp->schedule_timeout_seconds && *sp->schedule_timeout_seconds < 1) {
      errors.push_back("spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds: must be positive");
    }
  }

  if (const std::optional<ElasticPolicy>& ep = spec.elastic_policy) {
    if (!spec.replica_specs.contains(ReplicaType::kWorker)) {
      errors.push_back("spec.elasticPolicy: the job has no Worker role to scale");
    } else if (ep->min_replicas < 0 || ep->max_replicas < ep->min_replicas ||
               workers < ep->min_replicas || workers > ep->max_replicas) {
      errors.push_back(absl::StrCat(
          "spec.elasticPolicy: needs 0 <= minReplicas <= Worker replicas <= maxReplicas, got ",
          ep->min_replicas, " <= ", workers, " <= ", ep->max_replicas));
    }
  }

  if (spec.tls.enabled) {
    int32_t tasks = 0;
    for (const auto& [type, replica] : spec.replica_specs) tasks += std::max(0, replica.replicas);
    if (tasks > kMaxTlsTasks) {
      errors.push_back(
          absl::StrCat("spec.tls: a job with mutual TLS has at most ", kMaxTlsTasks,
                       " tasks (their certificates share one Secret, at most 1 MiB), got ", tasks));
    }
  }

  if (!IsDns1035Label(job.metadata.name)) {
    errors.push_back(absl::StrCat(
        "metadata.name: \"", job.metadata.name,
        "\" must be a DNS-1035 label (lower case alphanumeric characters or '-', starting with a "
        "letter and ending with an alphanumeric character): it names the job's Services"));
  }
  const int max_name = MaxJobNameLength(spec);
  if (static_cast<int>(job.metadata.name.size()) > max_name) {
    errors.push_back(absl::StrCat("metadata.name: \"", job.metadata.name, "\" has ",
                                  job.metadata.name.size(), " characters; this job allows at most ",
                                  max_name, " so that every pod and service name stays within ",
                                  kMaxDnsLabel));
  }

  if (errors.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(errors, "; "));
}

}  // namespace disttrain::api
