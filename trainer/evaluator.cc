// The evaluator role (see roles.h): evaluates each checkpoint the chief makes, fetched from ps 0
// over gRPC (--eval-source ps: the chief publishes every checkpoint there, so no volume is
// shared) or read from --model-dir. It never pulls the training variables, so it cannot slow
// training down.
#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/flags.h"
#include "common/log.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/snapshot.h"
#include "trainer/engine/engine_factory.h"
#include "trainer/engine/sparse_engine.h"
#include "trainer/events.h"
#include "trainer/metrics/trainer_metrics.h"
#include "trainer/roles.h"
#include "trainer/summary/event_writer.h"
#include "trainer/termination_message.h"
#include "trainer/wire/wire.h"
#include "trainer/worker/ps_client.h"

namespace disttrain::trainer {

int RunEvaluator(const ClusterSpec& spec, const TrainerOptions& o, const std::atomic<bool>& stop) {
  absl::StatusOr<std::unique_ptr<GradientEngine>> engine =
      MakeGradientEngine(o, spec, /*evaluate=*/true);
  if (!engine.ok()) {
    LogError("cannot set up evaluation", {{"error", engine.status().ToString()}});
    return kExitUsage;
  }
  const std::vector<VariableSpec> variables = (*engine)->Variables();
  std::unique_ptr<EventWriter> summaries;
  if (absl::StatusOr<std::unique_ptr<EventWriter>> w = EventWriter::Open(SummaryDir(o, "eval"));
      w.ok()) {
    summaries = *std::move(w);
  } else {
    LogWarning("cannot write TensorBoard summaries", {{"error", w.status().ToString()}});
  }
  nlohmann::json result;  // of the newest checkpoint evaluated
  int64_t last = -1;
  bool foreign = false;  // the newest checkpoint belongs to another model
  std::unique_ptr<v1::ParameterServer::Stub> ps0;
  if (o.eval_source == "ps") {
    ps0 = v1::ParameterServer::NewStub(wire::NewChannel(spec.ps[0]));
  }
  // The newest checkpoint after `last`; `wait`: how long ps 0 may hold the call for one.
  auto next = [&](absl::Duration wait) -> absl::StatusOr<Checkpoint> {
    if (ps0 != nullptr) return FetchSnapshot(ps0.get(), last, wait);
    absl::StatusOr<Checkpoint> c = LatestCheckpoint(o.model_dir);
    if (c.ok() && c->global_step <= last) return absl::NotFoundError("no newer checkpoint");
    return c;
  };
  bool waited = false;  // the last call to `next` waited already
  auto evaluate_newest = [&](absl::Duration wait) -> bool {  // true once the final one was
    const absl::Time start = absl::Now();
    absl::StatusOr<Checkpoint> c = next(wait);
    waited = absl::Now() - start >= absl::Milliseconds(250);
    if (!c.ok()) return last >= o.steps;
    if (!SameVariables(c->variables, variables)) {
      LogError(absl::StrCat(c->path, " holds another model's variables"));
      foreign = true;
      return true;
    }
    const EvalResult r = (*engine)->Evaluate(c->values);
    if (absl::Status s = (*engine)->TakeError(); !s.ok()) {
      // The embedding rows could not be read (a server restarting): try this checkpoint again.
      LogWarning("could not evaluate a checkpoint", {{"error", s.ToString()}});
      return false;
    }
    last = c->global_step;
    // Click-through models report the AUC and the log loss; the classifiers their accuracy.
    const bool ctr = r.auc.has_value();
    const double score = ctr ? *r.auc : r.accuracy;
    const char* score_name = ctr ? "auc" : "accuracy";
    EmitEvent({{"event", "eval"},
               {"task", spec.TaskName()},
               {"global_step", c->global_step},
               {score_name, score},
               {ctr ? "log_loss" : "loss", r.loss},
               {"examples", r.examples}});
    TrainerMetrics& m = Metrics();
    (ctr ? m.eval_auc : m.eval_accuracy)->Set({}, score);
    m.eval_loss->Set({}, r.loss);
    m.eval_step->Set({}, static_cast<double>(c->global_step));
    if (summaries != nullptr) {
      absl::Status s = summaries->WriteScalars(
          c->global_step, {{score_name, static_cast<float>(score)},
                           {ctr ? "log_loss" : "loss", static_cast<float>(r.loss)}});
      if (!s.ok()) {
        LogWarning("stopped writing summaries", {{"error", s.ToString()}});
        summaries.reset();
      }
    }
    result = {{"globalStep", c->global_step}, {ctr ? "auc" : "accuracy", score}, {"loss", r.loss}};
    if (ctr) result["logLoss"] = r.loss;
    LogInfo("evaluated a checkpoint", {{"global_step", absl::StrCat(c->global_step)},
                                       {score_name, absl::StrCat(score)},
                                       {"loss", absl::StrCat(r.loss)}});
    return last >= o.steps;
  };
  auto finish = [&] {
    if (!result.is_null()) WriteTerminationMessage(o.termination_message_path, result);
    // The parameter servers hold the embedding rows for this evaluator's lookups until it says
    // it is done (or their --final-snapshot-seconds pass).
    if (IsSparseModel(o.model)) {
      PsClient done(spec.ps, {}, spec.TaskName());
      if (absl::Status s = done.LeaveAll(absl::Seconds(2)); !s.ok())
        LogWarning("could not tell the parameter servers the evaluation is done",
                   {{"error", s.ToString()}});
    }
    return foreign ? kExitUsage : kExitOk;
  };
  while (!stop) {
    if (evaluate_newest(absl::Seconds(1))) return finish();
    if (!waited) absl::SleepFor(absl::Milliseconds(300));
  }
  evaluate_newest(absl::ZeroDuration());  // asked to stop: evaluate the chief's last checkpoint
  return finish();
}

}  // namespace disttrain::trainer
