// The replicas' client against real parameter servers on loopback: one PushPull per server per
// step, all servers at once, gradients out and variables back in the same call.
#include "trainer/worker/ps_client.h"

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/loopback_servers.h"
#include "trainer/ps/parameter_server.h"

namespace disttrain::trainer {
namespace {

using testing::InitAll;

class PsClientTest : public ::testing::Test {
 protected:
  void Start(int num_ps, const testing::LoopbackServers::MakeRule& rule, int partitions = 1) {
    partitions_ = partitions;
    servers_.Start(num_ps, rule, partitions);
  }
  PsClient Client(const std::string& name, int connections = 0) {
    return PsClient(servers_.addresses(), vars_, name, connections > 0 ? connections : partitions_);
  }
  int partitions_ = 1;

  // A variable over several chunks and one small one.
  std::vector<VariableSpec> vars_ = {{"w", 3 * kChunkElements + 17}, {"b", 5}};
  testing::LoopbackServers servers_;
};

Params Filled(const std::vector<VariableSpec>& vars, float v) {
  Params p;
  for (const auto& var : vars) p.emplace_back(var.size, v);
  return p;
}

TEST_F(PsClientTest, AStepPushesTheGradientAndPullsTheUpdatedVariablesFromEveryServer) {
  Start(3, [] { return MakeAsyncSgd(0.5f); });
  PsClient client = Client("w0");
  Params init = Filled(vars_, 1.0f);
  init[0][kChunkElements + 1] = 7.0f;
  ASSERT_TRUE(InitAll(&client, init, 4).ok());
  Params params;
  absl::StatusOr<PsClient::StepResult> pulled = client.PushPull(nullptr, {}, &params);
  ASSERT_TRUE(pulled.ok()) << pulled.status();
  EXPECT_EQ(pulled->global_step, 4);
  EXPECT_EQ(params, init);
  ASSERT_EQ(pulled->incarnations.size(), 3u);
  EXPECT_EQ(pulled->incarnations[2], servers_.service(2).incarnation());

  const Params grads = Filled(vars_, 2.0f);
  absl::StatusOr<PsClient::StepResult> step = client.PushPull(&grads, {.step = 4}, &params);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->global_step, 5);
  EXPECT_EQ(params[0][0], 0.0f);
  EXPECT_EQ(params[0][kChunkElements + 1], 6.0f);
  EXPECT_EQ(params[0].back(), 0.0f);
  EXPECT_EQ(params[1], std::vector<float>(5, 0.0f));
}

TEST_F(PsClientTest, EveryPartitionOfEveryServerGetsItsShareOverItsOwnConnection) {
  // 7 MiB per server: two of the three partitions (one per 32 MiB, at least two), as the
  // default four partitions are used by shares of 1-64 MiB; the third stays empty.
  vars_ = {{"w", 28 * kChunkElements + 17}, {"b", 5}};
  Start(
      2, [] { return MakeAsyncSgd(0.5f); }, /*partitions=*/3);
  PsClient client = Client("w0");
  absl::StatusOr<std::vector<PsState>> before = client.DescribeAll();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_FALSE((*before)[1].initialized);
  Params init = Filled(vars_, 1.0f);
  ASSERT_TRUE(InitAll(&client, init, 0).ok());
  absl::StatusOr<std::vector<PsState>> after = client.DescribeAll();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE((*after)[0].initialized && (*after)[1].initialized)
      << "every partition holds its shards";
  for (int ps = 0; ps < 2; ++ps) {
    for (int p = 0; p < 2; ++p) {
      ASSERT_NE(servers_.service(ps).store(p), nullptr) << "ps " << ps << " partition " << p;
      EXPECT_GT(servers_.service(ps).store(p)->total_elements(), kChunkElements)
          << "ps " << ps << " partition " << p << " holds a share";
    }
    ASSERT_NE(servers_.service(ps).store(2), nullptr) << "ps " << ps << " partition 2";
    EXPECT_EQ(servers_.service(ps).store(2)->total_elements(), 0u)
        << "ps " << ps << " partition 2 is initialised empty";
  }
  const Params grads = Filled(vars_, 2.0f);
  Params params;
  absl::StatusOr<PsClient::StepResult> step =
      client.PushPull(&grads, {.step = 0, .pull_early = false}, &params);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->incarnations.size(), 4u) << "one call per used partition";
  EXPECT_EQ(params[0], std::vector<float>(vars_[0].size, 0.0f));
  EXPECT_EQ(params[1], std::vector<float>(5, 0.0f));
}

