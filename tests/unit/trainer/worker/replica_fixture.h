// What the training loop's unit tests share (replica_test.cc, replica_compute_test.cc): real
// parameter servers on loopback, the toy problem's flags in a fresh --model-dir, a task's place
// in the cluster, and the variables the toy problem's closed form says each step reaches.
#ifndef DISTTRAIN_TESTS_UNIT_TRAINER_WORKER_REPLICA_FIXTURE_H_
#define DISTTRAIN_TESTS_UNIT_TRAINER_WORKER_REPLICA_FIXTURE_H_

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/unit/testing/loopback_servers.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/cluster_spec.h"
#include "trainer/options.h"

namespace disttrain::trainer::testing {

inline constexpr float kToyRate = 0.1f;

// The toy model's variables after `steps` steps of SGD at `rate` from a = b = (start, start):
// each element of a and b moves by -rate * (a + b - 100), in float as the servers compute it.
inline Params ToyAfter(int steps, float start = 0, float rate = kToyRate) {
  float v = start;
  for (int i = 0; i < steps; ++i) v -= rate * (v + v - 100.0f);
  return {{v, v}, {v, v}};
}

// `got` equals `want` to float precision, or within `tolerance` when one is given.
inline void ExpectValues(const Params& got, const Params& want, float tolerance = 0) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t v = 0; v < got.size(); ++v) {
    if (tolerance > 0) {
      EXPECT_THAT(got[v], ::testing::Pointwise(::testing::FloatNear(tolerance), want[v]))
          << "variable " << v;
    } else {
      EXPECT_THAT(got[v], ::testing::Pointwise(::testing::FloatEq(), want[v])) << "variable " << v;
    }
  }
}

// A replica's exit code, or 143 once `stop` had to end it after `bound` (a replica that never
// finishes fails the test instead of hanging it).
inline int Await(std::future<int>& replica, std::atomic<bool>& stop,
                 std::chrono::seconds bound = std::chrono::seconds(30)) {
  if (replica.wait_for(bound) != std::future_status::ready) {
    ADD_FAILURE() << "the replica did not finish within " << bound.count() << " s";
    stop = true;
  }
  return replica.get();
}

class ReplicaFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("replica-", ::getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    options_.model = "toy";
    options_.mode = "sync";
    options_.learning_rate = kToyRate;
    options_.steps = 6;
    options_.batch_size = 8;
    options_.local_replicas = 1;
    options_.ps_connections = 1;
    options_.checkpoint_steps = 1000;
    options_.log_every = 0;
    options_.eval_source = "model-dir";
    options_.model_dir = (dir_ / "model").string();
    options_.termination_message_path = (dir_ / "termination-log").string();
    std::ofstream(options_.termination_message_path).flush();  // the kubelet creates it
  }
  void TearDown() override {
    servers_.Stop();
    std::filesystem::remove_all(dir_);
  }

  // Task `index` of `task_type` in a cluster of the servers, a chief and `workers` workers.
  ClusterSpec Spec(const std::string& task_type, int index = 0, int workers = 0) const {
    TfConfig c;
    c.cluster = {{"ps", servers_.addresses()}, {"chief", {"127.0.0.1:1"}}};
    if (workers > 0) c.cluster["worker"] = std::vector<std::string>(workers, "127.0.0.1:1");
    c.task_type = task_type;
    c.task_index = index;
    absl::StatusOr<ClusterSpec> spec = MakeClusterSpec(c);
    EXPECT_TRUE(spec.ok()) << spec.status();
    return spec.ok() ? *spec : ClusterSpec{};
  }

  // The termination message the task left; null when it wrote none.
  nlohmann::json Result() const {
    std::ifstream in(options_.termination_message_path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.empty() ? nlohmann::json() : nlohmann::json::parse(text);
  }

  // The newest checkpoint in --model-dir.
  absl::StatusOr<Checkpoint> Latest() const { return LatestCheckpoint(options_.model_dir); }

  std::filesystem::path dir_;
  TrainerOptions options_;
  LoopbackServers servers_;
};

}  // namespace disttrain::trainer::testing

#endif  // DISTTRAIN_TESTS_UNIT_TRAINER_WORKER_REPLICA_FIXTURE_H_
