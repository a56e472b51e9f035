#include "operator/api/codec.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "operator/api/fields.h"
#include "operator/api/pod_template.h"
#include "operator/api/quantity.h"
#include "operator/api/result_display.h"

namespace disttrain::api {
namespace internal {

absl::Status DecodeMetadata(const json& j, ObjectMeta* meta) {
  Fields f(j, "metadata");
  f.ReadString("name", &meta->name);
  f.ReadString("namespace", &meta->namespace_name);
  f.ReadString("uid", &meta->uid);
  f.ReadString("resourceVersion", &meta->resource_version);
  f.ReadInt("generation", &meta->generation);
  f.ReadStringMap("labels", &meta->labels);
  f.ReadStringMap("annotations", &meta->annotations);
  f.ReadTime("creationTimestamp", &meta->creation_timestamp);
  f.ReadTime("deletionTimestamp", &meta->deletion_timestamp);
  return f.status();
}

absl::Status DecodeReplicaSpec(const json& j, const std::string& path, ReplicaSpec* spec) {
  Fields f(j, path);
  f.ReadInt("replicas", &spec->replicas);
  f.ReadEnum("restartPolicy", kRestartPolicies, &spec->restart_policy);
  if (const json* t = f.Find("template")) {
    f.Merge(CheckPodTemplate(*t, f.Path("template")));
    spec->pod_template = *t;
  }
  return f.status();
}

absl::Status DecodeRunPolicy(const json& j, RunPolicy* run) {
  Fields f(j, "spec.runPolicy");
  f.ReadEnum("cleanPodPolicy", kCleanPodPolicies, &run->clean_pod_policy);
  f.ReadInt("ttlSecondsAfterFinished", &run->ttl_seconds_after_finished);
  f.ReadInt("finalEvaluationGracePeriodSeconds", &run->final_evaluation_grace_period_seconds);
  f.ReadInt("activeDeadlineSeconds", &run->active_deadline_seconds);
  f.ReadInt("backoffLimit", &run->backoff_limit);
  f.ReadInt("nodeLossTolerationSeconds", &run->node_loss_toleration_seconds);
  f.ReadBool("suspend", &run->suspend);
  if (const json* sp = f.Find("schedulingPolicy")) {
    Fields s(*sp, "spec.runPolicy.schedulingPolicy");
    SchedulingPolicy policy;
    s.ReadInt("minAvailable", &policy.min_available);
    s.ReadString("queue", &policy.queue);
    s.ReadString("priorityClass", &policy.priority_class);
    s.ReadInt("scheduleTimeoutSeconds", &policy.schedule_timeout_seconds);
    f.Merge(s.status());
    run->scheduling_policy = policy;
  }
  if (const json* oom = f.Find("oomPolicy")) {
    Fields o(*oom, "spec.runPolicy.oomPolicy");
    OomPolicy policy;
    std::optional<double> factor;
    o.ReadDouble("memoryFactor", &factor);
    if (factor) policy.memory_factor = *factor;
    if (const json* max = o.Find("maxMemory"); max != nullptr && max->is_number_integer()) {
      policy.max_memory = absl::StrCat(max->get<int64_t>());
    } else {
      o.ReadString("maxMemory", &policy.max_memory);
    }
    if (!policy.max_memory.empty()) {
      absl::StatusOr<int64_t> milli = ParseMilliQuantity(policy.max_memory);
      if (milli.ok()) {
        policy.max_memory_milli = *milli;
      } else {
        o.Fail("maxMemory", milli.status().message());
      }
    }
    f.Merge(o.status());
    run->oom_policy = policy;
  }
  return f.status();
}

absl::StatusOr<absl::Time> ParseTime(absl::string_view text) { return ParseKubeTime(text); }

absl::Status DecodeConditions(const json& conds, JobStatus* status) {
  if (!conds.is_array()) return FieldError("status.conditions", "must be a list");
  absl::Status result;
  for (size_t i = 0; i < conds.size(); ++i) {
    Fields c(conds[i], absl::StrCat("status.conditions[", i, "]"));
    Condition cond;
    std::string st;
    std::optional<absl::Time> t;
    c.ReadString("type", &cond.type);
    c.ReadString("status", &st);
    c.ReadString("reason", &cond.reason);
    c.ReadString("message", &cond.message);
    c.ReadTime("lastTransitionTime", &t);
    if (!c.status().ok()) return c.status();
    cond.status = st == "True";
    if (t) cond.last_transition_time = *t;
    status->conditions.push_back(std::move(cond));
  }
  return absl::OkStatus();
}

json EncodeCondition(const Condition& c) {
  json cj = {{"type", c.type}, {"status", c.status ? "True" : "False"}};
  if (!c.reason.empty()) cj["reason"] = c.reason;
  if (!c.message.empty()) cj["message"] = c.message;
  if (c.last_transition_time != absl::InfinitePast()) {
    cj["lastTransitionTime"] = FormatKubeTime(c.last_transition_time);
  }
  return cj;
}

}  // namespace internal
namespace {

using namespace internal;  // NOLINT(build/namespaces): this file defines them

absl::Status DecodeSpec(const json& j, JobSpec* spec) {
  Fields f(j, "spec");
  if (j.is_null()) return FieldError("spec", "is required");
  const json* replicas = f.Find("replicaSpecs");
  if (replicas == nullptr) {
    f.Fail("replicaSpecs", "is required");
  } else if (!replicas->is_object()) {
    f.Fail("replicaSpecs", "must be a map keyed Chief, PS, Worker or Evaluator");
  } else {
    for (const auto& [key, value] : replicas->items()) {
      absl::StatusOr<ReplicaType> type = ParseReplicaTypeKey(key);
      if (!type.ok()) {
        f.Fail("replicaSpecs", type.status().message());
        break;
      }
      f.Merge(DecodeReplicaSpec(value, absl::StrCat("spec.replicaSpecs.", key),
                                &spec->replica_specs[*type]));
    }
  }
  if (const json* run = f.Find("runPolicy")) f.Merge(DecodeRunPolicy(*run, &spec->run_policy));
  f.ReadEnum("successPolicy", kSuccessPolicies, &spec->success_policy);
  f.ReadString("managedBy", &spec->managed_by);
  if (const json* tc = f.Find("tfConfig")) {
    Fields t(*tc, "spec.tfConfig");
    t.ReadBool("evaluatorInCluster", &spec->tf_config.evaluator_in_cluster);
    t.ReadBool("sparseWorkers", &spec->tf_config.sparse_workers);
    f.Merge(t.status());
  }
  if (const json* np = f.Find("networkPolicy")) {
    Fields n(*np, "spec.networkPolicy");
    if (n.Find("enabled") != nullptr) {
      bool enabled = true;
      n.ReadBool("enabled", &enabled);
      spec->network_policy.enabled = enabled;
    }
    n.ReadEnum("jobPorts", kJobPorts, &spec->network_policy.job_ports);
    if (const json* from = n.Find("metricsFrom")) {
      if (!from->is_array()) {
        n.Fail("metricsFrom", "must be a list of NetworkPolicy peers");
      } else {
        for (size_t i = 0; i < from->size(); ++i) {
          const json& peer = (*from)[i];
          if (!peer.is_object() || peer.empty()) {
            n.Fail(absl::StrCat("metricsFrom[", i, "]"),
                   "must be a NetworkPolicy peer: podSelector, namespaceSelector or ipBlock");
            break;
          }
          spec->network_policy.metrics_from.push_back(peer);
        }
      }
    }
    f.Merge(n.status());
  }
  if (const json* ep = f.Find("elasticPolicy")) {
    Fields e(*ep, "spec.elasticPolicy");
    ElasticPolicy policy;
    e.ReadInt("minReplicas", &policy.min_replicas);
    e.ReadInt("maxReplicas", &policy.max_replicas);
    f.Merge(e.status());
    spec->elastic_policy = policy;
  }
  if (const json* tls = f.Find("tls")) {
    Fields t(*tls, "spec.tls");
    t.ReadBool("enabled", &spec->tls.enabled);
    f.Merge(t.status());
  }
  return f.status();
}

}  // namespace

std::string FormatKubeTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

absl::StatusOr<absl::Time> ParseKubeTime(absl::string_view text) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(text), &t, &err)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\" is not an RFC 3339 time"));
  }
  return t;
}

