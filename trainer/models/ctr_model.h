// The click-through (recommendation) models of --model, one class made of up to three parts
// that all end in one logit, trained with the log loss:
//   lr       logistic regression: the wide part alone
//   fm       factorization machine (Rendle, 2010): wide + pairwise interactions
//   deepfm   DeepFM (Guo et al., 2017): wide + interactions + a ReLU MLP over the embeddings
//   widedeep Wide & Deep (Cheng et al., 2016): wide + the MLP
// wide:  bias + sum of the fields' first-order weights (table "<t>/wide", width 1) + w . dense
// fm:    1/2 sum_d [(sum_f e_fd)^2 - sum_f e_fd^2] over the fields' pooled embeddings e_f and the
//        dense inputs' own embeddings scaled by their values (all of one width)
// deep:  MLP(concat(e_1..e_F, dense inputs)) -> 1
// A multi-valued field pools its ids' rows (mean or sum; none: zeros). The embedding rows live on
// the parameter servers: the model gets a batch's rows (BatchRows) and returns their gradients
// in the same shape, each distinct id's summed over the batch. Thread-compatible.
#ifndef DISTTRAIN_TRAINER_MODELS_CTR_MODEL_H_
#define DISTTRAIN_TRAINER_MODELS_CTR_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/models/dense_tower.h"
#include "trainer/models/model.h"
#include "trainer/models/sparse_batch.h"

namespace disttrain::trainer {

// A batch's rows of every table (ids x dim, in SparseBatch::table_ids order) and of their wide
// tables (ids x 1; empty when the model has no wide part).
struct BatchRows {
  std::vector<std::vector<float>> emb;
  std::vector<std::vector<float>> wide;
};

class CtrModel {
 public:
  // `name`: lr, fm, deepfm or widedeep. InvalidArgument for another name, or for fm and deepfm
  // over tables of different widths.
  static absl::StatusOr<std::unique_ptr<CtrModel>> Make(const std::string& name,
                                                        const FeatureLayout& layout,
                                                        std::vector<int> hidden);

  const std::string& name() const { return name_; }
  bool uses_embeddings() const { return fm_ || deep_; }
  bool uses_wide() const { return true; }
  const FeatureLayout& layout() const { return layout_; }

  std::vector<VariableSpec> Variables() const;
  Params Initialize(uint64_t seed) const;

  // The batch's mean log loss. `dense_grads` gets d(loss)/d(variables) shaped like `params`;
  // `row_grads` d(loss)/d(rows) shaped like `rows`.
  float LossAndGradient(const Params& params, const SparseBatch& batch, const BatchRows& rows,
                        Params* dense_grads, BatchRows* row_grads);
  // Click probabilities, one per example.
  void Predict(const Params& params, const SparseBatch& batch, const BatchRows& rows,
               std::vector<float>* probabilities);

 private:
  CtrModel(std::string name, const FeatureLayout& layout, bool fm, bool deep,
           std::vector<int> hidden);
  // Logits of the batch; keeps what the backward pass needs.
  void Forward(const Params& p, const SparseBatch& b, const BatchRows& rows);

  const std::string name_;
  const FeatureLayout layout_;
  const bool fm_, deep_;
  int k_ = 0;       // the embeddings' width (fm: all the same)
  int concat_ = 0;  // the MLP's input width
  std::unique_ptr<DenseTower> tower_;
  // Variable indices.
  int dense_wide_ = -1, dense_emb_ = -1, tower_first_ = -1;
  // The last forward pass.
  std::vector<float> logits_;
  std::vector<float> pooled_;  // n x concat_: every field's pooled embedding, then dense inputs
  std::vector<float> fm_sum_;  // n x k_: the interaction sum per dimension
};

// Mean log loss of probabilities `p` for labels `y` (0/1), clamped away from 0 and 1.
double LogLoss(const std::vector<float>& p, const std::vector<float>& y);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_MODELS_CTR_MODEL_H_
