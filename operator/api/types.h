// The DistributedTraining resource (disttrain.io/v1) as C++ values.
//
// The CRD in crds/disttrain.io_distributedtrainings.yaml is the contract; these types mirror it.
// Pod templates stay JSON so every field the user wrote survives, known to us or not.
// Plain values; thread-compatible.
#ifndef DISTTRAIN_OPERATOR_API_TYPES_H_
#define DISTTRAIN_OPERATOR_API_TYPES_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "operator/api/job_kind.h"

namespace disttrain::api {

inline constexpr char kGroup[] = "disttrain.io";
inline constexpr char kVersion[] = "v1";
inline constexpr char kApiVersion[] = "disttrain.io/v1";
inline constexpr char kKind[] = "DistributedTraining";
inline constexpr char kPlural[] = "distributedtrainings";

enum class ReplicaType { kChief, kPS, kWorker, kEvaluator };
inline constexpr std::array<ReplicaType, 4> kReplicaTypes = {
    ReplicaType::kChief, ReplicaType::kPS, ReplicaType::kWorker, ReplicaType::kEvaluator};

// The key in spec.replicaSpecs: "Chief", "PS", "Worker", "Evaluator".
absl::string_view ReplicaTypeKey(ReplicaType type);
// The lower-case role used in names, labels and TF_CONFIG: "chief", "ps", "worker", "evaluator".
absl::string_view ReplicaTypeRole(ReplicaType type);
struct JobSpec;
// The role and key of a type in one job's objects: ReplicaTypeRole/Key but for a Master chief.
absl::string_view RoleName(const JobSpec& spec, ReplicaType type);
absl::string_view KeyName(const JobSpec& spec, ReplicaType type);
// The role names a pod's replica-type label may carry ("master" too), as their type.
std::optional<ReplicaType> ParseRoleName(absl::string_view role);
// Parses a replicaSpecs key; anything but the four keys is InvalidArgument.
absl::StatusOr<ReplicaType> ParseReplicaTypeKey(absl::string_view key);

enum class RestartPolicy { kNever, kOnFailure, kAlways, kExitCode };
absl::string_view RestartPolicyName(RestartPolicy policy);

enum class CleanPodPolicy { kRunning, kAll, kNone };
absl::string_view CleanPodPolicyName(CleanPodPolicy policy);

enum class SuccessPolicy { kDefault, kAllWorkers };
absl::string_view SuccessPolicyName(SuccessPolicy policy);

struct ReplicaSpec {
  int32_t replicas = 1;
  RestartPolicy restart_policy = RestartPolicy::kNever;
  // A core/v1 PodTemplateSpec, exactly as written.
  nlohmann::json pod_template = nlohmann::json::object();
};

struct SchedulingPolicy {
  std::optional<int32_t> min_available;
  std::string queue;
  std::string priority_class;
  std::optional<int32_t> schedule_timeout_seconds;
};

// spec.runPolicy.oomPolicy: a pod whose main container the kernel killed for memory (OOMKilled)
// is recreated with its memory limit and request times memoryFactor, at most maxMemory, and the
// kill does not count against backoffLimit; at maxMemory an OOM kill is a failure as any other
// (policy/oom_policy.h).
struct OomPolicy {
  double memory_factor = 2;
  std::string max_memory;  // a quantity, as written
  int64_t max_memory_milli = 0;

