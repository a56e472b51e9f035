// The dense models' engine (dense_engine.cc): the towers' gradients (--local-replicas), the
// metrics of every step and the chief's TensorBoard scalars, observed through a chief training
// the toy problem against a real parameter server on loopback.
#include <atomic>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/flags.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/tf_events.h"
#include "tests/unit/trainer/worker/replica_fixture.h"
#include "trainer/metrics/trainer_metrics.h"
#include "trainer/roles.h"

namespace disttrain::trainer {
namespace {

using testing::ExpectValues;
using testing::kToyRate;
using testing::ToyAfter;

class DenseEngineTest : public testing::ReplicaFixture {
 protected:
  void SetUp() override {
    ReplicaFixture::SetUp();
    servers_.Start(1, [] { return MakeSyncSgd(kToyRate, 1); });
  }
  int Train() {
    const std::atomic<bool> stop = false;
    return RunReplica(Spec("chief"), options_, stop);
  }
};

TEST_F(DenseEngineTest, TowersAverageTheirGradientsAndCountEveryBatch) {
  options_.local_replicas = 2;
  const double before = Metrics().local_steps->Value({});
  ASSERT_EQ(Train(), kExitOk);
  EXPECT_EQ(Metrics().local_steps->Value({}) - before, 6 * 2) << "a batch per tower per step";
  EXPECT_EQ(Metrics().global_step->Value({}), 5) << "the step of the last gradient";
  absl::StatusOr<Checkpoint> last = Latest();
  ASSERT_TRUE(last.ok()) << last.status();
  ExpectValues(last->values, ToyAfter(6));  // the towers' mean gradient, not their sum
}

TEST_F(DenseEngineTest, ReportsALiveExampleRateBeforeItsFirstSecondPassed) {
  Metrics().examples_per_second->Set({}, 0);
  ASSERT_EQ(Train(), kExitOk);
  EXPECT_GT(Metrics().examples_per_second->Value({}), 0);
}

TEST_F(DenseEngineTest, TheChiefsSummariesCountTheExamplesOfEveryTowerInAStep) {
  options_.local_replicas = 2;
  options_.log_every = 1;
  ASSERT_EQ(Train(), kExitOk);
  std::vector<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(SummaryDir(options_, "train"))) {
    files.push_back(f.path().string());
  }
  ASSERT_EQ(files.size(), 1u);
  int losses = 0, rates = 0;
  for (const tensorboard::Event& e : testing::ReadEvents(files[0])) {
    std::map<std::string, float> scalars;
    for (const auto& v : e.summary().value()) scalars[v.tag()] = v.simple_value();
    losses += scalars.count("loss");
    if (!scalars.count("global_step/sec")) continue;
    ++rates;
    // Per global step: one commit of 2 towers' batches of 8 examples.
    EXPECT_NEAR(scalars["examples/sec"] / scalars["global_step/sec"], 2 * 8, 1e-3)
        << "step " << e.step();
  }
  EXPECT_EQ(losses, 6) << "one loss per step";
  EXPECT_EQ(rates, 5) << "a rate from the second step on";
}

}  // namespace
}  // namespace disttrain::trainer
