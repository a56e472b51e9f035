// The replica's per-step work (internal/replica.h): its batches, their gradients on the CPU or
// the GPUs, and the metrics and summaries of each step.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "trainer/events.h"
#include "trainer/kernels/axpy.h"
#include "trainer/kernels/parallel_for.h"
#include "trainer/metrics/trainer_metrics.h"
#include "trainer/worker/internal/replica.h"

namespace disttrain::trainer::internal {

Batch Replica::Fetch(int tower) {
  BatchIterator& it = *batches_[tower];
  if (cuda_.empty() || cuda_failed_) return it.Next();
  Batch batch;
  bool filled = false;
  // A failed stage is not fatal: the tower's call copies the batch itself and reports.
  staged_[tower] = cuda_[tower]
                       ->StageBatchFilledBy(it.batch_size(),
                                            [&](float* x, int32_t* y) {
                                              batch = it.NextInto(x, y);
                                              filled = true;
                                            })
                       .ok();
  if (!filled) return it.Next();
  if (staged_[tower]) return batch;  // the staging buffer holds the rows until it is used
  // Gathered, but the upload failed: keep the rows where the context cannot reuse them.
  std::vector<float>& x = unstaged_x_[tower];
  std::vector<int32_t>& y = unstaged_y_[tower];
  x.assign(batch.x, batch.x + static_cast<size_t>(batch.n) * batch.dim);
  y.assign(batch.y, batch.y + batch.n);
  return {x.data(), y.data(), batch.n, batch.dim};
}

float Replica::TowerGradient(int tower, const Params& at, const Batch& batch, Params* grads) {
  if (!cuda_.empty() && !cuda_failed_) {
    if (grads->size() != at.size()) *grads = ZerosLike(at);
    std::vector<const float*> p;
    std::vector<float*> g;
    for (size_t v = 0; v < at.size(); ++v) {
      p.push_back(at[v].data());
      g.push_back((*grads)[v].data());
    }
    absl::StatusOr<float> loss =
        !staged_.empty() && staged_[tower]
            ? cuda_[tower]->LossAndGradientOfStaged(p, g)
            : cuda_[tower]->LossAndGradient(p, batch.x, batch.y, batch.n, g);
    if (!staged_.empty()) staged_[tower] = false;
    if (loss.ok()) return *loss;
    if (!cuda_failed_.exchange(true)) {
      LogError("CUDA gradient failed; computing on the CPU from now on",
               {{"task", spec_.TaskName()}, {"error", loss.status().ToString()}});
    }
  }
  return setup_.model->LossAndGradient(at, batch, grads);
}

float Replica::Gradient(const Params& at, Params* grads) {
  std::vector<Batch> batches(towers_);
  for (int t = 0; t < towers_ && !batches_.empty(); ++t) batches[t] = Fetch(t);
  if (towers_ == 1) return TowerGradient(0, at, batches[0], grads);
  tower_grads_.resize(towers_);
  std::vector<float> losses(towers_);
  kernels::ParallelFor(towers_, [&](size_t t) {
    losses[t] = TowerGradient(static_cast<int>(t), at, batches[t], &tower_grads_[t]);
  });
  *grads = tower_grads_[0];
  for (int t = 1; t < towers_; ++t) AddScaled(grads, 1.0f, tower_grads_[t]);
  const float inv = 1.0f / static_cast<float>(towers_);
  for (std::vector<float>& v : *grads) {
    for (float& x : v) x *= inv;
  }
  double loss = 0;
  for (float l : losses) loss += l;
  return static_cast<float>(loss / towers_);
}

void Replica::Record(int64_t step, float loss) {
  TrainerMetrics& m = Metrics();
  const int64_t batches = static_cast<int64_t>(scheme_->local_steps()) * towers_;
  m.global_step->Set({}, static_cast<double>(step));
  m.loss->Set({}, loss);
  m.local_steps->Add({}, static_cast<double>(batches));
  local_steps_ += batches;
  const absl::Time now = absl::Now();
  if (rate_since_ == absl::InfiniteFuture()) {
    rate_since_ = summary_since_ = now;
    rate_local_steps_ = local_steps_;
    summary_step_ = step;
  }
  if (const double seconds = absl::ToDoubleSeconds(now - rate_since_);
      seconds >= 1 || (!rate_window_closed_ && seconds > 0)) {
    m.examples_per_second->Set(
        {}, static_cast<double>((local_steps_ - rate_local_steps_) * o_.batch_size) / seconds);
    if (seconds >= 1) {
      rate_since_ = now;
      rate_local_steps_ = local_steps_;
      rate_window_closed_ = true;
    }
  }
  const int64_t batches_per_commit = batches;
  if (o_.log_every <= 0 || step % o_.log_every != 0) return;
  EmitEvent({{"event", "step"}, {"task", spec_.TaskName()}, {"global_step", step}, {"loss", loss}});
  if (summaries_ == nullptr) return;
  std::vector<std::pair<std::string, float>> scalars = {{"loss", loss}};
  if (const double seconds = absl::ToDoubleSeconds(now - summary_since_);
      seconds > 0 && step > summary_step_) {
    // A global step is one replica's commit (its local steps times its towers' batches), or in
    // synchronous schemes the aggregate of one commit per live replica (at most
    // replicas-to-aggregate): the count the servers reply, TF_CONFIG's before the first reply.
    const double steps_per_second = static_cast<double>(step - summary_step_) / seconds;
    const int live = live_replicas_ > 0 ? live_replicas_ : spec_.num_replicas();
    const int64_t batches =
        batches_per_commit *
        (!sync_ ? 1
                : (o_.replicas_to_aggregate > 0 ? std::min<int64_t>(o_.replicas_to_aggregate, live)
                                                : live));
    scalars.emplace_back("global_step/sec", static_cast<float>(steps_per_second));
    scalars.emplace_back("examples/sec",
                         static_cast<float>(steps_per_second * batches * o_.batch_size));
  }
  summary_since_ = now;
  summary_step_ = step;
  if (absl::Status s = summaries_->WriteScalars(step, scalars); !s.ok()) {
    LogWarning("stopped writing summaries", {{"error", s.ToString()}});
    summaries_.reset();
  }
}

}  // namespace disttrain::trainer::internal
