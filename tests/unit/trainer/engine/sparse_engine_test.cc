// The recommendation models' engine against real parameter servers on loopback: a chief trains
// logistic regression and DeepFM on a small dataset with a clear signal and its evaluation finds
// it; the tables are checkpointed (full, then deltas) and restored row for row.
#include "trainer/engine/sparse_engine.h"

#include <atomic>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/unit/trainer/worker/replica_fixture.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/table_checkpoint.h"
#include "trainer/roles.h"

namespace disttrain::trainer {
namespace {

class SparseEngineTest : public testing::ReplicaFixture {
 protected:
  void SetUp() override {
    ReplicaFixture::SetUp();
    servers_.Start(2, [] { return MakeAsyncSgd(0.05f); });
    // 60 users, each always clicking (even) or never (odd); the item adds noise.
    std::string text = "user,item,clicked\n";
    for (int i = 0; i < 3000; ++i)
      absl::StrAppend(&text, "u", i % 60, ",i", (i * 7) % 13, ",", (i % 60) % 2 == 0 ? 1 : 0, "\n");
    const std::string data = (dir_ / "clicks.csv").string();
    std::ofstream(data) << text;
    const std::string schema = (dir_ / "schema.yaml").string();
    std::ofstream(schema) << "files: [clicks.csv]\ntest_fraction: 0.2\nlabel: clicked\n"
                             "columns: [{name: user}, {name: item}]\n"
                             "table_defaults: {dim: 4, learning_rate: 0.2}\n"
                             "wide: {learning_rate: 0.5}\n";
    options_.schema = schema;
    options_.model = "lr";
    options_.mode = "hogwild";
    options_.learning_rate = 0.05;
    options_.batch_size = 32;
    options_.steps = 120;
    options_.checkpoint_steps = 40;
    options_.full_checkpoint_every = 2;
  }
  int Train() {
    const std::atomic<bool> stop = false;
    return RunReplica(Spec("chief"), options_, stop);
  }
  EvalResult EvaluateLatest() {
    absl::StatusOr<std::unique_ptr<SparseEngine>> e =
        SparseEngine::Make(options_, Spec("evaluator"), /*evaluate=*/true);
    EXPECT_TRUE(e.ok()) << e.status();
    absl::StatusOr<Checkpoint> c = Latest();
    EXPECT_TRUE(c.ok()) << c.status();
    EvalResult r = (*e)->Evaluate(c->values);
    EXPECT_TRUE((*e)->TakeError().ok());
    return r;
  }
};

TEST_F(SparseEngineTest, LogisticRegressionLearnsTheUsersClicks) {
  ASSERT_EQ(Train(), kExitOk);
  const EvalResult r = EvaluateLatest();
  ASSERT_TRUE(r.auc.has_value());
  EXPECT_GT(*r.auc, 0.95) << "each user always clicks or never does";
  EXPECT_LT(r.loss, 0.65) << "below the base rate's log loss, ln 2";
  EXPECT_GT(r.examples, 400);
  nlohmann::json result = Result();
  EXPECT_GT(result.value("trainAuc", 0.0), 0.95) << result.dump();
  EXPECT_GE(result["globalStep"], 120);
}

TEST_F(SparseEngineTest, DeepFmTrainsItsEmbeddingsAndMlp) {
  options_.model = "deepfm";
  options_.hidden = "8";
  ASSERT_EQ(Train(), kExitOk);
  EXPECT_GT(*EvaluateLatest().auc, 0.95);
  EXPECT_GT(servers_.service(0).embeddings().table("user")->stats().updated, 0u)
      << "the embedding table was trained, not only the wide one";
}

TEST_F(SparseEngineTest, TablesAreCheckpointedFullThenDeltaAndRestoreRowForRow) {
  ASSERT_EQ(Train(), kExitOk);
  // Checkpoints at 0, 40, 80 and the final step: every second one is full.
  const int64_t last = Latest()->global_step;
  ASSERT_GE(last, 120);
  EXPECT_EQ(*CheckTableCheckpoint(options_.model_dir, 0), kFullTableCheckpoint);
  EXPECT_EQ(*CheckTableCheckpoint(options_.model_dir, 40), 0);
  EXPECT_EQ(*CheckTableCheckpoint(options_.model_dir, 80), kFullTableCheckpoint);
  EXPECT_EQ(*CheckTableCheckpoint(options_.model_dir, last), 80);
  std::map<std::pair<std::string, uint64_t>, std::vector<float>> want;
  const absl::StatusOr<std::vector<int64_t>> chain = TableCheckpointChain(options_.model_dir, last);
  ASSERT_TRUE(chain.ok()) << chain.status();
  EXPECT_EQ(*chain, (std::vector<int64_t>{80, last}));
  for (int64_t step : *chain) {
    const absl::Status read =
        ReadTableCheckpoint(options_.model_dir, step,
                            [&](const std::string& t, uint32_t rf, absl::Span<const uint64_t> ids,
                                absl::Span<const float> rows) {
                              for (size_t i = 0; i < ids.size(); ++i)
                                want[{t, ids[i]}].assign(&rows[i * rf], &rows[i * rf] + rf);
                              return absl::OkStatus();
                            });
    ASSERT_TRUE(read.ok()) << read;
  }
  EXPECT_EQ(want.size(), 60u + 13u) << "every user's and item's wide row";
  // Both servers restart empty; a fresh chief's engine restores them from the checkpoint.
  servers_.Restart(0, [] { return MakeAsyncSgd(0.05f); });
  servers_.Restart(1, [] { return MakeAsyncSgd(0.05f); });
  absl::StatusOr<std::unique_ptr<SparseEngine>> e =
      SparseEngine::Make(options_, Spec("chief"), /*evaluate=*/false);
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_TRUE((*e)->PrepareServers(options_.model_dir, last).ok());
  std::map<std::pair<std::string, uint64_t>, std::vector<float>> got;
  for (int ps = 0; ps < 2; ++ps) {
    for (const auto& table : servers_.service(ps).embeddings().tables()) {
      table->ForEachRow(0, [&](uint64_t id, const float* row) {
        got[{table->config().name, id}].assign(row, row + table->row_floats());
      });
    }
  }
  EXPECT_EQ(got, want);
}

TEST_F(SparseEngineTest, BadDataEndsTheRunWithAUsageError) {
  // Enough bad lines that some fall in the training split (test_fraction 0.2).
  for (int i = 0; i < 20; ++i)
    std::ofstream(dir_ / "clicks.csv", std::ios::app) << "u1,i1,sometimes\n";
  options_.steps = 1000;
  EXPECT_EQ(Train(), kExitUsage);
  options_.skip_bad_records = true;
  options_.steps = 40;
  EXPECT_EQ(Train(), kExitOk) << "skipped and counted instead";
}

}  // namespace
}  // namespace disttrain::trainer