absl::StatusOr<DistributedTraining> DecodeJob(const json& object) {
  if (!object.is_object())
    return absl::InvalidArgumentError("a DistributedTraining must be an object");
  Fields top(object, "");
  std::string api_version, kind;
  top.ReadString("apiVersion", &api_version);
  top.ReadString("kind", &kind);
  if (!top.status().ok()) return top.status();
  if (kind != kKind || api_version != kApiVersion) {
    return absl::InvalidArgumentError(absl::StrCat("want apiVersion ", kApiVersion, " kind ", kKind,
                                                   ", got apiVersion \"", api_version, "\" kind \"",
                                                   kind, "\""));
  }
  DistributedTraining job;
  if (const json* meta = top.Find("metadata")) {
    if (absl::Status s = DecodeMetadata(*meta, &job.metadata); !s.ok()) return s;
  }
  const json* spec = top.Find("spec");
  if (absl::Status s = DecodeSpec(spec ? *spec : json(), &job.spec); !s.ok()) return s;
  if (const json* status = top.Find("status")) {
    absl::StatusOr<JobStatus> st = DecodeStatus(*status);
    if (!st.ok()) return st.status();
    job.status = *std::move(st);
  }
  return job;
}

json EncodeResult(const JobResult& r) {
  json out = json::object();
  auto put = [&out](const char* key, const auto& v) {
    if (v) out[key] = *v;
  };
  put("globalStep", r.global_step);
  put("loss", r.loss);
  put("trainAccuracy", r.train_accuracy);
  put("trainSeconds", r.train_seconds);
  put("accuracy", r.accuracy);
  put("evalLoss", r.eval_loss);
  put("evaluatedStep", r.evaluated_step);
  put("trainAuc", r.train_auc);
  put("auc", r.auc);
  put("logLoss", r.log_loss);
  // Derived from the figures, so it is written with them, and never read back: a display that
  // the API server pruned (an older CRD) can then not make every pass write the status again.
  json display = json::object();
  if (r.loss) display["loss"] = FormatFigure(*r.loss);
  if (r.accuracy) display["accuracy"] = FormatFigure(*r.accuracy);
  if (r.auc) display["auc"] = FormatFigure(*r.auc);
  if (!display.empty()) out["display"] = std::move(display);
  return out;
}

