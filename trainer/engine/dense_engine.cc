#include "trainer/engine/dense_engine.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "trainer/kernels/parallel_for.h"
#include "trainer/worker/schemes/worker_scheme.h"

namespace disttrain::trainer {

DenseEngine::DenseEngine(Setup setup, const TrainerOptions& o, int rank, int replicas,
                         bool evaluate)
    : setup_(std::move(setup)),
      towers_(evaluate ? 1 : static_cast<int>(std::max<int64_t>(1, o.local_replicas))),
      batch_size_(static_cast<int>(o.batch_size)) {
  if (!setup_.model->needs_data()) return;
  if (evaluate) {
    eval_data_ = &setup_.data;
    eval_n_ = std::min<int>(setup_.data.n, static_cast<int>(o.eval_examples));
    return;
  }
  shard_ = ShardOf(setup_.data, rank, replicas);
  eval_data_ = &shard_;
  eval_n_ = std::min(shard_.n, 2000);
  // One iterator per tower, over its own part of the replica's shard: an iterator's batch lives
  // in its own buffer until its next batch.
  if (towers_ > 1) {
    for (int t = 0; t < towers_; ++t) tower_shards_.push_back(ShardOf(shard_, t, towers_));
  }
  for (int t = 0; t < towers_; ++t) {
    batches_.push_back(std::make_unique<BatchIterator>(
        towers_ > 1 ? &tower_shards_[t] : &shard_, batch_size_,
        static_cast<uint64_t>(o.seed) * 7919 + rank + 104729ull * t));
  }
  staged_.assign(towers_, false);
  unstaged_x_.resize(towers_);
  unstaged_y_.resize(towers_);
}

absl::Status DenseEngine::UseCuda(int devices, const std::string& task) {
  const std::vector<VariableSpec> v = setup_.model->Variables();
  if (v.size() < 4) return absl::InvalidArgumentError("the CUDA kernels need --model mlp");
  // Kernel and bias per layer: a layer's width is its bias's size.
  kernels::MlpShape shape;
  shape.in = static_cast<int>(v[0].size / v[1].size);
  for (size_t l = 0; l + 1 < v.size() / 2; ++l)
    shape.hidden.push_back(static_cast<int>(v[2 * l + 1].size));
  shape.out = static_cast<int>(v.back().size);
  for (int t = 0; t < towers_; ++t) {
    absl::StatusOr<std::unique_ptr<kernels::CudaMlp>> mlp =
        kernels::CudaMlp::Create(t % devices, shape, batch_size_);
    if (!mlp.ok())
      return absl::Status(mlp.status().code(), absl::StrCat("tower ", t, " on GPU ", t % devices,
                                                            ": ", mlp.status().message()));
    cuda_.push_back(*std::move(mlp));
  }
  task_ = task;
  LogInfo("computing gradients on CUDA devices",
          {{"task", task}, {"devices", absl::StrCat(devices)}, {"towers", absl::StrCat(towers_)}});
  return absl::OkStatus();
}

Batch DenseEngine::Fetch(int tower) {
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

float DenseEngine::TowerGradient(int tower, const Params& at, const Batch& batch, Params* grads) {
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
               {{"task", task_}, {"error", loss.status().ToString()}});
    }
  }
  return setup_.model->LossAndGradient(at, batch, grads);
}

float DenseEngine::Gradient(const Params& at, Params* grads) {
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

EvalResult DenseEngine::Evaluate(const Params& params) {
  EvalResult r = setup_.model->Evaluate(
      params, eval_data_ != nullptr && eval_n_ > 0 ? eval_data_->Rows(0, eval_n_) : Batch{});
  r.examples = eval_n_;
  return r;
}

}  // namespace disttrain::trainer
