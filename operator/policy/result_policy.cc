#include "operator/policy/result_policy.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "operator/api/codec.h"

namespace disttrain::policy {
namespace {

std::optional<api::JobResult> Parse(const std::string& message) {
  nlohmann::json j = nlohmann::json::parse(message, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  absl::StatusOr<api::JobResult> r = api::DecodeResult(j);
  if (!r.ok() || *r == api::JobResult{}) return std::nullopt;
  return *r;
}

bool IsChief(const PodState& pod, bool has_chief) {
  return has_chief ? pod.type == api::ReplicaType::kChief
                   : pod.type == api::ReplicaType::kWorker && pod.index == 0;
}

}  // namespace

std::optional<api::JobResult> UpdateResult(const std::vector<PodState>& pods, bool has_chief,
                                           std::optional<api::JobResult> previous) {
  for (const PodState& pod : pods) {
    if (pod.termination_message.empty()) continue;
    if (IsChief(pod, has_chief) && pod.phase == PodPhase::kSucceeded) {
      std::optional<api::JobResult> r = Parse(pod.termination_message);
      if (!r) continue;
      api::JobResult& out = previous ? *previous : previous.emplace();
      out.global_step = r->global_step;
      out.loss = r->loss;
      out.train_accuracy = r->train_accuracy;
      out.train_auc = r->train_auc;
      out.train_seconds = r->train_seconds;
    } else if (pod.type == api::ReplicaType::kEvaluator) {
      // The evaluator writes the test accuracy (a click-through model: the AUC and log loss)
      // and loss of the checkpoint at its globalStep.
      std::optional<api::JobResult> r = Parse(pod.termination_message);
      if (!r || (!r->accuracy && !r->auc)) continue;
      api::JobResult& out = previous ? *previous : previous.emplace();
      out.accuracy = r->accuracy;
      out.auc = r->auc;
      out.log_loss = r->log_loss;
      out.eval_loss = r->loss;
      out.evaluated_step = r->global_step;
    }
  }
  return previous;
}

std::string DescribeResult(const api::JobResult& r) {
  std::vector<std::string> parts;
  if (r.global_step) parts.push_back(absl::StrCat("global step ", *r.global_step));
  if (r.loss) parts.push_back(absl::StrFormat("loss %.4f", *r.loss));
  if (r.train_accuracy) parts.push_back(absl::StrFormat("train accuracy %.4f", *r.train_accuracy));
  if (r.train_auc) parts.push_back(absl::StrFormat("train AUC %.4f", *r.train_auc));
  if (r.accuracy) {
    parts.push_back(absl::StrFormat("test accuracy %.4f", *r.accuracy));
    if (r.evaluated_step) parts.back() += absl::StrCat(" at step ", *r.evaluated_step);
  }
  if (r.auc) {
    parts.push_back(absl::StrFormat("test AUC %.4f", *r.auc));
    if (r.log_loss) parts.back() += absl::StrFormat(" (log loss %.4f)", *r.log_loss);
    if (r.evaluated_step) parts.back() += absl::StrCat(" at step ", *r.evaluated_step);
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace disttrain::policy
