#include "trainer/cluster_spec.h"

#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

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
