// The dense models' engine (gradient_engine.h): toy, softmax and mlp on Fashion-MNIST, each
// replica training on its shard of the examples, in --local-replicas towers whose gradients are
// averaged, on the CPU or (UseCuda) on the GPUs. A failed GPU is not fatal: the towers compute on
// the CPU from then on.
#ifndef DISTTRAIN_TRAINER_ENGINE_DENSE_ENGINE_H_
#define DISTTRAIN_TRAINER_ENGINE_DENSE_ENGINE_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "trainer/data/dataset.h"
#include "trainer/engine/gradient_engine.h"
#include "trainer/kernels/mlp_kernels.h"
#include "trainer/setup.h"

namespace disttrain::trainer {

class DenseEngine : public GradientEngine {
 public:
  // `towers` batches per gradient; `rank` of `replicas`: the examples with index = rank mod
  // replicas are this replica's. `evaluate`: the evaluator's engine (the first `eval_examples` of
  // the test split, no batches).
  DenseEngine(Setup setup, const TrainerOptions& options, int rank, int replicas, bool evaluate);

  // Computes the MLP's gradients on `devices` GPUs: one device context per tower, tower t on
  // GPU t mod `devices`.
  absl::Status UseCuda(int devices, const std::string& task);

  std::vector<VariableSpec> Variables() const override { return setup_.model->Variables(); }
  Params Initialize(uint64_t seed) const override { return setup_.model->Initialize(seed); }
  int batches_per_gradient() const override { return towers_; }
  bool needs_data() const override { return setup_.model->needs_data(); }
  float Gradient(const Params& at, Params* grads) override;
  EvalResult Evaluate(const Params& params) override;

 private:
  // Tower t's next batch; with --device cuda it is gathered straight into the GPU's staging
  // buffer and its upload started.
  Batch Fetch(int tower);
  // One tower's batch, on its GPU with --device cuda (staged there by Fetch, or copied now).
  float TowerGradient(int tower, const Params& at, const Batch& batch, Params* grads);

  Setup setup_;
  const int towers_;
  const int batch_size_;
  Dataset shard_;
  const Dataset* eval_data_ = nullptr;  // Evaluate() reads its first eval_n_ examples
  int eval_n_ = 0;
  std::vector<Dataset> tower_shards_;                    // with --local-replicas > 1
  std::vector<std::unique_ptr<BatchIterator>> batches_;  // by tower; empty without data
  std::vector<Params> tower_grads_;
  // --device cuda: each tower's device context (empty: the CPU computes); cuda_failed_ once a
  // GPU failed, after which every tower computes on the CPU.
  std::vector<std::unique_ptr<kernels::CudaMlp>> cuda_;
  std::atomic<bool> cuda_failed_ = false;
  std::string task_;
  // By tower: its fetched batch is staged on its GPU. Not vector<bool>: the towers' threads
  // write their own elements at once.
  std::vector<char> staged_;
  // By tower: a batch gathered into the GPU's staging buffer whose upload then failed.
  std::vector<std::vector<float>> unstaged_x_;
  std::vector<std::vector<int32_t>> unstaged_y_;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_ENGINE_DENSE_ENGINE_H_
