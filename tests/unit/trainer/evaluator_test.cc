// The evaluator role (RunEvaluator, evaluator.cc) reading the chief's checkpoints from
// --model-dir, on the toy problem: its loss at a checkpoint is known by hand.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/flags.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/metrics/trainer_metrics.h"
#include "trainer/roles.h"

namespace disttrain::trainer {
namespace {

namespace fs = std::filesystem;

const std::vector<VariableSpec> kToyVariables = {{"a", 2}, {"b", 2}};

// a + b - 100 is -10 in both elements: the toy loss is 2 * 10^2 / 2.
const Params kTenShort = {{40, 40}, {50, 50}};

class EvaluatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat("evaluator-", ::getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    options_.model = "toy";
    options_.steps = 10;
    options_.eval_source = "model-dir";
    options_.model_dir = (dir_ / "model").string();
    options_.termination_message_path = (dir_ / "termination-log").string();
    std::ofstream(options_.termination_message_path).flush();  // the kubelet creates it
    spec_.role = Role::kEvaluator;
  }
  void TearDown() override { fs::remove_all(dir_); }

  int Run(bool stop_now) {
    const std::atomic<bool> stop = stop_now;
    return RunEvaluator(spec_, options_, stop);
  }
  nlohmann::json Result() const {
    std::ifstream in(options_.termination_message_path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.empty() ? nlohmann::json() : nlohmann::json::parse(text);
  }

  fs::path dir_;
  TrainerOptions options_;
  ClusterSpec spec_;
};

TEST_F(EvaluatorTest, EvaluatesTheFinalCheckpointAndLeavesItsResult) {
  ASSERT_TRUE(WriteCheckpoint(options_.model_dir, 10, kToyVariables, kTenShort, 5).ok());
  EXPECT_EQ(Run(/*stop_now=*/false), kExitOk) << "ends after the checkpoint of --steps";
  const nlohmann::json result = Result();
  ASSERT_TRUE(result.is_object()) << "no termination message";
  EXPECT_EQ(result["globalStep"], 10);
  EXPECT_DOUBLE_EQ(result["loss"].get<double>(), 100);
  EXPECT_EQ(Metrics().eval_step->Value({}), 10);
  EXPECT_DOUBLE_EQ(Metrics().eval_loss->Value({}), 100);
}

TEST_F(EvaluatorTest, AskedToStopItEvaluatesTheNewestCheckpointFirst) {
  ASSERT_TRUE(WriteCheckpoint(options_.model_dir, 4, kToyVariables, {{0, 0}, {0, 0}}, 5).ok());
  ASSERT_TRUE(WriteCheckpoint(options_.model_dir, 6, kToyVariables, kTenShort, 5).ok());
  EXPECT_EQ(Run(/*stop_now=*/true), kExitOk);
  const nlohmann::json result = Result();
  ASSERT_TRUE(result.is_object()) << "no termination message";
  EXPECT_EQ(result["globalStep"], 6) << "before --steps: the chief's last checkpoint";
  EXPECT_DOUBLE_EQ(result["loss"].get<double>(), 100);
}

TEST_F(EvaluatorTest, ACheckpointOfAnotherModelIsAUsageError) {
  ASSERT_TRUE(WriteCheckpoint(options_.model_dir, 10, {{"w", 3}}, {{1, 2, 3}}, 5).ok());
  EXPECT_EQ(Run(/*stop_now=*/false), kExitUsage);
  EXPECT_TRUE(Result().is_null()) << "nothing was evaluated";
}

}  // namespace
}  // namespace disttrain::trainer