absl::StatusOr<JobResult> DecodeResult(const json& j) {
  Fields f(j, "status.result");
  JobResult r;
  f.ReadInt("globalStep", &r.global_step);
  f.ReadDouble("loss", &r.loss);
  f.ReadDouble("trainAccuracy", &r.train_accuracy);
  f.ReadDouble("trainSeconds", &r.train_seconds);
  f.ReadDouble("accuracy", &r.accuracy);
  f.ReadDouble("evalLoss", &r.eval_loss);
  f.ReadInt("evaluatedStep", &r.evaluated_step);
  f.ReadDouble("trainAuc", &r.train_auc);
  f.ReadDouble("auc", &r.auc);
  f.ReadDouble("logLoss", &r.log_loss);
  if (!f.status().ok()) return f.status();
  return r;
}

json EncodeProgress(const JobProgress& p) {
  json out = {{"globalStep", p.global_step}, {"observeTime", FormatKubeTime(p.observe_time)}};
  if (p.target_steps) out["targetSteps"] = *p.target_steps;
  if (std::optional<int> percent = p.Percent()) out["percent"] = *percent;
  if (p.steps_per_second) out["stepsPerSecond"] = *p.steps_per_second;
  if (p.examples_per_second) out["examplesPerSecond"] = *p.examples_per_second;
  json display = {{"progress", FormatProgress(p)}};
  if (p.estimated_completion_time) {
    out["estimatedCompletionTime"] = FormatKubeTime(*p.estimated_completion_time);
    // As of the reading: `kubectl dtr status` counts from now.
    display["remaining"] = FormatRemaining(*p.estimated_completion_time - p.observe_time);
  }
  // Like the result's display: derived, written with the figures, never read back.
  out["display"] = std::move(display);
  return out;
}