TEST_F(PsClientTest, ASmallModelUsesOnePartitionPerServer) {
  Start(
      2, [] { return MakeAsyncSgd(0.5f); }, /*partitions=*/3);  // 0.75 MiB per server
  PsClient client = Client("w0");
  absl::Status init = InitAll(&client, Filled(vars_, 1.0f), 0);
  ASSERT_TRUE(init.ok()) << init;
  absl::StatusOr<std::vector<PsState>> states = client.DescribeAll();
  ASSERT_TRUE(states.ok()) << states.status();
  EXPECT_TRUE((*states)[0].initialized && (*states)[1].initialized)
      << "the unused partitions are initialised empty";
  EXPECT_EQ(servers_.service(0).store(2)->total_elements(), 0u);
  const Params grads = Filled(vars_, 2.0f);
  Params params;
  absl::StatusOr<PsClient::StepResult> step = client.PushPull(&grads, {.step = 0}, &params);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->incarnations.size(), 2u) << "one call per server";
  EXPECT_EQ(params[0][9], 0.0f);
}

TEST(PartitionsUsedTest, OneUnderTwoChunksThenOnePer32MiBBetweenTwoAndAll) {
  constexpr size_t kMiB = 1 << 20;
  EXPECT_EQ(PartitionsUsed(318'000, 4), 1) << "the MLP: one call per server";
  EXPECT_EQ(PartitionsUsed(kMiB - 4, 4), 1);
  EXPECT_EQ(PartitionsUsed(kMiB, 4), 2) << "two whole 512 KiB chunks";
  EXPECT_EQ(PartitionsUsed(kMiB, 1), 1) << "a server with one partition";
  EXPECT_EQ(PartitionsUsed(16 * kMiB, 4), 2);
  EXPECT_EQ(PartitionsUsed(64 * kMiB, 4), 2);
  EXPECT_EQ(PartitionsUsed(96 * kMiB, 4), 3);
  EXPECT_EQ(PartitionsUsed(128 * kMiB, 4), 4);
  EXPECT_EQ(PartitionsUsed(1024 * kMiB, 4), 4) << "never more than the server has";
  EXPECT_EQ(PartitionsUsed(1024 * kMiB, 2), 2);
}

TEST_F(PsClientTest, AOneMiBShareIsSplitOverTwoPartitions) {
  vars_ = {{"w", 2 * kChunkElements}};  // 1 MiB on one server: 512 KiB per partition
  Start(
      1, [] { return MakeAsyncSgd(0.5f); }, /*partitions=*/2);
  PsClient client = Client("w0");
  absl::Status init = InitAll(&client, Filled(vars_, 1.0f), 0);
  ASSERT_TRUE(init.ok()) << init;
  EXPECT_EQ(servers_.service(0).store(0)->total_elements(), kChunkElements);
  EXPECT_EQ(servers_.service(0).store(1)->total_elements(), kChunkElements);
  const Params grads = Filled(vars_, 2.0f);
  Params params;
  absl::StatusOr<PsClient::StepResult> step =
      client.PushPull(&grads, {.step = 0, .pull_early = false}, &params);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->incarnations.size(), 2u) << "one call per partition";
  EXPECT_EQ(params[0], std::vector<float>(vars_[0].size, 0.0f));
}

TEST_F(PsClientTest, APartitionCountMismatchIsAClearError) {
  Start(
      1, [] { return MakeAsyncSgd(0.5f); }, /*partitions=*/2);
  absl::StatusOr<std::vector<PsState>> r = Client("w0", /*connections=*/3).DescribeAll();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("--ps-connections"), std::string::npos) << r.status();
}

TEST_F(PsClientTest, AServerWithoutVariablesIsFailedPrecondition) {
  Start(2, [] { return MakeAsyncSgd(0.5f); });
  Params params;
  absl::StatusOr<PsClient::StepResult> r = Client("w0").PushPull(nullptr, {}, &params);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
}

TEST_F(PsClientTest, SynchronousReplicasMeetAtEveryStep) {
  Start(2, [] { return MakeSyncSgd(0.5f, 2); });
  PsClient init_client = Client("init");
  ASSERT_TRUE(InitAll(&init_client, Filled(vars_, 1.0f), 0).ok());
  std::vector<Params> seen(2);
  std::vector<std::thread> replicas;
  for (int r = 0; r < 2; ++r) {
    replicas.emplace_back([&, r] {
      PsClient client = Client(absl::StrCat("w", r));
      const Params grads = Filled(vars_, static_cast<float>(r + 1));  // the average is 1.5
      for (int step = 0; step < 3; ++step) {
        absl::StatusOr<PsClient::StepResult> s = client.PushPull(
            &grads, {.step = step, .min_step = step + 1, .wait = absl::Seconds(10)}, &seen[r]);
        ASSERT_TRUE(s.ok()) << s.status();
        EXPECT_EQ(s->global_step, step + 1);
        EXPECT_FALSE(s->dropped);
      }
    });
  }
  for (auto& t : replicas) t.join();
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[0][1][0], 1.0f - 3 * 0.5f * 1.5f);
}

}  // namespace
}  // namespace disttrain::trainer