  bool operator==(const OomPolicy&) const = default;
};

struct RunPolicy {
  CleanPodPolicy clean_pod_policy = CleanPodPolicy::kRunning;
  std::optional<int64_t> ttl_seconds_after_finished;
  // After the job succeeded, how long a running evaluator may go on to evaluate the final
  // checkpoint before cleanup deletes it (counted from completionTime).
  int64_t final_evaluation_grace_period_seconds = 60;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<int32_t> backoff_limit;
  // The tolerationSeconds of the NoExecute tolerations for node.kubernetes.io/unreachable and
  // not-ready that the operator gives each pod: how long a pod stays bound to a lost node before
  // the taint manager evicts it (and the operator replaces it). DistributedTraining defaults it
  // to 30; unset (TFJob) adds none, leaving Kubernetes' 300 s.
  std::optional<int64_t> node_loss_toleration_seconds;
  bool suspend = false;
  std::optional<SchedulingPolicy> scheduling_policy;
  std::optional<OomPolicy> oom_policy;
};

struct TfConfigOptions {
  // Kubeflow puts the evaluator inside "cluster"; the Estimator convention keeps it out.
  bool evaluator_in_cluster = true;
  // TFJob's enableDynamicWorker: a worker's cluster lists the ps tasks and itself only, so
  // workers can come and go without rewriting every pod's TF_CONFIG.
  bool sparse_workers = false;
};

// spec.networkPolicy: the NetworkPolicy the operator creates for a job before its pods
// (policy/network_policy_builder.h): ingress to the job's pods only from the job's own pods,
// and to their metrics port from the peers named here. Egress is untouched.
enum class JobPorts {
  kTfConfig,  // the ports TF_CONFIG lists (each role's tfjob-port, 2222 by default)
  kAll,       // every port: collectives over NCCL or gloo listen on ports of their own
};
struct NetworkPolicySpec {
  std::optional<bool> enabled;  // unset: the operator's --network-policy (true unless changed)
  JobPorts job_ports = JobPorts::kTfConfig;
  // NetworkPolicyPeer objects (podSelector, namespaceSelector, ipBlock) that may also reach the
  // main container's port named "metrics" (9095, the trainer's, when none is named): Prometheus.
  std::vector<nlohmann::json> metrics_from;
};

// spec.tls: mutual TLS between the job's trainer tasks (policy/tls_secret_builder.h). The
// operator issues a CA for the job and a certificate per task into a Secret owned by the job;
// each pod mounts its own certificate and the CA, and the trainer (DISTTRAIN_TLS_DIR) then accepts
// only peers of the same job. Immutable.
struct TlsSpec {
  bool enabled = false;
};
// A Secret of a job with spec.tls holds about 1.2 KiB per task; Secrets stop at 1 MiB.
inline constexpr int kMaxTlsTasks = 500;

// spec.managedBy: unset or this value means this operator reconciles the job.
inline constexpr char kManagedByOperator[] = "disttrain.io/operator";

// The bounds of the Worker count (the scale subresource and HorizontalPodAutoscalers move it
// within them); the job counts as running, and is gang scheduled, with minReplicas workers.
struct ElasticPolicy {
  int32_t min_replicas = 1;
  int32_t max_replicas = 1;
  bool operator==(const ElasticPolicy&) const = default;
};

struct JobSpec {
  std::map<ReplicaType, ReplicaSpec> replica_specs;
  std::optional<ElasticPolicy> elastic_policy;
  // A TFJob's chief given as "Master" (TFJob's legacy name): its pods, Services, labels, TF_CONFIG
  // task type and status key say master, as under the training-operator; it is the chief in all
  // else.
  bool chief_is_master = false;
  // The controller that reconciles the job; another than kManagedByOperator (MultiKueue's) means
  // this operator leaves the job alone. Immutable.
  std::string managed_by;
  RunPolicy run_policy;
  SuccessPolicy success_policy = SuccessPolicy::kDefault;
  TfConfigOptions tf_config;
  NetworkPolicySpec network_policy;
  TlsSpec tls;
};

inline constexpr std::array<absl::string_view, 6> kConditionTypes = {
    "Created", "Running", "Restarting", "Succeeded", "Failed", "Suspended"};

struct Condition {
  std::string type;
  bool status = false;
  std::string reason;
  std::string message;
  absl::Time last_transition_time = absl::InfinitePast();

  bool operator==(const Condition&) const = default;
};

// A worker of an elastic job that failed where the job would otherwise have failed (restartPolicy
// Never, a permanent exit, or backoffLimit used up): the operator deleted its pod and runs on
// with the others (at least elasticPolicy.minReplicas), and creates it again at retry_time.
struct SetAsideReplica {
  int index = 0;
  std::string pod_uid;   // the pod set aside last (its restarts are counted here, not in the job's)
  int32_t times = 0;     // how often this index was set aside; the wait doubles each time
  int32_t restarts = 0;  // restarts of its pods when set aside: kept out of backoffLimit
  absl::Time retry_time = absl::InfinitePast();
  std::string message;

  bool operator==(const SetAsideReplica&) const = default;
};

// A replica the operator recreated with more memory after its container was OOMKilled
// (runPolicy.oomPolicy): its pods are created with `memory` from then on.
struct ResizedReplica {
  int index = 0;
  std::string memory;     // the main container's memory limit now (a quantity)
  int32_t oom_kills = 0;  // OOM kills that grew it
  std::string pod_uid;    // the pod killed last (its kill is told once)

