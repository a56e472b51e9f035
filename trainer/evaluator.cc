// The evaluator role (see roles.h): reads checkpoints from --model-dir, never the parameter
// servers, so it cannot slow training down.
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/flags.h"
#include "common/log.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/events.h"
#include "trainer/roles.h"
#include "trainer/setup.h"

namespace disttrain::trainer {

int RunEvaluator(const ClusterSpec& spec, const TrainerOptions& o, const std::atomic<bool>& stop) {
  absl::StatusOr<Setup> setup = BuildSetup(o, "test");
  if (!setup.ok()) {
    LogError("cannot set up evaluation", {{"error", setup.status().ToString()}});
    return kExitUsage;
  }
  const int n = setup->model->needs_data()
                    ? std::min<int>(setup->data.n, static_cast<int>(o.eval_examples))
                    : 0;
  int64_t last = -1;
  bool foreign = false;                   // the newest checkpoint belongs to another model
  auto evaluate_newest = [&]() -> bool {  // true once the final checkpoint was evaluated
    absl::StatusOr<Checkpoint> c = LatestCheckpoint(o.model_dir);
    if (!c.ok() || c->global_step <= last) return last >= o.steps;
    if (!SameVariables(c->variables, setup->model->Variables())) {
      LogError(absl::StrCat(c->path, " holds another model's variables"));
      foreign = true;
      return true;
    }
    EvalResult r = setup->model->Evaluate(c->values, n > 0 ? setup->data.Rows(0, n) : Batch{});
    last = c->global_step;
    EmitEvent({{"event", "eval"},
               {"task", spec.TaskName()},
               {"global_step", c->global_step},
               {"accuracy", r.accuracy},
               {"loss", r.loss},
               {"examples", n}});
    LogInfo("evaluated a checkpoint", {{"global_step", absl::StrCat(c->global_step)},
                                       {"accuracy", absl::StrCat(r.accuracy)},
                                       {"loss", absl::StrCat(r.loss)}});
    return last >= o.steps;
  };
  while (!stop) {
    if (evaluate_newest()) return foreign ? kExitUsage : kExitOk;
    absl::SleepFor(absl::Milliseconds(300));
  }
  evaluate_newest();  // asked to stop: evaluate what the chief wrote last before exiting
  return foreign ? kExitUsage : kExitOk;
}

}  // namespace disttrain::trainer
