// The worker half of a training scheme (trainer/schemes/scheme.h): what a training replica does
// between two exchanges with the parameter servers. A round starts from the variables just
// pulled, runs the scheme's local steps (each on a fresh batch) and leaves what the replica
// pushes next in `commit`; the server half (trainer/ps/update_rule.h) applies it. One file per
// scheme; MakeWorkerScheme picks one. Thread-compatible: one replica's loop owns it.
#ifndef DISTTRAIN_TRAINER_WORKER_SCHEMES_WORKER_SCHEME_H_
#define DISTTRAIN_TRAINER_WORKER_SCHEMES_WORKER_SCHEME_H_

#include <functional>
#include <memory>

#include "absl/functional/function_ref.h"
#include "trainer/models/model.h"
#include "trainer/schemes/scheme.h"

namespace disttrain::trainer {

class WorkerScheme {
 public:
  // The loss and gradient of the next batch at `at` (`grads` shaped like `at`).
  using GradientFn = std::function<float(const Params& at, Params* grads)>;

  virtual ~WorkerScheme() = default;
  // Returns the mean loss of the round's local steps.
  virtual float Round(const Params& pulled, const GradientFn& gradient, Params* commit) = 0;
  // Batches (gradient evaluations) per round.
  virtual int local_steps() const = 0;
  // Drops the replica's own state (local variables, accumulators): the servers were restored
  // from a checkpoint.
  virtual void Reset() {}
  // The training replicas the servers count live now (workers scaled in or out).
  virtual void SetLiveReplicas(int live) {}
};

// `replica_rank`: this replica's rank (chief first), for per-worker learning rates.
std::unique_ptr<WorkerScheme> MakeWorkerScheme(const SchemeConfig& config, int replica_rank);

// One gradient per round, pushed as scale * g (hogwild, sync, dynsgd).
std::unique_ptr<WorkerScheme> MakeGradientScheme(float scale);
// λ local steps, local Adagrad (downpour) or SGD (downpour-sgd); pushes the summed gradients.
std::unique_ptr<WorkerScheme> MakeDownpourScheme(const SchemeConfig& config, bool adagrad);
// λ local SGD steps; pushes the summed gradients divided by λ (agn, sagn).
std::unique_ptr<WorkerScheme> MakeAgnScheme(const SchemeConfig& config);
// τ local steps (SGD, or Nesterov momentum when config.momentum > 0) on the replica's own
// variables; pushes the elastic difference alpha * (x - pulled) and moves x by the opposite.
std::unique_ptr<WorkerScheme> MakeEasgdScheme(const SchemeConfig& config);

// y += a * x for every variable.
void AddScaled(Params* y, float a, const Params& x);

// The window of local steps of downpour and agn: `lambda` times, the gradient at `*local` goes
// into `*g` and is summed into `*sum` (the first one replaces it), then `step(g, last)` moves
// `*local` (`last`: the window's final step, whose variables the next pull replaces). `*local`
// starts as the caller left it. Returns the mean loss of the window.
float SumLocalGradients(int lambda, const WorkerScheme::GradientFn& gradient, Params* local,
                        Params* g, Params* sum,
                        absl::FunctionRef<void(const Params& g, bool last)> step);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WORKER_SCHEMES_WORKER_SCHEME_H_
