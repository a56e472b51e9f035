// UpdateResult and DescribeResult (result_policy.h): the trainer's result copied into the status.
#include "operator/policy/result_policy.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "operator/policy/pod_state.h"

namespace disttrain::policy {
namespace {

using api::ReplicaType;

PodState Ended(ReplicaType type, int index, PodPhase phase, std::string message) {
  PodState p;
  p.type = type;
  p.index = index;
  p.phase = phase;
  p.termination_message = std::move(message);
  return p;
}

struct ResultCase {
  std::string name;
  std::vector<PodState> pods;
  bool has_chief;
  std::optional<api::JobResult> previous;
  std::optional<api::JobResult> want;
};

class ResultPolicyTest : public ::testing::TestWithParam<ResultCase> {};

TEST_P(ResultPolicyTest, CopiesTheTrainersResultIntoTheStatus) {
  EXPECT_EQ(UpdateResult(GetParam().pods, GetParam().has_chief, GetParam().previous),
            GetParam().want);
}

constexpr char kChiefMessage[] =
    R"({"globalStep":1000,"loss":0.25,"trainAccuracy":0.9,"trainSeconds":12.5})";
constexpr char kEvalMessage[] = R"({"globalStep":900,"accuracy":0.85,"loss":0.4})";

api::JobResult Trained() {
  return {.global_step = 1000, .loss = 0.25, .train_accuracy = 0.9, .train_seconds = 12.5};
}
api::JobResult Evaluated() { return {.accuracy = 0.85, .eval_loss = 0.4, .evaluated_step = 900}; }
// A click-through model's chief and evaluator (trainer/models/ctr_model.h).
constexpr char kCtrChiefMessage[] = R"({"globalStep":2000,"loss":0.55,"trainAuc":0.81})";
constexpr char kCtrEvalMessage[] =
    R"({"globalStep":2000,"auc":0.781,"loss":0.556,"logLoss":0.556})";
api::JobResult Clicks() {
  return {.global_step = 2000,
          .loss = 0.55,
          .eval_loss = 0.556,
          .train_auc = 0.81,
          .auc = 0.781,
          .log_loss = 0.556,
          .evaluated_step = 2000};
}
api::JobResult Both() {
  api::JobResult r = Trained();
  r.accuracy = 0.85;
  r.eval_loss = 0.4;
  r.evaluated_step = 900;
  return r;
}

INSTANTIATE_TEST_SUITE_P(
    Table, ResultPolicyTest,
    ::testing::Values(
        ResultCase{"NothingYet",
                   {Ended(ReplicaType::kChief, 0, PodPhase::kRunning, "")},
                   true,
                   std::nullopt,
                   std::nullopt},
        ResultCase{"SucceededChief",
                   {Ended(ReplicaType::kChief, 0, PodPhase::kSucceeded, kChiefMessage)},
                   true,
                   std::nullopt,
                   Trained()},
        ResultCase{"ChiefAndEvaluator",
                   {Ended(ReplicaType::kChief, 0, PodPhase::kSucceeded, kChiefMessage),
                    Ended(ReplicaType::kEvaluator, 0, PodPhase::kSucceeded, kEvalMessage)},
                   true,
                   std::nullopt,
                   Both()},
        ResultCase{"FailedChiefIsNoResult",
                   {Ended(ReplicaType::kChief, 0, PodPhase::kFailed, kChiefMessage)},
                   true,
                   std::nullopt,
                   std::nullopt},
        ResultCase{"WorkerZeroWithoutChief",
                   {Ended(ReplicaType::kWorker, 0, PodPhase::kSucceeded, kChiefMessage)},
                   false,
                   std::nullopt,
                   Trained()},
        ResultCase{"OtherWorkersAreNotTheChief",
                   {Ended(ReplicaType::kWorker, 1, PodPhase::kSucceeded, kChiefMessage)},
                   false,
                   std::nullopt,
                   std::nullopt},
        ResultCase{"WorkerZeroIsNotTheChiefWhenThereIsOne",
                   {Ended(ReplicaType::kWorker, 0, PodPhase::kSucceeded, kChiefMessage)},
                   true,
                   std::nullopt,
                   std::nullopt},
        ResultCase{"TextMessageIgnored",
                   {Ended(ReplicaType::kChief, 0, PodPhase::kSucceeded, "all done!")},
                   true,
                   std::nullopt,
                   std::nullopt},
        ResultCase{"WrongTypesIgnored",
                   {Ended(ReplicaType::kChief, 0, PodPhase::kSucceeded, R"({"globalStep":"x"})")},
                   true,
                   std::nullopt,
                   std::nullopt},
        ResultCase{"KeptWhenPodsAreGone", {}, true, Both(), Both()},
        ResultCase{"ClickThroughModelsReportTheirAuc",
                   {Ended(ReplicaType::kChief, 0, PodPhase::kSucceeded, kCtrChiefMessage),
                    Ended(ReplicaType::kEvaluator, 0, PodPhase::kSucceeded, kCtrEvalMessage)},
                   true,
                   std::nullopt,
                   Clicks()},
        ResultCase{"EvaluatorAddsToAKnownResult",
                   {Ended(ReplicaType::kEvaluator, 0, PodPhase::kSucceeded, kEvalMessage)},
                   true,
                   Trained(),
                   Both()}),
    [](const auto& info) { return info.param.name; });

TEST(ResultPolicyTest, DescribesWhatIsKnown) {
  EXPECT_EQ(
      DescribeResult(Both()),
      "global step 1000, loss 0.2500, train accuracy 0.9000, test accuracy 0.8500 at step 900");
  EXPECT_EQ(DescribeResult(Evaluated()), "test accuracy 0.8500 at step 900");
  EXPECT_EQ(DescribeResult(Clicks()),
            "global step 2000, loss 0.5500, train AUC 0.8100, test AUC 0.7810 (log loss 0.5560) "
            "at step 2000");
}

}  // namespace
}  // namespace disttrain::policy
