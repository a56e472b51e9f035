#include "trainer/checkpoint/checkpoint.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

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

}  // namespace
}  // namespace disttrain::trainer
