#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/cluster_spec.h"
#include "trainer/data/dataset.h"
#include "trainer/models/model.h"
#include "trainer/models/model_factory.h"
#include "trainer/ps/update_rule.h"
#include "trainer/wire/shard_plan.h"

namespace disttrain::trainer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(ShardPlanTest, BalancesBytesAndSplitsLargeVariables) {
  std::vector<VariableSpec> vars = {{"big", 1000}, {"mid", 300}, {"small", 10}, {"tiny", 2}};
  std::vector<Shard> plan = PlanShards(vars, 3);
  std::vector<size_t> load = ElementsPerPs(plan, 3);
  EXPECT_EQ(std::accumulate(load.begin(), load.end(), size_t{0}), 1312u);
  for (size_t l : load) EXPECT_LE(l, 1312u / 3 + 300) << "no server holds far more than its share";
  // Every element of every variable is in exactly one shard.
  for (int v = 0; v < 4; ++v) {
    std::vector<int> covered(vars[v].size, 0);
    for (const Shard& s : plan) {
      if (s.variable != v) continue;
      for (size_t i = 0; i < s.size; ++i) ++covered[s.offset + i];
    }
    EXPECT_THAT(covered, ::testing::Each(1)) << vars[v].name;
  }
  int big_parts = 0;
  for (const Shard& s : plan) big_parts += s.variable == 0;
  EXPECT_GE(big_parts, 3) << "a variable larger than a server's share is split";
  EXPECT_EQ(PlanShards(vars, 3)[1].ps, plan[1].ps) << "deterministic";
}

GradientMap Grad(float v) { return {{"w/0", {v, v}}}; }

std::vector<float> Values(const ShardStore& store) {
  ShardStore::BlockRef b = store.Read(0);
  return std::vector<float>(b->values.get(), b->values.get() + b->size);
}

TEST(UpdateRuleTest, AsyncAppliesEveryPushAtOnce) {
  ShardStore store({{"w/0", {1, 1}}}, 0, 1);
  auto rule = MakeAsyncSgd(0.5f);
  rule->Apply(0, DensePush(Grad(2)), &store);
  rule->Apply(0, DensePush(Grad(2)), &store);  // a stale step is still applied
  EXPECT_EQ(Values(store), (std::vector<float>{-1, -1}));
  EXPECT_EQ(store.global_step(), 2);
}

TEST(UpdateRuleTest, SyncAveragesReplicasToAggregateAndDropsStaleGradients) {
  ShardStore store({{"w/0", {1, 1}}}, 0, 1);
  auto rule = MakeSyncSgd(0.5f, 2);
  EXPECT_FALSE(rule->Apply(0, DensePush(Grad(2)), &store).dropped);
  EXPECT_EQ(store.global_step(), 0) << "waits for the second gradient";
  EXPECT_FALSE(rule->Apply(0, DensePush(Grad(4)), &store).dropped);
  EXPECT_EQ(store.global_step(), 1);
  EXPECT_EQ(Values(store), (std::vector<float>{-0.5f, -0.5f}));  // 1 - 0.5 * (2 + 4) / 2
  EXPECT_TRUE(rule->Apply(0, DensePush(Grad(100)), &store).dropped)
      << "a backup worker's late gradient";
  EXPECT_EQ(Values(store), (std::vector<float>{-0.5f, -0.5f}));
}

TEST(UpdateRuleTest, SyncForgetsPartialAggregatesOfAReplacedStore) {
  auto rule = MakeSyncSgd(0.5f, 2);
  ShardStore old_store({{"w/0", {1, 1}}}, 0, 1);
  rule->Apply(0, DensePush(Grad(2)), &old_store);
  ShardStore restored({{"w/0", {1, 1}}}, 0, 1);  // e.g. restored from a checkpoint
  rule->Apply(0, DensePush(Grad(4)), &restored);
  EXPECT_EQ(restored.global_step(), 0) << "the gradient pushed to the old store does not count";
  rule->Apply(0, DensePush(Grad(4)), &restored);
  EXPECT_EQ(Values(restored), (std::vector<float>{-1, -1}));
}