absl::StatusOr<JobProgress> DecodeProgress(const json& j) {
  Fields f(j, "status.progress");
  JobProgress p;
  std::optional<absl::Time> observed;
  f.ReadInt("globalStep", &p.global_step);
  f.ReadInt("targetSteps", &p.target_steps);
  f.ReadDouble("stepsPerSecond", &p.steps_per_second);
  f.ReadDouble("examplesPerSecond", &p.examples_per_second);
  f.ReadTime("estimatedCompletionTime", &p.estimated_completion_time);
  f.ReadTime("observeTime", &observed);
  if (!f.status().ok()) return f.status();
  if (observed) p.observe_time = *observed;
  return p;
}

json EncodeStatus(const JobStatus& status) {
  json out = json::object();
  json conditions = json::array();
  for (const Condition& c : status.conditions) conditions.push_back(internal::EncodeCondition(c));
  out["conditions"] = std::move(conditions);
  if (!status.state.empty()) out["state"] = status.state;
  json replicas = json::object();
  for (const auto& [type, rs] : status.replica_statuses) {
    json r = {{"active", rs.active},
              {"succeeded", rs.succeeded},
              {"failed", rs.failed},
              {"restarts", rs.restarts}};
    if (!rs.progress.empty()) r["progress"] = rs.progress;
    if (!rs.succeeded_indexes.empty()) r["succeededIndexes"] = rs.succeeded_indexes;
    if (rs.past_restarts != 0) r["pastRestarts"] = rs.past_restarts;
    if (!rs.set_aside.empty()) {
      json list = json::array();
      for (const SetAsideReplica& a : rs.set_aside) {
        list.push_back({{"index", a.index},
                        {"podUID", a.pod_uid},
                        {"times", a.times},
                        {"restarts", a.restarts},
                        {"retryTime", FormatKubeTime(a.retry_time)},
                        {"message", a.message}});
      }
      r["setAside"] = std::move(list);
    }
    if (!rs.resized.empty()) {
      json list = json::array();
      for (const ResizedReplica& e : rs.resized) {
        list.push_back({{"index", e.index},
                        {"memory", e.memory},
                        {"oomKills", e.oom_kills},
                        {"podUID", e.pod_uid}});
      }
      r["resized"] = std::move(list);
    }
    replicas[std::string(ReplicaTypeKey(type))] = std::move(r);
  }
  out["replicaStatuses"] = std::move(replicas);
  if (status.start_time) out["startTime"] = FormatKubeTime(*status.start_time);
  if (status.completion_time) out["completionTime"] = FormatKubeTime(*status.completion_time);
  out["observedGeneration"] = status.observed_generation;
  out["restartingPods"] = status.restarting_pods;  // always sent: a merge patch must clear it
  if (status.result) out["result"] = EncodeResult(*status.result);
  if (status.progress) out["progress"] = EncodeProgress(*status.progress);
  if (!status.worker_selector.empty()) out["workerSelector"] = status.worker_selector;
  return out;
}

