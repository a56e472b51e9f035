// What every training role builds from its flags (BuildSetup, setup.cc): the model, and the
// dataset for models that learn from data.
#include "trainer/setup.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

namespace fs = std::filesystem;

class SetupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("setup-", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A training split of 4 examples of 2 features (uncompressed IDX files).
  void WriteTrainSplit() {
    std::ofstream(dir_ / "train-images-idx3-ubyte", std::ios::binary)
        << std::string("\0\0\x08\x03\0\0\0\x04\0\0\0\x01\0\0\0\x02", 16)
        << std::string("\x00\xff\x80\x00\x01\x02\x03\x04", 8);
    std::ofstream(dir_ / "train-labels-idx1-ubyte", std::ios::binary)
        << std::string("\0\0\x08\x01\0\0\0\x04", 8) << std::string("\x01\x02\x03\x09", 4);
  }
  TrainerOptions Mlp(const std::string& hidden) const {
    TrainerOptions o;
    o.model = "mlp";
    o.hidden = hidden;
    o.data_dir = dir_.string();
    return o;
  }
  fs::path dir_;
};

TEST_F(SetupTest, TheToyModelNeedsNoData) {
  TrainerOptions o;
  o.model = "toy";
  o.data_dir = (dir_ / "none").string();
  absl::StatusOr<trainer::Setup> s = BuildSetup(o, "train");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->model->name(), "toy");
  EXPECT_EQ(s->data.n, 0);
}

TEST_F(SetupTest, TheMlpTakesItsInputWidthFromTheDataAndItsHiddenLayersFromTheFlag) {
  WriteTrainSplit();
  absl::StatusOr<trainer::Setup> s = BuildSetup(Mlp("3"), "train");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->data.n, 4);
  ASSERT_GE(s->model->Variables().size(), 2u);
  EXPECT_EQ(s->model->Variables()[0].size, 2u * 3) << "2 features into 3 hidden units";
  EXPECT_EQ(s->model->Variables()[1].size, 3u);
}

TEST_F(SetupTest, AMissingSplitOrBadHiddenLayersAreErrors) {
  EXPECT_FALSE(BuildSetup(Mlp("3"), "train").ok()) << "no data yet";
  WriteTrainSplit();
  EXPECT_FALSE(BuildSetup(Mlp("3"), "test").ok()) << "only the training split exists";
  EXPECT_EQ(BuildSetup(Mlp("3,x"), "train").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace disttrain::trainer