TEST(SchemeTest, ParsesEveryModeAndRejectsUnknownOnes) {
  for (const char* mode : {"hogwild", "downpour", "downpour-sgd", "agn", "sync", "sagn", "dynsgd",
                           "aeasgd", "aeamsgd"}) {
    absl::StatusOr<Scheme> s = ParseScheme(mode);
    ASSERT_TRUE(s.ok()) << mode;
    EXPECT_STREQ(SchemeName(*s), mode);
  }
  EXPECT_EQ(*ParseScheme("async"), Scheme::kHogwild);
  absl::StatusOr<Scheme> bad = ParseScheme("hogwild2");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("downpour-sgd"));
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("ckpt-" + std::to_string(::getpid()))).string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
  std::vector<VariableSpec> vars_ = {{"a", 3}, {"b", 1}};
};

TEST_F(CheckpointTest, RoundTripsAndKeepsTheLastK) {
  for (int step : {10, 20, 30, 40}) {
    ASSERT_TRUE(WriteCheckpoint(dir_, step, vars_, {{1, 2, float(step)}, {4}}, 3).ok());
  }
  EXPECT_THAT(CheckpointSteps(dir_), ::testing::ElementsAre(40, 30, 20));
  auto c = LatestCheckpoint(dir_);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->global_step, 40);
  EXPECT_EQ(c->values[0], (std::vector<float>{1, 2, 40}));
  EXPECT_EQ(c->variables[1].name, "b");
}

TEST_F(CheckpointTest, ACorruptCheckpointIsDetectedAndThePreviousOneUsed) {
  ASSERT_TRUE(WriteCheckpoint(dir_, 10, vars_, {{1, 2, 3}, {4}}, 5).ok());
  ASSERT_TRUE(WriteCheckpoint(dir_, 20, vars_, {{5, 6, 7}, {8}}, 5).ok());
  {
    std::fstream f(fs::path(dir_) / "ckpt-20.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);
    f.put('\x7f');
  }
  std::vector<std::string> skipped;
  auto c = LatestCheckpoint(dir_, &skipped);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->global_step, 10);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_THAT(skipped[0], HasSubstr("checksum mismatch"));
}

TEST(ModelTest, MlpGradientsMatchFiniteDifferences) {
  auto model = MakeModel("mlp", 6, 3, {4});
  ASSERT_TRUE(model.ok());
  Params p = (*model)->Initialize(7);
  std::vector<float> x = {0.1f, 0.9f, 0.f, 0.5f, 0.3f, 0.7f, 0.2f, 0.f, 0.8f, 0.4f, 0.6f, 0.1f};
  std::vector<int32_t> y = {2, 0};
  Batch b{x.data(), y.data(), 2, 6};
  Params g;
  (*model)->LossAndGradient(p, b, &g);
  const float eps = 1e-3f;
  for (size_t v = 0; v < p.size(); ++v) {
    for (size_t i = 0; i < p[v].size(); i += 3) {
      Params plus = p, minus = p, unused;
      plus[v][i] += eps;
      minus[v][i] -= eps;
      const float numeric = ((*model)->LossAndGradient(plus, b, &unused) -
                             (*model)->LossAndGradient(minus, b, &unused)) /
                            (2 * eps);
      EXPECT_NEAR(g[v][i], numeric, 2e-3) << "variable " << v << " element " << i;
    }
  }
}

TEST(ClusterSpecTest, WorkerZeroIsTheChiefWithoutAChiefTask) {
  TfConfig c;
  c.cluster = {{"ps", {"p:1"}}, {"worker", {"w0:1", "w1:1"}}};
  c.task_type = "worker";
  c.task_index = 0;
  auto s = MakeClusterSpec(c);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->role, Role::kChief);
  EXPECT_EQ(s->replica_rank, 0);
  EXPECT_EQ(s->TaskName(), "worker-0");
  c.cluster["chief"] = {"c:1"};
  s = MakeClusterSpec(c);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->role, Role::kWorker);
  EXPECT_EQ(s->replica_rank, 1);
  EXPECT_EQ(s->num_replicas(), 3);
}

}  // namespace
}  // namespace disttrain::trainer
