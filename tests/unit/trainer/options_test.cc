// The trainer's flags: the scheme's defaults fill what the command line left unset.
#include "trainer/options.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

// The options after parsing `args` and applying the scheme's defaults for `replicas`.
TrainerOptions Parse(const std::vector<std::string>& args, int replicas = 2) {
  TrainerOptions o;
  FlagSet flags("test");
  RegisterFlags(&flags, &o);
  EXPECT_TRUE(flags.Parse(args).ok());
  ApplySchemeDefaults(flags, replicas, &o);
  return o;
}

TEST(ApplySchemeDefaultsTest, EachSchemeGetsItsDefaultsWhenTheFlagsAreUnset) {
  TrainerOptions hogwild = Parse({"--mode", "hogwild"});
  EXPECT_EQ(hogwild.steps, 4000);
  EXPECT_DOUBLE_EQ(hogwild.learning_rate, 0.05);
  TrainerOptions async = Parse({"--mode=async"}, 4);
  EXPECT_EQ(async.steps, 4000);
  EXPECT_DOUBLE_EQ(async.learning_rate, 0.025);
  TrainerOptions dynsgd = Parse({"--mode", "dynsgd"});
  EXPECT_EQ(dynsgd.steps, 6000);
  EXPECT_DOUBLE_EQ(dynsgd.learning_rate, 0.1);
  TrainerOptions sync = Parse({});
  EXPECT_EQ(sync.steps, 1000);
  EXPECT_DOUBLE_EQ(sync.learning_rate, 0.1);
}

TEST(ApplySchemeDefaultsTest, AFlagSetOnTheCommandLineWinsEvenAtTheCommonDefault) {
  TrainerOptions o = Parse({"--mode", "hogwild", "--steps", "1000", "--learning-rate", "0.1"});
  EXPECT_EQ(o.steps, 1000);
  EXPECT_DOUBLE_EQ(o.learning_rate, 0.1);
  TrainerOptions only_steps = Parse({"--mode", "dynsgd", "--steps=300"});
  EXPECT_EQ(only_steps.steps, 300);
  EXPECT_DOUBLE_EQ(only_steps.learning_rate, 0.1);
  TrainerOptions only_rate = Parse({"--mode", "hogwild", "--learning-rate", "0.2"});
  EXPECT_EQ(only_rate.steps, 4000);
  EXPECT_DOUBLE_EQ(only_rate.learning_rate, 0.2);
}

TEST(ApplySchemeDefaultsTest, AnUnknownModeIsLeftForValidation) {
  TrainerOptions o = Parse({"--mode", "hogwild2"});
  EXPECT_EQ(o.steps, 1000);
  EXPECT_FALSE(ValidateOptions(o).ok());
}

TEST(ApplySchemeDefaultsTest, TheHelpGivesEachSchemesDefaults) {
  TrainerOptions o;
  FlagSet flags("test");
  RegisterFlags(&flags, &o);
  EXPECT_NE(flags.Help().find("hogwild 4000 steps at 0.1 / training replicas, dynsgd 6000 steps"),
            std::string::npos);
}

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseHiddenLayersTest, ReadsOneOrSeveralWidths) {
  EXPECT_THAT(*ParseHiddenLayers("100"), ElementsAre(100));
  EXPECT_THAT(*ParseHiddenLayers("1024,1024"), ElementsAre(1024, 1024));
  EXPECT_THAT(*ParseHiddenLayers("2048,512,64"), ElementsAre(2048, 512, 64));
}

TEST(ParseHiddenLayersTest, RejectsWhatIsNotAListOfPositiveWidthsNamingThePart) {
  struct Case {
    std::string name, flag, message;
  };
  for (const Case& c : std::vector<Case>{
           {"zero", "0", "\"0\" is not a layer width"},
           {"negative", "100,-5", "\"-5\" is not a layer width"},
           {"letters", "a,b", "\"a\" is not a layer width"},
           {"empty", "", "--hidden is empty"},
           {"empty part", "100,", "\"\" is not a layer width"},
           {"fraction", "1.5", "\"1.5\" is not a layer width"},
           {"too wide", "100000", "\"100000\" is not a layer width from 1 to 65536"},
       }) {
    absl::StatusOr<std::vector<int>> h = ParseHiddenLayers(c.flag);
    ASSERT_FALSE(h.ok()) << c.name;
    EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(std::string(h.status().message()), HasSubstr(c.message)) << c.name;
  }
}

TEST(ValidateOptionsTest, ChecksHiddenOnlyForTheMlp) {
  TrainerOptions o;
  o.hidden = "1024,1024";
  EXPECT_TRUE(ValidateOptions(o).ok());
  o.hidden = "a,b";
  EXPECT_THAT(std::string(ValidateOptions(o).message()), HasSubstr("--hidden \"a,b\""));
  o.model = "softmax";
  EXPECT_TRUE(ValidateOptions(o).ok()) << "softmax regression has no hidden layer";
}

TEST(ValidateOptionsTest, LocalReplicasZeroMeansOnePerGpu) {
  TrainerOptions o;
  EXPECT_EQ(o.local_replicas, 0);
  EXPECT_TRUE(ValidateOptions(o).ok());
  o.local_replicas = -1;
  EXPECT_FALSE(ValidateOptions(o).ok());
}

}  // namespace
}  // namespace disttrain::trainer
