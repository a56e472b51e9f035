#include "operator/controller/result_policy.h"

#include "nlohmann/json.hpp"
#include "operator/api/codec.h"

namespace disttrain::controller {
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
      out.train_seconds = r->train_seconds;
    } else if (pod.type == api::ReplicaType::kEvaluator) {
      // The evaluator writes the test accuracy and loss of the checkpoint at its globalStep.
      std::optional<api::JobResult> r = Parse(pod.termination_message);
      if (!r || !r->accuracy) continue;
      api::JobResult& out = previous ? *previous : previous.emplace();
      out.accuracy = r->accuracy;
      out.eval_loss = r->loss;
      out.evaluated_step = r->global_step;
    }
  }
  return previous;
}

}  // namespace disttrain::controller