absl::StatusOr<JobStatus> DecodeStatus(const json& j) {
  JobStatus status;
  Fields f(j, "status");
  if (const json* conds = f.Find("conditions")) {
    if (absl::Status c = internal::DecodeConditions(*conds, &status); !c.ok()) return c;
  }
  f.ReadString("state", &status.state);
  if (const json* rs = f.Find("replicaStatuses")) {
    if (!rs->is_object()) return FieldError("status.replicaStatuses", "must be a map");
    for (const auto& [key, value] : rs->items()) {
      absl::StatusOr<ReplicaType> type = ParseReplicaTypeKey(key);
      if (!type.ok()) return FieldError("status.replicaStatuses", type.status().message());
      Fields r(value, absl::StrCat("status.replicaStatuses.", key));
      ReplicaStatus& out = status.replica_statuses[*type];
      r.ReadInt("active", &out.active);
      r.ReadInt("succeeded", &out.succeeded);
      r.ReadInt("failed", &out.failed);
      r.ReadInt("restarts", &out.restarts);
      r.ReadString("progress", &out.progress);
      r.ReadInt("pastRestarts", &out.past_restarts);
      if (const json* idx = r.Find("succeededIndexes")) {
        if (!idx->is_array()) {
          r.Fail("succeededIndexes", "must be a list of integers");
        } else {
          for (const json& i : *idx) {
            if (!i.is_number_integer()) {
              r.Fail("succeededIndexes", "must be a list of integers");
              break;
            }
            out.succeeded_indexes.push_back(i.get<int>());
          }
        }
      }
      if (const json* list = r.Find("setAside")) {
        if (!list->is_array()) {
          r.Fail("setAside", "must be a list");
        } else {
          for (size_t i = 0; i < list->size(); ++i) {
            Fields a((*list)[i],
                     absl::StrCat("status.replicaStatuses.", key, ".setAside[", i, "]"));
            SetAsideReplica entry;
            std::optional<absl::Time> retry;
            a.ReadInt("index", &entry.index);
            a.ReadString("podUID", &entry.pod_uid);
            a.ReadInt("times", &entry.times);
            a.ReadInt("restarts", &entry.restarts);
            a.ReadTime("retryTime", &retry);
            a.ReadString("message", &entry.message);
            if (retry) entry.retry_time = *retry;
            r.Merge(a.status());
            out.set_aside.push_back(std::move(entry));
          }
        }
      }
      if (const json* list = r.Find("resized")) {
        if (!list->is_array()) {
          r.Fail("resized", "must be a list");
        } else {
          for (size_t i = 0; i < list->size(); ++i) {
            Fields e((*list)[i], absl::StrCat("status.replicaStatuses.", key, ".resized[", i, "]"));
            ResizedReplica entry;
            e.ReadInt("index", &entry.index);
            e.ReadString("memory", &entry.memory);
            e.ReadInt("oomKills", &entry.oom_kills);
            e.ReadString("podUID", &entry.pod_uid);
            r.Merge(e.status());
            out.resized.push_back(std::move(entry));
          }
        }
      }
      f.Merge(r.status());
    }
  }
  f.ReadTime("startTime", &status.start_time);
  f.ReadTime("completionTime", &status.completion_time);
  f.ReadInt("observedGeneration", &status.observed_generation);
  f.ReadString("workerSelector", &status.worker_selector);
  if (const json* uids = f.Find("restartingPods")) {
    bool ok = uids->is_array();
    for (size_t i = 0; ok && i < uids->size(); ++i) ok = (*uids)[i].is_string();
    if (!ok) return FieldError("status.restartingPods", "must be a list of strings");
    for (const json& uid : *uids) status.restarting_pods.push_back(uid.get<std::string>());
  }
  if (const json* r = f.Find("result")) {
    absl::StatusOr<JobResult> result = DecodeResult(*r);
    if (!result.ok()) return result.status();
    status.result = *std::move(result);
  }
  if (const json* p = f.Find("progress")) {
    absl::StatusOr<JobProgress> progress = DecodeProgress(*p);
    if (!progress.ok()) return progress.status();
    status.progress = *std::move(progress);
  }
  if (!f.status().ok()) return f.status();
  return status;
}

}  // namespace disttrain::api