  bool operator==(const ResizedReplica&) const = default;
};

struct ReplicaStatus {
  int32_t active = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t restarts = 0;
  // "<running>/<replicas>", for the printer columns.
  std::string progress;
  // Indexes whose pod succeeded: remembered so a succeeded pod that the cluster garbage-collects
  // is not created again.
  std::vector<int> succeeded_indexes;
  // Restarts of pods the operator has since deleted and recreated (their in-place restarts plus
  // the recreation), so restarts = past_restarts + restartCount of the current pods.
  int32_t past_restarts = 0;
  // Pods running now (active also counts pending ones): TFJob's `active`; not written for a
  // DistributedTraining (its progress says it).
  int32_t running = 0;
  // Workers of an elastic job set aside (by index), until the job ends or scales them away.
  std::vector<SetAsideReplica> set_aside;
  // Replicas grown after OOM kills (by index).
  std::vector<ResizedReplica> resized;

  bool operator==(const ReplicaStatus&) const = default;
};

// What the training reported when it ended: the chief's and the evaluator's termination
// messages (JSON written by disttrain-trainer, or any trainer that writes the same keys).
struct JobResult {
  std::optional<int64_t> global_step;  // the chief's final global step
  std::optional<double> loss;          // the chief's final training loss
  std::optional<double> train_accuracy;
  std::optional<double> train_seconds;
  std::optional<double> accuracy;  // the evaluator's, on the test split
  std::optional<double> eval_loss;
  // Click-through models (--model lr, fm, deepfm, widedeep): the chief's AUC on training
  // examples, and the evaluator's ROC AUC and log loss on the test split.
  std::optional<double> train_auc;
  std::optional<double> auc;
  std::optional<double> log_loss;
  std::optional<int64_t> evaluated_step;  // the checkpoint the evaluator's figures are for

  bool operator==(const JobResult&) const = default;
};

// How far the training is while it runs: read from the /metrics of the chief (or worker 0
// without a chief) at a bounded rate (operator/progress/), never pushed by the pods.
struct JobProgress {
  int64_t global_step = 0;
  std::optional<int64_t> target_steps;        // the global step the chief stops at, when it says
  std::optional<double> steps_per_second;     // between the last two readings
  std::optional<double> examples_per_second;  // steps/s times the examples a step stands for
  std::optional<absl::Time> estimated_completion_time;
  absl::Time observe_time;  // when the step was read

  // Whole percent of target_steps done, when known (0-100).
  std::optional<int> Percent() const;

  bool operator==(const JobProgress&) const = default;
};

struct JobStatus {
  std::vector<Condition> conditions;
  // The current state: the type of the condition that describes the job now.
  std::string state;
  std::map<ReplicaType, ReplicaStatus> replica_statuses;
  std::optional<absl::Time> start_time;
  std::optional<absl::Time> completion_time;
  int64_t observed_generation = 0;
  // UIDs of failed pods whose restart is already counted (in pastRestarts) and that the operator
  // is deleting: written before the delete, dropped once the pod is gone, so a restart is never
  // lost nor counted twice (the Job controller's uncountedTerminatedPods, for restarts).
  std::vector<std::string> restarting_pods;
  std::optional<JobResult> result;
  std::optional<JobProgress> progress;
  // The label selector of the job's Worker pods ("k=v,k=v"), empty without a Worker role: the
  // scale subresource's labelSelectorPath, which a HorizontalPodAutoscaler reads.
  std::string worker_selector;

  bool operator==(const JobStatus&) const = default;
};

struct ObjectMeta {
  std::string name;
  std::string namespace_name;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::optional<absl::Time> creation_timestamp;
  std::optional<absl::Time> deletion_timestamp;
};

// How a job's tasks find each other: the hosts TF_CONFIG lists and the headless Services that
// make those names resolve.
enum class Addressing {
  // One headless Service named like the job; each pod sets hostname (its own name) and
  // subdomain (the job's), and is "<job>-<role>-<i>.<job>.<ns>.svc". A DistributedTraining's.
  kJobService,
  // One headless Service per pod, named like it: "<job>-<role>-<i>.<ns>.svc". A TFJob's (the
  // training-operator's names, which its users' code and tools expect), and a
  // DistributedTraining's whose pods an operator before the job Service made.
  kReplicaServices,
};

struct DistributedTraining {
  // The API the job came through: its children's owner reference and labels.
  const JobKind* kind = &kDistributedTrainingKind;
  // Set by the decoder for the kind; the reconciler keeps kReplicaServices for a job it finds
  // with per-replica Services already (made before the job Service existed).
  Addressing addressing = Addressing::kJobService;
  ObjectMeta metadata;
  JobSpec spec;
  JobStatus status;
};

}  // namespace disttrain::api

#endif  // DISTTRAIN_OPERATOR_API_TYPES_H_
