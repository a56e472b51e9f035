#include "trainer/options.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

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
