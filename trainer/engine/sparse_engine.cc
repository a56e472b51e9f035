#include "trainer/engine/sparse_engine.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/table_checkpoint.h"
#include "trainer/metrics/auc.h"

namespace disttrain::trainer {
namespace {

// Examples of a replica kept for its final evaluation (the chief's done event).
constexpr int kTrainEvalExamples = 2000;
// Examples an evaluation computes at once.
constexpr int kEvalBatch = 4096;

}  // namespace

bool IsSparseModel(const std::string& model) {
  return model == "lr" || model == "fm" || model == "deepfm" || model == "widedeep";
}

absl::StatusOr<std::unique_ptr<SparseEngine>> SparseEngine::Make(const TrainerOptions& o,
                                                                 const ClusterSpec& spec,
                                                                 bool evaluate) {
  if (o.schema.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("--model ", o.model, " needs --schema: the data's columns and tables"));
  absl::StatusOr<Schema> schema = LoadSchema(o.schema, o.data_dir);
  if (!schema.ok()) return schema.status();
  std::vector<int> hidden;
  if (o.model == "deepfm" || o.model == "widedeep") {
    absl::StatusOr<std::vector<int>> h = ParseHiddenLayers(o.hidden);
    if (!h.ok()) return h.status();
    hidden = *std::move(h);
  }
  absl::StatusOr<std::unique_ptr<CtrModel>> model =
      CtrModel::Make(o.model, FeatureLayout::FromSchema(*schema), std::move(hidden));
  if (!model.ok()) return model.status();
  std::unique_ptr<SparseEngine> e(
      new SparseEngine(*std::move(schema), *std::move(model), o, spec, evaluate));
  SourceOptions so;
  so.test = evaluate;
  so.part = spec.replica_rank;
  so.parts = std::max(1, spec.num_replicas());
  so.seed = static_cast<uint64_t>(o.seed) * 7919 + static_cast<uint64_t>(spec.replica_rank);
  so.skip_bad_records = o.skip_bad_records;
  absl::StatusOr<std::unique_ptr<ExampleSource>> source = ExampleSource::Open(e->schema_, so);
  if (!source.ok()) return source.status();
  e->source_ = *std::move(source);
  // What Evaluate() reads: the test split's first --eval-examples, or the replica's first few.
  const int64_t keep = evaluate ? o.eval_examples : kTrainEvalExamples;
  while (static_cast<int64_t>(e->eval_examples_.size()) < keep) {
    Example ex;
    absl::StatusOr<bool> got = e->source_->Next(&ex);
    if (!got.ok()) return got.status();
    if (!*got) break;
    e->eval_examples_.push_back(std::move(ex));
  }
  if (evaluate) {
    if (e->eval_examples_.empty())
      return absl::InvalidArgumentError(absl::StrCat(o.schema, ": the test split has no example"));
    e->source_.reset();
  }
  return e;
}

SparseEngine::SparseEngine(Schema schema, std::unique_ptr<CtrModel> model, const TrainerOptions& o,
                           const ClusterSpec& spec, bool evaluate)
    : schema_(std::move(schema)),
      model_(std::move(model)),
      batch_size_(static_cast<int>(o.batch_size)),
      full_every_(static_cast<int>(std::max<int64_t>(1, o.full_checkpoint_every))),
      client_(spec.ps, spec.TaskName()),
      builder_(model_->layout()) {}

std::vector<embedding::TableConfig> SparseEngine::ServerTables() const {
  std::vector<embedding::TableConfig> out;
  for (const embedding::TableConfig& t : schema_.tables) {
    if (model_->uses_embeddings()) out.push_back(t);
    embedding::TableConfig w = schema_.wide;
    w.name = WideTableName(t.name);
    w.seed = t.seed ^ 0x77696465ull;
    if (w.capacity == 0) w.capacity = t.capacity;
    out.push_back(std::move(w));
  }
  return out;
}

absl::Status SparseEngine::PullRows(const SparseBatch& batch, bool train, BatchRows* rows) {
  const FeatureLayout& layout = model_->layout();
  std::vector<TableRows> pull;
  for (size_t t = 0; t < layout.tables.size(); ++t) {
    if (model_->uses_embeddings())
      pull.push_back({layout.tables[t], layout.dims[t], batch.table_ids[t], {}});
    pull.push_back({WideTableName(layout.tables[t]), 1, batch.table_ids[t], {}});
  }
  static const std::vector<TableRows> kNone;
  if (absl::Status s = client_.PushPull(train ? pending_ : kNone, &pull, train); !s.ok()) return s;
  if (train) pending_.clear();
  rows->emb.resize(layout.tables.size());
  rows->wide.resize(layout.tables.size());
  size_t at = 0;
  for (size_t t = 0; t < layout.tables.size(); ++t) {
    if (model_->uses_embeddings()) rows->emb[t] = std::move(pull[at++].values);
    rows->wide[t] = std::move(pull[at++].values);
  }
  return absl::OkStatus();
}

float SparseEngine::Gradient(const Params& at, Params* grads) {
  if (!error_.ok()) return 0;
  examples_.resize(batch_size_);
  for (Example& e : examples_) {
    absl::StatusOr<bool> got = source_->Next(&e);
    if (!got.ok() || !*got) {
      error_ = got.ok() ? absl::InternalError("the training examples ended") : got.status();
      return 0;
    }
  }
  builder_.Build(examples_, &batch_);
  if (absl::Status s = PullRows(batch_, /*train=*/true, &rows_); !s.ok()) {
    error_ = s;
    return 0;
  }
  const float loss = model_->LossAndGradient(at, batch_, rows_, grads, &row_grads_);
  const FeatureLayout& layout = model_->layout();
  for (size_t t = 0; t < layout.tables.size(); ++t) {
    if (model_->uses_embeddings())
      pending_.push_back(
          {layout.tables[t], layout.dims[t], batch_.table_ids[t], std::move(row_grads_.emb[t])});
    pending_.push_back(
        {WideTableName(layout.tables[t]), 1, batch_.table_ids[t], std::move(row_grads_.wide[t])});
  }
  return loss;
}

absl::Status SparseEngine::TakeError() { return std::exchange(error_, absl::OkStatus()); }

absl::Status SparseEngine::Flush() {
  if (pending_.empty()) return absl::OkStatus();
  std::vector<TableRows> none;
  absl::Status s = client_.PushPull(pending_, &none, /*train=*/true);
  pending_.clear();
  return s;
}

std::vector<std::string> SparseEngine::ServerTableNames() const {
  std::vector<std::string> names;
  for (const embedding::TableConfig& t : ServerTables()) names.push_back(t.name);
  return names;
}

absl::Status SparseEngine::ImportRows(ReadRows read, uint64_t* rows) {
  if (absl::Status s = client_.CreateTables(ServerTables(), /*reset=*/true); !s.ok()) return s;
  pending_.clear();
  SparseClient::Import import(&client_);
  *rows = 0;
  absl::Status s = read([&](const std::string& table, uint32_t row_floats,
                            absl::Span<const uint64_t> ids, absl::Span<const float> values) {
    for (size_t i = 0; i < ids.size(); ++i)
      if (absl::Status added = import.Add(table, row_floats, ids[i], &values[i * row_floats]);
          !added.ok())
        return added;
    *rows += ids.size();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  if (s = import.Finish(); !s.ok()) return s;
  // The servers' row versions start over: the next table checkpoint is a full one.
  restored_ = true;
  return absl::OkStatus();
}

absl::Status SparseEngine::PrepareServersFromCopy(ReadRows read) {
  uint64_t rows = 0;
  if (absl::Status s = ImportRows(read, &rows); !s.ok()) return s;
  LogInfo("restored the embedding tables from the chief's copy", {{"rows", absl::StrCat(rows)}});
  return absl::OkStatus();
}

absl::Status SparseEngine::PrepareServers(const std::string& model_dir,
                                          std::optional<int64_t> restore_step) {
  if (!restore_step.has_value()) {
    pending_.clear();
    return client_.CreateTables(ServerTables(), /*reset=*/true);
  }
  absl::StatusOr<std::vector<int64_t>> chain = TableCheckpointChain(model_dir, *restore_step);
  if (!chain.ok())
    return absl::DataLossError(absl::StrCat("cannot restore the embedding tables of step ",
                                            *restore_step, ": ", chain.status().message()));
  uint64_t rows = 0;
  absl::Status s = ImportRows(
      [&](TableRowsFn fn) {
        for (int64_t step : *chain)
          if (absl::Status read = ReadTableCheckpoint(model_dir, step, fn); !read.ok()) return read;
        return absl::OkStatus();
      },
      &rows);
  if (!s.ok()) return s;
  LogInfo("restored the embedding tables", {{"global_step", absl::StrCat(*restore_step)},
                                            {"files", absl::StrCat(chain->size())},
                                            {"rows", absl::StrCat(rows)}});
  return absl::OkStatus();
}

absl::Status SparseEngine::SaveCheckpoint(const std::string& model_dir, int64_t step, int keep) {
  const bool full = last_table_step_ < 0 || restored_ || deltas_ + 1 >= full_every_;
  absl::StatusOr<std::unique_ptr<TableCheckpointWriter>> w = TableCheckpointWriter::Create(
      model_dir, step, full ? kFullTableCheckpoint : last_table_step_);
  if (!w.ok()) return w.status();
  for (const embedding::TableConfig& t : ServerTables()) {
    absl::Status s = client_.Export(t.name, full, [&](const v1::RowBlock& b) {
      const size_t n = static_cast<size_t>(b.ids_size());
      return (*w)->Add(
          b.table(), b.row_floats(), {b.ids().data(), n},
          {reinterpret_cast<const float*>(b.rows().data()), b.rows().size() / sizeof(float)});
    });
    if (!s.ok()) return s;
  }
  if (absl::Status s = (*w)->Commit(); !s.ok()) return s;
  LogInfo("saved the embedding tables", {{"global_step", absl::StrCat(step)},
                                         {"rows", absl::StrCat((*w)->rows())},
                                         {"kind", full ? "full" : "delta"}});
  deltas_ = full ? 0 : deltas_ + 1;
  last_table_step_ = step;
  restored_ = false;
  std::vector<int64_t> kept = CheckpointSteps(model_dir);
  if (kept.size() > static_cast<size_t>(std::max(1, keep))) kept.resize(std::max(1, keep));
  PruneTableCheckpoints(model_dir, kept);
  return absl::OkStatus();
}

EvalResult SparseEngine::Evaluate(const Params& params) {
  EvalResult r;
  std::vector<float> scores, labels, probs;
  std::vector<Example> part;
  SparseBatch batch;
  BatchRows rows;
  BatchBuilder builder(model_->layout());
  for (size_t first = 0; first < eval_examples_.size(); first += kEvalBatch) {
    const size_t n = std::min<size_t>(kEvalBatch, eval_examples_.size() - first);
    part.assign(eval_examples_.begin() + first, eval_examples_.begin() + first + n);
    builder.Build(part, &batch);
    if (absl::Status s = PullRows(batch, /*train=*/false, &rows); !s.ok()) {
      LogWarning("evaluation lookups failed", {{"error", s.ToString()}});
      error_ = s;
      return r;
    }
    model_->Predict(params, batch, rows, &probs);
    scores.insert(scores.end(), probs.begin(), probs.end());
    labels.insert(labels.end(), batch.labels.begin(), batch.labels.end());
  }
  r.loss = LogLoss(scores, labels);
  r.auc = Auc(scores, labels);
  r.examples = static_cast<int64_t>(scores.size());
  return r;
}

}  // namespace disttrain::trainer
