// The replica's per-step work (internal/replica.h): its batches and their gradients on the CPU
// or the GPUs.
#include "common/log.h"
#include "trainer/kernels/axpy.h"
#include "trainer/kernels/parallel_for.h"
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

}  // namespace disttrain::trainer::internal
