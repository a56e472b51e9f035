// The recommendation models' engine (gradient_engine.h): lr, fm, deepfm and widedeep over the
// schema file's columns (trainer/data/schema.h). A step reads the replica's next batch, gets the
// rows of its distinct ids from the parameter servers while sending the previous batch's row
// gradients (one SparsePushPull per server, sparse_client.h), then computes the loss and the
// gradients of the dense variables (returned, for the dense path and the job's scheme) and of
// the rows (sent with the next step). Embedding rows are thus updated asynchronously, each under
// its own row lock on its server, whatever the dense scheme; the rows a batch reads are at most
// one push of this replica stale. The chief also declares the tables, checkpoints them (full
// every --full-checkpoint-every checkpoints, deltas between) and restores them.
#ifndef DISTTRAIN_TRAINER_ENGINE_SPARSE_ENGINE_H_
#define DISTTRAIN_TRAINER_ENGINE_SPARSE_ENGINE_H_

#include <memory>
#include <string>
#include <vector>

#include "trainer/data/example_source.h"
#include "trainer/data/schema.h"
#include "trainer/engine/gradient_engine.h"
#include "trainer/models/ctr_model.h"
#include "trainer/models/sparse_batch.h"
#include "trainer/worker/sparse_client.h"

namespace disttrain::trainer {

// Whether --model names a recommendation model (lr, fm, deepfm, widedeep).
bool IsSparseModel(const std::string& model);

class SparseEngine : public GradientEngine {
 public:
  // A replica's engine (its share of the training split) or the evaluator's (the first
  // --eval-examples of the test split).
  static absl::StatusOr<std::unique_ptr<SparseEngine>> Make(const TrainerOptions& options,
                                                            const ClusterSpec& spec, bool evaluate);

  std::vector<VariableSpec> Variables() const override { return model_->Variables(); }
  Params Initialize(uint64_t seed) const override { return model_->Initialize(seed); }
  float Gradient(const Params& at, Params* grads) override;
  absl::Status TakeError() override;
  void Reset() override { pending_.clear(); }
  absl::Status Flush() override;
  absl::Status PrepareServers(const std::string& model_dir,
                              std::optional<int64_t> restore_step) override;
  absl::Status SaveCheckpoint(const std::string& model_dir, int64_t step, int keep) override;
  std::vector<std::string> ServerTableNames() const override;
  absl::Status PrepareServersFromCopy(ReadRows read) override;
  EvalResult Evaluate(const Params& params) override;

  // The tables the servers hold for this model: each field table (unless the model has no
  // embeddings) and its wide table.
  std::vector<embedding::TableConfig> ServerTables() const;
  uint64_t skipped_records() const { return source_ ? source_->skipped() : 0; }

 private:
  SparseEngine(Schema schema, std::unique_ptr<CtrModel> model, const TrainerOptions& options,
               const ClusterSpec& spec, bool evaluate);
  // Declares the tables afresh on every server and imports the rows `read` passes.
  absl::Status ImportRows(ReadRows read, uint64_t* rows);
  // The rows of `batch` (train: a training lookup that also sends the pending gradients).
  absl::Status PullRows(const SparseBatch& batch, bool train, BatchRows* rows);

  const Schema schema_;
  std::unique_ptr<CtrModel> model_;
  const int batch_size_;
  const int full_every_;
  SparseClient client_;
  std::unique_ptr<ExampleSource> source_;
  std::vector<Example> eval_examples_;  // what Evaluate() reads
  BatchBuilder builder_;
  std::vector<Example> examples_;
  SparseBatch batch_;
  BatchRows rows_, row_grads_;
  std::vector<TableRows> pending_;  // the last batch's row gradients, sent with the next pull
  absl::Status error_;
  // Table checkpoints: the step of the last one and how many deltas followed the last full one.
  int64_t last_table_step_ = -1;
  int deltas_ = 0;
  bool restored_ = false;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_ENGINE_SPARSE_ENGINE_H_
